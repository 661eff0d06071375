// Ranking hypotheses: which failure classes the evidence supports, for which GPU, how surely.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "correlate/correlate.h"
#include "diagnose/classes.h"

namespace faultline {

struct Diagnosis {
  int position = 0;  // 1-based rank
  const FailureClass* failure = nullptr;
  double confidence = 0;
  std::string role = "standalone";  // "initiating", "collateral" or "standalone"
  std::string host;
  GpuRef gpu;
  std::vector<int> ranks;
  Timestamp first_seen;
  Timestamp last_seen;
  uint64_t occurrences = 0;
  std::optional<int> caused_by;  // position of the initiating diagnosis
  std::vector<Evidence> evidence;
  std::vector<std::string> fix;  // templates filled in for this GPU
  std::vector<VerifyStep> verify;
  std::vector<std::string> missing;
  std::vector<std::string> notes;  // how the verdict was reached, where that is not obvious
};

// Builds the ranked diagnoses. Each GPU gets at most one: the most severe, most specific class
// its evidence supports, with the evidence of the other classes it fits as support.
std::vector<Diagnosis> diagnose(const Correlation& correlation, const Knowledge& knowledge);

}  // namespace faultline
