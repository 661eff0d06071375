// CUDA errors read by the catalog's table of NVIDIA's documented error codes.
#include <string>
#include <vector>

#include "diagnose/diagnose.h"
#include "model/captures.h"

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

}  // namespace faultline
