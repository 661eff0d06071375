// Narrowing an analysis to what the user asks about: a time window, hosts, GPUs, a severity.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/analysis.h"

namespace faultline {

// Reads an ISO 8601 time ("2024-03-05T10:12:33", fraction and zone "Z" / "+02:00" optional),
// "2024-03-05 10:12:33" or a date alone ("2024-03-05", its midnight). Without a zone the time
// is a wall-clock time, like a syslog date's. nullopt for anything else.
std::optional<Timestamp> parse_time(std::string_view text);

struct Filter {
  std::optional<Timestamp> since;
  std::optional<Timestamp> until;
  std::vector<std::string> hosts;  // any of them, compared without case
  std::vector<std::string> gpus;   // normalised PCI addresses (normalize_pci); any of them
  std::optional<Severity> min_severity;
};

// Keeps the diagnoses, and the events, that meet every criterion the filter sets; the severity
// applies to diagnoses only (an event has none). A diagnosis is in the time window when its
// first..last occurrence overlaps it. Times that cannot be placed on the calendar (boot-relative
// dmesg seconds, lines with no time) are kept: the filter cannot tell. A host or GPU filter
// drops what names no host or GPU. Positions are left as they were, so that "caused by #1"
// still points at the same diagnosis (which the filter may have left out).
//
// Two times compare in UTC when both name their zone, else as wall-clock times.
void apply_filter(const Filter& filter, Analysis* analysis);

}  // namespace faultline
