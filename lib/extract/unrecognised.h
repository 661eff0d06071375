// Lines that look like errors and that no signature knows: what groups their occurrences, and
// which GPU they name. Internal to lib/extract/.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

namespace faultline {
struct Signature;
}  // namespace faultline

namespace faultline::extract_internal {

// line_template() (extract.h) is the message of `line` without its envelope (stamps, host, rank
// tags), with what varies between occurrences of one message masked as log-template miners
// such as Drain do: times, PCI addresses, UUIDs, quoted strings, paths, hex and decimal numbers
// become <time>, <pci>, <uuid>, <str>, <path>, <hex> and <num>. At most kTemplateLength bytes.
inline constexpr size_t kTemplateLength = 200;

// line_template() remembered: lines whose messages differ only in their numbers (the same
// message, another count or address) get the template of the first such line without masking
// again. Holds at most kMemoLines messages.
class TemplateMemo {
 public:
  const std::string& Of(std::string_view line);

 private:
  static constexpr size_t kMemoLines = 4096;
  std::unordered_map<std::string, std::string> templates_;  // by message, numbers as '#'
  std::string key_;  // the key of the latest line: its buffer reused
};

// Whether `signature` (an unrecognised one, which matched `line`) still matches once the line's
// quoted strings, paths and negated error words are masked: an error word inside a file name or a
// quoted argument ("/multiprocessing/errors/__init__.py"), or one that says there was none
// ("finished without errors", "0 errors"), does not make a line an error.
bool error_like_after_masks(std::string_view line, const Signature& signature);

// The GPU a driver's line is about: the one PCI address (with its domain) that a line naming
// NVRM, nvidia or a GPU gives; "" when it gives none or several.
std::string driver_line_gpu(std::string_view line);

}  // namespace faultline::extract_internal
