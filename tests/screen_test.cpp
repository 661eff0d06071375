#include "catalog/screen.h"

#include <doctest/doctest.h>
#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <random>

#include "catalog/signatures.h"
#include "catalog/tables.h"
#include "pipeline/pipeline.h"

using faultline::LiteralScreen;

TEST_CASE("the literal screen passes lines that may match and stops the rest") {
  LiteralScreen screen;
  screen.Build({R"(NVRM: Xid \((?P<pci>[0-9a-f:]+)\): (?P<xid>\d+), )",
                R"(DRAM Retirement failed due to (.*) at (0x[0-9a-f]+))",
                R"(CUDA error: uncorrectable ECC error encountered)"});
  REQUIRE(screen.literals() > 0);
  CHECK(screen.MayMatch("[ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."));
  CHECK(screen.MayMatch("nvrm: xid (lowercase still passes: the screen ignores case"));
  CHECK(screen.MayMatch("RuntimeError: CUDA error: uncorrectable ECC error encountered"));
  CHECK(screen.MayMatch("x DRAM Retirement failed due to y at 0x1"));
  // Literals that are only required together with a stronger one do not open the screen.
  CHECK_FALSE(screen.MayMatch("the cat sat at the mat: (yes) - no"));
  CHECK_FALSE(screen.MayMatch(
      "audit: apparmor=\"STATUS\" profile=\"unconfined\" name=\"nvidia_modprobe\""));
  CHECK_FALSE(screen.MayMatch(""));
  CHECK_FALSE(screen.MayMatch("NV"));
}

TEST_CASE("a literal many patterns share still guards each of them") {
  // One RE2 prefilter over all patterns prunes a literal with many parents from their guards;
  // each Xid pattern would then be guarded by its "): NN" alone.
  std::vector<std::string> patterns;
  for (int xid : {13, 31, 43, 45, 48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 109, 119, 120, 154}) {
    patterns.push_back(R"(NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-f:.]+)\): )" + std::to_string(xid) +
                       ", ");
  }
  LiteralScreen screen;
  screen.Build(patterns);
  REQUIRE(screen.literals() > 0);
  CHECK(screen.MayMatch("NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."));
  CHECK_FALSE(screen.MayMatch("iteration 26/ 500000 | elapsed time per iteration (ms): 1375.2 |"));
}

TEST_CASE("the screen tells which groups of patterns a line may match") {
  LiteralScreen screen;
  screen.Build({R"(NVRM: Xid \((?P<pci>[0-9a-f:.]+)\): 79, )", R"(NVRM: GPU at PCI:)",
                R"((?i)\b(?:error|fail)(?:ed|ure)?\b)", R"(\bNVRM: )"},
               {1, 1, 2, 4});
  CHECK(screen.Groups("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.") == 5);
  CHECK(screen.Groups("mlx5_core 0000:8d:00.0: ACCESS_REG(0x805) op_mod(0x1) failed") == 2);
  CHECK(screen.Groups("NVRM: GPU at PCI:0000:3b:00: GPU-1 failed") == 7);
  CHECK(screen.Groups("NVRM: loading NVIDIA UNIX x86_64 Kernel Module") == 4);
  CHECK(screen.Groups("eth0: link up") == 0);
}

TEST_CASE("a literal too short for a four-byte anchor still screens") {
  LiteralScreen screen;
  screen.Build({R"(Xid\d+)", R"(NVRM: GPU at PCI:(?P<pci>[0-9a-f:.]+))"});
  REQUIRE(screen.literals() == 2);
  CHECK(screen.MayMatch("Xid79"));
  CHECK(screen.MayMatch("kernel: [ 1.0] NVRM: xid79 at the very end: XID"));
  CHECK(screen.MayMatch("nvrm: gpu at pci:0000:3b:00"));
  CHECK_FALSE(screen.MayMatch("Xi d and NVRM: GPU"));
  CHECK_FALSE(screen.MayMatch("xi"));
}

TEST_CASE("a pattern without a required literal turns the screen off") {
  LiteralScreen screen;
  screen.Build({"NVRM: Xid", R"(\d+:\d+)"});
  CHECK(screen.literals() == 0);
  CHECK(screen.MayMatch("anything at all"));
}

// The screen may pass lines no signature matches, but must never stop one that some signature
// does: checked on every example line of the catalog, moved to every offset of a vector block,
// cut, recased and with bytes replaced.
TEST_CASE("the screen never stops a line that a signature of the catalog matches") {
  faultline::Catalog catalog;
  std::string error;
  REQUIRE_MESSAGE(faultline::load_catalog({}, &catalog, &error), error);
  const auto& signatures = catalog.signatures->signatures();
  const LiteralScreen& screen = catalog.signatures->screen();
  REQUIRE(screen.literals() > 0);
  const auto any_matches = [&](const std::string& line) {
    return std::any_of(signatures.begin(), signatures.end(), [&](const auto& signature) {
      return RE2::PartialMatch(line, *signature->regex);
    });
  };
  std::mt19937 random(8);
  const auto pick = [&](size_t n) {
    return std::uniform_int_distribution<size_t>(0, n - 1)(random);
  };
  const std::string printable =
      " !\"#$%&'()*+,-./"
      "0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~";
  size_t checked = 0;
  for (const auto& signature : signatures) {
    for (const auto& example : signature->must_match) {
      std::vector<std::string> lines;
      for (size_t shift = 0; shift <= 70; ++shift) {
        lines.push_back(std::string(shift, 'k') + example.line + std::string(pick(40), 'k'));
      }
      for (int i = 0; i < 40; ++i) {
        std::string line = example.line;
        switch (i % 4) {
          case 0:
            line = line.substr(pick(line.size() + 1));
            break;
          case 1:
            line.resize(pick(line.size() + 1));
            break;
          case 2:
            for (char& c : line) {
              if (pick(2) == 0) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            }
            break;
          default:
            for (int k = 0; k < 3 && !line.empty(); ++k) {
              line[pick(line.size())] = printable[pick(printable.size())];
            }
        }
        lines.push_back(std::move(line));
      }
      for (const std::string& line : lines) {
        if (!any_matches(line)) continue;
        CAPTURE(line);
        CHECK(screen.MayMatch(line));
        ++checked;
      }
    }
  }
  CHECK(checked > 1000);
}
