// Small text helpers every stage shares: whole-text numbers, trimming, ASCII case.
#pragma once

#include <charconv>
#include <cstdint>
#include <functional>
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

// "0x" and one to eight hex digits (either case) as a 32-bit word; nullopt otherwise: the
// registers of an Xid line.
inline std::optional<uint32_t> parse_hex32(std::string_view text) {
  if (text.size() < 3 || text.size() > 10 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) {
    return std::nullopt;
  }
  uint32_t value = 0;
  const char* first = text.data() + 2;
  const char* last = text.data() + text.size();
  const auto [end, error] = std::from_chars(first, last, value, 16);
  if (error != std::errc() || end != last) return std::nullopt;
  return value;
}

// `text` without the spaces, tabs, carriage returns and newlines around it.
std::string_view trim(std::string_view text);

// `text` with each "{NAME}" replaced by value(NAME), in one pass (a value is never searched for
// placeholders). A placeholder value() answers nullopt for is left as it is. Fixes, verify
// commands, notes and missing evidence ({gpu}, {event.FIELD}) and the catalog's own texts
// ({anomaly.NAME}) are filled with it.
std::string fill_template(std::string_view text,
                          const std::function<std::optional<std::string>(std::string_view)>& value);

// `text` with A-Z lowered; other bytes (UTF-8 included) as they are, whatever the locale.
std::string ascii_lower(std::string_view text);

// Whether `a` and `b` are equal but for the case of A-Z.
bool equals_ignoring_case(std::string_view a, std::string_view b);

}  // namespace faultline
