#include <re2/re2.h>

#include <array>
#include <charconv>
#include <cmath>
#include <ctime>

#include "envelope/envelope.h"

namespace faultline {
namespace {

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

int month_number(std::string_view name) {
  for (size_t i = 0; i < kMonths.size(); ++i) {
    if (kMonths[i] == name) return static_cast<int>(i) + 1;
  }
  return 0;
}

// journalctl and syslog write the month as the locale's LC_TIME abbreviation (%b): besides
// English, German, Spanish and Polish ones, and the Chinese and Japanese "6月".
constexpr std::array<std::array<std::string_view, 12>, 3> kLocalMonths = {{
    {"Jan", "Feb", "M\xc3\xa4r", "Apr", "Mai", "Jun", "Jul", "Aug", "Sep", "Okt", "Nov", "Dez"},
    {"ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sep", "oct", "nov", "dic"},
    {"sty", "lut", "mar", "kwi", "maj", "cze", "lip", "sie", "wrz", "pa\xc5\xba", "lis", "gru"},
}};

int syslog_month(std::string_view name) {
  if (const int english = month_number(name)) return english;
  for (const auto& months : kLocalMonths) {
    for (size_t i = 0; i < months.size(); ++i) {
      if (months[i] == name) return static_cast<int>(i) + 1;
    }
  }
  constexpr std::string_view kYue = "\xe6\x9c\x88";  // 月
  if (name.ends_with(kYue) && name.size() > kYue.size()) {
    int month = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), month);
    if (ec == std::errc() && end == name.data() + name.size() - kYue.size() && month >= 1 &&
        month <= 12) {
      return month;
    }
  }
  return 0;
}

int to_int(std::string_view text) {
  int value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// "123456" after the decimal point -> 0.123456.
double fraction(std::string_view digits) {
  double value = 0, scale = 0.1;
  for (char c : digits) {
    value += (c - '0') * scale;
    scale /= 10;
  }
  return value;
}

// "Z", "+02:00", "-0500" -> minutes east of UTC.
std::optional<int> zone_offset(std::string_view zone) {
  if (zone.empty()) return std::nullopt;
  if (zone == "Z" || zone == "z") return 0;
  const int sign = zone[0] == '-' ? -1 : 1;
  zone.remove_prefix(1);
  const int hours = to_int(zone.substr(0, 2));
  const int minutes = to_int(zone.substr(zone.size() - 2));
  return sign * (hours * 60 + minutes);
}

// The stamps' fields are matched in their ranges only: "9999-99-99T99:99:99" is no time.
const RE2& iso_pattern() {
  static const RE2 re(
      R"((\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[T ]([01]\d|2[0-3]):([0-5]\d):([0-5]\d|60))"
      R"((?:[.,](\d{1,9}))?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?)");
  return re;
}

const RE2& dmesg_t_pattern() {
  static const RE2 re(
      R"(\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) +(0?[1-9]|[12]\d|3[01]) ([01]\d|2[0-3]))"
      R"(:([0-5]\d):([0-5]\d|60) (\d{4})\])");
  return re;
}

const RE2& syslog_pattern() {
  static const RE2 re(
      R"(^(\S{2,6}) +(0?[1-9]|[12]\d|3[01]) ([01]\d|2[0-3]):([0-5]\d):([0-5]\d|60)(?:\.(\d+))? )");
  return re;
}

// glog and PyTorch's c10 logger: "E1202 14:07:32.123456789 " (level, month and day, no year; c10
// prints the month unpadded: "E810" is Aug 10).
const RE2& glog_pattern() {
  static const RE2 re(
      R"((?:^|[\[\]:\s])[IWEF](0?[1-9]|1[0-2])(0[1-9]|[12]\d|3[01]) ([01]\d|2[0-3]):([0-5]\d))"
      R"(:([0-5]\d|60)(?:\.(\d{1,9}))? )");
  return re;
}

const RE2& boot_pattern() {
  // Up to 9 digits of seconds (31 years of uptime): what an int holds.
  static const RE2 re(R"(\[\s*(\d{1,9})\.(\d+)\])");
  return re;
}

// journalctl -o short-monotonic: "[  219.470994] host kernel: ".
const RE2& monotonic_host_pattern() {
  static const RE2 re(R"(^\[\s*\d+\.\d+\] ([A-Za-z0-9][A-Za-z0-9._-]*) kernel: )");
  return re;
}

// A raw /dev/kmsg record's header, "prio,seq,usec,flags;": its microseconds since boot.
std::optional<double> kmsg_boot_seconds(std::string_view prefix) {
  const size_t semicolon = prefix.find(';');
  if (semicolon == std::string_view::npos) return std::nullopt;
  std::string_view header = prefix.substr(0, semicolon);
  uint64_t numbers[3] = {};
  for (uint64_t& number : numbers) {
    const auto [end, ec] = std::from_chars(header.data(), header.data() + header.size(), number);
    if (ec != std::errc() || end == header.data()) return std::nullopt;
    header.remove_prefix(static_cast<size_t>(end - header.data()));
    if (!header.starts_with(',')) return std::nullopt;
    header.remove_prefix(1);
  }
  // The flags: '-', 'c' or '+' (a continued fragment), maybe more in later kernels.
  if (header.find_first_of(" [") != std::string_view::npos) return std::nullopt;
  return static_cast<double>(numbers[2]) / 1e6;
}

// "host kernel: " or "host prog[pid]: " right after a syslog or ISO time stamp.
const RE2& host_pattern() {
  static const RE2 re(R"(^([A-Za-z0-9][A-Za-z0-9._-]*) [A-Za-z0-9_./-]+(?:\[\d+\])?: )");
  return re;
}

// NCCL's own prefix: "host:pid:tid [cudaDev] " (the host cut at its first dot).
const RE2& nccl_pattern() {
  static const RE2 re(R"((?:^|[\s\]:])([A-Za-z0-9_-]*[A-Za-z][A-Za-z0-9_-]*):\d+:\d+ \[\d+\] )");
  return re;
}

std::string host_after(std::string_view rest) {
  std::string host;
  if (!RE2::PartialMatch(re2::StringPiece(rest.data(), rest.size()), host_pattern(), &host)) {
    return "";
  }
  return host == "kernel" ? "" : host;
}

// The syslog envelope's host wins over one named further in (NCCL's).
void set_host(std::string host, LinePrefix* out) {
  if (!host.empty()) out->host = std::move(host);
}

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

}  // namespace

double unix_seconds(int year, int month, int day, int hour, int minute, double second) {
  // Days from civil (Howard Hinnant's algorithm), valid for the proleptic Gregorian calendar.
  year -= month <= 2;
  const int era = (year >= 0 ? year : year - 399) / 400;
  const int yoe = year - era * 400;
  const int doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const double days = static_cast<double>(era) * 146097 + doe - 719468;
  return days * 86400 + hour * 3600 + minute * 60 + second;
}

// What a paste puts before a line's own envelope: markdown quotes ("> ") and grep -n's line
// number, with the file name grep -Hn adds ("/var/log/syslog:11407:"), POSIX's "%s:%d:"
// output. Taken only before a stamp a log line starts with: a syslog month, an ISO date or "[".
size_t paste_length(std::string_view prefix) {
  static const RE2 re(
      R"(^((?:> )*(?:(?:[^\s:]+:)?\d{1,9}:)?)(?:[A-Z][a-z]{2} +\d|\d{4}-\d\d-\d\d|\[))");
  re2::StringPiece paste;
  if (!RE2::PartialMatch(re2::StringPiece(prefix.data(), prefix.size()), re, &paste)) return 0;
  return paste.size();
}

LinePrefix parse_prefix(std::string_view prefix, int year) {
  LinePrefix out;
  prefix.remove_prefix(paste_length(prefix));
  const re2::StringPiece text(prefix.data(), prefix.size());
  RE2::PartialMatch(text, nccl_pattern(), &out.host);
  re2::StringPiece y, mo, d, h, mi, s, frac, zone, whole;

  if (!prefix.empty() && prefix[0] >= '0' && prefix[0] <= '9') {
    if (auto boot = kmsg_boot_seconds(prefix)) {
      out.boot_seconds = *boot;
      out.time = Timestamp::BootRelative(*boot);
      return out;
    }
  }
  if (RE2::PartialMatch(text, boot_pattern(), &whole, &frac)) {
    out.boot_seconds = to_int(std::string_view(whole.data(), whole.size())) +
                       fraction(std::string_view(frac.data(), frac.size()));
    out.time = Timestamp::BootRelative(*out.boot_seconds);
    std::string host;
    if (prefix.starts_with('[') && RE2::PartialMatch(text, monotonic_host_pattern(), &host)) {
      set_host(std::move(host), &out);
    }
  }

  re2::StringPiece iso_match;
  if (RE2::PartialMatch(text, iso_pattern(), &y, &mo, &d, &h, &mi, &s, &frac, &zone)) {
    const double seconds = to_int({s.data(), s.size()}) + fraction({frac.data(), frac.size()});
    out.time = Timestamp::Absolute(
        unix_seconds(to_int({y.data(), y.size()}), to_int({mo.data(), mo.size()}),
                     to_int({d.data(), d.size()}), to_int({h.data(), h.size()}),
                     to_int({mi.data(), mi.size()}), seconds),
        zone_offset({zone.data(), zone.size()}));
    if (out.time.utc_offset_minutes) out.time.seconds -= *out.time.utc_offset_minutes * 60.0;
    // RFC 3339 syslog: "2025-07-23T20:41:46.835238+02:00 host kernel: ".
    const auto after = static_cast<size_t>(
        zone.data() ? zone.end() - text.data()
                    : (frac.data() ? frac.end() - text.data() : s.end() - text.data()));
    if (after < prefix.size() && prefix[after] == ' ')
      set_host(host_after(prefix.substr(after + 1)), &out);
    return out;
  }
  if (RE2::PartialMatch(text, dmesg_t_pattern(), &mo, &d, &h, &mi, &s, &y)) {
    out.time = Timestamp::Absolute(
        unix_seconds(to_int({y.data(), y.size()}), month_number({mo.data(), mo.size()}),
                     to_int({d.data(), d.size()}), to_int({h.data(), h.size()}),
                     to_int({mi.data(), mi.size()}), to_int({s.data(), s.size()})),
        std::nullopt);
    return out;
  }
  if (RE2::PartialMatch(text, syslog_pattern(), &mo, &d, &h, &mi, &s, &frac) &&
      syslog_month({mo.data(), mo.size()}) != 0) {
    out.time = Timestamp::Absolute(
        unix_seconds(year, syslog_month({mo.data(), mo.size()}), to_int({d.data(), d.size()}),
                     to_int({h.data(), h.size()}), to_int({mi.data(), mi.size()}),
                     to_int({s.data(), s.size()}) + fraction({frac.data(), frac.size()})),
        std::nullopt);
    out.time.year_assumed = true;
    const auto after = static_cast<size_t>((frac.data() ? frac.end() : s.end()) - text.data());
    if (after < prefix.size()) set_host(host_after(prefix.substr(after + 1)), &out);
    return out;
  }
  if (RE2::PartialMatch(text, glog_pattern(), &mo, &d, &h, &mi, &s, &frac)) {
    out.time = Timestamp::Absolute(
        unix_seconds(year, to_int({mo.data(), mo.size()}), to_int({d.data(), d.size()}),
                     to_int({h.data(), h.size()}), to_int({mi.data(), mi.size()}),
                     to_int({s.data(), s.size()}) + fraction({frac.data(), frac.size()})),
        std::nullopt);
    out.time.year_assumed = true;
  }
  return out;
}

int year_of(const Timestamp& time) {
  const auto t = static_cast<time_t>(std::floor(time.seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  return tm.tm_year + 1900;
}

Timestamp with_year(const Timestamp& time, int year) {
  const double whole = std::floor(time.seconds);
  const auto t = static_cast<time_t>(whole);
  std::tm tm{};
  gmtime_r(&t, &tm);
  Timestamp out = time;
  out.seconds = unix_seconds(year, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec) +
                (time.seconds - whole);
  return out;
}

std::optional<int> find_year(std::string_view text) {
  const re2::StringPiece piece(text.data(), text.size());
  re2::StringPiece y, mo, d, h, mi, s;
  if (RE2::PartialMatch(piece, iso_pattern(), &y) ||
      RE2::PartialMatch(piece, dmesg_t_pattern(), &mo, &d, &h, &mi, &s, &y)) {
    return to_int({y.data(), y.size()});
  }
  return std::nullopt;
}

std::optional<Timestamp> parse_time(std::string_view text) {
  if (text.starts_with('+') && text.ends_with('s')) {
    double seconds = 0;
    text.remove_prefix(1);
    text.remove_suffix(1);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (ec != std::errc() || end != text.data() + text.size() || !(seconds >= 0)) {
      return std::nullopt;
    }
    return Timestamp::BootRelative(seconds);
  }
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

}  // namespace faultline
