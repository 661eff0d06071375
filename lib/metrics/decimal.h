// Reading the decimal numbers that logs print, faster than std::from_chars where that is safe.
#pragma once

namespace faultline {

// Clinger's fast path for what training logs mostly print ("1382.4", "4.440000E-06"): digits,
// an optional point and fraction, an optional exponent of at most three digits. A mantissa of
// at most 15 digits and a power of ten up to 10^22 are both exact doubles, so one
// multiplication or division rounds correctly: *out is what std::from_chars gives. Returns where
// the number ends, or nullptr for anything else (a sign, "nan", a longer mantissa, a larger
// exponent), which the caller hands to std::from_chars.
const char* parse_plain_decimal(const char* begin, const char* end, double* out);

}  // namespace faultline
