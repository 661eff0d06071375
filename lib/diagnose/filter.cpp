#include "diagnose/filter.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "sniff/prefix.h"

namespace faultline {
namespace {

// Reads `digits` decimal digits from the front of `text`.
std::optional<int> take_number(std::string_view& text, size_t digits) {
  int value = 0;
  if (text.size() < digits) return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (ec != std::errc() || end != text.data() + digits) return std::nullopt;
  text.remove_prefix(digits);
  return value;
}

bool take(std::string_view& text, std::string_view what) {
  if (!text.starts_with(what)) return false;
  text.remove_prefix(what.size());
  return true;
}

// "Z", "+02:00", "-0530"; the offset in minutes.
std::optional<int> take_zone(std::string_view& text) {
  if (take(text, "Z") || take(text, "z")) return 0;
  if (text.empty() || (text[0] != '+' && text[0] != '-')) return std::nullopt;
  const int sign = text[0] == '-' ? -1 : 1;
  text.remove_prefix(1);
  const auto hours = take_number(text, 2);
  take(text, ":");
  const auto minutes = take_number(text, 2);
  if (!hours || !minutes) return std::nullopt;
  return sign * (*hours * 60 + *minutes);
}

// The time as a wall clock reads it, in seconds: comparable across zones only as wall clocks.
double wall_clock(const Timestamp& time) {
  return time.seconds + time.utc_offset_minutes.value_or(0) * 60.0;
}

// -1, 0, 1 as `a` is before, at or after `b`; nullopt when they cannot be compared.
std::optional<int> compare(const Timestamp& a, const Timestamp& b) {
  if (a.kind != Timestamp::Kind::kAbsolute || b.kind != Timestamp::Kind::kAbsolute) {
    return std::nullopt;
  }
  const bool zoned = a.utc_offset_minutes && b.utc_offset_minutes;
  const double x = zoned ? a.seconds : wall_clock(a);
  const double y = zoned ? b.seconds : wall_clock(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

// Whether [first, last] overlaps the filter's window; true when that cannot be told.
bool in_window(const Filter& filter, const Timestamp& first, const Timestamp& last) {
  if (filter.since && compare(last, *filter.since).value_or(0) < 0) return false;
  if (filter.until && compare(first, *filter.until).value_or(0) > 0) return false;
  return true;
}

bool same_host(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool host_matches(const Filter& filter, const std::string& host) {
  if (filter.hosts.empty()) return true;
  return std::any_of(filter.hosts.begin(), filter.hosts.end(),
                     [&](const std::string& wanted) { return same_host(wanted, host); });
}

bool gpu_matches(const Filter& filter, const std::string& pci) {
  if (filter.gpus.empty()) return true;
  return std::find(filter.gpus.begin(), filter.gpus.end(), pci) != filter.gpus.end();
}

bool keep(const Filter& filter, const Diagnosis& d) {
  if (filter.min_severity && d.failure->severity < *filter.min_severity) return false;
  return host_matches(filter, d.host) && gpu_matches(filter, d.gpu.pci) &&
         in_window(filter, d.first_seen, d.last_seen.known() ? d.last_seen : d.first_seen);
}

bool keep(const Filter& filter, const Event& e) {
  return host_matches(filter, e.host) && gpu_matches(filter, e.gpu.pci) &&
         in_window(filter, e.evidence.time, e.evidence.time);
}

}  // namespace

std::optional<Timestamp> parse_time(std::string_view text) {
  const auto year = take_number(text, 4);
  const bool dash1 = take(text, "-");
  const auto month = take_number(text, 2);
  const bool dash2 = take(text, "-");
  const auto day = take_number(text, 2);
  if (!year || !dash1 || !month || !dash2 || !day || *month < 1 || *month > 12 || *day < 1 ||
      *day > 31) {
    return std::nullopt;
  }
  int hour = 0;
  int minute = 0;
  double second = 0;
  if (!text.empty()) {
    if (!take(text, "T") && !take(text, "t") && !take(text, " ")) return std::nullopt;
    const auto h = take_number(text, 2);
    const bool colon1 = take(text, ":");
    const auto m = take_number(text, 2);
    const bool colon2 = take(text, ":");
    const auto s = take_number(text, 2);
    if (!h || !colon1 || !m || !colon2 || !s || *h > 23 || *m > 59 || *s > 60) return std::nullopt;
    hour = *h;
    minute = *m;
    second = *s;
    if (take(text, ".") || take(text, ",")) {
      double scale = 0.1;
      size_t digits = 0;
      while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
        second += (text[digits] - '0') * scale;
        scale /= 10;
        ++digits;
      }
      if (digits == 0) return std::nullopt;
      text.remove_prefix(digits);
    }
  }
  std::optional<int> zone;
  if (!text.empty()) {
    zone = take_zone(text);
    if (!zone || !text.empty()) return std::nullopt;
  }
  const double wall = unix_seconds(*year, *month, *day, hour, minute, second);
  return Timestamp::Absolute(wall - zone.value_or(0) * 60.0, zone);
}

void apply_filter(const Filter& filter, Analysis* analysis) {
  std::erase_if(analysis->diagnoses, [&](const Diagnosis& d) { return !keep(filter, d); });
  std::erase_if(analysis->events, [&](const Event& e) { return !keep(filter, e); });
}

}  // namespace faultline
