// CUDA and DCGM error codes and NVSwitch SXids read by the catalog's tables of NVIDIA's
// documented codes.
#include <optional>
#include <string>
#include <vector>

#include "diagnose/diagnose.h"
#include "model/captures.h"
#include "model/text.h"

namespace faultline {

void decode_cuda_errors(const Knowledge& knowledge, std::vector<Event>* events) {
  if (knowledge.cuda_errors.empty()) return;
  for (Event& event : *events) {
    auto named = event.fields.find(std::string(capture::kCudaError));
    if (named == event.fields.end()) continue;
    const CudaError* error = knowledge.find_cuda_error(named->second);
    if (!error) continue;
    event.fields.set(capture::kCudaErrorCode, std::to_string(error->code));
    event.fields.set(capture::kCudaErrorName, error->runtime);
    event.fields.set(capture::kCudaErrorMeaning, error->meaning);
    event.fields.set(capture::kCudaErrorKind, class_kind_name(error->kind));
  }
}

void decode_dcgm_errors(const Knowledge& knowledge, std::vector<Event>* events) {
  if (knowledge.dcgm_errors.empty()) return;
  for (Event& event : *events) {
    auto named = event.fields.find(std::string(capture::kDcgmError));
    if (named == event.fields.end()) continue;
    auto error = knowledge.dcgm_errors.find(named->second);
    if (error == knowledge.dcgm_errors.end()) continue;
    const DcgmError& row = error->second;
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
