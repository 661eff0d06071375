// What kind of text an input is, judged from its lines as they stream past.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace faultline {

class KindSniffer {
 public:
  // Looks at one line; cheap enough for every line.
  void Observe(std::string_view line);
  // "kernel-log", "nvidia-smi", "training-log", "mixed" when several kinds hold a large share,
  // or "text" when none is recognised.
  std::string_view kind() const;

 private:
  enum Kind { kKernel, kNvidiaSmi, kTraining, kKinds };
  std::array<uint64_t, kKinds> votes_{};
};

}  // namespace faultline
