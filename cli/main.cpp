// faultline's command line: argument handling and exit codes, nothing else.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <iostream>

#include "diagnose/lint.h"
#include "report/report.h"

namespace {

using faultline::Analysis;
using faultline::Catalog;

// Exit codes (DESIGN.md): nothing at or above --fail-on, something found, could not run.
constexpr int kExitClean = 0;
constexpr int kExitFound = 1;
constexpr int kExitUsage = 2;

struct Options {
  std::vector<std::string> paths;
  std::vector<std::string> signature_dirs;
  std::string format = "text";
  std::string fail_on = "error";
  std::string color = "auto";
  bool verbose = false;
  bool patterns = false;
  bool json = false;
  std::string table_dir;             // signatures lint|test DIR
  std::vector<std::string> explain;  // explain ID | explain xid N
};

int fail(const std::string& message) {
  std::cerr << "faultline: " << message << "\n";
  return kExitUsage;
}

// No path means standard input, unless that is a terminal (then the user forgot the path).
bool resolve_paths(Options* options) {
  if (!options->paths.empty()) return true;
  if (isatty(STDIN_FILENO)) return false;
  options->paths.push_back("-");
  return true;
}

// Reads the inputs; returns an exit code when the run must stop here.
std::optional<int> run_analysis(Options& options, Catalog* catalog, Analysis* analysis) {
  std::string error;
  if (!faultline::load_catalog(options.signature_dirs, catalog, &error)) return fail(error);
  if (!resolve_paths(&options)) return fail("no input: give a path, a folder or '-' for stdin");
  *analysis = faultline::analyze(options.paths, *catalog);
  for (const std::string& warning : analysis->warnings) {
    std::cerr << "faultline: warning: " << warning << "\n";
  }
  if (analysis->readable_inputs == 0) return fail("no input could be read");
  return std::nullopt;
}

int run_diagnose(Options& options) {
  Catalog catalog;
  Analysis analysis;
  if (auto exit_code = run_analysis(options, &catalog, &analysis)) return *exit_code;
  if (options.format == "json") {
    std::cout << faultline::dump_json(faultline::diagnosis_json(analysis), 2) << "\n";
  } else {
    const bool color = options.color == "always" ||
                       (options.color == "auto" && isatty(STDOUT_FILENO) && !getenv("NO_COLOR"));
    faultline::render_text(analysis, {color, options.verbose}, std::cout);
  }
  std::cout.flush();
  if (options.fail_on == "never") return kExitClean;
  const auto threshold = faultline::parse_severity(options.fail_on);
  for (const faultline::Diagnosis& diagnosis : analysis.diagnoses) {
    if (diagnosis.failure->severity >= *threshold) return kExitFound;
  }
  return kExitClean;
}

int run_scan(Options& options) {
  Catalog catalog;
  Analysis analysis;
  if (auto exit_code = run_analysis(options, &catalog, &analysis)) return *exit_code;
  for (const faultline::Event& event : analysis.events) {
    std::cout << faultline::dump_json(faultline::event_json(event), -1) << "\n";
  }
  return kExitClean;
}

int run_signatures_list(const Options& options) {
  Catalog catalog;
  std::string error;
  if (!faultline::load_catalog(options.signature_dirs, &catalog, &error)) return fail(error);
  if (options.json) {
    std::cout << faultline::dump_json(faultline::catalog_json(catalog), 2) << "\n";
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
  *first = options.table_dir.empty() ? 0 : faultline::builtin_tables().size();
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
  return report_problems(faultline::lint_tables(catalog, first),
                         std::to_string(catalog.tables.size() - first) + " tables: no problem");
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
  add_signatures_option(command, options);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"faultline: diagnose failed GPU training jobs from their logs, offline"};
  app.set_version_flag("--version", FAULTLINE_VERSION);
  app.require_subcommand(1);
  Options options;

  CLI::App* diagnose = app.add_subcommand("diagnose", "Rank diagnoses for the given logs");
  add_input_options(diagnose, &options);
  diagnose->add_option("--format", options.format, "Output format")
      ->check(CLI::IsMember({"text", "json"}));
  diagnose->add_option("--fail-on", options.fail_on, "Exit 1 when a diagnosis is at least this")
      ->check(CLI::IsMember({"never", "info", "warning", "error", "critical"}));
  diagnose->add_option("--color", options.color, "Colour the text report")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  diagnose->add_flag("-v,--verbose", options.verbose, "Show every evidence line");

  CLI::App* scan = app.add_subcommand("scan", "Print every matched event as JSON Lines");
  add_input_options(scan, &options);

  CLI::App* signatures = app.add_subcommand("signatures", "Inspect the signature catalog");
  signatures->require_subcommand(1);
  CLI::App* list = signatures->add_subcommand("list", "List the signatures");
  list->add_flag("--patterns", options.patterns, "Print the regular expressions, one per line");
  list->add_flag("--json", options.json, "Print signatures and failure classes as JSON");
  add_signatures_option(list, &options);
  CLI::App* lint =
      signatures->add_subcommand("lint", "Check the tables' schema, ids and references");
  lint->add_option("dir", options.table_dir, "A folder of tables to lint (default: built-in)");
  add_signatures_option(lint, &options);
  CLI::App* test = signatures->add_subcommand("test", "Run every signature's example lines");
  test->add_option("dir", options.table_dir, "A folder of tables to add to the built-in ones");
  add_signatures_option(test, &options);

  CLI::App* explain = app.add_subcommand("explain", "Explain a diagnosis id, or an Xid");
  explain->add_option("what", options.explain, "A diagnosis id (row-remap-pending) or xid N")
      ->required();
  add_signatures_option(explain, &options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitClean : kExitUsage;
  }
  if (*diagnose) return run_diagnose(options);
  if (*scan) return run_scan(options);
  if (*list) return run_signatures_list(options);
  if (*lint) return run_signatures_lint(options);
  if (*test) return run_signatures_test(options);
  return run_explain(options);
}
