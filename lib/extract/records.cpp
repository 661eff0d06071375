#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "envelope/envelope.h"
#include "extract/extract.h"

namespace faultline {

using nlohmann::json;

namespace {

// Readers of one key that accept null or a missing key as "unknown" and refuse a wrong type.
class RecordKeys {
 public:
  explicit RecordKeys(const json& object) : object_(object) {}

  bool Text(const char* key, std::string* out) {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return true;
    if (!it->is_string()) return Wrong(key, "a string");
    *out = it->get<std::string>();
    return true;
  }

  // A text that is often the same as the record before's (`same`): then it shares its copy.
  bool Text(const char* key, SharedText* out, const SharedText* same) {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return true;
    if (!it->is_string()) return Wrong(key, "a string");
    const auto& text = it->get_ref<const std::string&>();
    *out = same && *same == text ? *same : SharedText(text);
    return true;
  }

  // A text that many records repeat (a signature, a host): the pool's copy of it.
  bool Name(const char* key, SharedText* out, TextPool* pool) {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return true;
    if (!it->is_string()) return Wrong(key, "a string");
    *out = pool->Get(it->get_ref<const std::string&>());
    return true;
  }

  template <typename T>
  bool Number(const char* key, std::optional<T>* out) {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return true;
    if (!it->is_number_integer()) return Wrong(key, "a whole number");
    if (it->is_number_unsigned()
            ? it->get<uint64_t>() > uint64_t(std::numeric_limits<T>::max())
            : it->get<int64_t>() < int64_t(std::numeric_limits<T>::min()) ||
                  it->get<int64_t>() > int64_t(std::numeric_limits<T>::max())) {
      return Wrong(key, "a number in range");
    }
    *out = it->get<T>();
    return true;
  }

  // A count of lines or bytes: a whole number up to kMaxRecordedCount.
  bool Count(const char* key, std::optional<uint64_t>* out) {
    if (!Number(key, out)) return false;
    if (out->value_or(0) > kMaxRecordedCount) return Wrong(key, "a count up to 2^48");
    return true;
  }

  bool Time(const char* key, Timestamp* out) {
    std::string text;
    if (!Text(key, &text)) return false;
    if (text.empty()) return true;
    auto time = parse_time(text);
    if (!time) return Wrong(key, "a time as faultline writes it");
    *out = *time;
    return true;
  }

  // A record's "fields" are mostly captured from its line: given as `source`, the line holds
  // them for the Fields.
  template <typename StringMap>
  bool Map(const char* key, StringMap* out, const SharedText& source = {}) {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return true;
    if (!it->is_object()) return Wrong(key, "an object");
    std::vector<Fields::value_type> entries;  // in name order, as JSON objects are kept here
    for (const auto& [name, value] : it->items()) {
      if (!value.is_string()) return Wrong(key, "an object of strings");
      const auto& text = value.template get_ref<const std::string&>();
      if constexpr (std::is_same_v<StringMap, Fields>) {
        entries.emplace_back(name, text);
      } else {
        (*out)[name] = text;
      }
    }
    if constexpr (std::is_same_v<StringMap, Fields>) *out = Fields::FromSorted(entries, source);
    return true;
  }

  // `before`, the GPU of the record before, shares its texts with this one where they match.
  bool Gpu(GpuRef* gpu, const GpuRef* before) {
    std::string pci;
    if (!Text("gpu", &pci) || !Number("gpu_index", &gpu->index) ||
        !Text("gpu_uuid", &gpu->uuid, before ? &before->uuid : nullptr) ||
        !Text("gpu_serial", &gpu->serial, before ? &before->serial : nullptr) ||
        !Text("gpu_product", &gpu->product, before ? &before->product : nullptr)) {
      return false;
    }
    gpu->pci = normalize_pci(pci);
    if (!pci.empty() && gpu->pci.empty()) return Wrong("gpu", "a PCI address");
    return true;
  }

  // The evidence line: "path", "line", "time", "text".
  // `before`, the evidence of the record before, shares its path with this one where they match.
  bool Evidence(faultline::Evidence* evidence, const faultline::Evidence* before) {
    std::optional<uint64_t> line;
    if (!Text("path", &evidence->path, before ? &before->path : nullptr) ||
        !Number("line", &line) || !Time("time", &evidence->time) ||
        !Text("text", &evidence->text, nullptr)) {
      return false;
    }
    evidence->line = line.value_or(0);
    return true;
  }

  const std::string& error() const { return error_; }

 private:
  bool Wrong(const char* key, const char* what) {
    error_ = std::string("\"") + key + "\" is not " + what;
    return false;
  }

  const json& object_;
  std::string error_;
};

bool read_event(const json& object, Records* records, std::string* error) {
  RecordKeys fields(object);
  Event event;
  std::optional<uint64_t> count;
  bool year_assumed = false;
  if (auto it = object.find("year_assumed"); it != object.end() && it->is_boolean()) {
    year_assumed = it->get<bool>();
  }
  if (!fields.Name("signature", &event.signature, &records->names) ||
      !fields.Name("host", &event.host, &records->names) || !fields.Number("rank", &event.rank) ||
      !fields.Gpu(&event.gpu, records->events.empty() ? nullptr : &records->events.back().gpu) ||
      !fields.Number("xid", &event.xid) ||
      !fields.Evidence(&event.evidence,
                       records->events.empty() ? nullptr : &records->events.back().evidence) ||
      !fields.Count("count", &count) || !fields.Map("fields", &event.fields, event.evidence.text)) {
    *error = fields.error();
    return false;
  }
  if (event.signature.empty()) {
    *error = "an event record needs a \"signature\"";
    return false;
  }
  event.evidence.signature = event.signature;
  event.evidence.time.year_assumed = year_assumed && event.evidence.time.known();
  event.count = std::max<uint64_t>(count.value_or(1), 1);
  records->events.push_back(std::move(event));
  return true;
}

bool read_state(const json& object, Records* records, std::string* error) {
  RecordKeys fields(object);
  GpuState state;
  if (!fields.Text("host", &state.host) ||
      !fields.Gpu(&state.gpu, records->states.empty() ? nullptr : &records->states.back().gpu) ||
      !fields.Evidence(&state.source,
                       records->states.empty() ? nullptr : &records->states.back().source) ||
      !fields.Map("fields", &state.fields)) {
    *error = fields.error();
    return false;
  }
  state.time = state.source.time;
  if (auto it = object.find("field_lines"); it != object.end() && it->is_object()) {
    for (const auto& [name, where] : it->items()) {
      if (!where.is_array() || where.size() != 2 || !where[0].is_number_unsigned() ||
          !where[1].is_string()) {
        *error = R"("field_lines" holds [line, "text"] pairs)";
        return false;
      }
      state.field_lines[name] = {where[0].get<uint64_t>(), where[1].get<std::string>()};
    }
  }
  records->states.push_back(std::move(state));
  return true;
}

bool read_input(const json& object, Records* records, std::string* error) {
  RecordKeys fields(object);
  InputSummary input;
  std::optional<uint64_t> lines, bytes, cut_lines, understood, tool_like;
  std::string kind;
  if (!fields.Text("path", &input.path) || !fields.Text("host", &input.host) ||
      !fields.Text("kind", &kind) || !fields.Text("compression", &input.compression) ||
      !fields.Count("lines", &lines) || !fields.Count("bytes", &bytes) ||
      !fields.Count("cut_lines", &cut_lines) || !fields.Text("error", &input.error) ||
      !fields.Count("understood_lines", &understood) ||
      !fields.Count("tool_like_lines", &tool_like)) {
    *error = fields.error();
    return false;
  }
  if (!kind.empty()) {
    const std::optional<InputKind> known = parse_input_kind(kind);
    if (!known) {
      *error = "\"kind\" is not a kind of input: " + kind;
      return false;
    }
    input.kind = *known;
  }
  input.lines = lines.value_or(0);
  input.bytes = bytes.value_or(0);
  input.cut_lines = cut_lines.value_or(0);
  input.understood_lines = understood.value_or(0);
  input.tool_like_lines = tool_like.value_or(0);
  records->inputs.push_back(std::move(input));
  return true;
}

// {"record": "series", "path", "host", "format", "rank", "rank_kind", "metrics": ["loss"]}:
// a series that logs the loss (the values are not recorded).
bool read_series(const json& object, Records* records, std::string* error) {
  RecordKeys fields(object);
  LossLogger logger;
  std::optional<int> rank;
  std::string rank_kind;
  if (!fields.Text("path", &logger.path) || !fields.Text("host", &logger.host) ||
      !fields.Text("format", &logger.format) || !fields.Number("rank", &rank) ||
      !fields.Text("rank_kind", &rank_kind)) {
    *error = fields.error();
    return false;
  }
  logger.rank = rank.value_or(-1);
  logger.rank_is_local = rank_kind == "local";
  auto metrics = object.find("metrics");
  if (metrics != object.end() && metrics->is_array() &&
      std::find(metrics->begin(), metrics->end(), json("loss")) != metrics->end()) {
    records->loss_loggers.push_back(std::move(logger));
  }
  return true;
}

// {"record": "unread", "path", "reason"}: an input the node could not open.
bool read_unread(const json& object, Records* records, std::string* error) {
  RecordKeys fields(object);
  UnreadInput input;
  if (!fields.Text("path", &input.path) || !fields.Text("reason", &input.reason)) {
    *error = fields.error();
    return false;
  }
  records->unread.push_back(std::move(input));
  return true;
}

}  // namespace

bool read_record(std::string_view line, Records* records, std::string* error) {
  const json object = json::parse(line, nullptr, false);
  if (object.is_discarded() || !object.is_object()) {
    *error = "not a JSON object";
    return false;
  }
  std::string kind = "event";
  if (auto it = object.find("record"); it != object.end()) {
    if (!it->is_string()) {
      *error = "\"record\" is not a string";
      return false;
    }
    kind = it->get<std::string>();
  }
  if (kind == "event") return read_event(object, records, error);
  if (kind == "state") return read_state(object, records, error);
  if (kind == "input") return read_input(object, records, error);
  if (kind == "series") return read_series(object, records, error);
  if (kind == "unread") return read_unread(object, records, error);
  return true;
}

}  // namespace faultline
