#include "correlate/trailing_window.h"

#include <algorithm>
#include <utility>

namespace faultline::correlate_internal {

void TrailingWindow::Push(double value) {
  if (capacity_ == 0) return;
  if (arrival_.size() < capacity_) {
    arrival_.push_back(value);
    sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), value), value);
    return;
  }
  const double leaving = std::exchange(arrival_[oldest_], value);
  oldest_ = (oldest_ + 1) % capacity_;
  // One shift of the values between the leaving one's slot and the new one's place. Equal
  // values are interchangeable, so any copy of the leaving one may go.
  const auto out = std::lower_bound(sorted_.begin(), sorted_.end(), leaving);
  const auto in = std::upper_bound(sorted_.begin(), sorted_.end(), value);
  if (in <= out) {
    std::move_backward(in, out, out + 1);
    *in = value;
  } else {
    std::move(out + 1, in, out);
    *(in - 1) = value;
  }
}

// The deviations of the values at and below the median, read downwards, and of those above it,
// read upwards, are two ascending sequences: the answer is the element at index size / 2 of their
// merge, found by bisecting how many of it come from the first. (median - v is exactly
// |v - median| in IEEE arithmetic, so the values equal those of a plain computation.)
double TrailingWindow::MedianAbsoluteDeviation() const {
  const size_t n = sorted_.size();
  const size_t m = n / 2;
  const double median = sorted_[m];
  const auto below = [&](size_t t) { return median - sorted_[m - t]; };  // t <= m
  const auto above = [&](size_t t) { return sorted_[m + 1 + t] - median; };
  const size_t below_count = m + 1;
  const size_t above_count = n - m - 1;
  const size_t want = m + 1;  // how many of the merge up to and including the answer
  size_t low = want > above_count ? want - above_count : 0;
  size_t high = std::min(want, below_count);
  while (true) {
    const size_t from_below = low + (high - low) / 2;
    const size_t from_above = want - from_below;
    if (from_below < high && from_above > 0 && above(from_above - 1) > below(from_below)) {
      low = from_below + 1;
    } else if (from_below > low && from_above < above_count &&
               below(from_below - 1) > above(from_above)) {
      high = from_below - 1;
    } else {
      double answer = 0;
      if (from_below > 0) answer = below(from_below - 1);
      if (from_above > 0) answer = std::max(answer, above(from_above - 1));
      return answer;
    }
  }
}

}  // namespace faultline::correlate_internal
