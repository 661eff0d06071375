// What happened first: ranks tied to GPUs, and collateral failures pointed at their cause.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "diagnose/analysis.h"

using namespace faultline;
namespace fs = std::filesystem;

namespace {

const Catalog& catalog() {
  static const Catalog* loaded = [] {
    auto* c = new Catalog();
    std::string error;
    REQUIRE(load_catalog({}, c, &error));
    return c;
  }();
  return *loaded;
}

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
  CHECK(cuda->role == "collateral");
  CHECK(cuda->caused_by == ecc->position);
  CHECK(std::any_of(cuda->notes.begin(), cuda->notes.end(), [](const std::string& note) {
    return note.find("rank 3 on node-a ran on GPU 0000:4e:00.0 (nccl-init-rank") !=
           std::string::npos;
  }));
  CHECK(ecc->position == 1);
  CHECK(ecc->role == "initiating");
  CHECK(ecc->host == "node-a");
  CHECK(timeout->host == "node-b");
  CHECK(timeout->role == "collateral");
  CHECK(timeout->caused_by == ecc->position);
  CHECK(timeout->ranks == std::vector<int>{9});
}
