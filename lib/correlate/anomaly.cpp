#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string_view>

#include "correlate/correlate.h"
#include "correlate/local_trend.h"
#include "correlate/trailing_window.h"
#include "model/captures.h"

namespace faultline {
namespace {

// A flat curve still has 0.1% noise (the MAD of a normal distribution of sigma 0.15%).
constexpr double kMinLogNoise = 1.4826e-3;
// Events of one kind kept per series; later ones are counted in the last kept.
constexpr size_t kMaxEventsPerKind = 50;

using correlate_internal::LocalTrend;
using correlate_internal::TrailingWindow;
using Points = std::vector<MetricPoint>;

double median(std::vector<double> values) {
  const auto middle = values.begin() + static_cast<long>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

std::string number(double value) {
  return fmt::format("{:.4g}", value);
}

std::string seconds_text(double seconds) {
  if (seconds < 120) return fmt::format("{:.3g} s", seconds);
  if (seconds < 7200) return fmt::format("{:.3g} min", seconds / 60);
  return fmt::format("{:.3g} h", seconds / 3600);
}

// Builds the events of one series, capping each kind (see kMaxEventsPerKind).
class Emitter {
 public:
  Emitter(const Series& series, std::vector<Event>* out) : series_(series), out_(out) {}

  struct Finding {
    std::string_view signature;
    const MetricPoint* at;
    std::string text;
    double value = 0;
    double baseline = 0;
    double score = 0;
    uint64_t count = 1;  // points it spans
    int64_t last_step = 0;
  };

  void Emit(const Finding& finding) {
    auto& [kept, last] = kinds_[finding.signature];
    if (kept == kMaxEventsPerKind) {
      Event& event = (*out_)[last];
      event.count += finding.count;
      event.fields.set("last_step", std::to_string(finding.last_step));
      return;
    }
    ++kept;
    last = out_->size();
    out_->push_back(MakeEvent(finding));
  }

 private:
  Event MakeEvent(const Finding& f) const {
    Event event;
    event.signature = std::string(f.signature);
    event.host = series_.host;
    event.count = f.count;
    event.fields = {{"step", std::to_string(f.at->step)},
                    {"value", number(f.value)},
                    {"baseline", number(f.baseline)},
                    {"score", number(f.score)},
                    {"segment", std::to_string(series_.segment)},
                    {"format", series_.format}};
    if (series_.rank >= 0) {
      event.fields.set("rank", std::to_string(series_.rank));
      event.fields.set("rank_kind", series_.rank_is_local ? "local" : "global");
    }
    if (f.count > 1) event.fields.set("last_step", std::to_string(f.last_step));
    const Timestamp time =
        f.at->has(MetricPoint::kTime) ? Timestamp::Absolute(f.at->time, std::nullopt) : Timestamp();
    event.evidence = {series_.path, f.at->line, time, f.text, event.signature};
    return event;
  }

  const Series& series_;
  std::vector<Event>* out_;
  std::map<std::string_view, std::pair<size_t, size_t>> kinds_;  // kept, index of the last
};

// Calls `report(first, last)` for each run of consecutive points from `from` on that satisfy
// `test`.
void for_each_run(const Points& points, size_t from, const std::function<bool(size_t)>& test,
                  const std::function<void(size_t, size_t)>& report) {
  for (size_t i = from; i < points.size(); ++i) {
    if (!test(i)) continue;
    size_t last = i;
    while (last + 1 < points.size() && test(last + 1)) ++last;
    report(i, last);
    i = last;
  }
}

std::string loss_name(const Series& series) {
  return series.format == "megatron" ? "lm loss" : "loss";
}

std::string run_suffix(const Points& points, size_t first, size_t last) {
  if (first == last) return "";
  return fmt::format(" ({} logged points in a row, through step {})", last - first + 1,
                     points[last].step);
}

void detect_nonfinite(const Series& series, Emitter* emit) {
  const Points& p = series.points();
  for_each_run(
      p, 0, [&](size_t i) { return p[i].loss_nonfinite(); },
      [&](size_t first, size_t last) {
        const MetricPoint& at = p[first];
        const std::string what =
            at.has(MetricPoint::kLossInferred)
                ? fmt::format(
                      "no {} printed and {} NaN iterations counted (Megatron leaves "
                      "the loss out when it is NaN)",
                      loss_name(series), at.nan_iterations)
                : fmt::format("{} {}", loss_name(series), number(at.loss));
        emit->Emit({derived::kLossNan, &at,
                    fmt::format("step {}: {}{}", at.step, what, run_suffix(p, first, last)),
                    at.loss, 0, 0, last - first + 1, p[last].step});
      });
  for_each_run(
      p, 0, [&](size_t i) { return p[i].grad_norm_nonfinite(); },
      [&](size_t first, size_t last) {
        const MetricPoint& at = p[first];
        emit->Emit({derived::kGradNormNan, &at,
                    fmt::format("step {}: grad norm {}{}", at.step, number(at.grad_norm),
                                run_suffix(p, first, last)),
                    at.grad_norm, 0, 0, last - first + 1, p[last].step});
      });
}

// The points a segment starts with that the detectors skip: after a resume, the first
// resume_exclusion_points; otherwise those within the first warmup_points logging intervals of
// training, by their step numbers, so that an excerpt starting mid-run keeps its first points.
// Steps of lines that print none count from 1, which makes that the first warmup_points.
size_t exclusion(const Series& series, const AnomalyParameters& k) {
  if (series.resumed) return k.resume_exclusion_points;
  const Points& p = series.points();
  std::vector<double> gaps;
  for (size_t i = 1; i < p.size(); ++i) {
    if (p[i].step > p[i - 1].step) gaps.push_back(static_cast<double>(p[i].step - p[i - 1].step));
  }
  if (gaps.empty()) return k.warmup_points;
  const double warmup_end = median(std::move(gaps)) * static_cast<double>(k.warmup_points);
  size_t end = 0;
  while (end < p.size() && static_cast<double>(p[end].step) <= warmup_end) ++end;
  return end;
}

// How far a point stands out from the local trend of the points before it (LocalTrend), in log
// space where every value is positive; 0 where it cannot be told.
struct SpikeScore {
  double z = 0;
  double ratio = 0;     // value / the trend's prediction
  double baseline = 0;  // the trend's prediction
  bool megatron_rule = false;
};

class SpikeScorer {
 public:
  // Reads the point's value: nullopt where it has none or it is not finite.
  using ValueOf = std::optional<double> (*)(const MetricPoint&);

  SpikeScorer(const Points& points, const AnomalyParameters& k, ValueOf value)
      : value_(value),
        k_(k),
        use_log_(std::all_of(points.begin(), points.end(), [&](const MetricPoint& p) {
          const auto v = value(p);
          return !v || *v > 0;
        })) {}

  // Scores the point against the values before it, then remembers it.
  SpikeScore Score(const MetricPoint& p) {
    SpikeScore score;
    const auto v = value_(p);
    if (!v) return score;
    const double x = use_log_ ? std::log(*v) : *v;
    const LocalTrend::Score s = trend_.Against(x);
    if (s.history >= k_.min_history_points) {
      const double floor = use_log_ ? kMinLogNoise : kMinLogNoise * std::fabs(s.predicted);
      score.z = s.residual / std::max(s.noise, floor);
      score.baseline = use_log_ ? std::exp(s.predicted) : s.predicted;
      score.ratio = score.baseline > 0 ? *v / score.baseline : 0;
    }
    // Megatron-LM's rule needs no history: one value before it is enough.
    if (max_ > 0 && *v > k_.megatron_spike_factor * max_) {
      score.megatron_rule = true;
      if (score.baseline <= 0) {
        score.baseline = max_;
        score.ratio = *v / max_;
      }
    }
    trend_.Push(x);
    max_ = std::max(max_, *v);
    return score;
  }

 private:
  ValueOf value_;
  const AnomalyParameters& k_;
  bool use_log_ = true;
  LocalTrend trend_{k_.window_points, k_.spike_level_points};
  double max_ = 0;
};

std::optional<double> finite_loss(const MetricPoint& p) {
  if (!p.has(MetricPoint::kLoss) || !std::isfinite(p.loss)) return std::nullopt;
  return p.loss;
}

std::optional<double> finite_grad_norm(const MetricPoint& p) {
  if (!p.has(MetricPoint::kGradNorm) || !std::isfinite(p.grad_norm)) return std::nullopt;
  return p.grad_norm;
}

bool is_spike(const SpikeScore& s, const AnomalyParameters& k) {
  return (s.z >= k.spike_z && s.ratio >= k.spike_min_ratio) || s.megatron_rule;
}

// The grad norm at a loss spike, next to its local level: grad-norm spikes come with loss spikes.
std::string grad_note(const SpikeScore& grad) {
  if (grad.baseline <= 0) return "";
  return fmt::format("; grad norm {}x its local level {}", number(grad.ratio),
                     number(grad.baseline));
}

void detect_spikes(const Series& series, const AnomalyParameters& k, Emitter* emit) {
  const Points& p = series.points();
  SpikeScorer losses(p, k, finite_loss);
  SpikeScorer grads(p, k, finite_grad_norm);
  std::vector<SpikeScore> loss(p.size());
  std::vector<SpikeScore> grad(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    loss[i] = losses.Score(p[i]);
    grad[i] = grads.Score(p[i]);
  }
  // The warm-up's points are skipped by the statistical test, not by Megatron's rule: nothing
  // calibrates a loss ten times above every loss before it.
  const size_t from = exclusion(series, k);
  for_each_run(
      p, 0, [&](size_t i) { return loss[i].megatron_rule || (i >= from && is_spike(loss[i], k)); },
      [&](size_t first, size_t last) {
        const SpikeScore& s = loss[first];
        const std::string rule =
            s.z >= k.spike_z && s.ratio >= k.spike_min_ratio
                ? fmt::format("robust z {} against the local trend", number(s.z))
                : fmt::format("above {}x the largest loss before it", k.megatron_spike_factor);
        emit->Emit({derived::kLossSpike, &p[first],
                    fmt::format("step {}: {} {}, {}x the {} its local trend predicted ({}){}{}",
                                p[first].step, loss_name(series), number(p[first].loss),
                                number(s.ratio), number(s.baseline), rule, grad_note(grad[first]),
                                run_suffix(p, first, last)),
                    p[first].loss, s.baseline, s.z, last - first + 1, p[last].step});
      });
  for_each_run(
      p, from,
      [&](size_t i) {
        return grad[i].z >= k.grad_norm_spike_z && grad[i].ratio >= k.grad_norm_spike_min_ratio;
      },
      [&](size_t first, size_t last) {
        const SpikeScore& s = grad[first];
        emit->Emit({derived::kGradNormSpike, &p[first],
                    fmt::format("step {}: grad norm {}, {}x the {} its local trend predicted "
                                "(robust z {}){}",
                                p[first].step, number(p[first].grad_norm), number(s.ratio),
                                number(s.baseline), number(s.z), run_suffix(p, first, last)),
                    p[first].grad_norm, s.baseline, s.z, last - first + 1, p[last].step});
      });
}

std::vector<double> finite_losses(const Points& p, size_t from, size_t to) {
  std::vector<double> out;
  for (size_t i = from; i < std::min(to, p.size()); ++i) {
    if (p[i].has(MetricPoint::kLoss) && std::isfinite(p[i].loss)) out.push_back(p[i].loss);
  }
  return out;
}

void detect_resume_spike(const Series& series, const AnomalyParameters& k, Emitter* emit) {
  const Points& p = series.points();
  if (!series.resumed) return;
  const std::vector<double> settled =
      finite_losses(p, k.resume_exclusion_points, k.resume_exclusion_points + k.window_points);
  if (settled.size() < k.resume_settle_min_points) return;
  const double level = median(settled);
  size_t peak = p.size();
  for (size_t i = 0; i < std::min(k.resume_exclusion_points, p.size()); ++i) {
    if (!p[i].has(MetricPoint::kLoss) || !std::isfinite(p[i].loss)) continue;
    if (peak == p.size() || p[i].loss > p[peak].loss) peak = i;
  }
  if (peak == p.size() || level <= 0 || p[peak].loss < k.spike_min_ratio * level) return;
  emit->Emit({derived::kLossResumeSpike, &p[peak],
              fmt::format("step {}: {} {} right after the resume, {}x the level it settled at "
                          "(median {}); expected after a resume, not a sign of a fault",
                          p[peak].step, loss_name(series), number(p[peak].loss),
                          number(p[peak].loss / level), number(level)),
              p[peak].loss, level, p[peak].loss / level});
}

void detect_divergence(const Series& series, const AnomalyParameters& k, Emitter* emit) {
  const Points& p = series.points();
  std::vector<double> medians;
  std::vector<size_t> starts;
  for (size_t start = exclusion(series, k); start + k.divergence_block_points / 2 <= p.size();
       start += k.divergence_block_points) {
    const std::vector<double> block = finite_losses(p, start, start + k.divergence_block_points);
    if (block.size() < k.divergence_block_points / 2) continue;
    medians.push_back(median(block));
    starts.push_back(start);
  }
  for (size_t i = 1; i + k.divergence_blocks <= medians.size(); ++i) {
    const double base = *std::min_element(medians.begin(), medians.begin() + static_cast<long>(i));
    const bool sustained =
        base > 0 && std::all_of(medians.begin() + static_cast<long>(i), medians.end(),
                                [&](double m) { return m >= k.divergence_rise * base; });
    if (!sustained) continue;
    const double now = medians.back();
    emit->Emit({derived::kLossDivergence, &p[starts[i]],
                fmt::format("from step {}: the median {} rose from {} to {} ({}x) over the "
                            "last {} logged points and did not come back",
                            p[starts[i]].step, loss_name(series), number(base), number(now),
                            number(now / base), p.size() - starts[i]),
                now, base, now / base, p.size() - starts[i], p.back().step});
    return;
  }
}

// The validation loss rising and staying up while training goes on: from some evaluation on,
// every one is at least validation_divergence_rise times the lowest before it, for at least
// validation_divergence_evaluations evaluations up to the end of the segment.
void detect_validation_divergence(const Series& series, const AnomalyParameters& k, Emitter* emit) {
  std::vector<ValidationPoint> v;
  for (const ValidationPoint& point : series.validation()) {
    if (std::isfinite(point.loss) && point.loss > 0) v.push_back(point);
  }
  if (v.size() < 2) return;
  std::vector<float> lowest_from(v.size());  // the lowest of v[i..]
  lowest_from.back() = v.back().loss;
  for (size_t i = v.size() - 1; i-- > 0;) lowest_from[i] = std::min(lowest_from[i + 1], v[i].loss);
  float lowest_before = v[0].loss;
  for (size_t i = 1; i + k.validation_divergence_evaluations <= v.size(); ++i) {
    if (lowest_from[i] >= k.validation_divergence_rise * lowest_before) {
      MetricPoint at;
      at.step = v[i].step;
      at.line = v[i].line;
      if (v[i].time) {
        at.time = *v[i].time;
        at.set(MetricPoint::kTime);
      }
      const double ratio = v.back().loss / lowest_before;
      emit->Emit({derived::kValidationLossDivergence, &at,
                  fmt::format("from step {}: the validation loss rose from its lowest {} to {} "
                              "({}x) over the last {} evaluations and did not come back",
                              v[i].step, number(lowest_before), number(v.back().loss),
                              number(ratio), v.size() - i),
                  v.back().loss, lowest_before, ratio, v.size() - i, v.back().step});
      return;
    }
    lowest_before = std::min(lowest_before, v[i].loss);
  }
}

// Iteration time (or, failing it, the inverse of throughput) at each point; 0 if unknown.
double slowness(const MetricPoint& p) {
  if (p.has(MetricPoint::kIterationSeconds) && p.iteration_seconds > 0) return p.iteration_seconds;
  if (p.has(MetricPoint::kThroughput) && p.throughput > 0) return 1 / p.throughput;
  return 0;
}

void detect_slow_steps(const Series& series, const AnomalyParameters& k, Emitter* emit) {
  const Points& p = series.points();
  std::vector<double> ratio(p.size(), 0);
  std::vector<double> base(p.size(), 0);
  TrailingWindow history(k.window_points);
  for (size_t i = 0; i < p.size(); ++i) {
    const double s = slowness(p[i]);
    if (s <= 0) continue;
    if (history.size() >= k.stall_min_history_points) {
      base[i] = history.Median();
      ratio[i] = s / base[i];
    }
    history.Push(s);
  }
  for_each_run(
      p, exclusion(series, k), [&](size_t i) { return ratio[i] >= k.stall_factor; },
      [&](size_t first, size_t last) {
        const MetricPoint& at = p[first];
        const bool timed = at.has(MetricPoint::kIterationSeconds) && at.iteration_seconds > 0;
        const std::string what =
            timed
                ? fmt::format("{} per iteration, {}x the trailing median {}",
                              seconds_text(at.iteration_seconds), number(ratio[first]),
                              seconds_text(base[first]))
                : fmt::format("throughput {}, {}x below the trailing median {}",
                              number(at.throughput), number(ratio[first]), number(1 / base[first]));
        emit->Emit({derived::kTrainingStall, &at,
                    fmt::format("step {}: {}{}", at.step, what, run_suffix(p, first, last)),
                    timed ? at.iteration_seconds : at.throughput,
                    timed ? base[first] : 1 / base[first], ratio[first], last - first + 1,
                    p[last].step});
      });
}

void detect_silence(const Series& series, const AnomalyParameters& k, Emitter* emit) {
  const Points& p = series.points();
  if (!series.input_end_time || p.empty() || !p.back().has(MetricPoint::kTime)) return;
  std::vector<double> gaps;
  for (size_t i = 1; i < p.size(); ++i) {
    if (p[i].has(MetricPoint::kTime) && p[i - 1].has(MetricPoint::kTime) &&
        p[i].time > p[i - 1].time) {
      gaps.push_back(p[i].time - p[i - 1].time);
    }
  }
  if (gaps.size() < k.silence_min_gaps) return;
  const double usual = median(gaps);
  const double silent = *series.input_end_time - p.back().time;
  if (silent < k.silence_min_seconds || silent < k.stall_factor * usual) return;
  emit->Emit({derived::kTrainingStall, &p.back(),
              fmt::format("step {}: the last metrics; the log goes on for {} more without any "
                          "({}x the usual {} between logged steps)",
                          p.back().step, seconds_text(silent), number(silent / usual),
                          seconds_text(usual)),
              silent, usual, silent / usual});
}

bool skipped_any(const MetricPoint& p) {
  return p.skipped > 0 || (p.nan_iterations > 0 && !p.loss_nonfinite());
}

// Whether the loss scale falls below `floor` within the run first..last, from a higher value in
// the run or at the point before it, or the scaler overflows at a minimum below it: the fp16
// scaler driven that low overflows at nearly every step. A scale that stays low without
// overflowing (bf16 prints a constant 1) has not fallen.
bool scale_collapses(const Points& p, size_t first, size_t last, double floor) {
  double highest = 0;
  for (size_t i = first > 0 ? first - 1 : 0; i <= last; ++i) {
    if (!p[i].has(MetricPoint::kLossScale)) continue;
    if (p[i].loss_scale < floor &&
        (highest > p[i].loss_scale || p[i].has(MetricPoint::kScaleAtMinimum))) {
      return true;
    }
    highest = std::max(highest, static_cast<double>(p[i].loss_scale));
  }
  return false;
}

void detect_skipped(const Series& series, const AnomalyParameters& k, Emitter* emit) {
  const Points& p = series.points();
  // A collapsing scale is no warm-up: calibration from a high initial scale never falls that low.
  for_each_run(
      p, 0, [&](size_t i) { return skipped_any(p[i]); },
      [&](size_t first, size_t last) {
        const bool collapsed = scale_collapses(p, first, last, k.loss_scale_collapse_below);
        if (!collapsed) first = std::max(first, exclusion(series, k));
        if (first > last) return;
        uint64_t skipped = 0;
        uint64_t nans = 0;
        for (size_t i = first; i <= last; ++i) {
          skipped += p[i].skipped;
          if (!p[i].loss_nonfinite()) nans += p[i].nan_iterations;
        }
        if (std::max(skipped, nans) < k.skipped_run_min && nans == 0 && !collapsed) return;
        std::string text =
            fmt::format("step {}: {} iterations skipped", p[first].step, std::max(skipped, nans));
        if (nans > 0) text += fmt::format(", {} with a NaN loss", nans);
        if (p[first].has(MetricPoint::kLossScale) && p[last].has(MetricPoint::kLossScale)) {
          text += fmt::format("; loss scale {} -> {}", number(p[first].loss_scale),
                              number(p[last].loss_scale));
        }
        if (collapsed) {
          text += fmt::format(" (below {}: nearly every step overflows)",
                              number(k.loss_scale_collapse_below));
        }
        emit->Emit({derived::kIterationsSkipped, &p[first], text + run_suffix(p, first, last),
                    static_cast<double>(std::max(skipped, nans)), 0, 0, last - first + 1,
                    p[last].step});
      });
}

}  // namespace

std::vector<Event> detect_anomalies(const Series& series, const AnomalyParameters& k) {
  std::vector<Event> events;
  Emitter emit(series, &events);
  detect_nonfinite(series, &emit);
  detect_spikes(series, k, &emit);
  detect_resume_spike(series, k, &emit);
  detect_divergence(series, k, &emit);
  detect_validation_divergence(series, k, &emit);
  detect_slow_steps(series, k, &emit);
  detect_silence(series, k, &emit);
  detect_skipped(series, k, &emit);
  return events;
}

}  // namespace faultline
