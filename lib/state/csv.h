// The nvidia-smi CSV query reader behind StateReader.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace faultline::state_internal {

// Reads `nvidia-smi --query-gpu=... --format=csv` (and --query-remapped-rows=...) output:
// one GpuState per data row. A block opens at a header line of query field names, or, for
// `noheader` output, at a pasted command line that names the fields; it ends at the first
// line whose cells do not fit the fields.
class CsvQueryReader {
 public:
  // Appends each row's snapshot to *out.
  CsvQueryReader(std::string path, std::vector<GpuState>* out);

  void Feed(std::string_view text, uint64_t line_number);
  // Ends the input: the open block, if any, is closed.
  void Finish() { columns_.clear(); }

  // Whether no dump is open, so that Feed does nothing with a line MayOpen turns down.
  bool idle() const { return columns_.empty(); }
  // Whether `line` (trimmed) may open a dump of this shape: a cheap look, true for every line
  // that does.
  static bool MayOpen(std::string_view line);

 private:
  bool TakeRow(std::string_view cells, std::string_view text, uint64_t line_number);

  std::string path_;
  std::vector<GpuState>* out_;
  std::vector<std::string> columns_;  // the open block's fields; empty when none is open
};

}  // namespace faultline::state_internal
