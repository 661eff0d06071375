// The envelope of a log line: the time and host that syslog, journald, dmesg or a collector
// put in front of the message.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/model.h"

namespace faultline {

struct LinePrefix {
  Timestamp time;                      // absolute when the envelope has a date, else boot-relative
  std::optional<double> boot_seconds;  // the dmesg "[ 1234.567890]" stamp, when there is one
  std::string host;                    // from a syslog or journal envelope
};

// Reads `prefix`, the text of a line before the message it carries. Recognises raw dmesg,
// dmesg -T, syslog and journalctl short ("Mar  5 10:12:33 host kernel:"), ISO 8601 (RFC 3339
// syslog, dmesg --time-format iso, a collector's "[2026-04-22T21:26:20.599Z]") anywhere in
// the prefix; whatever else the prefix holds is passed over and the time is then unknown.
// Syslog dates carry no year: `year` is used for them and the time is marked year_assumed.
LinePrefix parse_prefix(std::string_view prefix, int year);

// The same wall-clock time in another year (for a syslog date whose year was assumed).
Timestamp with_year(const Timestamp& time, int year);

// The year of an absolute time.
int year_of(const Timestamp& time);

// The year of an absolute timestamp in `text` that states one (ISO 8601 or dmesg -T), if any.
std::optional<int> find_year(std::string_view text);

// Reads a time as Timestamp::iso() writes it: ISO 8601 ("2024-03-05T10:12:33", fraction and
// zone "Z" / "+02:00" optional; "2024-03-05 10:12:33"; a date alone is its midnight) or
// boot-relative seconds ("+1234.567890s"). Without a zone the time is a wall-clock time, like
// a syslog date's. nullopt for anything else.
std::optional<Timestamp> parse_time(std::string_view text);

// Unix seconds of a civil date and time read as UTC.
double unix_seconds(int year, int month, int day, int hour, int minute, double second);

}  // namespace faultline
