// The time zone of wall-clock times that name none (dmesg -T, syslog, PyTorch's c10 stamps).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/model.h"

namespace faultline {

class TimeZone {
 public:
  // "UTC", "Z", "+02:00", "-0530", or a name of the tz database ("Europe/Berlin") whose file the
  // system has (Debian's tzdata). nullopt for anything else.
  static std::optional<TimeZone> Parse(std::string_view text);

  // `time` placed in this zone when it is a wall-clock time that names none; else unchanged.
  Timestamp Apply(const Timestamp& time) const;

 private:
  // Minutes east of UTC for a wall-clock time read as UTC seconds.
  int OffsetAt(double wall_seconds) const;

  std::optional<int> fixed_minutes_;
  std::string name_;  // a tz database name, when not fixed
};

}  // namespace faultline
