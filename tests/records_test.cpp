// The records of `faultline scan`, written and read back.
#include <doctest/doctest.h>

#include "extract/extract.h"
#include "report/json.h"

using namespace faultline;

namespace {

Records round_trip(const nlohmann::json& record) {
  Records records;
  std::string error;
  REQUIRE_MESSAGE(read_record(record.dump(), &records, &error), error);
  return records;
}

}  // namespace

TEST_CASE("an event survives its record: identity, rank, time, fields, count") {
  Event event;
  event.signature = "xid-95-uncontained";
  event.host = "gpu-node-104";
  event.rank = 29;
  event.gpu = {"0000:ab:00.0", 5, "GPU-e6322471-979e-25b7-0e6f-2155a82dcad9", "1652960339942",
               "NVIDIA H100 80GB HBM3"};
  event.xid = 95;
  event.fields = {{"pci", "PCI:0000:ab:00"}, {"boot_seconds", "1234.5"}};
  event.evidence = {"node104/kern.log", 77, Timestamp::Absolute(1764684451.611874, std::nullopt),
                    "Dec  2 14:07:31 gpu-node-104 kernel: NVRM: Xid ...", event.signature};
  event.evidence.time.year_assumed = true;
  event.count = 1001;
  const Records records = round_trip(event_record(event));
  REQUIRE(records.events.size() == 1);
  const Event& back = records.events[0];
  CHECK(back.signature == event.signature);
  CHECK(back.host == event.host);
  CHECK(back.rank == 29);
  CHECK(back.gpu.pci == event.gpu.pci);
  CHECK(back.gpu.index == 5);
  CHECK(back.gpu.uuid == event.gpu.uuid);
  CHECK(back.gpu.serial == event.gpu.serial);
  CHECK(back.gpu.product == event.gpu.product);
  CHECK(back.xid == 95);
  CHECK(back.fields == event.fields);
  CHECK(back.evidence.path == event.evidence.path);
  CHECK(back.evidence.line == 77);
  CHECK(back.evidence.text == event.evidence.text);
  CHECK(back.evidence.time.iso() == event.evidence.time.iso());
  CHECK(back.evidence.time.year_assumed);
  CHECK(back.count == 1001);
  // Written again, the record is the same text.
  CHECK(event_record(back).dump() == event_record(event).dump());
}

TEST_CASE("times of every kind survive: zoned, wall-clock, boot-relative, unknown") {
  for (const Timestamp& time :
       {Timestamp::Absolute(1700000000.25, 120), Timestamp::Absolute(1700000000, std::nullopt),
        Timestamp::BootRelative(2437042.862382), Timestamp{}}) {
    Event event;
    event.signature = "s";
    event.evidence.time = time;
    const Records records = round_trip(event_record(event));
    REQUIRE(records.events.size() == 1);
    CHECK(records.events[0].evidence.time.kind == time.kind);
    CHECK(records.events[0].evidence.time.iso() == time.iso());
    CHECK(records.events[0].evidence.time.utc_offset_minutes == time.utc_offset_minutes);
  }
}

TEST_CASE("a GPU's state and an input survive their records") {
  GpuState state;
  state.gpu.pci = "0000:3b:00.0";
  state.host = "node-1";
  state.time = Timestamp::Absolute(1709542800, std::nullopt);
  state.source = {"nvidia-smi-q.txt", 9, state.time, "GPU 00000000:3B:00.0", ""};
  state.fields = {{"remapped_rows.pending", "yes"}};
  state.field_lines = {{"remapped_rows.pending", {40, "        Pending                   : Yes"}}};
  Records records = round_trip(state_record(state));
  REQUIRE(records.states.size() == 1);
  CHECK(records.states[0].fields == state.fields);
  CHECK(records.states[0].field_lines == state.field_lines);
  CHECK(records.states[0].time.iso() == state.time.iso());
  CHECK(records.states[0].source.line == 9);

  const InputSummary input{"kern.log.gz", "node-1", InputKind::kKernelLog, "gzip", 300, 40000, 2,
                           "cut"};
  records = round_trip(input_record(input));
  REQUIRE(records.inputs.size() == 1);
  CHECK(input_record(records.inputs[0]) == input_record(input));
}

TEST_CASE("a line that is not a record is an error; a record of a later kind is skipped") {
  Records records;
  std::string error;
  for (const char* bad : {"not json", "[1, 2]", R"({"record": 7})", R"({"line": -3})",
                          R"({"signature": "s", "rank": "three"})", R"({"fields": {"a": 1}})",
                          R"({"signature": "s", "time": "yesterday"})", R"({"record": "event"})",
                          R"({"record": "state", "gpu": "not a bus"})",
                          R"({"signature": "s", "rank": 99999999999})"}) {
    CHECK_MESSAGE(!read_record(bad, &records, &error), bad);
    CHECK_MESSAGE(!error.empty(), bad);
  }
  CHECK(read_record(R"({"record": "sample", "anything": 1})", &records, &error));
  CHECK(records.events.empty());
  CHECK(records.states.empty());
}

TEST_CASE("a count over 2^48 is refused; 2^48 is taken; totals saturate") {
  Records records;
  std::string error;
  CHECK_FALSE(
      read_record(R"({"signature": "s", "count": 18446744073709551615})", &records, &error));
  CHECK(error == R"("count" is not a count up to 2^48)");
  CHECK_FALSE(read_record(R"({"record": "input", "bytes": 281474976710657})", &records, &error));
  CHECK(error == R"("bytes" is not a count up to 2^48)");
  REQUIRE(read_record(R"({"signature": "s", "count": 281474976710656})", &records, &error));
  CHECK(records.events.at(0).count == kMaxRecordedCount);
  CHECK(saturating_add(UINT64_MAX - 1, 1) == UINT64_MAX);
  CHECK(saturating_add(UINT64_MAX - 1, kMaxRecordedCount) == UINT64_MAX);
  CHECK(saturating_add(2, 3) == 5);
}
