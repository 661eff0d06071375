#include "model/metrics.h"

#include <algorithm>
#include <cmath>

namespace faultline {
namespace {

// How much a point says about trouble: a non-finite loss, then a non-finite grad norm, then
// a finite loss.
int extremity(const MetricPoint& point) {
  if (point.loss_nonfinite()) return 3;
  if (point.grad_norm_nonfinite()) return 2;
  return point.has(MetricPoint::kLoss) ? 1 : 0;
}

bool more_extreme(const MetricPoint& a, const MetricPoint& b) {
  const int ea = extremity(a);
  const int eb = extremity(b);
  if (ea != eb) return ea > eb;
  if (ea == 1 && a.loss != b.loss) return a.loss > b.loss;
  if (a.has(MetricPoint::kGradNorm) && b.has(MetricPoint::kGradNorm)) {
    return a.grad_norm >= b.grad_norm;
  }
  return true;
}

// Keeps the later of each pair of validation points.
void thin(std::vector<ValidationPoint>* points) {
  for (size_t i = 1; i < points->size(); i += 2) (*points)[i / 2] = (*points)[i];
  points->resize(points->size() / 2);
}

}  // namespace

bool MetricPoint::loss_nonfinite() const {
  return has(kLoss) && !std::isfinite(loss);
}

bool MetricPoint::grad_norm_nonfinite() const {
  return has(kGradNorm) && !std::isfinite(grad_norm);
}

MetricPoint merge_points(const MetricPoint& a, const MetricPoint& b) {
  MetricPoint out = more_extreme(a, b) ? a : b;
  const MetricPoint& other = more_extreme(a, b) ? b : a;
  if (other.has(MetricPoint::kSkipped)) {
    out.skipped = (out.has(MetricPoint::kSkipped) ? out.skipped : 0) + other.skipped;
    out.set(MetricPoint::kSkipped);
  }
  if (other.has(MetricPoint::kNanIterations)) {
    out.nan_iterations =
        (out.has(MetricPoint::kNanIterations) ? out.nan_iterations : 0) + other.nan_iterations;
    out.set(MetricPoint::kNanIterations);
  }
  if (other.has(MetricPoint::kIterationSeconds)) {
    out.iteration_seconds = out.has(MetricPoint::kIterationSeconds)
                                ? std::max(out.iteration_seconds, other.iteration_seconds)
                                : other.iteration_seconds;
    out.set(MetricPoint::kIterationSeconds);
  }
  if (other.has(MetricPoint::kThroughput)) {
    out.throughput = out.has(MetricPoint::kThroughput) ? std::min(out.throughput, other.throughput)
                                                       : other.throughput;
    out.set(MetricPoint::kThroughput);
  }
  return out;
}

void Series::Add(const MetricPoint& point) {
  ++logged_;
  if (points_.size() >= capacity_ && last_weight_ >= stride_) Halve();
  if (!points_.empty() && last_weight_ < stride_) {
    points_.back() = merge_points(points_.back(), point);
    ++last_weight_;
    return;
  }
  // Grow by doubling, but never past the capacity: push_back alone would reserve up to twice
  // the points the series may hold, and every input being read holds a series this full.
  if (points_.size() == points_.capacity()) {
    points_.reserve(std::min(capacity_, std::max<size_t>(16, 2 * points_.size())));
  }
  points_.push_back(point);
  last_weight_ = 1;
}

void Series::AddValidation(const ValidationPoint& point) {
  if (validation_.size() >= capacity_) thin(&validation_);
  validation_.push_back(point);
}

void Series::Limit(size_t capacity) {
  capacity_ = std::max<size_t>(2, capacity & ~size_t{1});
  while (validation_.size() > capacity_) thin(&validation_);
  if (points_.size() <= capacity_) return;
  while (points_.size() > capacity_) Halve();
  points_.shrink_to_fit();  // the budget is about memory held, not points counted
}

void share_points(std::vector<Series>* series, size_t budget, size_t floor) {
  if (series->empty()) return;
  const size_t each = std::clamp(budget / series->size(), floor, kMaxPointsPerSeries);
  for (Series& one : *series) one.Limit(std::min(each, one.capacity()));
}

void Series::Halve() {
  const size_t n = points_.size();
  for (size_t i = 0; i + 1 < n; i += 2) points_[i / 2] = merge_points(points_[i], points_[i + 1]);
  // An odd last point stays as it is and keeps filling up to the new stride.
  if (n % 2 == 1) {
    points_[n / 2] = points_[n - 1];
  } else {
    last_weight_ += stride_;
  }
  points_.resize((n + 1) / 2);
  stride_ *= 2;
}

}  // namespace faultline
