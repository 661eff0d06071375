// The reader of nvidia-smi's default table behind StateReader.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace faultline::state_internal {

// Whether the table reader stores `field` ("smi.err_readings"; it also stores the query field
// "ecc.errors.uncorrected.volatile.total").
bool IsTableField(std::string_view field);

// Reads the table `nvidia-smi` prints without options (docs/formats/nvidia.md 4.6): per GPU a row
// `|   0  NVIDIA H100 80GB HBM3   On  |   00000000:18:00.0 Off |                    0 |`
// (index, name, persistence or driver model; bus id, display; Volatile Uncorr. ECC), then rows
// of readings (fan, temperature, power, memory, utilisation, MIG mode), up to the rule under
// them. One GpuState per GPU, known by index and bus id (and product, unless the table cut it
// short with "..."): the ECC column is "ecc.errors.uncorrected.volatile.total", and the cells
// where nvidia-smi printed ERR! (a value NVML could not read) are counted as
// "smi.err_readings".
class TableReader {
 public:
  // Appends each GPU's snapshot to *out.
  TableReader(std::string path, std::vector<GpuState>* out);

  void Feed(std::string_view text, uint64_t line_number);
  // Ends the input: the open GPU, if any, is finished.
  void Finish() { EndGpu(); }

  // Whether no GPU is open, so that Feed does nothing with a line MayOpen turns down.
  bool idle() const { return !gpu_; }
  // Whether `line` (trimmed) may open a dump of this shape: a cheap look, true for every line
  // that does.
  static bool MayOpen(std::string_view line);

 private:
  bool StartGpu(std::string_view line, std::string_view text, uint64_t line_number);
  void CountErrors(std::string_view line, std::string_view text, uint64_t line_number);
  void EndGpu();

  std::string path_;
  std::vector<GpuState>* out_;
  std::optional<GpuState> gpu_;
};

}  // namespace faultline::state_internal
