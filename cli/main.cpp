// faultline's command line: argument handling and exit codes, nothing else.
#include <faultline_commit.h>  // FAULTLINE_COMMIT, generated at build time
#include <malloc.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <thread>
#include <tuple>

#include "catalog/catalog.h"
#include "catalog/signatures.h"
#include "cli/completions.h"
#include "diagnose/diagnose.h"
#include "report/report.h"
#include "serve/serve.h"

namespace {

using faultline::Analysis;
using faultline::Catalog;

// Exit codes (docs/architecture.md): nothing at or above --fail-on, something found, could not run.
constexpr int kExitClean = 0;
constexpr int kExitFound = 1;
constexpr int kExitUsage = 2;

struct Options {
  std::vector<std::string> paths;
  std::vector<std::string> signature_dirs;
  std::string format = "text";
  std::string fail_on = "error";
  std::string color = "auto";
  std::string max_bytes;  // --max-bytes SIZE, "" for the default
  std::string hostname;   // --hostname: the host of lines that name none
  std::string tz;         // --tz ZONE
  size_t jobs = 0;        // --jobs N, 0: one per core
  double clock_skew = 5;  // --clock-skew SECONDS
  bool events = false;    // diagnose --events: the paths hold `faultline scan` records
  bool follow = false;    // -L/--follow: symbolic links inside folders
  bool verbose = false;
  bool hyperlink = false;  // evidence paths as terminal hyperlinks, where the terminal shows them
  bool ignore_missing = false;        // a named path that does not exist is not exit code 2
  bool quiet = false;                 // diagnose -q: the verdict line only
  std::string error_format = "text";  // read by wants_json_errors before parsing
  // diagnose's filters and --redact
  std::string since;
  std::string until;
  std::vector<std::string> hosts;
  std::vector<std::string> gpus;
  std::string min_severity;
  bool redact = false;
  bool patterns = false;
  bool json = false;
  std::string table_dir;             // signatures lint|test DIR
  bool lint_variants = false;        // signatures lint --variants
  std::string corpus;                // signatures calibrate CORPUS
  std::vector<std::string> explain;  // explain ID | explain xid N
};

// Messages carry paths, ids and pattern text from the inputs: a control character there (a
// newline in a file name or in a table's id) is escaped, so that each message is one line.
std::string one_line(std::string_view message) {
  std::string out;
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += "\\x";
      out += "0123456789abcdef"[byte >> 4];
      out += "0123456789abcdef"[byte & 0xf];
    }
  }
  return faultline::printable(out);  // C1 controls and bytes that are not UTF-8
}

// Errors as JSON on stderr (`--error-format json`, or `--format json`), for scripts that must
// tell why a run failed; decided from the arguments before they are parsed, so that a usage
// error is reported the same way.
bool& json_errors() {
  static bool json = false;
  return json;
}

bool wants_json_errors(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size() && args[i] != "--"; ++i) {
    for (const std::string flag : {"--error-format", "--format"}) {
      if (args[i] == flag + "=json" ||
          (args[i] == flag && i + 1 < args.size() && args[i + 1] == "json")) {
        return true;
      }
    }
  }
  return false;
}

int fail(const std::string& message) {
  if (json_errors()) {
    faultline::render_error_json(one_line(message), kExitUsage, std::cerr);
  } else {
    std::cerr << "faultline: " << one_line(message) << "\n";
  }
  return kExitUsage;
}

constexpr const char* kExitCodes =
    "Exit codes: 0 nothing at or above --fail-on, 1 something at or above it, 2 the command\n"
    "could not run (bad usage, no input readable, an invalid table, a named path missing).";

// "faultline 0.1.0 (commit 1a2b3c4d5e6f, catalog 9f8e7d6c5b4a)": the release, the source it was
// built from and the signature tables built in.
std::string version_text() {
  return std::string("faultline ") + FAULTLINE_VERSION + " (commit " + FAULTLINE_COMMIT +
         ", catalog " + std::string(faultline::builtin_tables_version()) + ")";
}

// The candidate nearest to `typed` by edit distance, if near enough to be a typo (at most one
// edit in four characters, two at most); "" if none is.
std::string nearest(std::string_view typed, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::min<size_t>(2, std::max<size_t>(1, typed.size() / 4)) + 1;
  for (const std::string& candidate : candidates) {
    // Levenshtein distance, one row at a time.
    std::vector<size_t> row(candidate.size() + 1);
    for (size_t j = 0; j < row.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= typed.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= candidate.size(); ++j) {
        const size_t above = row[j];
        row[j] = std::min(
            {row[j] + 1, row[j - 1] + 1, diagonal + (typed[i - 1] == candidate[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    if (row.back() < best_distance) {
      best_distance = row.back();
      best = candidate;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates) {
  const std::string near = nearest(typed, candidates);
  return near.empty() ? "" : "; did you mean '" + near + "'?";
}

// The long flags of `command` and its parents ("--format").
std::vector<std::string> long_flags(const CLI::App* command) {
  std::vector<std::string> flags;
  for (; command != nullptr; command = command->get_parent()) {
    for (const CLI::Option* option : command->get_options()) {
      for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
    }
  }
  return flags;
}

// The names of the commands under `command`.
std::vector<std::string> command_names(const CLI::App* command) {
  std::vector<std::string> names;
  for (const CLI::App* sub : command->get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

// "signatures lint": the words that name `command` after "faultline" ("" for faultline).
std::string command_path(const CLI::App* command) {
  std::string path;
  for (; command->get_parent() != nullptr; command = command->get_parent()) {
    path = command->get_name() + (path.empty() ? "" : " " + path);
  }
  return path;
}

// The command that `words` name, from `app` down (`signatures lint`), or an error naming the
// first word that is none, with the command that may have been meant.
const CLI::App* find_command(const CLI::App& app, const std::vector<std::string>& words,
                             std::string* error) {
  const CLI::App* command = &app;
  for (const std::string& word : words) {
    const std::vector<std::string> names = command_names(command);
    if (std::find(names.begin(), names.end(), word) == names.end()) {
      const std::string parent = command_path(command);
      *error = "'" + word + "' is not a " + (parent.empty() ? "faultline" : parent) + " command" +
               did_you_mean(word, names) + " (faultline help" +
               (parent.empty() ? "" : " " + parent) + ")";
      return nullptr;
    }
    command = command->get_subcommand(word);
  }
  return command;
}

// The words at the start of `args` that must name commands: the first, and each after a
// command that only groups others (`signatures`). A mistyped one is not taken for an input.
std::vector<std::string> command_words(const CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> words;
  const CLI::App* command = &app;
  for (const std::string& arg : args) {
    if (command == nullptr || arg.starts_with("-") || command->get_require_subcommand_min() == 0) {
      break;
    }
    words.push_back(arg);
    const std::vector<std::string> names = command_names(command);
    const bool known = std::find(names.begin(), names.end(), arg) != names.end();
    command = known ? command->get_subcommand(arg) : nullptr;
  }
  return words;
}

// A parse error as one line, with the flag or command the user may have meant.
int usage_error(const CLI::App& app, const CLI::ParseError& error,
                const std::vector<std::string>& args) {
  // The deepest command given: its flags are the ones a mistyped one was meant to be.
  const CLI::App* command = &app;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const CLI::App* sub : command->get_subcommands()) {
      command = sub;
      deeper = true;
    }
  }
  std::string hint;
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (!arg.starts_with("--")) continue;
    const std::string flag = arg.substr(0, arg.find('='));
    const std::vector<std::string> flags = long_flags(command);
    if (std::find(flags.begin(), flags.end(), flag) == flags.end()) {
      hint = did_you_mean(flag, flags);
      if (!hint.empty()) break;
    }
  }
  const bool top = command == &app;
  const std::string help = top ? "faultline --help" : "faultline help " + command_path(command);
  return fail((top ? "" : command_path(command) + ": ") + error.what() + hint + " (" + help + ")");
}

// "100M", "16G", "4096": a byte count with an optional binary unit (K, M, G, T; KiB, MB also).
std::optional<uint64_t> parse_size(std::string_view text) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || value == 0) return std::nullopt;
  std::string unit(end, text.data() + text.size());
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (!unit.empty() && unit != "B") {
    const size_t power = std::string_view("KMGT").find(unit[0]);
    const std::string_view rest = std::string_view(unit).substr(1);
    if (power == std::string_view::npos || !(rest.empty() || rest == "B" || rest == "IB")) {
      return std::nullopt;
    }
    shift = 10 * static_cast<int>(power + 1);
  }
  if (value > (std::numeric_limits<uint64_t>::max() >> shift)) return std::nullopt;
  return value << shift;
}

// No path means standard input, unless that is a terminal (then the user forgot the path).
bool resolve_paths(Options* options) {
  if (!options->paths.empty()) return true;
  if (isatty(STDIN_FILENO)) return false;
  options->paths.emplace_back("-");
  return true;
}

// Columns of the terminal on `fd`; 100 when it is not one (a pipe, a file).
size_t terminal_width(int fd) {
  winsize size{};
  return isatty(fd) && ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 ? size.ws_col : 100;
}

// A progress line on stderr while a long read goes on, only when stderr is a terminal and only
// after the first second, so that short runs, pipes and CI logs get nothing.
class ProgressLine {
 public:
  // `show_paths` false (--redact): the line names no input, only the bytes read.
  faultline::Progress Callback(bool show_paths) {
    if (!isatty(STDERR_FILENO)) return {};
    return [this, show_paths](const std::string& path, uint64_t bytes) {
      const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
      if (seconds < 1) return;
      std::cerr << "\r"
                << faultline::progress_line(show_paths ? path : "", bytes, seconds,
                                            terminal_width(STDERR_FILENO) - 1)
                << "\x1b[K" << std::flush;
      shown_ = true;
    };
  }
  void Clear() const {
    if (shown_) std::cerr << "\r\x1b[K" << std::flush;
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_ = Clock::now();
  bool shown_ = false;
};

// The catalog and the reading options; an exit code when one of them cannot be had.
std::optional<int> prepare_analysis(Options& options, Catalog* catalog,
                                    faultline::AnalyzeOptions* analyze_options) {
  std::string error;
  if (!faultline::load_catalog(options.signature_dirs, catalog, &error)) return fail(error);
  if (!resolve_paths(&options)) return fail("no input: give a path, a folder or '-' for stdin");
  faultline::AnalyzeOptions& analyze = *analyze_options;
  if (!options.max_bytes.empty()) {
    const std::optional<uint64_t> size = parse_size(options.max_bytes);
    if (!size) return fail("--max-bytes: '" + options.max_bytes + "' is not a size (100M, 16G)");
    analyze.max_bytes = *size;
  }
  analyze.host = options.hostname;
  analyze.follow = options.follow;
  analyze.threads =
      options.jobs != 0 ? options.jobs : std::max(1U, std::thread::hardware_concurrency());
  if (!options.tz.empty()) {
    analyze.tz = faultline::TimeZone::Parse(options.tz);
    if (!analyze.tz) {
      return fail("--tz: '" + options.tz +
                  "' is not a time zone (UTC, +02:00, or a tz database name like Europe/Berlin)");
    }
  }
  analyze.clock_skew_seconds = options.clock_skew;
  return std::nullopt;
}

void print_warning(const std::string& warning) {
  std::cerr << "faultline: warning: " << one_line(warning) << "\n";
}

// Reads the inputs; returns an exit code when the run must stop here. The warnings are left to
// report_warnings, which diagnose calls after --redact has masked them.
std::optional<int> run_analysis(Options& options, Catalog* catalog, Analysis* analysis) {
  faultline::AnalyzeOptions analyze;
  if (auto exit_code = prepare_analysis(options, catalog, &analyze)) return *exit_code;
  ProgressLine progress;
  analyze.progress = progress.Callback(!options.redact);
  *analysis = options.events ? faultline::analyze_records(options.paths, *catalog, analyze)
                             : faultline::analyze(options.paths, *catalog, analyze);
  progress.Clear();
  return std::nullopt;
}

// Exit code 2 when the report or the records did not all reach standard output (a full disk,
// a quota): a cut `scan > node.jsonl` must not pass for a node's whole record.
std::optional<int> check_output_written() {
  std::cout.flush();
  if (std::cout) return std::nullopt;
  const int error = errno;
  return fail(std::string("cannot write to standard output: ") + std::strerror(error));
}

// Exit code 2 when a path the user named does not exist, unless --ignore-missing: a typo'd
// path must not pass for a healthy log. Called once the rest has been read and reported.
std::optional<int> check_named_paths(const Options& options) {
  if (options.ignore_missing) return std::nullopt;
  size_t missing = 0;
  std::string first;
  for (const std::string& path : options.paths) {
    struct stat info {};
    if (path == "-" || lstat(path.c_str(), &info) == 0 || errno != ENOENT) continue;
    if (missing++ == 0) first = path;
  }
  if (missing == 0) return std::nullopt;
  return fail(first + (missing > 1 ? " and " + std::to_string(missing - 1) + " more" : "") +
              ": named but not found; the rest was read and reported (--ignore-missing makes "
              "this a warning only)");
}

// Prints the run's warnings on stderr; an exit code when no input could be read.
std::optional<int> report_warnings(const Analysis& analysis) {
  for (const std::string& warning : analysis.warnings) print_warning(warning);
  if (analysis.readable_inputs == 0) return fail("no input could be read");
  return std::nullopt;
}

// The filter that --since, --until, --host, --gpu and --min-severity ask for; an exit code when
// one of them cannot be read.
std::optional<int> read_filter(const Options& options, faultline::Filter* filter) {
  for (const auto& [flag, text, bound] : {std::tuple{"--since", &options.since, &filter->since},
                                          std::tuple{"--until", &options.until, &filter->until}}) {
    if (text->empty()) continue;
    *bound = faultline::parse_time(*text);
    if (!*bound) {
      return fail(std::string(flag) + ": '" + *text +
                  "' is not a time (2024-03-05T10:12:33Z, 2024-03-05 10:12:33)");
    }
  }
  filter->hosts = options.hosts;
  for (const std::string& gpu : options.gpus) {
    filter->gpus.push_back(faultline::normalize_pci(gpu));
    if (filter->gpus.back().empty()) return fail("--gpu: '" + gpu + "' is not a PCI address");
  }
  if (!options.min_severity.empty()) {
    filter->min_severity = faultline::parse_severity(options.min_severity);
  }
  return std::nullopt;
}

// Where evidence paths point for --hyperlink: only on a terminal that shows OSC 8 links (a
// dumb terminal or the Linux console print them as text), never into a pipe or a file.
std::optional<faultline::FileLinks> file_links() {
  const char* term = getenv("TERM");
  const std::string_view name = term == nullptr ? "" : term;
  if (!isatty(STDOUT_FILENO) || name.empty() || name == "dumb" || name == "linux") {
    return std::nullopt;
  }
  std::array<char, 256> host{};
  std::array<char, 4096> folder{};
  if (gethostname(host.data(), host.size() - 1) != 0 ||
      getcwd(folder.data(), folder.size()) == nullptr) {
    return std::nullopt;
  }
  return faultline::FileLinks{host.data(), folder.data()};
}

void render(const Options& options, const Analysis& analysis) {
  if (options.quiet) {
    faultline::render_verdict_line(analysis, std::cout);
  } else if (options.format == "json") {
    faultline::render_json(analysis, std::cout);
  } else if (options.format == "jsonl") {
    faultline::render_jsonl(analysis, std::cout);
  } else if (options.format == "markdown") {
    faultline::render_markdown(analysis, std::cout);
  } else if (options.format == "github") {
    faultline::render_github(analysis, std::cout);
  } else if (options.format == "html") {
    faultline::render_html(analysis, std::cout);
  } else {
    // no-color.org: NO_COLOR set to anything but the empty string turns colour off.
    // A dumb terminal shows escape sequences as text.
    const char* no_color = getenv("NO_COLOR");
    const char* term = getenv("TERM");
    const bool color =
        options.color == "always" || (options.color == "auto" && isatty(STDOUT_FILENO) &&
                                      (no_color == nullptr || *no_color == '\0') &&
                                      (term == nullptr || std::string_view(term) != "dumb"));
    faultline::render_text(analysis,
                           {color, options.verbose, terminal_width(STDOUT_FILENO),
                            options.hyperlink && !options.redact ? file_links() : std::nullopt},
                           std::cout);
  }
}

int run_diagnose(Options& options) {
  Catalog catalog;
  Analysis analysis;
  faultline::Filter filter;
  if (auto exit_code = read_filter(options, &filter)) return *exit_code;
  if (auto exit_code = run_analysis(options, &catalog, &analysis)) return *exit_code;
  faultline::apply_filter(filter, &analysis);
  if (options.redact) faultline::redact(&analysis);
  if (auto exit_code = report_warnings(analysis)) return *exit_code;
  render(options, analysis);
  if (auto exit_code = check_output_written()) return *exit_code;
  if (auto exit_code = check_named_paths(options)) return *exit_code;
  if (options.fail_on == "never") return kExitClean;
  const auto threshold = faultline::parse_severity(options.fail_on);
  for (const faultline::Diagnosis& diagnosis : analysis.diagnoses) {
    if (diagnosis.severity >= *threshold) return kExitFound;
  }
  return kExitClean;
}

// Records are written as the inputs yield them: `journalctl -kf | faultline scan` prints each
// event as its line comes. A reader at the other end of a pipe (or a person) gets every record
// at once; a file, at least once a second.
int run_scan(Options& options) {
  Catalog catalog;
  faultline::AnalyzeOptions analyze;
  if (auto exit_code = prepare_analysis(options, &catalog, &analyze)) return *exit_code;
  struct stat out {};
  const bool to_file = fstat(STDOUT_FILENO, &out) == 0 && S_ISREG(out.st_mode);
  faultline::RecordWriter writer(std::cout, !to_file);
  faultline::RecordSink sink;
  sink.input = [&](const faultline::InputSummary& input) { writer.Write(input); };
  sink.unread = [&](const faultline::UnreadInput& input) { writer.Write(input); };
  sink.event = [&](const faultline::Event& event) { writer.Write(event); };
  sink.state = [&](const faultline::GpuState& state) { writer.Write(state); };
  sink.loss_logger = [&](const faultline::LossLogger& logger) { writer.Write(logger); };
  sink.warning = print_warning;
  sink.flush = [&] { writer.Flush(); };
  if (faultline::scan_records(options.paths, catalog, analyze, sink) == 0) {
    return fail("no input could be read");
  }
  writer.Flush();
  if (auto exit_code = check_output_written()) return *exit_code;
  return check_named_paths(options).value_or(kExitClean);
}

int run_signatures_list(const Options& options) {
  Catalog catalog;
  std::string error;
  if (!faultline::load_catalog(options.signature_dirs, &catalog, &error)) return fail(error);
  if (options.json) {
    faultline::render_catalog_json(catalog, std::cout);
    return kExitClean;
  }
  for (const auto& signature : catalog.signatures->signatures()) {
    if (options.patterns) {
      std::cout << signature->pattern << "\n";
    } else {
      std::cout << signature->id << "\t" << signature->description << "\n";
    }
  }
  return kExitClean;
}

// The built-in tables plus DIR, when given; `first` is where DIR's tables start.
bool load_with_dir(const Options& options, Catalog* catalog, size_t* first, std::string* error) {
  std::vector<std::string> dirs = options.signature_dirs;
  if (!options.table_dir.empty()) dirs.push_back(options.table_dir);
  if (!faultline::load_catalog(dirs, catalog, error)) return false;
  *first = options.table_dir.empty() ? 0 : faultline::builtin_table_count();
  return true;
}

int report_problems(const std::vector<std::string>& problems, const std::string& success) {
  for (const std::string& problem : problems) std::cout << problem << "\n";
  if (!problems.empty()) return kExitFound;
  std::cout << success << "\n";
  return kExitClean;
}

int run_signatures_lint(const Options& options) {
  Catalog catalog;
  size_t first = 0;
  std::string error;
  if (!load_with_dir(options, &catalog, &first, &error)) return fail(error);
  std::vector<std::string> problems = faultline::lint_tables(catalog, first);
  if (options.lint_variants) {
    for (std::string& miss : faultline::check_variants(*catalog.signatures)) {
      problems.push_back(std::move(miss));
    }
  }
  return report_problems(
      problems, std::to_string(faultline::table_count(catalog) - first) + " tables: no problem");
}

int run_signatures_test(const Options& options) {
  Catalog catalog;
  size_t first = 0;
  std::string error;
  if (!load_with_dir(options, &catalog, &first, &error)) return fail(error);
  return report_problems(faultline::check_examples(*catalog.signatures),
                         std::to_string(catalog.signatures->signatures().size()) + " signatures, " +
                             std::to_string(catalog.knowledge.classes.size()) +
                             " failure classes: every example holds");
}

int run_signatures_calibrate(const Options& options) {
  Catalog catalog;
  std::string error;
  if (!faultline::load_catalog(options.signature_dirs, &catalog, &error)) return fail(error);
  faultline::render_calibration(faultline::calibrate_suggester(options.corpus, catalog), std::cout);
  return kExitClean;
}

int run_explain(const Options& options) {
  Catalog catalog;
  std::string error;
  if (!faultline::load_catalog(options.signature_dirs, &catalog, &error)) return fail(error);
  const std::vector<std::string>& words = options.explain;
  if (words.size() == 2 && (words[0] == "xid" || words[0] == "Xid")) {
    int xid = 0;
    auto [end, ec] = std::from_chars(words[1].data(), words[1].data() + words[1].size(), xid);
    if (ec != std::errc() || end != words[1].data() + words[1].size()) {
      return fail("explain xid: '" + words[1] + "' is not an Xid number");
    }
    faultline::render_xid_entry(xid, catalog, std::cout);
    return kExitClean;
  }
  if (words.size() != 1) return fail("explain takes a diagnosis id, or 'xid N'");
  const faultline::FailureClass* failure = catalog.knowledge.find_class(words[0]);
  if (!failure) {
    return fail("no diagnosis '" + words[0] + "': `faultline signatures list --json` lists them");
  }
  faultline::render_class_entry(*failure, std::cout);
  return kExitClean;
}

void add_signatures_option(CLI::App* command, Options* options) {
  // One folder per --signatures, so that the paths after it stay inputs.
  command
      ->add_option("--signatures", options->signature_dirs,
                   "A folder of extra signature tables (*.json); may be repeated")
      ->allow_extra_args(false);
}

void add_input_options(CLI::App* command, Options* options) {
  command->add_option("paths", options->paths, "Log files, folders, or - for standard input");
  command->add_option("--max-bytes", options->max_bytes,
                      "Stop reading an input after this much text (K, M, G suffixes; default 4G)");
  command
      ->add_option("--error-format", options->error_format,
                   "How an error that stops the run is written to stderr (json: one object)")
      ->check(CLI::IsMember({"text", "json"}));
  command->add_flag("--ignore-missing", options->ignore_missing,
                    "A named path that does not exist is a warning only, not exit code 2");
  command->add_flag("-L,--follow", options->follow,
                    "Follow symbolic links inside folders (loops and repeats are read once)");
  command->add_option("--hostname", options->hostname,
                      "The host of lines that name none (default: the input's own, else its "
                      "sub-folder of a folder argument)");
  command
      ->add_option("-j,--jobs", options->jobs,
                   "Inputs read at the same time (default: one per core); the result is the "
                   "same for any number")
      ->check(CLI::Range(0, 1024));
  command->add_option("--tz", options->tz,
                      "The time zone of times that name none (dmesg -T, syslog): UTC, +02:00, "
                      "Europe/Berlin");
  add_signatures_option(command, options);
}

}  // namespace

// `faultline serve`: its flags and exit codes; the server itself is lib/serve.
namespace {

struct ServeFlags {
  std::string listen = "127.0.0.1:8080";
  std::string token_file;
  std::string max_body = "256M";
  std::string max_bytes = "1G";
  faultline::ServeOptions limits;  // the numeric limits, set by their flags directly
};

CLI::App* add_serve_command(CLI::App& app, Options* options, ServeFlags* flags) {
  CLI::App* command = app.add_subcommand(
      "serve", "Serve a page and an HTTP API that diagnose pasted or uploaded logs");
  command->footer(
      "Examples:\n"
      "  faultline serve                                  http://127.0.0.1:8080/ on this machine\n"
      "  faultline serve --listen 0.0.0.0:8080 --token-file /etc/faultline/token\n"
      "  curl --data-binary @kern.log.gz http://127.0.0.1:8080/api/v1/diagnose\n\n"
      "Exit codes: 0 stopped (SIGINT, SIGTERM), 2 could not start (bad flag, address in use).");
  command->add_option("--listen", flags->listen,
                      "HOST:PORT to listen on; loopback unless told otherwise, port 0 for any");
  command->add_option("--token-file", flags->token_file,
                      "A file holding a token that /api/ and the page's form want as "
                      "Authorization: Bearer TOKEN");
  command->add_option("--max-body", flags->max_body, "The most bytes one request may send");
  command->add_option("--max-bytes", flags->max_bytes,
                      "Stop reading an input after this much decompressed text");
  command->add_option("--max-files", flags->limits.max_files, "Files in one request")
      ->check(CLI::Range(1, 10000));
  command
      ->add_option("--request-timeout", flags->limits.request_seconds,
                   "Seconds to receive and diagnose one request")
      ->check(CLI::Range(1.0, 3600.0));
  command
      ->add_option("--read-timeout", flags->limits.read_seconds,
                   "Seconds a client may send nothing before it is cut off")
      ->check(CLI::Range(0.1, 600.0));
  command
      ->add_option("--queue-timeout", flags->limits.queue_seconds,
                   "Seconds a request waits for a worker before 503")
      ->check(CLI::Range(0.0, 600.0));
  command->add_option("--workers", flags->limits.workers, "Requests diagnosed at the same time")
      ->check(CLI::Range(1, 256));
  command->add_option("--queue", flags->limits.queue, "Requests waiting for a worker before 429")
      ->check(CLI::Range(0, 4096));
  add_signatures_option(command, options);
  return command;
}

// The token of --token-file: its first line, which must not be empty.
std::optional<std::string> read_token(const std::string& path, std::string* error) {
  std::ifstream file(path);
  std::string token;
  if (!file || !std::getline(file, token)) {
    *error = path + ": cannot read the token";
    return std::nullopt;
  }
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.empty()) {
    *error = path + ": the token is empty";
    return std::nullopt;
  }
  return token;
}

int run_serve(const Options& options, ServeFlags& flags) {
  faultline::ServeOptions serve = flags.limits;
  const size_t colon = flags.listen.rfind(':');
  int port = -1;
  if (colon != std::string::npos) {
    const std::string digits = flags.listen.substr(colon + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc() || end != digits.data() + digits.size()) port = -1;
  }
  if (port < 0 || port > 65535 || colon == 0) {
    return fail("--listen: '" + flags.listen + "' is not HOST:PORT (127.0.0.1:8080)");
  }
  serve.host = flags.listen.substr(0, colon);
  if (serve.host.size() > 2 && serve.host.front() == '[' && serve.host.back() == ']') {
    serve.host = serve.host.substr(1, serve.host.size() - 2);
  }
  serve.port = port;
  for (const auto& [flag, text, size] :
       {std::tuple{"--max-body", &flags.max_body, &serve.max_body},
        std::tuple{"--max-bytes", &flags.max_bytes, &serve.max_bytes}}) {
    const std::optional<uint64_t> parsed = parse_size(*text);
    if (!parsed) return fail(std::string(flag) + ": '" + *text + "' is not a size (100M, 16G)");
    *size = *parsed;
  }
  std::string error;
  if (!flags.token_file.empty()) {
    const std::optional<std::string> token = read_token(flags.token_file, &error);
    if (!token) return fail(error);
    serve.token = *token;
  }
  Catalog catalog;
  if (!faultline::load_catalog(options.signature_dirs, &catalog, &error)) return fail(error);
  // SIGINT and SIGTERM stop the server through one thread that waits for them, so that the
  // requests in flight are answered and their uploads removed before the process ends.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  serve.listening = [&stop_signals](const std::string& url, const std::function<void()>& stop) {
    std::cout << "faultline: serving on " << url << " (Ctrl-C stops)" << std::endl;
    std::thread([stop_signals, stop] {
      int signal = 0;
      sigwait(&stop_signals, &signal);
      stop();
    }).detach();
  };
  if (!faultline::serve(catalog, serve, &error)) return fail(error);
  return kExitClean;
}

}  // namespace

namespace {

// Parses the command line and runs the command.
int run(int argc, char** argv) {
  CLI::App app{"faultline: diagnose failed GPU training jobs from their logs, offline"};
  app.name("faultline");
  app.set_version_flag("-V,--version", version_text());
  app.require_subcommand(1);
  app.option_defaults()->always_capture_default();  // --help shows each option's default
  app.footer(kExitCodes);
  Options options;

  CLI::App* diagnose = app.add_subcommand("diagnose", "Rank diagnoses for the given logs");
  diagnose->footer(
      "Examples:\n"
      "  faultline diagnose /var/log/kern.log train.log   the ranked report\n"
      "  journalctl -k -b -1 | faultline diagnose -        a pasted or piped log\n"
      "  faultline diagnose --format json logs/ | jq '.diagnoses[0]'\n\n" +
      std::string(kExitCodes));
  add_input_options(diagnose, &options);
  diagnose->add_option("--format", options.format, "Output format")
      ->check(CLI::IsMember({"text", "json", "jsonl", "markdown", "github", "html"}));
  diagnose->add_option("--fail-on", options.fail_on, "Exit 1 when a diagnosis is at least this")
      ->check(CLI::IsMember({"never", "info", "warning", "error", "critical"}));
  diagnose->add_option("--color", options.color, "Colour the text report")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  diagnose->add_flag("-v,--verbose", options.verbose, "Show every evidence line");
  diagnose->add_flag("--hyperlink", options.hyperlink,
                     "Evidence paths as links to their files, on a terminal that shows them");
  diagnose->add_flag("-q,--quiet", options.quiet,
                     "Print only the verdict: the top diagnosis at warning or above, or none");
  diagnose->add_option("--since", options.since,
                       "Only what happened at or after this time (2024-03-05T10:12:33Z)");
  diagnose->add_option("--until", options.until, "Only what happened at or before this time");
  // One value per flag, so that the paths after it stay inputs.
  diagnose->add_option("--host", options.hosts, "Only this host; may be repeated")
      ->allow_extra_args(false);
  diagnose->add_option("--gpu", options.gpus, "Only this GPU (a PCI address); may be repeated")
      ->allow_extra_args(false);
  diagnose->add_option("--min-severity", options.min_severity, "Only diagnoses at least this")
      ->check(CLI::IsMember({"info", "warning", "error", "critical"}));
  diagnose->add_flag("--redact", options.redact,
                     "Mask host names, IP addresses and user names (GPU addresses stay)");
  diagnose->add_flag("--events", options.events,
                     "The paths hold the records of `faultline scan` (one file per node)");
  diagnose
      ->add_option("--clock-skew", options.clock_skew,
                   "Seconds two hosts' clocks may disagree when ordering cause and symptom")
      ->check(CLI::Range(0.0, 86400.0));

  CLI::App* scan_command = app.add_subcommand(
      "scan", "Print the records of the inputs (events, GPU state) as JSON Lines");
  add_input_options(scan_command, &options);
  scan_command->add_option("--format", options.format, "Output format")
      ->check(CLI::IsMember({"jsonl"}));

  scan_command->footer(
      "Examples:\n"
      "  faultline scan --hostname \"$(hostname -s)\" /var/log/kern.log > node.jsonl\n"
      "  journalctl -kf | faultline scan                     a record as each line comes\n"
      "  faultline diagnose --events node*.jsonl             the fleet, correlated centrally\n\n"
      "Exit codes: 0 read, 2 could not run (no input readable, a named path missing).");
  CLI::App* signatures = app.add_subcommand("signatures", "Inspect the signature catalog");
  signatures->require_subcommand(1);
  CLI::App* list = signatures->add_subcommand("list", "List the signatures");
  list->add_flag("--patterns", options.patterns, "Print the regular expressions, one per line");
  list->add_flag("--json", options.json, "Print signatures and failure classes as JSON");
  add_signatures_option(list, &options);
  CLI::App* lint =
      signatures->add_subcommand("lint", "Check the tables' schema, ids and references");
  lint->add_option("dir", options.table_dir, "A folder of tables to lint (default: built-in)");
  lint->add_flag("--variants", options.lint_variants,
                 "Also match each example in the shapes other posts give it (other case, "
                 "prefix removed, prefix added) and list those its pattern misses");
  add_signatures_option(lint, &options);
  CLI::App* test = signatures->add_subcommand("test", "Run every signature's example lines");
  test->add_option("dir", options.table_dir, "A folder of tables to add to the built-in ones");
  add_signatures_option(test, &options);
  CLI::App* calibrate = signatures->add_subcommand(
      "calibrate",
      "Measure the nearest-known-failure suggester on a corpus laid out as tests/realworld/");
  calibrate->add_option("corpus", options.corpus, "The corpus folder (one folder per case)")
      ->required()
      ->check(CLI::ExistingDirectory);
  add_signatures_option(calibrate, &options);

  CLI::App* explain = app.add_subcommand("explain", "Explain a diagnosis id, or an Xid");
  explain->footer(
      "Examples:\n"
      "  faultline explain row-remap-pending\n"
      "  faultline explain xid 79");
  explain->add_option("id", options.explain, "A diagnosis id (row-remap-pending) or xid N")
      ->required();
  add_signatures_option(explain, &options);

  std::vector<std::string> help_topic;
  CLI::App* help = app.add_subcommand("help", "Show the help of faultline or of a command");
  help->add_option("command", help_topic,
                   "A command (diagnose, scan, signatures, signatures lint, explain, serve)");
  CLI::App* version = app.add_subcommand("version", "Show the version, commit and catalog");
  ServeFlags serve_flags;
  CLI::App* serve = add_serve_command(app, &options, &serve_flags);
  std::string shell;
  CLI::App* completions = faultline::add_completions_command(&app, &shell);

  const std::vector<std::string> args(argv + 1, argv + argc);
  json_errors() = wants_json_errors(args);
  if (std::string error; find_command(app, command_words(app, args), &error) == nullptr) {
    return fail(error);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e) == 0 ? kExitClean : kExitUsage;
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e) == 0 ? kExitClean : kExitUsage;
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e) == 0 ? kExitClean : kExitUsage;
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e, args);
  }
  if (*version) {
    std::cout << version_text() << "\n";
    return kExitClean;
  }
  if (*help) {
    if (help_topic.empty()) {
      // App::help() would show the help of the command given, here `help` itself.
      std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
      return kExitClean;
    }
    std::string error;
    const CLI::App* command = find_command(app, help_topic, &error);
    if (command == nullptr) return fail(error);
    std::cout << command->help(command_path(command->get_parent()).empty()
                                   ? app.get_name()
                                   : app.get_name() + " " + command_path(command->get_parent()));
    return kExitClean;
  }
  if (*completions) {
    faultline::write_completions(app, shell, std::cout);
    return kExitClean;
  }
  if (*diagnose) return run_diagnose(options);
  if (*scan_command) return run_scan(options);
  if (*list) return run_signatures_list(options);
  if (*lint) return run_signatures_lint(options);
  if (*test) return run_signatures_test(options);
  if (*calibrate) return run_signatures_calibrate(options);
  if (*serve) return run_serve(options, serve_flags);
  return run_explain(options);
}

// glibc backs its heap with transparent huge pages only when asked at start-up, by a tunable in
// the environment. Where the kernel gives them only on request (THP "madvise"), a fleet's
// diagnosis spends a fifth of its time on page faults and TLB misses of 4 KiB pages (a million
// events: 26.5 s, 21.9 s with huge pages). So the first start asks and runs itself again. A
// GLIBC_TUNABLES of the user's own, even an empty one, is left as it is.
bool huge_pages_on_request() {
  // Closed before the exec: with standard input closed, this file would be the next one's.
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  return std::getline(mode, modes) && modes.find("[madvise]") != std::string::npos;
}

void ask_for_huge_pages(char** argv) {
  if (getenv("GLIBC_TUNABLES") != nullptr || !huge_pages_on_request()) return;
  if (setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 0) != 0) return;
  execv("/proc/self/exe", argv);
  unsetenv("GLIBC_TUNABLES");  // it could not run itself again: go on as started
}

}  // namespace

int main(int argc, char** argv) {
  ask_for_huge_pages(argv);
  // Buffers of 256 KiB and more (read-ahead chunks, decoder windows, metric series) are mapped
  // and unmapped rather than kept in glibc's per-thread arenas. Left to itself glibc raises this
  // threshold after the first such free, and each thread that decoded a file then keeps its
  // megabytes: peak RSS over a folder of .zst files fell from 76 to 56 MB (README, "Limits").
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
  // What escapes a command (out of memory) is one line and exit code 2, never a core dump.
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "faultline: internal error: " << one_line(e.what()) << "\n";
  } catch (...) {
    std::cerr << "faultline: internal error\n";
  }
  return kExitUsage;
}
