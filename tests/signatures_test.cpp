#include "catalog/signatures.h"

#include <doctest/doctest.h>

#include <set>

#include "catalog/tables.h"
#include "pipeline/pipeline.h"

using namespace faultline;

namespace {

std::unique_ptr<SignatureSet> build(const std::string& text, std::string* error) {
  Table table;
  if (!parse_table("user/table.json", text, &table, error)) return nullptr;
  return SignatureSet::Build({table}, error);
}

std::vector<std::string> matched_ids(const SignatureSet& set, std::string_view line) {
  std::vector<SignatureMatch> matches;
  set.Match(line, &matches);
  std::vector<std::string> ids;
  for (const auto& match : matches) ids.push_back(match.signature->id);
  return ids;
}

}  // namespace

TEST_CASE("built-in catalog: every signature's example lines hold") {
  Catalog catalog;
  std::string error;
  REQUIRE_MESSAGE(load_catalog({}, &catalog, &error), error);
  const auto failures = check_examples(*catalog.signatures);
  for (const auto& failure : failures) MESSAGE(failure);
  CHECK(failures.empty());
  CHECK(catalog.signatures->signatures().size() >= 15);
}

TEST_CASE("built-in catalog: every class names signatures that exist and has a fix and a verify") {
  Catalog catalog;
  std::string error;
  REQUIRE(load_catalog({}, &catalog, &error));
  std::set<std::string> ids;
  for (const auto& signature : catalog.signatures->signatures()) ids.insert(signature->id);
  // Events made by code (the training-metric anomalies) are declared with their lane.
  for (const Table& table : catalog.tables) {
    for (const auto& event : table.doc.value("events", nlohmann::json::array())) {
      ids.insert(event.at("id").get<std::string>());
    }
  }
  for (const FailureClass& failure : catalog.knowledge.classes) {
    CAPTURE(failure.id);
    CHECK_FALSE(failure.fix.empty());
    CHECK_FALSE(failure.verify.empty());
    CHECK_FALSE(failure.source.empty());
    for (const Condition& condition : failure.supported_by) {
      if (!condition.signature.empty()) CHECK(ids.count(condition.signature) == 1);
    }
  }
  for (const char* id : {"row-remap-pending", "row-remap-failure", "row-remap-event",
                         "ecc-contained", "ecc-uncontained", "ecc-dbe", "ecc-sbe-rate",
                         "page-retirement-pending", "page-retirement-failure", "gpu-off-bus"}) {
    CAPTURE(id);
    CHECK(std::any_of(catalog.knowledge.classes.begin(), catalog.knowledge.classes.end(),
                      [&](const FailureClass& c) { return c.id == id; }));
  }
}

TEST_CASE("matching: a specific signature hides the generic Xid fallback") {
  Catalog catalog;
  std::string error;
  REQUIRE(load_catalog({}, &catalog, &error));
  const SignatureSet& set = *catalog.signatures;
  CHECK(matched_ids(set,
                    "[ 12.5] NVRM: Xid (PCI:0000:3b:00): 63, pid=1, name=python, Row Remapper: "
                    "New row marked for remapping, reset gpu to activate.") ==
        std::vector<std::string>{"xid-63-row-remap"});
  CHECK(matched_ids(set,
                    "NVRM: Xid (PCI:0000:3b:00): 63, ECC page retirement or row remapping "
                    "recording event") == std::vector<std::string>{"nvrm-xid"});
  CHECK(matched_ids(set, "Mar  5 10:12:33 host sshd[1]: Accepted publickey for root").empty());
}

TEST_CASE("matching: the signature is found anywhere in a pasted line") {
  Catalog catalog;
  std::string error;
  REQUIRE(load_catalog({}, &catalog, &error));
  std::vector<SignatureMatch> matches;
  const std::string line =
      "> 10.0.0.5: kern: warning: [2026-04-22T21:26:20.599Z]: NVRM: Xid (PCI:0000:87:00): 95, "
      "pid=4411, name=python3, Uncontained: FBHUB. RST: Yes, D-RST: No";
  catalog.signatures->Match(line, &matches);
  REQUIRE(matches.size() == 1);
  CHECK(matches[0].signature->id == "xid-95-uncontained");
  CHECK(line.substr(matches[0].begin).starts_with("NVRM: Xid"));
}

TEST_CASE("malformed tables are reported with their file and signature") {
  std::string error;
  CHECK_FALSE(build("{\n  \"signatures\": [\n    {\"id\": \"x\",,}\n  ]\n}", &error));
  CHECK(error == "user/table.json:3: not valid JSON");

  CHECK_FALSE(
      build(R"json({"signatures": [{"id": "broken", "pattern": "NVRM: (unclosed"}]})json", &error));
  CHECK(error.starts_with("user/table.json: signature broken: pattern does not compile"));

  CHECK_FALSE(build(R"({"signatures": [{"id": "m", "pattern": "%{nope} x"}]})", &error));
  CHECK(error == "user/table.json: signature m: unknown macro %{nope}");

  CHECK_FALSE(build(R"({"signatures": [{"pattern": "x"}]})", &error));
  CHECK(error.find("without an \"id\"") != std::string::npos);

  CHECK_FALSE(build(R"({"signatures": {"id": "x"}})", &error));
  CHECK(error == "user/table.json: \"signatures\" must be an array");

  CHECK_FALSE(build("[1, 2]", &error));
  CHECK(error == "user/table.json:1: a signature table must be a JSON object");
}

TEST_CASE("a pattern beyond RE2's memory budget is refused, not compiled") {
  std::string error;
  CHECK_FALSE(build(
      R"({"signatures": [{"id": "huge", "pattern": "\\pL{1000}\\pL{1000}\\pL{1000}"}]})", &error));
  CHECK(error.starts_with("user/table.json: signature huge: pattern does not compile"));
}

TEST_CASE("a user's table replaces a built-in signature of the same id") {
  std::vector<Table> tables = builtin_tables();
  Table user;
  std::string error;
  REQUIRE(parse_table(
      "user.json",
      R"json({"signatures": [{"id": "xid-79-off-bus", "pattern": "GPU gone: (?P<pci>\\S+)",
                           "examples": {"match": [{"line": "GPU gone: 0000:01:00"}]}}]})json",
      &user, &error));
  tables.push_back(user);
  auto set = SignatureSet::Build(tables, &error);
  REQUIRE(set);
  CHECK(matched_ids(*set, "GPU gone: 0000:01:00") == std::vector<std::string>{"xid-79-off-bus"});
  CHECK(check_examples(*set).empty());
}

TEST_CASE("check_examples reports an example that fails") {
  std::string error;
  auto set = build(R"json({"signatures": [{"id": "s", "pattern": "Xid (?P<xid>\\d+)",
      "examples": {"match": [{"line": "Xid 48", "fields": {"xid": "49"}}, {"line": "nothing"}],
                   "no_match": ["Xid 12"]}}]})json",
                   &error);
  REQUIRE(set);
  const auto failures = check_examples(*set);
  REQUIRE(failures.size() == 3);
  CHECK(failures[0].find("field xid captured 48, expected 49") != std::string::npos);
  CHECK(failures[1].find("example did not match: nothing") != std::string::npos);
  CHECK(failures[2].find("matched a line it must not: Xid 12") != std::string::npos);
}
