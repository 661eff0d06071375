// The last resort for error-like lines no signature knows (signatures/unrecognised.json):
// templates, what is not an error, and where such lines stand next to a recognised fault.
#include "extract/unrecognised.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "builtin_catalog.h"
#include "catalog/tables.h"
#include "diagnose/diagnose.h"
#include "extract/extract.h"
#include "log_folder.h"
#include "pipeline/pipeline.h"

using namespace faultline;
using faultline::line_template;

namespace {

const Diagnosis* find(const Analysis& analysis, const std::string& id) {
  for (const Diagnosis& diagnosis : analysis.diagnoses) {
    if (diagnosis.failure->id == id) return &diagnosis;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("a template masks what varies and drops the envelope") {
  // Two GPUs' lines of one syslog (a Titan V that keeps failing to initialise).
  const std::string a = line_template(
      "Mar  5 10:12:33 gpu-node-9 kernel: [   84.811879] NVRM: GPU 0000:01:00.0: RmInitAdapter "
      "failed! (0x62:0x40:1941)");
  const std::string b = line_template(
      "[  912.004411] NVRM: GPU 0000:81:00.0: RmInitAdapter failed! (0x26:0xffff:1433)");
  CHECK(a == "NVRM: GPU <pci>: RmInitAdapter failed! (<hex>:<hex>:<num>)");
  CHECK(a == b);
  CHECK(line_template("2025-07-23T20:41:47.012432+02:00 gpu-node-031 kernel: [615230.930588] "
                      "pcieport 0000:48:01.0: AER: device recovery failed") ==
        "pcieport <pci>: AER: device recovery failed");
  CHECK(line_template(R"(KeyError: 'input_ids')") == "KeyError: <str>");
  CHECK(line_template(std::string(5000, 'x')).size() <= extract_internal::kTemplateLength);
}

TEST_CASE("an error word inside a path, a quoted string or a key is not an error") {
  LogFolder job;
  job.Write("node-a/train.log",
            // Python's traceback header and its frames name files, not errors.
            "Traceback (most recent call last):\n"
            "  File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/"
            "multiprocessing/errors/__init__.py\", line 355, in wrapper\n");
  job.Write("node-a/dmesg.txt",
            "[    4.041102] EXT4-fs (md0p1): re-mounted. Opts: errors=remount-ro. Quota mode: "
            "none.\n");
  const Analysis analysis = analyze({job.path()}, catalog());
  CHECK(analysis.diagnoses.empty());
}

// A negated error word says there was none: cargo's test summary and a Sage build's log line.
TEST_CASE("an error word a negation stands before is not an error") {
  LogFolder job;
  job.Write("node-a/build.log",
            "test result: ok. 115 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; "
            "finished in 0.05s\n"
            "The IML test suite passed without errors.\n");
  CHECK(analyze({job.path()}, catalog()).diagnoses.empty());
  // A real error line beside them is still listed.
  job.Write("node-a/kern.log",
            "[1084457.868993] nvidia-gpu 0000:09:00.3: i2c timeout error ffffffff\n");
  const Analysis analysis = analyze({job.path()}, catalog());
  REQUIRE(analysis.diagnoses.size() == 1);
  CHECK(analysis.diagnoses[0].failure->id == "unrecognised-errors");
}

TEST_CASE("lines no signature knows are listed, at warning, never above a recognised fault") {
  LogFolder job;
  // The GPU's I2C controller timing out (the kernel's i2c-nvidia-gpu driver), as in the dmesg of
  // NVIDIA/nvidia-docker#1553; no signature knows it.
  job.Write("node-a/kern.log",
            "[1084457.868993] nvidia-gpu 0000:09:00.3: i2c timeout error ffffffff\n"
            "[1084457.868993] nvidia-gpu 0000:09:00.3: i2c timeout error ffffffff\n");
  Analysis analysis = analyze({job.path()}, catalog());
  REQUIRE(analysis.diagnoses.size() == 1);
  const Diagnosis& unknown = analysis.diagnoses[0];
  CHECK(unknown.failure->id == "unrecognised-errors");
  CHECK(unknown.severity == Severity::kWarning);
  CHECK(unknown.gpu.pci == "0000:09:00.3");
  REQUIRE(!unknown.notes.empty());
  CHECK(unknown.notes[0].starts_with(
      R"note(2 lines like "nvidia-gpu <pci>: i<num>c timeout error ffffffff")note"));

  job.Write("node-a/kern.log.1",
            "[ 4254.197860] NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', name=<unknown>, GPU "
            "has fallen off the bus.\n");
  analysis = analyze({job.path()}, catalog());
  REQUIRE(analysis.diagnoses.size() == 2);
  CHECK(analysis.diagnoses[0].failure->id == "gpu-off-bus");
  CHECK(analysis.diagnoses[1].failure->id == "unrecognised-errors");
}

TEST_CASE("the rest of a recognised fault's report counts at info") {
  LogFolder job;
  // A watchdog timeout, its stack frames (known context), then the C++ runtime's abort.
  job.Write("node-a/rank4.log",
            "[rank4]:[E1209 09:41:10.463473105 ProcessGroupNCCL.cpp:616] [Rank 4] Watchdog caught "
            "collective operation timeout: WorkNCCL(SeqNum=5121, OpType=ALLREDUCE, "
            "NumelIn=26214400, NumelOut=26214400, Timeout(ms)=600000) ran for 600009 "
            "milliseconds before timing out.\n"
            "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 "
            "(0x7fbeb989ef86 in /opt/venv/lib/python3.10/site-packages/torch/lib/libc10.so)\n"
            "\n"
            "terminate called after throwing an instance of 'c10::DistBackendError'\n");
  const Analysis analysis = analyze({job.path()}, catalog());
  const Diagnosis* unknown = find(analysis, "unrecognised-errors");
  REQUIRE(unknown);
  CHECK(unknown->severity == Severity::kInfo);
  REQUIRE(unknown->notes.size() >= 1);
  CHECK(unknown->notes[0].find("terminate called") != std::string::npos);
  CHECK(unknown->notes[0].find("right after a line of a diagnosis above") != std::string::npos);
  // The frame is known context: not listed.
  for (const faultline::SharedText& note : unknown->notes)
    CHECK(note.find("frame #") == std::string::npos);
}

TEST_CASE("far from any recognised line, the same abort is a warning of its own") {
  LogFolder job;
  std::string log =
      "[rank4]:[E1209 09:41:10.463473105 ProcessGroupNCCL.cpp:616] [Rank 4] Watchdog caught "
      "collective operation timeout: WorkNCCL(SeqNum=5121, OpType=ALLREDUCE, NumelIn=26214400, "
      "NumelOut=26214400, Timeout(ms)=600000) ran for 600009 milliseconds before timing out.\n";
  for (int i = 0; i < 30; ++i) log += "[rank4]: iteration " + std::to_string(i) + "\n";
  log += "terminate called after throwing an instance of 'c10::DistBackendError'\n";
  job.Write("node-a/rank4.log", log);
  const Analysis analysis = analyze({job.path()}, catalog());
  const Diagnosis* unknown = find(analysis, "unrecognised-errors");
  REQUIRE(unknown);
  CHECK(unknown->severity == Severity::kWarning);
}

TEST_CASE("a flood of one template is counted, with its first and last time") {
  LogFolder job;
  std::string log;
  for (int second = 10; second < 20; ++second) {
    log += "Feb 28 17:08:" + std::to_string(second) +
           " node00 kernel: [  501.917606] mlx5_core 0000:8d:00.0: mlx5_cmd_out_err:803:(pid "
           "1247481): ACCESS_REG(0x805) op_mod(0x1) failed, status bad parameter(0x3), syndrome "
           "(0x3f8d8e), err(-22)\n";
  }
  job.Write("node00/kern.log", log);
  const Analysis analysis = analyze({job.path()}, catalog());
  const Diagnosis* unknown = find(analysis, "unrecognised-errors");
  REQUIRE(unknown);
  REQUIRE(!unknown->notes.empty());
  CHECK(unknown->notes[0].starts_with("10 lines like"));
  CHECK(unknown->notes[0].find("08:10, last") != std::string::npos);
  CHECK(unknown->notes[0].find(":08:19 ") != std::string::npos);
  CHECK(unknown->occurrences == 10);
}
