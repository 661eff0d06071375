#include <cstdlib>
#include <map>

#include "correlate/correlate.h"

namespace faultline {
namespace {

// Syslog dates name no year. Take it from the latest full date of the same host, else of the
// whole run (a dump's Timestamp, a dmesg -T line), so that times from different inputs line up.
void settle_assumed_years(std::vector<Event>* events, const std::vector<GpuState>& states) {
  // The latest full date of each host, and of the whole run for hosts without one; a dump's
  // host is its folder's or unknown, so an unknown host's dates count for every host.
  std::map<std::string, Timestamp> latest;
  const auto consider = [&](const std::string& host, const Timestamp& time) {
    if (time.kind != Timestamp::Kind::kAbsolute || time.year_assumed) return;
    for (const std::string& key : {host, std::string("\n")}) {
      auto [it, inserted] = latest.emplace(key, time);
      if (!inserted && time.seconds > it->second.seconds) it->second = time;
    }
  };
  for (const Event& event : *events) consider(event.host, event.evidence.time);
  for (const GpuState& state : states) consider(state.host, state.time);
  for (Event& event : *events) {
    Timestamp& time = event.evidence.time;
    if (!time.year_assumed) continue;
    auto it = latest.find(event.host);
    if (it == latest.end()) it = latest.find("\n");
    if (it != latest.end()) time = with_year(time, year_of(it->second));
  }
}

// Boot-relative dmesg stamps become wall-clock times on a host whose boot time the logs give:
// a syslog line that carries both its date and the "[secs]" stamp. Only when every such line
// of the host agrees (one boot): after a reboot the stamps restart and nothing is converted.
void align_boot_times(std::vector<Event>* events) {
  constexpr double kAgreement = 2.0;  // seconds of jitter between syslog and kernel clocks
  struct Boot {
    double low = 0, high = 0;
    std::optional<int> offset;
    bool seen = false;
  };
  std::map<std::string, Boot> boots;
  for (const Event& event : *events) {
    auto stamp = event.fields.find("boot_seconds");
    if (stamp == event.fields.end() || event.host.empty()) continue;
    const double boot =
        event.evidence.time.seconds - std::strtod(std::string(stamp->second).c_str(), nullptr);
    Boot& b = boots[event.host];
    if (!b.seen) b = {boot, boot, event.evidence.time.utc_offset_minutes, true};
    b.low = std::min(b.low, boot);
    b.high = std::max(b.high, boot);
  }
  for (Event& event : *events) {
    Timestamp& time = event.evidence.time;
    auto it = boots.find(event.host);
    if (time.kind != Timestamp::Kind::kBootRelative || it == boots.end() ||
        it->second.high - it->second.low > kAgreement) {
      continue;
    }
    time = Timestamp::Absolute(it->second.low + time.seconds, it->second.offset);
    event.fields.set("time_from_boot", "true");
  }
}

}  // namespace

void align_times(std::vector<Event>* events, std::vector<GpuState>* states,
                 const std::optional<TimeZone>& tz) {
  settle_assumed_years(events, *states);
  align_boot_times(events);
  if (!tz) return;
  for (Event& event : *events) event.evidence.time = tz->Apply(event.evidence.time);
  for (GpuState& state : *states) {
    state.time = tz->Apply(state.time);
    state.source.time = tz->Apply(state.source.time);
  }
}

}  // namespace faultline
