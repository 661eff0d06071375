// What kind of text an input is: device dumps, and the envelopes people paste kernel logs in.
#include "sniff/sniff.h"

#include <doctest/doctest.h>

#include <initializer_list>
#include <string_view>

using faultline::InputKind;
using faultline::KindSniffer;

namespace {

InputKind kind_of(std::initializer_list<std::string_view> lines) {
  KindSniffer sniffer;
  for (std::string_view line : lines) sniffer.Observe(line, false);
  return sniffer.kind();
}

}  // namespace

TEST_CASE("dmesg -H: relative stamps are a kernel log") {
  // An amdgpu patch's oops, as posted.
  CHECK(kind_of({"[  +0.108196] general protection fault, probably for non-canonical",
                 "[  +0.000018] RIP: 0010:free_fw_priv+0xd/0x70",
                 "[  +0.000022] Call Trace:", "[  +0.000012]  <TASK>"}) == InputKind::kKernelLog);
}

TEST_CASE("raw /dev/kmsg records are a kernel log") {
  // The kernel's Documentation/ABI/testing/dev-kmsg example.
  CHECK(kind_of({"7,160,424069,-;pci_root PNP0A03:00: host bridge window [io  0x0000-0x0cf7] "
                 "(ignored)",
                 " SUBSYSTEM=acpi", " DEVICE=+acpi:PNP0A03:00",
                 "6,339,5140900,-;NET: Registered protocol family 10",
                 "30,340,5690716,-;udevd[80]: starting version 181"}) == InputKind::kKernelLog);
}

TEST_CASE("journalctl -o json: the kernel's records are a kernel log") {
  // yandex wall-e checks' test data.
  CHECK(
      kind_of(
          {R"({ "__CURSOR" : "s=2c2f7f3d64d844aa9bc1844a48026313;i=1f346;b=c4b33c96f240457abc130dcb73da2b24;m=192b594fbf;t=5aec65916901c;x=3ed7ff8758066553", "__REALTIME_TIMESTAMP" : "1599541804961820", "__MONOTONIC_TIMESTAMP" : "108101455807", "_BOOT_ID" : "c4b33c96f240457abc130dcb73da2b24", "_MACHINE_ID" : "6641fb6ac4e235aef340bea75f556792", "_HOSTNAME" : "vla2-6758.search.yandex.net", "_TRANSPORT" : "kernel", "SYSLOG_FACILITY" : "0", "SYSLOG_IDENTIFIER" : "kernel", "PRIORITY" : "2", "_SOURCE_MONOTONIC_TIMESTAMP" : "108101169896", "MESSAGE" : "EXT4-fs error (device sdc2) in ext4_free_blocks:4969: IO failure" })"}) ==
      InputKind::kKernelLog);
}

TEST_CASE("sniff: lines the state readers took as a device dump are nvidia-smi output") {
  // `nvidia-smi nvlink -e` (stas00/ml-engineering debug.md): nothing in the lines themselves
  // says nvidia-smi; the state reader's say does.
  KindSniffer dump;
  dump.Observe("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-abcdefab-cdef-abdc-abcd-abababababab)",
               true);
  dump.Observe("         Link 0: Replay Errors: 0", true);
  CHECK(dump.kind() == InputKind::kNvidiaSmi);

  KindSniffer prose;
  prose.Observe("         Link 0: Replay Errors: 0", false);
  CHECK(prose.kind() == InputKind::kText);
}

TEST_CASE("sniff: nvidia-smi failing to open a GPU is nvidia-smi output") {
  // pdbear/syno_nvidia_gpu_driver#22, verbatim.
  KindSniffer sniffer;
  sniffer.Observe("$ nvidia-smi", false);
  sniffer.Observe("Unable to determine the device handle for GPU0000:07:00.0: Unknown Error",
                  false);
  CHECK(sniffer.kind() == InputKind::kNvidiaSmi);
}

TEST_CASE("sniff: a kernel log quoted in markdown is a kernel log") {
  // leptonai/gpud components/accelerator/nvidia/error/sxid/README.md, NVSwitch lines as quoted
  // there (none says NVRM or kernel: only the stamp behind the quote tells).
  CHECK(kind_of({"> [6781753.400584] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, "
                 "Link 48 LTSSM Fault Up",
                 ">",
                 "> [6781753.404587] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, "
                 "Link 63 LTSSM Fault Up",
                 ">",
                 "> [6781753.404848] nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Severity 1 "
                 "Engine instance 60 Sub-engine instance 00"}) == InputKind::kKernelLog);
}
