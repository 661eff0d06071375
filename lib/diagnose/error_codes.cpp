// CUDA, NVML and DCGM error codes and NVSwitch SXids read by the catalog's tables of NVIDIA's
// documented codes.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/diagnose.h"
#include "model/captures.h"
#include "model/text.h"

namespace faultline {

namespace {

// The capture an API error table reads, and the fields it sets.
struct ApiErrorFields {
  std::string_view named, code, name, meaning, kind;
};

// Decodes the error each event names; a line of an error-word fallback (Knowledge::
// unrecognised_signatures) that quotes a documented message whole names that error too.
void decode_api_errors(const Knowledge& knowledge, const std::vector<ApiError>& table,
                       const ApiErrorFields& fields, std::vector<Event>* events) {
  if (table.empty()) return;
  for (Event& event : *events) {
    const ApiError* error = nullptr;
    if (auto named = event.fields.find(std::string(fields.named)); named != event.fields.end()) {
      error = find_api_error(table, named->second);
    } else if (knowledge.unrecognised_signatures.contains(event.signature.str())) {
      error = find_quoted_api_error(table, event.evidence.text.str());
      if (error) event.fields.set(fields.named, error->message);
    }
    if (!error) continue;
    event.fields.set(fields.code, std::to_string(error->code));
    event.fields.set(fields.name, error->names.front());
    event.fields.set(fields.meaning, error->meaning);
    event.fields.set(fields.kind, class_kind_name(error->kind));
  }
}

}  // namespace

void decode_cuda_errors(const Knowledge& knowledge, std::vector<Event>* events) {
  decode_api_errors(knowledge, knowledge.cuda_errors,
                    {capture::kCudaError, capture::kCudaErrorCode, capture::kCudaErrorName,
                     capture::kCudaErrorMeaning, capture::kCudaErrorKind},
                    events);
}

void decode_nvml_errors(const Knowledge& knowledge, std::vector<Event>* events) {
  decode_api_errors(knowledge, knowledge.nvml_errors,
                    {capture::kNvmlError, capture::kNvmlErrorCode, capture::kNvmlErrorName,
                     capture::kNvmlErrorMeaning, capture::kNvmlErrorKind},
                    events);
}

void decode_dcgm_errors(const Knowledge& knowledge, std::vector<Event>* events) {
  if (knowledge.dcgm_errors.empty()) return;
  for (Event& event : *events) {
    auto named = event.fields.find(std::string(capture::kDcgmError));
    if (named == event.fields.end()) continue;
    // By name (DCGM_FR_...), or by number where a tool prints the code alone ("error code 4").
    auto error = knowledge.dcgm_errors.find(named->second);
    if (const std::optional<int> code = parse_number<int>(named->second)) {
      error = std::find_if(knowledge.dcgm_errors.begin(), knowledge.dcgm_errors.end(),
                           [&](const auto& entry) { return entry.second.code == *code; });
    }
    if (error == knowledge.dcgm_errors.end()) continue;
    const DcgmError& row = error->second;
    event.fields.set(capture::kDcgmError, row.name);
    event.fields.set(capture::kDcgmErrorCode, std::to_string(row.code));
    event.fields.set(capture::kDcgmErrorMessage, row.message);
    event.fields.set(capture::kDcgmErrorNextSteps, row.next_steps);
    event.fields.set(capture::kDcgmErrorSeverity, row.severity);
    event.fields.set(capture::kDcgmErrorKind, class_kind_name(row.kind));
  }
}

void decode_sxids(const Knowledge& knowledge, std::vector<Event>* events) {
  if (knowledge.sxids.empty()) return;
  for (Event& event : *events) {
    auto named = event.fields.find(std::string(capture::kSxid));
    if (named == event.fields.end()) continue;
    const std::optional<int> sxid = parse_number<int>(named->second);
    auto row = sxid ? knowledge.sxids.find(*sxid) : knowledge.sxids.end();
    if (row == knowledge.sxids.end()) continue;
    event.fields.set(capture::kSxidName, row->second.first);
    event.fields.set(capture::kSxidSeverity, row->second.second ? "Fatal" : "Non-fatal");
  }
}

}  // namespace faultline
