#include "extract/screen.h"

#include <doctest/doctest.h>

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

TEST_CASE("a pattern without a required literal turns the screen off") {
  LiteralScreen screen;
  screen.Build({"NVRM: Xid", R"(\d+:\d+)"});
  CHECK(screen.literals() == 0);
  CHECK(screen.MayMatch("anything at all"));
}
