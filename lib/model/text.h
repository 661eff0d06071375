// Small text helpers every stage shares: whole-text numbers, trimming, ASCII case.
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>

namespace faultline {

// `text` as a number of type Number when all of it is one (std::from_chars: no sign "+", no
// spaces, "." decimals); nullopt otherwise.
template <typename Number>
std::optional<Number> parse_number(std::string_view text) {
  Number value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// `text` without the spaces, tabs, carriage returns and newlines around it.
std::string_view trim(std::string_view text);

// `text` with A-Z lowered; other bytes (UTF-8 included) as they are, whatever the locale.
std::string ascii_lower(std::string_view text);

}  // namespace faultline
