// Device state dumps (nvidia-smi -q text and -q -x XML, nvidia-smi CSV queries, dcgm-exporter
// scrapes, dcgmi health and diag reports, nvidia-smi nvlink -e and -L, and the default nvidia-smi
// table) -> GpuState snapshots.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace faultline {

// Reads the state dumps found in one input, line by line. Lines that belong to no dump are
// passed over, so a dump pasted between other text (a shell prompt, a kernel log) is found.
// Whether `field` is a GPU state field that some reader stores ("remapped_rows.pending").
bool is_state_field(std::string_view field);

class StateReader {
 public:
  explicit StateReader(const std::string& path);
  ~StateReader();
  StateReader(const StateReader&) = delete;
  StateReader& operator=(const StateReader&) = delete;
  StateReader(StateReader&&) noexcept;
  StateReader& operator=(StateReader&&) noexcept;

  // Consumes the next line of the input.
  void Feed(std::string_view text, uint64_t line_number);
  // Whether the line fed last belongs to a dump (its words are a device's, not a message).
  bool InDump() const;
  // Ends the input and returns every GPU snapshot read from it, in input order.
  std::vector<GpuState> Finish();

 private:
  struct Impl;
  // The readers of each dump shape, kept out of this header.
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultline
