// Entity resolution: which events and dumps are about the same GPU of the same host.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/model.h"

namespace faultline {

// Everything the inputs say about one GPU. Pointers refer into the vectors given to
// correlate(), which must outlive the result.
struct GpuFindings {
  std::string host;
  GpuRef gpu;  // identity merged from dumps and the driver's UUID and serial lines
  std::vector<const Event*> events;     // faults, in input order
  std::vector<const GpuState*> states;  // snapshots, oldest first where times allow
};

// How a fault that names no GPU was tied to one: its rank ran on that GPU.
struct RankLink {
  GpuRef gpu;
  std::string how;  // "rank 3 on node-07 ran on GPU 0000:4e:00.0 (NCCL init, train.log:12)"
};

struct Correlation {
  std::vector<GpuFindings> gpus;                // in order of first appearance
  std::vector<const Event*> without_gpu;        // faults that name no GPU (a job's CUDA error)
  std::map<const Event*, RankLink> rank_links;  // those of them whose rank's GPU is known
};

// Groups events and states by (host, PCI address). A dump or line that names no host joins the
// GPU with the same address on the one host that has it. Identity events (UUID, serial) only
// enrich the GPU they name; those that also name a rank (NCCL's init line) tie that rank to the
// GPU, so that a fault a rank logged without naming its GPU is linked to it.
Correlation correlate(const std::vector<Event>& events, const std::vector<GpuState>& states,
                      const std::vector<std::string>& identity_signatures);

}  // namespace faultline
