#include "catalog/signatures.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "catalog/tables.h"
#include "extract/extract.h"
#include "log_folder.h"
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

// Issue 38, item 5: the tolerance policy. A line is read as it stands first; only where no
// pattern matched is it read in any case, without the driver's prefix, and behind a launcher's tag.
TEST_CASE("issue 38: a line in another case, without NVRM:, or behind a launcher tag is read") {
  std::string error;
  auto set = build(R"json({"signatures": [
    {"id": "off-bus", "pattern": "NVRM: GPU (?P<pci>[0-9a-f:.]+): GPU has fallen off the bus",
     "examples": {"match": [{"line": "NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus."}]}},
    {"id": "xid", "pattern": "NVRM: Xid \\(PCI:(?P<pci>[0-9a-f:.]+)\\): (?P<xid>\\d+)",
     "examples": {"match": [{"line": "NVRM: Xid (PCI:0000:3b:00): 79"}]}},
    {"id": "boot", "pattern": "^-- Reboot --$",
     "examples": {"match": [{"line": "-- Reboot --"}]}}
  ]})json",
                   &error);
  REQUIRE(set);
  const std::vector<std::string> off_bus = {"off-bus"};
  CHECK(matched_ids(*set, "nvrm: gpu 0000:3b:00.0: gpu has fallen off the bus.") == off_bus);
  CHECK(matched_ids(*set, "[ 5.1] GPU 0000:3b:00.0: GPU has fallen off the bus.") == off_bus);
  CHECK(matched_ids(*set, "(RayTrainWorker pid=77) -- Reboot --") ==
        std::vector<std::string>{"boot"});
  CHECK(matched_ids(*set, "node17 | [gpu-3] -- Reboot --") == std::vector<std::string>{"boot"});
  // A word still starts where the prefix was: an NVSwitch's SXid is no GPU Xid.
  CHECK(matched_ids(*set, "SXid (PCI:0000:05:00.0): 12028, Non-fatal").empty());
  CHECK(matched_ids(*set, "the host said: -- Reboot --").empty());

  // The match still places the message in the whole line, after the tag.
  std::vector<SignatureMatch> matches;
  const std::string line = "[worker-3] xid (pci:0000:3b:00): 79";
  set->Match(line, &matches);
  REQUIRE(matches.size() == 1);
  CHECK(line.substr(matches[0].begin) == "xid (pci:0000:3b:00): 79");
  CHECK(matches[0].fields ==
        std::vector<std::pair<std::string, std::string>>{{"pci", "0000:3b:00"}, {"xid", "79"}});
}

// A JSON string that carries a message of several lines, its newlines escaped (a job master's
// failure report, intelligent-machine-learning/dlrover's blog): each line is read alone.
TEST_CASE("issue 38: the lines of a message inside one JSON string are read one by one") {
  Catalog catalog;
  std::string error;
  REQUIRE(load_catalog({}, &catalog, &error));
  const std::string line =
      R"(      "message": "RuntimeError: CUDA error: uncorrectable NVLink error detected during )"
      R"(the execution\nCUDA kernel errors might be asynchronously reported at some other API )"
      R"(call, so the stacktrace below might be incorrect.\n",)";
  std::vector<SignatureMatch> matches;
  catalog.signatures->Match(line, &matches);
  std::vector<std::string> ids;
  for (const SignatureMatch& match : matches) ids.push_back(match.signature->id);
  CHECK(ids == std::vector<std::string>{"cuda-error-message", "pytorch-cuda-error-note"});
  REQUIRE(!matches.empty());
  CHECK(line.substr(matches[0].begin).starts_with("RuntimeError: CUDA error: uncorrectable"));
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

TEST_CASE("continues: a message wrapped inside a word or at a space is joined and matched") {
  Catalog catalog;
  std::string error;
  REQUIRE(load_catalog({}, &catalog, &error));
  const auto signature = [&](std::string_view id) -> const Signature& {
    for (const auto& s : catalog.signatures->signatures()) {
      if (s->id == id) return *s;
    }
    FAIL("no signature " << id);
    throw std::logic_error("unreachable");
  };
  std::string joined;
  SignatureMatch match;
  // huggingface/open-r1#620: the terminal cut the watchdog's line twice inside words.
  const std::vector<std::string_view> watchdog = {
      "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated "
      "with exception: [Rank 3] Watchdog caught colle",
      "ctive operation timeout: WorkNCCL(SeqNum=4, OpType=BROADCAST, NumelIn=112, NumelOut=112, "
      "Timeout(ms)=1800000) ran for 1800011 millisecond",
      "s before timing out."};
  REQUIRE(match_wrapped(signature("nccl-timeout"), watchdog, &joined, &match));
  CHECK(joined.find("collective operation timeout") != std::string::npos);
  CHECK(joined.ends_with("1800011 milliseconds before timing out."));
  // One line short, the message is not complete.
  CHECK_FALSE(
      match_wrapped(signature("nccl-timeout"), {watchdog[0], watchdog[1]}, &joined, &match));
  // MFlowCode/MFC#1748: NVHPC's message broken where a space was, the rest indented.
  CHECK(match_wrapped(signature("cuda-ecc-error"),
                      {"Accelerator Fatal Error: call to cuCtxCreate returned error 214",
                       "  (CUDA_ERROR_ECC_UNCORRECTABLE): uncorrectable ECC error encountered"},
                      &joined, &match));
  CHECK(joined ==
        "Accelerator Fatal Error: call to cuCtxCreate returned error 214 "
        "(CUDA_ERROR_ECC_UNCORRECTABLE): uncorrectable ECC error encountered");
}

TEST_CASE("continues: heads are reported only where the pattern itself does not match") {
  Catalog catalog;
  std::string error;
  REQUIRE(load_catalog({}, &catalog, &error));
  std::vector<SignatureMatch> matches;
  std::vector<const Signature*> heads;
  catalog.signatures->Match("Fatal CUDA Error at cuda-hybrid-api.cu:450.", &matches, &heads);
  REQUIRE(heads.size() == 1);
  CHECK(heads[0]->id == "cuda-device-unavailable");
  matches.clear();
  heads.clear();
  catalog.signatures->Match(
      "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
      "collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, "
      "NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.",
      &matches, &heads);
  CHECK(heads.empty());
  REQUIRE(matches.size() == 1);
  CHECK(matches[0].signature->id == "nccl-timeout");
}

TEST_CASE("continues: the key is checked, and so are wrapped examples") {
  std::string error;
  CHECK_FALSE(build(R"({"signatures": [{"id": "w", "pattern": "a b", "continues": {"lines": 1}}]})",
                    &error));
  CHECK(error.find(R"("continues" must be)") != std::string::npos);
  CHECK_FALSE(build(
      R"({"signatures": [{"id": "w", "pattern": "a b", "continues": {"head": "a", "lines": 9}}]})",
      &error));
  CHECK(error.find("lines\": 1 to 3") != std::string::npos);
  auto set = build(R"json({"signatures": [{"id": "w", "pattern": "alpha beta",
      "continues": {"head": "alpha$", "lines": 1},
      "examples": {"match": [{"line": "alpha\nbeta"}, {"line": "alpha\ngamma"},
                             {"line": "alpha beta\nbeta"}, {"line": "alpha\nal\npha beta"}]}}]})json",
                   &error);
  REQUIRE_MESSAGE(set, error);
  const auto failures = check_examples(*set);
  REQUIRE(failures.size() == 3);
  CHECK(failures[0].find("wrapped example did not match") != std::string::npos);
  CHECK(failures[1].find("first line is no \"continues\" head") != std::string::npos);
  CHECK(failures[2].find("more lines than \"continues\" allows") != std::string::npos);
}

TEST_CASE("scan: a wrapped message is one event on its first line, its evidence both lines") {
  LogFolder folder;
  const std::string path =
      folder.Write("ci-job.log",
                   "Accelerator Fatal Error: call to cuCtxCreate returned error 214\n"
                   "  (CUDA_ERROR_ECC_UNCORRECTABLE): uncorrectable ECC error encountered\n"
                   "mfc: ERROR > syscheck failed with exit code 1.\n"
                   "Fatal CUDA Error at cuda-hybrid-api.cu:450.\n"
                   "Return value 700 from 'cudaStreamSynchronize(kernel_stream)'.  Exiting.\n");
  Catalog catalog;
  std::string error;
  REQUIRE(load_catalog({}, &catalog, &error));
  std::unique_ptr<LineReader> reader = LineReader::Open(path, &error);
  REQUIRE_MESSAGE(reader, error);
  const ScanResult result = scan_input(*reader, *catalog.signatures, ScanOptions{});
  REQUIRE(!result.events.empty());
  CHECK(result.events[0].signature == "cuda-ecc-error");
  CHECK(result.events[0].evidence.line == 1);
  CHECK(result.events[0].evidence.text ==
        "Accelerator Fatal Error: call to cuCtxCreate returned error 214\n"
        "  (CUDA_ERROR_ECC_UNCORRECTABLE): uncorrectable ECC error encountered");
  // Line 2 was part of the message; a head no line completed (line 4) is read as itself.
  for (const Event& event : result.events) CHECK(event.evidence.line != 2);
  CHECK(std::any_of(result.events.begin(), result.events.end(), [](const Event& event) {
    return event.evidence.line == 3 && event.evidence.text.starts_with("mfc: ERROR");
  }));
  CHECK(std::none_of(result.events.begin(), result.events.end(), [](const Event& event) {
    return event.signature == "cuda-device-unavailable";
  }));
}
