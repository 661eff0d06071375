// Lines to facts: one pass over one input, every line to the signatures, the state and metrics
// readers and the sniffer; and the records of such passes read back (fleet mode).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/metrics.h"
#include "model/model.h"
#include "source/source.h"

namespace faultline {

class SignatureSet;

struct ScanResult {
  InputSummary input;
  std::vector<Event> events;
  std::vector<GpuState> states;
  std::vector<Series> series;  // training metrics, per rank and run segment
};

struct ScanOptions {
  std::string host;  // host for lines whose envelope names none ("" if unknown)
  int year = 1970;   // year for syslog dates, which carry none
  // When set, each event is handed to it as soon as nothing later in the input can change it,
  // and before the next line is read (a live input: `journalctl -kf | faultline scan`), instead
  // of being returned in ScanResult::events. An event that names no host then has the input's
  // host as known so far: the first lines' hosts decide it (see scan.cpp). The latest event of
  // a flooded kind, which counts the lines after it, is handed over at the end.
  std::function<void(const Event&)> on_event;
};

// The message of `line` with what varies between occurrences masked (<num>, <pci>, <path>, ...):
// what groups an unrecognised line's occurrences (its "template" field), and what the nearest
// known failure is looked up by (diagnose.h, Suggester).
std::string line_template(std::string_view line);

// Reads `reader` to its end.
ScanResult scan_input(LineReader& reader, const SignatureSet& signatures,
                      const ScanOptions& options);

// What `faultline scan` printed (report/records.h writes it), read back.
struct Records {
  std::vector<InputSummary> inputs;
  std::vector<UnreadInput> unread;  // "unread" records: inputs a node could not open
  std::vector<Event> events;
  std::vector<GpuState> states;
  std::vector<LossLogger> loss_loggers;  // "series" records
  TextPool names;  // the signatures and hosts that records repeat, each stored once
};

// The largest count of lines or bytes a record may hold (an event's "count", an input's "lines",
// "bytes", "cut_lines"): 2^48, 256 TiB, more than any input holds. A record claiming more (2^64-1)
// is not one faultline wrote and is refused; the totals of the counts taken saturate besides
// (saturating_add), since many records add up.
inline constexpr uint64_t kMaxRecordedCount = uint64_t{1} << 48;

// Adds the record on `line` to `records`. A line without "record" is an event (as scan printed
// before it wrote other records); a record of a kind this version does not know is skipped.
// Returns false and sets *error (why, without the path) when the line is not a record, or holds a
// count over kMaxRecordedCount. A line is at most kMaxLineBytes (source.h), which bounds the size
// of its strings and fields.
bool read_record(std::string_view line, Records* records, std::string* error);

}  // namespace faultline
