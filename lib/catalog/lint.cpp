#include <set>

#include "catalog/catalog.h"
#include "catalog/signatures.h"
#include "catalog/tables.h"
#include "state/state.h"

namespace faultline {
namespace {

using nlohmann::json;

const std::set<std::string> kTableKeys = {"schema",   "description",    "sources",    "macros",
                                          "products", "default_memory", "signatures", "classes",
                                          "xids",     "events",         "actions"};
const std::set<std::string> kSignatureKeys = {"id",       "description", "pattern",
                                              "source",   "examples",    "xid",
                                              "fallback", "identity",    "gpu_from_previous_line"};
const std::set<std::string> kSignatureRequired = {"id", "description", "pattern", "source",
                                                  "examples"};
const std::set<std::string> kClassKeys = {"id",
                                          "title",
                                          "class",
                                          "severity",
                                          "priority",
                                          "fallback",
                                          "carry_fix",
                                          "job_wide",
                                          "symptom_within_s",
                                          "supported_by",
                                          "contradicted_by",
                                          "symptom_of",
                                          "explanation",
                                          "mechanism",
                                          "symptoms",
                                          "confirm",
                                          "fix",
                                          "verify",
                                          "prevent",
                                          "monitor",
                                          "related",
                                          "missing_without_state",
                                          "missing_without_gpu",
                                          "missing_without_kernel_log",
                                          "source"};
// Everything `faultline explain` prints must be there.
const std::set<std::string> kClassRequired = {
    "id",          "title",     "class",    "severity", "priority", "supported_by",
    "explanation", "mechanism", "symptoms", "confirm",  "fix",      "verify",
    "prevent",     "monitor",   "related",  "source"};
const std::set<std::string> kConditionKeys = {"signature", "xid",   "unlisted", "where",
                                              "memory",    "state", "equals",   "at_least",
                                              "sum_with",  "trend", "note",     "weight"};

class Linter {
 public:
  Linter(const Catalog& catalog, std::vector<std::string>* problems)
      : catalog_(catalog), problems_(problems) {
    for (const auto& signature : catalog.signatures->signatures()) {
      signature_ids_.insert(signature->id);
    }
    // Events that code makes rather than a line signature (loss-spike) are declared by name.
    for (const faultline::Table& table : catalog.tables) {
      for (const json& name : table.doc.value("events", json::array())) {
        if (name.is_string()) signature_ids_.insert(name.get<std::string>());
      }
    }
  }

  void Table(const faultline::Table& table) {
    path_ = table.path;
    for (const auto& [key, value] : table.doc.items()) {
      if (!kTableKeys.contains(key)) Problem("table", "", "unknown key \"" + key + "\"");
    }
    for (const json& entry : table.doc.value("signatures", json::array())) Signature(entry);
    for (const json& entry : table.doc.value("classes", json::array())) Class(entry);
  }

 private:
  void Problem(const std::string& what, const std::string& id, const std::string& problem) {
    problems_->push_back(path_ + ": " + what + (id.empty() ? "" : " " + id) + ": " + problem);
  }

  void Keys(const json& entry, const std::string& what, const std::string& id,
            const std::set<std::string>& known, const std::set<std::string>& required) {
    for (const auto& [key, value] : entry.items()) {
      if (!known.contains(key)) Problem(what, id, "unknown key \"" + key + "\"");
    }
    for (const std::string& key : required) {
      if (!entry.contains(key)) Problem(what, id, "no \"" + key + "\"");
    }
  }

  void Signature(const json& entry) {
    const std::string id = entry.value("id", "?");
    Keys(entry, "signature", id, kSignatureKeys, kSignatureRequired);
    if (!seen_signatures_.insert(id).second) Problem("signature", id, "id defined twice");
    const json examples = entry.value("examples", json::object());
    if (examples.value("match", json::array()).empty()) {
      Problem("signature", id, "no example line that must match");
    }
    if (examples.value("no_match", json::array()).empty()) {
      Problem("signature", id, "no example line that must not match");
    }
  }

  void Class(const json& entry) {
    const std::string id = entry.value("id", "?");
    Keys(entry, "class", id, kClassKeys, kClassRequired);
    if (!seen_classes_.insert(id).second) Problem("class", id, "id defined twice");
    bool reachable = false;
    for (const json& condition : entry.value("supported_by", json::array())) {
      reachable |= Condition(id, condition);
    }
    if (!reachable) Problem("class", id, "no supporting condition can ever hold");
    for (const char* key : {"related", "symptom_of"}) {
      for (const json& other : entry.value(key, json::array())) {
        if (!other.is_string() || !catalog_.knowledge.find_class(other.get<std::string>())) {
          Problem("class", id, std::string(key) + " names an unknown class " + other.dump());
        }
      }
    }
  }

  // Whether the condition can hold; reports what makes it impossible.
  bool Condition(const std::string& id, const json& condition) {
    Keys(condition, "class", id, kConditionKeys, {});
    const std::string signature = condition.value("signature", "");
    if (!signature.empty() && !signature_ids_.contains(signature)) {
      Problem("class", id, "names an unknown signature \"" + signature + "\"");
      return false;
    }
    const std::string state = condition.value("state", "");
    if (!state.empty() && !is_state_field(state)) {
      Problem("class", id, "names an unknown state field \"" + state + "\"");
      return false;
    }
    return true;
  }

  const Catalog& catalog_;
  std::vector<std::string>* problems_;
  std::set<std::string> signature_ids_;
  std::set<std::string> seen_signatures_;
  std::set<std::string> seen_classes_;
  std::string path_;
};

}  // namespace

std::vector<std::string> lint_tables(const Catalog& catalog, size_t first) {
  std::vector<std::string> problems;
  Linter linter(catalog, &problems);
  for (size_t i = first; i < catalog.tables.size(); ++i) linter.Table(catalog.tables[i]);
  return problems;
}

}  // namespace faultline
