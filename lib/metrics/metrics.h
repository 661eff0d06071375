// Training logs -> metric series: the step, loss, grad norm, learning rate, loss scale, skipped
// and NaN iteration counts and iteration time each logging line prints, per rank.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/metrics.h"

namespace faultline {

// Reads the metric lines of one input, line by line; other lines cost a few substring checks.
//
// Recognised (formats in docs/formats/training-logs.md):
//   Megatron-LM / Megatron-DeepSpeed "iteration N/M | key: value | ..." (§1.1), including the
//     NaN iterations that print no "lm loss" but count "number of nan iterations", and the lines
//     of a record wrapped over several ("loss scale: 1.0 | grad norm: nan |"), which count for
//     a NaN or Inf loss or grad norm only;
//   DeepSpeed "step=N, skipped=S, lr=[...]" (§2), S cumulative, and its fp16 loss scaler's
//     "OVERFLOW! Rank 0 Skipping step. Attempted loss scale: A, reducing to B" (§2): one skipped
//     step at scale B, numbered by a tqdm bar glued before it, else after the latest point;
//   Hugging Face Trainer dicts "{'loss': 2.31, 'grad_norm': 1.41, ...}" (§3), numbered in order
//     since they print no step;
//   Lightning / tqdm progress bars "Epoch E: P%|...| n/total [..., rate, k=v, ...]" (§4),
//     including several frames in one line separated by '\r', and any tqdm bar with a loss in
//     its postfix or its description ("[losses/total_loss: 0.22 | ...]:   2%|...| 76/3200"),
//     numbered by its count;
//   torchtitan "step: N  loss: X  grad_norm: G ... tps: T" with or without colours (§5.1);
//   NeMo 2 "Training epoch E, iteration i/N | name: value | ..." (§5.2);
//   mmengine "Epoch(train) [E][n/N]  ...  loss: X  grad_norm: G" and mmcv "Epoch [E][n/N]\t..."
//     (§5.3); detectron2 "iter: N  total_loss: X  ..." and maskrcnn-benchmark "iter: N  loss: X
//     (avg)  ..." (§5.4); nanoGPT "iter N: loss X, time Tms" (§5.5); nanotron "iteration: N / M |
//     lm_loss: X | ..." (§5.6); fairseq "epoch 001:  n / N loss=X, ..., num_updates=N, gnorm=G"
//     and its JSON lines, and its FP16Optimizer's "overflow detected, setting loss scale to: S",
//     one skipped update at scale S (§5.7); Keras progress lines "n/N [====] - ... - loss: X"
//     (§5.8), numbered in order;
//   generic "step=N loss=X", "iter: N, loss: X" and JSON lines {"step": N, "loss": X}: a step-like
//     and a loss-like key on one line, not after "val"/"eval"/"test" (§5.9); a whole epoch
//     number stands for the step of a loop that logs once per epoch ("epoch: 12 loss: 0.21"), and
//     a NaN or Inf loss or grad norm is a point even with no step ("grad_norm=nan").
// Validation losses are a series of their own (Series::validation()), joined to the rank's open
// segment of the same format: Megatron-LM's " validation loss at iteration N | lm loss value: X"
// (not the test set's), the HF Trainer's "{'eval_loss': X, ...}" after the latest dict, and
// nanoGPT's "step N: train loss X, val loss Y".
// Lines are attributed to the rank their launcher tags name (sniff/rank.h), else to the rank
// the input's path names. A step counter that goes back, or Megatron's "successfully loaded
// checkpoint from ... at iteration N", starts a new (resumed) segment; the HF Trainer's
// "***** Running training *****" starts a new one too.
class MetricsReader {
 public:
  MetricsReader(std::string path, std::string host);
  ~MetricsReader();
  MetricsReader(MetricsReader&&) noexcept;
  MetricsReader& operator=(MetricsReader&&) noexcept;
  MetricsReader(const MetricsReader&) = delete;
  MetricsReader& operator=(const MetricsReader&) = delete;

  // Consumes the next line of the input.
  void Feed(std::string_view text, uint64_t line_number);
  // Ends the input; returns its series in order of their first point.
  std::vector<Series> Finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultline
