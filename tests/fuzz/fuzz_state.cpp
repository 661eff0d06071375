// Device state dumps: every state reader (nvidia-smi -q text, CSV queries, and whatever else
// StateReader feeds) on arbitrary lines, as the source stage would yield them.
#include <cmath>
#include <cstdint>
#include <string_view>

#include "fuzz.h"
#include "state/state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  faultline::StateReader reader("fuzz");
  uint64_t number = 0;
  for (const std::string_view line : faultline::fuzz::SplitLines(text)) reader.Feed(line, ++number);
  for (const faultline::GpuState& state : reader.Finish()) {
    FUZZ_CHECK(state.source.line <= number);
    FUZZ_CHECK(std::isfinite(state.time.seconds));
    (void)state.time.iso();
    for (const auto& [field, where] : state.field_lines) FUZZ_CHECK(where.first <= number);
    for (const auto& [field, value] : state.fields) FUZZ_CHECK(!field.empty());
  }
  return 0;
}
