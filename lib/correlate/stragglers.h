// The rank that held up a collective: what the ranks that timed out cannot say themselves.
#pragma once

#include <vector>

#include "model/model.h"

namespace faultline {

// The signature of the events find_stragglers() makes.
inline constexpr const char* kRankBehindSignature = "nccl-rank-behind";

// When the job's ranks time out in the same collective, the rank that failed or hung first is
// the one that did not get as far as the others (training-logs.md §7):
//   - behind: the watchdog lines ("last enqueued NCCL work: N") of a few ranks show fewer works
//     enqueued than the rest's: one event per such rank, its own line as evidence;
//   - silent: of the job's ranks (NCCL's init lines give the world size), most time out and the
//     rest print no timeout although their output was read (their init line is there): they
//     crashed, were killed or hung before they could. One event for them, on their host when
//     they share one, with the first timeout line as evidence.
// Fields: "suspect" ("rank 6", "ranks 24-31 on gpu-node-104"), "reason" ("behind" or
// "silent"), "last_enqueued" and "others_enqueued" (behind), "timed_out" and "world".
std::vector<Event> find_stragglers(const std::vector<Event>& events);

}  // namespace faultline
