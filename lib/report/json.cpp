#include "report/json.h"

#include <algorithm>

#include "report/common.h"
#include "report/report.h"

namespace faultline {
namespace {

using nlohmann::json;

json evidence_json(const Evidence& evidence) {
  return {{"path", evidence.path},
          {"line", evidence.line},
          {"time", time_or_null(evidence.time)},
          {"text", evidence.text},
          {"signature", text_or_null(evidence.signature)}};
}

// {"cut": [{"path", "reason", "cut_lines"}], "filter_note": null or the filters' note,
//  "not_understood": [path], "unread": [{"path", "reason"}]}
json coverage_json(const Coverage& coverage) {
  json unread = json::array();
  for (const UnreadInput& input : coverage.unread) {
    unread.push_back({{"path", input.path}, {"reason", input.reason}});
  }
  json cut = json::array();
  for (const Coverage::Cut& input : coverage.cut) {
    cut.push_back({{"path", input.path}, {"reason", input.reason}, {"cut_lines", input.cut_lines}});
  }
  return {
      {"cut", cut},
      {"filter_note", coverage.filter_note.empty() ? json(nullptr) : json(coverage.filter_note)},
      {"not_understood", coverage.not_understood},
      {"unread", unread}};
}

json subject_json(const Diagnosis& diagnosis) {
  const GpuRef& gpu = diagnosis.gpu;
  return {{"host", text_or_null(diagnosis.host)},
          {"gpu", text_or_null(gpu.pci)},
          {"gpu_index", gpu.index ? json(*gpu.index) : json(nullptr)},
          {"gpu_uuid", text_or_null(gpu.uuid)},
          {"gpu_serial", text_or_null(gpu.serial)},
          {"product", text_or_null(gpu.product)},
          {"ranks", diagnosis.ranks}};
}

json diagnosis_entry(const Diagnosis& diagnosis) {
  const FailureClass& failure = *diagnosis.failure;
  json evidence = json::array();
  for (const Evidence& item : diagnosis.evidence) evidence.push_back(evidence_json(item));
  json verify = json::array();
  for (const VerifyStep& step : diagnosis.verify) {
    verify.push_back({{"command", step.command}, {"expect", step.expect}});
  }
  return {{"position", diagnosis.position},
          {"id", failure.id},
          {"title", failure.title},
          {"class", class_kind_name(diagnosis.kind)},
          {"severity", severity_name(diagnosis.severity)},
          {"confidence", diagnosis.confidence},
          {"role", role_name(diagnosis.role)},
          {"subject", subject_json(diagnosis)},
          {"first_seen", time_or_null(diagnosis.first_seen)},
          {"last_seen", time_or_null(diagnosis.last_seen)},
          {"occurrences", diagnosis.occurrences},
          {"caused_by", diagnosis.caused_by ? json(*diagnosis.caused_by) : json(nullptr)},
          {"evidence", evidence},
          {"fix", diagnosis.fix},
          {"verify", verify},
          {"missing", diagnosis.missing},
          {"explanation", failure.explanation},
          {"source", text_or_null(failure.source)},
          {"notes", diagnosis.notes}};
}

// Writes JSON text printed on its own as it reads `indent` deeper inside a document. JSON text
// holds a newline only between its tokens (strings escape theirs).
void put_nested(std::string_view text, std::string_view indent, std::ostream& out) {
  size_t newline = text.find('\n');
  for (; newline != std::string_view::npos; newline = text.find('\n')) {
    out << text.substr(0, newline + 1) << indent;
    text.remove_prefix(newline + 1);
  }
  out << text;
}

// Writes `"name": [...],`, a member of the top-level object, as dump_json(document, 2) would
// print it, one element at a time: a fleet's document is never held whole.
template <typename Items, typename ToJson>
void put_array_member(std::string_view name, const Items& items, const ToJson& to_json,
                      std::ostream& out) {
  out << "  \"" << name << "\": [";
  std::string_view separator = "\n    ";
  for (const auto& item : items) {
    out << separator;
    put_nested(dump_json(to_json(item), 2), "    ", out);
    separator = ",\n    ";
  }
  out << (items.empty() ? "],\n" : "\n  ],\n");
}

}  // namespace

void render_json(const Analysis& analysis, std::ostream& out) {
  bool hardware_fault = false;
  json initiating = nullptr;
  for (const Diagnosis& diagnosis : analysis.diagnoses) {
    hardware_fault |=
        diagnosis.kind == ClassKind::kHardware && diagnosis.severity >= Severity::kError;
    if (diagnosis.role == Role::kInitiating && initiating.is_null())
      initiating = diagnosis.position;
  }
  // The members in the order of the keys, as nlohmann::json prints an object.
  out << "{\n  \"coverage\": ";
  put_nested(dump_json(coverage_json(coverage_of(analysis)), 2), "  ", out);
  out << ",\n";
  put_array_member("diagnoses", analysis.diagnoses, diagnosis_entry, out);
  put_array_member("events", analysis.events, event_record, out);
  put_array_member("inputs", analysis.inputs, input_json, out);
  out << "  \"schema\": \"faultline/diagnosis/v1\",\n  \"summary\": ";
  put_nested(dump_json({{"hardware_fault", hardware_fault}, {"initiating", initiating}}, 2), "  ",
             out);
  out << ",\n  \"warnings\": ";
  put_nested(dump_json(analysis.warnings, 2), "  ", out);
  out << "\n}\n";
}

void render_jsonl(const Analysis& analysis, std::ostream& out) {
  for (const InputSummary& input : analysis.inputs) {
    out << dump_json(input_record(input), -1) << "\n";
  }
  // An input that could not be opened has no "input" record; readers skip records they do not
  // know (extract/records.cpp).
  for (const UnreadInput& input : analysis.unread) {
    out << dump_json(unread_record(input), -1) << "\n";
  }
  for (const GpuState& state : analysis.states) {
    out << dump_json(state_record(state), -1) << "\n";
  }
  for (const LossLogger& logger : analysis.loss_loggers) {
    out << dump_json(series_record(logger), -1) << "\n";
  }
  for (const Event& event : analysis.events) out << dump_json(event_record(event), -1) << "\n";
}

void render_error_json(std::string_view message, int exit_code, std::ostream& out) {
  const json error = {
      {"schema", "faultline/error/v1"}, {"error", message}, {"exit_code", exit_code}};
  out << dump_json(error, -1) << "\n";
}

std::string dump_json(const json& value, int indent) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace faultline
