#include "diagnose/classes.h"

#include <re2/re2.h>

#include <array>
#include <map>

namespace faultline {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 4> kSeverityNames = {"info", "warning", "error", "critical"};

std::string text(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<std::string> texts(const json& object, const char* key) {
  std::vector<std::string> out;
  auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return out;
  for (const json& item : *it) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

bool parse_condition(const json& entry, bool needs_weight, Condition* condition,
                     std::string* error) {
  if (!entry.is_object()) {
    *error = "a condition must be an object";
    return false;
  }
  condition->signature = text(entry, "signature");
  condition->state = text(entry, "state");
  condition->memory = text(entry, "memory");
  condition->equals = text(entry, "equals");
  condition->sum_with = text(entry, "sum_with");
  condition->note = text(entry, "note");
  if (auto it = entry.find("xid"); it != entry.end() && it->is_number_integer()) {
    condition->xid = it->get<int>();
  }
  if (auto it = entry.find("at_least"); it != entry.end() && it->is_number()) {
    condition->at_least = it->get<double>();
  }
  if (auto it = entry.find("weight"); it != entry.end() && it->is_number()) {
    condition->weight = it->get<double>();
  }
  if (condition->signature.empty() == condition->state.empty()) {
    *error = "a condition names either a \"signature\" or a \"state\"";
    return false;
  }
  if (!condition->state.empty() && condition->equals.empty() && !condition->at_least) {
    *error = "a state condition needs \"equals\" or \"at_least\"";
    return false;
  }
  if (needs_weight && (condition->weight <= 0 || condition->weight > 1)) {
    *error = "a supporting condition needs a \"weight\" in (0, 1]";
    return false;
  }
  return true;
}

bool parse_conditions(const json& entry, const char* key, bool needs_weight,
                      std::vector<Condition>* out, std::string* error) {
  auto it = entry.find(key);
  if (it == entry.end()) return true;
  if (!it->is_array()) {
    *error = std::string("\"") + key + "\" must be an array";
    return false;
  }
  for (const json& item : *it) {
    Condition condition;
    if (!parse_condition(item, needs_weight, &condition, error)) return false;
    out->push_back(std::move(condition));
  }
  return true;
}

bool parse_class(const json& entry, FailureClass* c, std::string* error) {
  c->id = text(entry, "id");
  c->title = text(entry, "title");
  c->kind = text(entry, "class");
  if (c->id.empty() || c->title.empty()) {
    *error = "needs an \"id\" and a \"title\"";
    return false;
  }
  if (c->kind != "hardware" && c->kind != "software" && c->kind != "unknown") {
    *error = "\"class\" must be hardware, software or unknown";
    return false;
  }
  auto severity = parse_severity(text(entry, "severity"));
  if (!severity) {
    *error = "\"severity\" must be info, warning, error or critical";
    return false;
  }
  c->severity = *severity;
  if (auto it = entry.find("priority"); it != entry.end() && it->is_number_integer()) {
    c->priority = it->get<int>();
  }
  if (!parse_conditions(entry, "supported_by", true, &c->supported_by, error) ||
      !parse_conditions(entry, "contradicted_by", false, &c->contradicted_by, error)) {
    return false;
  }
  if (c->supported_by.empty()) {
    *error = "\"supported_by\" names no evidence";
    return false;
  }
  c->symptom_of = texts(entry, "symptom_of");
  c->explanation = text(entry, "explanation");
  c->fix = texts(entry, "fix");
  if (auto it = entry.find("verify"); it != entry.end() && it->is_array()) {
    for (const json& step : *it) {
      if (step.is_object()) c->verify.push_back({text(step, "command"), text(step, "expect")});
    }
  }
  c->missing_without_state = text(entry, "missing_without_state");
  c->missing_without_gpu = text(entry, "missing_without_gpu");
  c->source = text(entry, "source");
  return true;
}

}  // namespace

std::string_view severity_name(Severity severity) {
  return kSeverityNames[static_cast<size_t>(severity)];
}

std::optional<Severity> parse_severity(std::string_view name) {
  for (size_t i = 0; i < kSeverityNames.size(); ++i) {
    if (kSeverityNames[i] == name) return static_cast<Severity>(i);
  }
  return std::nullopt;
}

bool load_knowledge(const std::vector<Table>& tables, Knowledge* knowledge, std::string* error) {
  std::map<std::string, size_t> index_of;
  for (const Table& table : tables) {
    const json& doc = table.doc;
    if (auto it = doc.find("classes"); it != doc.end()) {
      if (!it->is_array()) {
        *error = table.path + ": \"classes\" must be an array";
        return false;
      }
      for (const json& entry : *it) {
        FailureClass c;
        std::string reason;
        if (!entry.is_object() || !parse_class(entry, &c, &reason)) {
          const std::string id = entry.is_object() ? text(entry, "id") : "";
          *error = table.path + ": class " + (id.empty() ? "?" : id) + ": " +
                   (reason.empty() ? "must be an object" : reason);
          return false;
        }
        auto [slot, inserted] = index_of.emplace(c.id, knowledge->classes.size());
        if (inserted) {
          knowledge->classes.push_back(std::move(c));
        } else {
          knowledge->classes[slot->second] = std::move(c);
        }
      }
    }
    if (auto it = doc.find("products"); it != doc.end() && it->is_array()) {
      for (const json& entry : *it) {
        ProductRule rule{text(entry, "pattern"), text(entry, "memory")};
        if (rule.pattern.empty() || rule.memory.empty() || !RE2(rule.pattern).ok()) {
          *error = table.path + ": products: each needs a valid \"pattern\" and a \"memory\"";
          return false;
        }
        knowledge->products.push_back(std::move(rule));
      }
    }
    if (const std::string memory = text(doc, "default_memory"); !memory.empty()) {
      knowledge->default_memory = memory;
    }
  }
  return true;
}

}  // namespace faultline
