// Rendering an analysis: the terminal report, JSON, JSON Lines, Markdown, GitHub workflow
// commands and HTML.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "pipeline/pipeline.h"

namespace faultline {

// Where evidence paths are, for terminal hyperlinks (OSC 8): file://HOST/FOLDER/PATH, as
// `ls --hyperlink` writes them, so that a terminal opens the file only on the machine it is on.
struct FileLinks {
  std::string host;    // this machine's name
  std::string folder;  // the absolute working folder that relative paths are read from
};

struct TextOptions {
  bool color = false;
  bool verbose = false;  // every evidence and timeline line, not only the first few
  size_t width = 100;    // columns to wrap prose and cut log lines to; 0 for no limit
  // Evidence paths as hyperlinks to their files (an archive member's: to the archive); unset
  // for plain text. Set only for a terminal that shows them.
  std::optional<FileLinks> links;
};

// The ranked report for people: per diagnosis the verdict, subject, fix and verify, then why
// (confidence, explanation, evidence); after the top one, the incident's timeline.
void render_text(const Analysis& analysis, const TextOptions& options, std::ostream& out);

// One line, the verdict (`diagnose --quiet`): the top diagnosis at warning or above, "CRITICAL
// gpu-off-bus: GPU fell off the bus · GPU 0000:4c:00.0 on gpu-node-031 (1 of 3 findings)", or
// that nothing is, with the lines faultline did not recognise counted.
void render_verdict_line(const Analysis& analysis, std::ostream& out);

// A CI job summary ($GITHUB_STEP_SUMMARY, a GitLab artifact): a heading, a table of the
// diagnoses, then each one's fix, verify and evidence (in a folded <details>).
void render_markdown(const Analysis& analysis, std::ostream& out);

// GitHub Actions workflow commands: an ::error (critical, error) or ::warning line per diagnosis
// at warning or above, placed at its first evidence line.
void render_github(const Analysis& analysis, std::ostream& out);

// The records of report/json.h as JSON Lines, one object per line (the inputs, the GPUs'
// state, then the events): what `faultline scan` prints.
void render_jsonl(const Analysis& analysis, std::ostream& out);

// `faultline scan`'s records (report/json.h), one JSON object per line, each written as it is
// given. With `flush_each` (the output is a terminal or a pipe, whose reader may be waiting)
// every record is flushed at once; else the output is flushed when a record comes a second or
// more after the last flush, at Flush() and when the writer is destroyed.
class RecordWriter {
 public:
  RecordWriter(std::ostream& out, bool flush_each);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  void Write(const InputSummary& input);
  void Write(const UnreadInput& input);
  void Write(const Event& event);
  void Write(const GpuState& state);
  void Write(const LossLogger& logger);
  void Flush();

 private:
  void Put(const std::string& record);

  std::ostream& out_;
  bool flush_each_;
  std::chrono::steady_clock::time_point flushed_;
};

// One self-contained page (no network, no scripts): the ranked diagnoses with evidence, fix and
// verify, and an SVG timeline of the events behind them.
void render_html(const Analysis& analysis, std::ostream& out);

// `text` as valid UTF-8 with control characters (an escape sequence in a log line, an 8-bit
// CSI, binary junk) and bytes that are not UTF-8 shown as U+FFFD and tabs as spaces, so that
// printing it cannot drive the terminal or break a line format. Every renderer passes log text,
// paths and captures through it (or html_escape).
std::string printable(std::string_view text);

// The progress line of a long read, "faultline: 1.2 GiB read, 310.0 MiB/s · PATH", cut to
// `width` columns.
std::string progress_line(std::string_view path, uint64_t bytes, double seconds, size_t width);

// The "faultline/diagnosis/v1" document (docs/architecture.md, "The output contract").
void render_json(const Analysis& analysis, std::ostream& out);

// Why a run could not complete, for scripts (`--error-format json`, or `--format json`): one
// line, {"error": MESSAGE, "exit_code": CODE, "schema": "faultline/error/v1"}.
void render_error_json(std::string_view message, int exit_code, std::ostream& out);

// The encyclopedia entry of a failure class (`faultline explain ID`).
void render_class_entry(const FailureClass& failure, std::ostream& out);

// The catalog entry of an Xid and the classes that diagnose it (`faultline explain xid N`).
void render_xid_entry(int xid, const Catalog& catalog, std::ostream& out);

// The catalog as JSON (`faultline signatures list --json`).
void render_catalog_json(const Catalog& catalog, std::ostream& out);

// The suggester's calibration (`faultline signatures calibrate CORPUS`): a Markdown table, one
// row per threshold, the threshold in use marked.
void render_calibration(const SuggesterCalibration& calibration, std::ostream& out);

}  // namespace faultline
