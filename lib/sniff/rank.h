// Which rank wrote a line of a training log: the tags launchers put in front of each line, or
// the name of the file or folder the rank's output was written to.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace faultline {

struct RankTag {
  enum class Source { kPyTorch, kTorchrunTee, kSrunLabel, kOpenMpi, kPath };

  int rank = -1;
  bool is_local = false;     // a node-local rank (torchrun's tee header), not a global one
  size_t prefix_length = 0;  // characters of the line the tag takes, its trailing space included
  Source source = Source::kPath;
};

// The tag at the very start of `line`, if it is one of (training-logs.md §6, §10):
//   "[rank3]:" or "[rank3]: "  PyTorch's global-rank tag (tracebacks, C++ LOG lines);
//   "[default3]:"              torchrun --tee header, "[{role}{local_rank}]:": local;
//   "3: " or " 3: "            srun --label, the Slurm task id right-aligned: taken as global;
//   "[1,3]<stdout>:"           Open MPI --tag-output "[{jobid},{rank}]<stdout|stderr>:", also
//                              PRRTE's "[prterun-host-123@1,3]<stdout>: ": global.
std::optional<RankTag> parse_rank_prefix(std::string_view line);

// Every tag at the start of `line`: they stack ("[default2]:[rank2]: ..."). Returns the rank
// the line belongs to, preferring the innermost global rank to a local one, with
// prefix_length covering all the tags; nullopt when the line starts with none.
std::optional<RankTag> parse_rank_prefixes(std::string_view line);

// The rank a file's path names, looking at the file name and then its folders, innermost
// first: "rank3.log", "train-rank3.log", "rank_3/stdout.txt" (global), or torchrun's --log-dir
// layout ".../attempt_0/3/stdout.log" (local rank 3). prefix_length is 0.
std::optional<RankTag> rank_from_path(std::string_view path);

}  // namespace faultline
