// The dcgmi dmon reader behind StateReader.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/model.h"

namespace faultline::state_internal {

// Reads `dcgmi dmon` (docs/formats/nvidia.md 5.3): a header of DCGM field short names after
// "#Entity" ("#Entity   XIDER  RRP"), a line of units after "ID", then one row per entity and
// sample ("GPU 1      120    0"), the header printed again every few samples. Each row of a GPU
// is a GpuState of the GPU with DCGM's id (gpu.index); a column whose short name is a DCGM field
// the exporter reader stores (exporter.h, DcgmFieldValue) fills that field the same way, and
// N/A and blank cells are absent. Rows of other entities (links, switches, CPUs) are passed
// over, and a row that repeats its GPU's previous one adds nothing.
class DmonReader {
 public:
  // Appends each row's snapshot to *out.
  DmonReader(std::string path, std::vector<GpuState>* out);

  void Feed(std::string_view text, uint64_t line_number);
  void Finish() { columns_.clear(); }

  // Whether no table is open, so that Feed does nothing with a line MayOpen turns down.
  bool idle() const { return columns_.empty(); }
  // Whether `line` (trimmed) may open a table: a cheap look, true for every header.
  static bool MayOpen(std::string_view line) { return line.starts_with("#Entity"); }

 private:
  struct Column {
    size_t at = 0;               // where the header's name starts
    std::string_view dcgm_name;  // "" for a field no reader stores
  };

  void TakeHeader(std::string_view line);
  void TakeRow(std::string_view text, std::string_view line, uint64_t line_number);

  std::string path_;
  std::vector<GpuState>* out_;
  std::vector<Column> columns_;                 // of the open table
  std::unordered_map<int, uint64_t> last_row_;  // digest of each GPU's last row, by id
  size_t rows_ = 0;
};

}  // namespace faultline::state_internal
