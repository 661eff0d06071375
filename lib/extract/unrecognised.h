// Lines that look like errors and that no signature knows: what groups their occurrences, and
// which GPU they name. Internal to lib/extract/.
#pragma once

#include <string>
#include <string_view>

namespace faultline::extract_internal {

// The message of `line` without its envelope (stamps, host, rank tags), with what varies
// between occurrences of one message masked as log-template miners such as Drain do: times,
// PCI addresses, UUIDs, quoted strings, paths, hex and decimal numbers become <time>, <pci>,
// <uuid>, <str>, <path>, <hex> and <num>. At most kTemplateLength bytes.
std::string line_template(std::string_view line);

inline constexpr size_t kTemplateLength = 200;

// The GPU a driver's line is about: the one PCI address (with its domain) that a line naming
// NVRM, nvidia or a GPU gives; "" when it gives none or several.
std::string driver_line_gpu(std::string_view line);

}  // namespace faultline::extract_internal
