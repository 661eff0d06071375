#include "report/timeline_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "model/captures.h"
#include "report/common.h"

namespace faultline {
namespace {

// Geometry, in the SVG's own units; the page scales it to its width.
constexpr double kWidth = 1100;
constexpr double kLeft = 200;  // row labels
constexpr double kRight = 24;
constexpr double kPlotWidth = kWidth - kLeft - kRight;
constexpr double kRowHeight = 30;
// Rows of diagnoses in a band; the rest share the last one.
constexpr size_t kMaxRows = 16;
constexpr double kAxisHeight = 36;
constexpr double kChartHeight = 180;
constexpr double kTitleHeight = 26;
// Points per curve: about two per pixel column (the lowest and highest of each).
constexpr size_t kCurvePoints = 1200;
// Curves named in a legend; beyond this a chart says how many there are.
constexpr size_t kLegendCurves = 12;

constexpr std::string_view kCurveColours[] = {"#2563eb", "#16a34a", "#9333ea", "#0d9488",
                                              "#db2777", "#65a30d", "#7c3aed", "#0284c7"};

std::string_view severity_colour(Severity severity) {
  static constexpr std::string_view kColours[] = {"#0891b2", "#ca8a04", "#ea580c", "#b91c1c"};
  return kColours[static_cast<size_t>(severity)];
}

// One evidence line on the timeline.
struct Mark {
  double t;  // on the band's axis
  Lane lane;
  const Diagnosis* diagnosis;
  const Evidence* evidence;
  bool first;  // the earliest line of its diagnosis: it gets a label
};

// Where a band's values go horizontally, and how its ticks read.
struct Axis {
  double min = 0;
  double max = 1;
  enum class Kind { kClock, kBoot, kStep } kind = Kind::kClock;
  int offset_minutes = 0;  // clock labels are in this zone

  double X(double t) const { return kLeft + (t - min) / (max - min) * kPlotWidth; }
};

Axis make_axis(double lo, double hi, Axis::Kind kind, int offset_minutes) {
  const double span = hi - lo;
  const double pad = span > 0 ? span * 0.03 : (kind == Axis::Kind::kClock ? 30 : 1);
  return {lo - pad, hi + pad, kind, offset_minutes};
}

// The smallest round step that gives at most eight ticks.
double tick_step(const Axis& axis) {
  static constexpr double kClockSteps[] = {0.001, 0.002, 0.005, 0.01,   0.02,   0.05,   0.1,  0.2,
                                           0.5,   1,     2,     5,      10,     15,     30,   60,
                                           120,   300,   600,   900,    1800,   3600,   7200, 10800,
                                           21600, 43200, 86400, 172800, 604800, 2592000};
  const double span = axis.max - axis.min;
  if (axis.kind == Axis::Kind::kClock) {
    for (double step : kClockSteps) {
      if (span / step <= 8) return step;
    }
    return span / 8;
  }
  const double magnitude = std::pow(10, std::floor(std::log10(span / 8)));
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (span / (factor * magnitude) <= 8) return factor * magnitude;
  }
  return 10 * magnitude;
}

std::string tick_label(const Axis& axis, double t, double step, bool with_date) {
  if (axis.kind != Axis::Kind::kClock) {
    const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step)));
    return fmt::format("{:.{}f}{}", t, decimals, axis.kind == Axis::Kind::kBoot ? " s" : "");
  }
  const double local = t + axis.offset_minutes * 60.0;
  const auto whole = static_cast<time_t>(std::floor(local));
  std::tm tm{};
  if (gmtime_r(&whole, &tm) == nullptr) return "";
  std::string label = step >= 86400 ? ""
                      : step >= 60
                          ? fmt::format("{:02}:{:02}", tm.tm_hour, tm.tm_min)
                          : fmt::format("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec);
  if (step < 1)
    label += fmt::format(".{:03}", static_cast<int>((local - std::floor(local)) * 1000));
  if (with_date || step >= 86400) {
    label = fmt::format("{:04}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday) +
            (label.empty() ? "" : " " + label);
  }
  return label;
}

int day_of(const Axis& axis, double t) {
  return static_cast<int>(std::floor((t + axis.offset_minutes * 60.0) / 86400));
}

// Grid lines from `top` down to the axis at `bottom`, and tick labels under it.
void draw_axis(const Axis& axis, double top, double bottom, std::ostream& out) {
  const double step = tick_step(axis);
  const double offset = axis.kind == Axis::Kind::kClock ? axis.offset_minutes * 60.0 : 0;
  int last_day = 0;
  bool first = true;
  for (double local = std::ceil((axis.min + offset) / step) * step; local - offset <= axis.max;
       local += step) {
    const double t = local - offset;
    const double x = axis.X(t);
    const bool new_day = axis.kind == Axis::Kind::kClock && (first || day_of(axis, t) != last_day);
    out << fmt::format(
               R"(<line class="grid" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"/>)", x,
               top, bottom)
        << fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)",
                       x, bottom + 15, html_escape(tick_label(axis, t, step, new_day)))
        << "\n";
    last_day = day_of(axis, t);
    first = false;
  }
  out << fmt::format(R"(<line class="axis" x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}"/>)", kLeft,
                     bottom, kLeft + kPlotWidth, bottom)
      << "\n";
}

std::string axis_caption(const Axis& axis, bool zoned) {
  switch (axis.kind) {
    case Axis::Kind::kBoot:
      return "seconds since boot";
    case Axis::Kind::kStep:
      return "step";
    case Axis::Kind::kClock:
      break;
  }
  if (!zoned) return "time as the logs print it (no zone given)";
  const int magnitude = std::abs(axis.offset_minutes);
  return fmt::format("time, UTC{}{:02}:{:02}; logs without a zone are read in it",
                     axis.offset_minutes < 0 ? '-' : '+', magnitude / 60, magnitude % 60);
}

std::string tooltip(const Mark& mark) {
  const Evidence& e = *mark.evidence;
  return fmt::format("#{} {} ({}) · {} · {}:{}\n{}", mark.diagnosis->position,
                     mark.diagnosis->failure->id, role_name(mark.diagnosis->role), e.time.iso(),
                     e.path, e.line, message_of(e.text));
}

// The mark of an evidence line: its shape says what kind of event it is (a circle for the GPU
// and PCIe, a square for CUDA, a diamond for NCCL, a triangle for the job); its colour the
// diagnosis's severity; hollow when the diagnosis is collateral damage, so that the first
// event stands out from what it caused.
std::string shape(Lane lane, double x, double y, std::string_view fill, std::string_view stroke) {
  const std::string paint = fmt::format(R"(fill="{}" stroke="{}" stroke-width="2")", fill, stroke);
  switch (lane) {
    case Lane::kHardware:
      return fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="6" {}/>)", x, y, paint);
    case Lane::kCuda:
      return fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="11" height="11" {}/>)", x - 5.5,
                         y - 5.5, paint);
    case Lane::kNccl:
      return fmt::format(
          R"(<polygon points="{0:.1f},{1:.1f} {2:.1f},{3:.1f} {0:.1f},{4:.1f} {5:.1f},{3:.1f}" {6}/>)",
          x, y - 7, x + 7, y, y + 7, x - 7, paint);
    case Lane::kJob:
      return fmt::format(R"(<polygon points="{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}" {}/>)", x,
                         y - 7, x + 7, y + 6, x - 7, y + 6, paint);
  }
  return "";
}

void draw_mark(const Axis& axis, const Mark& mark, double y, std::ostream& out) {
  const std::string_view colour = severity_colour(mark.diagnosis->severity);
  const bool hollow = mark.diagnosis->role == Role::kCollateral;
  out << "<g class=\"mark\"><title>" << html_escape(tooltip(mark)) << "</title>"
      << shape(mark.lane, axis.X(mark.t), y, hollow ? "#fff" : colour, colour) << "</g>\n";
}

// Marks in one row per diagnosis, labelled "#1 gpu-off-bus" on the left; past kMaxRows the
// rest share a last row. Returns the height used; *row_y is the middle of each diagnosis's row.
double draw_rows(const Axis& axis, const std::vector<Mark>& marks, double top,
                 std::map<int, double>* row_y, std::ostream& out) {
  std::vector<const Diagnosis*> rows;
  for (const Mark& mark : marks) {
    if (std::find(rows.begin(), rows.end(), mark.diagnosis) == rows.end()) {
      rows.push_back(mark.diagnosis);
    }
  }
  if (rows.empty()) return 0;
  std::sort(rows.begin(), rows.end(),
            [](const Diagnosis* a, const Diagnosis* b) { return a->position < b->position; });
  const size_t shown = rows.size() > kMaxRows ? kMaxRows - 1 : rows.size();
  for (size_t i = 0; i < rows.size(); ++i) {
    (*row_y)[rows[i]->position] =
        top + (static_cast<double>(std::min(i, shown)) + 0.5) * kRowHeight;
  }
  for (size_t i = 0; i < std::min(shown + 1, rows.size()); ++i) {
    const double mid = top + (static_cast<double>(i) + 0.5) * kRowHeight;
    const std::string label = i < shown
                                  ? fmt::format("#{} {}", rows[i]->position, rows[i]->failure->id)
                                  : fmt::format("{} more findings", rows.size() - shown);
    out << fmt::format(R"(<text class="lane" x="{}" y="{:.1f}" text-anchor="end">{}</text>)",
                       kLeft - 10, mid + 4, html_escape(label))
        << fmt::format(R"(<line class="lane-line" x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}"/>)",
                       kLeft, mid, kLeft + kPlotWidth, mid)
        << "\n";
  }
  for (const Mark& mark : marks) draw_mark(axis, mark, row_y->at(mark.diagnosis->position), out);
  return static_cast<double>(std::min(rows.size(), shown + 1)) * kRowHeight;
}

// What the shapes mean, at the top right of a band.
void draw_legend(double y, std::ostream& out) {
  double x = kLeft + kPlotWidth;
  for (auto lane = std::rbegin(kLanes); lane != std::rend(kLanes); ++lane) {
    const std::string_view name = lane_title(*lane);
    x -= static_cast<double>(name.size()) * 7.5 + 30;
    out << shape(*lane, x + 6, y + 12, "#fff", "#4b5563")
        << fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}">{}</text>)", x + 16, y + 16,
                       name)
        << "\n";
  }
}

// The lowest and highest of some values.
struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
};

std::pair<double, double> value_range(const std::vector<Curve>& curves) {
  Range range;
  for (const Curve& curve : curves) {
    for (const auto& [x, y] : curve.points) {
      if (std::isfinite(y)) range.Add(y);
    }
  }
  if (!(range.lo <= range.hi)) return {0, 1};
  if (range.hi - range.lo < 1e-9) return {range.lo - 0.5, range.hi + 0.5};
  return {range.lo, range.hi};
}

// A chart of curves over `axis`, kChartHeight high from `top`; NaN values are gaps.
void draw_curves(const Axis& axis, const std::vector<Curve>& curves, double top,
                 std::ostream& out) {
  const auto [lo, hi] = value_range(curves);
  // A spike would flatten the rest of a linear chart: past 20x, the chart is logarithmic.
  const bool log_scale = lo > 0 && hi / lo > 20;
  const auto scale = [&](double v) { return log_scale ? std::log10(v) : v; };
  const double bottom = top + kChartHeight;
  // Structured bindings are captured by copy: clang 14 cannot capture them by reference.
  const auto y_of = [&, lo = lo, hi = hi](double v) {
    return bottom - 8 - (scale(v) - scale(lo)) / (scale(hi) - scale(lo)) * (kChartHeight - 16);
  };
  out << fmt::format(R"(<rect class="chart" x="{}" y="{:.1f}" width="{}" height="{}"/>)", kLeft,
                     top, kPlotWidth, kChartHeight)
      << fmt::format(R"(<text class="lane" x="{}" y="{:.1f}" text-anchor="end">loss{}</text>)",
                     kLeft - 10, top + kChartHeight / 2 + 4, log_scale ? " (log)" : "")
      << "\n";
  for (double v : {lo, hi}) {
    out << fmt::format(R"(<text class="tick" x="{}" y="{:.1f}" text-anchor="end">{:.4g}</text>)",
                       kLeft - 6, y_of(v) + 4, v)
        << "\n";
  }
  for (size_t i = 0; i < curves.size(); ++i) {
    const std::string_view colour = kCurveColours[i % std::size(kCurveColours)];
    std::string points;
    const auto flush = [&] {
      if (points.empty()) return;
      out << fmt::format(
          R"(<polyline class="curve{}" points="{}" stroke="{}"><title>{}</title></polyline>)",
          curves[i].validation ? " validation" : "", points, colour, html_escape(curves[i].label));
      out << "\n";
      points.clear();
    };
    for (const auto& [x, v] : curves[i].points) {
      if (!std::isfinite(v) || (log_scale && v <= 0)) {
        flush();
        continue;
      }
      points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", axis.X(x), y_of(v));
    }
    flush();
  }
  if (curves.size() > kLegendCurves) {
    out << fmt::format(
               R"(<text class="legend" x="{}" y="{:.1f}" text-anchor="end">{} ranks</text>)",
               kLeft + kPlotWidth - 8, top + 16, curves.size())
        << "\n";
    return;
  }
  for (size_t i = 0; i < curves.size(); ++i) {
    out << fmt::format(
        R"(<text class="legend" x="{}" y="{:.1f}" text-anchor="end" fill="{}">{}</text>)",
        kLeft + kPlotWidth - 8, top + 16 + static_cast<double>(i) * 14,
        kCurveColours[i % std::size(kCurveColours)], html_escape(curves[i].label));
    out << "\n";
  }
}

// A training-metric anomaly on a loss chart: x on the chart's axis, the event for its kind and
// description.
struct AnomalyMark {
  double x;
  const Event* event;
};

bool is_metric_anomaly(const Event& event) {
  return std::find(std::begin(derived::kMetricAnomalies), std::end(derived::kMetricAnomalies),
                   event.signature) != std::end(derived::kMetricAnomalies);
}

// Where the anomalies go: by the time of their point on the clock chart (read in the zone of
// `offset_minutes`, as the curves are), by their step on the chart of steps.
void anomaly_marks(const std::vector<Event>& events, int offset_minutes,
                   std::vector<AnomalyMark>* timed, std::vector<AnomalyMark>* by_step) {
  for (const Event& event : events) {
    if (!is_metric_anomaly(event)) continue;
    const Timestamp& time = event.evidence.time;
    if (time.kind == Timestamp::Kind::kAbsolute) {
      const double shift = time.utc_offset_minutes ? 0 : offset_minutes * 60.0;
      timed->push_back({time.seconds - shift, &event});
    } else if (const auto step = event.fields.find("step"); step != event.fields.end()) {
      by_step->push_back({std::strtod(std::string(step->second).c_str(), nullptr), &event});
    }
  }
}

// A dashed line across the chart at each anomaly, its kind written at the bottom (the legend has
// the top); labels that would overlap the previous one are left out (the line and its tooltip
// stay).
void draw_anomalies(const Axis& axis, std::vector<AnomalyMark> marks, double top,
                    std::ostream& out) {
  constexpr double kLabelGap = 90;
  std::sort(marks.begin(), marks.end(),
            [](const AnomalyMark& a, const AnomalyMark& b) { return a.x < b.x; });
  double last_label = -kLabelGap;
  for (const AnomalyMark& mark : marks) {
    const double x = axis.X(mark.x);
    if (x < kLeft || x > kLeft + kPlotWidth) continue;
    out << fmt::format(
        R"(<g class="anomaly"><title>{}</title><line class="anomaly-line" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)",
        html_escape(mark.event->signature + ": " + mark.event->evidence.text), x, top, x,
        top + kChartHeight);
    if (x - last_label >= kLabelGap) {
      out << fmt::format(R"(<text class="anomaly-kind" x="{:.1f}" y="{:.1f}">{}</text>)", x + 3,
                         top + kChartHeight - 6, html_escape(mark.event->signature));
      last_label = x;
    }
    out << "</g>\n";
  }
}

void draw_title(std::string_view title, double y, std::ostream& out) {
  out << fmt::format(R"(<text class="band" x="{}" y="{:.1f}">{}</text>)", kLeft, y + 17,
                     html_escape(title))
      << "\n";
}

// The offset of the zoned times when they all share one (the logs of one site), else UTC.
int common_offset(const std::vector<const Evidence*>& evidence, bool* zoned) {
  std::set<int> offsets;
  for (const Evidence* e : evidence) {
    if (e->time.utc_offset_minutes) offsets.insert(*e->time.utc_offset_minutes);
  }
  *zoned = !offsets.empty();
  return offsets.size() == 1 ? *offsets.begin() : 0;
}

// Each evidence line once, with the best-ranked diagnosis it supports.
std::vector<Mark> collect_marks(const Analysis& analysis) {
  std::vector<Mark> marks;
  std::set<std::pair<std::string, uint64_t>> seen;
  for (const Diagnosis& d : analysis.diagnoses) {
    const Evidence* earliest = nullptr;
    for (const Evidence& e : d.evidence) {
      if (!e.time.known()) continue;
      if (!earliest ||
          (comparable(e.time, earliest->time) && e.time.seconds < earliest->time.seconds)) {
        earliest = &e;
      }
    }
    for (const Evidence& e : d.evidence) {
      if (!e.time.known() || !seen.emplace(e.path, e.line).second) continue;
      marks.push_back({e.time.seconds, e.lane, &d, &e, &e == earliest});
    }
  }
  return marks;
}

// The validation losses of a series, at the time of the training line each followed (on a chart
// of steps, at its step); at most kCurvePoints of them, evenly spaced.
Curve validation_curve(const Series& s, bool has_time) {
  Curve curve;
  curve.validation = true;
  const auto& losses = s.validation();
  const size_t every = losses.size() / kCurvePoints + 1;
  for (size_t i = 0; i < losses.size(); i += every) {
    const ValidationPoint& v = losses[i];
    if (has_time && !v.time) continue;
    curve.points.emplace_back(has_time ? *v.time : static_cast<double>(v.step), v.loss);
  }
  return curve;
}

}  // namespace

void loss_curves(const std::vector<Series>& series, std::vector<Curve>* timed,
                 std::vector<Curve>* by_step) {
  for (const Series& s : series) {
    Curve curve;
    const size_t slash = s.path.find_last_of('/');
    curve.label = (s.rank >= 0 ? "rank " + std::to_string(s.rank)
                               : s.path.substr(slash == std::string::npos ? 0 : slash + 1)) +
                  (s.segment > 0 ? fmt::format(" (segment {})", s.segment + 1) : "");
    const bool has_time = std::any_of(s.points().begin(), s.points().end(),
                                      [](const auto& p) { return p.has(MetricPoint::kTime); });
    for (const MetricPoint& p : s.points()) {
      if (!p.has(MetricPoint::kLoss) || (has_time && !p.has(MetricPoint::kTime))) continue;
      curve.points.emplace_back(has_time ? p.time : static_cast<double>(p.step), p.loss);
    }
    if (curve.points.empty()) continue;
    // The lowest and highest of each bucket keep spikes and dips on a thinned curve.
    if (curve.points.size() > kCurvePoints) {
      const size_t per_bucket = (curve.points.size() + kCurvePoints / 2 - 1) / (kCurvePoints / 2);
      std::vector<std::pair<double, double>> thin;
      for (size_t i = 0; i < curve.points.size(); i += per_bucket) {
        auto first = curve.points.begin() + static_cast<std::ptrdiff_t>(i);
        const auto last = curve.points.begin() + static_cast<std::ptrdiff_t>(
                                                     std::min(i + per_bucket, curve.points.size()));
        const auto [low, high] = std::minmax_element(
            first, last, [](const auto& a, const auto& b) { return a.second < b.second; });
        const auto gap =
            std::find_if(first, last, [](const auto& p) { return !std::isfinite(p.second); });
        std::set<std::vector<std::pair<double, double>>::iterator> kept = {low, high};
        if (gap != last) kept.insert(gap);  // a NaN stays a gap
        for (const auto& point : kept) thin.push_back(*point);
      }
      curve.points = std::move(thin);
    }
    auto* chart = has_time ? timed : by_step;
    Curve validation = validation_curve(s, has_time);
    validation.label = curve.label + " validation";
    chart->push_back(std::move(curve));
    if (!validation.points.empty()) chart->push_back(std::move(validation));
  }
}

std::string timeline_svg(const Analysis& analysis, const std::vector<Curve>& timed,
                         const std::vector<Curve>& by_step) {
  const std::vector<Mark> all = collect_marks(analysis);
  std::vector<Mark> absolute;
  std::map<std::string, std::vector<Mark>> boot;  // by host: each host has its own boot
  std::vector<const Evidence*> absolute_evidence;
  for (const Mark& mark : all) {
    if (mark.evidence->time.kind == Timestamp::Kind::kAbsolute) {
      absolute.push_back(mark);
      absolute_evidence.push_back(mark.evidence);
    } else {
      boot[mark.diagnosis->host].push_back(mark);
    }
  }
  if (all.empty() && timed.empty() && by_step.empty()) return "";

  bool zoned = false;
  const int offset = common_offset(absolute_evidence, &zoned);
  std::vector<AnomalyMark> timed_anomalies;
  std::vector<AnomalyMark> step_anomalies;
  anomaly_marks(analysis.events, offset, &timed_anomalies, &step_anomalies);
  std::ostringstream body;
  double y = 8;
  if (!absolute.empty() || !timed.empty()) {
    // A time with no zone is a wall clock: read it in the axis's zone.
    for (Mark& mark : absolute) {
      if (!mark.evidence->time.utc_offset_minutes) mark.t -= offset * 60.0;
    }
    std::vector<Curve> curves = timed;
    for (Curve& curve : curves) {
      for (auto& point : curve.points) point.first -= offset * 60.0;
    }
    Range range;
    for (const Mark& mark : absolute) range.Add(mark.t);
    for (const Curve& curve : curves) {
      for (const auto& point : curve.points) range.Add(point.first);
    }
    const Axis axis = make_axis(range.lo, range.hi, Axis::Kind::kClock, offset);
    draw_title(axis_caption(axis, zoned), y, body);
    if (!absolute.empty()) draw_legend(y, body);
    y += kTitleHeight;
    const double top = y;
    if (!curves.empty()) {
      draw_curves(axis, curves, y, body);
      draw_anomalies(axis, timed_anomalies, y, body);
      y += kChartHeight + 8;
    }
    std::map<int, double> row_y;
    y += draw_rows(axis, absolute, y, &row_y, body);
    // Hardware events across the loss chart: what the curve did when the GPU failed.
    if (!curves.empty()) {
      for (const Mark& mark : absolute) {
        if (!mark.first || mark.lane != Lane::kHardware) continue;
        body
            << fmt::format(
                   R"(<line class="event-line" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="{3}"/>)",
                   axis.X(mark.t), top, row_y[mark.diagnosis->position] - 7,
                   severity_colour(mark.diagnosis->severity))
            << "\n";
      }
    }
    draw_axis(axis, top, y, body);
    y += kAxisHeight;
  }
  for (const auto& [host, marks] : boot) {
    Range range;
    for (const Mark& mark : marks) range.Add(mark.t);
    const Axis axis = make_axis(range.lo, range.hi, Axis::Kind::kBoot, 0);
    draw_title(
        (host.empty() ? std::string("host not named") : host) + ": " + axis_caption(axis, false), y,
        body);
    draw_legend(y, body);
    y += kTitleHeight;
    const double top = y;
    std::map<int, double> row_y;
    y += draw_rows(axis, marks, y, &row_y, body);
    draw_axis(axis, top, y, body);
    y += kAxisHeight;
  }
  if (!by_step.empty()) {
    Range range;
    for (const Curve& curve : by_step) {
      for (const auto& point : curve.points) range.Add(point.first);
    }
    const Axis axis = make_axis(range.lo, range.hi, Axis::Kind::kStep, 0);
    draw_title("loss by step (the log printed no wall-clock time)", y, body);
    y += kTitleHeight;
    draw_curves(axis, by_step, y, body);
    draw_anomalies(axis, step_anomalies, y, body);
    draw_axis(axis, y, y + kChartHeight, body);
    y += kChartHeight + kAxisHeight;
  }
  return fmt::format(
      R"(<svg class="timeline" viewBox="0 0 {} {:.0f}" role="img" aria-label="Timeline of the evidence">)"
      "\n{}</svg>",
      kWidth, y + 4, body.str());
}

}  // namespace faultline
