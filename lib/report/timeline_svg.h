// The SVG timeline of the HTML report. Internal to lib/report/.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "pipeline/pipeline.h"

namespace faultline {

// A line to draw: a rank's loss. x is Unix seconds of a wall clock in an unknown zone (what a
// training log prints) or, for a curve of steps, the step; y is the value, NaN for a gap.
struct Curve {
  std::string label;  // "rank 3", "rank 3 (segment 2)", "rank 3 validation"
  std::vector<std::pair<double, double>> points;
  bool validation = false;  // the validation losses: drawn dashed
};

// The loss curve of each training-log series, thinned to what a chart can show, and its
// validation losses as a curve of their own (at the time of the training step they followed).
// Series whose lines printed wall-clock times go to `timed`, the others (steps only) to
// `by_step`.
void loss_curves(const std::vector<Series>& series, std::vector<Curve>* timed,
                 std::vector<Curve>* by_step);

// An <svg> of the diagnoses' evidence lines as marks on one time axis, in lanes (GPU & PCIe,
// CUDA, NCCL, job), below the `timed` loss curves on the same axis; lines with boot-relative
// times on a band of their own per host; `by_step` curves on a chart of their own. Each
// anomaly the detectors found in the curves is marked on its chart with its kind. "" when
// nothing has a time and there is no curve.
std::string timeline_svg(const Analysis& analysis, const std::vector<Curve>& timed,
                         const std::vector<Curve>& by_step);

}  // namespace faultline
