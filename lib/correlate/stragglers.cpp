#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <string>

#include "correlate/correlate.h"
#include "model/captures.h"
#include "model/text.h"

namespace faultline {
namespace {

std::optional<long long> field_number(const Event& event, std::string_view name) {
  auto it = event.fields.find(std::string(name));
  if (it == event.fields.end()) return std::nullopt;
  return parse_number<long long>(it->second);
}

// "24-31", "3, 7": ranks in order, runs joined.
std::string rank_list(const std::set<int>& ranks) {
  std::string out;
  for (auto it = ranks.begin(); it != ranks.end();) {
    const int first = *it;
    int last = first;
    while (++it != ranks.end() && *it == last + 1) last = *it;
    if (!out.empty()) out += ", ";
    out += std::to_string(first);
    if (last != first) out += "-" + std::to_string(last);
  }
  return out;
}

Event suspect_event(const Event& evidence_of, const std::string& reason) {
  Event event;
  event.signature = std::string(derived::kRankBehind);
  event.host = evidence_of.host;
  event.evidence = evidence_of.evidence;
  event.evidence.signature = std::string(derived::kRankBehind);
  event.fields.set("reason", reason);
  return event;
}

// Ranks whose last enqueued work is behind the rest's, in the communicator most ranks report.
void find_behind(const std::vector<const Event*>& progress, std::vector<Event>* out) {
  std::map<std::string, std::map<int, const Event*>> by_group;  // pg -> rank -> latest line
  for (const Event* event : progress) {
    auto pg = event->fields.find(std::string(capture::kProcessGroup));
    by_group[std::string(pg == event->fields.end() ? "" : pg->second)][*event->rank] = event;
  }
  const auto largest = std::max_element(by_group.begin(), by_group.end(), [](auto& a, auto& b) {
    return a.second.size() < b.second.size();
  });
  if (largest == by_group.end() || largest->second.size() < 3) return;
  std::map<long long, std::vector<const Event*>> by_enqueued;
  for (const auto& [rank, event] : largest->second) {
    by_enqueued[*field_number(*event, capture::kLastEnqueued)].push_back(event);
  }
  if (by_enqueued.size() < 2) return;
  const auto& [lowest, behind] = *by_enqueued.begin();
  // Behind is a few ranks against the rest, not half the job against the other half.
  if (behind.size() * 2 >= largest->second.size()) return;
  for (const Event* laggard : behind) {
    Event event = suspect_event(*laggard, "behind");
    event.rank = laggard->rank;
    event.fields.set("suspect", "rank " + std::to_string(*laggard->rank));
    event.fields.set("last_enqueued", std::to_string(lowest));
    event.fields.set("others_enqueued", std::to_string(by_enqueued.rbegin()->first));
    out->push_back(std::move(event));
  }
}

// Ranks of the job that printed no timeout while most of the others did.
void find_silent(const std::vector<const Event*>& timeouts, const std::vector<Event>& events,
                 std::vector<Event>* out) {
  long long world = 0;
  std::map<int, std::string> host_of;  // rank -> host, from NCCL's init lines
  for (const Event& event : events) {
    if (auto nranks = field_number(event, capture::kNranks); nranks && *nranks > world)
      world = *nranks;
  }
  for (const Event& event : events) {
    if (event.rank && field_number(event, capture::kNranks) == world)
      host_of[*event.rank] = event.host;
  }
  std::set<int> timed_out;
  for (const Event* event : timeouts) {
    if (*event->rank >= 0 && *event->rank < world) timed_out.insert(*event->rank);
  }
  const auto count = static_cast<long long>(timed_out.size());
  if (world < 2 || count * 2 <= world) return;  // most of the job must have timed out
  // Only ranks whose own output was read (their init line is there) can be called silent: of
  // the others, the logs are missing, not the timeouts.
  std::set<int> silent;
  std::set<std::string> hosts;
  for (const auto& [rank, host] : host_of) {
    if (rank < 0 || rank >= world || timed_out.contains(rank)) continue;
    silent.insert(rank);
    hosts.insert(host);
  }
  if (silent.empty()) return;
  const Event* first = *std::min_element(timeouts.begin(), timeouts.end(), [](auto a, auto b) {
    auto gap = seconds_between(a->evidence.time, b->evidence.time);
    return gap && *gap > 0;
  });
  Event event = suspect_event(*first, "silent");
  event.host = hosts.size() == 1 ? *hosts.begin() : "";
  if (silent.size() == 1) event.rank = *silent.begin();
  event.fields.set("suspect", (silent.size() == 1 ? "rank " : "ranks ") + rank_list(silent) +
                                  (event.host.empty() ? "" : " on " + event.host));
  event.fields.set("timed_out", std::to_string(count));
  event.fields.set("world", std::to_string(world));
  out->push_back(std::move(event));
}

}  // namespace

std::vector<Event> find_stragglers(const std::vector<Event>& events,
                                   const std::vector<std::string>& collective_timeouts) {
  std::vector<const Event*> progress;
  std::vector<const Event*> timeouts;
  for (const Event& event : events) {
    if (!event.rank) continue;
    if (std::find(collective_timeouts.begin(), collective_timeouts.end(), event.signature) !=
        collective_timeouts.end()) {
      timeouts.push_back(&event);
    }
    if (field_number(event, capture::kLastEnqueued)) progress.push_back(&event);
  }
  std::vector<Event> out;
  find_behind(progress, &out);
  if (out.empty() && !timeouts.empty()) find_silent(timeouts, events, &out);
  return out;
}

}  // namespace faultline
