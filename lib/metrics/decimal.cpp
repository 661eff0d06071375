#include "metrics/decimal.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace faultline {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

const char* parse_plain_decimal(const char* begin, const char* end, double* out) {
  static constexpr std::array<double, 23> kPowers = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  uint64_t mantissa = 0;
  int digits = 0;
  int scale = 0;  // digits after the point
  const char* at = begin;
  for (; at < end && is_digit(*at); ++at, ++digits) mantissa = mantissa * 10 + (*at - '0');
  if (at < end && *at == '.') {
    for (++at; at < end && is_digit(*at); ++at, ++digits, ++scale) {
      mantissa = mantissa * 10 + (*at - '0');
    }
  }
  if (digits == 0 || digits > 15) return nullptr;
  int exponent = -scale;
  if (at < end && (*at == 'e' || *at == 'E')) {
    const char* e = at + 1;
    const bool negative = e < end && *e == '-';
    if (e < end && (*e == '-' || *e == '+')) ++e;
    int value = 0;
    const char* first = e;
    for (; e < end && is_digit(*e) && e - first < 3; ++e) value = value * 10 + (*e - '0');
    if (e == first || (e < end && is_digit(*e))) return nullptr;
    exponent += negative ? -value : value;
    at = e;
  }
  if (exponent < -22 || exponent > 22) return nullptr;
  const auto m = static_cast<double>(mantissa);
  *out = exponent < 0 ? m / kPowers[static_cast<size_t>(-exponent)]
                      : m * kPowers[static_cast<size_t>(exponent)];
  return at;
}

}  // namespace faultline
