// The suggester's calibration on a corpus of cases (pipeline.h, calibrate_suggester).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "catalog/signatures.h"
#include "diagnose/diagnose.h"
#include "extract/extract.h"
#include "model/captures.h"
#include "pipeline/pipeline.h"

namespace faultline {
namespace {

namespace fs = std::filesystem;

bool healthy_case(const fs::path& expect) {
  std::ifstream in(expect);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return doc.is_object() && doc.value("max_severity", "") == "info";
}

}  // namespace

SuggesterCalibration calibrate_suggester(const std::string& corpus, const Catalog& catalog) {
  SuggesterCalibration out;
  std::vector<const Signature*> signatures;
  std::map<std::string, const Signature*, std::less<>> by_id;
  for (const auto& signature : catalog.signatures->signatures()) {
    signatures.push_back(signature.get());
    by_id.emplace(signature->id.str(), signature.get());
  }
  // The classes each signature supports: a suggestion of any of them is right.
  std::map<std::string, std::set<std::string>, std::less<>> classes_of;
  for (const FailureClass& failure : catalog.knowledge.classes) {
    for (const Condition& condition : failure.supported_by) {
      if (!condition.signature.empty()) classes_of[condition.signature].insert(failure.id);
    }
  }
  std::map<std::string, std::set<std::string>> lines_of;  // signature -> templates
  std::set<std::string> healthy_templates;
  std::vector<fs::path> cases;
  for (const fs::directory_entry& entry : fs::directory_iterator(corpus)) {
    if (entry.is_directory() && fs::exists(entry.path() / "expect.json")) {
      cases.push_back(entry.path());
    }
  }
  std::sort(cases.begin(), cases.end());
  for (const fs::path& folder : cases) {
    std::vector<std::string> inputs;
    for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
      if (entry.is_regular_file() && entry.path().filename() != "expect.json") {
        inputs.push_back(entry.path().string());
      }
    }
    std::sort(inputs.begin(), inputs.end());
    const Analysis analysis = analyze(inputs, catalog);
    const bool healthy = healthy_case(folder / "expect.json");
    ++out.cases;
    out.healthy_cases += healthy;
    for (const Event& event : analysis.events) {
      if (event.fields.contains(std::string(capture::kTemplate))) {
        if (healthy) healthy_templates.insert(line_template(event.evidence.text.str()));
        continue;
      }
      auto signature = by_id.find(event.signature.str());
      if (signature == by_id.end() || !classes_of.contains(event.signature.str())) continue;
      const Signature& s = *signature->second;
      if (s.benign || s.identity || s.context || s.boot || s.unrecognised) continue;
      std::set<std::string>& lines = lines_of[std::string(event.signature.str())];
      if (lines.size() < SuggesterCalibration::kLinesPerSignature) {
        lines.insert(line_template(event.evidence.text.str()));
      }
    }
  }
  out.signatures = lines_of.size();
  for (const auto& [signature, lines] : lines_of) out.lines += lines.size();
  out.healthy_lines = healthy_templates.size();

  const Suggester suggester(signatures, catalog.knowledge);
  for (int step = 6; step <= 16; ++step) {
    SuggesterCalibration::Point point;
    point.threshold = step * 0.05;
    for (const auto& [signature, lines] : lines_of) {
      const std::set<std::string>& right = classes_of[signature];
      for (const std::string& line : lines) {
        const std::optional<Suggestion> nearest =
            suggester.Suggest(line, point.threshold, signature);
        if (!nearest) {
          ++point.none;
        } else if (right.contains(nearest->failure->id)) {
          ++point.right;
        } else {
          ++point.wrong;
        }
      }
    }
    for (const std::string& line : healthy_templates) {
      point.healthy_suggested += suggester.Suggest(line, point.threshold).has_value();
    }
    out.sweep.push_back(point);
  }
  return out;
}

}  // namespace faultline
