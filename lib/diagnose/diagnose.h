// Ranking hypotheses: which failure classes the evidence supports, for which GPU, how surely;
// and what a run found (Analysis), narrowed to what the user asks about or masked for sharing.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "correlate/correlate.h"
#include "model/metrics.h"

namespace faultline {

// A diagnosis's place in the incident: what started it, what it caused, or on its own.
enum class Role { kStandalone, kInitiating, kCollateral };

// "standalone", "initiating", "collateral".
std::string_view role_name(Role role);

struct Diagnosis {
  int position = 0;  // 1-based rank
  const FailureClass* failure = nullptr;
  // The class's kind; for a class of unknown kind (the generic cuda-error, nvml-error and
  // dcgm-error), the kind NVIDIA's documentation gives the library error code its events name,
  // when they all name one: a DCGM_FR_VOLATILE_DBE_DETECTED is hardware.
  ClassKind kind = ClassKind::kUnknown;
  // The class's severity; a last-resort class's is that of the evidence it found.
  Severity severity = Severity::kInfo;
  double confidence = 0;
  Role role = Role::kStandalone;
  SharedText host;
  GpuRef gpu;
  std::vector<int> ranks;
  Timestamp first_seen;
  Timestamp last_seen;
  uint64_t occurrences = 0;
  std::optional<int> caused_by;  // position of the initiating diagnosis
  std::vector<Evidence> evidence;
  // The texts below repeat across a fleet's diagnoses (the same fix for the same GPU address
  // on many hosts, the same note): diagnose() shares equal ones.
  std::vector<SharedText> fix;  // templates filled in for this GPU
  std::vector<VerifyStep> verify;
  std::vector<SharedText> missing;
  std::vector<SharedText> notes;  // how the verdict was reached, where that is not obvious
};

struct Signature;

// The nearest known failure of a line no signature knows (issue 38 item 6): its template
// (masked as extract's line_template masks) is compared with every example line of the
// catalog's signatures and every symptom line of its classes, masked alike, as sets of words
// weighted by how rare each is among the examples (a weighted Jaccard similarity). The best example
// at or above the threshold, with at least kMinSharedWords words in common, names its signature's
// class: "probably CLASS (like: EXAMPLE)", at lower confidence than a match, never a diagnosis of
// its own.
struct Suggestion {
  const FailureClass* failure = nullptr;
  std::string example;  // the example line it is most like
  double similarity = 0;
};

class Suggester {
 public:
  // Calibrated by `faultline signatures calibrate` on tests/realworld (README, "Nearest known
  // failure"): the lowest threshold at which no line of a healthy case gets a suggestion.
  static constexpr double kThreshold = 0.5;
  static constexpr size_t kMinSharedWords = 3;

  // Indexes the example lines of `signatures` (benign, identity, context and unrecognised ones
  // aside), each under the first class of `knowledge` that names its signature and is no last
  // resort.
  Suggester(const std::vector<const Signature*>& signatures, const Knowledge& knowledge);
  ~Suggester();
  Suggester(Suggester&&) noexcept;
  Suggester& operator=(Suggester&&) noexcept;

  // The nearest class for a line's template, or nullopt below `threshold`. `skip` names a
  // signature whose examples are left out (the calibration's leave-one-out).
  std::optional<Suggestion> Suggest(std::string_view line_template, double threshold = kThreshold,
                                    std::string_view skip = {}) const;

 private:
  struct Index;
  std::unique_ptr<Index> index_;
};

// Builds the ranked diagnoses. Each GPU gets at most one: the most severe, most specific class
// its evidence supports, with the evidence of the other classes it fits as support. A
// last-resort class (the unrecognised error lines) makes one diagnosis for the whole run, its
// evidence one line of each template, ranked after every other; with a `suggester`, each
// template's note says the nearest known failure, if any.
std::vector<Diagnosis> diagnose(const Correlation& correlation, const Knowledge& knowledge,
                                const Suggester* suggester = nullptr);

// Reads each NVLink5 Xid (144-150) event by the catalog's "nvlink5_decode" table (NVIDIA's
// "XID 144-150 Decode"): sets its catalog_action, catalog_severity and catalog_decode fields
// (model/captures.h), which classes' conditions and notes read like captured ones. The unit the
// line prints picks the rows; errorStatus picks one (a row without one takes any; several bits
// set: each bit's row, the most severe action taken), or for Xid 149 NETIR_LINK_EVT the
// link-down reason in intrInfo bits 25:20 does; a row's "Action 2" applies when intrInfo matches
// its pattern. A line the table does not cover gets catalog_action "undecoded" and the reason.
void decode_nvlink5(const Knowledge& knowledge, std::vector<Event>* events);

// Reads the CUDA error each event names (its "cuda_error" capture) by the catalog's
// "cuda_errors" table: sets cuda_error_code, cuda_error_name (the runtime's name) and
// cuda_error_meaning (model/captures.h), and cuda_error_kind (hardware, software, unknown), which
// classes' conditions and notes read like captured fields. A name the table lacks sets nothing.
void decode_cuda_errors(const Knowledge& knowledge, std::vector<Event>* events);

// The same for the NVML error each event names (its "nvml_error" capture) by the catalog's
// "nvml_errors" table: sets nvml_error_code, nvml_error_name (nvml.h's), nvml_error_meaning and
// nvml_error_kind.
void decode_nvml_errors(const Knowledge& knowledge, std::vector<Event>* events);

// Reads the DCGM error code each event names (its "dcgm_error" capture) by the catalog's
// "dcgm_errors" table: sets dcgm_error_code, dcgm_error_message, dcgm_error_next_steps,
// dcgm_error_severity and dcgm_error_kind (model/captures.h). A name the table lacks sets
// nothing.
void decode_dcgm_errors(const Knowledge& knowledge, std::vector<Event>* events);

// Reads the SXid each event names (its "sxid" capture) by the catalog's "sxids" table: sets
// sxid_name and sxid_severity ("Fatal" or "Non-fatal", as NVIDIA's Fabric Manager guide
// classifies it). An SXid the table lacks sets nothing.
void decode_sxids(const Knowledge& knowledge, std::vector<Event>* events);

// What a run found: its inputs, what they yielded and the ranked diagnoses.
struct Analysis {
  std::vector<InputSummary> inputs;
  std::vector<UnreadInput> unread;    // each also among `warnings`
  std::vector<std::string> warnings;  // one line each, naming the input
  std::vector<Event> events;
  std::vector<GpuState> states;
  std::vector<Series> series;            // training metrics; their anomalies are among `events`
  std::vector<LossLogger> loss_loggers;  // the series that log the loss (records carry them)
  std::vector<Diagnosis> diagnoses;
  size_t readable_inputs = 0;  // inputs that yielded at least one line or ended cleanly
  // Why the filter left nothing ("filters left no event: --since 2030-01-01T00:00:00 is after
  // every event (the last at 2024-03-05T10:12:33Z)"); "" when it left something, or had
  // nothing to leave.
  std::string filter_note;
};

struct Filter {
  std::optional<Timestamp> since;
  std::optional<Timestamp> until;
  std::vector<std::string> hosts;  // any of them, compared without case
  std::vector<std::string> gpus;   // normalised PCI addresses (normalize_pci); any of them
  std::optional<Severity> min_severity;
};

// Keeps the diagnoses, and the events, that meet every criterion the filter sets; the severity
// applies to diagnoses only (an event has none). A diagnosis is in the time window when its
// first..last occurrence overlaps it. Times that cannot be placed on the calendar (boot-relative
// dmesg seconds, lines with no time) are kept: the filter cannot tell. A host or GPU filter
// drops what names no host or GPU. Positions are left as they were, so that "caused by #1"
// still points at the same diagnosis (which the filter may have left out).
//
// Two times compare in UTC when both name their zone, else as wall-clock times.
//
// When the filter leaves no event of some, or else no diagnosis of some, `filter_note` says so
// and names the criterion that alone leaves nothing, or that only the criteria together do.
void apply_filter(const Filter& filter, Analysis* analysis);

// Replaces, in every string of the analysis (paths, evidence lines, fixes, commands, notes,
// event fields, warnings), the names of hosts with host-1, host-2, ..., IP addresses (IPv4,
// IPv6, and EC2 names that spell one: ip-10-20-30-40) with ip-1, ip-2, ..., and user names with
// user-1, user-2, ..., numbered in order of first appearance, so that the same name gets the same
// mask in every output format. Hosts are those the analysis attributes lines to (syslog and
// journal envelopes, NCCL prefixes, folder names), EC2 instance ids, and those lines name in
// known shapes (user@host, private DNS suffixes, torchrun, c10d, Slurm); each is masked wherever
// it appears, in any case, as a whole token or a part of one bounded by characters that are not
// ASCII letters or digits. User names are those of home folders (/home/NAME, /Users/NAME,
// C:\Users\NAME, ~NAME) and user@host. GPU PCI addresses, serials and UUIDs are kept: they are
// what the reader needs to act on. Linear in the text: the hosts are one regular expression.
void redact(Analysis* analysis);

}  // namespace faultline
