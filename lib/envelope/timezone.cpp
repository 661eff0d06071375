#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include "envelope/envelope.h"

namespace faultline {
namespace {

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// "+2", "+02", "+0530", "-05:30" -> minutes east of UTC.
std::optional<int> parse_offset(std::string_view text) {
  if (text.size() < 2 || (text[0] != '+' && text[0] != '-')) return std::nullopt;
  const int sign = text[0] == '-' ? -1 : 1;
  text.remove_prefix(1);
  std::string_view hours = text;
  std::string_view minutes;
  if (const size_t colon = text.find(':'); colon != std::string_view::npos) {
    hours = text.substr(0, colon);
    minutes = text.substr(colon + 1);
    if (minutes.size() != 2) return std::nullopt;
  } else if (text.size() == 4) {
    hours = text.substr(0, 2);
    minutes = text.substr(2);
  }
  if (hours.size() > 2 || !all_digits(hours) || (!minutes.empty() && !all_digits(minutes))) {
    return std::nullopt;
  }
  const int h = std::stoi(std::string(hours));
  const int m = minutes.empty() ? 0 : std::stoi(std::string(minutes));
  if (h > 14 || m > 59) return std::nullopt;
  return sign * (h * 60 + m);
}

std::string zoneinfo_dir() {
  const char* dir = std::getenv("TZDIR");
  return dir && *dir ? dir : "/usr/share/zoneinfo";
}

// Runs `work` with the process's TZ set to `name`, then puts TZ back as it was.
template <typename Work>
auto with_tz(const std::string& name, const Work& work) {
  const char* old = std::getenv("TZ");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  setenv("TZ", name.c_str(), 1);
  tzset();
  auto result = work();
  if (saved) {
    setenv("TZ", saved->c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
  return result;
}

}  // namespace

std::optional<TimeZone> TimeZone::Parse(std::string_view text) {
  TimeZone zone;
  if (text == "UTC" || text == "utc" || text == "Z" || text == "GMT") {
    zone.fixed_minutes_ = 0;
    return zone;
  }
  if (auto offset = parse_offset(text)) {
    zone.fixed_minutes_ = *offset;
    return zone;
  }
  // A tz database name: letters, digits, '_', '-', '+' and '/' between parts, never "..".
  if (text.empty() || text.front() == '/' || text.find("..") != std::string_view::npos) {
    return std::nullopt;
  }
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '/' && c != '_' && c != '-' &&
        c != '+') {
      return std::nullopt;
    }
  }
  struct stat info {};
  const std::string file = zoneinfo_dir() + "/" + std::string(text);
  if (stat(file.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  zone.name_ = std::string(text);
  return zone;
}

int TimeZone::OffsetAt(double wall_seconds) const {
  if (fixed_minutes_) return *fixed_minutes_;
  const auto wall = static_cast<time_t>(std::floor(wall_seconds));
  std::tm tm{};
  gmtime_r(&wall, &tm);
  tm.tm_isdst = -1;  // let the zone's rules say whether summer time applies
  const time_t utc = with_tz(":" + name_, [&] { return mktime(&tm); });
  if (utc == static_cast<time_t>(-1)) return 0;
  return static_cast<int>((wall - utc) / 60);
}

Timestamp TimeZone::Apply(const Timestamp& time) const {
  if (time.kind != Timestamp::Kind::kAbsolute || time.utc_offset_minutes) return time;
  Timestamp out = time;
  const int offset = OffsetAt(time.seconds);
  out.utc_offset_minutes = static_cast<int16_t>(offset);  // a real zone's, within a day
  out.seconds -= offset * 60.0;
  return out;
}

}  // namespace faultline
