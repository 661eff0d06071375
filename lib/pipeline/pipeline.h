// The whole pipeline for a set of command-line inputs (or of fleet-mode records): read,
// extract, correlate, diagnose.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "diagnose/diagnose.h"
#include "envelope/envelope.h"
#include "source/source.h"

namespace faultline {

// Told how far reading has got: the input being read, and the bytes of text read so far from
// all inputs together.
using Progress = std::function<void(const std::string& path, uint64_t bytes)>;

struct AnalyzeOptions {
  uint64_t max_bytes = kDefaultMaxBytes;  // reading an input stops after this much text
  std::string host;     // the host of lines that name none; else a folder argument's sub-folder
  bool follow = false;  // follow symbolic links inside folder arguments (expand_inputs)
  // How far the clocks of two hosts may disagree: a cause seen up to this long after its
  // symptom still counts as before it.
  double clock_skew_seconds = 5;
  // The zone of wall-clock times that name none (dmesg -T, syslog); unset: they stay wall-clock
  // times, compared with each other as they read.
  std::optional<TimeZone> tz;
  // Called once 64 MiB more have been read or 0.25 s has passed since it was last called.
  Progress progress;
  // When set, reading stops at this time as it does at max_bytes: the input being read then ends
  // with an error that says so (a server's limit on the time one request may take).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Inputs read at the same time (one file per rank, say); the result is the same for any
  // number. At most twice as many inputs' findings wait in memory to be added in order.
  size_t threads = 1;
};

// Reads every input named by `args` (files, folders, "-") and diagnoses them together. An
// input that fails adds a warning; the rest are still read. Lines of a file in a sub-folder of a
// folder argument ("logs/node17/kernel/dmesg") belong to the host named by the first sub-folder
// that does not name a kind of log ("kernel", "logs"), or by the `hostname` file of the
// sosreport they are in, unless the file names its own host (syslog or NCCL prefixes) or
// options.host is set.
Analysis analyze(const std::vector<std::string>& args, const Catalog& catalog,
                 const AnalyzeOptions& options = {});

// How well the nearest-known-failure suggester (diagnose.h, Suggester) does on a corpus of
// cases laid out as tests/realworld/ is (one folder per case, an expect.json beside its inputs):
// each signature's lines in the corpus, looked up with that signature's own examples left out,
// are assigned back to one of its classes, to another class, or to none; and the unrecognised
// lines of the healthy cases (expect.json "max_severity": "info") must get no suggestion.
struct SuggesterCalibration {
  struct Point {
    double threshold = 0;
    size_t right = 0;  // signature lines assigned back to a class of their signature
    size_t wrong = 0;  // to another class
    size_t none = 0;
    size_t healthy_suggested = 0;  // unrecognised lines of healthy cases given a suggestion
  };
  size_t cases = 0;
  size_t signatures = 0;     // with lines in the corpus
  size_t lines = 0;          // their distinct templates, at most kLinesPerSignature each
  size_t healthy_cases = 0;  // and their unrecognised templates:
  size_t healthy_lines = 0;
  std::vector<Point> sweep;  // by threshold, ascending
  static constexpr size_t kLinesPerSignature = 20;
};
SuggesterCalibration calibrate_suggester(const std::string& corpus, const Catalog& catalog);

// What `faultline scan` writes: the findings of each input, without correlation.
struct RecordSink {
  std::function<void(const InputSummary&)> input;
  std::function<void(const UnreadInput&)> unread;  // an input that could not be opened
  std::function<void(const Event&)> event;
  std::function<void(const GpuState&)> state;
  std::function<void(const LossLogger&)> loss_logger;
  std::function<void(const std::string&)> warning;
  // Called after each event of a live input: whoever reads the records may be waiting for it.
  std::function<void()> flush;
};

// Reads the inputs as analyze() does and hands their records to `records` as they are found:
// per input, its events, then its states and its summary; at the end, the training metrics'
// anomalies and the loss loggers. The events of a live input (a pipe, FIFO or terminal:
// `journalctl -kf | faultline scan`) are handed on before its next line is read. Nothing is
// correlated and times are as the inputs give them (options.tz applied): what needs every
// node's records, the one timeline, is made where they are read back (analyze_records).
// Warnings are handed on as they arise. Returns how many inputs could be read.
size_t scan_records(const std::vector<std::string>& args, const Catalog& catalog,
                    const AnalyzeOptions& options, const RecordSink& records);

// What analyze() does, for the records `faultline scan` printed (report/json.h), one file per
// node: events and states are correlated and diagnosed as if their inputs had been read here.
// A line that is not a record adds a warning naming its file and line.
Analysis analyze_records(const std::vector<std::string>& paths, const Catalog& catalog,
                         const AnalyzeOptions& options = {});

}  // namespace faultline
