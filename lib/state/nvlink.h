// The NVLink reader behind StateReader: `nvidia-smi nvlink -e`, `-s`, `-L` and `dcgmi nvlink`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace faultline::state_internal {

// Whether the NVLink reader stores `field` ("nvlink.errors.replay", "nvlink.errors.total").
bool IsNvlinkField(std::string_view field);

// Reads `nvidia-smi nvlink -e`, `nvidia-smi nvlink --status` and `dcgmi nvlink --link-status`
// (docs/formats/nvidia.md 4.7, 5.3). `nvlink -e`: a `GPU 0: NVIDIA H100 80GB HBM3
// (UUID: GPU-...)` line, then `Link 0: Replay Errors: 0` per link and counter, blank lines
// between links. One GpuState per GPU, known by its index, product and UUID; each counter is
// summed over the links ("nvlink.errors.replay", "nvlink.errors.recovery", "nvlink.errors.crc"),
// and all of them ("nvlink.errors.total"). Link lines pasted without their GPU line make a
// GpuState of no GPU. A GPU line with its UUID and no "Link" line under it is a line of
// `nvidia-smi -L` (docs/formats/nvidia.md 4.8): a GpuState of that GPU with no field, its source
// "nvidia-smi-L". The MIG lines under a GPU of -L (`  MIG 1g.10gb     Device  0: (UUID:
// MIG-...)`) are partitions of it and are passed over. `--status` prints a speed per active link
// and `<inactive>` for the others: counted as "nvlink.links.active" and "nvlink.links.inactive".
// `--link-status` prints `gpuId N:` over a row of U, D, X, _ (Up, Down, Disabled, Not
// Supported): "nvlink.links.up" and "nvlink.links.down", of the GPU with DCGM's id N.
class NvlinkReader {
 public:
  // Appends each GPU's snapshot to *out.
  NvlinkReader(std::string path, std::vector<GpuState>* out);

  void Feed(std::string_view text, uint64_t line_number);
  // Ends the input: the open block, if any, is finished.
  void Finish() { EndBlock(); }

  // Whether no dump is open, so that Feed does nothing with a line MayOpen turns down.
  bool idle() const { return !block_; }
  // Whether `line` (trimmed) may open a dump of this shape: a cheap look, true for every line
  // that does.
  static bool MayOpen(std::string_view line);

 private:
  void StartBlock(std::string_view text, uint64_t line_number);
  bool TakeLink(std::string_view line, std::string_view text, uint64_t line_number);
  void EndBlock();

  std::string path_;
  std::vector<GpuState>* out_;
  std::optional<GpuState> block_;
  bool has_links_ = false;  // whether the open block read a counter, else it was no dump
  // Whether any "Link" line followed the GPU line (`nvlink --status` has no counter).
  bool has_link_lines_ = false;
};

}  // namespace faultline::state_internal
