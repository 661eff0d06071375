#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "builtin_catalog.h"
#include "catalog/catalog.h"
#include "catalog/signatures.h"
#include "catalog/tables.h"

using namespace faultline;
namespace fs = std::filesystem;

namespace {

// Loads the built-in tables plus one user table with `text`; returns the lint problems of the
// user table only.
std::vector<std::string> lint_user_table(const std::string& text) {
  const fs::path dir =
      fs::temp_directory_path() / ("faultline-lint-test-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "mine.json") << text;
  Catalog catalog;
  std::string error;
  REQUIRE_MESSAGE(load_catalog({dir.string()}, &catalog, &error), error);
  fs::remove_all(dir);
  return lint_tables(catalog, builtin_tables().size());
}

bool mentions(const std::vector<std::string>& problems, std::string_view text) {
  return std::any_of(problems.begin(), problems.end(),
                     [&](const std::string& p) { return p.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("lint: the built-in catalog is clean") {
  Catalog catalog;
  std::string error;
  REQUIRE(load_catalog({}, &catalog, &error));
  const auto problems = lint_tables(catalog, 0);
  for (const auto& problem : problems) MESSAGE(problem);
  CHECK(problems.empty());
}

TEST_CASE("lint: a user's table with problems") {
  const auto problems = lint_user_table(R"json({
    "signatures": [
      {"id": "my-sig", "description": "d", "pattern": "foo (?P<x>\\d+)", "source": "s",
       "examples": {"match": [{"line": "foo 1"}]}, "colour": "red"},
      {"id": "my-sig", "description": "d", "pattern": "bar", "source": "s",
       "examples": {"match": [{"line": "bar"}], "no_match": ["baz"]}}
    ],
    "classes": [
      {"id": "my-class", "title": "t", "class": "software", "severity": "warning",
       "supported_by": [{"signature": "no-such-signature", "weight": 0.5},
                        {"state": "remapped_rows.pendingg", "equals": "yes", "weight": 0.5}],
       "related": ["no-such-class"]}
    ]})json");
  for (const auto& problem : problems) MESSAGE(problem);
  CHECK(mentions(problems, "mine.json: signature my-sig: unknown key \"colour\""));
  CHECK(mentions(problems, "signature my-sig: no example line that must not match"));
  CHECK(mentions(problems, "signature my-sig: id defined twice"));
  CHECK(mentions(problems, "class my-class: names an unknown signature \"no-such-signature\""));
  CHECK(mentions(problems,
                 "class my-class: names an unknown state field \"remapped_rows.pendingg\""));
  CHECK(mentions(problems, "class my-class: no supporting condition can ever hold"));
  CHECK(mentions(problems, "class my-class: related names an unknown class \"no-such-class\""));
  CHECK(mentions(problems, "class my-class: no \"mechanism\""));
}

TEST_CASE("lint: reserved capture names keep the shape code reads") {
  const auto problems = lint_user_table(R"json({
    "signatures": [
      {"id": "my-xid", "description": "d", "lane": "hardware", "source": "s",
       "pattern": "Xid \\(PCI:(?P<pci>[^)]*)\\): (?P<xid>\\w+)",
       "examples": {"match": [{"line": "NVRM: Xid (PCI:0000:3b:00): 79, pid=1"},
                              {"line": "NVRM: Xid (PCI:...): seventy, pid=1"}],
                    "no_match": ["NVRM: loading"]}},
      {"id": "my-stamp", "description": "d", "lane": "job", "source": "s",
       "pattern": "\\[(?P<boot_seconds>[\\d.]+)\\] start",
       "examples": {"match": [{"line": "[12.5] start"}], "no_match": ["start"]}}
    ]})json");
  for (const auto& problem : problems) MESSAGE(problem);
  CHECK(
      mentions(problems, "signature my-xid: captures \"xid\" as \"seventy\", not a whole number"));
  CHECK(mentions(problems, "signature my-xid: captures \"pci\" as \"...\", not a PCI address"));
  CHECK_FALSE(mentions(problems, "as \"79\""));
  CHECK(mentions(problems, "signature my-stamp: captures \"boot_seconds\", which only code sets"));
  CHECK(problems.size() == 3);
}

TEST_CASE("lint: a wrapped example's captures are checked on its lines joined") {
  const auto problems = lint_user_table(R"json({
    "signatures": [
      {"id": "my-wrap", "description": "d", "lane": "job", "source": "s",
       "pattern": "Rank (?P<rank>\\w+) timed out", "continues": {"head": "Rank \\w+$", "lines": 1},
       "examples": {"match": [{"line": "Rank three\ntimed out"}], "no_match": ["Rank 3"]}}
    ]})json");
  for (const auto& problem : problems) MESSAGE(problem);
  CHECK(
      mentions(problems, "signature my-wrap: captures \"rank\" as \"three\", not a whole number"));
  CHECK(problems.size() == 1);
}

TEST_CASE("lint: every signature and derived event names its lane") {
  const auto problems = lint_user_table(R"json({
    "signatures": [
      {"id": "no-lane", "description": "d", "pattern": "x", "source": "s",
       "examples": {"match": [{"line": "x"}], "no_match": ["y"]}}
    ],
    "events": [{"id": "made-by-code"}]})json");
  for (const auto& problem : problems) MESSAGE(problem);
  CHECK(mentions(problems, "signature no-lane: no \"lane\""));
  CHECK(mentions(problems, "event made-by-code: no \"lane\""));
}

TEST_CASE("lint: a clean user table that overrides a built-in class") {
  const auto problems = lint_user_table(R"json({
    "classes": [
      {"id": "row-remap-pending", "title": "Row remap pending (our fleet drains at once)",
       "class": "hardware", "severity": "critical", "priority": 70,
       "supported_by": [{"signature": "xid-63-row-remap", "weight": 0.9}],
       "explanation": "e", "mechanism": "m", "symptoms": ["s"], "confirm": ["c"], "fix": ["f"],
       "verify": [{"command": "c", "expect": "e"}], "prevent": ["p"], "monitor": ["m"],
       "related": ["row-remap-failure"], "source": "our runbook"}
    ]})json");
  for (const auto& problem : problems) MESSAGE(problem);
  CHECK(problems.empty());
}

// Issue 38, item 5: the variant report measures the tolerance policy. The built-in catalog
// reads every variant of its examples; a pattern the screen could not guard in any case (no
// literal of three characters) has no tolerant reading, and the report lists what it misses.
TEST_CASE("issue 38: signatures lint --variants lists the shapes a pattern misses") {
  for (const std::string& miss : check_variants(*catalog().signatures)) FAIL(miss);

  Table table;
  std::string error;
  REQUIRE(parse_table("user/table.json", R"json({"signatures": [
    {"id": "short", "pattern": "^A \\d+$", "examples": {"match": [{"line": "A 12"}]}}
  ]})json",
                      &table, &error));
  const auto set = SignatureSet::Build({table}, &error);
  REQUIRE(set);
  const std::vector<std::string> misses = check_variants(*set);
  const auto listed = [&](std::string_view kind) {
    return std::any_of(misses.begin(), misses.end(), [&](const std::string& miss) {
      return miss.find("signature short: misses " + std::string(kind)) != std::string::npos;
    });
  };
  CHECK(listed("other case"));
  CHECK_FALSE(listed("prefix added"));  // a launcher's tag is peeled whatever the pattern
}
