// What the report formats share: the subject of a diagnosis in words, the incident's timeline,
// and the lanes of the HTML timeline. Internal to lib/report/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/pipeline.h"
#include "report/report.h"

namespace faultline {

// "GPU 0000:3b:00.0 on node17 · index 3 · NVIDIA A100 · serial 123 · GPU-… · rank 21", or
// "GPU not identified".
std::string subject_line(const Diagnosis& diagnosis);

// What the report could not see, which every format says beside its verdict (not only the
// warnings on stderr): the inputs not read (not opened, or not a line of them readable), those
// read only in part (--max-bytes, a truncated stream, lines over the length limit), and why the
// filters left nothing.
struct Coverage {
  struct Cut {
    std::string path;
    std::string reason;  // what stopped the reading and how many lines were cut, in words
    uint64_t cut_lines = 0;
  };
  std::vector<UnreadInput> unread;
  std::vector<Cut> cut;
  // Inputs that look like a tool's output of which no reader understood a line
  // (InputSummary::not_understood).
  std::vector<std::string> not_understood;
  std::string filter_note;  // Analysis::filter_note
};
Coverage coverage_of(const Analysis& analysis);

// The inputs of the coverage as labelled lines for the reports for people: {"Not read", "PATH:
// REASON"}, {"Read in part", "PATH: REASON"}, {"Not understood", "PATH: ..."}. (The filters' note
// is the verdict's: it is set only when no diagnosis is left.)
struct CoverageLine {
  std::string_view label;
  std::string text;
};
std::vector<CoverageLine> coverage_lines(const Coverage& coverage);

// " 1 input could not be read. 2 inputs were read only in part. 1 input was not understood.",
// "" when every input was read whole and understood: what a one-line verdict adds.
std::string coverage_caveat(const Coverage& coverage);

// The verdict when no diagnosis is at warning or above: "no known GPU fault" (or, when the
// filters left nothing, the filters' note), with how many inputs were not read or read only in
// part, and when lines that looked like errors were left unrecognised (listed at info), how
// many. "" when some diagnosis is at warning or above.
std::string quiet_verdict(const Analysis& analysis);

// A log line without its envelope (dmesg stamp, syslog date and host), so that a timeline that
// shows the time in its own column does not show it twice. Unknown envelopes are left alone.
std::string_view message_of(std::string_view line);

// A time short enough for a timeline column: "03-05 16:47:38" in the input's own clock (with
// ".118" when `millis`), "+86213.402771s" since boot, "no time".
std::string compact_time(const Timestamp& time, bool millis);

// One evidence line of the incident with the diagnosis it supports.
struct TimelineEntry {
  const Diagnosis* diagnosis;
  const Evidence* evidence;
};

// The incident the report leads with: the top diagnosis (or the one it is collateral to) and
// every diagnosis caused by it. At most `per_diagnosis` evidence lines of each (0: all), each
// line once, in time order: absolute times, then boot-relative ones by host, then lines with
// no time.
std::vector<TimelineEntry> incident_timeline(const Analysis& analysis, size_t per_diagnosis);

// The bands of the HTML timeline, top to bottom, and their headings. Which lane a line is drawn
// in is its Evidence::lane, from the tables.
inline constexpr Lane kLanes[] = {Lane::kHardware, Lane::kCuda, Lane::kNccl, Lane::kJob};
std::string_view lane_title(Lane lane);

// Text for HTML element content and attribute values: printable() that keeps tabs and newlines.
std::string html_escape(std::string_view text);

}  // namespace faultline
