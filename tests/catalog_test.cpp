// The catalog's verdicts on real Xid lines: secondary Xids, application faults, the catalog's
// fallbacks, recovery actions and users' overrides.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "catalog/signatures.h"
#include "catalog/tables.h"
#include "pipeline/pipeline.h"

using namespace faultline;
namespace fs = std::filesystem;

namespace {

// Diagnoses `log` with the built-in tables plus, when given, one user table. The catalogs live
// as long as the tests: diagnoses point at their classes.
Analysis diagnose_text(const std::string& log, const std::string& user_table = "") {
  static std::vector<std::unique_ptr<Catalog>> catalogs;
  const fs::path dir =
      fs::temp_directory_path() / ("faultline-catalog-test-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "tables");
  std::ofstream(dir / "kern.log") << log;
  std::vector<std::string> table_dirs;
  if (!user_table.empty()) {
    std::ofstream(dir / "tables" / "mine.json") << user_table;
    table_dirs.push_back((dir / "tables").string());
  }
  const Catalog& catalog = *catalogs.emplace_back(std::make_unique<Catalog>());
  std::string error;
  REQUIRE_MESSAGE(load_catalog(table_dirs, catalogs.back().get(), &error), error);
  Analysis analysis = analyze({(dir / "kern.log").string()}, catalog);
  fs::remove_all(dir);
  return analysis;
}

// The class of the one diagnosis `analysis` must hold.
std::string only_class(const Analysis& analysis) {
  REQUIRE(analysis.diagnoses.size() == 1);
  return analysis.diagnoses[0].failure->id;
}

bool mentions(const std::vector<faultline::SharedText>& lines, std::string_view text) {
  return std::any_of(lines.begin(), lines.end(), [&](const faultline::SharedText& line) {
    return line.find(text) != std::string::npos;
  });
}

}  // namespace

TEST_CASE("Xid 45 naming Xid 149 as its cause: the NVLink fault ranks first, not the 45") {
  const Analysis analysis = diagnose_text(
      "[Sat Oct 12 18:35:32 2024] NVRM: Xid (PCI:0018:01:00): 45, pid=1496200, name=python3, "
      "Ch 0000000a, caused by previous Xid 149\n"
      "[Sat Oct 12 18:35:32 2024] NVRM: Xid (PCI:0018:01:00): 45, pid=1496201, name=python3, "
      "Ch 0000000b, caused by previous Xid 149\n");
  REQUIRE_FALSE(analysis.diagnoses.empty());
  const Diagnosis& top = analysis.diagnoses[0];
  CHECK(top.failure->id == "nvlink-error");
  CHECK(top.failure->kind == ClassKind::kHardware);
  CHECK(top.gpu.pci == "0018:01:00.0");
  CHECK(mentions(top.missing, "Xid 149 itself is not in these logs"));
}

TEST_CASE("Xid 31 MMU faults alone are the application's, not hardware") {
  const Analysis analysis = diagnose_text(
      "[31543.449443] NVRM: Xid (PCI:0000:01:00): 31, Ch 0000003a, intr 10000000. MMU Fault: "
      "ENGINE GRAPHICS GPCCLIENT_T1_3 faulted @ 0x17_00592000. Fault is of type FAULT_PDE "
      "ACCESS_TYPE_READ\n"
      "[31544.100000] NVRM: Xid (PCI:0000:01:00): 43, pid=2924364, name=pt_main_thread, Ch "
      "00000008\n");
  CHECK(only_class(analysis) == "mmu-fault");
  CHECK(analysis.diagnoses[0].failure->kind == ClassKind::kSoftware);
  CHECK(analysis.diagnoses[0].failure->severity < Severity::kError);
}

TEST_CASE("Xid 43 right after a fatal Xid on the same GPU is part of that incident") {
  const Analysis analysis = diagnose_text(
      "[100.0] NVRM: Xid (PCI:0000:07:00): 119, pid=2357, name=nv-hostengine, Timeout waiting "
      "for RPC from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL) (0x90cc0301 0xc).\n"
      "[100.5] NVRM: Xid (PCI:0000:07:00): 43, pid=2924364, name=pt_main_thread, Ch 00000008\n");
  CHECK(only_class(analysis) == "gsp-error");
  CHECK(analysis.diagnoses[0].occurrences == 2);
}

TEST_CASE("the action an Xid 154 names leads the fix of the incident it belongs to") {
  const Analysis analysis = diagnose_text(
      "[Sat Jul 11 05:52:47 2026] NVRM: Xid (PCI:0000:2a:00): 120, GSP kernel exception: load "
      "access page fault (cause:0xd) @ pc:0xffffffff9300188a, partition:4#0\n"
      "[Sat Jul 11 05:52:47 2026] NVRM: Xid (PCI:0000:2a:00): 154, GPU recovery action changed "
      "from 0x0 (None) to 0x2 (Node Reboot Required)\n");
  REQUIRE(analysis.diagnoses.size() == 1);
  const Diagnosis& d = analysis.diagnoses[0];
  CHECK(d.failure->id == "gsp-error");
  REQUIRE_FALSE(d.fix.empty());
  CHECK(d.fix[0].find("Node Reboot Required") != std::string::npos);
}

TEST_CASE("an Xid without a written class gets the catalog's verdict; one outside it is unknown") {
  const Analysis catalog_only =
      diagnose_text("[1.0] NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000052 intr 02000000\n");
  CHECK(only_class(catalog_only) == "xid-32");
  CHECK(catalog_only.diagnoses[0].failure->title.starts_with("Xid 32: "));

  const Analysis unknown = diagnose_text("[1.0] NVRM: Xid (PCI:0000:01:00): 250, Something new\n");
  CHECK(only_class(unknown) == "xid-unknown");
  CHECK(unknown.diagnoses[0].failure->kind == ClassKind::kUnknown);
  REQUIRE(unknown.events.size() == 1);
  CHECK(unknown.events[0].xid == 250);
}

TEST_CASE("a user's table can make Xid 63 critical") {
  const std::string log =
      "[5.0] NVRM: Xid (PCI:0000:3b:00): 63, pid=1, name=python, Row Remapper: New row marked "
      "for remapping, reset gpu to activate.\n";
  CHECK(diagnose_text(log).diagnoses.at(0).failure->severity == Severity::kError);
  const Analysis strict = diagnose_text(log, R"json({"classes": [{
      "id": "row-remap-pending", "title": "Row remap pending: drain now (fleet policy)",
      "class": "hardware", "severity": "critical", "priority": 70,
      "supported_by": [{"signature": "xid-63-row-remap", "weight": 0.9}],
      "explanation": "e", "fix": ["Drain {host} now."],
      "verify": [{"command": "nvidia-smi -q -d ROW_REMAPPER -i {gpu}", "expect": "Pending : No"}],
      "source": "our fleet runbook"}]})json");
  REQUIRE(strict.diagnoses.size() == 1);
  CHECK(strict.diagnoses[0].failure->severity == Severity::kCritical);
  CHECK(strict.diagnoses[0].failure->source == "our fleet runbook");
}

TEST_CASE("a where-condition tells a Fatal NVLink5 event from a Nonfatal one") {
  const Analysis analysis = diagnose_text(
      "NVRM: Xid (PCI:0018:01:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 09 (0x004525c6 "
      "0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)\n");
  CHECK(only_class(analysis) == "nvlink-error");
}

TEST_CASE("a Nonfatal NVLink5 event is a warning, not the fatal NVLink diagnosis") {
  const Analysis analysis = diagnose_text(
      "NVRM: Xid (PCI:0018:01:00): 145, pid=876767, name=ray::WorkerDict, RLW_RXPIPE Nonfatal XC0 "
      "i0 Link 13 (0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)\n");
  CHECK(only_class(analysis) == "nvlink-nonfatal");
  CHECK(analysis.diagnoses[0].failure->severity == Severity::kWarning);
}

// NVLink5 Xids 144-150 take the verdict of NVIDIA's "XID 144-150 Decode" table (unit and
// errorStatus, or Xid 149's link-down reason), not the line's Fatal/Nonfatal word.
TEST_CASE("NVLink5: TLW_RX/TLW_RX_PIPE0 errorStatus 0x4 decodes to RESET_GPU, an error") {
  const Analysis analysis = diagnose_text(
      "NVRM: Xid (PCI:0018:01:00): 146, TLW_RX/TLW_RX_PIPE0 Fatal XC0 i0 Link 05 (0x0000000a "
      "0x00000004 0x00000000 0x00000000 0x00000000 0x00000000)\n");
  CHECK(only_class(analysis) == "nvlink-error");
  CHECK(analysis.diagnoses[0].severity == Severity::kError);
  CHECK(mentions(analysis.diagnoses[0].notes,
                 "NVIDIA's 144-150 decode: TLW_RX/TLW_RX_PIPE0 errorStatus 0x00000004 = "
                 "RESET_GPU, Fatal"));
}

TEST_CASE("NVLink5: SAW_MVB errorStatus 0x4 decodes to IGNORE, a warning") {
  const Analysis analysis = diagnose_text(
      "NVRM: Xid (PCI:0000:01:00): 144, SAW_MVB Nonfatal XC0 i0 Link 0 (0x00000001 0x00000004 "
      "0x00000000 0x00000000 0x00000000 0x00000000)\n");
  CHECK(only_class(analysis) == "nvlink-nonfatal");
  CHECK(analysis.diagnoses[0].severity == Severity::kWarning);
  CHECK(
      mentions(analysis.diagnoses[0].notes, "SAW_MVB errorStatus 0x00000004 = IGNORE, Non-fatal"));
}

TEST_CASE("NVLink5: the decode, not the printed word, decides") {
  // Printed Fatal, but the table's row for SAW_MVB 0x20 is IGNORE, Non-fatal.
  const Analysis ignored = diagnose_text(
      "NVRM: Xid (PCI:0000:01:00): 144, SAW_MVB Fatal XC0 i0 Link 0 (0x00000001 0x00000020 "
      "0x00000000 0x00000000 0x00000000 0x00000000)\n");
  CHECK(only_class(ignored) == "nvlink-nonfatal");
  // Printed Nonfatal, but RLW_REMAP 0x40 is RESET_GPU, Fatal.
  const Analysis reset = diagnose_text(
      "NVRM: Xid (PCI:0000:01:00): 145, RLW_REMAP Nonfatal XC0 i0 Link 3 (0x00000004 0x00000040 "
      "0x00000000 0x00000000 0x00000000 0x00000000)\n");
  CHECK(only_class(reset) == "nvlink-error");
}

TEST_CASE("NVLink5: RLW_REMAP errorStatus 0x1 decodes to XID_154_EVAL") {
  const Analysis analysis = diagnose_text(
      "NVRM: Xid (PCI:0008:06:00): 145, RLW_REMAP Nonfatal XC0 i0 Link 0 (0x00000004 0x00000001 "
      "0x00000000 0x00000000 0x00000000 0x00000000)\n");
  CHECK(only_class(analysis) == "nvlink-nonfatal");
  CHECK(analysis.events.at(0).fields.at("catalog_action") == "XID_154_EVAL");
  CHECK(analysis.events.at(0).fields.at("catalog_severity") == "Non-fatal");
}

TEST_CASE("NVLink5: several errorStatus bits take the most severe bit's action") {
  const Analysis analysis = diagnose_text(
      "NVRM: Xid (PCI:0008:06:00): 145, RLW_REMAP Nonfatal XC0 i0 Link 0 (0x00000004 0x00000041 "
      "0x00000000 0x00000000 0x00000000 0x00000000)\n");
  CHECK(only_class(analysis) == "nvlink-error");
  CHECK(analysis.events.at(0).fields.at("catalog_action") == "RESET_GPU");
}

TEST_CASE("NVLink5: RLW_RXPIPE takes Action 2 when intrInfo carries its extra bit") {
  // The table's example line (intrInfo bit 10 clear): IGNORE.
  const Analysis plain = diagnose_text(
      "NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000001 "
      "0x00000000 0x00000000 0x00000000 0x00000000)\n");
  CHECK(only_class(plain) == "nvlink-nonfatal");
  // The same with V1 pattern 10011000010 (bit 10 set): RESET_GPU.
  const Analysis promoted = diagnose_text(
      "NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a4c2 0x00000001 "
      "0x00000000 0x00000000 0x00000000 0x00000000)\n");
  CHECK(only_class(promoted) == "nvlink-error");
}

TEST_CASE("NVLink5: Xid 149 NETIR_LINK_EVT is read by its link-down reason") {
  // The table's example line: reason 4 (intrInfo bits 25:20) = RESET_GPU, Link Fatal.
  const Analysis analysis = diagnose_text(
      "NVRM: Xid (PCI:0018:01:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 09 (0x004525c6 "
      "0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)\n");
  CHECK(only_class(analysis) == "nvlink-error");
  CHECK(mentions(analysis.diagnoses[0].notes, "NETIR_LINK_EVT link-down reason 4"));
  // Reason 38: IGNORE, but Link Fatal: still the GPU's drain and reset.
  const Analysis link_fatal = diagnose_text(
      "NVRM: Xid (PCI:0018:01:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 09 (0x026525c6 "
      "0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)\n");
  CHECK(only_class(link_fatal) == "nvlink-error");
  CHECK(link_fatal.events.at(0).fields.at("catalog_action") == "IGNORE");
}

TEST_CASE("NVLink5: a line the table does not cover keeps its printed word, and says so") {
  // SAW_MVB has no row for errorStatus 0x80000000.
  const Analysis nonfatal = diagnose_text(
      "NVRM: Xid (PCI:0000:01:00): 144, SAW_MVB Nonfatal XC0 i0 Link 0 (0x00000001 0x80000000 "
      "0x00000000 0x00000000 0x00000000 0x00000000)\n");
  CHECK(only_class(nonfatal) == "nvlink-nonfatal");
  CHECK(mentions(nonfatal.diagnoses[0].notes, "could not be decoded"));
  // TLW_CTRL has no row for 0x8, printed Fatal: the printed word's verdict, not critical.
  const Analysis fatal = diagnose_text(
      "NVRM: Xid (PCI:0000:01:00): 146, TLW_CTRL Fatal XC0 i0 Link 2 (0x00000009 0x00000008 "
      "0x00000000 0x00000000 0x00000000 0x00000000)\n");
  CHECK(only_class(fatal) == "nvlink-error");
  CHECK(fatal.diagnoses[0].severity == Severity::kError);
  CHECK(mentions(fatal.diagnoses[0].notes,
                 "errorStatus 0x00000008 is not in NVIDIA's 144-150 decode table"));
}

TEST_CASE("a malformed nvlink5_decode row fails to load") {
  Catalog catalog;
  std::string error;
  const fs::path dir =
      fs::temp_directory_path() / ("faultline-decode-test-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "bad.json") << R"json({"schema": "faultline/signatures/v1",
    "nvlink5_decode": [{"xid": 146, "unit": "TLW_CTRL", "error_status": "4",
                        "action": "RESET_GPU", "severity": "Fatal"}]})json";
  CHECK_FALSE(load_catalog({dir.string()}, &catalog, &error));
  CHECK(error.find("error_status") != std::string::npos);
  fs::remove_all(dir);
}

// Identifier variants as people post them (issue 15): each line is kept as an event; an
// address the poster elided leaves the GPU unknown, never the line dropped.
TEST_CASE("Xid lines with the address elided: events with the GPU unknown") {
  // NVIDIA/nccl#2241, as posted.
  const Analysis analysis = diagnose_text(
      "kernel: NVRM: Xid (PCI:...): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (...)\n"
      "kernel: NVRM: Xid (PCI:...): 137, RLW_RXPIPE interrupt hit on link 11 on GPU0: PRIV "
      "Error\n");
  std::vector<int> xids;
  for (const Event& event : analysis.events) {
    if (!event.xid) continue;
    xids.push_back(*event.xid);
    CHECK(event.gpu.pci.empty());
  }
  CHECK(xids == std::vector<int>{145, 137});
  REQUIRE_FALSE(analysis.diagnoses.empty());
  CHECK(analysis.diagnoses[0].failure->id != "unrecognised-errors");
}

TEST_CASE("Xid and fallen-off-bus lines with the PCI function, without it or the domain") {
  struct Case {
    const char* line;
    const char* id;
    const char* gpu;
  };
  // NVSentinel's syslog-health-monitor notes and tests, and gpud's xid tests.
  const Case cases[] = {
      {"[ 1108.858286] NVRM: Xid (PCI:0000:b3:00.0): 79, pid=1234, name=nv-hostengine",
       "gpu-off-bus", "0000:b3:00.0"},
      {"NVRM: Xid (PCI:0000:3f:00): 46", "xid-46", "0000:3f:00.0"},
      {"NVRM: GPU 18:00.0: GPU has fallen off the bus.", "gpu-off-bus", "0000:18:00.0"},
      {"NVRM: The NVIDIA GPU 0000:b4:00.0 fallen off the bus and is not responding to commands.",
       "gpu-off-bus", "0000:b4:00.0"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.line);
    const Analysis analysis = diagnose_text(std::string(c.line) + "\n");
    REQUIRE_FALSE(analysis.diagnoses.empty());
    CHECK(analysis.diagnoses[0].failure->id == c.id);
    CHECK(analysis.diagnoses[0].gpu.pci == c.gpu);
  }
}

TEST_CASE("the driver's UUID line with the PCI function names the GPU") {
  // NVSentinel's syslog-health-monitor tests.
  const Analysis analysis = diagnose_text("NVRM: GPU at PCI:0000:00:08.0: GPU-123\n");
  REQUIRE(analysis.events.size() == 1);
  CHECK(analysis.events[0].gpu.pci == "0000:00:08.0");
  CHECK(analysis.events[0].gpu.uuid == "GPU-123");
}

TEST_CASE("the Kubernetes device plugin's XidCriticalError names the Xid and the GPU's UUID") {
  // NVIDIA/k8s-device-plugin#189 (Go log stamps) and akash-network/support#244 (kubectl logs
  // --timestamps before a klog line), as posted.
  const Analysis xid69 = diagnose_text(
      "2020/08/10 19:09:42 XidCriticalError: Xid=69 on Device=GPU-7540a9b3-eeb9-1214-1526-"
      "f93c9ea826a8, the device will go unhealthy.\n");
  REQUIRE_FALSE(xid69.diagnoses.empty());
  CHECK(xid69.diagnoses[0].failure->id == "xid-69");
  REQUIRE(xid69.events.size() == 1);
  CHECK(xid69.events[0].gpu.uuid == "GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8");
  const Analysis xid94 = diagnose_text(
      "2024-08-09T13:32:51.873588972Z I0809 13:32:51.873541       1 health.go:185] "
      "XidCriticalError: Xid=94 on Device=GPU-3b6ec030-5adc-1847-e155-79f635584b4e; marking "
      "device as unhealthy.\n");
  REQUIRE_FALSE(xid94.diagnoses.empty());
  CHECK(xid94.diagnoses[0].failure->id == "ecc-contained");
  CHECK(xid94.diagnoses[0].first_seen.iso() == "2024-08-09T13:32:51.873589+00:00");
}

TEST_CASE("nvidia-smi -q with HW Slowdown active: a slowdown warning; all Not Active: nothing") {
  const std::string braked =
      "GPU 00000000:04:00.0\n"
      "    Clocks Throttle Reasons\n"
      "        Idle                              : Not Active\n"
      "        Applications Clocks Setting       : Not Active\n"
      "        SW Power Cap                      : Not Active\n"
      "        HW Slowdown                       : Active\n"
      "            HW Thermal Slowdown           : Not Active\n"
      "            HW Power Brake Slowdown       : Active\n";
  const Analysis slowed = diagnose_text(braked);
  REQUIRE_FALSE(slowed.diagnoses.empty());
  CHECK(slowed.diagnoses[0].failure->id == "gpu-power-brake-slowdown");
  CHECK(slowed.diagnoses[0].failure->severity == Severity::kWarning);
  CHECK(slowed.diagnoses[0].gpu.pci == "0000:04:00.0");

  const Analysis healthy = diagnose_text(
      "GPU 00000000:04:00.0\n"
      "    Clocks Throttle Reasons\n"
      "        Idle                        : Active\n"
      "        Applications Clocks Setting : Not Active\n"
      "        SW Power Cap                : Not Active\n"
      "        HW Slowdown                 : Not Active\n"
      "            HW Thermal Slowdown     : Not Active\n"
      "            HW Power Brake Slowdown : Not Active\n"
      "        Sync Boost                  : Not Active\n"
      "        SW Thermal Slowdown         : Not Active\n");
  CHECK(healthy.diagnoses.empty());
}
