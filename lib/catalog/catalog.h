// The knowledge base: the signature tables of signatures/ (built in) and of --signatures
// folders, their failure classes and NVIDIA's Xid catalog, and the checks that keep them honest.
// The line signatures themselves are catalog/signatures.h.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace faultline {

struct Table;
class SignatureSet;

enum class Severity { kInfo, kWarning, kError, kCritical };

std::string_view severity_name(Severity severity);
// "info", "warning", "error", "critical"; nullopt for anything else.
std::optional<Severity> parse_severity(std::string_view name);

// One piece of evidence a class looks for: events (of a signature, with an Xid), or a state
// field's value.
struct Condition {
  std::string signature;  // events of this signature (any signature if empty and xids set) ...
  std::vector<int> xids;  // ... with one of these Xids; an Xid that a later line names as its
                          //     cause ("caused by previous Xid 149") counts too
  bool unlisted = false;  // ... whose Xid the catalog does not list
  // ... that no other class's diagnosis accounts for (a last-resort class only): events of a
  // signature that names a fault, which would otherwise vanish from the report
  bool unaccounted = false;
  // ... whose captured fields have one of these values, and none of `where_not`'s
  std::map<std::string, std::vector<std::string>> where;
  std::map<std::string, std::vector<std::string>> where_not;
  std::string memory;              // ... on a GPU with this memory repair ("row-remapping")
  std::string state;               // or: this state field ...
  std::string equals;              // ... equal to this ...
  std::optional<double> at_least;  // ... or at least this (summed with `sum_with`)
  std::string sum_with;
  std::string trend;  // ... or "rising" / "falling" from the first snapshot to the last
  std::string note;   // said when the condition holds; {memory_basis} is filled in
  double weight = 0;
  // A last-resort class's diagnosis is as severe as the most severe of its conditions that
  // held (the class's own severity when unset).
  std::optional<Severity> severity;
};

// Whom a failure class blames: the "class" of a class entry and of a diagnosis.
enum class ClassKind { kHardware, kSoftware, kUnknown };

// "hardware", "software", "unknown".
std::string_view class_kind_name(ClassKind kind);
// nullopt for anything else.
std::optional<ClassKind> parse_class_kind(std::string_view name);

struct VerifyStep {
  SharedText command;  // a diagnosis's filled steps are often the same as another's: shared
  SharedText expect;
};

struct FailureClass {
  std::string id;
  std::string table;  // path of the table that defined it
  std::string title;
  ClassKind kind = ClassKind::kUnknown;
  Severity severity = Severity::kInfo;
  int priority = 0;  // which class names a GPU's incident when several fit
  // Takes only events that no other class took: the catalog's per-Xid classes and xid-unknown.
  bool fallback = false;
  // Takes, as one diagnosis for the whole run, the events of every host and GPU that no other
  // class took, and is ranked after every other diagnosis: the unrecognised error lines.
  bool last_resort = false;
  // Its first fix line still applies when another class names the incident (the action an
  // Xid 154 asks for).
  bool carry_fix = false;
  std::vector<Condition> supported_by;
  std::vector<Condition> contradicted_by;
  std::vector<std::string> symptom_of;  // classes whose diagnosis this one is collateral to
  // Classes whose incident on the same GPU this one is part of, as its consequence (Xid 43 after
  // Xid 31, Xid 63 after Xid 48; "*": any): it does not make an incident of its own.
  std::vector<std::string> consequence_of;
  bool job_wide = false;  // a symptom on any host of the job (NCCL timeouts on every rank)
  // A symptom only of a cause last seen at most this many seconds before it (a loss spike
  // "shortly after" an Xid); unset: any earlier cause.
  std::optional<double> symptom_within;
  // Its events come from the series of one rank ("rank", "rank_kind" fields): where two or
  // more ranks of the event's log format log the loss (Correlation::loss_loggers), an event is
  // its rank's own, tied to that rank's GPU and a symptom only of a diagnosis of that GPU; where
  // one rank logs it (the reduced loss), it stays job-wide and says `reduced_note`
  // ({logged_by}: "rank 7", "local rank 3 on node-1", "one rank"); where each rank logs it but
  // the rank's GPU is not known, it stays job-wide and says `unplaced_note` ({rank}).
  bool per_rank = false;
  std::string reduced_note;
  std::string unplaced_note;
  std::string explanation;
  // Templates: {host} {gpu} {gpu_index} {serial} {uuid} {product} {event.FIELD}.
  std::vector<std::string> fix;
  std::vector<VerifyStep> verify;
  std::string missing_without_state;  // said when no dump of the GPU was given
  std::string missing_without_gpu;    // said when no hardware diagnosis explains it
  // Said when nothing explains it and its host's kernel log was not given; {ranks} too.
  std::string missing_without_kernel_log;
  std::string source;
  // The encyclopedia entry (`faultline explain`).
  std::string mechanism;
  std::vector<std::string> symptoms;
  std::vector<std::string> confirm;
  std::vector<std::string> prevent;
  std::vector<std::string> monitor;
  std::vector<std::string> related;
};

// How a product repairs bad memory, matched on its name.
struct ProductRule {
  std::string pattern;
  std::string memory;
};

// A resolution bucket of NVIDIA's Xid catalog ("RESET_GPU").
struct XidAction {
  std::string meaning;
  Severity severity = Severity::kWarning;
  std::string fix;  // a template, as in FailureClass::fix
};

// One Xid of NVIDIA's catalog.
struct XidEntry {
  int xid = 0;
  std::string name;   // the driver's mnemonic
  std::string title;  // the catalog's description
  std::string meaning;
  std::vector<std::string> applies_to;
  std::string immediate_action;
  std::string investigatory_action;
  std::string cause;  // hardware, driver, application, mixed, informational, unused
  std::vector<std::string> legacy_causes;
  std::string source;
};

// One row of NVIDIA's "XID 144-150 Decode" table ("nvlink5_decode" in the tables): what an
// NVLink5 Xid's unit and errorStatus (or, for Xid 149 NETIR_LINK_EVT, its link-down reason)
// ask for.
struct Nvlink5Decode {
  int xid = 0;
  std::string unit;                          // as the table names it; "A/B" matches A or B
  std::optional<uint32_t> error_status;      // unset: any errorStatus of the unit
  std::optional<uint32_t> link_down_reason;  // intrInfo bits 25:20; unset: any
  std::string action;                        // Data Center Recovery Action: RESET_GPU, ...
  std::string severity;                      // "Fatal", "Non-fatal", "Link Fatal"
  // The table's "Action 2": when intrInfo matches either pattern (V1 before R575, V2 from R575;
  // a pattern's highest set bit is its width), this action and severity instead.
  struct Promotion {
    uint32_t intr_info_v1 = 0;
    uint32_t intr_info_v2 = 0;
    std::string action;
    std::string severity;
  };
  std::optional<Promotion> action2;
};

// One of an NVIDIA library's documented error codes: CUDA's ("cuda_errors" in the tables, from
// the runtime API reference) or NVML's ("nvml_errors", from nvml.h's nvmlReturn_t).
struct ApiError {
  int code = 0;
  // The names programs print it by, the first the table's key: cudaErrorIllegalAddress and
  // CUDA_ERROR_ILLEGAL_ADDRESS; NVML_ERROR_GPU_IS_LOST, go-nvml's ERROR_GPU_IS_LOST and
  // pynvml's NVMLError_GpuIsLost.
  std::vector<std::string> names;
  std::string message;  // the library's error string: cudaGetErrorString, nvmlErrorString
  std::string meaning;  // what the documentation says it means
  ClassKind kind = ClassKind::kUnknown;
};

// The error of `table` a line names: by one of its names, or by the message the text starts
// with (the longest that fits, without case), or by the one message that begins with the whole
// text when a cut-off line kept 16 characters of it or more; nullptr when none does.
const ApiError* find_api_error(const std::vector<ApiError>& table, std::string_view named);

// The error of `table` whose message `line` quotes whole (without case), the longest of at least
// kShortestQuotedMessage characters, in a line that names the GPU stack (kGpuStackWords): "Error
// (gpu_burn-drv.cpp:298): system not yet initialized" quotes CUDA 802's. nullptr when none.
inline constexpr size_t kShortestQuotedMessage = 16;
inline constexpr std::array<std::string_view, 4> kGpuStackWords = {"cuda", "gpu", "nvidia", "nvml"};
const ApiError* find_quoted_api_error(const std::vector<ApiError>& table, std::string_view line);

// One of DCGM's error codes ("dcgm_errors" in the tables), from DCGM's dcgm_errors.h.
struct DcgmError {
  int code = 0;
  std::string name;        // DCGM_FR_PENDING_ROW_REMAP
  std::string message;     // DCGM's format string
  std::string next_steps;  // what DCGM says to do
  std::string severity;    // ISOLATE, RESET, TRIAGE, MONITOR, CONFIG, UNKNOWN
  ClassKind kind = ClassKind::kUnknown;
};

// The thresholds of the training-metric anomaly detectors (correlate.h, detect_anomalies):
// "anomaly_parameters" in the tables, which also fill {anomaly.NAME} in the classes' texts.
struct AnomalyParameters {
  size_t warmup_points;            // points a segment starts with that no detector but NaN reads
  size_t resume_exclusion_points;  // the same after a resume
  size_t window_points;            // the trailing window a point is compared with
  size_t min_history_points;       // prediction errors a spike needs before it
  size_t spike_level_points;       // the last points whose trend predicts the next
  double spike_z;                  // residual of log(loss) over the noise a spike reaches
  double spike_min_ratio;          // and its loss over the prediction
  double grad_norm_spike_z;        // the same for the grad norm
  double grad_norm_spike_min_ratio;
  double megatron_spike_factor;       // or its loss over the largest before it
  size_t divergence_block_points;     // divergence compares medians of blocks of this many points
  size_t divergence_blocks;           // for at least this many blocks
  double divergence_rise;             // each at least this much over the lowest median before
  double validation_divergence_rise;  // every evaluation this much over the lowest before
  size_t validation_divergence_evaluations;  // for at least this many, to the end
  double stall_factor;  // an iteration this much slower than the trailing median
  size_t stall_min_history_points;
  double silence_min_seconds;        // the log going on this long after the last metrics
  size_t silence_min_gaps;           // gaps between points the usual interval is taken from
  size_t skipped_run_min;            // skipped iterations a run of points adds up to
  double loss_scale_collapse_below;  // a falling fp16 loss scale below this has collapsed
  size_t resume_settle_min_points;
};

// A hardware fault that the same GPU logs again after its machine rebooted was not cleared by
// the reboot: "recurrence" in the tables (gpud's reboot threshold).
struct Recurrence {
  int boots = 0;  // distinct boots of one input that log the same Xid on the GPU; 0: off
  Severity severity = Severity::kCritical;  // the diagnosis is raised to at least this
  std::string note;                         // {xid} and {boots} filled, then as a class's notes
  std::string fix;                          // the first fix step, filled the same way
};

struct Knowledge {
  std::vector<FailureClass> classes;
  std::vector<ProductRule> products;
  std::string default_memory = "row-remapping";
  std::map<int, XidEntry> xids;
  std::map<std::string, XidAction> actions;
  std::vector<Nvlink5Decode> nvlink5_decode;  // the last table that has one gives it
  std::vector<ApiError> cuda_errors;
  std::vector<ApiError> nvml_errors;
  std::map<std::string, DcgmError, std::less<>> dcgm_errors;  // by name and by alias
  // NVSwitch SXids by number ("sxids"): their name and whether NVIDIA's Fabric Manager guide
  // calls them fatal.
  std::map<int, std::pair<std::string, bool>> sxids;
  // The timeline lane of each signature and derived event ("lane" in the tables).
  std::map<std::string, Lane, std::less<>> lanes;
  AnomalyParameters anomaly{};
  Recurrence recurrence;
  // Signatures whose events need no finding: they name a GPU ("identity"), mark a boot, or are
  // known to be harmless ("benign"). Every other event ends in a finding (diagnose.h).
  std::set<std::string, std::less<>> quiet_signatures;
  // Signatures that are part of the report of the fault line before them ("context"): accounted
  // for when a finding has evidence in the same input.
  std::set<std::string, std::less<>> context_signatures;
  // The last-resort signatures for lines that look like errors ("unrecognised", not "benign"):
  // such a line may still quote a library's documented error message (decode_cuda_errors).
  std::set<std::string, std::less<>> unrecognised_signatures;

  const FailureClass* find_class(std::string_view id) const;
  const XidEntry* find_xid(int xid) const;
  // The lane of a signature or derived event; device state fields and unknown ids: hardware.
  Lane lane_of(std::string_view id) const;
};

// Reads the classes, products and Xid catalog of every table; a later entry replaces an earlier
// one of the same id. Then adds a fallback class "xid-N" for each catalog Xid, made from its
// entry and action, unless a table defines that id. Returns false and sets *error
// ("PATH: class ID: reason") if an entry is malformed.
bool load_knowledge(const std::vector<Table>& tables, Knowledge* knowledge, std::string* error);

// The compiled knowledge base: built-in tables plus the user's.
struct Catalog {
  Catalog();
  ~Catalog();
  Catalog(Catalog&&) noexcept;
  Catalog& operator=(Catalog&&) noexcept;

  std::vector<Table> tables;  // catalog/tables.h
  std::unique_ptr<SignatureSet> signatures;
  Knowledge knowledge;
};

// Loads the built-in tables and then those of each folder in `extra_dirs` (their entries replace
// built-in ones of the same id). Returns false and sets *error ("PATH: ...") when a table is
// invalid.
bool load_catalog(const std::vector<std::string>& extra_dirs, Catalog* catalog, std::string* error);

// How many tables are built in: a catalog's tables from this index on are the user's.
size_t builtin_table_count();

// The built-in tables' version: 12 hex digits that change whenever one of them does.
std::string_view builtin_tables_version();

// How many tables `catalog` holds.
size_t table_count(const Catalog& catalog);

// Checks of the tables beyond what loading them needs: the schema, unique ids, examples, and
// that every class can be reached by some evidence. Lints catalog.tables[first..] against the
// whole catalog (a user's table may name built-in signatures). Returns one line per problem,
// "PATH: signature|class ID: problem"; none if clean.
std::vector<std::string> lint_tables(const Catalog& catalog, size_t first);

}  // namespace faultline
