#include "state/state.h"

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

namespace faultline {
namespace {

std::vector<GpuState> Read(std::string_view text) {
  StateReader reader("node17/smi.txt");
  uint64_t number = 0;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    reader.Feed(text.substr(0, end), ++number);
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return reader.Finish();
}

// The field's value, or "<absent>".
std::string Field(const GpuState& state, const std::string& name) {
  const auto it = state.fields.find(name);
  return it == state.fields.end() ? "<absent>" : it->second;
}

// nvidia.md 4.1, verbatim (Azure/azhpc-diagnostics nvidia-smi-q.out, A100, driver 460.32.03).
constexpr std::string_view kA100 = R"(
==============NVSMI LOG==============

Timestamp                                 : Mon Oct 25 22:06:14 2021
Driver Version                            : 460.32.03
CUDA Version                              : 11.2

Attached GPUs                             : 8
GPU 00000001:00:00.0
    Product Name                          : A100-SXM4-40GB
...
    Serial Number                         : 1323120035212
    GPU UUID                              : GPU-b01e9f90-c60c-4ad1-2052-154833662357
    Minor Number                          : 0
...
    PCI
...
        Bus Id                            : 00000001:00:00.0
...
    Ecc Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
    Retired Pages
        Single Bit ECC                    : N/A
        Double Bit ECC                    : N/A
        Pending Page Blacklist            : N/A
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 0
        Pending                           : No
        Remapping Failure Occurred        : No
        Bank Remap Availability Histogram
            Max                           : 640 bank(s)
            High                          : 0 bank(s)
            Partial                       : 0 bank(s)
            Low                           : 0 bank(s)
            None                          : 0 bank(s)
    Temperature
)";

TEST_CASE("state: nvidia-smi -q A100 460.32.03 block") {
  const std::vector<GpuState> states = Read(kA100);
  REQUIRE(states.size() == 1);
  const GpuState& gpu = states[0];
  CHECK(gpu.gpu.pci == "0001:00:00.0");
  CHECK(gpu.gpu.product == "A100-SXM4-40GB");
  CHECK(gpu.gpu.serial == "1323120035212");
  CHECK(gpu.gpu.uuid == "GPU-b01e9f90-c60c-4ad1-2052-154833662357");
  CHECK(gpu.gpu.index == 0);
  CHECK(Field(gpu, "minor_number") == "0");
  CHECK(Field(gpu, "ecc.mode.current") == "enabled");
  CHECK(Field(gpu, "ecc.mode.pending") == "enabled");
  CHECK(Field(gpu, "ecc.errors.corrected.volatile.sram") == "0");
  CHECK(Field(gpu, "ecc.errors.uncorrected.aggregate.dram") == "0");
  CHECK(Field(gpu, "remapped_rows.correctable") == "0");
  CHECK(Field(gpu, "remapped_rows.uncorrectable") == "0");
  CHECK(Field(gpu, "remapped_rows.pending") == "no");
  CHECK(Field(gpu, "remapped_rows.failure") == "no");
  CHECK(Field(gpu, "remapped_rows.histogram.max") == "640");
  CHECK(Field(gpu, "remapped_rows.histogram.none") == "0");
  // Each field keeps the line that printed it.
  const auto pending = gpu.field_lines.find("remapped_rows.pending");
  REQUIRE(pending != gpu.field_lines.end());
  CHECK(pending->second.first == 41);
  CHECK(pending->second.second == "        Pending                           : No");
  CHECK(gpu.field_lines.size() == gpu.fields.size());
  // Retired Pages reads N/A on A100: the fields are absent.
  CHECK(Field(gpu, "retired_pages.sbe") == "<absent>");
  CHECK(Field(gpu, "retired_pages.pending") == "<absent>");
  CHECK(gpu.fields.size() == 20);

  CHECK(gpu.time.kind == Timestamp::Kind::kAbsolute);
  CHECK(gpu.time.seconds == 1635199574);  // 2021-10-25 22:06:14, read as UTC
  CHECK_FALSE(gpu.time.utc_offset_minutes.has_value());
  CHECK(gpu.source.path == "node17/smi.txt");
  CHECK(gpu.source.line == 9);
  CHECK(gpu.source.text == "GPU 00000001:00:00.0");
  CHECK(gpu.source.signature == "nvidia-smi-q");
}

// nvidia.md 4.3: the 535.129.03 reset block (verbatim) inside a GPU block, with recovery action.
TEST_CASE("state: 535 GPU Reset Status and recovery action") {
  const std::vector<GpuState> states = Read(R"(GPU 00000000:3B:00.0
    GPU Recovery Action                   : Drain and Reset
    GPU Reset Status
        Reset Required                    : No
        Drain and Reset Recommended       : Yes
)");
  REQUIRE(states.size() == 1);
  CHECK(states[0].gpu.pci == "0000:3b:00.0");
  CHECK(Field(states[0], "reset_status.reset_required") == "no");
  CHECK(Field(states[0], "reset_status.drain_and_reset_recommended") == "yes");
  CHECK(Field(states[0], "gpu_recovery_action") == "Drain and Reset");
  CHECK_FALSE(states[0].time.known());
}

// nvidia.md 4.3: 550.x H100 SRAM split, laid out as real 550 output prints it (the sources
// block is a sibling of Aggregate), with the `Unknown Error` readings 4.3 mentions.
TEST_CASE("state: 550 H100 SRAM split with Unknown Error") {
  const std::vector<GpuState> states = Read(R"(GPU 00000000:18:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    ECC Mode
        Current                           : Enabled
        Pending                           : Disabled
    ECC Errors
        Volatile
            SRAM Correctable              : 3
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : Unknown Error
            DRAM Correctable              : 12
            DRAM Uncorrectable            : 1
        Aggregate
            SRAM Correctable              : 5
            SRAM Uncorrectable Parity     : 2
            SRAM Uncorrectable SEC-DED    : 1
            DRAM Correctable              : 40
            DRAM Uncorrectable            : 4
            SRAM Threshold Exceeded       : Yes
        Aggregate Uncorrectable SRAM Sources
            SRAM L2                       : 2
            SRAM SM                       : 1
            SRAM Microcontroller          : 0
            SRAM PCIE                     : [Unknown Error]
            SRAM Other                    : 0
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 4
        Pending                           : Yes
        Remapping Failure Occurred        : Yes
        Bank Remap Availability Histogram
            Max                           : 2556 bank(s)
            High                          : 4 bank(s)
            Partial                       : 0 bank(s)
            Low                           : 0 bank(s)
            None                          : 0 bank(s)
)");
  REQUIRE(states.size() == 1);
  const GpuState& gpu = states[0];
  CHECK(gpu.gpu.product == "NVIDIA H100 80GB HBM3");
  CHECK(Field(gpu, "ecc.mode.pending") == "disabled");
  CHECK(Field(gpu, "ecc.errors.corrected.volatile.sram") == "3");
  CHECK(Field(gpu, "ecc.errors.uncorrected.volatile.sram.parity") == "0");
  CHECK(Field(gpu, "ecc.errors.uncorrected.volatile.sram.secded") == "<absent>");
  CHECK(Field(gpu, "ecc.errors.corrected.volatile.dram") == "12");
  CHECK(Field(gpu, "ecc.errors.uncorrected.volatile.dram") == "1");
  CHECK(Field(gpu, "ecc.errors.uncorrected.aggregate.sram.parity") == "2");
  CHECK(Field(gpu, "ecc.errors.uncorrected.aggregate.sram.secded") == "1");
  CHECK(Field(gpu, "ecc.errors.corrected.aggregate.dram") == "40");
  CHECK(Field(gpu, "ecc.errors.uncorrected.aggregate.dram") == "4");
  CHECK(Field(gpu, "ecc.errors.uncorrected.aggregate.sram.thresholdExceeded") == "yes");
  CHECK(Field(gpu, "ecc.errors.uncorrected.aggregate.sram.l2") == "2");
  CHECK(Field(gpu, "ecc.errors.uncorrected.aggregate.sram.sm") == "1");
  CHECK(Field(gpu, "ecc.errors.uncorrected.aggregate.sram.mcu") == "0");
  CHECK(Field(gpu, "ecc.errors.uncorrected.aggregate.sram.pcie") == "<absent>");
  CHECK(Field(gpu, "ecc.errors.uncorrected.aggregate.sram.other") == "0");
  CHECK(Field(gpu, "remapped_rows.uncorrectable") == "4");
  CHECK(Field(gpu, "remapped_rows.pending") == "yes");
  CHECK(Field(gpu, "remapped_rows.failure") == "yes");
  CHECK(Field(gpu, "remapped_rows.histogram.max") == "2556");
  CHECK(Field(gpu, "remapped_rows.histogram.high") == "4");
}

// nvidia.md 4.4: the V100 410.48 layout; its elided rows are written out with distinct values.
TEST_CASE("state: legacy single/double bit ECC layout and 410.x retired pages") {
  const std::vector<GpuState> states = Read(R"(GPU 00000000:00:1E.0
    Product Name                          : Tesla V100-PCIE-32GB
    Ecc Mode
        Current                           : Disabled
    ECC Errors
        Volatile
            Single Bit
                Device Memory             : 1
                Register File             : 2
                L1 Cache                  : 3
                L2 Cache                  : 4
                Texture Memory            : 5
                Texture Shared            : 6
                CBU                       : 7
                Total                     : 28
            Double Bit
                Device Memory             : 11
                Register File             : 0
                L1 Cache                  : 0
                L2 Cache                  : 0
                Texture Memory            : 0
                Texture Shared            : 0
                CBU                       : 0
                Total                     : 11
        Aggregate
            Single Bit
                Device Memory             : 101
                Total                     : 128
            Double Bit
                Device Memory             : 111
                Total                     : 112
    Retired Pages
        Single Bit ECC                    : 0
        Double Bit ECC                    : 2
        Pending                           : Yes
)");
  REQUIRE(states.size() == 1);
  const GpuState& gpu = states[0];
  CHECK(gpu.gpu.pci == "0000:00:1e.0");
  CHECK(Field(gpu, "ecc.mode.current") == "disabled");
  CHECK(Field(gpu, "ecc.errors.corrected.volatile.device_memory") == "1");
  CHECK(Field(gpu, "ecc.errors.corrected.volatile.register_file") == "2");
  CHECK(Field(gpu, "ecc.errors.corrected.volatile.l1_cache") == "3");
  CHECK(Field(gpu, "ecc.errors.corrected.volatile.l2_cache") == "4");
  CHECK(Field(gpu, "ecc.errors.corrected.volatile.texture_memory") == "5");
  CHECK(Field(gpu, "ecc.errors.corrected.volatile.texture_shared") == "6");
  CHECK(Field(gpu, "ecc.errors.corrected.volatile.cbu") == "7");
  CHECK(Field(gpu, "ecc.errors.corrected.volatile.total") == "28");
  CHECK(Field(gpu, "ecc.errors.uncorrected.volatile.device_memory") == "11");
  CHECK(Field(gpu, "ecc.errors.uncorrected.volatile.total") == "11");
  CHECK(Field(gpu, "ecc.errors.corrected.aggregate.device_memory") == "101");
  CHECK(Field(gpu, "ecc.errors.corrected.aggregate.total") == "128");
  CHECK(Field(gpu, "ecc.errors.uncorrected.aggregate.device_memory") == "111");
  CHECK(Field(gpu, "ecc.errors.uncorrected.aggregate.total") == "112");
  CHECK(Field(gpu, "retired_pages.sbe") == "0");
  CHECK(Field(gpu, "retired_pages.dbe") == "2");
  CHECK(Field(gpu, "retired_pages.pending") == "yes");
}

// nvidia.md 4.4: `-d PAGE_RETIREMENT`, 8x A100, 535.86.10; verbatim start, then a second GPU.
TEST_CASE("state: -d PAGE_RETIREMENT, several GPUs") {
  const std::vector<GpuState> states = Read(R"(
==============NVSMI LOG==============

Timestamp                                 : Thu Mar 14 20:45:34 2024
Driver Version                            : 535.86.10
CUDA Version                              : 12.2

Attached GPUs                             : 8
GPU 00000001:00:00.0
    Retired Pages
        Single Bit ECC                    : 0
        Double Bit ECC                    : 0
        Pending Page Blacklist            : No

GPU 00000002:00:00.0
    Retired Pages
        Single Bit ECC                    : 3
        Double Bit ECC                    : 1
        Pending Page Blacklist            : Yes
)");
  REQUIRE(states.size() == 2);
  CHECK(states[0].gpu.pci == "0001:00:00.0");
  CHECK(Field(states[0], "retired_pages.dbe") == "0");
  CHECK(Field(states[0], "retired_pages.pending") == "no");
  CHECK(states[1].gpu.pci == "0002:00:00.0");
  CHECK(states[1].source.line == 15);
  CHECK(Field(states[1], "retired_pages.sbe") == "3");
  CHECK(Field(states[1], "retired_pages.dbe") == "1");
  CHECK(Field(states[1], "retired_pages.pending") == "yes");
  CHECK(states[1].fields.size() == 3);
  CHECK(states[1].time.seconds == 1710449134);  // both GPUs share the dump's time
  CHECK(states[0].time.seconds == states[1].time.seconds);
}

// nvidia.md 4.3: `-d ROW_REMAPPER` prints the GPU line and Remapped Rows only, with the key
// column of recent drivers (':' near column 56); the second GPU has no row remapping.
TEST_CASE("state: -d ROW_REMAPPER, wide key column") {
  const std::vector<GpuState> states = Read(R"(GPU 00000000:3B:00.0
    Remapped Rows
        Correctable Error                              : 2
        Uncorrectable Error                            : 1
        Pending                                        : Yes
        Remapping Failure Occurred                     : No
        Bank Remap Availability Histogram
            Max                                        : 639 bank(s)
            High                                       : 1 bank(s)
            Partial                                    : 0 bank(s)
            Low                                        : 0 bank(s)
            None                                       : 0 bank(s)

GPU 00000000:3C:00.0
    Remapped Rows                                      : N/A
)");
  REQUIRE(states.size() == 2);
  CHECK(states[0].gpu.pci == "0000:3b:00.0");
  CHECK(Field(states[0], "remapped_rows.correctable") == "2");
  CHECK(Field(states[0], "remapped_rows.uncorrectable") == "1");
  CHECK(Field(states[0], "remapped_rows.pending") == "yes");
  CHECK(Field(states[0], "remapped_rows.failure") == "no");
  CHECK(Field(states[0], "remapped_rows.histogram.max") == "639");
  CHECK(Field(states[0], "remapped_rows.histogram.high") == "1");
  CHECK(states[1].gpu.pci == "0000:3c:00.0");
  CHECK(states[1].fields.empty());
}

// nvidia.md 4.3: a Blackwell-era `-q -d ECC` excerpt pasted without its GPU line.
TEST_CASE("state: header-less -d ECC excerpt with Blackwell repair flags") {
  const std::vector<GpuState> states = Read(R"(my-user@gpu-node-a:~$ nvidia-smi -i 1 -q -d ECC
ECC Mode
    Current                  : Enabled
    Pending                  : Enabled
ECC Errors
    Volatile
        SRAM Correctable     : 0
        DRAM Correctable     : 0
        DRAM Uncorrectable   : 2
    Aggregate
        DRAM Uncorrectable   : 2
    Channel Repair Pending   : Yes
    TPC Repair Pending       : No
    Unrepairable Memory      : No
The aggregate count equals the volatile one. A week later:
ECC Errors
    Volatile
        DRAM Uncorrectable   : 9
)");
  // The prose line ends the first excerpt, so the second is a snapshot of its own.
  REQUIRE(states.size() == 2);
  CHECK(states[1].source.line == 16);
  CHECK(Field(states[1], "ecc.errors.uncorrected.volatile.dram") == "9");
  const GpuState& gpu = states[0];
  CHECK(gpu.gpu.pci.empty());
  CHECK(gpu.source.line == 2);
  CHECK(gpu.source.text == "ECC Mode");
  CHECK(Field(gpu, "ecc.mode.current") == "enabled");
  CHECK(Field(gpu, "ecc.errors.uncorrected.volatile.dram") == "2");
  CHECK(Field(gpu, "ecc.errors.uncorrected.aggregate.dram") == "2");
  CHECK(Field(gpu, "channel_repair_pending") == "yes");
  CHECK(Field(gpu, "tpc_repair_pending") == "no");
  CHECK(Field(gpu, "unrepairable_memory") == "no");
  CHECK(gpu.fields.size() == 9);
}

TEST_CASE("state: a dump between a shell prompt and unrelated text") {
  const std::vector<GpuState> states =
      Read(R"([Tue Mar  5 10:12:33 2024] NVRM: Xid (PCI:0000:3b:00): 64
root@node17:~# nvidia-smi -q -d ROW_REMAPPER

==============NVSMI LOG==============

Timestamp                                 : Tue Mar  5 10:12:40 2024
Driver Version                            : 535.129.03

Attached GPUs                             : 1
GPU 00000000:3B:00.0
    Remapped Rows
        Pending                           : No
        Remapping Failure Occurred        : Yes
root@node17:~# echo done
    Pending                               : Yes
Traceback (most recent call last):
  File "train.py", line 12, in <module>
)");
  REQUIRE(states.size() == 1);
  CHECK(states[0].gpu.pci == "0000:3b:00.0");
  CHECK(states[0].source.line == 10);
  CHECK(states[0].time.seconds == 1709633560);  // 2024-03-05 10:12:40
  CHECK(Field(states[0], "remapped_rows.failure") == "yes");
  // The indented line after the prompt belongs to no dump.
  CHECK(Field(states[0], "remapped_rows.pending") == "no");
}

TEST_CASE("state: two dumps in one input give two snapshots in order") {
  const std::vector<GpuState> states = Read(R"($ nvidia-smi -q -d ROW_REMAPPER
==============NVSMI LOG==============
Timestamp                                 : Mon Oct 25 22:06:14 2021
GPU 00000000:3B:00.0
    Remapped Rows
        Pending                           : Yes
$ sudo nvidia-smi -r -i 0
GPU 00000000:3B:00.0 was successfully reset.
All done.
$ nvidia-smi -q -d ROW_REMAPPER
==============NVSMI LOG==============
Timestamp                                 : Mon Oct 25 22:16:14 2021
GPU 00000000:3B:00.0
    Remapped Rows
        Pending                           : No
)");
  REQUIRE(states.size() == 2);
  CHECK(states[0].source.line == 4);
  CHECK(Field(states[0], "remapped_rows.pending") == "yes");
  CHECK(states[1].source.line == 13);
  CHECK(Field(states[1], "remapped_rows.pending") == "no");
  CHECK(states[1].time.seconds - states[0].time.seconds == 600);
}

TEST_CASE("state: a dump without its Timestamp after another has no time") {
  const std::vector<GpuState> states =
      Read(R"(Timestamp                                 : Mon Oct 25 22:06:14 2021
GPU 00000000:3B:00.0
    Remapped Rows
        Pending                           : Yes
$ nvidia-smi -q -d ROW_REMAPPER | grep -A3 GPU
GPU 00000000:3B:00.0
    Remapped Rows
        Pending                           : No
)");
  REQUIRE(states.size() == 2);
  CHECK(states[0].time.known());
  CHECK_FALSE(states[1].time.known());
}

TEST_CASE("state: an indented paste reads as the same dump") {
  const std::vector<GpuState> states = Read(R"(    Attached GPUs                             : 1
    GPU 00000000:12:00.0
        ECC Errors
            Volatile
                DRAM Uncorrectable            : 7
)");
  REQUIRE(states.size() == 1);
  CHECK(states[0].gpu.pci == "0000:12:00.0");
  CHECK(Field(states[0], "ecc.errors.uncorrected.volatile.dram") == "7");
}

TEST_CASE("state: absurd and unavailable values leave fields absent") {
  const std::vector<GpuState> states = Read(R"(GPU 00000000:3B:00.0
    Minor Number                          : 99999999999999999999
    ECC Errors
        Volatile
            SRAM Correctable              : 18446744073709551615
            SRAM Uncorrectable            : 18446744073709551616
            DRAM Correctable              : -1
            DRAM Uncorrectable            : 123456789012345678901234567890
        Aggregate
            SRAM Correctable              : 007
            DRAM Correctable              : [Not Supported]
            DRAM Uncorrectable            : Not Supported
    Remapped Rows
        Pending                           : Maybe
        Remapping Failure Occurred        :
        Correctable Error                 : many
    GPU Reset Status
        Reset Required                    : Enabled
)");
  REQUIRE(states.size() == 1);
  const GpuState& gpu = states[0];
  CHECK_FALSE(gpu.gpu.index.has_value());
  CHECK(Field(gpu, "ecc.errors.corrected.volatile.sram") == "18446744073709551615");
  CHECK(Field(gpu, "ecc.errors.corrected.aggregate.sram") == "7");
  CHECK(gpu.fields.size() == 2);
}

TEST_CASE("state: CSV with header, as documented") {
  const std::vector<GpuState> states = Read(
      R"(root@node17:~# nvidia-smi --query-remapped-rows=gpu_bus_id,gpu_uuid,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure --format=csv
gpu_bus_id, gpu_uuid, remapped_rows.correctable, remapped_rows.uncorrectable, remapped_rows.pending, remapped_rows.failure
00000000:3B:00.0, GPU-3f2a91c0-..., 0, 3, Yes, No
00000000:3C:00.0, GPU-8b1c22d4-..., 1, 0, No, Yes
root@node17:~#
)");
  REQUIRE(states.size() == 2);
  CHECK(states[0].gpu.pci == "0000:3b:00.0");
  CHECK(states[0].gpu.uuid == "GPU-3f2a91c0-...");
  CHECK(Field(states[0], "remapped_rows.correctable") == "0");
  CHECK(Field(states[0], "remapped_rows.uncorrectable") == "3");
  CHECK(Field(states[0], "remapped_rows.pending") == "yes");
  CHECK(Field(states[0], "remapped_rows.failure") == "no");
  CHECK(states[0].fields.size() == 4);
  CHECK(states[0].field_lines.at("remapped_rows.pending").first == 3);
  CHECK(states[0].source.line == 3);
  CHECK(states[0].source.text == "00000000:3B:00.0, GPU-3f2a91c0-..., 0, 3, Yes, No");
  CHECK(states[0].source.signature == "nvidia-smi-csv");
  CHECK_FALSE(states[0].time.known());
  CHECK(states[1].gpu.pci == "0000:3c:00.0");
  CHECK(Field(states[1], "remapped_rows.failure") == "yes");
}

// nvidia.md 4.5, verbatim (Azure/azhpc-diagnostics mock: bare commas, `[N/A]`).
TEST_CASE("state: CSV with [N/A] and bare commas") {
  const std::vector<GpuState> states = Read(
      R"(index,serial,pci.domain,retired_pages.dbe,retired_pages.sbe,remapped_rows.failure,gpu_bus_id
0,0000000000001,0x0001,0,0,[N/A],00000001:00:00.0
)");
  REQUIRE(states.size() == 1);
  const GpuState& gpu = states[0];
  CHECK(gpu.gpu.index == 0);
  CHECK(gpu.gpu.serial == "0000000000001");
  CHECK(gpu.gpu.pci == "0001:00:00.0");
  CHECK(Field(gpu, "pci.domain") == "0x0001");
  CHECK(Field(gpu, "retired_pages.dbe") == "0");
  CHECK(Field(gpu, "retired_pages.sbe") == "0");
  CHECK(Field(gpu, "remapped_rows.failure") == "<absent>");
  CHECK(gpu.fields.size() == 3);
}

TEST_CASE("state: CSV header with units, long field aliases and a timestamp") {
  const std::vector<GpuState> states = Read(
      R"(timestamp, index, name, pci.bus_id, memory.used [MiB], retired_pages.single_bit_ecc.count, retired_pages.double_bit.count, ecc.mode.current
2021/10/25 22:06:14.500, 3, NVIDIA A100-SXM4-80GB, 00000000:3B:00.0, 81559 MiB, 2, 1, Enabled
)");
  REQUIRE(states.size() == 1);
  const GpuState& gpu = states[0];
  CHECK(gpu.gpu.index == 3);
  CHECK(gpu.gpu.product == "NVIDIA A100-SXM4-80GB");
  CHECK(gpu.gpu.pci == "0000:3b:00.0");
  CHECK(Field(gpu, "memory.used") == "81559 MiB");
  CHECK(Field(gpu, "retired_pages.sbe") == "2");
  CHECK(Field(gpu, "retired_pages.dbe") == "1");
  CHECK(Field(gpu, "ecc.mode.current") == "enabled");
  CHECK(gpu.time.seconds == doctest::Approx(1635199574.5));
  CHECK(gpu.source.time.seconds == gpu.time.seconds);
}

TEST_CASE("state: CSV noheader after the pasted command, 0/1 flags") {
  const std::vector<GpuState> states = Read(
      R"($ nvidia-smi --query-remapped-rows=remapped_rows.failure,gpu_bus_id --format=csv,noheader
1, 00000001:00:00.0
0, 00000002:00:00.0

0, 00000003:00:00.0
)");
  REQUIRE(states.size() == 2);
  CHECK(states[0].gpu.pci == "0001:00:00.0");
  CHECK(Field(states[0], "remapped_rows.failure") == "yes");
  CHECK(states[1].gpu.pci == "0002:00:00.0");
  CHECK(Field(states[1], "remapped_rows.failure") == "no");
}

TEST_CASE("state: CSV noheader without its command, and prose, are ignored") {
  const std::vector<GpuState> states = Read(R"(1, 00000001:00:00.0
0, 00000002:00:00.0
name, value
alpha, beta
index, name
0, NVIDIA A100
)");
  CHECK(states.empty());
}

TEST_CASE("state: a CSV block ends at a row that does not fit") {
  const std::vector<GpuState> states = Read(R"(gpu_bus_id, remapped_rows.pending
00000000:3B:00.0, Yes
00000000:3E:00.0,
Note, this host was drained
00000000:3C:00.0, No, extra
00000000:3D:00.0, No
)");
  REQUIRE(states.size() == 2);
  CHECK(states[0].gpu.pci == "0000:3b:00.0");
  // An empty cell is a value nvidia-smi could not give, not the end of the block.
  CHECK(states[1].gpu.pci == "0000:3e:00.0");
  CHECK(states[1].fields.empty());
}

TEST_CASE("state: -q and CSV snapshots keep input order") {
  const std::vector<GpuState> states = Read(R"(GPU 00000000:3B:00.0
    Remapped Rows
        Pending                           : Yes
gpu_bus_id, remapped_rows.pending
00000000:3C:00.0, No
GPU 00000000:3D:00.0
    Remapped Rows
        Pending                           : No
)");
  REQUIRE(states.size() == 3);
  CHECK(states[0].gpu.pci == "0000:3b:00.0");
  CHECK(states[1].gpu.pci == "0000:3c:00.0");
  CHECK(states[1].source.signature == "nvidia-smi-csv");
  CHECK(states[2].gpu.pci == "0000:3d:00.0");
}

}  // namespace
}  // namespace faultline
