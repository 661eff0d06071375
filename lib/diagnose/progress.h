// Progress of a long read, for analyze()'s Progress callback.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "diagnose/analysis.h"
#include "source/source.h"

namespace faultline {

// Counts the text read across all inputs and calls the callback back at most every 64 MiB or
// 0.25 s (whichever comes first), so that a progress line costs nothing per line.
class ProgressTracker {
 public:
  explicit ProgressTracker(const Progress& progress) : progress_(progress) {}

  // `bytes` of text have been read from `path`, the input being read now.
  void Update(const std::string& path, uint64_t bytes);
  // The input just read had `bytes` of text; the next one starts from there.
  void Finish(uint64_t bytes) { done_ += bytes; }

  // `reader`, reporting to this tracker as it is read.
  std::unique_ptr<LineReader> Wrap(std::unique_ptr<LineReader> reader);

 private:
  using Clock = std::chrono::steady_clock;

  const Progress& progress_;
  uint64_t done_ = 0;      // text of the inputs read before this one
  uint64_t reported_ = 0;  // total at the last call
  Clock::time_point last_ = Clock::now();
  uint64_t updates_ = 0;
};

}  // namespace faultline
