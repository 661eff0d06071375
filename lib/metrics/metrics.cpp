#include "metrics/metrics.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include "envelope/envelope.h"
#include "metrics/decimal.h"
#include "model/text.h"

namespace faultline {
namespace {

// Series one input may hold (segments included), and the points they share (3.2 MB, so that
// the inputs being read at once stay small): a series alone keeps kMaxPointsPerSeries, many
// keep fewer each (down to kMinPointsPerSeries).
constexpr size_t kMaxSeries = 64;
constexpr size_t kPointBudget = 50'000;
// A line's own timestamp starts this close to its beginning, launcher tags included.
constexpr size_t kTimeReach = 64;

// ---- Numbers and times ----------------------------------------------------------------------

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_word(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// Digits at `*pos`, advancing past them.
std::optional<int64_t> take_integer(std::string_view text, size_t* pos) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data() + *pos, text.data() + text.size(), value);
  if (ec != std::errc()) return std::nullopt;
  *pos = static_cast<size_t>(end - text.data());
  return value;
}

// A number as Python, JSON and C print it, after what wraps it: spaces, quotes (HF's ".4g"
// strings), list brackets (DeepSpeed's lr=[5e-05]), numpy's "np.float64(...)", PyTorch's
// "tensor(nan, device='cuda:0')" (a dict of losses printed as it is); "nan", "NaN",
// "inf", "-inf", "Infinity", "2.3E+00", "+1.5". With `grouped`, "7,282" reads as 7282.
std::optional<double> read_number(std::string_view text, bool grouped = false) {
  size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\'' || text[i] == '"' ||
                             text[i] == '[' || text[i] == '(')) {
    ++i;
  }
  for (std::string_view wrapper : {"np.float64(", "np.float32(", "tensor("}) {
    if (text.substr(i).starts_with(wrapper)) i += wrapper.size();
  }
  if (i < text.size() && text[i] == '+') ++i;
  double value = 0;
  const char* end = parse_plain_decimal(text.data() + i, text.data() + text.size(), &value);
  if (end == nullptr) {
    auto [stop, ec] = std::from_chars(text.data() + i, text.data() + text.size(), value);
    if (ec != std::errc()) return std::nullopt;
    end = stop;
  }
  while (grouped && end + 3 < text.data() + text.size() && *end == ',' && is_digit(end[1]) &&
         is_digit(end[2]) && is_digit(end[3]) && !is_digit(end[4])) {
    value = value * 1000 + (end[1] - '0') * 100 + (end[2] - '0') * 10 + (end[3] - '0');
    end += 4;
  }
  return value;
}

bool two_digits(std::string_view text, size_t at, int* out) {
  if (!is_digit(text[at]) || !is_digit(text[at + 1])) return false;
  *out = (text[at] - '0') * 10 + (text[at + 1] - '0');
  return true;
}

// The first "YYYY-MM-DD HH:MM:SS[.,ffffff]" (or with 'T') in `text`, as Unix seconds of that
// wall clock: Megatron's "[2024-04-06 03:02:12]", Python logging's "2024-06-11 13:46:00,123".
std::optional<double> find_datetime(std::string_view text) {
  constexpr size_t kLength = 19;
  for (size_t i = 0; i + kLength <= text.size(); ++i) {
    if (text[i + 4] != '-' || text[i + 7] != '-' || text[i + 13] != ':' || text[i + 16] != ':' ||
        (text[i + 10] != ' ' && text[i + 10] != 'T')) {
      continue;
    }
    int c = 0, y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
    if (!two_digits(text, i, &c) || !two_digits(text, i + 2, &y) || !two_digits(text, i + 5, &mo) ||
        !two_digits(text, i + 8, &d) || !two_digits(text, i + 11, &h) ||
        !two_digits(text, i + 14, &mi) || !two_digits(text, i + 17, &s) || mo < 1 || mo > 12 ||
        d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) {
      continue;
    }
    double fraction = 0;
    size_t j = i + kLength;
    if (j + 1 < text.size() && (text[j] == '.' || text[j] == ',') && is_digit(text[j + 1])) {
      double scale = 0.1;
      for (++j; j < text.size() && is_digit(text[j]); ++j, scale /= 10) {
        fraction += (text[j] - '0') * scale;
      }
    }
    return unix_seconds(c * 100 + y, mo, d, h, mi, s) + fraction;
  }
  return std::nullopt;
}

// ---- One parsed metric line -----------------------------------------------------------------

enum class Slot {
  kStep,
  kLoss,
  kGradNorm,
  kLearningRate,
  kLossScale,
  kSkipped,       // per logging interval (Megatron)
  kSkippedTotal,  // cumulative (DeepSpeed)
  kNanIterations,
  kIterationSeconds,
  kThroughput,
  kEpoch,
  kSummary,  // the HF Trainer's end-of-training summary: not a step
};

struct Key {
  std::string_view name;
  Slot slot;
  double scale = 1;  // to seconds, for times
  int loss_priority = 0;
};

// Megatron-LM, Megatron-DeepSpeed and NeMo "| name: value |" fields (docs/formats/training-logs.md
// §1.1, §5.2).
constexpr std::array kPipeKeys = {
    Key{"lm loss", Slot::kLoss, 1, 4},
    Key{"reduced_train_loss", Slot::kLoss, 1, 3},
    Key{"train_loss", Slot::kLoss, 1, 2},
    Key{"grad norm", Slot::kGradNorm},
    Key{"grad_norm", Slot::kGradNorm},
    Key{"learning rate", Slot::kLearningRate},
    Key{"lr", Slot::kLearningRate},
    Key{"loss scale", Slot::kLossScale},
    Key{"number of skipped iterations", Slot::kSkipped},
    Key{"number of nan iterations", Slot::kNanIterations},
    Key{"elapsed time per iteration (ms)", Slot::kIterationSeconds, 1e-3},
    Key{"elapsed time per iteration (s)", Slot::kIterationSeconds},
    Key{"train_step_timing in s", Slot::kIterationSeconds},
    Key{"throughput per GPU (TFLOP/s/GPU)", Slot::kThroughput},
    Key{"tokens per gpu per second (tgs)", Slot::kThroughput},
    Key{"global_step", Slot::kStep},
};

// "name=value", "name: value", "'name': value", "\"name\": value" (§2, §3, §4, §5.1, JSON).
constexpr std::array kWordKeys = {
    Key{"step", Slot::kStep},
    Key{"global_step", Slot::kStep},
    Key{"iter", Slot::kStep},
    Key{"iteration", Slot::kStep},
    Key{"lm_loss", Slot::kLoss, 1, 4},
    Key{"reduced_train_loss", Slot::kLoss, 1, 3},
    Key{"train_loss", Slot::kLoss, 1, 2},
    Key{"total_loss", Slot::kLoss, 1, 2},
    Key{"loss", Slot::kLoss, 1, 1},
    Key{"grad_norm", Slot::kGradNorm},
    Key{"gradient_norm", Slot::kGradNorm},
    Key{"lr", Slot::kLearningRate},
    Key{"learning_rate", Slot::kLearningRate},
    Key{"loss_scale", Slot::kLossScale},
    Key{"skipped", Slot::kSkippedTotal},
    Key{"tps", Slot::kThroughput},
    Key{"wps", Slot::kThroughput},
    Key{"epoch", Slot::kEpoch},
    Key{"train_runtime", Slot::kSummary},
};

// mmengine's LogProcessor ("name: value" joined by two spaces) and mmcv's TextLoggerHook
// ("name: value, ") (§5.3): the total loss, the grad norm, the learning rate and seconds per
// iteration ("data_time" is another key).
constexpr std::array kMmKeys = {
    Key{"loss", Slot::kLoss, 1, 1},
    Key{"grad_norm", Slot::kGradNorm},
    Key{"lr", Slot::kLearningRate},
    Key{"time", Slot::kIterationSeconds},
};

// detectron2's CommonMetricPrinter and maskrcnn-benchmark's MetricLogger (§5.4).
constexpr std::array kMeterKeys = {
    Key{"total_loss", Slot::kLoss, 1, 2}, Key{"loss", Slot::kLoss, 1, 1},
    Key{"grad_norm", Slot::kGradNorm},    Key{"lr", Slot::kLearningRate},
    Key{"time", Slot::kIterationSeconds},
};

// nanotron's "| name: value" log entries (§5.6), numbers in its human_format ("11.5K").
constexpr std::array kNanotronKeys = {
    Key{"lm_loss", Slot::kLoss, 1, 4},
    Key{"grad_norm", Slot::kGradNorm},
    Key{"lr", Slot::kLearningRate},
    Key{"elapsed_time_per_iteration_ms", Slot::kIterationSeconds, 1e-3},
    Key{"tokens_per_sec_per_gpu", Slot::kThroughput},
};

// fairseq's progress bars: "name=value, " (simple) and JSON (§5.7).
constexpr std::array kFairseqKeys = {
    Key{"num_updates", Slot::kStep},     Key{"loss", Slot::kLoss, 1, 1},
    Key{"gnorm", Slot::kGradNorm},       Key{"lr", Slot::kLearningRate},
    Key{"loss_scale", Slot::kLossScale}, Key{"wps", Slot::kThroughput},
};

// Keras's Progbar " - name: value" (§5.8): the loss only; the other names are the model's metrics.
constexpr std::array kKerasKeys = {
    Key{"loss", Slot::kLoss, 1, 1},
};

// A loss the generic reader knows by its name's words (split at '_', '/', '.', '-'): one of
// kLossWords and none of kNotLossWords ("avr_loss", "loss_bbox_reg", "train/nll", "poly_loss";
// not "loss_scale", "val_loss"). Below every named key: the line's main loss is a named one.
constexpr std::array<std::string_view, 6> kLossWords = {"loss", "losses",     "nll",
                                                        "xent", "perplexity", "ppl"};
constexpr std::array<std::string_view, 12> kNotLossWords = {
    "scale", "scaler", "weight", "coef", "lambda",     "ratio",
    "val",   "valid",  "eval",   "test", "validation", "lr"};
constexpr Key kLossLike{"", Slot::kLoss, 1, 0};

bool is_loss_like(std::string_view name) {
  bool loss = false;
  for (size_t start = 0; start <= name.size();) {
    size_t end = name.find_first_of("_/.-", start);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view word = name.substr(start, end - start);
    const auto is = [&](std::string_view known) { return equals_ignoring_case(known, word); };
    if (std::any_of(kNotLossWords.begin(), kNotLossWords.end(), is)) return false;
    loss = loss || std::any_of(kLossWords.begin(), kLossWords.end(), is);
    start = end + 1;
  }
  return loss;
}

// The key named `name`, in any case: trainers print "loss", "Loss" and "LOSS" alike.
template <size_t N>
const Key* find_key(const std::array<Key, N>& keys, std::string_view name) {
  for (const Key& key : keys) {
    if (key.name.size() != name.size()) continue;
    if (key.name == name || equals_ignoring_case(key.name, name)) return &key;
  }
  return nullptr;
}

struct Record {
  MetricPoint point;
  std::string_view format;
  bool has_step = false;
  int loss_priority = 0;
  std::optional<uint64_t> skipped_total;
  std::optional<double> epoch;
  std::optional<int> logged_rank;  // DeepSpeed's "[Rank N]" inside the message
  bool throughput_key = false;     // torchtitan's tps/wps
  bool reject = false;             // a summary or validation line
  bool overflow = false;           // an fp16 loss scaler's overflow: one skipped iteration
  std::optional<float> attempted_loss_scale;  // the scale that overflowed
};

void store(const Key& key, double value, Record* r) {
  MetricPoint& p = r->point;
  const auto as_float = [](double v) { return static_cast<float>(v); };
  const auto as_count = [](double v) {
    return static_cast<uint32_t>(std::clamp(v, 0.0, 4e9));  // NaN clamps to 0
  };
  switch (key.slot) {
    case Slot::kStep:
      if (!std::isfinite(value)) return;
      p.step = static_cast<int64_t>(value);
      r->has_step = true;
      return;
    case Slot::kLoss: {
      // The line's main loss is its best-named one; a NaN or Inf in any loss (a component's
      // "loss_bbox_reg: nan") is the line's news, as it will be the total's.
      const bool stored = p.has(MetricPoint::kLoss);
      const bool news = !std::isfinite(value) && (!stored || std::isfinite(p.loss));
      if (stored && key.loss_priority <= r->loss_priority && !news) return;
      r->loss_priority = std::max(r->loss_priority, key.loss_priority);
      p.loss = as_float(value);
      return p.set(MetricPoint::kLoss);
    }
    case Slot::kGradNorm:
      p.grad_norm = as_float(value);
      return p.set(MetricPoint::kGradNorm);
    case Slot::kLearningRate:
      p.learning_rate = as_float(value);
      return p.set(MetricPoint::kLearningRate);
    case Slot::kLossScale:
      p.loss_scale = as_float(value);
      return p.set(MetricPoint::kLossScale);
    case Slot::kSkipped:
      p.skipped = as_count(value);
      return p.set(MetricPoint::kSkipped);
    case Slot::kSkippedTotal:
      r->skipped_total = as_count(value);
      return;
    case Slot::kNanIterations:
      p.nan_iterations = as_count(value);
      return p.set(MetricPoint::kNanIterations);
    case Slot::kIterationSeconds:
      p.iteration_seconds = as_float(value * key.scale);
      return p.set(MetricPoint::kIterationSeconds);
    case Slot::kThroughput:
      p.throughput = as_float(value);
      r->throughput_key = true;
      return p.set(MetricPoint::kThroughput);
    case Slot::kEpoch:
      r->epoch = value;
      return;
    case Slot::kSummary:
      r->reject = true;
      return;
  }
}

void set_time(std::string_view head, Record* r) {
  if (auto seconds = find_datetime(head.substr(0, kTimeReach))) {
    r->point.time = *seconds;
    r->point.set(MetricPoint::kTime);
  }
}

// A number in nanotron's human_format: "11.5K", "85.8G", "1.02K", "nan" (§5.6).
std::optional<double> read_human(std::string_view text) {
  auto value = read_number(text);
  const std::string_view word = trim(text);
  if (!value || word.empty()) return value;
  switch (word.back()) {
    case 'K':
      return *value * 1e3;
    case 'M':
      return *value * 1e6;
    case 'B':
    case 'G':
      return *value * 1e9;
    case 'T':
      return *value * 1e12;
    default:
      return value;
  }
}

// The "name: value" cells of `cells`, separated by '|'.
template <size_t N>
void scan_pipe_cells(std::string_view cells, const std::array<Key, N>& keys, Record* r,
                     bool human) {
  for (size_t begin = 0; begin <= cells.size();) {
    const size_t bar = std::min(cells.find('|', begin), cells.size());
    const std::string_view field = cells.substr(begin, bar - begin);
    const size_t colon = field.rfind(':');
    if (colon != std::string_view::npos) {
      const Key* key = find_key(keys, trim(field.substr(0, colon)));
      if (key) {
        const std::string_view text = field.substr(colon + 1);
        if (auto value = human ? read_human(text) : read_number(text)) store(*key, *value, r);
      }
    }
    begin = bar + 1;
  }
}

// The "| name: value" fields after body[from].
template <size_t N>
void scan_pipe_fields(std::string_view body, size_t from, const std::array<Key, N>& keys, Record* r,
                      bool human) {
  const size_t bar = body.find('|', from);
  if (bar != std::string_view::npos) scan_pipe_cells(body.substr(bar + 1), keys, r, human);
}

// ---- Megatron-LM / Megatron-DeepSpeed / NeMo 2: "iteration N/M | key: value | ..." --------

bool parse_pipe_line(std::string_view body, Record* r) {
  const size_t at = body.find("iteration ");
  if (at == std::string_view::npos) return false;
  size_t pos = at + 10;
  while (pos < body.size() && body[pos] == ' ') ++pos;
  auto iteration = take_integer(body, &pos);
  if (!iteration || pos >= body.size() || body[pos] != '/') return false;
  const std::string_view head = body.substr(0, at);
  if (head.find("alidation") != std::string_view::npos) return false;
  r->format = head.find("epoch ") != std::string_view::npos ? "nemo" : "megatron";
  r->point.step = *iteration;
  r->has_step = true;
  set_time(head, r);
  scan_pipe_fields(body, pos, kPipeKeys, r, false);
  // Megatron prints no "lm loss" when the interval's average is NaN; the counter says so.
  MetricPoint& p = r->point;
  if (r->format == "megatron" && !p.has(MetricPoint::kLoss) && p.nan_iterations > 0) {
    p.loss = std::numeric_limits<float>::quiet_NaN();
    p.set(MetricPoint::kLoss);
    p.set(MetricPoint::kLossInferred);
  }
  return (p.fields & ~MetricPoint::kTime) != 0;
}

// A Megatron record wrapped over several lines (a narrow terminal, a pasted excerpt): a line of
// "name: value |" cells without its "iteration N/M" head. Its values have no step of their own;
// it is a point only for a NaN or Inf loss or grad norm, as the generic reader keeps one.
bool parse_pipe_continuation(std::string_view body, Record* r) {
  if (body.find(" |") == std::string_view::npos) return false;
  scan_pipe_cells(body, kPipeKeys, r, false);
  if (!r->point.loss_nonfinite() && !r->point.grad_norm_nonfinite()) return false;
  r->format = "megatron";
  set_time(body, r);
  return true;
}

bool loss_or_grad_norm(const Record& r) {
  return r.point.has(MetricPoint::kLoss) || r.point.has(MetricPoint::kGradNorm);
}

bool starts_word(std::string_view body, size_t at) {
  return at == 0 || !is_word(body[at - 1]);
}

// "[n]" or "[ n/total]" at body[*pos]; `*pos` ends past the ']'.
struct Bracket {
  int64_t n = 0;
  std::optional<int64_t> total;
};

std::optional<Bracket> take_bracket(std::string_view body, size_t* pos) {
  if (*pos >= body.size() || body[*pos] != '[') return std::nullopt;
  ++*pos;
  while (*pos < body.size() && body[*pos] == ' ') ++*pos;
  Bracket out;
  auto n = take_integer(body, pos);
  if (!n) return std::nullopt;
  out.n = *n;
  if (*pos < body.size() && body[*pos] == '/') {
    ++*pos;
    out.total = take_integer(body, pos);
    if (!out.total) return std::nullopt;
  }
  if (*pos >= body.size() || body[*pos] != ']') return std::nullopt;
  ++*pos;
  return out;
}

// ---- "name=value" / "name: value" / dict and JSON keys --------------------------------------

struct WordScan {
  char quote = 0;  // the quote around the first key read: ' for HF dicts, " for JSON
  size_t first_key = std::string_view::npos;
};

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

// The key ending right before the separator at `sep` (blanks between them allowed: TensorFlow's
// "loss = 0.428"), and the quote around it (0 if none).
std::string_view key_before(std::string_view body, size_t sep, char* quote) {
  size_t end = sep;
  while (end > 0 && is_blank(body[end - 1])) --end;
  *quote = 0;
  // A key in quotes (dicts, JSON) or in brackets (LION's "[Loss] nan").
  char open = 0;
  if (end > 0 && (body[end - 1] == '\'' || body[end - 1] == '"')) {
    *quote = open = body[--end];
  } else if (end > 0 && body[end - 1] == ']') {
    open = '[';
    --end;
  }
  size_t begin = end;
  // A quoted key may hold a path of names ('Loss/total_loss': TensorFlow's loss dicts).
  const auto in_key = [&](char c) { return is_word(c) || (*quote != 0 && (c == '/' || c == '.')); };
  while (begin > 0 && in_key(body[begin - 1])) --begin;
  if (open != 0 && (begin == 0 || body[begin - 1] != open)) return {};
  return body.substr(begin, end - begin);
}

// Whether a number starts at body[at]: "12972", "-0.5", ".5", "nan", "inf".
bool number_at(std::string_view body, size_t at) {
  if (at >= body.size()) return false;
  const char c = body[at];
  return is_digit(c) || c == '-' || c == '.' || c == 'n' || c == 'N' || c == 'i' || c == 'I';
}

// Whether the word before body[begin] (blanks between) names an evaluation: nanoGPT's
// "train loss X, val loss Y", "valid loss", "eval loss", "test loss".
bool evaluation_before(std::string_view body, size_t begin) {
  size_t end = begin;
  while (end > 0 && is_blank(body[end - 1])) --end;
  if (end == begin) return false;
  size_t start = end;
  while (start > 0 && is_word(body[start - 1])) --start;
  const std::string_view word = body.substr(start, end - start);
  return word == "val" || word == "valid" || word == "validation" || word == "eval" ||
         word == "test";
}

// With `loss_like`, a key no entry of `keys` names is a loss when its name says so (is_loss_like).
// Whether a line speaks of an evaluation anywhere ("validation loss at iteration 71 on test set
// | lm loss PPL: 7.3"): a loss it names only by a loss-like word is not the training loss.
bool names_evaluation(std::string_view body) {
  for (std::string_view word : {"validation", "eval", "test", "val_", "val "}) {
    if (body.find(word) != std::string_view::npos) return true;
  }
  return false;
}

template <size_t N>
void scan_words(std::string_view body, Record* r, WordScan* scan, const std::array<Key, N>& keys,
                bool loss_like = false) {
  for (size_t sep = 0; sep < body.size(); ++sep) {
    // "name=value", "name: value", "name value" (TensorFlow's "step 12972", lit-gpt's "loss
    // nan", LION's "[Loss] nan": blanks between a key and a number) and a key-value table's row
    // "| loss   | nan |" (OpenAI's logger).
    size_t value_at = sep + 1;
    if (is_blank(body[sep]) || body[sep] == '|') {
      const bool bar = body[sep] == '|';
      if (sep == 0 || (!bar && !is_word(body[sep - 1]) && body[sep - 1] != ']')) continue;
      while (value_at < body.size() && is_blank(body[value_at])) ++value_at;
      if ((bar && value_at == sep + 1) || !number_at(body, value_at)) continue;
    } else if (body[sep] != ':' && body[sep] != '=') {
      continue;
    }
    char quote = 0;
    const std::string_view name = key_before(body, sep, &quote);
    const Key* key = name.empty() ? nullptr : find_key(keys, name);
    if (key == nullptr && loss_like && !name.empty() && is_loss_like(name) &&
        !names_evaluation(body)) {
      key = &kLossLike;
    }
    if (key == nullptr) continue;
    const auto begin = static_cast<size_t>(name.data() - body.data());
    if (key->slot == Slot::kLoss && quote == 0 && evaluation_before(body, begin)) {
      r->reject = true;
    }
    if (scan->first_key == std::string_view::npos) {
      scan->first_key = begin;
      scan->quote = quote;
    }
    // torchtitan's validation line: "validate step: N  loss: X".
    if (key->slot == Slot::kStep && begin >= 9 && body.substr(begin - 9, 9) == "validate ") {
      r->reject = true;
    }
    if (auto value = read_number(body.substr(value_at), key->slot == Slot::kThroughput)) {
      store(*key, *value, r);
    }
  }
}

// DeepSpeed's log_dist tag before its step line: "[Rank 0] step=40, ...".
std::optional<int> deepspeed_rank(std::string_view head) {
  const size_t at = head.rfind("[Rank ");
  if (at == std::string_view::npos) return std::nullopt;
  size_t pos = at + 6;
  auto rank = take_integer(head, &pos);
  if (!rank || pos >= head.size() || head[pos] != ']') return std::nullopt;
  return static_cast<int>(*rank);
}

// The step of "Epoch: [E] [n/N]" or "Epoch: [E][n/N]" (DETR's and PaddleDetection's
// MetricLogger, deepspeech.pytorch): batch n of N in epoch E, counted across epochs.
std::optional<int64_t> epoch_counter_step(std::string_view body) {
  const size_t at = body.find("Epoch");
  if (at == std::string_view::npos || !starts_word(body, at)) return std::nullopt;
  size_t pos = at + 5;
  if (pos < body.size() && body[pos] == ':') ++pos;
  while (pos < body.size() && body[pos] == ' ') ++pos;
  const std::optional<Bracket> epoch = take_bracket(body, &pos);
  while (pos < body.size() && body[pos] == ' ') ++pos;
  const std::optional<Bracket> batch = epoch ? take_bracket(body, &pos) : std::nullopt;
  if (!batch || epoch->total || !batch->total) return std::nullopt;
  return epoch->n * *batch->total + batch->n;
}

bool parse_word_line(std::string_view body, Record* r) {
  WordScan scan;
  scan_words(body, r, &scan, kWordKeys, true);
  const MetricPoint& p = r->point;
  const bool loss_or_grad = p.has(MetricPoint::kLoss) || p.has(MetricPoint::kGradNorm);
  if (r->reject || scan.first_key == std::string_view::npos) return false;
  if (!r->has_step && loss_or_grad) {
    if (const std::optional<int64_t> step = epoch_counter_step(body)) {
      r->point.step = *step;
      r->has_step = true;
    }
  }
  // A loop that logs once per epoch ("epoch: 12 loss: 0.21") numbers its points by the epoch. A
  // fractional epoch (the HF Trainer's) is a position inside one, not a step; a line that
  // evaluates, or a table row (fairseq's end-of-epoch summary), is no training point.
  if (!r->has_step && loss_or_grad && r->epoch && *r->epoch >= 0 && *r->epoch < 1e12 &&
      std::floor(*r->epoch) == *r->epoch && scan.quote != '\'' &&
      body.find_first_of('|') == std::string_view::npos &&
      body.find("val") == std::string_view::npos && body.find("test") == std::string_view::npos) {
    r->point.step = static_cast<int64_t>(*r->epoch);
    r->has_step = true;
  }
  if (scan.quote == '\'') {
    r->format = "hf-trainer";  // a dict repr; it prints no step
  } else if (r->has_step && r->skipped_total && !loss_or_grad) {
    r->format = "deepspeed";
  } else if (r->has_step && loss_or_grad) {
    r->format = scan.quote == '"' ? "json" : r->throughput_key ? "torchtitan" : "generic";
  } else if (loss_or_grad && (p.loss_nonfinite() || p.grad_norm_nonfinite())) {
    // A NaN or Inf is news wherever it is printed, with or without a step ("Bad grad_norm
    // detected (grad_norm=nan)"): numbered on from the latest point.
    r->format = "generic";
  }
  if (r->format.empty() || (r->format == "hf-trainer" && !loss_or_grad)) return false;
  const std::string_view head = body.substr(0, scan.first_key);
  set_time(head, r);
  r->logged_rank = deepspeed_rank(head);
  return true;
}

// The "n/total" of a tqdm bar whose "%|" is at `bar`: "%|####   | 4846/12331 [" (total "?" when
// unknown); `*pos` ends past it.
struct BarCount {
  int64_t n = 0;
  std::optional<int64_t> total;
};

std::optional<BarCount> bar_count(std::string_view text, size_t bar, size_t* pos) {
  const size_t close = text.find('|', bar + 2);
  if (close == std::string_view::npos) return std::nullopt;
  *pos = close + 1;
  while (*pos < text.size() && text[*pos] == ' ') ++*pos;
  auto n = take_integer(text, pos);
  if (!n || *pos >= text.size() || text[*pos] != '/') return std::nullopt;
  ++*pos;
  return BarCount{*n, take_integer(text, pos)};
}

// ---- DeepSpeed's fp16 loss scaler: "OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 64,
// reducing to 32" (§2) --------------------------------------------------------------------------

// fairseq's FP16Optimizer: "| WARNING: overflow detected, setting loss scale to: 0.25" (0.x),
// "NOTE: overflow detected, setting loss scale to: 64.0" (later), one skipped update each (§5.7).
bool parse_fairseq_overflow(std::string_view body, Record* r) {
  constexpr std::string_view kSetting = "overflow detected, setting loss scale to: ";
  const size_t at = body.find(kSetting);
  if (at == std::string_view::npos) return false;
  MetricPoint& p = r->point;
  p.skipped = 1;
  p.set(MetricPoint::kSkipped);
  if (auto scale = read_number(body.substr(at + kSetting.size()))) {
    p.loss_scale = static_cast<float>(*scale);
    p.set(MetricPoint::kLossScale);
  }
  set_time(body.substr(0, at), r);
  r->format = "fairseq";
  r->overflow = true;
  return true;
}

// One skipped iteration and the scale it falls back to. The scaler (ZeRO's DynamicLossScaler, the
// older "[deepscale]" stage2, FP16_Optimizer's "Overflow detected.", Apex AMP's "Gradient
// overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0") prints no step; a
// hysteresis step ("Attempted loss scale: 64, but hysteresis is 2") keeps the scale, and bf16
// prints no scale.
bool parse_overflow_line(std::string_view body, Record* r) {
  const size_t skipping = body.find(" Skipping step");
  if (skipping == std::string_view::npos) return parse_fairseq_overflow(body, r);
  size_t mark = body.rfind("OVERFLOW!", skipping);
  if (mark == std::string_view::npos) mark = body.rfind("Overflow detected.", skipping);
  if (mark == std::string_view::npos) mark = body.rfind("Gradient overflow.", skipping);
  if (mark == std::string_view::npos) return false;
  MetricPoint& p = r->point;
  p.skipped = 1;
  p.set(MetricPoint::kSkipped);
  constexpr std::string_view kAttempted = "Attempted loss scale: ";
  constexpr std::string_view kReducing = ", reducing to ";
  constexpr std::string_view kApexReducing = " reducing loss scale to ";
  const size_t attempted = body.find(kAttempted, skipping);
  if (attempted != std::string_view::npos) {
    const std::string_view after = body.substr(attempted + kAttempted.size());
    const size_t reducing = after.find(kReducing);
    const auto tried = read_number(after);
    const auto next = reducing == std::string_view::npos
                          ? tried
                          : read_number(after.substr(reducing + kReducing.size()));
    if (tried) r->attempted_loss_scale = static_cast<float>(*tried);
    if (next) {
      p.loss_scale = static_cast<float>(*next);
      p.set(MetricPoint::kLossScale);
      if (reducing != std::string_view::npos && tried && *tried == *next) {
        p.set(MetricPoint::kScaleAtMinimum);
      }
    }
  } else if (const size_t to = body.find(kApexReducing, skipping); to != std::string_view::npos) {
    if (auto next = read_number(body.substr(to + kApexReducing.size()))) {
      p.loss_scale = static_cast<float>(*next);
      p.set(MetricPoint::kLossScale);
    }
  }
  // The logger's stamp follows whatever a progress bar drew before it on the line. The HF
  // Trainer's bar counts the optimizer steps done: the overflow is in the next one.
  const std::string_view head = body.substr(0, mark);
  if (auto seconds = find_datetime(head)) {
    p.time = *seconds;
    p.set(MetricPoint::kTime);
  }
  size_t pos = 0;
  const size_t bar = head.rfind("%|");
  if (auto count = bar == std::string_view::npos ? std::nullopt : bar_count(head, bar, &pos)) {
    p.step = count->n + 1;
    r->has_step = true;
  }
  // "OVERFLOW! Rank 0 Skipping step": the rank that printed it (always 0; only it prints).
  if (const size_t rank_at = body.find("Rank ", mark); rank_at < skipping) {
    pos = rank_at + 5;
    if (auto rank = take_integer(body, &pos)) r->logged_rank = static_cast<int>(*rank);
  }
  r->format = "deepspeed";
  r->overflow = true;
  return true;
}

// ---- Lightning / tqdm: "Epoch 1:  39%|####   | 4846/12331 [05:59<09:15, 13.47it/s, k=v]" ---

// The seconds per iteration in tqdm's rate ("13.47it/s", "41.36s/it"), if printed.
std::optional<double> rate_seconds(std::string_view rate) {
  auto value = read_number(rate);
  if (!value || *value <= 0) return std::nullopt;
  if (rate.find("s/it") != std::string_view::npos) return *value;
  if (rate.find("it/s") != std::string_view::npos) return 1 / *value;
  return std::nullopt;
}

bool parse_progress_bar(std::string_view body, Record* r) {
  const size_t bar = body.find("%|");
  if (bar == std::string_view::npos) return false;
  const size_t desc = body.rfind("Epoch ", bar);
  std::optional<int64_t> epoch;
  if (desc != std::string_view::npos) {
    size_t at = desc + 6;
    epoch = take_integer(body, &at);
  }
  size_t pos = 0;
  const std::optional<BarCount> count = bar_count(body, bar, &pos);
  if (!count) return false;
  const size_t open = body.find('[', pos);
  const size_t end = body.find(']', open);
  if (open == std::string_view::npos || end == std::string_view::npos) return false;
  const std::string_view inside = body.substr(open + 1, end - open - 1);
  // "[elapsed<remaining, rate, postfix...]"
  const size_t rate_at = inside.find(", ");
  if (rate_at == std::string_view::npos) return false;
  const std::string_view after = inside.substr(rate_at + 2);
  const std::string_view rate = after.substr(0, after.find(','));
  // The metrics are in the postfix ("k=v") or, set as the bar's description, before it
  // ("[losses/total_loss: 0.22 | ...]:   2%|", trlX).
  WordScan scan;
  scan_words(after.substr(rate.size()), r, &scan, kWordKeys, true);
  if (!r->point.has(MetricPoint::kLoss)) scan_words(body.substr(0, bar), r, &scan, kWordKeys, true);
  if (!r->point.has(MetricPoint::kLoss) || r->reject) return false;
  if (auto seconds = rate_seconds(rate)) {
    r->point.iteration_seconds = static_cast<float>(*seconds);
    r->point.set(MetricPoint::kIterationSeconds);
  }
  // NeMo 1.x logs global_step; otherwise count batches across epochs when the total is known.
  if (!r->has_step) {
    r->point.step =
        epoch && count->total && *count->total > 0 ? *epoch * *count->total + count->n : count->n;
  }
  r->has_step = true;
  r->format = epoch ? "lightning" : "tqdm";
  return true;
}

// ---- mmengine / mmcv (MMDetection, MMSegmentation, ...): "Epoch(train)  [1][ 50/1000]  lr: ..
// loss: X  ... grad_norm: G" and "Epoch [1][50/1000]\tlr: ..., loss: X, grad_norm: G" (§5.3) ----

bool parse_mm_line(std::string_view body, Record* r) {
  bool by_epoch = true;
  size_t at = body.find("Epoch");
  if (at == std::string_view::npos) {
    by_epoch = false;
    at = body.find("Iter");
    if (at == std::string_view::npos) return false;
  }
  if (!starts_word(body, at)) return false;
  size_t pos = at + (by_epoch ? 5 : 4);
  bool mmengine = false;
  if (pos < body.size() && body[pos] == '(') {  // mmengine's mode: train, val or test
    const size_t close = body.find(')', pos);
    if (close == std::string_view::npos || body.substr(pos + 1, close - pos - 1) != "train") {
      return false;
    }
    mmengine = true;
    pos = close + 1;
  }
  while (pos < body.size() && body[pos] == ' ') ++pos;
  const std::optional<Bracket> first = take_bracket(body, &pos);
  if (!first) return false;
  int64_t step = first->n;
  if (by_epoch) {  // "[epoch][iteration/iterations per epoch]", both from 1
    const std::optional<Bracket> second = take_bracket(body, &pos);
    if (first->total || !second || !second->total) return false;
    step = (first->n - 1) * *second->total + second->n;
  } else if (!first->total) {
    return false;
  }
  WordScan scan;
  scan_words(body.substr(pos), r, &scan, kMmKeys);
  if (r->reject || !loss_or_grad_norm(*r)) return false;
  r->point.step = step;
  r->has_step = true;
  r->format = mmengine ? "mmengine" : "mmcv";
  set_time(body.substr(0, at), r);
  return true;
}

// ---- detectron2 "eta: E  iter: N  total_loss: X  loss_cls: ...  time: T  ...  lr: L" and
// maskrcnn-benchmark "eta: E  iter: N  loss: X (avg)  ...  time: T (avg)  ...  lr: L" (§5.4) ---

bool parse_meter_line(std::string_view body, Record* r) {
  const size_t at = body.find("iter: ");
  if (at == std::string_view::npos || !starts_word(body, at)) return false;
  size_t pos = at + 6;
  auto iteration = take_integer(body, &pos);
  // Both join their fields with two spaces.
  if (!iteration || body.substr(pos, 2) != "  ") return false;
  WordScan scan;
  scan_words(body.substr(pos), r, &scan, kMeterKeys);
  if (r->reject || !r->point.has(MetricPoint::kLoss)) return false;
  r->point.step = *iteration;
  r->has_step = true;
  r->format = r->loss_priority == 2 ? "detectron2" : "maskrcnn-benchmark";
  set_time(body.substr(0, at), r);
  return true;
}

// ---- nanoGPT "iter N: loss X, time Tms, mfu M%" (§5.5) -----------------------------------------

// Seconds from "1099.34ms", "12.5 ms" or "3.2s".
std::optional<double> read_duration(std::string_view text) {
  auto value = read_number(text);
  if (!value) return std::nullopt;
  size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || is_digit(text[i]) || text[i] == '.')) ++i;
  const std::string_view unit = text.substr(i);
  if (unit.starts_with("ms")) return *value * 1e-3;
  if (unit.starts_with("s")) return *value;
  return std::nullopt;
}

bool parse_nanogpt_line(std::string_view body, Record* r) {
  const size_t at = body.find("iter ");
  if (at == std::string_view::npos || !starts_word(body, at)) return false;
  size_t pos = at + 5;
  auto iteration = take_integer(body, &pos);
  constexpr std::string_view kLossMark = ": loss ";
  if (!iteration || body.substr(pos, kLossMark.size()) != kLossMark) return false;
  auto loss = read_number(body.substr(pos + kLossMark.size()));
  if (!loss) return false;
  MetricPoint& p = r->point;
  p.loss = static_cast<float>(*loss);
  p.set(MetricPoint::kLoss);
  constexpr std::string_view kTimeMark = ", time ";
  if (const size_t time = body.find(kTimeMark, pos); time != std::string_view::npos) {
    if (auto seconds = read_duration(body.substr(time + kTimeMark.size()))) {
      p.iteration_seconds = static_cast<float>(*seconds);
      p.set(MetricPoint::kIterationSeconds);
    }
  }
  p.step = *iteration;
  r->has_step = true;
  r->format = "nanogpt";
  set_time(body.substr(0, at), r);
  return true;
}

// ---- nanotron "iteration: N / M | consumed_tokens: 85.8G | ... | lm_loss: X | lr: L | ... |
// grad_norm: G" (§5.6) ---------------------------------------------------------------------------

bool parse_nanotron_line(std::string_view body, Record* r) {
  const size_t at = body.find("iteration: ");
  if (at == std::string_view::npos) return false;
  size_t pos = at + 11;
  auto iteration = take_integer(body, &pos);
  if (!iteration || body.substr(pos, 3) != " / ") return false;
  scan_pipe_fields(body, pos, kNanotronKeys, r, true);
  if (!loss_or_grad_norm(*r)) return false;
  r->point.step = *iteration;
  r->has_step = true;
  r->format = "nanotron";
  set_time(body.substr(0, at), r);
  return true;
}

// ---- fairseq "epoch 001:    100 / 1000 loss=X, ..., num_updates=N, lr=L, gnorm=G, ..." (also
// the older "| epoch 010  2000 / 8223 loss=X (avg), ...") and its JSON lines (§5.7) --------------

bool parse_fairseq_line(std::string_view body, Record* r) {
  size_t from = std::string_view::npos;
  std::optional<int64_t> position;  // in the run, from the epoch and the bar: no num_updates
  if (const size_t at = body.find("epoch ");
      at != std::string_view::npos && starts_word(body, at)) {
    size_t pos = at + 6;
    auto epoch = take_integer(body, &pos);
    if (epoch && pos < body.size() && body[pos] == ':') ++pos;
    while (pos < body.size() && body[pos] == ' ') ++pos;
    auto n = epoch ? take_integer(body, &pos) : std::nullopt;
    if (n && body.substr(pos, 3) == " / ") {
      pos += 3;
      if (auto total = take_integer(body, &pos)) {
        position = (*epoch - 1) * *total + *n;
        from = pos;
      }
    }
  }
  if (from == std::string_view::npos) {
    const size_t key = body.find("\"num_updates\"");
    if (key == std::string_view::npos) return false;
    from = body.rfind('{', key);
    if (from == std::string_view::npos) return false;
  }
  WordScan scan;
  scan_words(body.substr(from), r, &scan, kFairseqKeys);
  if (r->reject || !loss_or_grad_norm(*r)) return false;
  if (!r->has_step) {
    if (!position) return false;
    r->point.step = *position;
    r->has_step = true;
  }
  r->format = "fairseq";
  set_time(body.substr(0, from), r);
  return true;
}

// ---- Keras Progbar "1000/1000 [====] - 3s 3ms/step - loss: X - accuracy: A" (Keras 2) and
// " 1000/1000 ━━━━ 3s 3ms/step - accuracy: A - loss: X" (Keras 3) (§5.8) ------------------------

bool parse_keras_line(std::string_view body, Record* r) {
  const size_t at = body.find(" - loss: ");
  if (at == std::string_view::npos) return false;
  size_t pos = 0;
  while (pos < body.size() && body[pos] == ' ') ++pos;
  auto n = take_integer(body, &pos);
  if (!n || pos >= body.size() || body[pos] != '/') return false;
  ++pos;
  if (!take_integer(body, &pos) && !body.substr(pos).starts_with("Unknown")) return false;
  WordScan scan;
  scan_words(body.substr(at), r, &scan, kKerasKeys);
  if (r->reject || !r->point.has(MetricPoint::kLoss)) return false;
  r->format = "keras";  // the count restarts every epoch: numbered in order
  return true;
}

// Each parser gets a fresh record: a failed attempt may have stored values.
std::optional<Record> parse_record(std::string_view body) {
  // Megatron's lines, most of a large job's, first: no other format has its "iteration N/M".
  for (auto parse : {parse_pipe_line, parse_overflow_line, parse_progress_bar, parse_mm_line,
                     parse_meter_line, parse_nanogpt_line, parse_nanotron_line, parse_fairseq_line,
                     parse_keras_line, parse_pipe_continuation, parse_word_line}) {
    Record record;
    if (parse(body, &record)) return record;
  }
  return std::nullopt;
}

// ---- Validation losses ------------------------------------------------------------------------

struct Validation {
  std::string_view format;      // the training lines' format it belongs with
  std::optional<int64_t> step;  // none: after the latest training point (HF prints no step)
  double loss = 0;
};

// Megatron-LM's evaluate_and_print_results: " validation{suffix} loss at iteration N | lm loss
// value: X | lm loss PPL: P | " (later: "at iteration N on validation set | ..."; the test set's
// and the end of training's lines are not the validation series). The HF Trainer's evaluation dict
// "{'eval_loss': X, 'eval_runtime': ...}". nanoGPT's "step N: train loss X, val loss Y".
std::optional<Validation> parse_validation(std::string_view body) {
  constexpr std::string_view kMegatron = " loss at iteration ";
  if (const size_t at = body.find(kMegatron);
      at != std::string_view::npos &&
      body.substr(0, at).find("validation") != std::string_view::npos) {
    size_t pos = at + kMegatron.size();
    const auto iteration = take_integer(body, &pos);
    // The first key is the model's loss ("lm loss" for GPT); "lm loss" wherever it is.
    size_t value = body.find("lm loss value:", pos);
    if (value == std::string_view::npos) value = body.find(" value:", pos);
    if (!iteration || value == std::string_view::npos ||
        body.substr(pos, value - pos).find("test") != std::string_view::npos) {
      return std::nullopt;
    }
    const auto loss = read_number(body.substr(body.find(':', value) + 1));
    if (!loss) return std::nullopt;
    return Validation{"megatron", *iteration, *loss};
  }
  constexpr std::string_view kHf = "'eval_loss': ";
  if (const size_t at = body.find(kHf); at != std::string_view::npos) {
    const auto loss = read_number(body.substr(at + kHf.size()));
    if (!loss) return std::nullopt;
    return Validation{"hf-trainer", std::nullopt, *loss};
  }
  constexpr std::string_view kNanoGpt = ", val loss ";
  if (const size_t at = body.find(kNanoGpt); at != std::string_view::npos) {
    const size_t step_at = body.find("step ");
    if (step_at == std::string_view::npos || step_at > at || !starts_word(body, step_at)) {
      return std::nullopt;
    }
    size_t pos = step_at + 5;
    const auto step = take_integer(body, &pos);
    if (!step || body.substr(pos, 13) != ": train loss ") return std::nullopt;
    const auto loss = read_number(body.substr(at + kNanoGpt.size()));
    if (!loss) return std::nullopt;
    return Validation{"nanogpt", *step, *loss};
  }
  return std::nullopt;
}

// Copies the values `from` printed over those of `to`: a redrawn progress bar's newest frame.
void overwrite(const MetricPoint& from, MetricPoint* to) {
  using P = MetricPoint;
  const auto take = [&](P::Field field, auto P::*value) {
    if (from.has(field)) to->*value = from.*value;
  };
  take(P::kLoss, &P::loss);
  take(P::kGradNorm, &P::grad_norm);
  take(P::kLearningRate, &P::learning_rate);
  take(P::kLossScale, &P::loss_scale);
  take(P::kSkipped, &P::skipped);
  take(P::kNanIterations, &P::nan_iterations);
  take(P::kIterationSeconds, &P::iteration_seconds);
  take(P::kThroughput, &P::throughput);
  take(P::kTime, &P::time);
  to->fields |= from.fields;
  to->line = from.line;
}

// ---- Run boundaries -------------------------------------------------------------------------

enum class Banner { kNone, kResume, kFreshStart };

Banner parse_banner(std::string_view body) {
  // Megatron-LM checkpointing.py: "  successfully loaded checkpoint from {load} [ t {tp}, p {pp}
  // ] at iteration {iteration}"; iteration 0 is a pretrained or release checkpoint.
  if (body.find("successfully loaded checkpoint from") != std::string_view::npos) {
    const size_t at = body.find("at iteration ");
    size_t pos = at + 13;
    auto iteration = at == std::string_view::npos ? std::nullopt : take_integer(body, &pos);
    return iteration && *iteration > 0 ? Banner::kResume : Banner::kFreshStart;
  }
  // transformers Trainer: logger.info("***** Running training *****") at every train().
  if (body.find("***** Running training *****") != std::string_view::npos) {
    return Banner::kFreshStart;
  }
  return Banner::kNone;
}

// Cheap literal checks: most lines of a log are not metrics. Megatron's "iteration" comes
// early in its line, so it is looked for first. "oss" and "tep" find "loss" and "step" with
// either case of their first letter (a custom loop's "Epoch 1 Step 100/1500 Loss nan (nan)",
// ishtos/mpII-face-gaze#3): cheaper than looking for "Loss" and "Step" too (bench/instructions:
// +177 instructions per syslog line against +280).
bool might_hold_metrics(std::string_view line) {
  for (std::string_view marker :
       {"iteration", "oss", "tep", "checkpoint", "Running training", "grad_norm"}) {
    if (line.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

// Removes ANSI SGR and cursor sequences ("\x1b[31m", torchtitan's colours).
std::string_view strip_ansi(std::string_view text, std::string* scratch) {
  if (text.find('\x1b') == std::string_view::npos) return text;
  scratch->clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\x1b') {
      scratch->push_back(text[i]);
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '[') {
      for (i += 2; i < text.size() && (text[i] < '@' || text[i] > '~'); ++i) {
      }
    }
  }
  return *scratch;
}

}  // namespace

// ---- Series per (rank, format), segment after segment ----------------------------------------

struct MetricsReader::Impl {
  struct SeriesKey {
    int rank = -1;
    bool local = false;
    std::string_view format;
    bool operator==(const SeriesKey&) const = default;
  };

  // The latest segment of one key, and the step it is filling in.
  struct Open {
    SeriesKey key;
    size_t series = 0;  // index into all
    bool pending = false;
    MetricPoint point;  // the latest point: a line that prints no step comes after it
    std::optional<uint64_t> skipped_total;
    uint64_t overflow_points = 0;     // overflow lines made points since the last skipped counter
    std::optional<float> loss_scale;  // the latest the segment printed
    std::optional<double> epoch;
    uint64_t generation = 0;
  };

  std::string path;
  std::string host;
  std::optional<RankTag> path_rank;
  std::vector<Series> all;
  std::vector<Open> open;
  uint64_t generation = 0;  // run banners seen
  bool banner_resumed = false;
  std::optional<double> latest_time;
  // The latest step each rank (and whether local) printed, in any format.
  std::map<std::pair<int, bool>, int64_t> latest_step;
  std::string scratch;

  void FeedFrame(std::string_view frame, uint64_t line_number) {
    if (!might_hold_metrics(frame)) return;
    const std::optional<RankTag> tag = parse_rank_prefixes(frame);
    const std::string_view body = strip_ansi(frame.substr(tag ? tag->prefix_length : 0), &scratch);
    if (std::optional<Validation> validation = parse_validation(body)) {
      AcceptValidation(*validation, tag, line_number);
    } else if (std::optional<Record> record = parse_record(body)) {
      record->point.line = line_number;
      Accept(*record, tag);
    } else if (const Banner banner = parse_banner(body); banner != Banner::kNone) {
      ++generation;
      banner_resumed = banner == Banner::kResume;
    }
  }

  SeriesKey KeyOf(const Record& record, const std::optional<RankTag>& tag) const {
    if (tag) {
      // torchtitan's run_train.sh tees with --role rank: its "[rank0]:" is the local rank.
      const bool tee = record.format == "torchtitan" && tag->source == RankTag::Source::kPyTorch;
      return {tag->rank, tag->is_local || tee, record.format};
    }
    if (record.logged_rank) return {*record.logged_rank, false, record.format};
    if (path_rank) return {path_rank->rank, path_rank->is_local, record.format};
    return {-1, false, record.format};
  }

  void Accept(Record& record, const std::optional<RankTag>& tag) {
    const SeriesKey key = KeyOf(record, tag);
    Open* state = Find(key);
    if (state == nullptr) return;
    MetricPoint& point = record.point;
    // Lines without a step (HF Trainer dicts, overflow lines) are numbered on from the latest.
    // An overflow is in the step after the last one the rank printed in any format, or that an
    // untagged line of the input printed (DeepSpeed's "Rank 0" under the bar rank 0 draws): a
    // progress bar on the line before counts the steps done, as one glued before it does.
    if (!record.has_step) point.step = state->point.step + 1;
    const auto rank = std::make_pair(key.rank, key.local);
    if (record.has_step) {
      latest_step[rank] = point.step;
    } else if (record.overflow) {
      auto bar = latest_step.find(rank);
      if (bar == latest_step.end()) bar = latest_step.find(std::make_pair(-1, false));
      if (bar != latest_step.end() && bar->second >= point.step) point.step = bar->second + 1;
    }
    if (state->generation != generation) {
      state->generation = generation;
      Restart(state, banner_resumed);
    } else if (state->pending &&
               (point.step < state->point.step ||
                (record.epoch && state->epoch && *record.epoch < *state->epoch))) {
      Restart(state, true);
    }
    if (record.epoch) state->epoch = record.epoch;
    // A step's lines merge into one point; an overflow is a skipped step of its own.
    const bool same_step = !record.overflow && state->pending && point.step == state->point.step;
    if (record.skipped_total) {
      // DeepSpeed counts skipped steps since the start; a point holds those since the last one
      // that no overflow line made a point of its own. An overflow at this very step is this
      // point, which the line's count includes.
      const uint64_t before = state->skipped_total.value_or(0);
      uint64_t skipped =
          *record.skipped_total >= before ? *record.skipped_total - before : *record.skipped_total;
      const uint64_t elsewhere = state->overflow_points - (same_step && state->overflow_points > 0);
      skipped -= std::min(skipped, elsewhere);
      point.skipped = static_cast<uint32_t>(skipped);
      point.set(MetricPoint::kSkipped);
      state->skipped_total = record.skipped_total;
      state->overflow_points = 0;
    }
    if (record.overflow) {
      ++state->overflow_points;
      // The scaler grows the scale back only after a window of steps without overflow: an
      // overflow at a higher scale than the last one left is not part of the same run.
      if (record.attempted_loss_scale && state->loss_scale &&
          *record.attempted_loss_scale > *state->loss_scale) {
        MetricPoint regrown = point;
        regrown.step = record.has_step ? std::max(point.step - 1, state->point.step) : point.step;
        regrown.skipped = 0;
        regrown.loss_scale = *record.attempted_loss_scale;
        regrown.set(MetricPoint::kLossScale);
        Push(state, regrown);
        if (!record.has_step) ++point.step;
      }
    }
    if (point.has(MetricPoint::kLossScale)) state->loss_scale = point.loss_scale;
    if (same_step) {
      overwrite(point, &state->point);
      return;
    }
    Push(state, point);
  }

  // A validation loss joins the open segment of its rank and format; one before any training
  // line of that segment has nothing to belong to.
  void AcceptValidation(const Validation& validation, const std::optional<RankTag>& tag,
                        uint64_t line_number) {
    Record record;
    record.format = validation.format;
    const SeriesKey key = KeyOf(record, tag);
    for (Open& state : open) {
      if (!(state.key == key) || state.generation != generation) continue;
      const bool timed = state.pending && state.point.has(MetricPoint::kTime);
      all[state.series].AddValidation(
          {.step = validation.step.value_or(state.point.step),
           .line = line_number,
           .loss = static_cast<float>(validation.loss),
           .time = timed ? std::optional<double>(state.point.time) : std::nullopt});
      return;
    }
  }

  void Push(Open* state, const MetricPoint& point) {
    Commit(state);
    state->point = point;
    state->pending = true;
  }

  // The open segment of `key`, made if new; nullptr when the input has too many series.
  Open* Find(const SeriesKey& key) {
    for (Open& state : open) {
      if (state.key == key) return &state;
    }
    if (!MakeRoom()) return nullptr;
    Open state;
    state.key = key;
    state.series = all.size();
    state.generation = generation;
    all.push_back(NewSeries(key, 0, generation > 0 && banner_resumed));
    open.push_back(state);
    Rebalance();
    return &open.back();
  }

  Series NewSeries(const SeriesKey& key, int segment, bool resumed) const {
    Series series;
    series.path = path;
    series.host = host;
    series.format = std::string(key.format);
    series.rank = key.rank;
    series.rank_is_local = key.local;
    series.segment = segment;
    series.resumed = resumed;
    return series;
  }

  // Ends the open segment of `state` and starts the next one, unless it is still empty.
  void Restart(Open* state, bool resumed) {
    Commit(state);
    if (all[state->series].points().empty()) {
      all[state->series].resumed = resumed;
      return;
    }
    if (!MakeRoom()) return;
    const int segment = all[state->series].segment + 1;
    state->series = all.size();
    all.push_back(NewSeries(state->key, segment, resumed));
    state->epoch.reset();
    state->loss_scale.reset();
    Rebalance();
  }

  // Keeps the series count within kMaxSeries by dropping the oldest finished segment.
  bool MakeRoom() {
    if (all.size() < kMaxSeries) return true;
    for (size_t i = 0; i < all.size(); ++i) {
      const bool is_open = std::any_of(open.begin(), open.end(),
                                       [&](const Open& state) { return state.series == i; });
      if (is_open) continue;
      all.erase(all.begin() + static_cast<long>(i));
      for (Open& state : open) {
        if (state.series > i) --state.series;
      }
      return true;
    }
    return false;
  }

  void Rebalance() { share_points(&all, kPointBudget); }

  void Commit(Open* state) {
    if (!state->pending) return;
    all[state->series].Add(state->point);
    state->pending = false;
  }

  void NoteTime(std::string_view text) {
    if (all.empty()) return;  // only times after the first metric line can end a series
    if (auto seconds = find_datetime(text.substr(0, kTimeReach))) {
      latest_time = std::max(latest_time.value_or(*seconds), *seconds);
    }
  }
};

MetricsReader::MetricsReader(std::string path, std::string host) : impl_(std::make_unique<Impl>()) {
  impl_->path_rank = rank_from_path(path);
  impl_->path = std::move(path);
  impl_->host = std::move(host);
}

MetricsReader::~MetricsReader() = default;
MetricsReader::MetricsReader(MetricsReader&&) noexcept = default;
MetricsReader& MetricsReader::operator=(MetricsReader&&) noexcept = default;

void MetricsReader::Feed(std::string_view text, uint64_t line_number) {
  impl_->NoteTime(text);
  // tqdm redraws its bar with '\r' and no newline: one line can hold hundreds of frames.
  size_t start = 0;
  for (size_t cr = text.find('\r'); cr != std::string_view::npos; cr = text.find('\r', start)) {
    impl_->FeedFrame(text.substr(start, cr - start), line_number);
    start = cr + 1;
  }
  impl_->FeedFrame(text.substr(start), line_number);
}

std::vector<Series> MetricsReader::Finish() {
  for (Impl::Open& state : impl_->open) {
    impl_->Commit(&state);
    // Only a run's last segment can have gone silent: an earlier one was followed by a restart.
    impl_->all[state.series].input_end_time = impl_->latest_time;
  }
  std::vector<Series> out;
  for (Series& series : impl_->all) {
    if (series.points().empty()) continue;
    out.push_back(std::move(series));
  }
  impl_->all.clear();
  impl_->open.clear();
  return out;
}

}  // namespace faultline
