#include <cmath>

#include "report/json.h"
#include "report/report.h"

namespace faultline {

using nlohmann::json;

json text_or_null(const std::string& text) {
  return text.empty() ? json(nullptr) : json(text);
}

json time_or_null(const Timestamp& time) {
  return time.known() ? json(time.iso()) : json(nullptr);
}

namespace {

template <typename T>
json optional_or_null(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

void put_gpu(const GpuRef& gpu, json* out) {
  (*out)["gpu"] = text_or_null(gpu.pci);
  (*out)["gpu_index"] = optional_or_null(gpu.index);
  (*out)["gpu_uuid"] = text_or_null(gpu.uuid);
  (*out)["gpu_serial"] = text_or_null(gpu.serial);
  (*out)["gpu_product"] = text_or_null(gpu.product);
}

// A JSON object, as the records' "fields" are (a Fields would be an array of pairs).
json fields_object(const Fields& fields) {
  json out = json::object();
  for (const auto& [name, value] : fields) out[name] = value;
  return out;
}

}  // namespace

json unread_record(const UnreadInput& input) {
  return {{"record", "unread"}, {"path", input.path}, {"reason", input.reason}};
}

json event_record(const Event& event) {
  json out = {{"record", "event"},
              {"signature", event.signature},
              {"host", text_or_null(event.host)},
              {"rank", optional_or_null(event.rank)},
              {"xid", optional_or_null(event.xid)},
              {"time", time_or_null(event.evidence.time)},
              {"year_assumed", event.evidence.time.year_assumed},
              {"path", event.evidence.path},
              {"line", event.evidence.line},
              {"text", event.evidence.text},
              {"count", event.count},
              {"fields", fields_object(event.fields)}};
  put_gpu(event.gpu, &out);
  return out;
}

json state_record(const GpuState& state) {
  json lines = json::object();
  for (const auto& [field, where] : state.field_lines) lines[field] = {where.first, where.second};
  json out = {{"record", "state"},
              {"host", text_or_null(state.host)},
              {"time", time_or_null(state.time)},
              {"path", state.source.path},
              {"line", state.source.line},
              {"text", state.source.text},
              {"fields", state.fields},
              {"field_lines", lines}};
  put_gpu(state.gpu, &out);
  return out;
}

json series_record(const LossLogger& logger) {
  return {{"record", "series"},
          {"path", logger.path},
          {"host", text_or_null(logger.host)},
          {"format", logger.format},
          {"rank", logger.rank < 0 ? json(nullptr) : json(logger.rank)},
          {"rank_kind",
           logger.rank < 0 ? json(nullptr) : json(logger.rank_is_local ? "local" : "global")},
          {"metrics", {"loss"}}};
}

json input_json(const InputSummary& input) {
  return {{"path", input.path},
          {"host", text_or_null(input.host)},
          {"kind", input_kind_name(input.kind)},
          {"compression", input.compression},
          {"lines", input.lines},
          {"bytes", input.bytes},
          {"error", text_or_null(input.error)},
          {"understood_lines", input.understood_lines},
          {"understood_share",
           input.lines == 0 ? json(nullptr)
                            : json(std::round(1000.0 * static_cast<double>(input.understood_lines) /
                                              static_cast<double>(input.lines)) /
                                   1000.0)}};
}

json input_record(const InputSummary& input) {
  json out = input_json(input);
  out["record"] = "input";
  out["cut_lines"] = input.cut_lines;
  out["tool_like_lines"] = input.tool_like_lines;
  return out;
}

RecordWriter::RecordWriter(std::ostream& out, bool flush_each)
    : out_(out), flush_each_(flush_each), flushed_(std::chrono::steady_clock::now()) {}

RecordWriter::~RecordWriter() {
  out_.flush();
}

void RecordWriter::Write(const InputSummary& input) {
  Put(dump_json(input_record(input), -1));
}
void RecordWriter::Write(const UnreadInput& input) {
  Put(dump_json(unread_record(input), -1));
}
void RecordWriter::Write(const Event& event) {
  Put(dump_json(event_record(event), -1));
}
void RecordWriter::Write(const GpuState& state) {
  Put(dump_json(state_record(state), -1));
}
void RecordWriter::Write(const LossLogger& logger) {
  Put(dump_json(series_record(logger), -1));
}

void RecordWriter::Put(const std::string& record) {
  out_ << record << '\n';
  if (flush_each_ || std::chrono::steady_clock::now() - flushed_ >= std::chrono::seconds(1)) {
    Flush();
  }
}

void RecordWriter::Flush() {
  out_.flush();
  flushed_ = std::chrono::steady_clock::now();
}

}  // namespace faultline
