#include "report/json.h"

#include <algorithm>

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
          {"class", class_kind_name(failure.kind)},
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

}  // namespace

json diagnosis_json(const Analysis& analysis) {
  json inputs = json::array();
  for (const InputSummary& input : analysis.inputs) inputs.push_back(input_json(input));
  json diagnoses = json::array();
  bool hardware_fault = false;
  json initiating = nullptr;
  for (const Diagnosis& diagnosis : analysis.diagnoses) {
    diagnoses.push_back(diagnosis_entry(diagnosis));
    hardware_fault |=
        diagnosis.failure->kind == ClassKind::kHardware && diagnosis.severity >= Severity::kError;
    if (diagnosis.role == Role::kInitiating && initiating.is_null())
      initiating = diagnosis.position;
  }
  json events = json::array();
  for (const Event& event : analysis.events) events.push_back(event_record(event));
  return {{"schema", "faultline/diagnosis/v1"},
          {"inputs", inputs},
          {"warnings", analysis.warnings},
          {"diagnoses", diagnoses},
          {"events", events},
          {"summary", {{"hardware_fault", hardware_fault}, {"initiating", initiating}}}};
}

void render_json(const Analysis& analysis, std::ostream& out) {
  out << dump_json(diagnosis_json(analysis), 2) << "\n";
}

void render_jsonl(const Analysis& analysis, std::ostream& out) {
  for (const InputSummary& input : analysis.inputs) {
    out << dump_json(input_record(input), -1) << "\n";
  }
  for (const GpuState& state : analysis.states) {
    out << dump_json(state_record(state), -1) << "\n";
  }
  for (const LossLogger& logger : analysis.loss_loggers) {
    out << dump_json(series_record(logger), -1) << "\n";
  }
  for (const Event& event : analysis.events) out << dump_json(event_record(event), -1) << "\n";
}

std::string dump_json(const json& value, int indent) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace faultline
