// What happened first: ranks tied to GPUs, and collateral failures pointed at their cause.
#include "correlate/correlate.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "builtin_catalog.h"
#include "catalog/signatures.h"
#include "catalog/tables.h"
#include "log_folder.h"
#include "model/captures.h"
#include "pipeline/pipeline.h"
#include "report/report.h"

using namespace faultline;
namespace fs = std::filesystem;

namespace {

const Diagnosis* find(const Analysis& analysis, std::string_view id) {
  for (const Diagnosis& d : analysis.diagnoses) {
    if (d.failure->id == id) return &d;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("one GPU's uncontained ECC error, its rank's CUDA error, the other ranks' timeouts") {
  const fs::path logs =
      fs::temp_directory_path() / ("faultline-correlate-test-" + std::to_string(getpid()));
  fs::remove_all(logs);
  fs::create_directories(logs / "node-a");
  fs::create_directories(logs / "node-b");
  std::ofstream(logs / "node-a" / "kern.log")
      << "Jan 14 22:15:17 node-a kernel: [2437042.862382] NVRM: Xid (PCI:0000:4e:00): 95, "
         "pid=7062, name=python, Uncontained: FBHUB. RST: Yes, D-RST: No\n";
  std::ofstream(logs / "node-a" / "rank3.log")
      << "node-a:2231:2290 [3] NCCL INFO comm 0x5581e0a0c290 rank 3 nranks 16 cudaDev 3 nvmlDev 3 "
         "busId 4e000 commId 0x9c1b2a3d4e5f6071 - Init COMPLETE\n"
         "RuntimeError: CUDA error: uncorrectable ECC error encountered\n";
  // The CUDA error line carries no rank tag: rank3.log names it.
  std::ofstream(logs / "node-b" / "rank9.log")
      << "[rank9]:[E114 22:25:17.903881913 ProcessGroupNCCL.cpp:616] [Rank 9] Watchdog caught "
         "collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, "
         "NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.\n";
  const Analysis analysis = analyze({logs.string()}, catalog());
  fs::remove_all(logs);

  const Diagnosis* ecc = find(analysis, "ecc-uncontained");
  const Diagnosis* cuda = find(analysis, "cuda-ecc-error");
  const Diagnosis* timeout = find(analysis, "nccl-timeout");
  REQUIRE(ecc);
  REQUIRE(cuda);
  REQUIRE(timeout);
  // Rank 3's CUDA error is tied to the GPU its NCCL init line names, and caused by its fault.
  CHECK(cuda->gpu.pci == "0000:4e:00.0");
  CHECK(cuda->ranks == std::vector<int>{3});
  CHECK(cuda->role == Role::kCollateral);
  CHECK(cuda->caused_by == ecc->position);
  CHECK(std::any_of(cuda->notes.begin(), cuda->notes.end(), [](const std::string& note) {
    return note.find("rank 3 on node-a ran on GPU 0000:4e:00.0 (nccl-init-rank") !=
           std::string::npos;
  }));
  CHECK(ecc->position == 1);
  CHECK(ecc->role == Role::kInitiating);
  CHECK(ecc->host == "node-a");
  CHECK(timeout->host == "node-b");
  CHECK(timeout->role == Role::kCollateral);
  CHECK(timeout->caused_by == ecc->position);
  CHECK(timeout->ranks == std::vector<int>{9});
}

namespace {

const std::string kXid95At2215 =
    "Jan 14 22:15:17 node-a kernel: [2437042.862382] NVRM: Xid (PCI:0000:4e:00): 95, pid=7062, "
    "name=python, Uncontained: FBHUB. RST: Yes, D-RST: No\n";

std::string timeout_at(const std::string& hhmmss, int rank) {
  const std::string r = std::to_string(rank);
  return "[rank" + r + "]:[E114 " + hhmmss + ".903881913 ProcessGroupNCCL.cpp:616] [Rank " + r +
         "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, "
         "NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds "
         "before timing out.\n";
}

std::string timeout_role(const std::string& hhmmss, double clock_skew) {
  LogFolder job;
  job.Write("node-a/kern.log", kXid95At2215);
  job.Write("node-b/rank9.log", timeout_at(hhmmss, 9));
  const Analysis analysis = analyze({job.path()}, catalog(), {.clock_skew_seconds = clock_skew});
  const Diagnosis* timeout = find(analysis, "nccl-timeout");
  REQUIRE(timeout);
  return std::string(role_name(timeout->role));
}

}  // namespace

TEST_CASE("a cause cannot come after its symptom, beyond the clocks' skew") {
  CHECK(timeout_role("22:25:17", 5) == "collateral");  // ten minutes later: the usual timeout
  CHECK(timeout_role("22:10:00", 5) != "collateral");  // five minutes before the Xid
  CHECK(timeout_role("22:15:14", 5) == "collateral");  // 3 s before: within the skew
  CHECK(timeout_role("22:15:14", 0) != "collateral");
  // Three hours later is past what an NCCL timeout waits (symptom_within_s of the class).
  CHECK(timeout_role("01:15:17", 5) != "collateral");
}

TEST_CASE("a rank tagged only by its node-local rank is tied to its global rank and GPU") {
  LogFolder job;
  job.Write("node-a/train.log",
            "[default3]:node-a:2231:2290 [3] NCCL INFO ncclCommInitRank comm 0x5581e0a0c290 rank "
            "11 nranks 16 cudaDev 3 nvmlDev 3 busId 4e000 commId 0x9c1b2a3d4e5f6071 - Init "
            "COMPLETE\n"
            // A sub-communicator's line numbers its ranks its own way: not the job's rank.
            "[default5]:node-a:2233:2292 [5] NCCL INFO ncclCommSplit comm 0x5581e0a0d000 rank 3 "
            "nranks 4 cudaDev 5 nvmlDev 5 busId 9a000 parent 0x5581e0a0c290 color 1 key 3 - Init "
            "COMPLETE\n"
            "[default3]:RuntimeError: CUDA error: uncorrectable ECC error encountered\n");
  const Analysis analysis = analyze({job.path()}, catalog());
  const Diagnosis* cuda = find(analysis, "cuda-ecc-error");
  REQUIRE(cuda);
  CHECK(cuda->ranks == std::vector<int>{11});
  CHECK(cuda->gpu.pci == "0000:4e:00.0");
  CHECK(cuda->host == "node-a");
  // No kernel log of node-a was given: that is what is missing, with the command.
  REQUIRE(cuda->missing.size() == 1);
  CHECK(cuda->missing[0].find("No kernel log of node-a") != std::string::npos);
  CHECK(cuda->missing[0].find("journalctl -k") != std::string::npos);
  CHECK(cuda->missing[0].find("rank 11") != std::string::npos);
}

TEST_CASE("a file's own host names its lines, not the folder it was collected into") {
  LogFolder job;
  job.Write("collected-7/train.log",
            "gpu-node-7:2231:2290 [0] NCCL INFO ncclCommInitRank comm 0x5581e0a0c290 rank 0 "
            "nranks 2 cudaDev 0 nvmlDev 0 busId 18000 commId 0x9c1b2a3d4e5f6071 - Init COMPLETE\n"
            "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered\n");
  const Analysis analysis = analyze({job.path()}, catalog());
  REQUIRE(analysis.inputs.size() == 1);
  CHECK(analysis.inputs[0].host == "gpu-node-7");
  const Diagnosis* cuda = find(analysis, "cuda-illegal-address");
  REQUIRE(cuda);
  CHECK(cuda->host == "gpu-node-7");
  CHECK(cuda->gpu.pci == "0000:18:00.0");
  // --hostname names lines that name none, and still yields to the file's own host.
  const Analysis named = analyze({job.path()}, catalog(), {.host = "other"});
  CHECK(named.inputs[0].host == "gpu-node-7");
}

TEST_CASE("the rank the others waited for: behind in its enqueued works, or silent") {
  const auto work = [](int rank, int enqueued) {
    Event event;
    event.signature = "nccl-watchdog-work";
    event.host = rank < 8 ? "node-a" : "node-b";
    event.rank = rank;
    event.fields = {{"pg", "PG ID 0 PG GUID 0(default_pg)"},
                    {"last_enqueued", std::to_string(enqueued)}};
    event.evidence.line = 100 + static_cast<uint64_t>(rank);
    return event;
  };
  std::vector<Event> events;
  for (int rank = 0; rank < 16; ++rank) events.push_back(work(rank, rank == 6 ? 5120 : 5122));
  std::vector<Event> found = find_stragglers(events, {"nccl-timeout"});
  REQUIRE(found.size() == 1);
  CHECK(found[0].signature == derived::kRankBehind);
  CHECK(found[0].rank == 6);
  CHECK(found[0].evidence.line == 106);
  CHECK(found[0].fields.at("suspect") == "rank 6");
  CHECK(found[0].fields.at("last_enqueued") == "5120");
  CHECK(found[0].fields.at("others_enqueued") == "5122");

  // Half the job behind the other half names nobody.
  events.clear();
  for (int rank = 0; rank < 16; ++rank) events.push_back(work(rank, rank < 8 ? 5120 : 5122));
  CHECK(find_stragglers(events, {"nccl-timeout"}).empty());

  // Silent: 16 ranks by NCCL's init lines, 12 time out, node-b's ranks 12-15 say nothing.
  events.clear();
  for (int rank = 0; rank < 16; ++rank) {
    Event init;
    init.signature = "nccl-init-rank";
    init.host = rank < 12 ? "node-a" : "node-b";
    init.rank = rank;
    init.fields = {{"nranks", "16"}};
    events.push_back(init);
    if (rank < 12) {
      Event timeout;
      timeout.signature = "nccl-timeout";
      timeout.host = init.host;
      timeout.rank = rank;
      timeout.evidence.time = Timestamp::Absolute(1000.0 + rank, std::nullopt);
      timeout.evidence.line = 200 + static_cast<uint64_t>(rank);
      events.push_back(timeout);
    }
  }
  found = find_stragglers(events, {"nccl-timeout"});
  REQUIRE(found.size() == 1);
  CHECK(found[0].host == "node-b");
  CHECK_FALSE(found[0].rank);
  CHECK(found[0].fields.at("suspect") == "ranks 12-15 on node-b");
  CHECK(found[0].evidence.line == 200);  // the first timeout, when the silence showed
  CHECK(found[0].fields.at("timed_out") == "12");

  // Ranks whose output is not there are not silent: their logs are missing.
  std::erase_if(events, [](const Event& e) {
    return e.signature == "nccl-init-rank" && e.rank && *e.rank >= 12;
  });
  CHECK(find_stragglers(events, {"nccl-timeout"}).empty());
}

TEST_CASE(
    "Lightning's LOCAL_RANK / CUDA_VISIBLE_DEVICES line and a dump's index tie a rank to a GPU") {
  LogFolder job;
  job.Write("node-a/gpus.csv",
            "index, pci.bus_id, serial\n"
            "0, 00000000:18:00.0, 1652960339001\n"
            "1, 00000000:2A:00.0, 1652960339002\n");
  job.Write("node-a/rank1.log",
            "LOCAL_RANK: 1 - CUDA_VISIBLE_DEVICES: [0, 1]\n"
            "RuntimeError: CUDA error: an illegal memory access was encountered\n");
  const Analysis analysis = analyze({job.path()}, catalog());
  const Diagnosis* cuda = find(analysis, "cuda-illegal-address");
  REQUIRE(cuda);
  CHECK(cuda->gpu.pci == "0000:2a:00.0");  // the second visible device, for local rank 1
  CHECK(cuda->gpu.serial == "1652960339002");
  CHECK(cuda->ranks == std::vector<int>{1});
}

TEST_CASE("inputs read on several threads give what one thread gives") {
  const std::string job = FAULTLINE_SOURCE_DIR "/samples/job64-xid95";
  const Analysis one = analyze({job}, catalog(), {.threads = 1});
  for (const size_t threads : {2, 3, 8}) {
    const Analysis many = analyze({job}, catalog(), {.threads = threads});
    REQUIRE(many.inputs.size() == one.inputs.size());
    for (size_t i = 0; i < one.inputs.size(); ++i) CHECK(many.inputs[i].path == one.inputs[i].path);
    REQUIRE(many.events.size() == one.events.size());
    for (size_t i = 0; i < one.events.size(); ++i) {
      CHECK(many.events[i].evidence.path == one.events[i].evidence.path);
      CHECK(many.events[i].evidence.line == one.events[i].evidence.line);
      CHECK(many.events[i].signature == one.events[i].signature);
    }
    REQUIRE(many.diagnoses.size() == one.diagnoses.size());
    for (size_t i = 0; i < one.diagnoses.size(); ++i) {
      CHECK(many.diagnoses[i].failure->id == one.diagnoses[i].failure->id);
      CHECK(many.diagnoses[i].ranks == one.diagnoses[i].ranks);
      CHECK(many.diagnoses[i].evidence.size() == one.diagnoses[i].evidence.size());
    }
    CHECK(many.warnings == one.warnings);
  }
}

namespace {

// The built-in catalog with the watchdog's timeout signature under another id, and the
// `collective_timeout` key kept or dropped.
Catalog with_renamed_timeout(bool keep_role) {
  Catalog renamed;
  renamed.tables = builtin_tables();
  for (Table& table : renamed.tables) {
    if (!table.doc.contains("signatures")) continue;
    for (auto& signature : table.doc["signatures"]) {
      if (signature["id"] != "nccl-timeout") continue;
      signature["id"] = "site-watchdog-timeout";
      if (!keep_role) signature.erase("collective_timeout");
    }
    if (!table.doc.contains("classes")) continue;
    for (auto& failure : table.doc["classes"]) {
      for (auto& condition : failure["supported_by"]) {
        if (condition.value("signature", "") == "nccl-timeout") {
          condition["signature"] = "site-watchdog-timeout";
        }
      }
    }
  }
  std::string error;
  renamed.signatures = SignatureSet::Build(renamed.tables, &error);
  REQUIRE_MESSAGE(renamed.signatures, error);
  REQUIRE_MESSAGE(load_knowledge(renamed.tables, &renamed.knowledge, &error), error);
  return renamed;
}

}  // namespace

TEST_CASE("a table's collective_timeout signature finds the silent ranks under any id") {
  // 56 of 64 ranks time out; the 8 of gpu-node-104 printed none: they are the ones behind.
  const std::string job = FAULTLINE_SOURCE_DIR "/samples/job64-xid95";
  const Catalog renamed = with_renamed_timeout(true);
  const Analysis kept = analyze({job}, renamed);
  const Diagnosis* behind = find(kept, "nccl-rank-behind");
  REQUIRE(behind);
  CHECK(behind->host == "gpu-node-104");
  REQUIRE(find(kept, "nccl-timeout"));
  CHECK(find(kept, "nccl-timeout")->evidence.front().signature == "site-watchdog-timeout");
  // Without the key nothing says which events are collective timeouts.
  const Catalog unmarked = with_renamed_timeout(false);
  const Analysis dropped = analyze({job}, unmarked);
  CHECK_FALSE(find(dropped, "nccl-rank-behind"));
}

TEST_CASE("a folder that names a kind of log is not a host; an sosreport's hostname file is") {
  constexpr const char* kXid79 =
      "[ 4254.197860] NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', name=<unknown>, GPU has "
      "fallen off the bus.\n";
  LogFolder logs;
  logs.Write("kernel/dmesg.txt", kXid79);
  logs.Write("node17/kernel/dmesg.txt", kXid79);
  logs.Write("sosreport-a-2026/hostname", "gpu-node-7\n");
  logs.Write("sosreport-a-2026/sos_commands/kernel/dmesg", kXid79);
  const Analysis analysis = analyze({logs.path()}, catalog());
  std::set<std::string> hosts;
  for (const InputSummary& input : analysis.inputs) hosts.insert(input.host);
  CHECK(hosts == std::set<std::string>{"", "node17", "gpu-node-7"});
}

TEST_CASE("a dump that shows no address is kept, on the address another dump ties its index to") {
  auto state = [](std::optional<int> index, std::string pci) {
    GpuState s;
    s.host = "node-a";
    s.gpu.index = index;
    s.gpu.pci = std::move(pci);
    s.fields["remapped_rows.pending"] = "yes";
    return s;
  };
  // A dcgmi report names GPU 3 by id, a CSV query ties id 3 to its address; a pasted
  // `-q` section names nothing; dcgmi's GPU 0 has no address anywhere.
  const std::vector<GpuState> states = {state(3, ""), state(3, "0000:3b:00.0"),
                                        state(std::nullopt, ""), state(0, "")};
  const Correlation correlation = correlate({}, states, {});
  REQUIRE(correlation.gpus.size() == 3);
  CHECK(correlation.gpus[0].gpu.pci == "0000:3b:00.0");
  CHECK(correlation.gpus[0].states.size() == 2);
  CHECK(correlation.gpus[1].gpu.pci.empty());
  CHECK(!correlation.gpus[1].gpu.index);
  CHECK(correlation.gpus[1].states.size() == 1);
  CHECK(correlation.gpus[2].gpu.pci.empty());
  CHECK(correlation.gpus[2].gpu.index == 0);
}

// leptonai/gpud#80's `-q` fragment and stas00/ml-engineering's dcgmi diag row (both verbatim):
// neither shows an address, and each is still a diagnosis, of a GPU unknown or known by id.
TEST_CASE("a pasted Remapped Rows section and a dcgmi report are diagnosed without an address") {
  const fs::path logs =
      fs::temp_directory_path() / ("faultline-unaddressed-test-" + std::to_string(getpid()));
  fs::remove_all(logs);
  fs::create_directories(logs);
  std::ofstream(logs / "nvidia-smi-q.txt") << "    Remapped Rows\n"
                                              "        Correctable Error                 : 0\n"
                                              "        Uncorrectable Error               : 4\n"
                                              "        Pending                           : Yes\n";
  std::ofstream(logs / "dcgmi-diag.txt")
      << "|-----  Deployment  --------+------------------------------------------------|\n"
         "| Error                     | GPU 3 has uncorrectable memory errors and row  |\n"
         "|                           |  remappings are pending                        |\n";
  const Analysis analysis = analyze({logs.string()}, catalog());
  fs::remove_all(logs);
  std::vector<const Diagnosis*> pending;
  for (const Diagnosis& d : analysis.diagnoses) {
    if (d.failure->id == "row-remap-pending") pending.push_back(&d);
  }
  REQUIRE(pending.size() == 2);
  for (const Diagnosis* d : pending) CHECK(d->gpu.pci.empty());
  const auto by_id = std::find_if(pending.begin(), pending.end(),
                                  [](const Diagnosis* d) { return d->gpu.index == 3; });
  REQUIRE(by_id != pending.end());
  // The fix names the GPU by the id nvidia-smi -i takes.
  CHECK(std::any_of((*by_id)->fix.begin(), (*by_id)->fix.end(), [](const std::string& step) {
    return step.find("`nvidia-smi -r -i 3`") != std::string::npos;
  }));
  CHECK(std::any_of(pending.begin(), pending.end(),
                    [](const Diagnosis* d) { return !d->gpu.index; }));
}

namespace {

// Megatron-LM's iteration lines of one rank, tagged "[rankN]:", one a second from 16:00:00:
// a slowly falling loss with a little noise, 2.6 times higher for three iterations from
// `spike_at` (0: none).
std::string megatron_rank_log(int rank, int spike_at) {
  std::string log;
  for (int i = 1; i <= 300; ++i) {
    double loss = 3.0 - i * 0.002 + ((i * 7919) % 13 - 6) * 0.002;
    if (spike_at > 0 && i >= spike_at && i < spike_at + 3) loss *= 2.6;
    log += fmt::format(
        "[rank{}]: [2026-11-24 16:{:02}:{:02}] iteration {:>8}/  100000 | consumed samples: {:>12} "
        "| elapsed time per iteration (ms): 1000.0 | learning rate: 3.000000E-04 | global batch "
        "size:   256 | lm loss: {:.6E} | loss scale: 1.0 | grad norm: 1.500 | number of skipped "
        "iterations:   0 | number of nan iterations:   0 |\n",
        rank, i / 60, i % 60, i, i * 256, loss);
  }
  return log;
}

// NCCL's init lines of ranks 0 and 1 of a two-rank job on node-a: GPUs 0000:18:00.0, 0000:4e:00.0.
const std::string kTwoRankInit =
    "[rank0]: node-a:2231:2290 [0] NCCL INFO ncclCommInitRank comm 0x5581e0a0c290 rank 0 nranks 2 "
    "cudaDev 0 nvmlDev 0 busId 18000 commId 0x9c1b2a3d4e5f6071 - Init COMPLETE\n"
    "[rank1]: node-a:2232:2291 [1] NCCL INFO ncclCommInitRank comm 0x5581e0a0c390 rank 1 nranks 2 "
    "cudaDev 1 nvmlDev 1 busId 4e000 commId 0x9c1b2a3d4e5f6071 - Init COMPLETE\n";

// A row marked for remapping on each GPU of node-a: rank 0's at 16:02:00, rank 1's at 16:03:00.
const std::string kTwoRemaps =
    "Nov 24 16:02:00 node-a kernel: [376033.378125] NVRM: Xid (PCI:0000:18:00): 63, pid=2231, "
    "name=python, Row Remapper: New row (0x000000040d3e3720) marked for remapping, reset gpu to "
    "activate.\n"
    "Nov 24 16:03:00 node-a kernel: [376093.378125] NVRM: Xid (PCI:0000:4e:00): 63, pid=2232, "
    "name=python, Row Remapper: New row (0x000000040d3e3720) marked for remapping, reset gpu to "
    "activate.\n";

const Diagnosis* of_gpu(const Analysis& analysis, std::string_view id, std::string_view pci) {
  for (const Diagnosis& d : analysis.diagnoses) {
    if (d.failure->id == id && d.gpu.pci == pci) return &d;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("each rank logs its loss: a rank's spike is collateral of its own GPU's fault only") {
  LogFolder logs;
  logs.Write("node-a/kern.log", kTwoRemaps);
  // Rank 1 spikes at 16:03:20, after the remaps of both GPUs; rank 0's loss stays smooth.
  logs.Write("node-a/train.log",
             kTwoRankInit + megatron_rank_log(0, 0) + megatron_rank_log(1, 200));
  const Analysis analysis = analyze({logs.path()}, catalog());
  const Diagnosis* rank0 = of_gpu(analysis, "row-remap-pending", "0000:18:00.0");
  const Diagnosis* rank1 = of_gpu(analysis, "row-remap-pending", "0000:4e:00.0");
  REQUIRE(rank0);
  REQUIRE(rank1);
  CHECK(rank0->position < rank1->position);  // the earlier: what a job-wide link would take
  const Diagnosis* spike = find(analysis, "loss-spike");
  REQUIRE(spike);
  CHECK(spike->gpu.pci == "0000:4e:00.0");
  CHECK(spike->host == "node-a");
  CHECK(spike->ranks == std::vector<int>{1});
  CHECK(spike->role == Role::kCollateral);
  CHECK(spike->caused_by == rank1->position);
  CHECK(rank1->role == Role::kInitiating);
  CHECK(rank0->role == Role::kStandalone);
  CHECK(std::none_of(spike->notes.begin(), spike->notes.end(), [](const std::string& note) {
    return note.find("reduced loss") != std::string::npos;
  }));
  // Rank 0's loss did not spike: no loss anomaly is tied to its GPU.
  CHECK_FALSE(of_gpu(analysis, "loss-spike", "0000:18:00.0"));

  SUBCASE("fleet mode: the records say who logs the loss, and the link is the same") {
    std::ostringstream records;
    render_jsonl(analysis, records);
    LogFolder scanned;
    const Analysis central =
        analyze_records({scanned.Write("node-a.jsonl", records.str())}, catalog());
    REQUIRE(central.loss_loggers.size() == 2);
    const Diagnosis* again = find(central, "loss-spike");
    const Diagnosis* cause = of_gpu(central, "row-remap-pending", "0000:4e:00.0");
    REQUIRE(again);
    REQUIRE(cause);
    CHECK(again->gpu.pci == "0000:4e:00.0");
    CHECK(again->caused_by == cause->position);
  }

  SUBCASE("a fault of another GPU only does not explain a rank's own spike") {
    LogFolder other;
    other.Write("node-a/kern.log", kTwoRemaps.substr(0, kTwoRemaps.find("Nov 24 16:03:00")));
    other.Write("node-a/train.log",
                kTwoRankInit + megatron_rank_log(0, 0) + megatron_rank_log(1, 200));
    const Analysis alone = analyze({other.path()}, catalog());
    const Diagnosis* own = find(alone, "loss-spike");
    REQUIRE(own);
    CHECK(own->gpu.pci == "0000:4e:00.0");
    CHECK(own->role == Role::kStandalone);
    CHECK_FALSE(own->caused_by);
  }
}

TEST_CASE("only one rank logs the loss: the spike stays job-wide, and the report says why") {
  LogFolder logs;
  // Only rank 0's GPU faulted; the last rank (1) logs the job's reduced loss, which spikes.
  logs.Write("node-a/kern.log", kTwoRemaps.substr(0, kTwoRemaps.find("Nov 24 16:03:00")));
  logs.Write("node-a/train.log", kTwoRankInit + megatron_rank_log(1, 200));
  const Analysis analysis = analyze({logs.path()}, catalog());
  const Diagnosis* remap = of_gpu(analysis, "row-remap-pending", "0000:18:00.0");
  const Diagnosis* spike = find(analysis, "loss-spike");
  REQUIRE(remap);
  REQUIRE(spike);
  CHECK(spike->gpu.pci.empty());
  CHECK(spike->role == Role::kCollateral);
  CHECK(spike->caused_by == remap->position);
  CHECK(std::any_of(spike->notes.begin(), spike->notes.end(), [](const std::string& note) {
    return note ==
           "The loss is the job's reduced loss (only rank 1 logs it): linked job-wide, not to one "
           "GPU.";
  }));
}

// Issue 38 item 7: the device plugin names the GPU by UUID (once in full, once shortened as a
// poster would), the kernel by address, and a `-q` dump ties the two: one GPU, one finding.
TEST_CASE("one Xid seen by the kernel and by the device plugin under a UUID is one finding") {
  LogFolder logs;
  logs.Write("kern.log",
             "Jan 14 22:15:17 node-a kernel: [2437042.862382] NVRM: Xid (PCI:0000:84:00): 94, "
             "pid=7062, name=python, Contained: SM (0x1). RST: No, D-RST: No\n");
  logs.Write("nvidia-smi-q.txt",
             "Attached GPUs                       : 1\n"
             "GPU 00000000:84:00.0\n"
             "    Product Name                    : Tesla V100-PCIE-16GB\n"
             "    GPU UUID                        : GPU-1f2eba5a-54f6-7a53-978b-9ab84bd291c0\n");
  logs.Write("nvidia-device-plugin.log",
             "I0809 13:32:51.873541       1 health.go:185] XidCriticalError: Xid=94 on "
             "Device=GPU-1f2eba5a-54f6-7a53-978b-9ab84bd291c0; marking device as unhealthy.\n"
             "I0809 13:32:52.873541       1 health.go:185] XidCriticalError: Xid=94 on "
             "Device=GPU-1f2eba5a; marking device as unhealthy.\n");
  const Analysis analysis = analyze({logs.path()}, catalog());
  std::vector<const Diagnosis*> xid94;
  for (const Diagnosis& d : analysis.diagnoses) {
    if (d.severity >= Severity::kWarning) xid94.push_back(&d);
  }
  REQUIRE(xid94.size() == 1);
  CHECK(xid94[0]->gpu.pci == "0000:84:00.0");
  CHECK(xid94[0]->gpu.uuid == "GPU-1f2eba5a-54f6-7a53-978b-9ab84bd291c0");
  CHECK(xid94[0]->evidence.size() == 3);
}

TEST_CASE("a shortened UUID that begins two known UUIDs names neither") {
  auto event = [](std::string uuid) {
    Event e;
    e.signature = "k8s-device-plugin-xid";
    e.gpu.uuid = uuid;
    return e;
  };
  const std::vector<Event> events = {event("GPU-1f2eba5a-54f6-7a53-978b-9ab84bd291c0"),
                                     event("GPU-1f2eba5a-0000-7a53-978b-9ab84bd291c0"),
                                     event("GPU-1f2eba5a")};
  const Correlation correlation = correlate(events, {}, {});
  CHECK(correlation.gpus.size() == 2);
  REQUIRE(correlation.without_gpu.size() == 1);
  CHECK(correlation.without_gpu[0]->gpu.uuid == "GPU-1f2eba5a");
}
