// Correlation: one timeline for every input, the events derived from many lines together
// (metric anomalies, the rank that held up a collective), and entity resolution: which events
// and dumps are about the same GPU of the same host.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "envelope/envelope.h"
#include "model/metrics.h"
#include "model/model.h"

namespace faultline {

// Puts every time on one timeline: syslog dates without a year take the year of the latest
// full date of their host (else of the run); boot-relative dmesg stamps become wall-clock times
// on a host whose syslog lines give its boot time (one boot only); then, when `tz` is set,
// wall-clock times that name no zone are placed in it.
void align_times(std::vector<Event>* events, std::vector<GpuState>* states,
                 const std::optional<TimeZone>& tz);

// Finds the anomalies of one series (one rank, one run segment: nothing is compared across a
// restart). Each is an Event whose signature names it, with fields "step" (where it starts),
// "value", "baseline", "score", "segment", "format", "rank" (when known) and "last_step" (when
// it spans several points); its evidence is the point's path, line and time, with a one-line
// description as its text (the line itself is not kept). The definitions, with the parameters
// in their words, are the explanations of the classes of signatures/training-anomalies.json:
//
//   loss-nan            the loss is NaN or infinite, or Megatron printed no "lm loss" while
//                       counting NaN iterations. One event per run of consecutive points.
//   grad-norm-nan       the grad norm is NaN or infinite. One event per run.
//   loss-spike          log(loss) at least spike_z times the noise above the prediction of its
//                       local trend (correlate_internal::LocalTrend: the median of the last
//                       spike_level_points points carried forward along the slope of the trailing
//                       window_points; the noise is the spread of that prediction's errors), with
//                       the loss at least spike_min_ratio times the prediction; or Megatron-LM's
//                       rule, a loss above megatron_spike_factor times the largest before it in
//                       the segment. One event per run of consecutive spiking points, at its first.
//   grad-norm-spike     the same for the grad norm, with grad_norm_spike_z and
//                       grad_norm_spike_min_ratio: the early warning of a loss spike.
//   loss-divergence     from some block of points on, every block's median loss is at least
//                       divergence_rise times the lowest block median before it, for at least
//                       divergence_blocks blocks and up to the end of the segment.
//   validation-loss-divergence  from some evaluation on, every validation loss (the series'
//                       validation()) is at least validation_divergence_rise times the lowest
//                       before it, for at least validation_divergence_evaluations evaluations up
//                       to the end of the segment.
//   training-stall      an iteration time at least stall_factor times the trailing median (or a
//                       throughput that much lower), one event per run; or the log going on past
//                       the last point, when both have wall-clock times, for at least
//                       stall_factor times the usual interval and silence_min_seconds.
//   iterations-skipped  a run of points whose skipped-iteration counters (or NaN-iteration
//                       counters with a finite loss) add up to at least skipped_run_min, or that
//                       counted any NaN iteration, or whose loss scale falls below
//                       loss_scale_collapse_below or overflows at a minimum below it (warm-up
//                       included). A lone skip is the fp16 loss scaler probing.
//
// Every detector but loss-nan and grad-norm-nan ignores the points within the first
// warmup_points logging intervals (the median step gap) of training, by their steps: learning-rate
// warm-up, loss-scale calibration, compilation; a log pasted from mid-run has none. A resumed
// segment's first resume_exclusion_points are ignored instead. A loss spike right after a resume
// comes from the data loader's state and the optimizer warming up again, not from the hardware
// (stas00/ml-engineering, "resume spikes"): it is reported only as the info event
// "loss-resume-spike", which no failure class names.
std::vector<Event> detect_anomalies(const Series& series, const AnomalyParameters& k);

// When the job's ranks time out in the same collective, the rank that failed or hung first is
// the one that did not get as far as the others (docs/formats/training-logs.md §7):
//   - behind: the watchdog lines ("last enqueued NCCL work: N") of a few ranks show fewer works
//     enqueued than the rest's: one event per such rank, its own line as evidence;
//   - silent: of the job's ranks (NCCL's init lines give the world size), most time out and the
//     rest print no timeout although their output was read (their init line is there): they
//     crashed, were killed or hung before they could. One event for them, on their host when
//     they share one, with the first timeout line as evidence.
// Fields: "suspect" ("rank 6", "ranks 24-31 on gpu-node-104"), "reason" ("behind" or
// "silent"), "last_enqueued" and "others_enqueued" (behind), "timed_out" and "world".
// `collective_timeouts` are the signatures whose events are such timeouts (the tables mark
// them "collective_timeout").
std::vector<Event> find_stragglers(const std::vector<Event>& events,
                                   const std::vector<std::string>& collective_timeouts);

// The GPUs a host has that nvidia-smi does not list. Installed: the addresses that the host's
// lines of `installed_signatures` name (lspci's listing, the driver's lines about one GPU; the
// tables mark them "installed_gpu"). Listed: the GPUs of the host's nvidia-smi outputs that list
// every GPU (-L, -q blocks under a GPU line, the default table), a UUID placed by the driver's line
// that names it with its address. Where a host has both: one event per installed address that is
// not listed, on that GPU, with the line that named it as evidence; or, when a listed GPU's address
// is not known, one event for the host if fewer GPUs are listed than installed, with the first
// listed GPU's line. Fields: "installed" and "listed", the two counts. Nothing where one side is
// absent.
// The Xid a DCGM field reports (DCGM_FI_DEV_XID_ERRORS, 230: the last Xid of the GPU, as the
// exporter or `dcgmi dmon` print it), as an event of that Xid on the dump's GPU, with the line
// that printed it as evidence: each distinct nonzero value of a GPU once, so that the Xid
// classes read it as they read the kernel's line of it. Its signature is "dcgm-xid-field".
std::vector<Event> xid_events_from_states(const std::vector<GpuState>& states);

std::vector<Event> find_missing_gpus(const std::vector<Event>& events,
                                     const std::vector<GpuState>& states,
                                     const std::vector<std::string>& installed_signatures);

// A rank of the job and the GPU it ran on.
struct RankLink {
  int rank = 0;
  std::string host;
  GpuRef gpu;
  std::string how;  // "rank 3 on node-07 ran on GPU 0000:4e:00.0 (NCCL init, train.log:12)"
};

// Everything the inputs say about one GPU. Pointers refer into the vectors given to
// correlate(), which must outlive the result.
struct GpuFindings {
  std::string host;
  GpuRef gpu;  // identity merged from dumps and the driver's UUID and serial lines
  std::vector<const Event*> events;     // faults, in input order
  std::vector<const GpuState*> states;  // snapshots, oldest first where times allow
  std::vector<RankLink> ranks;          // the job's ranks that ran on it
};

struct Correlation {
  std::vector<GpuFindings> gpus;                // in order of first appearance
  std::vector<const Event*> without_gpu;        // faults that name no GPU (a job's CUDA error)
  std::map<const Event*, RankLink> rank_links;  // those of them whose rank's GPU is known
  // Set by the caller, who knows the inputs and the user's wishes:
  std::set<std::string, std::less<>> hosts_with_kernel_log;  // hosts whose kernel log was read
  double clock_skew_seconds = 0;         // how far two hosts' clocks may disagree
  std::vector<LossLogger> loss_loggers;  // the series that log the training loss
};

// Groups events and states by (host, PCI address). A dump or line that names no host joins the
// GPU with the same address on the one host that has it. Identity events (UUID, serial) only
// enrich the GPU they name; those that also name a rank (NCCL's init line of the communicator
// that spans the job) tie that rank to the GPU, so that a fault a rank logged without naming its
// GPU is linked to it; so is a metric anomaly of one rank's series (its fields "rank" and
// "rank_kind": a global rank, or a node-local one on the event's host). `hosts_with_kernel_log` is
// left for the caller, who knows the inputs.
Correlation correlate(const std::vector<Event>& events, const std::vector<GpuState>& states,
                      const std::vector<std::string>& identity_signatures);

}  // namespace faultline
