#include "metrics/decimal.h"

#include <doctest/doctest.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <system_error>

namespace {

// What std::from_chars reads of `text`: the value and how many bytes, or -1 bytes on failure.
std::pair<double, long> reference(const std::string& text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc()) return {0, -1};
  return {value, end - text.data()};
}

void check_same(const std::string& text) {
  double value = 0;
  const char* end = faultline::parse_plain_decimal(text.data(), text.data() + text.size(), &value);
  if (end == nullptr) return;  // left to from_chars
  const auto [expected, length] = reference(text);
  INFO(text);
  REQUIRE(length == end - text.data());
  CHECK(value == expected);
}

}  // namespace

TEST_CASE("parse_plain_decimal reads what std::from_chars reads, bit for bit") {
  for (const char* text : {"1382.4",
                           "4.440000E-06",
                           "1.033878E+01",
                           "0",
                           "1536",
                           "1.",
                           ".5",
                           "1.e5",
                           "0e500",
                           "1e022",
                           "1e-22",
                           "123456789012345",
                           "1234567890123456",
                           "9.999999999999999e22",
                           "1e",
                           "1e-",
                           "1e+5x",
                           "0.1",
                           "0.30000000000000004",
                           "7e-10",
                           "2.5e",
                           "00012.5000",
                           "1e1234"}) {
    check_same(text);
  }
  std::mt19937_64 random(8);
  std::uniform_real_distribution<double> unit(0, 1);
  std::uniform_int_distribution<int> exponent(-40, 40);
  std::uniform_int_distribution<int> precision(0, 17);
  const char* formats[] = {"%.*e", "%.*E", "%.*f", "%.*g"};
  char buffer[128];
  size_t fast = 0;
  for (int i = 0; i < 200000; ++i) {
    const double value = unit(random) * std::pow(10.0, exponent(random));
    std::snprintf(buffer, sizeof buffer, formats[i % 4], precision(random), value);
    check_same(buffer);
    double out = 0;
    const std::string text = buffer;
    if (faultline::parse_plain_decimal(text.data(), text.data() + text.size(), &out)) ++fast;
  }
  CHECK(fast > 50000);  // the fast path does take most of what logs print
}
