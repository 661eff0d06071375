// Narrowing an analysis to what the user asks about: a time window, hosts, GPUs, a severity.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/analysis.h"
#include "sniff/prefix.h"

namespace faultline {

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
