// What kind of text an input is, judged from its lines as they stream past.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "model/model.h"

namespace faultline {

class KindSniffer {
 public:
  // Looks at one line; only the first kDecidingLines lines of an input are judged. A line the
  // state readers took as part of a device dump (`in_device_dump`: a table row, an NVLink
  // counter) counts as nvidia-smi output whatever it looks like.
  void Observe(std::string_view line, bool in_device_dump);
  // A kernel log, nvidia-smi output or a training log; mixed when several kinds hold a large
  // share, or text when none is recognised.
  InputKind kind() const;
  // Whether the deciding lines have all been seen, so kind() is final.
  bool decided() const { return observed_ >= kDecidingLines; }

 private:
  static constexpr uint64_t kDecidingLines = 20000;

  enum Kind { kKernel, kNvidiaSmi, kTraining, kKinds };
  std::array<uint64_t, kKinds> votes_{};
  uint64_t observed_ = 0;
};

}  // namespace faultline
