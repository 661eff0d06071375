// The shapes people paste logs in (a markdown quote, a launcher's stream tag, a logger's name, a
// shell prompt, a Windows console), each on lines as they were posted, read end to end: what
// the lines say must come out as if they had been pasted bare.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/signatures.h"
#include "extract/extract.h"
#include "log_folder.h"
#include "source/source.h"

using namespace faultline;

namespace {

ScanResult scan_text(const std::string& text, const ScanOptions& options = {}) {
  LogFolder folder;
  const std::string path = folder.Write("pasted.log", text);
  static Catalog catalog;
  static const bool loaded = [] {
    std::string error;
    const bool ok = load_catalog({}, &catalog, &error);
    REQUIRE_MESSAGE(ok, error);
    return ok;
  }();
  REQUIRE(loaded);
  std::string error;
  std::unique_ptr<LineReader> reader = LineReader::Open(path, &error);
  REQUIRE_MESSAGE(reader, error);
  return scan_input(*reader, *catalog.signatures, options);
}

std::vector<const Event*> events_of(const ScanResult& result, std::string_view signature) {
  std::vector<const Event*> found;
  for (const Event& event : result.events) {
    if (event.signature == signature) found.push_back(&event);
  }
  return found;
}

}  // namespace

TEST_CASE("pasted: kernel lines quoted in markdown, SXid detail lines known but no report") {
  // leptonai/gpud components/accelerator/nvidia/error/sxid/README.md (excerpt, as posted):
  // https://github.com/leptonai/gpud/blob/main/components/accelerator/nvidia/error/sxid/README.md
  const ScanResult result = scan_text(
      "> [6781741.548779] NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU "
      "has fallen off the bus.\n"
      ">\n"
      "> [6781753.400584] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM "
      "Fault Up\n"
      ">\n"
      "> [6781753.404848] nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Severity 1 Engine "
      "instance 60 Sub-engine instance 00\n"
      ">\n"
      "> [6781753.406566] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Data {0x10000000, "
      "0x10000000, 0x00000000, 0x10000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, "
      "0x00000000}\n");
  CHECK(result.input.kind == InputKind::kKernelLog);
  const auto off_bus = events_of(result, "xid-79-off-bus");
  REQUIRE(off_bus.size() == 1);
  CHECK(off_bus[0]->gpu.pci == "0000:91:00.0");
  CHECK(off_bus[0]->evidence.time.iso() == "+6781741.548779s");
  const auto fatal = events_of(result, "nvswitch-sxid-fatal");
  REQUIRE(fatal.size() == 1);
  CHECK(fatal[0]->fields.at("switch_pci") == "0000:06:00.0");
  CHECK(fatal[0]->fields.at("link") == "48");
  CHECK(fatal[0]->evidence.time.iso() == "+6781753.400584s");
  // The driver's detail lines after an SXid's first line (its severity as a number, its data
  // words) are part of that report: known, never unrecognised, and no report of their own.
  CHECK(events_of(result, "nvswitch-sxid-detail").size() == 2);
  CHECK(events_of(result, "nvswitch-sxid-nonfatal").empty());
  for (const Event& event : result.events) {
    CHECK_MESSAGE(!event.fields.contains("template"), event.evidence.text);
  }
}

TEST_CASE("pasted: a shell prompt names the host of the lines printed after it") {
  // akash-network/support#209, as posted:
  // https://github.com/akash-network/support/issues/209
  ScanOptions options;
  options.host = "folder-host";
  const ScanResult result = scan_text(
      "(venv) root@node1:~/kubespray# nvidia-smi \n"
      "Unable to determine the device handle for GPU0000:A1:00.0: Unknown Error\n"
      "\n"
      "root@node1:~# dmesg -T | grep NVRM\n"
      "[Thu Apr  4 18:03:56 2024] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.161.07  Sat "
      "Feb 17 22:55:48 UTC 2024\n"
      "[Fri Apr  5 21:29:39 2024] NVRM: GPU at PCI:0000:a1:00: "
      "GPU-979426f2-893a-7cbb-c4cf-81472f89a462\n"
      "[Fri Apr  5 21:29:39 2024] NVRM: Xid (PCI:0000:a1:00): 79, pid='<unknown>', name=<unknown>, "
      "GPU has fallen off the bus.\n"
      "[Fri Apr  5 21:29:39 2024] NVRM: GPU 0000:a1:00.0: GPU has fallen off the bus.\n",
      options);
  REQUIRE_FALSE(result.events.empty());
  CHECK_FALSE(events_of(result, "nvidia-smi-handle-unknown-error").empty());
  const auto off_bus = events_of(result, "xid-79-off-bus");
  REQUIRE(off_bus.size() == 1);
  CHECK(off_bus[0]->gpu.pci == "0000:a1:00.0");
  for (const Event& event : result.events) {
    CHECK_MESSAGE(event.host == "node1", event.evidence.text);
    // The prompt lines themselves say nothing.
    CHECK(event.evidence.line != 1);
    CHECK(event.evidence.line != 4);
  }
}
