// Line envelopes: parse_prefix and find_year on arbitrary text, and the times they yield.
#include <cmath>
#include <cstdint>
#include <string_view>

#include "envelope/envelope.h"
#include "fuzz.h"

namespace {

void CheckTime(const faultline::Timestamp& time) {
  FUZZ_CHECK(std::isfinite(time.seconds));
  const std::string iso = time.iso();
  FUZZ_CHECK(time.known() || iso.empty());
  if (time.kind == faultline::Timestamp::Kind::kAbsolute) {
    const int year = faultline::year_of(time);
    (void)faultline::with_year(time, 2024).iso();
    (void)faultline::with_year(time, year).iso();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Syslog dates take the year they are given: a usual one and the ends of the range.
  for (const int year : {2024, 1970, 9999, 0}) {
    const faultline::LinePrefix prefix = faultline::parse_prefix(text, year);
    CheckTime(prefix.time);
    if (prefix.boot_seconds) FUZZ_CHECK(std::isfinite(*prefix.boot_seconds));
    FUZZ_CHECK(prefix.host.size() <= text.size());
  }
  if (const std::optional<int> year = faultline::find_year(text)) {
    FUZZ_CHECK(*year >= 0 && *year <= 9999);
  }
  return 0;
}
