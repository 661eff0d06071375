#include <fmt/format.h>

#include <cmath>

#include "catalog/signatures.h"
#include "report/json.h"
#include "report/report.h"

namespace faultline {
namespace {

void section(std::string_view title, const std::string& text, std::ostream& out) {
  if (!text.empty()) out << "\n" << title << "\n  " << text << "\n";
}

void section(std::string_view title, const std::vector<std::string>& items, std::ostream& out) {
  if (items.empty()) return;
  out << "\n" << title << "\n";
  for (const std::string& item : items) out << "  - " << item << "\n";
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
  return out;
}

// Whether a signature stands for `xid`: it says so, or its examples capture that number.
bool signature_has_xid(const Signature& signature, int xid) {
  if (signature.xid == xid) return true;
  for (const SignatureExample& example : signature.must_match) {
    for (const auto& [name, value] : example.fields) {
      if (name == "xid" && value == std::to_string(xid)) return true;
    }
  }
  return false;
}

bool class_handles_xid(const FailureClass& failure, const SignatureSet& signatures, int xid) {
  for (const Condition& condition : failure.supported_by) {
    if (std::find(condition.xids.begin(), condition.xids.end(), xid) != condition.xids.end()) {
      return true;
    }
    for (const auto& signature : signatures.signatures()) {
      if (signature->id == condition.signature && signature_has_xid(*signature, xid)) return true;
    }
  }
  return false;
}

}  // namespace

void render_class_entry(const FailureClass& failure, std::ostream& out) {
  out << failure.id << " — " << failure.title << "\n";
  out << fmt::format("  {} · severity {} · from {}\n", class_kind_name(failure.kind),
                     severity_name(failure.severity), failure.table);
  section("What it is", failure.explanation, out);
  section("Mechanism", failure.mechanism, out);
  section("Symptoms", failure.symptoms, out);
  section("How to confirm", failure.confirm, out);
  section("Fix", failure.fix, out);
  if (!failure.verify.empty()) {
    out << "\nVerify\n";
    for (const VerifyStep& step : failure.verify) {
      out << "  $ " << step.command << "\n";
      if (!step.expect.empty()) out << "    expect: " << step.expect << "\n";
    }
  }
  section("Prevent", failure.prevent, out);
  section("Monitor", failure.monitor, out);
  if (!failure.related.empty()) section("Related", join(failure.related, ", "), out);
  if (!failure.symptom_of.empty()) {
    section("Collateral to", join(failure.symptom_of, ", "), out);
  }
  section("Source", failure.source, out);
}

void render_xid_entry(int xid, const Catalog& catalog, std::ostream& out) {
  const XidEntry* entry = catalog.knowledge.find_xid(xid);
  if (entry) {
    out << fmt::format("Xid {} — {}{}\n", xid, entry->title,
                       entry->name.empty() ? "" : " (" + entry->name + ")");
    section("What it means", entry->meaning, out);
    if (!entry->applies_to.empty()) section("GPUs", join(entry->applies_to, ", "), out);
    const auto action = [&](const std::string& code) {
      auto it = catalog.knowledge.actions.find(code);
      return it == catalog.knowledge.actions.end() ? code : code + ": " + it->second.meaning;
    };
    if (!entry->immediate_action.empty()) {
      section("NVIDIA's immediate action", action(entry->immediate_action), out);
    }
    if (!entry->investigatory_action.empty()) {
      section("NVIDIA's investigatory action", action(entry->investigatory_action), out);
    }
    std::string cause = entry->cause;
    if (!entry->legacy_causes.empty()) {
      cause += " (legacy cause matrix: " + join(entry->legacy_causes, ", ") + ")";
    }
    section("Usual cause", cause, out);
    section("Source", entry->source, out);
  } else {
    out << fmt::format("Xid {} is not in NVIDIA's Xid catalog as faultline knows it.\n", xid);
  }
  for (const FailureClass& failure : catalog.knowledge.classes) {
    if (!class_handles_xid(failure, *catalog.signatures, xid)) continue;
    out << "\n────────\n";
    render_class_entry(failure, out);
  }
}

nlohmann::json catalog_json(const Catalog& catalog) {
  nlohmann::json signatures = nlohmann::json::array();
  for (const auto& signature : catalog.signatures->signatures()) {
    signatures.push_back({{"id", signature->id},
                          {"table", signature->table},
                          {"description", signature->description},
                          {"pattern", signature->pattern},
                          {"source", signature->source}});
  }
  nlohmann::json classes = nlohmann::json::array();
  for (const FailureClass& failure : catalog.knowledge.classes) {
    classes.push_back({{"id", failure.id},
                       {"table", failure.table},
                       {"title", failure.title},
                       {"class", class_kind_name(failure.kind)},
                       {"severity", severity_name(failure.severity)},
                       {"source", failure.source}});
  }
  return {{"signatures", signatures}, {"classes", classes}};
}

}  // namespace faultline

namespace faultline {

void render_catalog_json(const Catalog& catalog, std::ostream& out) {
  out << dump_json(catalog_json(catalog), 2) << "\n";
}

void render_calibration(const SuggesterCalibration& calibration, std::ostream& out) {
  out << fmt::format(
      "{} cases ({} healthy); {} lines of {} signatures, each looked up without its own "
      "signature's examples; {} unrecognised lines of the healthy cases.\n\n",
      calibration.cases, calibration.healthy_cases, calibration.lines, calibration.signatures,
      calibration.healthy_lines);
  out << "| threshold | assigned back to their class | to another class | to none | "
         "healthy lines given a suggestion |\n|---|---|---|---|---|\n";
  const auto share = [&](size_t n) {
    return calibration.lines == 0 ? std::string("0")
                                  : fmt::format("{} ({:.0f}%)", n,
                                                100.0 * static_cast<double>(n) /
                                                    static_cast<double>(calibration.lines));
  };
  for (const SuggesterCalibration::Point& point : calibration.sweep) {
    const bool used = std::abs(point.threshold - Suggester::kThreshold) < 1e-9;
    out << fmt::format("| {:.2f}{} | {} | {} | {} | {} |\n", point.threshold, used ? " (used)" : "",
                       share(point.right), share(point.wrong), share(point.none),
                       point.healthy_suggested);
  }
}

}  // namespace faultline
