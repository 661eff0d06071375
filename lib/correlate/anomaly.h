// Anomalies in a training job's metric series, as events that failure classes can name.
#pragma once

#include <vector>

#include "model/metrics.h"
#include "model/model.h"

namespace faultline {

// Finds the anomalies of one series (one rank, one run segment: nothing is compared across a
// restart). Each is an Event whose signature names it, with fields "step" (where it starts),
// "value", "baseline", "score", "segment", "format", "rank" (when known) and "last_step" (when
// it spans several points); its evidence is the point's path, line and time, with a one-line
// description as its text (the line itself is not kept). Definitions (practice.md §5):
//
//   loss-nan            the loss is NaN or infinite, or Megatron printed no "lm loss" while
//                       counting NaN iterations. One event per run of consecutive points.
//   grad-norm-nan       the grad norm is NaN or infinite. One event per run.
//   loss-spike          robust z-score of log(loss) against the trailing 100 points (median and
//                       MAD scaled by 1.4826) of at least 6, with the loss at least 1.3x the
//                       trailing median; or Megatron-LM's rule, a loss above 10x the largest
//                       loss before it in the segment. Needs 20 points of history. One event
//                       per run of consecutive spiking points, at its first point.
//   loss-divergence     blocks of 25 points: from some block on, every block's median loss is at
//                       least 1.2x the lowest block median before it, for at least 4 blocks
//                       (100 points) and up to the end of the segment (no recovery).
//   training-stall      an iteration time at least 5x the trailing median of 100 points (or a
//                       throughput at most a fifth of it), one event per run; or the log going
//                       on past the last point, when both have wall-clock times, for at least
//                       5x the usual time between points and at least 5 minutes.
//   iterations-skipped  a run of points whose skipped-iteration counters (or NaN-iteration
//                       counters with a finite loss) add up to at least 3 iterations, or that
//                       counted any NaN iteration. A lone skip is the fp16 loss scaler probing
//                       upwards, which is routine.
//
// Every detector but loss-nan and grad-norm-nan ignores the first 20 points of a segment
// (learning-rate warm-up, loss-scale calibration, compilation) and the first 50 of a resumed
// one. A loss spike right after a resume comes from the data loader's state and the optimizer
// warming up again, not from the hardware (stas00/ml-engineering, "resume spikes"): it is
// reported only as the info event "loss-resume-spike", which no failure class names, when the
// highest loss of those 50 points is at least 1.3x the median of the 100 points after them.
std::vector<Event> detect_anomalies(const Series& series);

}  // namespace faultline
