// Entity resolution: which events and dumps are about the same GPU of the same host.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/model.h"

namespace faultline {

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
  std::vector<std::string> hosts_with_kernel_log;  // hosts whose kernel log was read
  double clock_skew_seconds = 0;                   // how far two hosts' clocks may disagree
};

// Groups events and states by (host, PCI address). A dump or line that names no host joins the
// GPU with the same address on the one host that has it. Identity events (UUID, serial) only
// enrich the GPU they name; those that also name a rank (NCCL's init line of the communicator
// that spans the job) tie that rank to the GPU, so that a fault a rank logged without naming its
// GPU is linked to it. `hosts_with_kernel_log` is left for the caller, who knows the inputs.
Correlation correlate(const std::vector<Event>& events, const std::vector<GpuState>& states,
                      const std::vector<std::string>& identity_signatures);

}  // namespace faultline
