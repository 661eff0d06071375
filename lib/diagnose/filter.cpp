#include <algorithm>
#include <cctype>

#include "diagnose/diagnose.h"
#include "envelope/envelope.h"

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
  if (filter.min_severity && d.severity < *filter.min_severity) return false;
  return host_matches(filter, d.host) && gpu_matches(filter, d.gpu.pci) &&
         in_window(filter, d.first_seen, d.last_seen.known() ? d.last_seen : d.first_seen);
}

bool keep(const Filter& filter, const Event& e) {
  return host_matches(filter, e.host) && gpu_matches(filter, e.gpu.pci) &&
         in_window(filter, e.evidence.time, e.evidence.time);
}

}  // namespace

void apply_filter(const Filter& filter, Analysis* analysis) {
  std::erase_if(analysis->diagnoses, [&](const Diagnosis& d) { return !keep(filter, d); });
  std::erase_if(analysis->events, [&](const Event& e) { return !keep(filter, e); });
}

}  // namespace faultline
