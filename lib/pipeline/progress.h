// Progress of a long read, for analyze()'s Progress callback.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "pipeline/pipeline.h"
#include "source/source.h"

namespace faultline {

// Counts the text read across all inputs and calls the callback (if any) back at most every
// 64 MiB or 0.25 s (whichever comes first), so that a progress line costs nothing per line.
// Readers on several threads may report to one tracker; the callback is called by one at a time.
// Past the deadline, if one is set, the readers it wraps stop.
class ProgressTracker {
 public:
  ProgressTracker(const Progress& progress,
                  std::optional<std::chrono::steady_clock::time_point> deadline)
      : progress_(progress), deadline_(deadline) {}

  // `more` bytes of text have been read from `path` since it last reported. False once the
  // deadline has passed: reading must stop.
  bool Add(const std::string& path, uint64_t more);

  // `reader`, reporting to this tracker as it is read.
  std::unique_ptr<LineReader> Wrap(std::unique_ptr<LineReader> reader);

 private:
  using Clock = std::chrono::steady_clock;

  const Progress& progress_;
  const std::optional<Clock::time_point> deadline_;
  std::mutex mutex_;
  uint64_t total_ = 0;     // text read from every input so far
  uint64_t reported_ = 0;  // total at the last call
  Clock::time_point last_ = Clock::now();
};

}  // namespace faultline
