// The `nvidia-smi -q -x` XML reader behind StateReader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"
#include "state/fields.h"

namespace faultline::state_internal {

// Whether the XML reader stores `field` (a query name such as "remapped_rows.pending").
bool IsXmlField(std::string_view field);

// Reads `nvidia-smi -q -x` output: one GpuState per <gpu> element. A document is kept from the
// line holding `<?xml` or `<nvidia_smi_log` to the one holding `</nvidia_smi_log>` and then
// parsed whole; one cut short (by the end of the input, by the next document, or by a long run
// of lines that are no XML) is read as far as it goes. A document past the caps is dropped.
class XmlDumpReader {
 public:
  static constexpr size_t kMaxBytes = 32 << 20;
  // A real document has a few hundred lines a GPU; the cap bounds the line index.
  static constexpr size_t kMaxLines = 1 << 20;

  // Appends each document's snapshots to *out.
  XmlDumpReader(std::string path, std::vector<GpuState>* out, size_t max_bytes = kMaxBytes);

  void Feed(std::string_view text, uint64_t line_number);
  // Ends the input: a document still open is read as far as it goes.
  void Finish();

  // Whether no dump is open, so that Feed does nothing with a line MayOpen turns down.
  bool idle() const { return phase_ == Phase::kOutside; }
  // Whether `line` (trimmed) may open a dump of this shape: a cheap look, true for every line
  // that does.
  static bool MayOpen(std::string_view line);

  // Documents dropped for passing a cap, for tests and diagnostics.
  uint64_t dropped() const { return dropped_; }

 private:
  enum class Phase {
    kOutside,  // no document open
    kProlog,   // after `<?xml`, before the root element
    kBody,     // inside <nvidia_smi_log>
    kSkipping  // a dropped document's rest, up to its end tag
  };

  void Start(std::string_view text, uint64_t line_number, Phase phase);
  void Keep(std::string_view text, uint64_t line_number);
  void End();

  std::string path_;
  std::vector<GpuState>* out_;
  LineBuffer buffer_;
  Phase phase_ = Phase::kOutside;
  size_t text_run_ = 0;  // lines in a row that hold no tag
  uint64_t dropped_ = 0;
};

}  // namespace faultline::state_internal
