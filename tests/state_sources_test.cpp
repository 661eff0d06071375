// The state readers of issue 4: nvidia-smi -q -x XML, dcgm-exporter scrapes, dcgmi health and
// diag reports (text and JSON), and nvidia-bug-report bundles; and the agreement of every shape
// that describes one GPU.
#include <doctest/doctest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/signatures.h"
#include "catalog/tables.h"
#include "extract/extract.h"
#include "pipeline/pipeline.h"
#include "source/source.h"
#include "state/csv.h"
#include "state/dcgmi.h"
#include "state/exporter.h"
#include "state/query.h"
#include "state/state.h"
#include "state/xml.h"

namespace faultline {
namespace {

std::vector<GpuState> Read(std::string_view text) {
  StateReader reader("node17/dump.txt");
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

// The 1-based number of the first line of `text` that contains `needle`, or 0.
uint64_t LineOf(std::string_view text, std::string_view needle) {
  uint64_t number = 1;
  for (size_t start = 0; start <= text.size(); ++number) {
    const size_t end = std::min(text.find('\n', start), text.size());
    if (text.substr(start, end - start).find(needle) != std::string_view::npos) return number;
    start = end + 1;
  }
  return 0;
}

// Where the field was read: its line number, or 0.
uint64_t FieldLine(const GpuState& state, const std::string& name) {
  const auto it = state.field_lines.find(name);
  return it == state.field_lines.end() ? 0 : it->second.first;
}

// ---------------------------------------------------------------------------------------------
// One GPU, four shapes.
//
// An H100 on a 575 driver with pending row remaps, described by `nvidia-smi -q` (nvidia.md 4.1
// layout with the 550+ SRAM split of 4.3), `nvidia-smi -q -x` (bundles.md 2.1 envelope and the
// 570/575 element set of 2.3-2.4), `--query-gpu` and `--query-remapped-rows` CSV (nvidia.md
// 4.5), and a dcgm-exporter scrape (bundles.md 4, nvidia.md 5.4). Values are the same GPU's;
// the layouts are the documented ones.

constexpr std::string_view kSameGpuQuery = R"(
==============NVSMI LOG==============

Timestamp                                 : Tue Mar  5 10:12:33 2024
Driver Version                            : 575.51.02
CUDA Version                              : 12.9

Attached GPUs                             : 1
GPU 00000000:3B:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Serial Number                         : 1654123012345
    GPU UUID                              : GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd
    Minor Number                          : 2
    GPU Recovery Action                   : None
    PCI
        Bus                               : 0x3B
        Device                            : 0x00
        Domain                            : 0x0000
        Bus Id                            : 00000000:3B:00.0
    ECC Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 0
            DRAM Correctable              : 12
            DRAM Uncorrectable            : 3
        Aggregate
            SRAM Correctable              : 2
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 1
            DRAM Correctable              : 40
            DRAM Uncorrectable            : 5
            SRAM Threshold Exceeded       : No
        Aggregate Uncorrectable SRAM Sources
            SRAM L2                       : 1
            SRAM SM                       : 0
            SRAM Microcontroller          : 0
            SRAM PCIE                     : 0
            SRAM Other                    : 0
    Retired Pages
        Single Bit ECC                    : N/A
        Double Bit ECC                    : N/A
        Pending Page Blacklist            : N/A
    Remapped Rows
        Correctable Error                 : 1
        Uncorrectable Error               : 5
        Pending                           : Yes
        Remapping Failure Occurred        : No
        Bank Remap Availability Histogram
            Max                           : 2554 bank(s)
            High                          : 4 bank(s)
            Partial                       : 2 bank(s)
            Low                           : 0 bank(s)
            None                          : 0 bank(s)
    Temperature
        GPU Current Temp                  : 34 C
)";

constexpr std::string_view kSameGpuXml = R"(<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
	<timestamp>Tue Mar  5 10:12:33 2024</timestamp>
	<driver_version>575.51.02</driver_version>
	<cuda_version>12.9</cuda_version>
	<attached_gpus>1</attached_gpus>
	<gpu id="00000000:3B:00.0">
		<product_name>NVIDIA H100 80GB HBM3</product_name>
		<product_brand>NVIDIA</product_brand>
		<product_architecture>Hopper</product_architecture>
		<mig_mode>
			<current_mig>Disabled</current_mig>
			<pending_mig>Disabled</pending_mig>
		</mig_mode>
		<mig_devices>
			None
		</mig_devices>
		<serial>1654123012345</serial>
		<uuid>GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd</uuid>
		<minor_number>2</minor_number>
		<gpu_reset_status>
			<reset_required>Requested functionality has been deprecated</reset_required>
			<drain_and_reset_recommended>Requested functionality has been deprecated</drain_and_reset_recommended>
		</gpu_reset_status>
		<gpu_recovery_action>None</gpu_recovery_action>
		<pci>
			<pci_bus>3B</pci_bus>
			<pci_device>00</pci_device>
			<pci_domain>0000</pci_domain>
			<pci_bus_id>00000000:3B:00.0</pci_bus_id>
		</pci>
		<ecc_mode>
			<current_ecc>Enabled</current_ecc>
			<pending_ecc>Enabled</pending_ecc>
		</ecc_mode>
		<ecc_errors>
			<volatile>
				<sram_correctable>0</sram_correctable>
				<sram_uncorrectable_parity>0</sram_uncorrectable_parity>
				<sram_uncorrectable_secded>0</sram_uncorrectable_secded>
				<dram_correctable>12</dram_correctable>
				<dram_uncorrectable>3</dram_uncorrectable>
			</volatile>
			<aggregate>
				<sram_correctable>2</sram_correctable>
				<sram_uncorrectable_parity>0</sram_uncorrectable_parity>
				<sram_uncorrectable_secded>1</sram_uncorrectable_secded>
				<dram_correctable>40</dram_correctable>
				<dram_uncorrectable>5</dram_uncorrectable>
				<sram_threshold_exceeded>No</sram_threshold_exceeded>
			</aggregate>
			<aggregate_uncorrectable_sram_sources>
				<sram_l2>1</sram_l2>
				<sram_sm>0</sram_sm>
				<sram_microcontroller>0</sram_microcontroller>
				<sram_pcie>0</sram_pcie>
				<sram_other>0</sram_other>
			</aggregate_uncorrectable_sram_sources>
		</ecc_errors>
		<retired_pages>
			<multiple_single_bit_retirement>
				<retired_count>N/A</retired_count>
				<retired_pagelist>N/A</retired_pagelist>
			</multiple_single_bit_retirement>
			<double_bit_retirement>
				<retired_count>N/A</retired_count>
				<retired_pagelist>N/A</retired_pagelist>
			</double_bit_retirement>
			<pending_blacklist>N/A</pending_blacklist>
			<pending_retirement>N/A</pending_retirement>
		</retired_pages>
		<remapped_rows>
			<remapped_row_corr>1</remapped_row_corr>
			<remapped_row_unc>5</remapped_row_unc>
			<remapped_row_pending>Yes</remapped_row_pending>
			<remapped_row_failure>No</remapped_row_failure>
			<row_remapper_histogram>
				<row_remapper_histogram_max>2554 bank(s)</row_remapper_histogram_max>
				<row_remapper_histogram_high>4 bank(s)</row_remapper_histogram_high>
				<row_remapper_histogram_partial>2 bank(s)</row_remapper_histogram_partial>
				<row_remapper_histogram_low>0 bank(s)</row_remapper_histogram_low>
				<row_remapper_histogram_none>0 bank(s)</row_remapper_histogram_none>
			</row_remapper_histogram>
		</remapped_rows>
		<temperature>
			<gpu_temp>34 C</gpu_temp>
		</temperature>
	</gpu>

</nvidia_smi_log>
)";

constexpr std::string_view kSameGpuCsv =
    R"(root@node17:~# nvidia-smi --query-gpu=timestamp,index,name,serial,uuid,pci.bus_id,ecc.mode.current,ecc.mode.pending,ecc.errors.corrected.volatile.sram,ecc.errors.uncorrected.volatile.sram.parity,ecc.errors.uncorrected.volatile.sram.secded,ecc.errors.corrected.volatile.dram,ecc.errors.uncorrected.volatile.dram,ecc.errors.corrected.aggregate.sram,ecc.errors.uncorrected.aggregate.sram.parity,ecc.errors.uncorrected.aggregate.sram.secded,ecc.errors.corrected.aggregate.dram,ecc.errors.uncorrected.aggregate.dram,ecc.errors.uncorrected.aggregate.sram.thresholdExceeded,ecc.errors.uncorrected.aggregate.sram.l2,ecc.errors.uncorrected.aggregate.sram.other,remapped_rows.histogram.max,remapped_rows.histogram.high,remapped_rows.histogram.partial,remapped_rows.histogram.low,remapped_rows.histogram.none,gpu_recovery_action --format=csv
timestamp, index, name, serial, uuid, pci.bus_id, ecc.mode.current, ecc.mode.pending, ecc.errors.corrected.volatile.sram, ecc.errors.uncorrected.volatile.sram.parity, ecc.errors.uncorrected.volatile.sram.secded, ecc.errors.corrected.volatile.dram, ecc.errors.uncorrected.volatile.dram, ecc.errors.corrected.aggregate.sram, ecc.errors.uncorrected.aggregate.sram.parity, ecc.errors.uncorrected.aggregate.sram.secded, ecc.errors.corrected.aggregate.dram, ecc.errors.uncorrected.aggregate.dram, ecc.errors.uncorrected.aggregate.sram.thresholdExceeded, ecc.errors.uncorrected.aggregate.sram.l2, ecc.errors.uncorrected.aggregate.sram.other, remapped_rows.histogram.max, remapped_rows.histogram.high, remapped_rows.histogram.partial, remapped_rows.histogram.low, remapped_rows.histogram.none, gpu_recovery_action
2024/03/05 10:12:33.000, 2, NVIDIA H100 80GB HBM3, 1654123012345, GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd, 00000000:3B:00.0, Enabled, Enabled, 0, 0, 0, 12, 3, 2, 0, 1, 40, 5, No, 1, 0, 2554, 4, 2, 0, 0, None
root@node17:~# nvidia-smi --query-remapped-rows=gpu_bus_id,gpu_uuid,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure --format=csv
gpu_bus_id, gpu_uuid, remapped_rows.correctable, remapped_rows.uncorrectable, remapped_rows.pending, remapped_rows.failure
00000000:3B:00.0, GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd, 1, 5, Yes, No
root@node17:~#
)";

// Label order and value formats as bundles.md 4 describes them; the ECC, remap and recovery
// families are among dcgm-exporter's optional counters.
constexpr std::string_view kSameGpuScrape =
    R"(# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).
# TYPE DCGM_FI_DEV_SM_CLOCK gauge
DCGM_FI_DEV_SM_CLOCK{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 1980 1709633553000
# HELP DCGM_FI_DEV_ECC_CURRENT Current ECC mode for the device.
# TYPE DCGM_FI_DEV_ECC_CURRENT gauge
DCGM_FI_DEV_ECC_CURRENT{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 1 1709633553000
# HELP DCGM_FI_DEV_ECC_PENDING Pending ECC mode for the device.
# TYPE DCGM_FI_DEV_ECC_PENDING gauge
DCGM_FI_DEV_ECC_PENDING{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 1 1709633553000
# HELP DCGM_FI_DEV_ECC_SBE_VOL_SRM Total single bit volatile SRAM ECC errors.
# TYPE DCGM_FI_DEV_ECC_SBE_VOL_SRM counter
DCGM_FI_DEV_ECC_SBE_VOL_SRM{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 0 1709633553000
# HELP DCGM_FI_DEV_ECC_SBE_VOL_DEV Total single bit volatile device memory ECC errors.
# TYPE DCGM_FI_DEV_ECC_SBE_VOL_DEV counter
DCGM_FI_DEV_ECC_SBE_VOL_DEV{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 12 1709633553000
# HELP DCGM_FI_DEV_ECC_DBE_VOL_DEV Total double bit volatile device memory ECC errors.
# TYPE DCGM_FI_DEV_ECC_DBE_VOL_DEV counter
DCGM_FI_DEV_ECC_DBE_VOL_DEV{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 3 1709633553000
# HELP DCGM_FI_DEV_ECC_SBE_AGG_SRM Total single bit aggregate SRAM ECC errors.
# TYPE DCGM_FI_DEV_ECC_SBE_AGG_SRM counter
DCGM_FI_DEV_ECC_SBE_AGG_SRM{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 2 1709633553000
# HELP DCGM_FI_DEV_ECC_SBE_AGG_DEV Total single bit aggregate device memory ECC errors.
# TYPE DCGM_FI_DEV_ECC_SBE_AGG_DEV counter
DCGM_FI_DEV_ECC_SBE_AGG_DEV{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 40 1709633553000
# HELP DCGM_FI_DEV_ECC_DBE_AGG_DEV Total double bit aggregate device memory ECC errors.
# TYPE DCGM_FI_DEV_ECC_DBE_AGG_DEV counter
DCGM_FI_DEV_ECC_DBE_AGG_DEV{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 5 1709633553000
# HELP DCGM_FI_DEV_SRAM_EXCEEDED SRAM threshold exceeded.
# TYPE DCGM_FI_DEV_SRAM_EXCEEDED gauge
DCGM_FI_DEV_SRAM_EXCEEDED{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 0 1709633553000
# HELP DCGM_FI_DEV_BANK_REMAP_AVAIL_MAX Banks with maximum row remap availability.
# TYPE DCGM_FI_DEV_BANK_REMAP_AVAIL_MAX gauge
DCGM_FI_DEV_BANK_REMAP_AVAIL_MAX{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 2554 1709633553000
# HELP DCGM_FI_DEV_BANK_REMAP_AVAIL_HIGH Banks with high row remap availability.
# TYPE DCGM_FI_DEV_BANK_REMAP_AVAIL_HIGH gauge
DCGM_FI_DEV_BANK_REMAP_AVAIL_HIGH{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 4 1709633553000
# HELP DCGM_FI_DEV_BANK_REMAP_AVAIL_PARTIAL Banks with partial row remap availability.
# TYPE DCGM_FI_DEV_BANK_REMAP_AVAIL_PARTIAL gauge
DCGM_FI_DEV_BANK_REMAP_AVAIL_PARTIAL{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 2 1709633553000
# HELP DCGM_FI_DEV_BANK_REMAP_AVAIL_LOW Banks with low row remap availability.
# TYPE DCGM_FI_DEV_BANK_REMAP_AVAIL_LOW gauge
DCGM_FI_DEV_BANK_REMAP_AVAIL_LOW{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 0 1709633553000
# HELP DCGM_FI_DEV_BANK_REMAP_AVAIL_NONE Banks with no row remap availability.
# TYPE DCGM_FI_DEV_BANK_REMAP_AVAIL_NONE gauge
DCGM_FI_DEV_BANK_REMAP_AVAIL_NONE{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 0 1709633553000
# HELP DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL Number of remapped rows for correctable errors.
# TYPE DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL counter
DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 1 1709633553000
# HELP DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL Number of remapped rows for uncorrectable errors.
# TYPE DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL counter
DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 5 1709633553000
# HELP DCGM_FI_DEV_ROW_REMAP_PENDING Whether remapping of rows is pending.
# TYPE DCGM_FI_DEV_ROW_REMAP_PENDING gauge
DCGM_FI_DEV_ROW_REMAP_PENDING{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 1 1709633553000
# HELP DCGM_FI_DEV_ROW_REMAP_FAILED Whether remapping of rows has failed
# TYPE DCGM_FI_DEV_ROW_REMAP_FAILED gauge
DCGM_FI_DEV_ROW_REMAP_FAILED{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 0 1709633553000
# HELP DCGM_FI_DEV_GPU_RECOVERY_ACTION GPU recovery action.
# TYPE DCGM_FI_DEV_GPU_RECOVERY_ACTION gauge
DCGM_FI_DEV_GPU_RECOVERY_ACTION{gpu="2",UUID="GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd",pci_bus_id="00000000:3B:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="node17",DCGM_FI_DRIVER_VERSION="575.51.02"} 0 1709633553000
)";

enum Shape { kQuery, kXml, kCsv, kScrape, kShapes };
constexpr const char* kShapeNames[kShapes] = {"nvidia-smi -q", "nvidia-smi -q -x", "CSV",
                                              "dcgm-exporter"};

// A field of the GPU above, its value, and which shapes can carry it. What a shape cannot
// carry must be absent from its snapshot:
// - dcgm-exporter has no field for the uncorrectable SRAM parity / SEC-DED split (its DBE SRM
//   counters are the unsplit ecc.errors.uncorrected.*.sram, which 550+ nvidia-smi no longer
//   prints) nor for the aggregate SRAM sources (l2, sm, mcu, pcie, other); no serial unless
//   DCGM_FI_DEV_SERIAL is configured as a label; and its only time is an optional sample
//   timestamp.
// - CSV queries have no minor number (index stands for it).
// - Only dcgm-exporter names the host.
struct Expected {
  const char* field;
  const char* value;
  bool carried[kShapes];
};
constexpr Expected kExpected[] = {
    {"minor_number", "2", {true, true, false, true}},
    {"gpu_recovery_action", "None", {true, true, true, true}},
    {"ecc.mode.current", "enabled", {true, true, true, true}},
    {"ecc.mode.pending", "enabled", {true, true, true, true}},
    {"ecc.errors.corrected.volatile.sram", "0", {true, true, true, true}},
    {"ecc.errors.uncorrected.volatile.sram.parity", "0", {true, true, true, false}},
    {"ecc.errors.uncorrected.volatile.sram.secded", "0", {true, true, true, false}},
    {"ecc.errors.corrected.volatile.dram", "12", {true, true, true, true}},
    {"ecc.errors.uncorrected.volatile.dram", "3", {true, true, true, true}},
    {"ecc.errors.corrected.aggregate.sram", "2", {true, true, true, true}},
    {"ecc.errors.uncorrected.aggregate.sram.parity", "0", {true, true, true, false}},
    {"ecc.errors.uncorrected.aggregate.sram.secded", "1", {true, true, true, false}},
    {"ecc.errors.corrected.aggregate.dram", "40", {true, true, true, true}},
    {"ecc.errors.uncorrected.aggregate.dram", "5", {true, true, true, true}},
    {"ecc.errors.uncorrected.aggregate.sram.thresholdExceeded", "no", {true, true, true, true}},
    {"ecc.errors.uncorrected.aggregate.sram.l2", "1", {true, true, true, false}},
    {"ecc.errors.uncorrected.aggregate.sram.other", "0", {true, true, true, false}},
    {"remapped_rows.correctable", "1", {true, true, true, true}},
    {"remapped_rows.uncorrectable", "5", {true, true, true, true}},
    {"remapped_rows.pending", "yes", {true, true, true, true}},
    {"remapped_rows.failure", "no", {true, true, true, true}},
    {"remapped_rows.histogram.max", "2554", {true, true, true, true}},
    {"remapped_rows.histogram.high", "4", {true, true, true, true}},
    {"remapped_rows.histogram.partial", "2", {true, true, true, true}},
    {"remapped_rows.histogram.low", "0", {true, true, true, true}},
    {"remapped_rows.histogram.none", "0", {true, true, true, true}},
    // The CSV query and the exporter's scrape here ask for no temperature.
    {"temperature.gpu", "34", {true, true, false, false}},
};

// The CSV shape is two queries (two rows of one GPU): their fields together.
GpuState Merge(const std::vector<GpuState>& states) {
  GpuState merged = states.front();
  for (const GpuState& state : states) {
    CHECK(state.gpu.pci == merged.gpu.pci);
    for (const auto& [field, value] : state.fields) merged.fields[field] = value;
    for (const auto& [field, line] : state.field_lines) merged.field_lines[field] = line;
    if (!state.gpu.index) continue;
    merged.gpu.index = state.gpu.index;
  }
  return merged;
}

TEST_CASE("state sources: one GPU reads alike as -q text, -q -x XML, CSV and exporter scrape") {
  const std::string_view texts[kShapes] = {kSameGpuQuery, kSameGpuXml, kSameGpuCsv, kSameGpuScrape};
  GpuState states[kShapes];
  for (int shape = 0; shape < kShapes; ++shape) {
    const std::vector<GpuState> read = Read(texts[shape]);
    REQUIRE_MESSAGE(read.size() == (shape == kCsv ? 2u : 1u), kShapeNames[shape]);
    states[shape] = shape == kCsv ? Merge(read) : read[0];
  }
  for (int shape = 0; shape < kShapes; ++shape) {
    INFO("shape: " << kShapeNames[shape]);
    const GpuState& gpu = states[shape];
    CHECK(gpu.gpu.pci == "0000:3b:00.0");
    CHECK(gpu.gpu.uuid == "GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd");
    CHECK(gpu.gpu.product == "NVIDIA H100 80GB HBM3");
    CHECK(gpu.gpu.index == 2);
    // dcgm-exporter names no serial unless DCGM_FI_DEV_SERIAL is configured as a label.
    CHECK(gpu.gpu.serial == (shape == kScrape ? "" : "1654123012345"));
    // Only the exporter names the host; the others leave it to the input's envelope.
    CHECK(gpu.host == (shape == kScrape ? "node17" : ""));
    // nvidia-smi prints the local wall clock without a zone; the exporter's milliseconds are
    // UTC. On a host on UTC they are the same instant.
    REQUIRE(gpu.time.known());
    CHECK(gpu.time.seconds == doctest::Approx(1709633553.0));
    for (const Expected& expected : kExpected) {
      INFO("field: " << expected.field);
      CHECK(Field(gpu, expected.field) == (expected.carried[shape] ? expected.value : "<absent>"));
    }
    // Nothing beyond the table, apart from fields only one shape can name.
    for (const auto& [field, value] : gpu.fields) {
      INFO("field: " << field);
      const bool listed = std::any_of(std::begin(kExpected), std::end(kExpected),
                                      [&](const Expected& e) { return field == e.field; });
      CHECK((listed || field == "ecc.errors.uncorrected.aggregate.sram.sm" ||
             field == "ecc.errors.uncorrected.aggregate.sram.mcu" ||
             field == "ecc.errors.uncorrected.aggregate.sram.pcie"));
    }
  }
  // Each shape's field_lines point at the line that printed the value.
  CHECK(FieldLine(states[kQuery], "remapped_rows.pending") ==
        LineOf(kSameGpuQuery, "        Pending                           : Yes"));
  CHECK(FieldLine(states[kXml], "remapped_rows.pending") ==
        LineOf(kSameGpuXml, "<remapped_row_pending>"));
  CHECK(states[kXml].field_lines.at("remapped_rows.pending").second ==
        "\t\t\t<remapped_row_pending>Yes</remapped_row_pending>");
  CHECK(FieldLine(states[kXml], "ecc.errors.uncorrected.aggregate.dram") ==
        LineOf(kSameGpuXml, "<dram_uncorrectable>5"));
  CHECK(states[kXml].source.line == LineOf(kSameGpuXml, "<gpu id="));
  CHECK(states[kXml].source.signature == "nvidia-smi-xml");
  CHECK(FieldLine(states[kCsv], "remapped_rows.pending") ==
        LineOf(kSameGpuCsv, "00000000:3B:00.0, GPU-5d1e2f3a"));
  CHECK(FieldLine(states[kScrape], "remapped_rows.pending") ==
        LineOf(kSameGpuScrape, "DCGM_FI_DEV_ROW_REMAP_PENDING{"));
  CHECK(states[kScrape].source.line == LineOf(kSameGpuScrape, "DCGM_FI_DEV_SM_CLOCK{"));
  CHECK(states[kScrape].source.signature == "dcgm-exporter");
}

// ---------------------------------------------------------------------------------------------
// nvidia-smi -q -x by driver generation.

// bundles.md 2.3: 570.124.04 RTX 3060 (TG rtx-3060-v12.xml), verbatim excerpt: remapped_rows is
// the bare text N/A, the reset status is deprecated, the serial N/A.
constexpr std::string_view kRtx3060 = R"(<?xml version="1.0"?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
	<timestamp>Sun Mar 2 15:02:02 2025</timestamp>
	<driver_version>570.124.04</driver_version>
	<cuda_version>12.8</cuda_version>
	<attached_gpus>1</attached_gpus>
	<gpu id="00000000:2D:00.0">
		<product_name>NVIDIA GeForce RTX 3060</product_name>
		<product_brand>GeForce</product_brand>
		<product_architecture>Ampere</product_architecture>
		<mig_devices>
			None
		</mig_devices>
		<serial>N/A</serial>
		<uuid>GPU-d6889ff6-2523-9142-ca3c-1ca3f396a625</uuid>
		<minor_number>0</minor_number>
		<gpu_reset_status>
			<reset_required>Requested functionality has been deprecated</reset_required>
			<drain_and_reset_recommended>Requested functionality has been deprecated</drain_and_reset_recommended>
		</gpu_reset_status>
		<gpu_recovery_action>None</gpu_recovery_action>
		<pci>
			<pci_bus>2D</pci_bus>
			<pci_device>00</pci_device>
			<pci_domain>0000</pci_domain>
			<pci_bus_id>00000000:2D:00.0</pci_bus_id>
		</pci>
		<ecc_mode>
			<current_ecc>N/A</current_ecc>
			<pending_ecc>N/A</pending_ecc>
		</ecc_mode>
		<ecc_errors>
			<volatile>
				<sram_correctable>N/A</sram_correctable>
				<sram_uncorrectable_parity>N/A</sram_uncorrectable_parity>
				<sram_uncorrectable_secded>N/A</sram_uncorrectable_secded>
				<dram_correctable>N/A</dram_correctable>
				<dram_uncorrectable>N/A</dram_uncorrectable>
			</volatile>
			<aggregate>
				<sram_correctable>N/A</sram_correctable>
				<sram_uncorrectable_parity>N/A</sram_uncorrectable_parity>
				<sram_uncorrectable_secded>N/A</sram_uncorrectable_secded>
				<dram_correctable>N/A</dram_correctable>
				<dram_uncorrectable>N/A</dram_uncorrectable>
				<sram_threshold_exceeded>N/A</sram_threshold_exceeded>
			</aggregate>
			<aggregate_uncorrectable_sram_sources>
				<sram_l2>N/A</sram_l2>
				<sram_sm>N/A</sram_sm>
				<sram_microcontroller>N/A</sram_microcontroller>
				<sram_pcie>N/A</sram_pcie>
				<sram_other>N/A</sram_other>
			</aggregate_uncorrectable_sram_sources>
		</ecc_errors>
		<retired_pages>
			<multiple_single_bit_retirement>
				<retired_count>N/A</retired_count>
				<retired_pagelist>N/A</retired_pagelist>
			</multiple_single_bit_retirement>
			<double_bit_retirement>
				<retired_count>N/A</retired_count>
				<retired_pagelist>N/A</retired_pagelist>
			</double_bit_retirement>
			<pending_blacklist>N/A</pending_blacklist>
			<pending_retirement>N/A</pending_retirement>
		</retired_pages>
		<remapped_rows>N/A</remapped_rows>
		<temperature>
			<gpu_temp>42 C</gpu_temp>
		</temperature>
	</gpu>

</nvidia_smi_log>
)";

TEST_CASE("state sources: 570 XML with remapped_rows N/A and deprecated reset status") {
  const std::vector<GpuState> states = Read(kRtx3060);
  REQUIRE(states.size() == 1);
  const GpuState& gpu = states[0];
  CHECK(gpu.gpu.pci == "0000:2d:00.0");
  CHECK(gpu.gpu.uuid == "GPU-d6889ff6-2523-9142-ca3c-1ca3f396a625");
  CHECK(gpu.gpu.serial.empty());
  CHECK(gpu.gpu.product == "NVIDIA GeForce RTX 3060");
  CHECK(gpu.gpu.index == 0);
  CHECK(gpu.time.seconds == doctest::Approx(1740927722.0));  // 2025-03-02 15:02:02
  // Everything N/A or deprecated is absent; what is left is the minor number, the action and the
  // temperature.
  CHECK(gpu.fields == std::map<std::string, std::string>{{"minor_number", "0"},
                                                         {"gpu_recovery_action", "None"},
                                                         {"temperature.gpu", "42"}});
  CHECK(FieldLine(gpu, "gpu_recovery_action") == LineOf(kRtx3060, "<gpu_recovery_action>"));
}

// bundles.md 2.3: the 418.43 layout (TG quadro-p400.xml envelope: no DOCTYPE, eight-space
// indentation, single_bit/double_bit, retired_pages without pending_blacklist, no
// remapped_rows). The P400 reads N/A everywhere, so the counts here are a V100's (derived).
constexpr std::string_view kV100Driver418 = R"(<?xml version="1.0" ?>
<nvidia_smi_log>
        <timestamp>Mon Mar 11 17:03:27 2019</timestamp>
        <driver_version>418.43</driver_version>
        <cuda_version>10.1</cuda_version>
        <attached_gpus>1</attached_gpus>
        <gpu id="00000000:86:00.0">
                <product_name>Tesla V100-SXM2-32GB</product_name>
                <product_brand>Tesla</product_brand>
                <serial>0323618012345</serial>
                <uuid>GPU-8f750be4-dfbc-23b9-b33f-da729a536494</uuid>
                <minor_number>5</minor_number>
                <pci>
                        <pci_bus>86</pci_bus>
                        <pci_device>00</pci_device>
                        <pci_domain>0000</pci_domain>
                        <pci_bus_id>00000000:86:00.0</pci_bus_id>
                </pci>
                <ecc_mode>
                        <current_ecc>Enabled</current_ecc>
                        <pending_ecc>Enabled</pending_ecc>
                </ecc_mode>
                <ecc_errors>
                        <volatile>
                                <single_bit>
                                        <device_memory>7</device_memory>
                                        <register_file>0</register_file>
                                        <l1_cache>0</l1_cache>
                                        <l2_cache>0</l2_cache>
                                        <texture_memory>N/A</texture_memory>
                                        <texture_shm>N/A</texture_shm>
                                        <cbu>N/A</cbu>
                                        <total>7</total>
                                </single_bit>
                                <double_bit>
                                        <device_memory>2</device_memory>
                                        <register_file>0</register_file>
                                        <l1_cache>0</l1_cache>
                                        <l2_cache>0</l2_cache>
                                        <texture_memory>N/A</texture_memory>
                                        <texture_shm>N/A</texture_shm>
                                        <cbu>0</cbu>
                                        <total>2</total>
                                </double_bit>
                        </volatile>
                        <aggregate>
                                <single_bit>
                                        <device_memory>31</device_memory>
                                        <register_file>0</register_file>
                                        <l1_cache>0</l1_cache>
                                        <l2_cache>1</l2_cache>
                                        <texture_memory>N/A</texture_memory>
                                        <texture_shm>N/A</texture_shm>
                                        <cbu>N/A</cbu>
                                        <total>32</total>
                                </single_bit>
                                <double_bit>
                                        <device_memory>2</device_memory>
                                        <register_file>0</register_file>
                                        <l1_cache>0</l1_cache>
                                        <l2_cache>0</l2_cache>
                                        <texture_memory>N/A</texture_memory>
                                        <texture_shm>N/A</texture_shm>
                                        <cbu>0</cbu>
                                        <total>2</total>
                                </double_bit>
                        </aggregate>
                </ecc_errors>
                <retired_pages>
                        <multiple_single_bit_retirement>
                                <retired_count>3</retired_count>
                                <retired_pagelist>N/A</retired_pagelist>
                        </multiple_single_bit_retirement>
                        <double_bit_retirement>
                                <retired_count>2</retired_count>
                                <retired_pagelist>N/A</retired_pagelist>
                        </double_bit_retirement>
                        <pending_retirement>Yes</pending_retirement>
                </retired_pages>
        </gpu>

</nvidia_smi_log>
)";

TEST_CASE("state sources: 418 XML single/double bit layout and page retirement") {
  const std::vector<GpuState> states = Read(kV100Driver418);
  REQUIRE(states.size() == 1);
  const GpuState& gpu = states[0];
  CHECK(gpu.gpu.pci == "0000:86:00.0");
  CHECK(gpu.gpu.serial == "0323618012345");
  CHECK(gpu.gpu.index == 5);
  CHECK(Field(gpu, "ecc.errors.corrected.volatile.device_memory") == "7");
  CHECK(Field(gpu, "ecc.errors.corrected.volatile.total") == "7");
  CHECK(Field(gpu, "ecc.errors.uncorrected.volatile.device_memory") == "2");
  CHECK(Field(gpu, "ecc.errors.uncorrected.volatile.cbu") == "0");
  CHECK(Field(gpu, "ecc.errors.uncorrected.volatile.total") == "2");
  CHECK(Field(gpu, "ecc.errors.corrected.aggregate.l2_cache") == "1");
  CHECK(Field(gpu, "ecc.errors.corrected.aggregate.total") == "32");
  CHECK(Field(gpu, "ecc.errors.uncorrected.aggregate.device_memory") == "2");
  CHECK(Field(gpu, "ecc.errors.corrected.volatile.texture_shared") == "<absent>");
  CHECK(Field(gpu, "retired_pages.sbe") == "3");
  CHECK(Field(gpu, "retired_pages.dbe") == "2");
  CHECK(Field(gpu, "retired_pages.pending") == "yes");
  CHECK(FieldLine(gpu, "retired_pages.pending") == LineOf(kV100Driver418, "<pending_retirement>"));
  CHECK(FieldLine(gpu, "retired_pages.sbe") ==
        LineOf(kV100Driver418, "<multiple_single_bit_retirement>") + 1);
  CHECK(Field(gpu, "remapped_rows.pending") == "<absent>");
  CHECK(Field(gpu, "ecc.errors.uncorrected.volatile.dram") == "<absent>");
  CHECK(gpu.time.seconds == doctest::Approx(1552323807.0));  // 2019-03-11 17:03:27
}

// bundles.md 2.3: the 515 A10G remap block (TG a10g.xml) and the 595 (v13) rows around it
// (_inactive, channel/TPC repair, unrepairable memory); the pending flags of 515+
// page retirement, one of them set; a <gpu> without pci_bus_id, whose id attribute stands in.
TEST_CASE("state sources: 515 and 595 XML blocks, pending_blacklist with pending_retirement") {
  const std::string_view xml = R"(<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">
<nvidia_smi_log>
    <timestamp>Mon Apr 24 16:11:51 2023</timestamp>
    <driver_version>515.105.01</driver_version>
    <cuda_version>11.7</cuda_version>
    <attached_gpus>2</attached_gpus>
    <gpu id="00000000:00:1E.0">
        <product_name>NVIDIA A10G</product_name>
        <serial>0000000000000</serial>
        <uuid>GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94</uuid>
        <minor_number>0</minor_number>
        <retired_pages>
            <multiple_single_bit_retirement>
                <retired_count>0</retired_count>
                <retired_pagelist>
                </retired_pagelist>
            </multiple_single_bit_retirement>
            <double_bit_retirement>
                <retired_count>1</retired_count>
                <retired_pagelist>
                </retired_pagelist>
            </double_bit_retirement>
            <pending_blacklist>No</pending_blacklist>
            <pending_retirement>Yes</pending_retirement>
        </retired_pages>
        <remapped_rows>
            <remapped_row_corr>0</remapped_row_corr>
            <remapped_row_unc>0</remapped_row_unc>
            <remapped_row_pending>No</remapped_row_pending>
            <remapped_row_failure>No</remapped_row_failure>
            <row_remapper_histogram>
                <row_remapper_histogram_max>192 bank(s)</row_remapper_histogram_max>
                <row_remapper_histogram_high>0 bank(s)</row_remapper_histogram_high>
                <row_remapper_histogram_partial>0 bank(s)</row_remapper_histogram_partial>
                <row_remapper_histogram_low>0 bank(s)</row_remapper_histogram_low>
                <row_remapper_histogram_none>0 bank(s)</row_remapper_histogram_none>
            </row_remapper_histogram>
        </remapped_rows>
    </gpu>
    <gpu id="00000000:41:00.0">
        <product_name>NVIDIA RTX 4000 SFF Ada Generation</product_name>
        <ecc_errors>
            <channel_repair_pending>No</channel_repair_pending>
            <tpc_repair_pending>No</tpc_repair_pending>
            <unrepairable_memory>Yes</unrepairable_memory>
        </ecc_errors>
		<remapped_rows>
			<remapped_row_corr>0</remapped_row_corr>
			<remapped_row_corr_inactive>0</remapped_row_corr_inactive>
			<remapped_row_unc>2</remapped_row_unc>
			<remapped_row_unc_inactive>1</remapped_row_unc_inactive>
			<remapped_row_pending>No</remapped_row_pending>
			<remapped_row_failure>Yes</remapped_row_failure>
		</remapped_rows>
    </gpu>
</nvidia_smi_log>
)";
  const std::vector<GpuState> states = Read(xml);
  REQUIRE(states.size() == 2);
  CHECK(states[0].gpu.pci == "0000:00:1e.0");
  CHECK(states[0].gpu.serial == "0000000000000");
  CHECK(Field(states[0], "retired_pages.sbe") == "0");
  CHECK(Field(states[0], "retired_pages.dbe") == "1");
  CHECK(Field(states[0], "retired_pages.pending") == "yes");
  CHECK(FieldLine(states[0], "retired_pages.pending") == LineOf(xml, "<pending_retirement>"));
  CHECK(Field(states[0], "remapped_rows.histogram.max") == "192");
  CHECK(Field(states[0], "remapped_rows.pending") == "no");
  CHECK(states[1].gpu.pci == "0000:41:00.0");
  CHECK(states[1].source.line == LineOf(xml, "<gpu id=\"00000000:41:00.0\">"));
  CHECK(Field(states[1], "unrepairable_memory") == "yes");
  CHECK(Field(states[1], "channel_repair_pending") == "no");
  CHECK(Field(states[1], "tpc_repair_pending") == "no");
  CHECK(Field(states[1], "remapped_rows.uncorrectable") == "2");
  CHECK(Field(states[1], "remapped_rows.uncorrectable_inactive") == "1");
  CHECK(Field(states[1], "remapped_rows.correctable_inactive") == "0");
  CHECK(Field(states[1], "remapped_rows.failure") == "yes");
  CHECK(is_state_field("remapped_rows.uncorrectable_inactive"));
  CHECK(is_state_field("unrepairable_memory"));
}

TEST_CASE("state sources: XML between other text, cut short, or of another tool") {
  SUBCASE("pasted in a log, indented, followed by a kernel line") {
    const std::vector<GpuState> states = Read(R"($ nvidia-smi -q -x
  <?xml version="1.0" ?>
  <nvidia_smi_log>
    <timestamp>Mon Oct 13 00:25:36 2025</timestamp>
    <gpu id="00000000:01:00.0">
      <remapped_rows>
        <remapped_row_pending>Yes</remapped_row_pending>
      </remapped_rows>
    </gpu>
  </nvidia_smi_log>
[ 1234.567890] NVRM: Xid (PCI:0000:01:00): 63, pid=1, name=python, Row Remapper: New row (0x0000000003f1a2c0) marked for remapping, reset gpu to activate.
)");
    REQUIRE(states.size() == 1);
    CHECK(states[0].gpu.pci == "0000:01:00.0");
    CHECK(Field(states[0], "remapped_rows.pending") == "yes");
    CHECK(FieldLine(states[0], "remapped_rows.pending") == 7);
  }
  SUBCASE("cut short by the end of the input: read as far as it goes") {
    const std::vector<GpuState> states = Read(R"(<nvidia_smi_log>
	<gpu id="00000000:01:00.0">
		<uuid>GPU-1</uuid>
		<remapped_rows>
			<remapped_row_failure>Yes</remapped_row_failure>
			<remapped_row_pen)");
    REQUIRE(states.size() == 1);
    CHECK(states[0].gpu.uuid == "GPU-1");
    CHECK(Field(states[0], "remapped_rows.failure") == "yes");
  }
  SUBCASE("cut short by the next document") {
    const std::vector<GpuState> states = Read(R"(<nvidia_smi_log>
	<gpu id="00000000:01:00.0">
		<uuid>GPU-1</uuid>
<?xml version="1.0" ?>
<nvidia_smi_log>
	<gpu id="00000000:02:00.0">
		<uuid>GPU-2</uuid>
	</gpu>
</nvidia_smi_log>
)");
    REQUIRE(states.size() == 2);
    CHECK(states[0].gpu.uuid == "GPU-1");
    CHECK(states[1].gpu.uuid == "GPU-2");
    CHECK(states[1].source.line == 6);
  }
  SUBCASE("cut short, then a long run of other text") {
    std::string text = "<nvidia_smi_log>\n<gpu id=\"00000000:01:00.0\">\n<uuid>GPU-1</uuid>\n";
    for (int i = 0; i < 100; ++i) text += "plain text line " + std::to_string(i) + "\n";
    text +=
        "<nvidia_smi_log><gpu id=\"00000000:02:00.0\"><uuid>GPU-2</uuid></gpu>"
        "</nvidia_smi_log>\n";
    const std::vector<GpuState> states = Read(text);
    REQUIRE(states.size() == 2);
    CHECK(states[0].gpu.uuid == "GPU-1");
    CHECK(states[1].gpu.uuid == "GPU-2");
    CHECK(states[1].source.line == 104);
  }
  SUBCASE("another tool's XML, malformed XML and entities") {
    const std::vector<GpuState> states = Read(R"(<?xml version="1.0"?>
<project><gpu id="00000000:01:00.0"><uuid>GPU-x</uuid></gpu></project>
<nvidia_smi_log>
<gpu id="00000000:03:00.0"><product_name>A &amp; B</product_name><uuid>GPU-3</uuid></gpu>
<gpu id="00000000:04:00.0"><uuid>GPU-4</uuid><serial>12</serial></gpu <<<>>> &bogus;
</nvidia_smi_log>
)");
    REQUIRE(states.size() >= 1);
    CHECK(states[0].gpu.uuid == "GPU-3");
    CHECK(states[0].gpu.product == "A & B");
  }
}

TEST_CASE("state sources: an XML document past the cap is dropped, the next one is read") {
  std::vector<GpuState> out;
  state_internal::XmlDumpReader reader("big.xml", &out);
  uint64_t number = 0;
  reader.Feed("<?xml version=\"1.0\" ?>", ++number);
  reader.Feed("<nvidia_smi_log>", ++number);
  reader.Feed("<gpu id=\"00000000:01:00.0\">", ++number);
  // 33 MiB of elements, past the 32 MiB cap.
  const std::string line =
      "\t\t\t<supported_graphics_clock>1410 MHz</supported_graphics_clock>" + std::string(960, ' ');
  for (size_t bytes = 0; bytes < (33u << 20); bytes += line.size() + 1) reader.Feed(line, ++number);
  reader.Feed("</gpu>", ++number);
  reader.Feed("</nvidia_smi_log>", ++number);
  CHECK(reader.dropped() == 1);
  reader.Feed("<nvidia_smi_log><gpu id=\"00000000:02:00.0\"><uuid>GPU-2</uuid></gpu>", ++number);
  reader.Feed("</nvidia_smi_log>", ++number);
  reader.Finish();
  REQUIRE(out.size() == 1);
  CHECK(out[0].gpu.uuid == "GPU-2");
  CHECK(out[0].source.line == number - 1);

  // A small cap behaves alike.
  std::vector<GpuState> small;
  state_internal::XmlDumpReader capped("small.xml", &small, 256);
  capped.Feed("<nvidia_smi_log>", 1);
  capped.Feed("<gpu id=\"00000000:01:00.0\"><uuid>GPU-1</uuid></gpu>", 2);
  capped.Feed(std::string(300, 'x'), 3);
  capped.Feed("</nvidia_smi_log>", 4);
  capped.Feed("<nvidia_smi_log><gpu id=\"00000000:05:00.0\"/></nvidia_smi_log>", 5);
  capped.Finish();
  CHECK(capped.dropped() == 1);
  REQUIRE(small.size() == 1);
  CHECK(small[0].gpu.pci == "0000:05:00.0");
}

// ---------------------------------------------------------------------------------------------
// dcgm-exporter.

// bundles.md 4, verbatim (CNCF, dcgm-exporter with driver 580.105.08, NVIDIA L4); the cut label
// sets are written out in full from the first sample.
constexpr std::string_view kCncfScrape =
    R"(# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).
# TYPE DCGM_FI_DEV_SM_CLOCK gauge
DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="GPU-c2f76b33-7953-256e-8f33-1343419b1a1c",pci_bus_id="00000000:31:00.0",device="nvidia0",modelName="NVIDIA L4",Hostname="i-030791dc5a37cd257",DCGM_FI_DRIVER_VERSION="580.105.08"} 210
# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-c2f76b33-7953-256e-8f33-1343419b1a1c",pci_bus_id="00000000:31:00.0",device="nvidia0",modelName="NVIDIA L4",Hostname="i-030791dc5a37cd257",DCGM_FI_DRIVER_VERSION="580.105.08"} 16.365000
# HELP DCGM_FI_DEV_ROW_REMAP_FAILURE Whether remapping of rows has failed
# TYPE DCGM_FI_DEV_ROW_REMAP_FAILURE gauge
DCGM_FI_DEV_ROW_REMAP_FAILURE{gpu="0",UUID="GPU-c2f76b33-7953-256e-8f33-1343419b1a1c",pci_bus_id="00000000:31:00.0",device="nvidia0",modelName="NVIDIA L4",Hostname="i-030791dc5a37cd257",DCGM_FI_DRIVER_VERSION="580.105.08"} 0
)";

TEST_CASE("state sources: the CNCF dcgm-exporter scrape") {
  const std::vector<GpuState> states = Read(kCncfScrape);
  REQUIRE(states.size() == 1);
  const GpuState& gpu = states[0];
  CHECK(gpu.gpu.pci == "0000:31:00.0");
  CHECK(gpu.gpu.uuid == "GPU-c2f76b33-7953-256e-8f33-1343419b1a1c");
  CHECK(gpu.gpu.index == 0);
  CHECK(gpu.gpu.product == "NVIDIA L4");
  CHECK(gpu.host == "i-030791dc5a37cd257");
  CHECK_FALSE(gpu.time.known());  // the exporter writes no timestamps
  CHECK(gpu.fields ==
        std::map<std::string, std::string>{{"minor_number", "0"}, {"remapped_rows.failure", "no"}});
  CHECK(FieldLine(gpu, "remapped_rows.failure") == 9);
  CHECK(gpu.source.line == 3);
}

TEST_CASE("state sources: several scrapes of two GPUs give a snapshot per GPU per scrape") {
  const std::string_view text =
      R"(# HELP DCGM_FI_DEV_ROW_REMAP_PENDING Whether remapping of rows is pending.
# TYPE DCGM_FI_DEV_ROW_REMAP_PENDING gauge
DCGM_FI_DEV_ROW_REMAP_PENDING{gpu="0",UUID="GPU-aaaa",pci_bus_id="00000000:3B:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",Hostname="node17"} 0
DCGM_FI_DEV_ROW_REMAP_PENDING{gpu="1",UUID="GPU-bbbb",pci_bus_id="00000000:3C:00.0",device="nvidia1",modelName="NVIDIA A100-SXM4-80GB",Hostname="node17"} 0
# HELP DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS Number of remapped rows for uncorrectable errors.
# TYPE DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS counter
DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{gpu="0",UUID="GPU-aaaa",pci_bus_id="00000000:3B:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",Hostname="node17"} 0
DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{gpu="1",UUID="GPU-bbbb",pci_bus_id="00000000:3C:00.0",device="nvidia1",modelName="NVIDIA A100-SXM4-80GB",Hostname="node17"} 0
# HELP DCGM_FI_DEV_ROW_REMAP_PENDING Whether remapping of rows is pending.
# TYPE DCGM_FI_DEV_ROW_REMAP_PENDING gauge
DCGM_FI_DEV_ROW_REMAP_PENDING{gpu="0",UUID="GPU-aaaa",pci_bus_id="00000000:3B:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",Hostname="node17"} 1
DCGM_FI_DEV_ROW_REMAP_PENDING{gpu="1",UUID="GPU-bbbb",pci_bus_id="00000000:3C:00.0",device="nvidia1",modelName="NVIDIA A100-SXM4-80GB",Hostname="node17"} 0
# HELP DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS Number of remapped rows for uncorrectable errors.
# TYPE DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS counter
DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{gpu="0",UUID="GPU-aaaa",pci_bus_id="00000000:3B:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",Hostname="node17"} 1
DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{gpu="1",UUID="GPU-bbbb",pci_bus_id="00000000:3C:00.0",device="nvidia1",modelName="NVIDIA A100-SXM4-80GB",Hostname="node17"} 0
DCGM_FI_DEV_ROW_REMAP_PENDING{gpu="0",UUID="GPU-aaaa",pci_bus_id="00000000:3B:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",Hostname="node17"} 0 1709633583000
DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{gpu="0",UUID="GPU-aaaa",pci_bus_id="00000000:3B:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",Hostname="node17"} 1 1709633583000
)";
  const std::vector<GpuState> states = Read(text);
  // Scrape 1 (both GPUs), scrape 2 (its `# HELP` lines come again), scrape 3 (a sample comes
  // again, with no `# HELP`; one GPU only).
  REQUIRE(states.size() == 5);
  const char* const uuids[] = {"GPU-aaaa", "GPU-bbbb", "GPU-aaaa", "GPU-bbbb", "GPU-aaaa"};
  const char* const pending[] = {"no", "no", "yes", "no", "no"};
  const char* const rows[] = {"0", "0", "1", "0", "1"};
  for (size_t i = 0; i < states.size(); ++i) {
    INFO("snapshot " << i);
    CHECK(states[i].gpu.uuid == uuids[i]);
    CHECK(states[i].host == "node17");
    CHECK(Field(states[i], "remapped_rows.pending") == pending[i]);
    CHECK(Field(states[i], "remapped_rows.uncorrectable") == rows[i]);
  }
  CHECK(states[2].gpu.pci == "0000:3b:00.0");
  CHECK(FieldLine(states[2], "remapped_rows.pending") == 11);
  CHECK(FieldLine(states[2], "remapped_rows.uncorrectable") == 15);
  CHECK_FALSE(states[2].time.known());
  REQUIRE(states[4].time.known());
  CHECK(states[4].time.seconds == doctest::Approx(1709633583.0));
  CHECK(states[4].time.utc_offset_minutes == 0);
  CHECK(states[4].source.line == 17);
}

TEST_CASE("state sources: exporter labels, value formats and both DCGM name generations") {
  const std::string_view text =
      R"(DCGM_FI_DEV_XID_ERRORS{err_code="45", err_msg="Preemptive cleanup, due to previous errors -- Most likely to see when running multiple cuda", job="dcgm-exporter"} 45
DCGM_FI_DEV_XID_ERRORS{hostname="node\"18\"",modelName="NVIDIA A100-SXM4-80GB",device="nvidia3",uuid="GPU-cccc",gpu="3",err_code="64",err_msg="ECC page retirement or row remapping recording failure"} 64
DCGM_FI_DEV_ROW_REMAP_FAILURE{gpu="3",uuid="GPU-cccc",device="nvidia3",modelName="NVIDIA A100-SXM4-80GB",hostname="node\"18\"",} 1.000000e+00
DCGM_FI_DEV_BANKS_REMAP_ROWS_AVAIL_NONE{gpu="3",uuid="GPU-cccc",device="nvidia3",modelName="NVIDIA A100-SXM4-80GB",hostname="node\"18\""} 2.000000
DCGM_FI_DEV_RETIRED_SBE{gpu="3",uuid="GPU-cccc",device="nvidia3",modelName="NVIDIA A100-SXM4-80GB",hostname="node\"18\""} 9223372036854775794
DCGM_FI_DEV_RETIRED_DBE{gpu="3",uuid="GPU-cccc",device="nvidia3",modelName="NVIDIA A100-SXM4-80GB",hostname="node\"18\""} 0.500000
DCGM_FI_DEV_RETIRED_PENDING{gpu="3",uuid="GPU-cccc",device="nvidia3",modelName="NVIDIA A100-SXM4-80GB",hostname="node\"18\""} NaN
DCGM_FI_DEV_THRESHOLD_SRM{gpu="3",uuid="GPU-cccc",device="nvidia3",modelName="NVIDIA A100-SXM4-80GB",hostname="node\"18\""} 1
DCGM_FI_DEV_GET_GPU_RECOVERY_ACTION{gpu="3",uuid="GPU-cccc",device="nvidia3",modelName="NVIDIA A100-SXM4-80GB",hostname="node\"18\""} 4
DCGM_FI_DEV_MEMORY_UNREPAIRABLE_FLAG{gpu="3",uuid="GPU-cccc",device="nvidia3",modelName="NVIDIA A100-SXM4-80GB",hostname="node\"18\""} 0
DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu="3",uuid="GPU-cccc",device="nvidia3",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="1g.10gb",GPU_I_ID="13",hostname="node\"18\""} 7
DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu="3",uuid="GPU-cccc",device="nvidia3",modelName="NVIDIA A100-SXM4-80GB",hostname="node\"18\""} 2
DCGM_FI_DEV_ECC_SBE_VOL_TOTAL{gpu="3",uuid="GPU-cccc",device="nvidia3",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="1g.10gb",GPU_I_ID="13",hostname="node\"18\""} 11
DCGM_FI_DEV_ECC_DBE_AGG_TOTAL{gpu="3",uuid="GPU-cccc",DCGM_FI_DEV_SERIAL="1654123099999",hostname="node\"18\""} 4
DCGM_FI_DEV_ECC_DBE_AGG_TOTAL{gpu="3",uuid="GPU-cccc" 4
DCGM_FI_DEV_PCIE_REPLAY_COUNTER{gpu="3"} 1 2 3
node_cpu_seconds_total{cpu="0",mode="idle"} 123.45
)";
  const std::vector<GpuState> states = Read(text);
  REQUIRE(states.size() == 1);
  const GpuState& gpu = states[0];
  CHECK(gpu.host == "node\"18\"");
  CHECK(gpu.gpu.uuid == "GPU-cccc");
  CHECK(gpu.gpu.index == 3);
  CHECK(gpu.gpu.pci.empty());  // exporters before PR #326 print no pci_bus_id
  CHECK(gpu.source.line == 2);
  CHECK(Field(gpu, "dcgm.xid_last") == "64");
  CHECK(Field(gpu, "remapped_rows.failure") == "yes");
  CHECK(Field(gpu, "remapped_rows.histogram.none") == "2");
  CHECK(Field(gpu, "retired_pages.sbe") == "<absent>");      // DCGM_INT64_NOT_SUPPORTED
  CHECK(Field(gpu, "retired_pages.dbe") == "<absent>");      // not a whole number
  CHECK(Field(gpu, "retired_pages.pending") == "<absent>");  // NaN
  CHECK(Field(gpu, "ecc.errors.uncorrected.aggregate.sram.thresholdExceeded") == "yes");
  CHECK(Field(gpu, "gpu_recovery_action") == "Drain and Reset");
  CHECK(Field(gpu, "unrepairable_memory") == "no");
  // The whole-GPU sample wins over a MIG instance's; an instance fills what it alone gives.
  CHECK(Field(gpu, "ecc.errors.uncorrected.volatile.total") == "2");
  CHECK(FieldLine(gpu, "ecc.errors.uncorrected.volatile.total") == 12);
  CHECK(Field(gpu, "ecc.errors.corrected.volatile.total") == "11");
  // A label only a later sample has still fills the GPU's identity.
  CHECK(gpu.gpu.serial == "1654123099999");
  CHECK(Field(gpu, "ecc.errors.uncorrected.aggregate.total") == "4");
  CHECK(is_state_field("dcgm.xid_last"));
}

// A sample that names fewer labels is another key: gpu and UUID without a host here.
TEST_CASE("state sources: exporter samples with a serial label, and of no GPU at all") {
  const std::vector<GpuState> states = Read(
      R"(DCGM_FI_DEV_ECC_DBE_AGG_TOTAL{gpu="3",UUID="GPU-cccc",DCGM_FI_DEV_SERIAL="1654123099999"} 4
DCGM_FI_DEV_XID_ERRORS{err_code="0",err_msg="No Error"} 0
)");
  REQUIRE(states.size() == 1);
  CHECK(states[0].gpu.serial == "1654123099999");
  CHECK(Field(states[0], "ecc.errors.uncorrected.aggregate.total") == "4");
}

// ---------------------------------------------------------------------------------------------
// dcgmi health and diag.

// bundles.md 3.1: the DCGM 3.3.9 frame and split result rows (verbatim shape of the SageMaker
// sample), with the DCGM_FR_PENDING_ROW_REMAP message of GPU 1 cut every 45 characters
// (derived: rows `| %-25s | %-46s |`).
constexpr std::string_view kDiag3 = R"(Successfully ran diagnostic for group.
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Metadata  ----------+------------------------------------------------|
| DCGM Version              | 3.3.9                                          |
| Driver Version Detected   | 535.129.03                                     |
| GPU Device IDs Detected   | 20b2,20b2,20b2,20b2                            |
|-----  Deployment  --------+------------------------------------------------|
| Denylist                  | Pass                                           |
| NVML Library              | Pass                                           |
| Page Retirement/Row Remap | Pass - GPUs: 0, 2, 3                           |
|                           | Fail - GPU: 1                                  |
| Warning                   | GPU 1 had memory errors and row remappings ar  |
|                           | e pending                                      |
| Graphics Processes        | Pass - All                                     |
+-----  Hardware  ----------+------------------------------------------------+
| GPU Memory                | Pass - All                                     |
+---------------------------+------------------------------------------------+
)";

TEST_CASE("state sources: dcgmi diag 3.x text with a pending row remap") {
  const std::vector<GpuState> states = Read(kDiag3);
  REQUIRE(states.size() == 1);
  const GpuState& gpu = states[0];
  CHECK(gpu.gpu.index == 1);
  CHECK(gpu.gpu.pci.empty());
  CHECK_FALSE(gpu.time.known());
  CHECK(gpu.fields == std::map<std::string, std::string>{{"remapped_rows.pending", "yes"},
                                                         {"dcgm.diag.failed", "1"}});
  CHECK(FieldLine(gpu, "remapped_rows.pending") == LineOf(kDiag3, "| Warning"));
  CHECK(FieldLine(gpu, "dcgm.diag.failed") == LineOf(kDiag3, "Fail - GPU: 1"));
  CHECK(gpu.source.signature == "dcgmi");
  CHECK(gpu.source.line == LineOf(kDiag3, "Fail - GPU: 1"));
}

// stas00/ml-engineering debug.md, a `-r 2` fragment as posted (verbatim, its last row without
// its closing bar): GPU 0 fails GPU Memory, 1-7 pass.
TEST_CASE("state sources: dcgmi diag 3.x results name the GPUs that failed a test") {
  const std::string_view text =
      R"(| GPU Memory                | Pass - GPUs: 1, 2, 3, 4, 5, 6, 7               |
|                           | Fail - GPU: 0                                  |
| Warning                   | GPU 0 Thermal violations totaling 13.3 second  |
|                           | s started at 9.7 seconds into the test for GP  |
|                           | U 0 Verify that the cooling on this machine i  |
|                           | s functional, including external, thermal mat  |
|                           | erial interface, fans, and any other componen  |
|                           | ts.
)";
  const std::vector<GpuState> states = Read(text);
  REQUIRE(states.size() == 1);
  CHECK(states[0].gpu.index == 0);
  CHECK(states[0].fields == std::map<std::string, std::string>{{"dcgm.diag.failed", "1"}});
  CHECK(FieldLine(states[0], "dcgm.diag.failed") == 2);
}

// NVIDIA/DCGM#49 (verbatim head): a test every GPU failed names none; DCGM#254 (4.4.1,
// verbatim): a 4.x test that failed without a failing GPU row.
TEST_CASE("state sources: dcgmi diag failures with no GPU named go to a GPU of no id") {
  const std::string_view all =
      R"(+-----  Integration  -------+------------------------------------------------+
| PCIe                      | Fail - All                                     |
| Warning                   | GPU 0GPU 0's NvLink link 0 is currently down   |
|                           | Run a field diagnostic on the GPU., GPU 0GPU   |
)";
  std::vector<GpuState> states = Read(all);
  REQUIRE(states.size() == 1);
  CHECK_FALSE(states[0].gpu.index);
  CHECK(states[0].fields == std::map<std::string, std::string>{{"dcgm.diag.failed_all", "1"}});
  CHECK(FieldLine(states[0], "dcgm.diag.failed_all") == 2);

  const std::string_view whole_test =
      R"(| pcie                      | Fail                                           |
| Warning                   | There was an internal error during the test:   |
|                           | 'A child process (2378806) exited with non-ze  |
|                           | ro status 1' Check DCGM and system logs for e  |
+---------------------------+------------------------------------------------+
)";
  states = Read(whole_test);
  REQUIRE(states.size() == 1);
  CHECK_FALSE(states[0].gpu.index);
  CHECK(states[0].fields == std::map<std::string, std::string>{{"dcgm.diag.failed_all", "1"}});
  CHECK(FieldLine(states[0], "dcgm.diag.failed_all") == 1);
}

// bundles.md 3.1: the 4.x rows (verbatim frame of DCGM#124/#254), with the derived
// `Page Retirement/Row Remap: ` messages of two GPUs.
TEST_CASE("state sources: dcgmi diag 4.x text, two GPUs") {
  const std::string_view text = R"(Successfully ran diagnostic for group.
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Metadata  ----------+------------------------------------------------|
| DCGM Version              | 4.4.1                                          |
| Driver Version Detected   | 570.124.06                                     |
| GPU Device IDs Detected   | 2330, 2330                                     |
|-----  Deployment  --------+------------------------------------------------|
| software                  | Fail                                           |
|                           | GPU0: Fail                                     |
|                           | GPU1: Fail                                     |
| Warning: GPU0             | Page Retirement/Row Remap: GPU 0 had memory e  |
|                           | rrors and row remappings are pending           |
| Warning: GPU1             | Page Retirement/Row Remap: GPU 1 had uncorrec  |
|                           | table memory errors and 3 rows were remapped   |
+-----  Hardware  ----------+------------------------------------------------+
| memory                    | Pass                                           |
|                           | GPU0: Pass                                     |
|                           | GPU1: Pass                                     |
+---------------------------+------------------------------------------------+
)";
  const std::vector<GpuState> states = Read(text);
  REQUIRE(states.size() == 2);
  CHECK(states[0].gpu.index == 0);
  CHECK(Field(states[0], "remapped_rows.pending") == "yes");
  CHECK(Field(states[0], "remapped_rows.uncorrectable") == "<absent>");
  CHECK(FieldLine(states[0], "remapped_rows.pending") == 13);
  CHECK(states[1].gpu.index == 1);
  CHECK(Field(states[1], "remapped_rows.uncorrectable") == "3");
  CHECK(Field(states[1], "remapped_rows.pending") == "yes");
  CHECK(FieldLine(states[1], "remapped_rows.uncorrectable") == 15);
  // Both GPUs failed `software` by name; `memory` passed.
  CHECK(Field(states[0], "dcgm.diag.failed") == "1");
  CHECK(FieldLine(states[0], "dcgm.diag.failed") == 11);
  CHECK(Field(states[1], "dcgm.diag.failed") == "1");
  CHECK(Field(states[0], "dcgm.diag.failed_all") == "<absent>");
}

// bundles.md 3.3, derived box of the memory-watch failure (verbatim as given there); then the
// same watch with two incidents joined by ", " and word-wrapped at 54 characters.
TEST_CASE("state sources: dcgmi health -c memory system failure and remap limit") {
  const std::string_view text =
      R"(+---------------------------+----------------------------------------------------------+
| Health Monitor Report                                                                |
+===========================+==========================================================+
| Overall Health            | Failure                                                  |
| GPU                       |                                                          |
| -> 0                      | Failure                                                  |
|    -> Errors              |                                                          |
|       -> Memory system    | Failure                                                  |
|                           | GPU 0 had uncorrectable memory errors and row remapping  |
|                           | failed.                                                  |
+---------------------------+----------------------------------------------------------+

+---------------------------+----------------------------------------------------------+
| Health Monitor Report                                                                |
+===========================+==========================================================+
| Overall Health            | Failure                                                  |
| GPU                       |                                                          |
| -> 2                      | Failure                                                  |
|    -> Errors              |                                                          |
|       -> Memory system    | Failure                                                  |
|                           | GPU 2 had uncorrectable memory errors and row          |
|                           | remapping failed., GPU 2 exceeded uncorrectable row    |
|                           | remap limit with 512 remapped rows                     |
+---------------------------+----------------------------------------------------------+
)";
  const std::vector<GpuState> states = Read(text);
  REQUIRE(states.size() == 2);
  CHECK(states[0].gpu.index == 0);
  CHECK(states[0].fields == std::map<std::string, std::string>{{"remapped_rows.failure", "yes"}});
  CHECK(FieldLine(states[0], "remapped_rows.failure") == 8);
  CHECK(states[1].gpu.index == 2);
  CHECK(Field(states[1], "remapped_rows.failure") == "yes");
  CHECK(Field(states[1], "remapped_rows.uncorrectable") == "512");
  CHECK(FieldLine(states[1], "remapped_rows.uncorrectable") == 20);
}

TEST_CASE("state sources: other DCGM memory messages in a diag box") {
  const std::string_view text =
      R"(| Page Retirement/Row Remap | Fail - GPU: 4                                  |
| Warning                   | A pending retired page has been detected in G  |
|                           | PU 4.                                          |
| Warning                   | 15 or more retired pages have been detected i  |
|                           | n GPU 4.                                       |
| Warning                   | Detected 2 volatile double-bit ECC error(s) i  |
|                           | n GPU 4.                                       |
| Warning                   | SRAM Threshold Count exceeded on GPU 4: 9      |
| Warning                   | GPU 4 Max power of 224.1 did not reach desire  |
|                           | d power minimum target_power_min_ratio of 224  |
)";
  const std::vector<GpuState> states = Read(text);
  REQUIRE(states.size() == 1);
  CHECK(states[0].gpu.index == 4);
  CHECK(states[0].fields == std::map<std::string, std::string>{
                                {"retired_pages.pending", "yes"},
                                {"dcgm.retired_pages_at_least", "15"},
                                {"ecc.errors.uncorrected.volatile.total", "2"},
                                {"ecc.errors.uncorrected.aggregate.sram.thresholdExceeded", "yes"},
                                {"dcgm.diag.failed", "1"},
                            });
  CHECK(is_state_field("dcgm.retired_pages_at_least"));
  CHECK(is_state_field("dcgm.diag.failed"));
  CHECK(is_state_field("dcgm.diag.failed_all"));
}

// ---------------------------------------------------------------------------------------------
// nvidia-smi nvlink -e.

// stas00/ml-engineering debug.md (H100, verbatim but for its "[...]" line), then the GB300 of
// NVIDIA/srt-slurm#307 (tab-indented, no UUID) with a count planted on link 1.
TEST_CASE("state sources: nvidia-smi nvlink -e sums each counter over the links") {
  const std::string_view h100 = R"($ nvidia-smi nvlink -e
GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-abcdefab-cdef-abdc-abcd-abababababab)
         Link 0: Replay Errors: 0
         Link 0: Recovery Errors: 0
         Link 0: CRC Errors: 0

         Link 1: Replay Errors: 0
         Link 1: Recovery Errors: 0
         Link 1: CRC Errors: 0
)";
  std::vector<GpuState> states = Read(h100);
  REQUIRE(states.size() == 1);
  CHECK(states[0].gpu.index == 0);
  CHECK(states[0].gpu.product == "NVIDIA H100 80GB HBM3");
  CHECK(states[0].gpu.uuid == "GPU-abcdefab-cdef-abdc-abcd-abababababab");
  CHECK(states[0].source.line == 2);
  CHECK(states[0].fields == std::map<std::string, std::string>{{"nvlink.errors.replay", "0"},
                                                               {"nvlink.errors.recovery", "0"},
                                                               {"nvlink.errors.crc", "0"},
                                                               {"nvlink.errors.total", "0"}});
  CHECK(is_state_field("nvlink.errors.total"));

  const std::string_view gb300 =
      "GPU 0: NVIDIA GB300\n"
      "\t Link 0: Replay Errors: 0\n"
      "\t Link 0: Recovery Errors: 0\n"
      "\t Link 0: CRC Errors: 0\n"
      "\t Link 1: Replay Errors: 7\n"
      "\t Link 1: CRC Errors: 5\n"
      "GPU 1: NVIDIA GB300\n"
      "\t Link 0: Replay Errors: 0\n"
      "$ ls -al /dev/nvidia-caps-imex-channels/\n";
  states = Read(gb300);
  REQUIRE(states.size() == 2);
  CHECK(states[0].gpu.product == "NVIDIA GB300");
  CHECK(states[0].gpu.uuid.empty());
  CHECK(Field(states[0], "nvlink.errors.replay") == "7");
  CHECK(Field(states[0], "nvlink.errors.crc") == "5");
  CHECK(Field(states[0], "nvlink.errors.total") == "12");
  CHECK(FieldLine(states[0], "nvlink.errors.total") == 6);
  CHECK(FieldLine(states[0], "nvlink.errors.recovery") == 3);
  CHECK(states[1].gpu.index == 1);
  CHECK(Field(states[1], "nvlink.errors.total") == "0");
}

// `nvlink --status` (NVIDIA/k8s-test-infra#371, verbatim) has the GPU line and a speed per link:
// every link active. Issue 38: Azure/azhpc-diagnostics#73 (verbatim, the poster masked the UUID)
// has two links <inactive> beside active ones.
TEST_CASE("state sources: nvlink --status counts a GPU's active and inactive links") {
  const std::string_view status =
      R"(GPU 0: NVIDIA GB200 (UUID: GPU-d1b93026-6d5b-03bd-3a71-f85b47a61bde)
         Link 0: 53.125 GB/s
         Link 1: 53.125 GB/s
)";
  const auto all_up = Read(status);
  REQUIRE(all_up.size() == 1);
  CHECK(Field(all_up[0], "nvlink.links.active") == "2");
  CHECK(Field(all_up[0], "nvlink.links.inactive") == "0");
  const auto some_down = Read(R"(GPU 3: Tesla V100-SXM2-32GB (UUID: ...)
         Link 0: 25.781 GB/s
         Link 3: <inactive>
         Link 4: 25.781 GB/s
         Link 5: <inactive>
)");
  REQUIRE(some_down.size() == 1);
  CHECK(some_down[0].gpu.index == 3);
  CHECK(some_down[0].gpu.uuid.empty());
  CHECK(Field(some_down[0], "nvlink.links.inactive") == "2");
  CHECK(FieldLine(some_down[0], "nvlink.links.inactive") == 3);
}

// Issue 38: `dcgmi nvlink --link-status` (NVIDIA/DCGM#198, verbatim): a row of link states per
// GPU, by DCGM's key (Up=U, Down=D, Disabled=X, Not Supported=_).
TEST_CASE("state sources: dcgmi nvlink --link-status counts links up and down") {
  const auto states = Read(R"(+----------------------+
|  NvLink Link Status  |
+----------------------+
GPUs:
    gpuId 0:
        D D D D D D D D D D D D D D D D D D
    gpuId 1:
        U U _ X
NvSwitches:
    No NvSwitches found.
)");
  REQUIRE(states.size() == 2);
  CHECK(states[0].gpu.index == 0);
  CHECK(Field(states[0], "nvlink.links.down") == "18");
  CHECK(Field(states[1], "nvlink.links.up") == "2");
  CHECK(Field(states[1], "nvlink.links.down") == "0");
  CHECK(Read("    gpuId 2:\n        the link is fine\n").empty());
}

// ---------------------------------------------------------------------------------------------
// nvidia-smi's default table.

// AlexeyAB/darknet#86 (verbatim, a 369.30 WDDM table): ECC N/A, nothing stored but identity.
TEST_CASE("state sources: nvidia-smi table rows name the GPU by index and bus id") {
  const std::string_view text =
      R"(+-----------------------------------------------------------------------------+
| NVIDIA-SMI 369.30                 Driver Version: 369.30                    |
|-------------------------------+----------------------+----------------------+
| GPU  Name            TCC/WDDM | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  GeForce 840M       WDDM  | 0000:03:00.0     Off |                  N/A |
| N/A   37C    P8    N/A /  N/A |     52MiB /  2048MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
)";
  const std::vector<GpuState> states = Read(text);
  REQUIRE(states.size() == 1);
  CHECK(states[0].gpu.index == 0);
  CHECK(states[0].gpu.pci == "0000:03:00.0");
  CHECK(states[0].gpu.product == "GeForce 840M");
  CHECK(states[0].fields.empty());
  CHECK(states[0].source.line == 7);
}

// Azure/azhpc-diagnostics#77 (verbatim): ERR! in power usage, ECC 0; then
// utkuozdemir/nvidia_gpu_exporter#393 (verbatim): ERR! glued to the bar, ECC Off, names cut
// short; and the #77 row with an ECC count planted.
TEST_CASE("state sources: nvidia-smi table ERR! cells and the Volatile Uncorr. ECC column") {
  const std::string_view azure =
      R"(+-------------------------------+----------------------+----------------------+
|   1  Tesla V100-PCIE...  On   | 00008ED0:00:00.0 Off |                    0 |
| N/A   29C    P0   ERR! / 250W |    593MiB / 16160MiB |      0%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
)";
  std::vector<GpuState> states = Read(azure);
  REQUIRE(states.size() == 1);
  CHECK(states[0].gpu.index == 1);
  CHECK(states[0].gpu.pci == normalize_pci("00008ED0:00:00.0"));
  CHECK(states[0].gpu.product.empty());
  CHECK(states[0].fields ==
        std::map<std::string, std::string>{{"ecc.errors.uncorrected.volatile.total", "0"},
                                           {"smi.err_readings", "1"}});
  CHECK(FieldLine(states[0], "smi.err_readings") == 3);
  CHECK(is_state_field("smi.err_readings"));

  const std::string_view exporter =
      R"(+-----------------------------------------+------------------------+----------------------+
|  13  NVIDIA RTX 4000 Ada Gene...    On  |   00000000:C9:00.0 Off |                  Off |
| 30%   33C    P8              4W /  130W |       1MiB /  20475MiB |      0%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+
|  14  NVIDIA RTX 4000 Ada Gene...    On  |   00000000:CC:00.0 Off |                  Off |
|ERR!   68C    P2             99W /  130W |       1MiB /  20475MiB |     93%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+
)";
  states = Read(exporter);
  REQUIRE(states.size() == 2);
  CHECK(states[0].gpu.index == 13);
  CHECK(states[0].fields.empty());
  CHECK(states[1].gpu.index == 14);
  CHECK(states[1].gpu.pci == "0000:cc:00.0");
  CHECK(states[1].fields == std::map<std::string, std::string>{{"smi.err_readings", "1"}});

  states = Read("|   1  Tesla V100-PCIE...  On   | 00008ED0:00:00.0 Off |                    2 |");
  REQUIRE(states.size() == 1);
  CHECK(Field(states[0], "ecc.errors.uncorrected.volatile.total") == "2");
}

// bundles.md 3.2 schema, JsonCpp styled, after the prompt that ran it.
constexpr std::string_view kDiagJson = R"(root@node17:~# dcgmi diag -r 1 -j
{
	"DCGM Diagnostic" : 
	{
		"test_categories" : 
		[
			{
				"category" : "Deployment",
				"tests" : 
				[
					{
						"name" : "software",
						"results" : 
						[
							{
								"entity_group" : "GPU",
								"entity_group_id" : 1,
								"entity_id" : 0,
								"status" : "Pass"
							},
							{
								"entity_group" : "GPU",
								"entity_group_id" : 1,
								"entity_id" : 5,
								"status" : "Fail",
								"warnings" : 
								[
									{
										"error_category" : 1,
										"error_id" : 85,
										"error_severity" : 2,
										"warning" : "Page Retirement/Row Remap: GPU 5 had memory errors and row remappings are pending"
									}
								]
							}
						],
						"test_summary" : 
						{
							"status" : "Fail"
						}
					}
				]
			}
		]
	},
	"metadata" : 
	{
		"Driver Version Detected" : "570.124.06",
		"version" : "4.4.1"
	}
}
root@node17:~#
)";

TEST_CASE("state sources: dcgmi JSON, 4.x diag, 3.x diag and health") {
  SUBCASE("4.x diag -j (bundles.md 3.2 schema, JsonCpp styled)") {
    const std::string_view text = kDiagJson;
    const std::vector<GpuState> states = Read(text);
    REQUIRE(states.size() == 1);
    CHECK(states[0].gpu.index == 5);
    CHECK(Field(states[0], "remapped_rows.pending") == "yes");
    CHECK(FieldLine(states[0], "remapped_rows.pending") == LineOf(text, "\"warning\" :"));
  }
  SUBCASE("3.x diag -j, the message under \"warnings\" inside a warning") {
    const std::vector<GpuState> states = Read(
        R"({"DCGM GPU Diagnostic": {"test_categories": [{"category": "Deployment", "tests": [{"name": "Page Retirement/Row Remap", "results": [{"gpu_id": 2, "status": "Fail", "warnings": [{"warnings": "GPU 2 had uncorrectable memory errors and row remapping failed.", "error_id": 80}]}]}]}]}}
)");
    REQUIRE(states.size() == 1);
    CHECK(states[0].gpu.index == 2);
    CHECK(Field(states[0], "remapped_rows.failure") == "yes");
    CHECK(FieldLine(states[0], "remapped_rows.failure") == 1);
  }
  SUBCASE("health -j (bundles.md 3.3, derived)") {
    const std::vector<GpuState> states = Read(
        R"({"body": {"GPU": {"children": {"0": {"value": "Failure", "children": {"Errors": {"children": {"Memory system": {"value": "Failure", "overflow": ["GPU 0 had uncorrectable memory errors and row remapping", "failed."]}}}}}}}, "Overall Health": {"value": "Failure"}}, "header": ["Health Monitor Report"]}
{"body":{"Overall Health":{"value":"Healthy"}},"header":["Health Monitor Report"]}
)");
    REQUIRE(states.size() == 1);
    CHECK(states[0].gpu.index == 0);
    CHECK(Field(states[0], "remapped_rows.failure") == "yes");
  }
  SUBCASE("other JSON, broken JSON and an unclosed brace are passed over") {
    const std::vector<GpuState> states = Read(
        R"({"step": 10, "loss": 1.25, "msg": "GPU 0 had memory errors and row remappings are pending"}
{"DCGM Diagnostic": {"x": "GPU 1 had memory errors and row remappings are pending"}, ]
{ an unclosed brace in prose
| Warning                   | GPU 3 had memory errors and row remappings ar  |
|                           | e pending                                      |
)");
    REQUIRE(states.size() == 1);
    CHECK(states[0].gpu.index == 3);
  }
}

// ---------------------------------------------------------------------------------------------
// nvidia-bug-report.log.gz.

// One gzip member, as nvidia-bug-report.sh appends each section through `gzip -c`.
std::string GzipMember(std::string_view text) {
  z_stream stream{};
  REQUIRE(deflateInit2(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&stream, text.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&stream, Z_FINISH) == Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

// bundles.md 1.2-1.6: the prologue (LOG520, verbatim but for the date and uname values), the
// kernel-log scan with a journal sub-header, `dmesg:`, a base64 block, the nvidia-smi block
// (`<path> --query`, two blanks, NVSMI LOG; then `--query --unit`), and the epilogue. One
// member per section.
const std::vector<std::string_view> kBugReportSections = {
    R"(____________________________________________

Start of NVIDIA bug report log file.  Please include this file, along
with a detailed description of your problem, when reporting a graphics
driver bug via the NVIDIA Linux forum (see forums.developer.nvidia.com)
or by sending email to 'linux-bugs@nvidia.com'.

nvidia-bug-report.sh Version: 31831145

Date: Tue Mar  5 10:20:11 AM UTC 2024
uname: Linux gpu-node17 5.15.0-105-generic #115-Ubuntu SMP Mon Apr 15 09:52:04 UTC 2024 x86_64 x86_64 x86_64 GNU/Linux
command line flags: 
)",
    R"(____________________________________________

Scanning kernel log files for NVIDIA kernel messages:

  journalctl -b -0:
Mar 05 10:02:41 gpu-node17 kernel: NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023
Mar 05 10:12:30 gpu-node17 kernel: NVRM: Xid (PCI:0000:3b:00): 64, pid=48213, name=python, Row Remapper Error: (0x0000000003f1a2c0) - All reserved rows for bank are remapped
)",
    R"(____________________________________________

dmesg:

[    0.000000] Linux version 5.15.0-105-generic (buildd@lcy02-amd64-007) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #115-Ubuntu SMP Mon Apr 15 09:52:04 UTC 2024 (Ubuntu 5.15.0-105.115-generic 5.15.149)
[  589.221034] NVRM: Xid (PCI:0000:3b:00): 64, pid=48213, name=python, Row Remapper Error: (0x0000000003f1a2c0) - All reserved rows for bank are remapped
)",
    R"(____________________________________________

base64 "nvidia-nvml-temp11545.log"

pU3KGCUwux1tEyze1iN7LtkeP3IfyxlxF0SU1kk8nVw0YL4xIB5p/tqg7ui5mX9cfCmZ/a/lkyU8
1lSvTfrXFCegrrP+6SMvivIhH57kkcWxC+y1Vjv8Hm+TQn7LyP4pVeXNjg==

)",
    R"(____________________________________________

/usr/bin/nvidia-smi --query


==============NVSMI LOG==============

Timestamp                                 : Tue Mar  5 10:20:14 2024
Driver Version                            : 535.129.03
CUDA Version                              : 12.2

Attached GPUs                             : 1
GPU 00000000:3B:00.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    Serial Number                         : 1652320012345
    GPU UUID                              : GPU-5d1e2f3a-8b7c-4d6e-9f01-23456789abcd
    Minor Number                          : 0
    PCI
        Bus                               : 0x3B
        Device                            : 0x00
        Domain                            : 0x0000
        Bus Id                            : 00000000:3B:00.0
    ECC Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 9
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 9
    Retired Pages
        Single Bit ECC                    : N/A
        Double Bit ECC                    : N/A
        Pending Page Blacklist            : N/A
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 8
        Pending                           : No
        Remapping Failure Occurred        : Yes
        Bank Remap Availability Histogram
            Max                           : 639 bank(s)
            High                          : 0 bank(s)
            Partial                       : 0 bank(s)
            Low                           : 0 bank(s)
            None                          : 1 bank(s)
    GPU Reset Status
        Reset Required                    : No
        Drain and Reset Recommended       : No
    Temperature
        GPU Current Temp                  : 34 C

/usr/bin/nvidia-smi --query --unit


==============NVSMI LOG==============

Timestamp                                 : Tue Mar  5 10:20:15 2024
Driver Version                            : 535.129.03
CUDA Version                              : 12.2

Attached Units                            : 0

)",
    R"(____________________________________________

End of NVIDIA bug report log file.
)",
};

// A fresh file under the system's temporary folder, removed with the test.
class TempFile {
 public:
  explicit TempFile(std::string_view bytes) {
    static std::atomic<int> counter{0};
    path_ = (std::filesystem::temp_directory_path() /
             ("faultline-state-sources-" + std::to_string(getpid()) + "-" +
              std::to_string(counter++) + "-nvidia-bug-report.log.gz"))
                .string();
    std::ofstream(path_, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST_CASE("state sources: nvidia-bug-report.log.gz, one gzip member per section") {
  std::string bundle;
  std::string text;
  for (std::string_view section : kBugReportSections) {
    bundle += GzipMember(section);
    text += section;
  }
  const TempFile file(bundle);
  std::string error;
  std::unique_ptr<LineReader> reader = LineReader::Open(file.path(), &error);
  REQUIRE_MESSAGE(reader, error);
  const std::vector<Table> tables = builtin_tables();
  std::unique_ptr<SignatureSet> signatures = SignatureSet::Build(tables, &error);
  REQUIRE_MESSAGE(signatures, error);
  const ScanResult result = scan_input(*reader, *signatures, ScanOptions{});
  CHECK(result.input.compression == "gzip");
  CHECK(result.input.error.empty());
  CHECK(result.input.lines == static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n')));

  // The -q section is read where it lies in the bundle; the --unit dump adds no GPU.
  REQUIRE(result.states.size() == 1);
  const GpuState& gpu = result.states[0];
  CHECK(gpu.gpu.pci == "0000:3b:00.0");
  CHECK(gpu.gpu.serial == "1652320012345");
  CHECK(Field(gpu, "remapped_rows.failure") == "yes");
  CHECK(Field(gpu, "remapped_rows.uncorrectable") == "8");
  CHECK(Field(gpu, "remapped_rows.histogram.none") == "1");
  CHECK(Field(gpu, "ecc.errors.uncorrected.volatile.dram") == "9");
  CHECK(FieldLine(gpu, "remapped_rows.failure") ==
        LineOf(text, "Remapping Failure Occurred        : Yes"));
  CHECK(gpu.field_lines.at("remapped_rows.failure").second ==
        "        Remapping Failure Occurred        : Yes");
  CHECK(gpu.source.line == LineOf(text, "GPU 00000000:3B:00.0"));
  CHECK(gpu.time.seconds == doctest::Approx(1709634014.0));  // 2024-03-05 10:20:14

  // The Xid 64 of the journal scan and of dmesg, at their lines in the bundle.
  std::vector<uint64_t> xid64_lines;
  for (const Event& event : result.events) {
    if (event.xid == 64) xid64_lines.push_back(event.evidence.line);
  }
  CHECK(std::count(xid64_lines.begin(), xid64_lines.end(),
                   LineOf(text, "gpu-node17 kernel: NVRM: Xid")) == 1);
  CHECK(std::count(xid64_lines.begin(), xid64_lines.end(),
                   LineOf(text, "[  589.221034] NVRM: Xid")) == 1);

  // Fed line by line to a StateReader, the text gives the same snapshot.
  const std::vector<GpuState> direct = Read(text);
  REQUIRE(direct.size() == 1);
  CHECK(direct[0].fields == gpu.fields);
  CHECK(direct[0].field_lines == gpu.field_lines);

  // Diagnosed whole: a remap failure, its evidence pointing into the bundle.
  Catalog catalog;
  REQUIRE_MESSAGE(load_catalog({}, &catalog, &error), error);
  const Analysis analysis = analyze({file.path()}, catalog);
  REQUIRE_FALSE(analysis.diagnoses.empty());
  const Diagnosis& top = analysis.diagnoses[0];
  CHECK(top.failure->id == "row-remap-failure");
  CHECK(top.gpu.pci == "0000:3b:00.0");
  CHECK(top.gpu.serial == "1652320012345");
  const auto cites = [&](uint64_t line) {
    return std::any_of(top.evidence.begin(), top.evidence.end(),
                       [&](const Evidence& e) { return e.path == file.path() && e.line == line; });
  };
  CHECK(cites(LineOf(text, "[  589.221034] NVRM: Xid")));
  CHECK(cites(LineOf(text, "Remapping Failure Occurred        : Yes")));
}

// Every reader sees every line: one input holding all shapes gives each shape's snapshots once.
TEST_CASE("state sources: all shapes in one input, in input order") {
  std::string text;
  for (std::string_view part : {kDiag3, kSameGpuXml, kCncfScrape, kSameGpuQuery}) {
    text += part;
    text += "\n";
  }
  const std::vector<GpuState> states = Read(text);
  REQUIRE(states.size() == 4);
  CHECK(states[0].source.signature == "dcgmi");
  CHECK(states[1].source.signature == "nvidia-smi-xml");
  CHECK(states[2].source.signature == "dcgm-exporter");
  CHECK(states[3].source.signature == "nvidia-smi-q");
}

// StateReader hands a line to no reader while none is inside a dump and none may open one with
// it; each reader fed every line must give the same snapshots. Checked on every shape above,
// alone and with kernel, training and prose lines between its lines (which end dumps early).
TEST_CASE("state sources: the idle gate gives what feeding every reader gives") {
  const std::vector<std::string_view> noise = {
      "Mar  5 10:12:33 node17 kernel: [ 5133.182934] mlx5_core 0000:18:00.0: Port module event",
      "[rank3]:  [2024-03-05 08:51:06] iteration      148/  500000 | lm loss: 1.033878E+01 |",
      "Timestamp is not a key here",
      "gpu temperatures were fine",
      "# a shell comment",
      "{\"not\": \"dcgmi\"}",
      "| a table | row |",
      "<html>",
      "DCGM_FI_DEV_GPU_TEMP 41",
      "",
  };
  const auto split = [](std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
      const size_t end = std::min(text.find('\n'), text.size());
      lines.push_back(text.substr(0, end));
      text.remove_prefix(std::min(end + 1, text.size()));
    }
    return lines;
  };
  const auto summary = [](const std::vector<GpuState>& states) {
    std::string out;
    for (const GpuState& state : states) {
      out += state.source.signature + " " + state.gpu.pci + " " + state.time.iso() + " @" +
             std::to_string(state.source.line) + "\n";
      for (const auto& [field, value] : state.fields) {
        out += "  " + field + "=" + value + " @" +
               std::to_string(state.field_lines.at(field).first) + "\n";
      }
    }
    return out;
  };
  size_t compared = 0;
  for (std::string_view part : {kSameGpuQuery, kSameGpuXml, kSameGpuCsv, kSameGpuScrape, kRtx3060,
                                kV100Driver418, kCncfScrape, kDiag3, kDiagJson}) {
    for (size_t every : {0, 1, 3, 17}) {
      std::vector<std::string_view> lines;
      size_t n = 0;
      for (std::string_view line : split(part)) {
        lines.push_back(line);
        if (every > 0 && ++n % every == 0) lines.push_back(noise[n % noise.size()]);
      }
      std::vector<GpuState> direct;
      state_internal::QueryTextReader query("node17/dump.txt", &direct);
      state_internal::CsvQueryReader csv("node17/dump.txt", &direct);
      state_internal::XmlDumpReader xml("node17/dump.txt", &direct);
      state_internal::ExporterReader exporter("node17/dump.txt", &direct);
      state_internal::DcgmiReader dcgmi("node17/dump.txt", &direct);
      StateReader gated("node17/dump.txt");
      uint64_t number = 0;
      for (std::string_view line : lines) {
        ++number;
        query.Feed(line, number);
        csv.Feed(line, number);
        xml.Feed(line, number);
        exporter.Feed(line, number);
        dcgmi.Feed(line, number);
        gated.Feed(line, number);
      }
      query.Finish();
      csv.Finish();
      xml.Finish();
      exporter.Finish();
      dcgmi.Finish();
      const std::vector<GpuState> states = gated.Finish();
      CHECK(summary(states) == summary(direct));
      compared += direct.size();
    }
  }
  CHECK(compared > 30);
}

// Lines posted in kubeflow/kubeflow#68 (Clocks Throttle Reasons, 2018), in l4rz's write-up of
// Dell C4130 power brakes (HW Power Brake Slowdown under HW Slowdown) and the Arch wiki's
// Temperature section (550.54.14).
TEST_CASE("state sources: clock event reasons and temperatures of nvidia-smi -q") {
  SUBCASE("HW Thermal and HW Power Brake Slowdown are read under HW Slowdown, which has a value") {
    const std::vector<GpuState> states = Read(R"(    Clocks Throttle Reasons
        Idle                        : Active
        Applications Clocks Setting : Not Active
        SW Power Cap                : Not Active
        HW Slowdown                 : Not Active
            HW Thermal Slowdown     : Not Active
            HW Power Brake Slowdown : Not Active
        Sync Boost                  : Not Active
        SW Thermal Slowdown         : Not Active
)");
    REQUIRE(states.size() == 1);
    CHECK(Field(states[0], "clocks_event_reasons.hw_slowdown") == "no");
    CHECK(Field(states[0], "clocks_event_reasons.hw_thermal_slowdown") == "no");
    CHECK(Field(states[0], "clocks_event_reasons.hw_power_brake_slowdown") == "no");
    CHECK(Field(states[0], "clocks_event_reasons.sw_thermal_slowdown") == "no");
    CHECK(Field(states[0], "clocks_event_reasons.sw_power_cap") == "no");
    CHECK(FieldLine(states[0], "clocks_event_reasons.hw_power_brake_slowdown") == 7);
  }
  SUBCASE("an active power brake, pasted without indentation") {
    const std::vector<GpuState> states = Read(R"(Clocks Throttle Reasons
    Idle                              : Not Active
    Applications Clocks Setting       : Not Active
    SW Power Cap                      : Not Active
    HW Slowdown                       : Active
        HW Thermal Slowdown           : Not Active
        HW Power Brake Slowdown       : Active

Clocks
    Graphics                          : 382 MHz
    SM                                : 382 MHz
)");
    REQUIRE(states.size() == 1);
    CHECK(Field(states[0], "clocks_event_reasons.hw_slowdown") == "yes");
    CHECK(Field(states[0], "clocks_event_reasons.hw_thermal_slowdown") == "no");
    CHECK(Field(states[0], "clocks_event_reasons.hw_power_brake_slowdown") == "yes");
  }
  SUBCASE("the newer section name, a GPU block, and the temperatures in whole degrees") {
    const std::vector<GpuState> states = Read(R"(GPU 00000000:01:00.0
    Clocks Event Reasons
        Idle                              : Active
        HW Slowdown                       : Active
            HW Thermal Slowdown           : Active
            HW Power Brake Slowdown       : Not Active
        Sync Boost                        : Not Active
        SW Thermal Slowdown               : Active
    Temperature
        GPU Current Temp                  : 49 C
        GPU T.Limit Temp                  : N/A
        GPU Shutdown Temp                 : 95 C
        GPU Slowdown Temp                 : 92 C
        GPU Max Operating Temp            : 90 C
        GPU Target Temperature            : 83 C
)");
    REQUIRE(states.size() == 1);
    CHECK(states[0].gpu.pci == "0000:01:00.0");
    CHECK(Field(states[0], "clocks_event_reasons.hw_slowdown") == "yes");
    CHECK(Field(states[0], "clocks_event_reasons.hw_thermal_slowdown") == "yes");
    CHECK(Field(states[0], "clocks_event_reasons.hw_power_brake_slowdown") == "no");
    CHECK(Field(states[0], "clocks_event_reasons.sw_thermal_slowdown") == "yes");
    CHECK(Field(states[0], "temperature.gpu") == "49");
    CHECK(Field(states[0], "temperature.gpu.shutdown") == "95");
    CHECK(Field(states[0], "temperature.gpu.slowdown") == "92");
    CHECK(Field(states[0], "temperature.gpu.max_operating") == "90");
    CHECK(is_state_field("clocks_event_reasons.hw_power_brake_slowdown"));
    CHECK(is_state_field("temperature.gpu.slowdown"));
  }
  // The element layout of a 550-series `-q -x`, its reasons set as for a power brake.
  SUBCASE("-q -x names the same reasons and temperatures as elements") {
    const std::vector<GpuState> states = Read(R"(<?xml version="1.0" ?>
<nvidia_smi_log>
	<gpu id="00000000:01:00.0">
		<clocks_event_reasons>
			<clocks_event_reason_gpu_idle>Active</clocks_event_reason_gpu_idle>
			<clocks_event_reason_sw_power_cap>Not Active</clocks_event_reason_sw_power_cap>
			<clocks_event_reason_hw_slowdown>Active</clocks_event_reason_hw_slowdown>
			<clocks_event_reason_hw_thermal_slowdown>Not Active</clocks_event_reason_hw_thermal_slowdown>
			<clocks_event_reason_hw_power_brake_slowdown>Active</clocks_event_reason_hw_power_brake_slowdown>
			<clocks_event_reason_sw_thermal_slowdown>Not Active</clocks_event_reason_sw_thermal_slowdown>
		</clocks_event_reasons>
		<temperature>
			<gpu_temp>39 C</gpu_temp>
			<gpu_temp_tlimit>N/A</gpu_temp_tlimit>
			<gpu_temp_max_threshold>99 C</gpu_temp_max_threshold>
			<gpu_temp_slow_threshold>96 C</gpu_temp_slow_threshold>
			<gpu_temp_max_gpu_threshold>N/A</gpu_temp_max_gpu_threshold>
		</temperature>
	</gpu>
</nvidia_smi_log>
)");
    REQUIRE(states.size() == 1);
    CHECK(Field(states[0], "clocks_event_reasons.hw_slowdown") == "yes");
    CHECK(Field(states[0], "clocks_event_reasons.hw_power_brake_slowdown") == "yes");
    CHECK(Field(states[0], "clocks_event_reasons.hw_thermal_slowdown") == "no");
    CHECK(Field(states[0], "temperature.gpu") == "39");
    CHECK(Field(states[0], "temperature.gpu.shutdown") == "99");
    CHECK(Field(states[0], "temperature.gpu.slowdown") == "96");
    CHECK(Field(states[0], "temperature.gpu.max_operating") == "<absent>");
  }
}

}  // namespace
}  // namespace faultline
