// The contract between C++ and the signature tables: the capture names (named groups of a
// signature's pattern) that code reads, and the event fields and event ids that code makes.
// A table may capture any other name; these mean what is said here, and `signatures lint`
// rejects a table that gives one the wrong shape or captures a name that only code may set.
// docs/architecture.md, "Reserved capture names", is this table in prose.
#pragma once

#include <span>
#include <string_view>

namespace faultline::capture {

// What a reserved capture's text must look like.
enum class Shape {
  kPciAddress,  // any spelling normalize_pci() reads ("PCI:0000:3b:00", "00000000:3B:00.0")
  kInteger,     // decimal digits, "-" before them allowed ("last enqueued NCCL work: -1")
  kText,        // anything
  kCodeOnly,    // set by code from the line's envelope or from other events: never captured
};

// Fills Event::gpu.pci: the GPU the line is about.
inline constexpr std::string_view kPci = "pci";
// Fills Event::xid (else the signature's "xid" key does).
inline constexpr std::string_view kXid = "xid";
// Fill Event::gpu.uuid and Event::gpu.serial; identity signatures tie them to the GPU's address.
inline constexpr std::string_view kUuid = "uuid";
inline constexpr std::string_view kSerial = "serial";
// Fills Event::rank: the job's global rank that printed the line.
inline constexpr std::string_view kRank = "rank";
// NCCL's init line: the communicator's size; the one spanning the job is the world.
inline constexpr std::string_view kNranks = "nranks";
// A node-local rank (Lightning, torchrun): with the host and CUDA_VISIBLE_DEVICES, a GPU.
inline constexpr std::string_view kLocalRank = "local_rank";
inline constexpr std::string_view kVisibleDevices = "visible_devices";
// The PyTorch watchdog's process group and its count of enqueued collectives: the rank that
// enqueued fewer than the others held the collective up (nccl-rank-behind).
inline constexpr std::string_view kProcessGroup = "pg";
inline constexpr std::string_view kLastEnqueued = "last_enqueued";
// "caused by previous Xid N": the Xid a class's "xid" condition also counts.
inline constexpr std::string_view kCausedByXid = "caused_by_xid";
// Set by code: the dmesg "[secs]" stamp of a line whose envelope also has a date, and the mark
// that a boot-relative time was converted with it.
inline constexpr std::string_view kBootSeconds = "boot_seconds";
inline constexpr std::string_view kTimeFromBoot = "time_from_boot";
// Set by code: which boot of the machine the line was logged in, counted from the input's
// first boot marker or fall of the kernel's uptime (absent before the first).
inline constexpr std::string_view kBoot = "boot";
// Set by code on an unrecognised line: the line with what varies between occurrences of one
// message masked, which groups them (extract/unrecognised.h).
inline constexpr std::string_view kTemplate = "template";
// Set by code on an unrecognised line that came within a few lines after a recognised one of
// the same input (every line of its template did): the recognised line's signature. Such a
// line is most likely the rest of that fault's own report or traceback.
inline constexpr std::string_view kFollows = "follows";

// An NVLink5 Xid (144-150): the unit the line prints ("TLW_RX/TLW_RX_PIPE0") and its intrInfo and
// errorStatus words, which NVIDIA's 144-150 decode table reads (diagnose/diagnose.h,
// decode_nvlink5).
inline constexpr std::string_view kNvlinkUnit = "sub_component";
inline constexpr std::string_view kIntrInfo = "intr_info";
inline constexpr std::string_view kErrorStatus = "error_status";
// Set by code on an NVLink5 Xid from that table: the Data Center Recovery Action ("RESET_GPU",
// "IGNORE", "XID_154_EVAL"; "undecoded" when the table has no row for the line), the severity
// ("Fatal", "Non-fatal", "Link Fatal"; absent when undecoded), and what was decoded or why not,
// in words, for a class's notes.
inline constexpr std::string_view kCatalogAction = "catalog_action";
inline constexpr std::string_view kCatalogSeverity = "catalog_severity";
inline constexpr std::string_view kCatalogDecode = "catalog_decode";

// A CUDA error as a line names it: the message cudaGetErrorString returns ("an illegal memory
// access was encountered"), a runtime name (cudaErrorIllegalAddress) or a driver name
// (CUDA_ERROR_ILLEGAL_ADDRESS). Code sets, from the tables' "cuda_errors", its number, its
// runtime name and NVIDIA's meaning of it (decode_cuda_errors, diagnose.h).
inline constexpr std::string_view kCudaError = "cuda_error";
inline constexpr std::string_view kCudaErrorCode = "cuda_error_code";
inline constexpr std::string_view kCudaErrorName = "cuda_error_name";
inline constexpr std::string_view kCudaErrorMeaning = "cuda_error_meaning";
inline constexpr std::string_view kCudaErrorKind = "cuda_error_kind";

// An NVML error as a line names it: nvmlErrorString's text ("GPU is lost"), its nvml.h name
// (NVML_ERROR_GPU_IS_LOST) or a binding's (pynvml's NVMLError_GpuIsLost). Code sets, from the
// tables' "nvml_errors", its number, its nvml.h name, NVIDIA's meaning and its kind
// (decode_nvml_errors, diagnose.h).
inline constexpr std::string_view kNvmlError = "nvml_error";
inline constexpr std::string_view kNvmlErrorCode = "nvml_error_code";
inline constexpr std::string_view kNvmlErrorName = "nvml_error_name";
inline constexpr std::string_view kNvmlErrorMeaning = "nvml_error_meaning";
inline constexpr std::string_view kNvmlErrorKind = "nvml_error_kind";

// A DCGM error code by name (DCGM_FR_PENDING_ROW_REMAP). Code sets, from the tables'
// "dcgm_errors", its number, DCGM's message and next steps, the severity DCGM gives it (ISOLATE,
// RESET, TRIAGE, MONITOR, CONFIG, UNKNOWN) and its kind (decode_dcgm_errors, diagnose.h).
inline constexpr std::string_view kDcgmError = "dcgm_error";
inline constexpr std::string_view kDcgmErrorCode = "dcgm_error_code";
inline constexpr std::string_view kDcgmErrorMessage = "dcgm_error_message";
inline constexpr std::string_view kDcgmErrorNextSteps = "dcgm_error_next_steps";
inline constexpr std::string_view kDcgmErrorSeverity = "dcgm_error_severity";
inline constexpr std::string_view kDcgmErrorKind = "dcgm_error_kind";

// An NVSwitch SXid's number, as a line prints it. Code sets, from the tables' "sxids" (NVIDIA's
// Fabric Manager guide), its name and "Fatal" or "Non-fatal" (decode_sxids, diagnose.h).
inline constexpr std::string_view kSxid = "sxid";
inline constexpr std::string_view kSxidName = "sxid_name";
inline constexpr std::string_view kSxidSeverity = "sxid_severity";

struct Reserved {
  std::string_view name;
  Shape shape;
};

inline constexpr Reserved kReserved[] = {
    {kPci, Shape::kPciAddress},
    {kXid, Shape::kInteger},
    {kUuid, Shape::kText},
    {kSerial, Shape::kText},
    {kRank, Shape::kInteger},
    {kNranks, Shape::kInteger},
    {kLocalRank, Shape::kInteger},
    {kVisibleDevices, Shape::kText},
    {kProcessGroup, Shape::kText},
    {kLastEnqueued, Shape::kInteger},
    {kCausedByXid, Shape::kInteger},
    {kBootSeconds, Shape::kCodeOnly},
    {kTimeFromBoot, Shape::kCodeOnly},
    {kBoot, Shape::kCodeOnly},
    {kTemplate, Shape::kCodeOnly},
    {kFollows, Shape::kCodeOnly},
    {kNvlinkUnit, Shape::kText},
    {kIntrInfo, Shape::kText},
    {kErrorStatus, Shape::kText},
    {kCatalogAction, Shape::kCodeOnly},
    {kCatalogSeverity, Shape::kCodeOnly},
    {kCatalogDecode, Shape::kCodeOnly},
    {kCudaError, Shape::kText},
    {kCudaErrorCode, Shape::kCodeOnly},
    {kCudaErrorName, Shape::kCodeOnly},
    {kCudaErrorMeaning, Shape::kCodeOnly},
    {kCudaErrorKind, Shape::kCodeOnly},
    {kNvmlError, Shape::kText},
    {kNvmlErrorCode, Shape::kCodeOnly},
    {kNvmlErrorName, Shape::kCodeOnly},
    {kNvmlErrorMeaning, Shape::kCodeOnly},
    {kNvmlErrorKind, Shape::kCodeOnly},
    {kDcgmError, Shape::kText},
    {kDcgmErrorCode, Shape::kCodeOnly},
    {kDcgmErrorMessage, Shape::kCodeOnly},
    {kDcgmErrorNextSteps, Shape::kCodeOnly},
    {kDcgmErrorSeverity, Shape::kCodeOnly},
    {kDcgmErrorKind, Shape::kCodeOnly},
    {kSxid, Shape::kInteger},
    {kSxidName, Shape::kCodeOnly},
    {kSxidSeverity, Shape::kCodeOnly},
};

// The reserved capture of that name, or nullptr.
constexpr const Reserved* find_reserved(std::string_view name) {
  for (const Reserved& reserved : kReserved) {
    if (reserved.name == name) return &reserved;
  }
  return nullptr;
}

}  // namespace faultline::capture

namespace faultline::derived {

// Events made by code rather than by a line signature; a table names them in "events" and
// its classes may name them in conditions.
inline constexpr std::string_view kRankBehind = "nccl-rank-behind";  // correlate/stragglers
// correlate/inventory
inline constexpr std::string_view kGpuMissing = "gpu-missing-from-nvidia-smi";
inline constexpr std::string_view kDcgmXidField = "dcgm-xid-field";
inline constexpr std::string_view kLossNan = "loss-nan";  // correlate/anomaly, all
inline constexpr std::string_view kGradNormNan = "grad-norm-nan";
inline constexpr std::string_view kLossSpike = "loss-spike";
inline constexpr std::string_view kGradNormSpike = "grad-norm-spike";
inline constexpr std::string_view kLossDivergence = "loss-divergence";
inline constexpr std::string_view kValidationLossDivergence = "validation-loss-divergence";
inline constexpr std::string_view kTrainingStall = "training-stall";
inline constexpr std::string_view kIterationsSkipped = "iterations-skipped";
inline constexpr std::string_view kLossResumeSpike = "loss-resume-spike";

// The anomalies of a training series (correlate/anomaly): each has the fields "step" and
// "segment", and its evidence is the point's line.
inline constexpr std::string_view kMetricAnomalies[] = {
    kLossNan,       kGradNormNan,       kLossSpike,
    kGradNormSpike, kLossDivergence,    kValidationLossDivergence,
    kTrainingStall, kIterationsSkipped, kLossResumeSpike};

}  // namespace faultline::derived
