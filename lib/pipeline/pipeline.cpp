#include "pipeline/pipeline.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "catalog/signatures.h"
#include "correlate/correlate.h"
#include "envelope/envelope.h"
#include "extract/extract.h"
#include "model/captures.h"
#include "model/text.h"
#include "pipeline/ordered_parallel.h"
#include "pipeline/progress.h"

namespace faultline {
namespace {

namespace fs = std::filesystem;

// Metric points kept for the whole run (64 bytes each: 25.6 MB), shared by the series of every
// input: a folder of many ranks' logs gets coarser series, never unbounded memory.
constexpr size_t kSeriesPointBudget = 400'000;
constexpr size_t kMinPointsPerRunSeries = 256;

// Folder names that say what a folder holds, not whose it is: never taken for a host.
bool names_a_kind(const std::string& folder) {
  static const std::set<std::string, std::less<>> kKinds = {
      "artifacts", "ci",      "data",    "dmesg",        "gpu",      "job",
      "jobs",      "journal", "kern",    "kernel",       "log",      "logs",
      "nvidia",    "output",  "outputs", "sos_commands", "sos_logs", "sos_reports",
      "syslog",    "tmp",     "train",   "training",     "var"};
  std::string lower = folder;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return kKinds.contains(lower);
}

// The host named by the first line of `file` (an sosreport's `hostname`), or "".
std::string host_in_file(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line) || line.size() > 253) return "";
  line = std::string(trim(line));
  const bool host_name = !line.empty() && std::all_of(line.begin(), line.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  });
  return host_name ? line : "";
}

// The host of `file` found below the folder argument `root`: the `hostname` file of the nearest
// folder on the way that has one (an sosreport's root), else the first folder below `root` that
// does not name a kind of log ("node17" of logs/node17/kernel/dmesg).
std::string folder_host(const std::string& root, const std::string& file,
                        std::map<fs::path, std::string>* hosts_of_folders) {
  const fs::path relative = fs::path(file).lexically_relative(root);
  if (relative.empty() || relative.begin()->string() == "..") return "";
  for (fs::path folder = fs::path(file).parent_path();
       folder.string().size() > fs::path(root).string().size(); folder = folder.parent_path()) {
    auto [known, added] = hosts_of_folders->try_emplace(folder);
    if (added) {
      std::error_code ec;
      const fs::path named = folder / "hostname";
      // Not a link: nothing outside what the user handed over is read.
      if (fs::is_regular_file(fs::symlink_status(named, ec))) known->second = host_in_file(named);
    }
    if (!known->second.empty()) return known->second;
  }
  for (auto part = relative.begin(); std::next(part) != relative.end(); ++part) {
    if (!names_a_kind(part->string())) return part->string();
  }
  return "";
}

// Syslog dates carry no year: take the file's modification year (a member's as its archive
// records it), else this year.
int year_for(const std::string& path, int64_t mtime) {
  struct stat info {};
  std::time_t t = std::time(nullptr);
  if (mtime != 0) {
    t = static_cast<std::time_t>(mtime);
  } else if (path != "-" && stat(path.c_str(), &info) == 0) {
    t = info.st_mtime;
  }
  std::tm tm{};
  gmtime_r(&t, &tm);
  return tm.tm_year + 1900;
}

// The host named by a member's folders inside its archive, by the rule of folder_host.
std::string member_host(const std::vector<std::string>& folders) {
  for (const std::string& folder : folders) {
    if (!names_a_kind(folder)) return folder;
  }
  return "";
}

// The ids of the signatures that carry a role key.
std::vector<const Signature*> all_signatures(const SignatureSet& signatures) {
  std::vector<const Signature*> all;
  for (const auto& signature : signatures.signatures()) all.push_back(signature.get());
  return all;
}

std::vector<std::string> signatures_where(const SignatureSet& signatures, bool Signature::*role) {
  std::vector<std::string> ids;
  for (const auto& signature : signatures.signatures()) {
    if ((*signature).*role) ids.push_back(signature->id);
  }
  return ids;
}

// An input to read and the host its lines belong to unless they name their own.
struct InputJob {
  std::string path;
  std::string host;
};

// One input read: what it yielded, or why it could not be opened, or an input read only when it
// is taken: an archive, whose members are read one after the other in archive order, so that
// their findings are added in that order and never wait in memory together, or a live input.
struct InputOutcome {
  ScanResult scan;
  std::string path;  // as given, for open_error
  std::string open_error;
  std::string notice;  // binary data skipped inside the text
  std::unique_ptr<Input> archive;
  bool live = false;
};

// What reading the inputs hands on, in input order (an archive's members in archive order).
struct InputSink {
  std::function<void(std::string)> warning;
  std::function<void(ScanResult)> input;    // an input or archive member read to its end
  std::function<void(UnreadInput)> unread;  // an input that could not be opened, when set
  // When set, a live input is read on the calling thread and its events are handed here as
  // they are found (extract.h's on_event), not in ScanResult::events.
  std::function<void(const Event&)> live_event;
};

// A pipe, FIFO, terminal or socket: its writer may still be writing (`journalctl -kf | ...`).
bool is_live(const std::string& path) {
  struct stat info {};
  const int status = path == "-" ? fstat(STDIN_FILENO, &info) : stat(path.c_str(), &info);
  return status == 0 && !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode);
}

InputOutcome scan_member(Member member, const InputJob& job, const Catalog& catalog,
                         ProgressTracker* tracker,
                         std::function<void(const Event&)> on_event = nullptr) {
  std::unique_ptr<LineReader> reader = std::move(member.reader);
  if (tracker) reader = tracker->Wrap(std::move(reader));
  const std::string host = job.host.empty() ? member_host(member.folders) : job.host;
  InputOutcome outcome;
  outcome.scan = scan_input(*reader, *catalog.signatures,
                            {host, year_for(job.path, member.mtime), std::move(on_event)});
  outcome.notice = reader->notice();
  return outcome;
}

InputOutcome read_input(const InputJob& job, const Catalog& catalog, uint64_t max_bytes,
                        ProgressTracker* tracker,
                        const std::function<void(const Event&)>& on_event = nullptr) {
  InputOutcome outcome;
  outcome.path = job.path;
  std::unique_ptr<Input> input = Input::Open(job.path, &outcome.open_error, max_bytes);
  if (!input) return outcome;
  if (input->archive()) {
    outcome.archive = std::move(input);
    return outcome;
  }
  Member member;
  std::vector<std::string> none;  // a file is its only member: nothing to warn of
  input->Next(&member, &none);
  return scan_member(std::move(member), job, catalog, tracker, on_event);
}

void hand_on(InputOutcome outcome, const InputSink& sink) {
  if (!outcome.open_error.empty()) {
    if (sink.unread) sink.unread(unread_input(outcome.path, outcome.open_error));
    sink.warning(std::move(outcome.open_error));
    return;
  }
  if (!outcome.scan.input.error.empty()) sink.warning(outcome.scan.input.error);
  if (!outcome.notice.empty()) sink.warning(std::move(outcome.notice));
  sink.input(std::move(outcome.scan));
}

// Reads every input named by `args`, as analyze() describes, and hands each one's findings to
// `sink` in the order of the arguments.
void read_inputs(const std::vector<std::string>& args, const Catalog& catalog,
                 const AnalyzeOptions& options, const InputSink& sink) {
  std::vector<std::string> warnings;
  const auto pass_warnings = [&] {
    for (std::string& warning : warnings) sink.warning(std::move(warning));
    warnings.clear();
  };
  std::vector<InputJob> jobs;
  std::vector<UnreadInput> unread;                   // arguments that do not exist
  std::map<fs::path, std::string> hosts_of_folders;  // an sosreport's hostname, by folder
  for (const std::string& arg : args) {
    std::error_code ec;
    const bool folder = arg != "-" && fs::is_directory(arg, ec);
    for (std::string& path : expand_inputs({arg}, &warnings, options.follow, &unread)) {
      std::string host = !options.host.empty() ? options.host
                         : folder              ? folder_host(arg, path, &hosts_of_folders)
                                               : "";
      jobs.push_back({std::move(path), std::move(host)});
    }
  }
  pass_warnings();
  for (UnreadInput& input : unread) {
    if (sink.unread) sink.unread(std::move(input));
  }
  std::optional<ProgressTracker> tracker;
  if (options.progress || options.deadline) tracker.emplace(options.progress, options.deadline);
  ProgressTracker* progress = tracker ? &*tracker : nullptr;
  for_each_in_order<InputOutcome>(
      jobs.size(), options.threads,
      [&](size_t i) {
        // Opening a FIFO waits for its writer: a live input is opened when its turn comes.
        InputOutcome outcome;
        outcome.live = sink.live_event && is_live(jobs[i].path);
        if (outcome.live) return outcome;
        return read_input(jobs[i], catalog, options.max_bytes, progress);
      },
      [&](size_t i, InputOutcome outcome) {
        if (outcome.live) {
          outcome = read_input(jobs[i], catalog, options.max_bytes, progress, sink.live_event);
        }
        if (!outcome.archive) return hand_on(std::move(outcome), sink);
        Member member;
        while (outcome.archive->Next(&member, &warnings)) {
          pass_warnings();
          hand_on(scan_member(std::move(member), jobs[i], catalog, progress), sink);
        }
        pass_warnings();
      });
}

// The series that log the training loss, once per input, format and rank (not per segment).
std::vector<LossLogger> loss_loggers(const std::vector<Series>& series) {
  std::set<LossLogger> loggers;
  for (const Series& one : series) {
    const auto& points = one.points();
    if (std::none_of(points.begin(), points.end(),
                     [](const MetricPoint& point) { return point.has(MetricPoint::kLoss); })) {
      continue;
    }
    loggers.insert({one.path, one.host, one.format, one.rank, one.rank_is_local});
  }
  return {loggers.begin(), loggers.end()};
}

// What follows reading, the same for raw inputs and for records: one timeline, then
// correlation and diagnosis.
void conclude(const Catalog& catalog, const AnalyzeOptions& options, Analysis* analysis) {
  align_times(&analysis->events, &analysis->states, options.tz);
  // Derived from every rank's lines together: made afresh from what this run has (records
  // from one node carry that node's guess).
  std::erase_if(analysis->events, [](const Event& event) {
    return event.signature == derived::kRankBehind || event.signature == derived::kGpuMissing;
  });
  for (Event& event :
       find_stragglers(analysis->events,
                       signatures_where(*catalog.signatures, &Signature::collective_timeout))) {
    analysis->events.push_back(std::move(event));
  }
  for (Event& event :
       find_missing_gpus(analysis->events, analysis->states,
                         signatures_where(*catalog.signatures, &Signature::installed_gpu))) {
    analysis->events.push_back(std::move(event));
  }
  for (Event& event : xid_events_from_states(analysis->states)) {
    analysis->events.push_back(std::move(event));
  }
  decode_nvlink5(catalog.knowledge, &analysis->events);
  decode_cuda_errors(catalog.knowledge, &analysis->events);
  decode_nvml_errors(catalog.knowledge, &analysis->events);
  decode_dcgm_errors(catalog.knowledge, &analysis->events);
  decode_sxids(catalog.knowledge, &analysis->events);
  Correlation correlation = correlate(analysis->events, analysis->states,
                                      signatures_where(*catalog.signatures, &Signature::identity));
  correlation.clock_skew_seconds = options.clock_skew_seconds;
  correlation.loss_loggers = analysis->loss_loggers;
  for (const InputSummary& input : analysis->inputs) {
    if (!input.host.empty() &&
        (input.kind == InputKind::kKernelLog || input.kind == InputKind::kMixed)) {
      correlation.hosts_with_kernel_log.insert(input.host);
    }
  }
  // The nearest known failure is looked up for unrecognised lines only: when a run has none, the
  // examples are not even indexed.
  const bool unrecognised = std::any_of(
      analysis->events.begin(), analysis->events.end(),
      [](const Event& event) { return event.fields.contains(std::string(capture::kTemplate)); });
  std::optional<Suggester> suggester;
  if (unrecognised) suggester.emplace(all_signatures(*catalog.signatures), catalog.knowledge);
  analysis->diagnoses = diagnose(correlation, catalog.knowledge, suggester ? &*suggester : nullptr);
}

}  // namespace

Analysis analyze(const std::vector<std::string>& args, const Catalog& catalog,
                 const AnalyzeOptions& options) {
  Analysis analysis;
  InputSink sink;
  sink.warning = [&](std::string warning) { analysis.warnings.push_back(std::move(warning)); };
  sink.unread = [&](UnreadInput unread) { analysis.unread.push_back(std::move(unread)); };
  sink.input = [&](ScanResult scan) {
    if (scan.input.error.empty() || scan.input.lines > 0) ++analysis.readable_inputs;
    for (Event& event : scan.events) analysis.events.push_back(std::move(event));
    for (GpuState& state : scan.states) analysis.states.push_back(std::move(state));
    for (Series& series : scan.series) analysis.series.push_back(std::move(series));
    share_points(&analysis.series, kSeriesPointBudget, kMinPointsPerRunSeries);
    analysis.inputs.push_back(std::move(scan.input));
  };
  read_inputs(args, catalog, options, sink);
  // Anomalies of the training metrics are events like any other; none names a GPU.
  for (const Series& series : analysis.series) {
    for (Event& event : detect_anomalies(series, catalog.knowledge.anomaly))
      analysis.events.push_back(std::move(event));
  }
  analysis.loss_loggers = loss_loggers(analysis.series);
  conclude(catalog, options, &analysis);
  return analysis;
}

size_t scan_records(const std::vector<std::string>& args, const Catalog& catalog,
                    const AnalyzeOptions& options, const RecordSink& records) {
  size_t readable = 0;
  std::vector<Series> series;
  const auto event = [&](const Event& found) {
    if (!options.tz) return records.event(found);
    Event shown = found;
    shown.evidence.time = options.tz->Apply(shown.evidence.time);
    records.event(shown);
  };
  InputSink sink;
  sink.warning = records.warning;
  sink.unread = [&](const UnreadInput& input) {
    if (records.unread) records.unread(input);
  };
  sink.live_event = [&](const Event& found) {
    event(found);
    records.flush();
  };
  sink.input = [&](ScanResult scan) {
    if (scan.input.error.empty() || scan.input.lines > 0) ++readable;
    for (const Event& found : scan.events) event(found);
    for (GpuState& state : scan.states) {
      if (options.tz) {
        state.time = options.tz->Apply(state.time);
        state.source.time = options.tz->Apply(state.source.time);
      }
      records.state(state);
    }
    for (Series& one : scan.series) series.push_back(std::move(one));
    share_points(&series, kSeriesPointBudget, kMinPointsPerRunSeries);
    records.input(scan.input);
  };
  read_inputs(args, catalog, options, sink);
  for (const Series& one : series) {
    for (const Event& anomaly : detect_anomalies(one, catalog.knowledge.anomaly)) event(anomaly);
  }
  for (const LossLogger& logger : loss_loggers(series)) records.loss_logger(logger);
  return readable;
}

Analysis analyze_records(const std::vector<std::string>& paths, const Catalog& catalog,
                         const AnalyzeOptions& options) {
  Analysis analysis;
  Records records;
  for (const std::string& path :
       expand_inputs(paths, &analysis.warnings, options.follow, &analysis.unread)) {
    std::string error;
    std::unique_ptr<Input> input = Input::Open(path, &error, options.max_bytes);
    if (!input) {
      analysis.unread.push_back(unread_input(path, error));
      analysis.warnings.push_back(error);
      continue;
    }
    Member member;
    while (input->Next(&member, &analysis.warnings)) {
      LineReader& reader = *member.reader;
      Line line;
      bool read_any = false;
      while (reader.Next(&line)) {
        if (line.text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
        if (read_record(line.text, &records, &error)) {
          read_any = true;
        } else {
          analysis.warnings.push_back(reader.path() + ":" + std::to_string(line.number) +
                                      ": not a faultline record: " + error);
        }
      }
      if (!reader.error().empty()) analysis.warnings.push_back(reader.error());
      if (std::string notice = reader.notice(); !notice.empty()) {
        analysis.warnings.push_back(std::move(notice));
      }
      if (read_any) ++analysis.readable_inputs;
      member.reader.reset();
    }
  }
  analysis.inputs = std::move(records.inputs);
  // A node's input that it could not open is this report's too (and, as always, a warning).
  for (UnreadInput& input : records.unread) {
    analysis.warnings.push_back(input.path + ": " + input.reason);
    analysis.unread.push_back(std::move(input));
  }
  analysis.events = std::move(records.events);
  analysis.states = std::move(records.states);
  analysis.loss_loggers = std::move(records.loss_loggers);
  conclude(catalog, options, &analysis);
  return analysis;
}

}  // namespace faultline
