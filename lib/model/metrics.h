// Training metrics as a job's logs print them: one point per logged step, in series per input,
// rank, log format and run segment. A series holds a bounded number of points whatever the
// length of the run (Series::Add).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"

namespace faultline {

// One logged step. Values are stored as printed (floats keep NaN and infinities); `fields` says
// which of them the line printed, so a point costs 64 bytes instead of one optional per value.
struct MetricPoint {
  enum Field : uint16_t {
    kLoss = 1 << 0,
    kGradNorm = 1 << 1,
    kLearningRate = 1 << 2,
    kLossScale = 1 << 3,
    kSkipped = 1 << 4,
    kNanIterations = 1 << 5,
    kIterationSeconds = 1 << 6,
    kThroughput = 1 << 7,
    kTime = 1 << 8,
    // The line printed no loss but counted NaN iterations: Megatron-LM leaves out the loss
    // field when its interval average is NaN, so `loss` holds NaN inferred from the counter.
    kLossInferred = 1 << 9,
    // An fp16 loss scaler overflowed at its minimum scale ("Attempted loss scale: 1, reducing to
    // 1"): it could not reduce further, and `loss_scale` holds that minimum.
    kScaleAtMinimum = 1 << 10,
  };

  int64_t step = 0;
  uint64_t line = 0;  // 1-based line of the input
  double time = 0;    // Unix seconds of the wall clock the line printed (zone unknown), if kTime
  float loss = 0;
  float grad_norm = 0;
  float learning_rate = 0;
  float loss_scale = 0;
  float iteration_seconds = 0;
  float throughput = 0;         // as printed: TFLOP/s per GPU, tokens/s, ... (format-specific)
  uint32_t skipped = 0;         // iterations skipped since the previous point
  uint32_t nan_iterations = 0;  // iterations with a non-finite loss since the previous point
  uint16_t fields = 0;

  bool has(Field field) const { return (fields & field) != 0; }
  void set(Field field) { fields |= field; }
  // Whether the loss (printed or inferred) or the grad norm is NaN or infinite.
  bool loss_nonfinite() const;
  bool grad_norm_nonfinite() const;
};

// One evaluation on the validation set, after training step `step`: Megatron-LM's "validation
// loss at iteration N", the HF Trainer's 'eval_loss', nanoGPT's "val loss".
struct ValidationPoint {
  int64_t step = 0;
  uint64_t line = 0;  // 1-based line of the input
  float loss = 0;
  // The time of the training line before it, which an evaluation prints none of itself.
  std::optional<double> time;
};

// The points most kept per series, and the fewest a reader shrinks a series to when it must
// share its point budget among many series.
inline constexpr size_t kMaxPointsPerSeries = 50'000;
inline constexpr size_t kMinPointsPerSeries = 1'024;

// The metrics of one rank in one input, in one log format, for one run segment: a restart or
// resume (a checkpoint load, the step counter going back) starts the next segment.
//
// Memory is bounded: when the series holds `capacity()` points, neighbouring points are merged
// pairwise, halving the series, and from then on every stored point stands for twice as many
// logged steps (`stride()`). A merge keeps the point with the more extreme value so that
// anomalies survive: a non-finite loss first, then a non-finite grad norm, then the higher
// loss (then the higher grad norm). The merged point also sums the skipped and NaN iteration
// counters, keeps the slowest iteration time and the lowest throughput. Detection on a
// decimated series therefore compares extremes of 2^k steps with each other, which keeps
// spikes, NaNs and stalls visible at the cost of resolution.
struct Series {
  std::string path;
  std::string host;            // "" when unknown
  std::string format;          // "megatron", "deepspeed", "hf-trainer", "lightning", "nemo",
                               // "torchtitan", "mmengine", "mmcv", "detectron2",
                               // "maskrcnn-benchmark", "nanogpt", "nanotron", "fairseq",
                               // "keras", "json" or "generic"
  int rank = -1;               // -1 when unknown
  bool rank_is_local = false;  // a torchrun tee header gives the node-local rank
  int segment = 0;             // 0-based, in input order, per (path, rank, format)
  bool resumed = false;        // the segment began at a resume, not at a fresh start
  // The latest wall-clock time any line of the input printed, for the last segment of a rank
  // and format: the log went on until then. Unset for earlier segments, which a restart ended.
  std::optional<double> input_end_time;

  const std::vector<MetricPoint>& points() const { return points_; }
  // The validation losses logged during the segment, a series of their own. Bounded like the
  // points: at capacity(), every other one is dropped (the trend, not single values, matters).
  const std::vector<ValidationPoint>& validation() const { return validation_; }
  size_t capacity() const { return capacity_; }
  uint64_t stride() const { return stride_; }  // logged steps per stored point, at most
  uint64_t logged_points() const { return logged_; }

  // Appends a point; steps are expected to increase.
  void Add(const MetricPoint& point);
  void AddValidation(const ValidationPoint& point);
  // Sets the most points kept (at least 2, rounded down to even), decimating now if needed.
  void Limit(size_t capacity);

 private:
  void Halve();

  std::vector<MetricPoint> points_;
  std::vector<ValidationPoint> validation_;
  size_t capacity_ = kMaxPointsPerSeries;
  uint64_t stride_ = 1;
  uint64_t last_weight_ = 0;  // logged steps merged into the last stored point
  uint64_t logged_ = 0;
};

// Merges two neighbouring points into the one that keeps their anomalies (see Series).
MetricPoint merge_points(const MetricPoint& a, const MetricPoint& b);

// Shares `budget` points among `series`: each keeps at most budget / series->size(), but never
// fewer than `floor` nor more than kMaxPointsPerSeries, decimating now where needed.
void share_points(std::vector<Series>* series, size_t budget, size_t floor = kMinPointsPerSeries);

}  // namespace faultline
