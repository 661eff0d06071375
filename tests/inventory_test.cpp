// A GPU the host has (lspci, the driver's lines) that nvidia-smi does not list.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "builtin_catalog.h"
#include "catalog/tables.h"
#include "pipeline/pipeline.h"
#include "state/state.h"

using namespace faultline;
namespace fs = std::filesystem;

namespace {

// Two V100s on the bus (AliyunContainerService/gpushare-scheduler-extender#175).
constexpr std::string_view kLspci =
    "2d:00.0 3D controller: NVIDIA Corporation GV100GL [Tesla V100 SXM2 32GB] (rev a1)\n"
    "32:00.0 3D controller: NVIDIA Corporation GV100GL [Tesla V100 SXM2 32GB] (rev a1)\n";
constexpr std::string_view kFirst =
    "GPU 0: Tesla V100-SXM2-32GB (UUID: GPU-b614723c-e261-4605-066e-79daab4c00ff)\n";
constexpr std::string_view kSecond =
    "GPU 1: Tesla V100-SXM2-32GB (UUID: GPU-e52dfcc4-406d-a3d4-f787-4402b535877a)\n";
constexpr std::string_view kFirstAddress =
    "NVRM: GPU at PCI:0000:2d:00: GPU-b614723c-e261-4605-066e-79daab4c00ff\n";

Analysis analyze_text(std::string_view text) {
  const fs::path path =
      fs::temp_directory_path() / ("faultline-inventory-test-" + std::to_string(getpid()));
  std::ofstream(path) << text;
  Analysis analysis = analyze({path.string()}, catalog());
  fs::remove(path);
  return analysis;
}

const Diagnosis* find(const Analysis& analysis, std::string_view id) {
  for (const Diagnosis& d : analysis.diagnoses) {
    if (d.failure->id == id) return &d;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("inventory: nvidia-smi -L lines are listed GPUs; MIG lines are not") {
  StateReader reader("smi.txt");
  uint64_t line = 0;
  for (std::string_view text :
       {"GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-9c73eb7b-8d6d-6c0e-dc13-97873e2ede40)",
        "  MIG 1g.10gb     Device  0: (UUID: MIG-a686709d-6dc2-542a-8851-0d2508448c10)",
        "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-c92e2d5d-4a69-f1cd-4df0-305f8606705a)"}) {
    reader.Feed(text, ++line);
  }
  const std::vector<GpuState> states = reader.Finish();
  REQUIRE(states.size() == 2);
  CHECK(states[0].source.signature == "nvidia-smi-L");
  CHECK(states[0].gpu.index == 0);
  CHECK(states[0].gpu.product == "NVIDIA A100-SXM4-80GB");
  CHECK(states[0].gpu.uuid == "GPU-9c73eb7b-8d6d-6c0e-dc13-97873e2ede40");
  CHECK(states[1].gpu.index == 1);
  CHECK(states[1].source.line == 3);
  CHECK(states[1].fields.empty());
}

TEST_CASE("inventory: the GPU nvidia-smi does not list is named by its address") {
  const Analysis analysis =
      analyze_text(std::string(kLspci) + std::string(kFirstAddress) + std::string(kFirst));
  const Diagnosis* missing = find(analysis, "gpu-missing-from-nvidia-smi");
  REQUIRE(missing);
  CHECK(missing->gpu.pci == "0000:32:00.0");
  REQUIRE(!missing->evidence.empty());
  CHECK(missing->evidence[0].text.starts_with("32:00.0 3D controller"));
}

TEST_CASE("inventory: without the listed GPUs' addresses, the counts") {
  const Analysis analysis = analyze_text(std::string(kLspci) + std::string(kFirst));
  const Diagnosis* missing = find(analysis, "gpu-missing-from-nvidia-smi");
  REQUIRE(missing);
  CHECK(missing->gpu.pci.empty());
  bool counted = false;
  for (const faultline::SharedText& note : missing->notes) {
    counted = counted || note.find(
                             "GPUs nvidia-smi lists: 1; GPUs the logs name on this host (lspci, "
                             "the driver's lines): 2") != std::string::npos;
  }
  CHECK(counted);
}

TEST_CASE("inventory: every GPU listed, or only one side shown: nothing") {
  CHECK_FALSE(find(analyze_text(std::string(kLspci) + std::string(kFirst) + std::string(kSecond)),
                   "gpu-missing-from-nvidia-smi"));
  CHECK_FALSE(find(analyze_text(kLspci), "gpu-missing-from-nvidia-smi"));
  CHECK_FALSE(find(analyze_text(std::string(kFirst) + std::string(kSecond)),
                   "gpu-missing-from-nvidia-smi"));
}

TEST_CASE("inventory: a GPU the driver could not initialise is the cause of its absence") {
  const Analysis analysis =
      analyze_text(std::string(kLspci) + std::string(kFirstAddress) +
                   "[   88.583480] NVRM: GPU 0000:32:00.0: RmInitAdapter failed! "
                   "(0x62:0x40:2168)\n" +
                   std::string(kFirst));
  const Diagnosis* init = find(analysis, "gpu-init-failure");
  const Diagnosis* missing = find(analysis, "gpu-missing-from-nvidia-smi");
  REQUIRE(init);
  REQUIRE(missing);
  CHECK(missing->gpu.pci == "0000:32:00.0");
  CHECK(missing->role == Role::kCollateral);
  CHECK(missing->caused_by == init->position);
}

TEST_CASE("inventory: an nvidia-smi -q dump lists its GPUs by address") {
  const Analysis analysis = analyze_text(std::string(kLspci) +
                                         "Attached GPUs                             : 1\n"
                                         "GPU 00000000:2D:00.0\n"
                                         "    Product Name                          : Tesla "
                                         "V100-SXM2-32GB\n");
  const Diagnosis* missing = find(analysis, "gpu-missing-from-nvidia-smi");
  REQUIRE(missing);
  CHECK(missing->gpu.pci == "0000:32:00.0");
}
