// Private to lib/correlate: how far a value stands out from the local trend of the values before
// it, for the spike detectors.
#pragma once

#include <cstddef>
#include <vector>

#include "correlate/trailing_window.h"

namespace faultline::correlate_internal {

// A one-step-ahead prediction from a robust local linear trend, and the noise around it.
//   slope       the median of the last window/2 values less the median of the window/2 before
//               them, over the distance between their centres;
//   prediction  the median of the last `level_points` values, each carried forward along it;
//   noise       the spread of the last `window` prediction errors: the larger of their MAD and
//               their interquartile range, each scaled to a normal sigma (the IQR keeps a curve
//               that alternates between two levels from reading as noiseless).
// Neither a steady descent (the slope takes it) nor a few outliers (medians ignore them) inflate
// the noise, so a spike early in training, where the loss still falls fast, stands out as
// clearly as one on a plateau.
class LocalTrend {
 public:
  LocalTrend(size_t window, size_t level_points);

  struct Score {
    double predicted = 0;  // the value the trend expected
    double residual = 0;   // value - predicted, less the median prediction error
    double noise = 0;      // the spread of the prediction errors, as a normal sigma
    size_t history = 0;    // prediction errors the noise was measured on; 0: no prediction
  };

  // Scores `value` against the values pushed before it.
  Score Against(double value) const;
  // Adds the value, and its prediction error, to the history.
  void Push(double value);

 private:
  double Predict() const;

  size_t half_;
  size_t level_points_;
  std::vector<double> recent_;  // the last half_ values, a ring: recent_[next_] is the oldest
  size_t next_ = 0;
  TrailingWindow recent_sorted_;  // the same values
  TrailingWindow older_;          // the half_ values before them
  TrailingWindow errors_;         // prediction errors
};

}  // namespace faultline::correlate_internal
