#include <algorithm>
#include <set>
#include <string>
#include <type_traits>

#include "catalog/catalog.h"
#include "diagnose/diagnose.h"
#include "envelope/envelope.h"
#include "model/text.h"

namespace faultline {
namespace {

// -1, 0, 1 as `a` is before, at or after `b`; nullopt when they cannot be compared.
std::optional<int> compare(const Timestamp& a, const Timestamp& b) {
  if (a.kind != Timestamp::Kind::kAbsolute || b.kind != Timestamp::Kind::kAbsolute) {
    return std::nullopt;
  }
  const double gap = *seconds_between(a, b);
  return gap > 0 ? -1 : gap < 0 ? 1 : 0;
}

// Whether [first, last] overlaps the filter's window; true when that cannot be told.
bool in_window(const Filter& filter, const Timestamp& first, const Timestamp& last) {
  if (filter.since && compare(last, *filter.since).value_or(0) < 0) return false;
  if (filter.until && compare(first, *filter.until).value_or(0) > 0) return false;
  return true;
}

bool same_host(std::string_view a, std::string_view b) {
  return equals_ignoring_case(a, b);
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
  if (filter.min_severity && d.severity < *filter.min_severity) return false;
  return host_matches(filter, d.host) && gpu_matches(filter, d.gpu.pci) &&
         in_window(filter, d.first_seen, d.last_seen.known() ? d.last_seen : d.first_seen);
}

bool keep(const Filter& filter, const Event& e) {
  return host_matches(filter, e.host) && gpu_matches(filter, e.gpu.pci) &&
         in_window(filter, e.evidence.time, e.evidence.time);
}

const Timestamp& first_time(const Diagnosis& d) {
  return d.first_seen;
}
const Timestamp& last_time(const Diagnosis& d) {
  return d.last_seen.known() ? d.last_seen : d.first_seen;
}
const Timestamp& first_time(const Event& e) {
  return e.evidence.time;
}
const Timestamp& last_time(const Event& e) {
  return e.evidence.time;
}

// "a, b, c" and "and N more" past five: what the items name, for a note.
std::string listed(const std::set<std::string>& names) {
  std::string out;
  size_t shown = 0;
  for (const std::string& name : names) {
    if (shown++ == 5) return out + " and " + std::to_string(names.size() - 5) + " more";
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

std::string or_list(std::string_view flag, const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& value : values) {
    out += (out.empty() ? "" : " or ") + std::string(flag) + " " + value;
  }
  return out;
}

// Why `filter`, which keeps none of `items`, keeps none: the criterion that alone keeps none, in
// words, else that only the criteria together do. `noun` and `nouns`: "event" and "events", or
// "diagnosis" and "diagnoses".
template <typename Item>
std::string why_none(const Filter& filter, const std::vector<Item>& items, std::string_view noun,
                     std::string_view nouns) {
  // Whether a filter with only the criterion that `set` puts in it keeps none of the items.
  const auto keeps_none = [&](const auto& set) {
    Filter alone;
    set(&alone);
    return std::none_of(items.begin(), items.end(),
                        [&](const Item& item) { return keep(alone, item); });
  };
  const std::string every = "every " + std::string(noun);
  if (filter.since && keeps_none([&](Filter* alone) { alone->since = filter.since; })) {
    const Timestamp* last = nullptr;
    for (const Item& item : items) {
      if (!last || compare(last_time(item), *last).value_or(0) > 0) last = &last_time(item);
    }
    return "--since " + filter.since->iso() + " is after " + every + " (the last at " +
           last->iso() + ")";
  }
  if (filter.until && keeps_none([&](Filter* alone) { alone->until = filter.until; })) {
    const Timestamp* first = nullptr;
    for (const Item& item : items) {
      if (!first || compare(first_time(item), *first).value_or(0) < 0) first = &first_time(item);
    }
    return "--until " + filter.until->iso() + " is before " + every + " (the first at " +
           first->iso() + ")";
  }
  if (!filter.hosts.empty() && keeps_none([&](Filter* alone) { alone->hosts = filter.hosts; })) {
    std::set<std::string> hosts;
    for (const Item& item : items) {
      if (!item.host.empty()) hosts.insert(item.host);
    }
    return or_list("--host", filter.hosts) + " matches no host of the " + std::string(nouns) +
           (hosts.empty() ? " (none names one)" : " (" + listed(hosts) + ")");
  }
  if (!filter.gpus.empty() && keeps_none([&](Filter* alone) { alone->gpus = filter.gpus; })) {
    std::set<std::string> gpus;
    for (const Item& item : items) {
      if (!item.gpu.pci.empty()) gpus.insert(item.gpu.pci);
    }
    return or_list("--gpu", filter.gpus) + " matches no GPU of the " + std::string(nouns) +
           (gpus.empty() ? " (none names one)" : " (" + listed(gpus) + ")");
  }
  if constexpr (std::is_same_v<Item, Diagnosis>) {
    if (filter.min_severity &&
        keeps_none([&](Filter* alone) { alone->min_severity = filter.min_severity; })) {
      Severity highest = Severity::kInfo;
      for (const Diagnosis& d : items) highest = std::max(highest, d.severity);
      return "--min-severity " + std::string(severity_name(*filter.min_severity)) + " is above " +
             every + " (the highest is " + std::string(severity_name(highest)) + ")";
    }
  }
  std::vector<std::string> flags;
  if (filter.since) flags.emplace_back("--since");
  if (filter.until) flags.emplace_back("--until");
  if (!filter.hosts.empty()) flags.emplace_back("--host");
  if (!filter.gpus.empty()) flags.emplace_back("--gpu");
  if (filter.min_severity && std::is_same_v<Item, Diagnosis>) flags.emplace_back("--min-severity");
  std::string together;
  for (size_t i = 0; i < flags.size(); ++i) {
    together += (i == 0 ? "" : i + 1 == flags.size() ? " and " : ", ") + flags[i];
  }
  return "no " + std::string(noun) + " meets " + together + " together";
}

template <typename Item>
bool keeps_none(const Filter& filter, const std::vector<Item>& items) {
  return std::none_of(items.begin(), items.end(),
                      [&](const Item& item) { return keep(filter, item); });
}

}  // namespace

void apply_filter(const Filter& filter, Analysis* analysis) {
  // Said only when no diagnosis is left: the report then reads "nothing found", and must say
  // that this is the filters' doing.
  if (keeps_none(filter, analysis->diagnoses)) {
    if (!analysis->events.empty() && keeps_none(filter, analysis->events)) {
      analysis->filter_note =
          "filters left no event: " + why_none(filter, analysis->events, "event", "events");
    } else if (!analysis->diagnoses.empty()) {
      analysis->filter_note = "filters left no diagnosis: " +
                              why_none(filter, analysis->diagnoses, "diagnosis", "diagnoses");
    }
  }
  std::erase_if(analysis->diagnoses, [&](const Diagnosis& d) { return !keep(filter, d); });
  std::erase_if(analysis->events, [&](const Event& e) { return !keep(filter, e); });
}

}  // namespace faultline
