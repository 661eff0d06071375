#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "builtin_catalog.h"
#include "catalog/signatures.h"
#include "catalog/tables.h"
#include "log_folder.h"
#include "pipeline/pipeline.h"

using namespace faultline;

namespace {

Analysis run(const std::vector<std::string>& paths) {
  return analyze(paths, catalog());
}

bool has_note(const Diagnosis& d, std::string_view text) {
  return std::any_of(d.notes.begin(), d.notes.end(),
                     [&](const std::string& note) { return note.find(text) != std::string::npos; });
}

const std::string kA100Dump =
    "==============NVSMI LOG==============\n\n"
    "Timestamp                                 : Mon Mar  4 09:00:00 2024\n"
    "Driver Version                            : 535.129.03\n\n"
    "Attached GPUs                             : 1\n"
    "GPU 00000000:3B:00.0\n"
    "    Product Name                          : NVIDIA A100-SXM4-80GB\n"
    "    Serial Number                         : 1323120035212\n"
    "    GPU UUID                              : GPU-b01e9f90-c60c-4ad1-2052-154833662357\n"
    "    Minor Number                          : 2\n"
    "    Remapped Rows\n"
    "        Correctable Error                 : 0\n"
    "        Uncorrectable Error               : 1\n"
    "        Pending                           : {pending}\n"
    "        Remapping Failure Occurred        : No\n";

std::string a100_dump(const std::string& pending,
                      const std::string& product = "NVIDIA A100-SXM4-80GB") {
  std::string dump = kA100Dump;
  dump.replace(dump.find("{pending}"), 9, pending);
  dump.replace(dump.find("NVIDIA A100-SXM4-80GB"), 21, product);
  return dump;
}

}  // namespace

TEST_CASE("Xid 48 and 63 within a second on one GPU: one incident, named by the remap") {
  LogFolder logs;
  logs.Write(
      "kern.log",
      "Mar  5 10:12:33 gpu-node-017 kernel: [ 5120.100000] NVRM: Xid (PCI:0000:3b:00): 48, pid=88, "
      "name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the "
      "framebuffer at physAddr 0x1a2b3c000 partition 3, subpartition 1.\n"
      "Mar  5 10:12:33 gpu-node-017 kernel: [ 5120.200000] NVRM: Xid (PCI:0000:3b:00): 63, pid=88, "
      "name=python, Row Remapper: New row (0x19a4e80) marked for remapping, reset gpu to "
      "activate.\n");
  const Analysis analysis = run({logs.path()});
  REQUIRE(analysis.diagnoses.size() == 1);
  const Diagnosis& d = analysis.diagnoses[0];
  CHECK(d.failure->id == "row-remap-pending");
  CHECK(d.host == "gpu-node-017");
  CHECK(d.gpu.pci == "0000:3b:00.0");
  CHECK(d.evidence.size() == 2);
  CHECK(d.occurrences == 2);
  CHECK(has_note(d, "Also fits ecc-dbe"));
  CHECK(d.missing.size() == 1);  // no dump was given
  CHECK(d.fix[0].find("nvidia-smi -r -i 0000:3b:00.0") != std::string::npos);
}

TEST_CASE("a kernel line and a dump of the same GPU join: the dump names serial and product") {
  LogFolder logs;
  logs.Write(
      "kern.log",
      "Mar  5 10:12:33 gpu-node-017 kernel: NVRM: Xid (PCI:0000:3b:00): 63, pid=88, name=python, "
      "Row Remapper: New row marked for remapping, reset gpu to activate.\n");
  logs.Write("nvidia-smi-q.txt", a100_dump("Yes"));
  const Analysis analysis = run({logs.path()});
  REQUIRE(analysis.diagnoses.size() == 1);
  const Diagnosis& d = analysis.diagnoses[0];
  CHECK(d.failure->id == "row-remap-pending");
  CHECK(d.host == "gpu-node-017");
  CHECK(d.gpu.serial == "1323120035212");
  CHECK(d.gpu.product == "NVIDIA A100-SXM4-80GB");
  CHECK(d.gpu.index == 2);
  CHECK(d.confidence > 0.95);
  CHECK(d.missing.empty());
  // The dump's own line is evidence, with its line number.
  CHECK(std::any_of(d.evidence.begin(), d.evidence.end(), [](const Evidence& e) {
    return e.text.find("Pending") != std::string::npos && e.line == 15;
  }));
}

TEST_CASE("Xid 63 without its wording is read by the product's generation") {
  const std::string line =
      "[ 77.000000] NVRM: Xid (PCI:0000:3b:00): 63, ECC page retirement or row remapping recording "
      "event\n";
  SUBCASE("V100: page retirement") {
    LogFolder logs;
    logs.Write("dmesg", line);
    logs.Write("smi.txt", a100_dump("No", "Tesla V100-SXM2-32GB"));
    const Analysis analysis = run({logs.path()});
    REQUIRE_FALSE(analysis.diagnoses.empty());
    CHECK(analysis.diagnoses[0].failure->id == "page-retirement-pending");
    CHECK(has_note(analysis.diagnoses[0], "the GPU is a Tesla V100-SXM2-32GB"));
  }
  SUBCASE("unknown product: row remapping assumed, and said so") {
    LogFolder logs;
    logs.Write("dmesg", line);
    const Analysis analysis = run({logs.path()});
    REQUIRE(analysis.diagnoses.size() == 1);
    CHECK(analysis.diagnoses[0].failure->id == "row-remap-pending");
    CHECK(has_note(analysis.diagnoses[0], "row-remapping assumed"));
  }
}

TEST_CASE("a later dump that reads Pending: No outranks the old Xid 63") {
  LogFolder logs;
  logs.Write(
      "kern.log",
      "[Sun Mar  3 10:12:33 2024] NVRM: Xid (PCI:0000:3b:00): 63, Row Remapper: New row marked for "
      "remapping, reset gpu to activate.\n");
  logs.Write("nvidia-smi-q.txt", a100_dump("No"));  // taken on Mar 4
  const Analysis analysis = run({logs.path()});
  REQUIRE(analysis.diagnoses.size() == 1);
  const Diagnosis& d = analysis.diagnoses[0];
  CHECK(d.failure->id == "row-remap-event");
  CHECK(has_note(d, "row-remap-pending"));
}

TEST_CASE("the job's CUDA ECC error is collateral to the GPU's contained ECC error") {
  LogFolder logs;
  logs.Write(
      "node1/dmesg",
      "[ 100.000000] NVRM: Xid (PCI:0000:4e:00): 94, pid=2231, name=python, Contained: SM (0x1). "
      "RST: No, D-RST: No\n");
  logs.Write("node1/train.log",
             "[rank3]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n");
  const Analysis analysis = run({logs.path()});
  REQUIRE(analysis.diagnoses.size() == 2);
  CHECK(analysis.diagnoses[0].failure->id == "ecc-contained");
  CHECK(analysis.diagnoses[0].host == "node1");  // from the folder name
  CHECK(analysis.diagnoses[0].role == Role::kInitiating);
  CHECK(analysis.diagnoses[1].failure->id == "cuda-ecc-error");
  CHECK(analysis.diagnoses[1].role == Role::kCollateral);
  CHECK(analysis.diagnoses[1].caused_by == 1);
}

TEST_CASE("the same PCI address on two hosts is two GPUs") {
  LogFolder logs;
  const std::string xid =
      " kernel: NVRM: Xid (PCI:0000:07:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
      "off the bus.\n";
  logs.Write("kern.log", "Mar  5 10:12:33 node-a" + xid + "Mar  5 10:14:00 node-b" + xid);
  const Analysis analysis = run({logs.path()});
  REQUIRE(analysis.diagnoses.size() == 2);
  CHECK(analysis.diagnoses[0].failure->id == "gpu-off-bus");
  CHECK(analysis.diagnoses[0].host != analysis.diagnoses[1].host);
}

TEST_CASE("a remap failure outranks everything else on the node") {
  LogFolder logs;
  logs.Write(
      "dmesg",
      "[ 10.0] NVRM: Xid (PCI:0000:0f:00): 92, Disabling ECC single-bit error interrupts in "
      "framebuffer at logical partition 2, due to high error rate\n"
      "[ 20.0] NVRM: Xid (PCI:0000:b7:00): 64, Row Remapper Error: (0x3f1a2c0) - All reserved "
      "rows for bank are remapped\n");
  const Analysis analysis = run({logs.path()});
  REQUIRE(analysis.diagnoses.size() == 2);
  CHECK(analysis.diagnoses[0].failure->id == "row-remap-failure");
  CHECK(analysis.diagnoses[0].failure->severity == Severity::kCritical);
  CHECK(analysis.diagnoses[1].failure->id == "ecc-sbe-rate");
  CHECK(analysis.diagnoses[0].first_seen.iso() == "+20.000000s");
}

TEST_CASE("a healthy dump gives no diagnosis") {
  LogFolder logs;
  std::string dump = a100_dump("No");
  dump.replace(dump.find("Uncorrectable Error               : 1"), 37,
               "Uncorrectable Error               : 0");
  logs.Write("nvidia-smi-q.txt", dump);
  const Analysis analysis = run({logs.path()});
  CHECK(analysis.diagnoses.empty());
  CHECK(analysis.states.size() == 1);
}

TEST_CASE("a syslog date takes its year from a full date elsewhere in the run") {
  LogFolder logs;
  logs.Write(
      "kern.log",
      "Mar  5 10:12:33 gpu-node-017 kernel: NVRM: Xid (PCI:0000:3b:00): 63, pid=88, name=python, "
      "Row Remapper: New row marked for remapping, reset gpu to activate.\n");
  logs.Write("nvidia-smi-q.txt", a100_dump("Yes"));  // Timestamp: Mar 4 2024
  const Analysis analysis = run({logs.path()});
  REQUIRE(analysis.diagnoses.size() == 1);
  CHECK(analysis.diagnoses[0].last_seen.iso() == "2024-03-05T10:12:33");
}

TEST_CASE("a flood is one diagnosis with a count, and its events are bounded") {
  LogFolder logs;
  std::string flood;
  for (int i = 0; i < 5000; ++i) {
    flood += "[" + std::to_string(100 + i) +
             ".250000] NVRM: Xid (PCI:0000:1e:00): 31, Ch 00000060, "
             "engmask 00000101, intr 10000000\n";
  }
  logs.Write("dmesg", flood);
  const Analysis analysis = run({logs.path()});
  REQUIRE(analysis.diagnoses.size() == 1);
  const Diagnosis& d = analysis.diagnoses[0];
  CHECK(d.occurrences == 5000);
  CHECK(d.evidence.size() <= 10);
  CHECK(d.first_seen.iso() == "+100.250000s");
  CHECK(d.last_seen.iso() == "+5099.250000s");
  CHECK(analysis.events.size() <= 1000);
  CHECK(has_note(d, "more lines like these are counted"));
}

TEST_CASE(
    "three snapshots of rising uncorrectable remaps: memory-degrading, with values and times") {
  LogFolder logs;
  const auto snapshot = [](const std::string& day, int uncorrectable) {
    std::string dump = a100_dump("No");
    dump.replace(dump.find("Mon Mar  4"), 10, day);
    dump.replace(dump.find("Uncorrectable Error               : 1"), 37,
                 "Uncorrectable Error               : " + std::to_string(uncorrectable));
    return dump;
  };
  logs.Write("2024-03-04/nvidia-smi-q.txt", snapshot("Mon Mar  4", 1));
  logs.Write("2024-03-11/nvidia-smi-q.txt", snapshot("Mon Mar 11", 3));
  logs.Write("2024-03-18/nvidia-smi-q.txt", snapshot("Mon Mar 18", 6));
  std::vector<std::string> paths;
  for (const char* day : {"2024-03-04", "2024-03-11", "2024-03-18"}) {
    paths.push_back(logs.path() + "/" + day + "/nvidia-smi-q.txt");
  }
  const Analysis analysis = run(paths);
  REQUIRE(analysis.diagnoses.size() == 1);
  const Diagnosis& d = analysis.diagnoses[0];
  CHECK(d.failure->id == "memory-degrading");
  CHECK(has_note(d,
                 "remapped_rows.uncorrectable went from 1 to 6 over 3 snapshots, "
                 "2024-03-04T09:00:00 to 2024-03-18T09:00:00 (+0.36 a day)"));
  CHECK(d.first_seen.iso() == "2024-03-04T09:00:00");
  CHECK(d.last_seen.iso() == "2024-03-18T09:00:00");
}

TEST_CASE("a remap pending in one dump and applied in a later one is reported as applied") {
  LogFolder logs;
  std::string later = a100_dump("No");
  later.replace(later.find("Mon Mar  4"), 10, "Tue Mar  5");
  const Analysis analysis =
      run({logs.Write("a/smi.txt", a100_dump("Yes")), logs.Write("b/smi.txt", later)});
  REQUIRE(analysis.diagnoses.size() == 1);
  CHECK(analysis.diagnoses[0].failure->id == "row-remap-event");
  CHECK(has_note(analysis.diagnoses[0], "has been applied"));
}

TEST_CASE("raw dmesg seconds become wall-clock times when the host's syslog gives its boot time") {
  LogFolder logs;
  logs.Write("node1/kern.log",
             "Mar  5 10:12:33 node1 kernel: [ 100.000000] NVRM: GPU at PCI:0000:3b:00: "
             "GPU-0b11d014-7a6e-1f3c-9d2e-5b8a4c3f2e10\n");
  logs.Write("node1/dmesg",
             "[  160.500000] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n");
  logs.Write("node2/dmesg",
             "[  170.000000] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n");
  // A full date elsewhere in the run gives the syslog lines their year.
  logs.Write("node3/dmesg-T.txt",
             "[Tue Mar  5 09:00:00 2024] NVRM: GPU at PCI:0000:07:00: "
             "GPU-3f2a91c0-77b4-e1c9-0a5d-6e2b94f1c307\n");
  const Analysis analysis = run({logs.path()});
  REQUIRE(analysis.diagnoses.size() == 2);
  for (const Diagnosis& d : analysis.diagnoses) {
    CAPTURE(d.host);
    // node2 has no syslog: its stamps stay relative to its boot.
    CHECK(d.first_seen.iso() ==
          (d.host == "node1" ? "2024-03-05T10:13:33.500000" : "+170.000000s"));
  }
}

TEST_CASE("a training stall is drawn in the job's lane, as its table says") {
  // Megatron-LM's iteration lines, one iteration 20x slower than the rest.
  std::string log;
  for (int i = 1; i <= 200; ++i) {
    const double ms = i == 150 ? 100000.0 : 5000.0 + (i % 7) * 13;
    log += fmt::format(
        " [2024-09-14 00:{:02}:{:02}] iteration {:>8}/   50000 | consumed samples: {:>12} | "
        "elapsed time per iteration (ms): {:.1f} | learning rate: 6.000000E-06 | global batch "
        "size:   512 | lm loss: {:.6E} | loss scale: 1.0 | grad norm: 5.732 | number of skipped "
        "iterations:   0 | number of nan iterations:   0 |\n",
        (i * 5) / 60 % 60, (i * 5) % 60, i, i * 512, ms, 3.0 - i * 0.001);
  }
  LogFolder folder;
  const Analysis analysis = analyze({folder.Write("train.log", log)}, catalog());
  const auto stall =
      std::find_if(analysis.diagnoses.begin(), analysis.diagnoses.end(),
                   [](const Diagnosis& d) { return d.failure->id == "training-stall"; });
  REQUIRE(stall != analysis.diagnoses.end());
  REQUIRE_FALSE(stall->evidence.empty());
  for (const Evidence& evidence : stall->evidence) CHECK(evidence.lane == Lane::kJob);
  CHECK(catalog().knowledge.lane_of("training-stall") == Lane::kJob);
  CHECK(catalog().knowledge.lane_of("iterations-skipped") == Lane::kJob);
  CHECK(catalog().knowledge.lane_of("xid-79-off-bus") == Lane::kHardware);
  CHECK(catalog().knowledge.lane_of("remapped_rows.pending") == Lane::kHardware);
}

TEST_CASE("fp16 overflows driving the loss scale to its minimum: an error, and no hardware") {
  // ymcui/Chinese-LLaMA-Alpaca#534: DeepSpeed's overflow lines glued to the HF Trainer's bar, the
  // scale halving 64 -> 2, and the exception DeepSpeed ends such a run with.
  std::string log;
  int step = 378;
  for (int scale = 64; scale > 2; scale /= 2) {
    log += fmt::format(
        " 14%|█▍        | {}/2724 [13:58:09<86:18:35, 132.44s/it][2023-06-07 22:{}:00,018] [INFO] "
        "[loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted "
        "loss scale: {}, reducing to {}\n",
        step, 16 + 2 * (step - 378), scale, scale / 2);
    ++step;
  }
  log +=
      "Exception: Current loss scale already at minimum - cannot decrease scale anymore. "
      "Exiting run.\n";
  LogFolder folder;
  const Analysis analysis = analyze({folder.Write("train.log", log)}, catalog());
  REQUIRE(analysis.diagnoses.size() == 2);
  const Diagnosis& top = analysis.diagnoses[0];
  CHECK(top.failure->id == "loss-scale-at-minimum");
  CHECK(top.severity == Severity::kError);
  CHECK(top.failure->kind != ClassKind::kHardware);
  CHECK(analysis.diagnoses[1].failure->id == "iterations-skipped");
}

TEST_CASE("a resume spike right after a memory Xid is never its symptom") {
  // The job resumes from the checkpoint of iteration 2500 a minute after an Xid 63 and its loss
  // jumps 2.5x for five logged points while the data loader and optimizer settle.
  const auto iteration_line = [](int iteration, int seconds, double loss) {
    return fmt::format(
        " [2026-11-18 10:{:02}:{:02}] iteration {:8}/   20000 | consumed samples: {:12} | "
        "elapsed time per iteration (ms): 1000.0 | learning rate: 2.873690E-04 | global batch "
        "size:   512 | lm loss: {:.6E} | loss scale: 1.0 | grad norm: 0.412 | number of skipped "
        "iterations:   0 | number of nan iterations:   0 |\n",
        seconds / 60, seconds % 60, iteration, iteration * 512, loss);
  };
  std::string train =
      "  successfully loaded checkpoint from /ckpt/gpt [ t 0, p 0 ] at iteration 2500\n";
  for (int i = 1; i <= 200; ++i) {
    const double loss = (2.0 + 8.0 * std::exp(-(250 + i) / 150.0)) * (i <= 5 ? 2.5 : 1.0);
    train += iteration_line(2500 + 10 * i, 60 + 10 * i, loss);
  }
  LogFolder folder;
  folder.Write("train.log", train);
  folder.Write("dmesg.txt",
               "[Wed Nov 18 10:00:20 2026] NVRM: Xid (PCI:0000:4e:00): 63, pid=4242, name=python, "
               "Row Remapper: New row (0x000000041d5c5080) marked for remapping, reset gpu to "
               "activate.\n");
  const Analysis analysis = analyze({folder.path()}, catalog());
  const bool resume_event =
      std::any_of(analysis.events.begin(), analysis.events.end(),
                  [](const Event& e) { return e.signature == "loss-resume-spike"; });
  CHECK(resume_event);
  REQUIRE_FALSE(analysis.diagnoses.empty());
  CHECK(analysis.diagnoses[0].failure->id == "row-remap-pending");
  for (const Diagnosis& d : analysis.diagnoses) {
    CHECK(d.failure->id != "loss-spike");
    CHECK(d.role != Role::kCollateral);
  }
}

TEST_CASE("an MMU fault and a later PMU halt on one GPU rest on different lines: two diagnoses") {
  LogFolder logs;
  logs.Write("dmesg.txt",
             "[  170.053881] NVRM: Xid (PCI:0000:01:00): 31, Ch 00000013, engmask 00000101, intr "
             "10000000\n"
             "[  391.163575] NVRM: Xid (PCI:0000:01:00): 62, 3243ec3b 0000c3d8 00000000 206dae62 "
             "206da01c 206da18a 206d85f0 206d8d80\n");
  const Analysis analysis = run({logs.path()});
  REQUIRE(analysis.diagnoses.size() == 2);
  std::vector<std::string> ids;
  for (const Diagnosis& d : analysis.diagnoses) {
    CHECK(d.gpu.pci == "0000:01:00.0");
    CHECK(d.evidence.size() == 1);
    ids.push_back(d.failure->id);
  }
  CHECK(ids[0] != ids[1]);
}

TEST_CASE("a remap failure after a double-bit error is its consequence: one incident") {
  LogFolder logs;
  logs.Write(
      "kern.log",
      "Mar  5 10:12:33 gpu-node-017 kernel: [ 5120.100000] NVRM: Xid (PCI:0000:3b:00): 48, pid=88, "
      "name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the "
      "framebuffer at physAddr 0x1a2b3c000 partition 3, subpartition 1.\n"
      "Mar  5 10:12:34 gpu-node-017 kernel: [ 5121.100000] NVRM: Xid (PCI:0000:3b:00): 64, pid=88, "
      "name=python, Row Remapper Error: (0x00000000019a4e80) - All reserved rows for bank are "
      "remapped\n");
  const Analysis analysis = run({logs.path()});
  REQUIRE(analysis.diagnoses.size() == 1);
  CHECK(analysis.diagnoses[0].evidence.size() == 2);
  CHECK(has_note(analysis.diagnoses[0], "Also fits ecc-dbe"));
}

TEST_CASE(
    "Xid 154 back to None is a recovery, nothing above info; Node Reboot Required is a reboot") {
  LogFolder logs;
  logs.Write("kern.log",
             "NVRM: Xid (PCI:0008:01:00): 154, GPU recovery action changed from 0x1 (GPU Reset "
             "Required) to 0x0 (None)\n");
  const Analysis cleared = run({logs.path()});
  REQUIRE(cleared.diagnoses.size() == 1);
  CHECK(cleared.diagnoses[0].failure->id == "gpu-recovery-cleared");
  CHECK(cleared.diagnoses[0].severity == Severity::kInfo);

  LogFolder reboot;
  reboot.Write("kern.log",
               "[Mon Sep 14 04:48:45 2026] NVRM: Xid (PCI:0000:02:00): 154, GPU recovery action "
               "changed from 0x0 (None) to 0x2 (Node Reboot Required)\n");
  const Analysis rebooted = run({reboot.path()});
  REQUIRE(rebooted.diagnoses.size() == 1);
  CHECK(rebooted.diagnoses[0].failure->id == "gpu-recovery-reboot");
  CHECK(rebooted.diagnoses[0].fix[0].find("reboot") != std::string::npos);
}

TEST_CASE("Xid 45 that names no cause never says 'caused by previous Xid unknown'") {
  LogFolder logs;
  logs.Write("kern.log",
             "[Sat Oct 12 18:35:32 2024] NVRM: Xid (PCI:0000:61:00): 45, pid=1496200, "
             "name=distprovers-gpu, Ch 0000000a\n");
  const Analysis analysis = run({logs.path()});
  REQUIRE(analysis.diagnoses.size() == 1);
  const Diagnosis& d = analysis.diagnoses[0];
  for (const faultline::SharedText& text : d.fix) CHECK(text.find("unknown") == std::string::npos);
  for (const faultline::SharedText& text : d.notes)
    CHECK(text.find("unknown") == std::string::npos);
}

namespace {

const std::string kXid79 =
    "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n";

bool recurred(const Diagnosis& d) {
  return has_note(d, "logged on this GPU in 2 boots");
}

}  // namespace

TEST_CASE("an Xid 79 on one GPU in two boots escalates: the reboot did not clear it") {
  LogFolder banner;  // the kernel's banner opens each boot
  banner.Write(
      "dmesg.txt",
      "[    0.000000] Linux version 5.19.13-arch1-1 (linux@archlinux) (gcc (GCC) 12.2.0, "
      "GNU ld (GNU Binutils) 2.39.0) #1 SMP PREEMPT_DYNAMIC Tue, 04 Oct 2022 14:36:58 "
      "+0000\n"
      "[ 5120.100000] " +
          kXid79 +
          "[    0.000000] Linux version 5.19.13-arch1-1 (linux@archlinux) (gcc (GCC) 12.2.0, "
          "GNU ld (GNU Binutils) 2.39.0) #1 SMP PREEMPT_DYNAMIC Tue, 04 Oct 2022 14:36:58 "
          "+0000\n"
          "[  301.200000] " +
          kXid79);
  LogFolder uptime;  // no banner: the kernel's time since boot falls back
  uptime.Write("dmesg.txt", "[ 5120.100000] " + kXid79 + "[  301.200000] " + kXid79);
  LogFolder journal;  // journalctl's separator between boots
  journal.Write("journal.txt", "Mar  5 10:12:33 gpu-node-017 kernel: " + kXid79 +
                                   "-- Boot 67793553d52544e995e43c1ce540535c --\n"
                                   "Mar  6 08:01:02 gpu-node-017 kernel: " +
                                   kXid79);
  for (const LogFolder* logs : {&banner, &uptime, &journal}) {
    const Analysis analysis = run({logs->path()});
    REQUIRE(!analysis.diagnoses.empty());
    const Diagnosis& d = analysis.diagnoses[0];
    CHECK(d.failure->id == "gpu-off-bus");
    CHECK(d.severity == Severity::kCritical);
    CHECK(recurred(d));
    CHECK(d.fix[0].find("recurred after a reboot") != std::string::npos);
    CHECK(d.fix[0].find("0000:3b:00.0") != std::string::npos);
  }
}

TEST_CASE("the same Xid twice in one boot, or in two files, is no recurrence") {
  LogFolder one_boot;
  one_boot.Write("dmesg.txt", "[ 5120.100000] " + kXid79 + "[ 5121.300000] " + kXid79);
  LogFolder two_files;  // kern.log and syslog both carry the line: one boot, twice
  two_files.Write("kern.log", "Mar  5 10:12:33 gpu-node-017 kernel: " + kXid79);
  two_files.Write("syslog", "Mar  5 10:12:33 gpu-node-017 kernel: " + kXid79);
  for (const LogFolder* logs : {&one_boot, &two_files}) {
    const Analysis analysis = run({logs->path()});
    REQUIRE(!analysis.diagnoses.empty());
    CHECK(!recurred(analysis.diagnoses[0]));
  }
}

// Issue 38, item 1: every example line of every signature, alone in a log, ends in a finding (as
// its class, as evidence of another, or listed by unrecognised-errors) unless the signature is
// quiet (identity, boot, benign). A line that a signature matched never leaves the report.
TEST_CASE("issue 38: nothing matched is lost, over the whole catalog") {
  const Catalog& built_in = catalog();
  const Knowledge& knowledge = built_in.knowledge;
  size_t checked = 0;
  for (const auto& signature : built_in.signatures->signatures()) {
    const std::string id(signature->id.str());
    if (knowledge.quiet_signatures.contains(id)) continue;
    for (const SignatureExample& example : signature->must_match) {
      if (example.line.find('\n') != std::string::npos) continue;  // a wrapped message
      LogFolder logs;
      const Analysis analysis = run({logs.Write("example.log", example.line + "\n")});
      const bool matched = std::any_of(analysis.events.begin(), analysis.events.end(),
                                       [&](const Event& e) { return e.signature.str() == id; });
      if (!matched) continue;  // another signature took the line alone (its own test says which)
      ++checked;
      const bool reported = std::any_of(analysis.diagnoses.begin(), analysis.diagnoses.end(),
                                        [](const Diagnosis& d) { return !d.evidence.empty(); });
      CHECK_MESSAGE(reported, id << ": '" << example.line << "' yields no finding");
    }
  }
  CHECK(checked > 300);
}

// Issue 38, item 3: each input says how much of it some reader understood, and one of which
// nothing was understood but that looks like a tool's output is named, never passed over.
// `nvidia-smi topo -m` (NVIDIA/nccl#1617, verbatim) has no reader.
TEST_CASE("issue 38: an input that looks like tool output and that nothing understood is named") {
  LogFolder logs;
  const std::string topo = logs.Write(
      "topo.txt",
      "        GPU0    GPU1    GPU2    GPU3    NIC0    NIC1    NIC2    NIC3    CPU Affinity    "
      "NUMA Affinity   GPU NUMA ID\n"
      "GPU0     X      NV6     NV6     NV6     PIX     SYS     SYS     SYS     6,14,22,30      3  "
      "             N/A\n"
      "GPU1    NV6      X      NV6     NV6     SYS     PIX     SYS     SYS     4,12,20,28      1  "
      "             N/A\n"
      "NIC0    PIX     SYS     SYS     SYS      X      SYS     SYS     SYS\n");
  const std::string kernel =
      logs.Write("dmesg.txt",
                 "[    8.498963] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu "
                 "Oct 19 18:56:32 UTC 2023\n[    9.1] random: crng init done\n");
  const std::string dump = logs.Write("nvidia-smi-q.txt", a100_dump("No"));
  const Analysis analysis = run({topo, kernel, dump});
  REQUIRE(analysis.inputs.size() == 3);
  for (const InputSummary& input : analysis.inputs) {
    CAPTURE(input.path);
    CHECK(input.not_understood() == (input.path == topo));
    if (input.path == dump) CHECK(input.understood_lines * 2 > input.lines);
    if (input.path == kernel) CHECK(input.understood_lines == 1);
  }
}

// Issue 38, item 1: a CUDA error that no specific class takes is cuda-error, with NVIDIA's meaning
// of its code; so is the one an NCCL watchdog died on. DCGM's error codes likewise.
TEST_CASE("issue 38: generic CUDA and DCGM errors are read by their documented codes") {
  LogFolder logs;
  const Analysis cuda =
      run({logs.Write("train.log", "RuntimeError: CUDA error: misaligned address\n")});
  REQUIRE(!cuda.diagnoses.empty());
  CHECK(cuda.diagnoses[0].failure->id == "cuda-error");
  CHECK(has_note(cuda.diagnoses[0], "716 (cudaErrorMisalignedAddress)"));
  const Analysis watchdog = run({logs.Write(
      "rank1.log",
      "[rank1]:[E410 01:50:33.889423318 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID "
      "0(default_pg) Rank 1] Process group watchdog thread terminated with exception: CUDA error: "
      "too many resources requested for launch\n")});
  REQUIRE(!watchdog.diagnoses.empty());
  CHECK(watchdog.diagnoses[0].failure->id == "cuda-error");
  CHECK(has_note(watchdog.diagnoses[0], "cudaErrorLaunchOutOfResources"));
  // A specific class keeps its line: the generic one does not add a second finding for it.
  const Analysis illegal = run({logs.Write(
      "oops.log", "RuntimeError: CUDA error: an illegal memory access was encountered\n")});
  REQUIRE(illegal.diagnoses.size() == 1);
  CHECK(illegal.diagnoses[0].failure->id == "cuda-illegal-address");
  const Analysis dcgm =
      run({logs.Write("health.txt",
                      "ErrorCode:DCGM_FR_PENDING_ROW_REMAP GPU:3 GPU 3 had memory errors and row "
                      "remappings are pending\n")});
  REQUIRE(!dcgm.diagnoses.empty());
  CHECK(dcgm.diagnoses[0].failure->id == "dcgm-error-isolate");
  CHECK(has_note(dcgm.diagnoses[0], "severity RESET"));
}

// NVML's errors, the same way: by nvml.h's code, whatever tool printed them (nvidia-smi, pynvml;
// lines as posted in NVIDIA/dcgm-exporter#604 and rossumai/nvgpu#6).
TEST_CASE("issue 38: NVML errors are read by their documented codes") {
  LogFolder logs;
  const Analysis lost = run({logs.Write("nvgpu.log",
                                        "    raise NVMLError(ret)\nNVMLError_GpuIsLost: GPU is "
                                        "lost\n")});
  REQUIRE(!lost.diagnoses.empty());
  CHECK(lost.diagnoses[0].failure->id == "gpu-off-bus");
  const Analysis handle = run(
      {logs.Write("nvidia-smi.txt",
                  "Unable to determine the device handle for GPU 000:BA:80.0: Unknown Error\n")});
  REQUIRE(!handle.diagnoses.empty());
  CHECK(handle.diagnoses[0].failure->id == "gpu-device-handle-unknown-error");
  const Analysis blocked = run({logs.Write(
      "smi.txt", "Failed to initialize NVML: GPU access blocked by the operating system\n")});
  REQUIRE(blocked.diagnoses.size() == 1);
  CHECK(blocked.diagnoses[0].failure->id == "gpu-not-visible");
  const Analysis denied =
      run({logs.Write("denied.txt", "Failed to initialize NVML: Insufficient Permissions\n")});
  REQUIRE(denied.diagnoses.size() == 1);
  CHECK(denied.diagnoses[0].failure->id == "nvml-error");
  CHECK(has_note(denied.diagnoses[0], "4 (NVML_ERROR_NO_PERMISSION)"));
}

// Issue 38, item 7: a driver line that names no GPU is about the one GPU its input's driver lines
// name (NVIDIA/open-gpu-kernel-modules#1200, verbatim); with two GPUs named, about neither.
TEST_CASE("issue 38: a driver line without a GPU joins the one GPU its input names") {
  LogFolder logs;
  const std::string one = logs.Write(
      "one.log",
      "NVRM: _kgspRpcRecvPoll: GSP RM heartbeat timed out\n"
      "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU "
      "Reset Required)\n");
  const Analysis single = run({one});
  REQUIRE(!single.diagnoses.empty());
  CHECK(single.diagnoses[0].gpu.pci == "0000:01:00.0");
  const std::string two = logs.Write(
      "two.log",
      "NVRM: _kgspRpcRecvPoll: GSP RM heartbeat timed out\n"
      "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU "
      "Reset Required)\n"
      "NVRM: Xid (PCI:0000:02:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU "
      "Reset Required)\n");
  const Analysis both = run({two});
  const bool heartbeat_on_a_gpu =
      std::any_of(both.diagnoses.begin(), both.diagnoses.end(), [](const Diagnosis& d) {
        return !d.gpu.pci.empty() &&
               std::any_of(d.evidence.begin(), d.evidence.end(), [](const Evidence& e) {
                 return e.signature.str() == "nvrm-gsp-heartbeat-timeout";
               });
      });
  CHECK_FALSE(heartbeat_on_a_gpu);
}

// Issue 38, item 6: an unknown line like a known failure's examples is named as probably that
// failure, in the unrecognised lines' note, never as a diagnosis of its own (the line as posted
// in antirez/ds4#621).
TEST_CASE("issue 38: the nearest known failure of an unrecognised line") {
  LogFolder logs;
  // The whole message is CUDA 700's, quoted behind a wrapper no signature knows: that error.
  const Analysis quoted = run({logs.Write(
      "server.log", "ds4: CUDA synchronize failed: an illegal memory access was encountered\n")});
  REQUIRE(quoted.diagnoses.size() == 1);
  CHECK(quoted.diagnoses[0].failure->id == "cuda-illegal-address");
  // The same line cut off inside the message: only a hint.
  const Analysis analysis =
      run({logs.Write("cut.log", "ds4: CUDA synchronize failed: an illegal memory access was\n")});
  REQUIRE(analysis.diagnoses.size() == 1);
  const Diagnosis& unrecognised = analysis.diagnoses[0];
  CHECK(unrecognised.failure->id == "unrecognised-errors");
  CHECK(has_note(unrecognised, "probably cuda-illegal-address"));
  // A C library message that is also CUDA's, in a line that names no part of the GPU stack, is
  // not CUDA's.
  const Analysis libc = run({logs.Write("mount.log", "mount: /mnt/data: invalid argument.\n")});
  for (const Diagnosis& d : libc.diagnoses) CHECK(d.failure->id != "cuda-error");
  // A driver notice of a healthy case, error-like to the fallback and like no failure, is named
  // as nothing.
  const Analysis other = run({logs.Write(
      "other.log",
      "NVRM: Persistence mode is deprecated and will be removed in a future release. Please use "
      "nvidia-persistenced instead.\n")});
  REQUIRE(!other.diagnoses.empty());
  CHECK_FALSE(has_note(other.diagnoses[0], "probably"));
}

// Issue 38 item 2: `dcgmi dmon` with the Xid field (230) among its columns, as NVIDIA/DCGM#263
// posted it: the Xid is read as the kernel's line of it would be, on the GPU the row names.
TEST_CASE("issue 38: a dcgmi dmon row's Xid field is that Xid on that GPU") {
  LogFolder logs;
  const Analysis analysis =
      run({logs.Write("dmon.txt", "#Entity    XIDER\nID\nGPU 1      120\nGPU 0      0\n")});
  REQUIRE(analysis.diagnoses.size() == 1);
  CHECK(analysis.diagnoses[0].failure->id == "gsp-error");
  CHECK(analysis.diagnoses[0].gpu.index == 1);
  CHECK(analysis.diagnoses[0].evidence.front().text.str() == "GPU 1      120");
}

// A generic class of unknown kind takes the kind DCGM's table gives the code its evidence names,
// by name or by the number a tool prints (aws/eks-node-monitoring-agent#39).
TEST_CASE("issue 38: a DCGM error code's documented kind is its diagnosis's kind") {
  LogFolder logs;
  const Analysis by_name = run({logs.Write(
      "health.txt",
      "ErrorCode:DCGM_FR_VOLATILE_DBE_DETECTED GPU:0 Detected 1 volatile double-bit ECC "
      "error(s) in GPU 0.\n")});
  REQUIRE(by_name.diagnoses.size() == 1);
  CHECK(by_name.diagnoses[0].failure->kind == ClassKind::kUnknown);
  CHECK(by_name.diagnoses[0].kind == ClassKind::kHardware);

  const Analysis by_number = run({logs.Write(
      "agent.log",
      "{\"msg\":\"sending condition to exporter\",\"condition\":{\"Reason\":\"DCGMHealthCode4\","
      "\"Message\":\"DCGM detected issues in health check system with error code 4\"}}\n")});
  REQUIRE(by_number.diagnoses.size() == 1);
  CHECK(by_number.diagnoses[0].failure->id == "dcgm-error-isolate");
  CHECK(by_number.diagnoses[0].kind == ClassKind::kHardware);
  CHECK(has_note(by_number.diagnoses[0], "DCGM_FR_VOLATILE_DBE_DETECTED"));
}

// The report opens on the initiating failure even when a collateral one is more severe: the
// job's CUDA illegal address (error) is the Xid 13 (warning) the kernel logged for the same
// kernel, as on a DGX Spark (antirez/ds4#621).
TEST_CASE("issue 38: a cause ranks before its collateral diagnoses") {
  LogFolder logs;
  const Analysis analysis = run(
      {logs.Write("kernel.log",
                  "NVRM: Xid (PCI:000f:01:00): 13, Graphics SM Warp Exception on (GPC 1, TPC 2, "
                  "SM 0): Out Of Range Address\n"),
       logs.Write("server.log",
                  "ds4: CUDA synchronize failed: an illegal memory access was encountered\n")});
  REQUIRE(analysis.diagnoses.size() == 2);
  CHECK(analysis.diagnoses[0].failure->id == "graphics-exception");
  CHECK(analysis.diagnoses[0].position == 1);
  CHECK(analysis.diagnoses[0].role == Role::kInitiating);
  CHECK(analysis.diagnoses[1].failure->id == "cuda-illegal-address");
  CHECK(analysis.diagnoses[1].caused_by == 1);
}
