// One pass over one input: every line goes to the signatures, the state and metrics readers and
// the sniffer.
#pragma once

#include <string>
#include <vector>

#include "extract/signatures.h"
#include "model/metrics.h"
#include "model/model.h"
#include "source/source.h"

namespace faultline {

struct InputSummary {
  std::string path;
  std::string host;  // the host its lines belong to unless they name their own ("" if unknown)
  std::string kind;
  std::string compression;
  uint64_t lines = 0;
  uint64_t bytes = 0;
  uint64_t cut_lines = 0;
  std::string error;  // why reading stopped early, "" if it did not
};

struct ScanResult {
  InputSummary input;
  std::vector<Event> events;
  std::vector<GpuState> states;
  std::vector<Series> series;  // training metrics, per rank and run segment
};

struct ScanOptions {
  std::string host;  // host for lines whose envelope names none ("" if unknown)
  int year = 1970;   // year for syslog dates, which carry none
};

// Reads `reader` to its end.
ScanResult scan_input(LineReader& reader, const SignatureSet& signatures,
                      const ScanOptions& options);

}  // namespace faultline
