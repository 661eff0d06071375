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

TEST_CASE("pasted: dmesg -T lines quoted in markdown keep their wall-clock time") {
  // leptonai/gpud#46, components/accelerator/nvidia/error/xid/README.md as posted:
  // https://github.com/leptonai/gpud/pull/46
  const ScanResult result = scan_text(
      "> [Fri Aug 30 11:11:22 2024] nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected "
      "invalid context, skipping further processing\n"
      "> [Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', "
      "name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction "
      "Parameter\n"
      "> [Fri Aug 30 11:43:14 2024] NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, "
      "name=pt_main_thread, Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005\n");
  CHECK(result.input.kind == InputKind::kKernelLog);
  std::vector<int> xids;
  for (const Event& event : result.events) {
    if (!event.xid) continue;
    xids.push_back(*event.xid);
    CHECK(event.gpu.pci == "0000:cb:00.0");
    CHECK(event.evidence.time.kind == Timestamp::Kind::kAbsolute);
  }
  CHECK(xids == std::vector<int>{13, 109});
  const auto timeout = std::find_if(result.events.begin(), result.events.end(),
                                    [](const Event& event) { return event.xid == 109; });
  REQUIRE(timeout != result.events.end());
  CHECK(timeout->evidence.time.iso() == "2024-08-30T11:43:14");
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
  CHECK_FALSE(events_of(result, "nvml-device-handle-error").empty());
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

TEST_CASE("pasted: a prompt's host goes to the GPUs of the table after it, not to a line's own") {
  // cBio/cbio-cluster#38 (Red Hat prompt, then nvidia-smi's table), as posted:
  // https://github.com/cBio/cbio-cluster/issues/38
  const ScanResult table = scan_text(
      "[chodera@gpu-1-12 ~]$ nvidia-smi\n"
      "Fri Apr 18 12:26:18 2014       \n"
      "+------------------------------------------------------+                       \n"
      "| NVIDIA-SMI 331.62     Driver Version: 331.62         |                       \n"
      "|-------------------------------+----------------------+----------------------+\n"
      "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
      "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n"
      "|===============================+======================+======================|\n"
      "|   0  GeForce GTX 680     Off  | 0000:03:00.0     N/A |                  N/A |\n"
      "| 30%   35C  N/A     N/A /  N/A |      9MiB /  4095MiB |     N/A      Default |\n"
      "+-------------------------------+----------------------+----------------------+\n"
      "|   1  GeForce GTX 680     Off  | 0000:04:00.0     N/A |                  N/A |\n"
      "| 30%   35C  N/A     N/A /  N/A |      9MiB /  4095MiB |     N/A      Default |\n"
      "+-------------------------------+----------------------+----------------------+\n");
  REQUIRE(table.states.size() == 2);
  for (const GpuState& state : table.states) CHECK(state.host == "gpu-1-12");

  // A line that names its own host keeps it: akash-network/support#209's prompt, then the
  // NCCL line quoted in scitix/sichek#44 (lines of two posts, pasted one after the other).
  // https://github.com/scitix/sichek/issues/44
  const ScanResult own = scan_text(
      "root@node1:~# dmesg -T | grep NVRM\n"
      "> [2026-01-04 21:33:04] test-ys-512-scaling-test-0104-1504-a7de2925-master-0:617:2799 [3] "
      "transport/net_ib.cc:2360 NCCL WARN NET/IB: Got completion from peer "
      "172.16.234.184<53393> with status=12 opcode=1 len=5222 vendor err 129 (Send) localGid "
      "::ffff:100.123.200.87 remoteGids::ffff:100.123.200.74 hca mlx5_26\n");
  REQUIRE_FALSE(own.events.empty());
  for (const Event& event : own.events) {
    CHECK(event.host == "test-ys-512-scaling-test-0104-1504-a7de2925-master-0");
  }
}

TEST_CASE("pasted: a Windows console's nvidia-smi reads as the same table on Linux") {
  // anderskm/gputil#37, PowerShell as posted, with the CRLF line ends a Windows console saves:
  // https://github.com/anderskm/gputil/issues/37
  const std::vector<std::string> table = {
      "Tue Jul 28 16:16:35 2020",
      "+-----------------------------------------------------------------------------+",
      "| NVIDIA-SMI 451.77       Driver Version: 451.77       CUDA Version: 11.0     |",
      "|-------------------------------+----------------------+----------------------+",
      "| GPU  Name            TCC/WDDM | Bus-Id        Disp.A | Volatile Uncorr. ECC |",
      "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |",
      "|===============================+======================+======================|",
      "|   0  GeForce RTX 208... WDDM  | 00000000:01:00.0  On |                  N/A |",
      "| N/A   46C    P8     7W /  N/A |   4402MiB /  8192MiB |     18%      Default |",
      "+-------------------------------+----------------------+----------------------+"};
  std::string console = "(base) PS C:\\Users\\sarth> nvidia-smi.exe\r\n";
  std::string plain;
  for (const std::string& line : table) {
    console += line + "\r\n";
    plain += line + "\n";
  }
  const ScanResult pasted = scan_text(console);
  const ScanResult bare = scan_text(plain);
  CHECK(pasted.input.kind == InputKind::kNvidiaSmi);
  CHECK(pasted.input.kind == bare.input.kind);
  CHECK(pasted.events.size() == bare.events.size());
  REQUIRE(pasted.states.size() == 1);
  REQUIRE(bare.states.size() == 1);
  CHECK(pasted.states[0].gpu.pci == "0000:01:00.0");
  CHECK(pasted.states[0].gpu.index == bare.states[0].gpu.index);
  CHECK(pasted.states[0].fields == bare.states[0].fields);
  CHECK(pasted.states[0].source.text == bare.states[0].source.text);
  CHECK(pasted.states[0].source.line == bare.states[0].source.line + 1);
}

TEST_CASE("pasted: Python logger names before a message are no syslog host") {
  // Each line as posted: pytorch/torchtitan#810 ("- root - INFO -" after a stamp, behind
  // torchrun's tags), Wu0409/DuPL#12 ("- module - INFO:"), showlab/EgoVLP#21 and
  // Shark-NLP/DiffuSeq#41 (logging's default "LEVEL:logger:message").
  // https://github.com/pytorch/torchtitan/issues/810 https://github.com/Wu0409/DuPL/issues/12
  // https://github.com/showlab/EgoVLP/issues/21 https://github.com/Shark-NLP/DiffuSeq/issues/41
  const ScanResult result = scan_text(
      "[rank0]:2025-01-28 13:23:00,193 - root - INFO - Training starts at step 1, with local batch "
      "size 8, global batch size 16, sequence length 2048, total steps 10 (warmup 2)            "
      "        \n"
      "[rank0]:[rank0]:[E128 13:23:00.788972321 ProcessGroupNCCL.cpp:1897] [PG ID 0 PG GUID "
      "0(default_pg) Rank 0] Process group watchdog thread terminated with exception: CUDA error: "
      "an illegal memory access was encountered\n"
      "2025-01-21 05:25:51,546 - distributed_c10d.py - INFO: Added key: "
      "store_based_barrier_key:1 to store for rank: 0\n"
      "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 3 "
      "(pid: 407727) of binary: /fs/nexus-scratch/sanjoyc/anaconda/envs/egovlp/bin/python\n"
      "INFO:torch.distributed.elastic.agent.server.api:Done waiting for other agents. Elapsed: "
      "0.00020599365234375 seconds\n");
  CHECK(result.input.host.empty());
  for (const Event& event : result.events) CHECK_MESSAGE(event.host.empty(), event.evidence.text);
  const auto illegal = events_of(result, "cuda-illegal-address");
  REQUIRE(illegal.size() == 1);
  CHECK(illegal[0]->rank == 0);
  const auto failed = events_of(result, "torchrun-worker-failed");
  REQUIRE(failed.size() == 1);
  CHECK(failed[0]->fields.at("local_rank") == "3");
  CHECK(failed[0]->fields.at("exitcode") == "-9");
}

TEST_CASE("pasted: horovodrun's stream tags give each line its rank and read as bare lines") {
  // horovodrun --gloo prefixes each worker's lines "[{rank}]<stdout|stderr>:" (Horovod's
  // safe_shell_exec.py). Lines as posted: horovod/horovod#3673 and pytorch/ignite#3466.
  // https://github.com/horovod/horovod/pull/3673 https://github.com/pytorch/ignite/pull/3466
  const std::string tagged =
      "[0]<stdout>:NCCL version 2.12.12+cuda11.6\n"
      "[0]<stdout>:\n"
      "[0]<stdout>:72d576acb451:1704:1899 [0] init.cc:255 NCCL WARN Cuda failure 'CUDA driver is "
      "a stub library'\n"
      "[0]<stdout>:72d576acb451:1704:1899 [0] NCCL INFO init.cc:913 -> 1\n"
      "[1]<stderr>:    mpi_lib.horovod_torch_wait_and_clear(handle)\n"
      "[1]<stderr>:RuntimeError: ncclCommInitRank failed: unhandled cuda error (run with "
      "NCCL_DEBUG=INFO for details)\n"
      "[1]<stderr>:\n";
  const ScanResult result = scan_text(tagged);
  CHECK(result.input.kind == InputKind::kTrainingLog);
  const auto warn = events_of(result, "nccl-warn");
  REQUIRE(warn.size() == 1);
  CHECK(warn[0]->rank == 0);
  CHECK(warn[0]->host == "72d576acb451");
  CHECK(warn[0]->fields.at("message") == "Cuda failure 'CUDA driver is a stub library'");
  // The tags taken off, the lines read as they would bare: the same events, with ranks.
  std::string bare;
  for (size_t start = 0; start < tagged.size();) {
    const size_t end = tagged.find('\n', start);
    std::string_view line(tagged.data() + start, end - start);
    line.remove_prefix(line.find(">:") + 2);
    bare.append(line).append("\n");
    start = end + 1;
  }
  const ScanResult plain = scan_text(bare);
  REQUIRE(result.events.size() == plain.events.size());
  for (size_t i = 0; i < result.events.size(); ++i) {
    CHECK(result.events[i].signature == plain.events[i].signature);
    CHECK(result.events[i].fields == plain.events[i].fields);
  }
  const auto failed = std::find_if(result.events.begin(), result.events.end(), [](const Event& e) {
    return e.evidence.text.find("ncclCommInitRank failed") != std::string::npos;
  });
  REQUIRE(failed != result.events.end());
  CHECK(failed->rank == 1);
}

TEST_CASE("pasted: grep -n and grep -Hn line numbers before syslog lines") {
  // The real syslog lines of k-xid48-xid64-rminit-syslog-k8s behind grep's "%d:" and "%s:%d:".
  const ScanResult result = scan_text(
      "11407:Dec  2 11:38:47 worker4 kernel: [  219.470994] NVRM: Xid (PCI:0000:07:00): 48, "
      "pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected "
      "on GPU in the framebuffer at physAddr 0x7fffa8860 partition 7, subpartition 1.\n"
      "/var/log/syslog:11408:Dec  2 11:38:47 worker4 kernel: [  219.471050] NVRM: Xid "
      "(PCI:0000:07:00): 64, pid='<unknown>', name=<unknown>, Dynamic Page Retirement: "
      "Blacklisting failed.  Page should have been blacklisted on boot(0x00000000007fffa8).\n");
  CHECK(result.input.kind == InputKind::kKernelLog);
  REQUIRE(result.events.size() == 2);
  for (const Event& event : result.events) {
    INFO(event.evidence.text);
    CHECK(event.host == "worker4");
    CHECK(event.evidence.time.iso().ends_with("-12-02T11:38:47"));
    CHECK(event.xid != 0);
  }
}
