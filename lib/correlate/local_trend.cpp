#include "correlate/local_trend.h"

#include <algorithm>
#include <array>

namespace faultline::correlate_internal {
namespace {

constexpr double kMadToSigma = 1.4826;  // MAD of a normal distribution -> its sigma
constexpr double kIqrToSigma = 0.7413;  // interquartile range of a normal distribution -> sigma
// Older values a slope needs: fewer give a median too noisy to extrapolate from.
constexpr size_t kMinOlderForSlope = 5;

}  // namespace

LocalTrend::LocalTrend(size_t window, size_t level_points)
    : half_(std::max<size_t>(window / 2, 1)),
      level_points_(std::clamp<size_t>(level_points, 1, half_)),
      recent_sorted_(half_),
      older_(half_),
      errors_(window) {
  recent_.reserve(half_);
}

double LocalTrend::Predict() const {
  const size_t n = recent_.size();
  double slope = 0;
  if (older_.size() >= kMinOlderForSlope) {
    const double distance = static_cast<double>(n + older_.size()) / 2;
    slope = (recent_sorted_.Median() - older_.Median()) / distance;
  }
  // recent_[(next_ + n - j) % n] is the value j points back.
  std::array<double, 64> carried{};
  const size_t count = std::min(level_points_, carried.size());
  for (size_t j = 1; j <= count; ++j) {
    carried[j - 1] = recent_[(next_ + n - j) % n] + static_cast<double>(j) * slope;
  }
  auto* const middle = carried.begin() + static_cast<long>(count / 2);
  std::nth_element(carried.begin(), middle, carried.begin() + static_cast<long>(count));
  return *middle;
}

LocalTrend::Score LocalTrend::Against(double value) const {
  Score score;
  if (recent_.size() < level_points_) return score;
  score.predicted = Predict();
  score.history = errors_.size();
  if (score.history == 0) return score;
  score.residual = value - score.predicted - errors_.Median();
  score.noise = std::max(kMadToSigma * errors_.MedianAbsoluteDeviation(),
                         kIqrToSigma * (errors_.Quantile(0.75) - errors_.Quantile(0.25)));
  return score;
}

void LocalTrend::Push(double value) {
  if (recent_.size() >= level_points_) errors_.Push(value - Predict());
  recent_sorted_.Push(value);
  if (recent_.size() < half_) {
    recent_.push_back(value);
  } else {
    older_.Push(recent_[next_]);
    recent_[next_] = value;
  }
  next_ = (next_ + 1) % half_;
}

}  // namespace faultline::correlate_internal
