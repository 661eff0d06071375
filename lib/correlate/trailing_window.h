// Private to lib/correlate: the median and median absolute deviation of a sliding window.
#pragma once

#include <cstddef>
#include <vector>

namespace faultline::correlate_internal {

// The last `capacity` values pushed, kept sorted as well, so that the median and the median
// absolute deviation cost O(log capacity) comparisons rather than a selection over the window.
// Both are the element at index size / 2 in sorted order (the upper median), exactly as
// std::nth_element over a copy of the window picks it.
class TrailingWindow {
 public:
  explicit TrailingWindow(size_t capacity) : capacity_(capacity) {}

  // Adds a value; beyond the capacity, the oldest one leaves.
  void Push(double value);
  size_t size() const { return sorted_.size(); }
  // Both need size() > 0.
  double Median() const { return sorted_[sorted_.size() / 2]; }
  double MedianAbsoluteDeviation() const;
  // The element at index floor(q * (size - 1)) in sorted order, q in [0, 1].
  double Quantile(double q) const {
    return sorted_[static_cast<size_t>(q * static_cast<double>(sorted_.size() - 1))];
  }

 private:
  size_t capacity_;
  std::vector<double> arrival_;  // a ring once full: arrival_[oldest_] is the oldest value
  size_t oldest_ = 0;
  std::vector<double> sorted_;
};

}  // namespace faultline::correlate_internal
