#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <set>

#include "catalog/catalog.h"
#include "catalog/schema.h"
#include "catalog/tables.h"
#include "model/text.h"

namespace faultline {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 3> kClassKindNames = {"hardware", "software", "unknown"};
constexpr std::array<std::string_view, 4> kSeverityNames = {"info", "warning", "error", "critical"};
// Catalog classes rank below every written class of the same severity.
constexpr int kCatalogPriority = 3;

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

bool flag(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

// "xid": 74 or "xid": [144, 145].
bool parse_xids(const json& entry, std::vector<int>* xids, std::string* error) {
  auto it = entry.find("xid");
  if (it == entry.end()) return true;
  if (it->is_number_integer()) {
    xids->push_back(it->get<int>());
    return true;
  }
  if (it->is_array()) {
    for (const json& xid : *it) {
      if (!xid.is_number_integer()) break;
      xids->push_back(xid.get<int>());
    }
    if (xids->size() == it->size() && !xids->empty()) return true;
  }
  *error = "\"xid\" must be a number or a list of numbers";
  return false;
}

// "where"/"where_not": each captured field maps to a value or a list of values.
bool parse_field_values(const json& entry, const char* key,
                        std::map<std::string, std::vector<std::string>>* out, std::string* error) {
  auto it = entry.find(key);
  if (it == entry.end()) return true;
  const std::string problem =
      fmt::format("\"{}\" must map captured fields to a value or a list of values", key);
  if (!it->is_object()) {
    *error = problem;
    return false;
  }
  for (const auto& [field, value] : it->items()) {
    std::vector<std::string>& values = (*out)[field];
    for (const json& one : value.is_array() ? value : json::array({value})) {
      if (!one.is_string()) {
        *error = problem;
        return false;
      }
      values.push_back(one.get<std::string>());
    }
    if (values.empty()) {
      *error = problem;
      return false;
    }
  }
  return true;
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
  condition->trend = text(entry, "trend");
  if (!parse_field_values(entry, "where", &condition->where, error) ||
      !parse_field_values(entry, "where_not", &condition->where_not, error)) {
    return false;
  }
  condition->unlisted = flag(entry, "unlisted");
  condition->unaccounted = flag(entry, "unaccounted");
  if (!parse_xids(entry, &condition->xids, error)) return false;
  if (auto it = entry.find("at_least"); it != entry.end() && it->is_number()) {
    condition->at_least = it->get<double>();
  }
  if (auto it = entry.find("weight"); it != entry.end() && it->is_number()) {
    condition->weight = it->get<double>();
  }
  if (entry.contains("severity")) {
    condition->severity = parse_severity(text(entry, "severity"));
    if (!condition->severity) {
      *error = R"(a condition's "severity" must be info, warning, error or critical)";
      return false;
    }
  }
  const bool about_events = !condition->signature.empty() || !condition->xids.empty() ||
                            condition->unlisted || condition->unaccounted;
  if (about_events == !condition->state.empty()) {
    *error = R"(a condition names either events ("signature", "xid") or a "state")";
    return false;
  }
  if (!condition->trend.empty() && condition->trend != "rising" && condition->trend != "falling") {
    *error = "\"trend\" must be rising or falling";
    return false;
  }
  if (!condition->state.empty() && condition->equals.empty() && !condition->at_least &&
      condition->trend.empty()) {
    *error = R"(a state condition needs "equals", "at_least" or "trend")";
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
  if (auto missing =
          first_missing(entry, catalog_internal::kClassSchema, catalog_internal::Need::kToLoad)) {
    *error = "no \"" + *missing + "\"";
    return false;
  }
  c->id = text(entry, "id");
  c->title = text(entry, "title");

  if (c->id.empty() || c->title.empty()) {
    *error = R"(needs an "id" and a "title")";
    return false;
  }
  const std::optional<ClassKind> kind = parse_class_kind(text(entry, "class"));
  if (!kind) {
    *error = "\"class\" must be hardware, software or unknown";
    return false;
  }
  c->kind = *kind;
  auto severity = parse_severity(text(entry, "severity"));
  if (!severity) {
    *error = "\"severity\" must be info, warning, error or critical";
    return false;
  }
  c->severity = *severity;
  if (auto it = entry.find("priority"); it != entry.end() && it->is_number_integer()) {
    c->priority = it->get<int>();
  }
  c->fallback = flag(entry, "fallback");
  c->last_resort = flag(entry, "last_resort");
  c->carry_fix = flag(entry, "carry_fix");
  c->job_wide = flag(entry, "job_wide");
  c->per_rank = flag(entry, "per_rank");
  c->reduced_note = text(entry, "reduced_note");
  c->unplaced_note = text(entry, "unplaced_note");
  if (auto it = entry.find("symptom_within_s"); it != entry.end()) {
    if (!it->is_number() || it->get<double>() < 0) {
      *error = "\"symptom_within_s\" must be a number of seconds";
      return false;
    }
    c->symptom_within = it->get<double>();
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
  c->consequence_of = texts(entry, "consequence_of");
  c->explanation = text(entry, "explanation");
  c->fix = texts(entry, "fix");
  if (auto it = entry.find("verify"); it != entry.end() && it->is_array()) {
    for (const json& step : *it) {
      if (step.is_object()) c->verify.push_back({text(step, "command"), text(step, "expect")});
    }
  }
  c->missing_without_state = text(entry, "missing_without_state");
  c->missing_without_gpu = text(entry, "missing_without_gpu");
  c->missing_without_kernel_log = text(entry, "missing_without_kernel_log");
  c->source = text(entry, "source");
  c->mechanism = text(entry, "mechanism");
  c->symptoms = texts(entry, "symptoms");
  c->confirm = texts(entry, "confirm");
  c->prevent = texts(entry, "prevent");
  c->monitor = texts(entry, "monitor");
  c->related = texts(entry, "related");
  return true;
}

bool parse_xid_entry(const json& entry, XidEntry* xid, std::string* error) {
  auto number = entry.find("xid");
  if (number == entry.end() || !number->is_number_integer()) {
    *error = "an Xid entry needs a number \"xid\"";
    return false;
  }
  xid->xid = number->get<int>();
  xid->name = text(entry, "name");
  xid->title = text(entry, "title");
  xid->meaning = text(entry, "meaning");
  xid->applies_to = texts(entry, "applies_to");
  xid->immediate_action = text(entry, "immediate_action");
  xid->investigatory_action = text(entry, "investigatory_action");
  xid->cause = text(entry, "cause");
  xid->legacy_causes = texts(entry, "legacy_causes");
  xid->source = text(entry, "source");
  if (xid->title.empty()) {
    *error = "Xid " + std::to_string(xid->xid) + " needs a \"title\"";
    return false;
  }
  return true;
}

// One row of "nvlink5_decode"; false and *error when it is malformed.
bool parse_nvlink5_row(const json& entry, Nvlink5Decode* row, std::string* error) {
  constexpr std::array<std::string_view, 3> kSeverities = {"Fatal", "Non-fatal", "Link Fatal"};
  const auto known_severity = [&](const std::string& severity) {
    return std::find(kSeverities.begin(), kSeverities.end(), severity) != kSeverities.end();
  };
  if (!entry.is_object()) {
    *error = "each row must be an object";
    return false;
  }
  const auto xid = entry.find("xid");
  row->xid = xid != entry.end() && xid->is_number_integer() ? xid->get<int>() : 0;
  row->unit = text(entry, "unit");
  row->action = text(entry, "action");
  row->severity = text(entry, "severity");
  const std::string where = "row " + std::to_string(row->xid) + " " + row->unit + ": ";
  if (row->xid < 144 || row->xid > 150 || row->unit.empty() || row->action.empty()) {
    *error = where + R"(needs "xid" (144 to 150), "unit" and "action")";
    return false;
  }
  if (!known_severity(row->severity)) {
    *error = where + R"("severity" must be "Fatal", "Non-fatal" or "Link Fatal")";
    return false;
  }
  if (entry.contains("error_status")) {
    row->error_status = parse_hex32(text(entry, "error_status"));
    if (!row->error_status) {
      *error = where + R"("error_status" must be a hex word like "0x00000004")";
      return false;
    }
  }
  if (auto it = entry.find("link_down_reason"); it != entry.end()) {
    if (!it->is_number_unsigned() || it->get<uint32_t>() > 63) {
      *error = where + R"("link_down_reason" must be a number from 0 to 63 (intrInfo bits 25:20))";
      return false;
    }
    row->link_down_reason = it->get<uint32_t>();
  }
  if (auto it = entry.find("action2"); it != entry.end()) {
    Nvlink5Decode::Promotion promotion;
    if (it->is_object()) {
      promotion.intr_info_v1 = parse_hex32(text(*it, "intr_info_v1")).value_or(0);
      promotion.intr_info_v2 = parse_hex32(text(*it, "intr_info_v2")).value_or(0);
      promotion.action = text(*it, "action");
      promotion.severity = text(*it, "severity");
    }
    if (promotion.intr_info_v1 == 0 || promotion.intr_info_v2 == 0 || promotion.action.empty() ||
        !known_severity(promotion.severity)) {
      *error =
          where +
          R"("action2" needs "intr_info_v1" and "intr_info_v2" (nonzero hex), "action" and a "severity")";
      return false;
    }
    row->action2 = std::move(promotion);
  }
  return true;
}

// Calls `take(entry, number)` for each row of the table's code list `key` ("cuda_errors",
// "nvml_errors", "dcgm_errors", "sxids"): an object with a whole `number_key` and a text
// `name_key`. False and *error if the list or a row is malformed.
template <typename Take>
bool for_each_code_row(const Table& table, const char* key, const char* number_key,
                       const char* name_key, Take take, std::string* error) {
  auto it = table.doc.find(key);
  if (it == table.doc.end()) return true;
  if (!it->is_array()) {
    *error = fmt::format(R"({}: "{}" must be an array)", table.path, key);
    return false;
  }
  for (const json& entry : *it) {
    const auto code = entry.is_object() ? entry.find(number_key) : entry.end();
    if (code == entry.end() || !code->is_number_integer() || text(entry, name_key).empty()) {
      *error = fmt::format(R"({}: {}: each needs a "{}" and a "{}")", table.path, key, number_key,
                           name_key);
      return false;
    }
    take(entry, code->get<int>());
  }
  return true;
}

bool load_catalog_part(const Table& table, Knowledge* knowledge, std::string* error) {
  const json& doc = table.doc;
  const auto take_dcgm = [&](const json& entry, int code) {
    const DcgmError row{code,
                        text(entry, "name"),
                        text(entry, "message"),
                        text(entry, "next_steps"),
                        text(entry, "severity"),
                        parse_class_kind(text(entry, "kind")).value_or(ClassKind::kUnknown)};
    knowledge->dcgm_errors[row.name] = row;
    if (auto aliases = entry.find("aliases"); aliases != entry.end() && aliases->is_array()) {
      for (const json& alias : *aliases) {
        if (alias.is_string()) knowledge->dcgm_errors[alias.get<std::string>()] = row;
      }
    }
  };
  // A row of "cuda_errors" or "nvml_errors": its name keys, then its aliases.
  const auto api_error = [&](const json& entry, int code, std::initializer_list<const char*> keys) {
    ApiError row{code,
                 {},
                 text(entry, "message"),
                 text(entry, "meaning"),
                 parse_class_kind(text(entry, "kind")).value_or(ClassKind::kUnknown)};
    for (const char* key : keys) {
      if (std::string name = text(entry, key); !name.empty()) row.names.push_back(std::move(name));
    }
    if (auto aliases = entry.find("aliases"); aliases != entry.end() && aliases->is_array()) {
      for (const json& alias : *aliases) {
        if (alias.is_string()) row.names.push_back(alias.get<std::string>());
      }
    }
    return row;
  };
  const auto take_cuda = [&](const json& entry, int code) {
    knowledge->cuda_errors.push_back(api_error(entry, code, {"runtime", "driver"}));
  };
  const auto take_nvml = [&](const json& entry, int code) {
    knowledge->nvml_errors.push_back(api_error(entry, code, {"name"}));
  };
  const auto take_sxid = [&](const json& entry, int sxid) {
    knowledge->sxids[sxid] = {text(entry, "name"), flag(entry, "fatal")};
  };
  if (!for_each_code_row(table, "dcgm_errors", "code", "name", take_dcgm, error) ||
      !for_each_code_row(table, "cuda_errors", "code", "runtime", take_cuda, error) ||
      !for_each_code_row(table, "nvml_errors", "code", "name", take_nvml, error) ||
      !for_each_code_row(table, "sxids", "sxid", "name", take_sxid, error)) {
    return false;
  }
  if (auto it = doc.find("actions"); it != doc.end() && it->is_object()) {
    for (const auto& [code, entry] : it->items()) {
      auto severity = parse_severity(text(entry, "severity"));
      if (!severity) {
        *error = table.path + ": action " + code +
                 ": \"severity\" must be info, warning, error or critical";
        return false;
      }
      knowledge->actions[code] = {text(entry, "meaning"), *severity, text(entry, "fix")};
    }
  }
  if (auto it = doc.find("recurrence"); it != doc.end()) {
    Recurrence& recurrence = knowledge->recurrence;
    const auto boots = it->is_object() ? it->find("boots") : it->end();
    auto severity = parse_severity(text(*it, "severity"));
    if (boots == it->end() || !boots->is_number_integer() || boots->get<int>() < 2 || !severity) {
      *error =
          table.path + R"(: "recurrence" needs "boots" (a whole number from 2) and a "severity")";
      return false;
    }
    recurrence = {boots->get<int>(), *severity, text(*it, "note"), text(*it, "fix")};
  }
  if (auto it = doc.find("nvlink5_decode"); it != doc.end()) {
    if (!it->is_array()) {
      *error = table.path + R"(: "nvlink5_decode" must be an array of rows)";
      return false;
    }
    std::vector<Nvlink5Decode> rows;
    for (const json& entry : *it) {
      Nvlink5Decode row;
      std::string reason;
      if (!parse_nvlink5_row(entry, &row, &reason)) {
        *error = table.path + ": nvlink5_decode: " + reason;
        return false;
      }
      rows.push_back(std::move(row));
    }
    knowledge->nvlink5_decode = std::move(rows);
  }
  if (auto it = doc.find("xids"); it != doc.end() && it->is_array()) {
    for (const json& entry : *it) {
      XidEntry xid;
      std::string reason;
      if (!entry.is_object() || !parse_xid_entry(entry, &xid, &reason)) {
        *error = table.path + ": xids: " + (reason.empty() ? "each must be an object" : reason);
        return false;
      }
      knowledge->xids[xid.xid] = std::move(xid);
    }
  }
  return true;
}

ClassKind kind_of_cause(const std::string& cause) {
  if (cause == "hardware") return ClassKind::kHardware;
  if (cause == "application") return ClassKind::kSoftware;
  return ClassKind::kUnknown;
}

// A fallback class for one catalog Xid: what NVIDIA's catalog says, and its action's fix.
FailureClass catalog_class(const XidEntry& xid, const Knowledge& knowledge) {
  const std::string number = std::to_string(xid.xid);
  FailureClass c;
  c.id = "xid-" + number;
  c.table = "Xid catalog";
  c.title = "Xid " + number + ": " + xid.title;
  c.kind = kind_of_cause(xid.cause);
  c.priority = kCatalogPriority;
  c.fallback = true;
  Condition condition;
  condition.xids = {xid.xid};
  condition.weight = 0.7;
  c.supported_by.push_back(condition);
  c.explanation = xid.meaning;
  c.mechanism = xid.meaning;
  auto immediate = knowledge.actions.find(xid.immediate_action);
  c.severity =
      immediate != knowledge.actions.end() ? immediate->second.severity : Severity::kWarning;
  if (immediate != knowledge.actions.end() && !immediate->second.fix.empty()) {
    c.fix.push_back(immediate->second.fix);
  }
  auto investigatory = knowledge.actions.find(xid.investigatory_action);
  if (investigatory != knowledge.actions.end() && !investigatory->second.meaning.empty()) {
    c.fix.push_back("If it recurs (NVIDIA's investigatory action " + xid.investigatory_action +
                    "): " + investigatory->second.meaning);
  }
  c.verify.push_back({"journalctl -k | grep -E 'NVRM: Xid \\(PCI:[^)]*\\): " + number + ",'",
                      "no new Xid " + number + " for {gpu} after the fix"});
  c.monitor = {"DCGM_FI_DEV_XID_ERRORS (field 230) equal to " + number,
               "journalctl -k | grep 'NVRM: Xid'"};
  c.source = xid.source + "; immediate action " +
             (xid.immediate_action.empty() ? "none" : xid.immediate_action) + ", investigatory " +
             (xid.investigatory_action.empty() ? "none" : xid.investigatory_action);
  return c;
}

// The "lane" of each signature and of each derived event ("events": [{"id", "lane"}]).
bool load_lanes(const Table& table, Knowledge* knowledge, std::string* error) {
  for (const char* part : {"signatures", "events"}) {
    auto it = table.doc.find(part);
    if (it == table.doc.end() || !it->is_array()) continue;
    for (const json& entry : *it) {
      if (!entry.is_object()) continue;
      const std::string id = text(entry, "id");
      const std::string name = text(entry, "lane");
      if (id.empty() || name.empty()) continue;  // lint says so; the id draws as hardware
      const std::optional<Lane> lane = parse_lane(name);
      if (!lane) {
        *error = table.path + ": " + id + ": \"lane\" must be hardware, cuda, nccl or job";
        return false;
      }
      knowledge->lanes[id] = *lane;
    }
  }
  return true;
}

// Which signatures' events need no finding, and which are part of another line's report.
void load_signature_roles(const Table& table, Knowledge* knowledge) {
  auto it = table.doc.find("signatures");
  if (it == table.doc.end() || !it->is_array()) return;
  for (const json& entry : *it) {
    if (!entry.is_object()) continue;
    const std::string id = text(entry, "id");
    knowledge->quiet_signatures.erase(id);
    knowledge->context_signatures.erase(id);
    knowledge->unrecognised_signatures.erase(id);
    if (flag(entry, "unrecognised") && !flag(entry, "benign")) {
      knowledge->unrecognised_signatures.insert(id);
    }
    if (flag(entry, "identity") || flag(entry, "boot") || flag(entry, "benign")) {
      knowledge->quiet_signatures.insert(id);
    } else if (flag(entry, "context")) {
      knowledge->context_signatures.insert(id);
    }
  }
}

// The detectors' thresholds, by their names in "anomaly_parameters".
struct AnomalyParameter {
  std::string_view name;
  size_t AnomalyParameters::*count = nullptr;
  double AnomalyParameters::*number = nullptr;
};
constexpr AnomalyParameter kAnomalyParameters[] = {
    {"warmup_points", &AnomalyParameters::warmup_points},
    {"resume_exclusion_points", &AnomalyParameters::resume_exclusion_points},
    {"window_points", &AnomalyParameters::window_points},
    {"min_history_points", &AnomalyParameters::min_history_points},
    {"spike_level_points", &AnomalyParameters::spike_level_points},
    {"spike_z", nullptr, &AnomalyParameters::spike_z},
    {"spike_min_ratio", nullptr, &AnomalyParameters::spike_min_ratio},
    {"grad_norm_spike_z", nullptr, &AnomalyParameters::grad_norm_spike_z},
    {"grad_norm_spike_min_ratio", nullptr, &AnomalyParameters::grad_norm_spike_min_ratio},
    {"megatron_spike_factor", nullptr, &AnomalyParameters::megatron_spike_factor},
    {"divergence_block_points", &AnomalyParameters::divergence_block_points},
    {"divergence_blocks", &AnomalyParameters::divergence_blocks},
    {"divergence_rise", nullptr, &AnomalyParameters::divergence_rise},
    {"validation_divergence_rise", nullptr, &AnomalyParameters::validation_divergence_rise},
    {"validation_divergence_evaluations", &AnomalyParameters::validation_divergence_evaluations},
    {"stall_factor", nullptr, &AnomalyParameters::stall_factor},
    {"stall_min_history_points", &AnomalyParameters::stall_min_history_points},
    {"silence_min_seconds", nullptr, &AnomalyParameters::silence_min_seconds},
    {"silence_min_gaps", &AnomalyParameters::silence_min_gaps},
    {"skipped_run_min", &AnomalyParameters::skipped_run_min},
    {"loss_scale_collapse_below", nullptr, &AnomalyParameters::loss_scale_collapse_below},
    {"resume_settle_min_points", &AnomalyParameters::resume_settle_min_points},
};

// Reads a table's "anomaly_parameters" (any of them; a later table overrides an earlier one),
// noting in *seen which were given.
bool load_anomaly_parameters(const Table& table, Knowledge* knowledge, std::set<std::string>* seen,
                             std::string* error) {
  auto it = table.doc.find("anomaly_parameters");
  if (it == table.doc.end()) return true;
  if (!it->is_object()) {
    *error = table.path + ": \"anomaly_parameters\" must be an object";
    return false;
  }
  for (const auto& item : it->items()) {
    const std::string& name = item.key();
    const json& value = item.value();
    const auto* parameter =
        std::find_if(std::begin(kAnomalyParameters), std::end(kAnomalyParameters),
                     [&](const AnomalyParameter& p) { return p.name == name; });
    if (parameter == std::end(kAnomalyParameters)) {
      *error = table.path + ": anomaly_parameters: unknown parameter \"" + name + "\"";
      return false;
    }
    if (!value.is_number() || value.get<double>() <= 0 ||
        (parameter->count && !value.is_number_unsigned())) {
      *error = table.path + ": anomaly_parameters: \"" + name + "\" must be a positive " +
               (parameter->count ? "whole number" : "number");
      return false;
    }
    if (parameter->count) {
      knowledge->anomaly.*(parameter->count) = value.get<size_t>();
    } else {
      knowledge->anomaly.*(parameter->number) = value.get<double>();
    }
    seen->insert(name);
  }
  return true;
}

// {anomaly.NAME}: a parameter, or one derived from them, as the classes' texts say it.
std::optional<std::string> anomaly_text(std::string_view name, const AnomalyParameters& k) {
  constexpr std::string_view kPrefix = "anomaly.";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  if (name == "divergence_points") {
    return std::to_string(k.divergence_blocks * k.divergence_block_points);
  }
  if (name == "silence_minutes") return fmt::format("{:g}", k.silence_min_seconds / 60);
  for (const AnomalyParameter& parameter : kAnomalyParameters) {
    if (parameter.name != name) continue;
    return parameter.count ? std::to_string(k.*(parameter.count))
                           : fmt::format("{:g}", k.*(parameter.number));
  }
  return std::nullopt;
}

// Fills {anomaly.NAME} in every text of a class.
void fill_anomaly_parameters(const AnomalyParameters& k, FailureClass* c) {
  const auto fill = [&](std::string* text) {
    *text = fill_template(*text, [&](std::string_view name) { return anomaly_text(name, k); });
  };
  for (std::string* text :
       {&c->title, &c->explanation, &c->mechanism, &c->source, &c->missing_without_state,
        &c->missing_without_gpu, &c->missing_without_kernel_log}) {
    fill(text);
  }
  for (auto* texts : {&c->symptoms, &c->confirm, &c->fix, &c->prevent, &c->monitor}) {
    for (std::string& text : *texts) fill(&text);
  }
}

}  // namespace

Lane Knowledge::lane_of(std::string_view id) const {
  auto it = lanes.find(id);
  return it == lanes.end() ? Lane::kHardware : it->second;
}

std::string_view class_kind_name(ClassKind kind) {
  return kClassKindNames[static_cast<size_t>(kind)];
}

std::optional<ClassKind> parse_class_kind(std::string_view name) {
  for (size_t i = 0; i < kClassKindNames.size(); ++i) {
    if (kClassKindNames[i] == name) return static_cast<ClassKind>(i);
  }
  return std::nullopt;
}

std::string_view severity_name(Severity severity) {
  return kSeverityNames[static_cast<size_t>(severity)];
}

std::optional<Severity> parse_severity(std::string_view name) {
  for (size_t i = 0; i < kSeverityNames.size(); ++i) {
    if (kSeverityNames[i] == name) return static_cast<Severity>(i);
  }
  return std::nullopt;
}

const FailureClass* Knowledge::find_class(std::string_view id) const {
  for (const FailureClass& c : classes) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

const XidEntry* Knowledge::find_xid(int xid) const {
  auto it = xids.find(xid);
  return it == xids.end() ? nullptr : &it->second;
}

// The fewest characters of a cut-off message that name it: the shortest documented messages
// ("Timeout", "No data") are whole words a line may hold for other reasons.
constexpr size_t kShortestCutMessage = 16;

const ApiError* find_api_error(const std::vector<ApiError>& table, std::string_view named) {
  const std::string said = ascii_lower(named);
  const ApiError* best = nullptr;
  const ApiError* cut = nullptr;  // the one message that begins with all that was said
  size_t cut_count = 0;
  for (const ApiError& error : table) {
    if (std::find(error.names.begin(), error.names.end(), named) != error.names.end()) {
      return &error;
    }
    if (error.message.empty()) continue;
    const std::string message = ascii_lower(error.message);
    if (said.starts_with(message) && (!best || error.message.size() > best->message.size())) {
      best = &error;
    }
    if (said.size() >= kShortestCutMessage && message.starts_with(said)) {
      cut = &error;
      ++cut_count;
    }
  }
  // A line cut off inside the message ("an illegal memory access was encountere").
  return best ? best : cut_count == 1 ? cut : nullptr;
}

const ApiError* find_quoted_api_error(const std::vector<ApiError>& table, std::string_view line) {
  const std::string said = ascii_lower(line);
  // Messages such as "invalid argument" or "operation not supported" are the C library's too.
  const bool gpu_stack =
      std::any_of(kGpuStackWords.begin(), kGpuStackWords.end(),
                  [&](std::string_view word) { return said.find(word) != std::string::npos; });
  if (!gpu_stack) return nullptr;
  const ApiError* best = nullptr;
  for (const ApiError& error : table) {
    if (error.message.size() < kShortestQuotedMessage ||
        (best && error.message.size() <= best->message.size())) {
      continue;
    }
    if (said.find(ascii_lower(error.message)) != std::string::npos) best = &error;
  }
  return best;
}

bool load_knowledge(const std::vector<Table>& tables, Knowledge* knowledge, std::string* error) {
  std::set<std::string> parameters_seen;
  std::map<std::string, size_t> index_of;
  const auto add = [&](FailureClass c) {
    auto [slot, inserted] = index_of.emplace(c.id, knowledge->classes.size());
    if (inserted) {
      knowledge->classes.push_back(std::move(c));
    } else {
      knowledge->classes[slot->second] = std::move(c);
    }
  };
  for (const Table& table : tables) {
    const json& doc = table.doc;
    if (auto it = doc.find("classes"); it != doc.end()) {
      if (!it->is_array()) {
        *error = table.path + ": \"classes\" must be an array";
        return false;
      }
      for (const json& entry : *it) {
        FailureClass c;
        c.table = table.path;
        std::string reason;
        if (!entry.is_object() || !parse_class(entry, &c, &reason)) {
          const std::string id = entry.is_object() ? text(entry, "id") : "";
          *error = table.path + ": class " + (id.empty() ? "?" : id) + ": " +
                   (reason.empty() ? "must be an object" : reason);
          return false;
        }
        add(std::move(c));
      }
    }
    if (auto it = doc.find("products"); it != doc.end() && it->is_array()) {
      for (const json& entry : *it) {
        ProductRule rule{text(entry, "pattern"), text(entry, "memory")};
        if (rule.pattern.empty() || rule.memory.empty() || !RE2(rule.pattern).ok()) {
          *error = table.path + R"(: products: each needs a valid "pattern" and a "memory")";
          return false;
        }
        knowledge->products.push_back(std::move(rule));
      }
    }
    if (const std::string memory = text(doc, "default_memory"); !memory.empty()) {
      knowledge->default_memory = memory;
    }
    if (!load_catalog_part(table, knowledge, error)) return false;
    if (!load_lanes(table, knowledge, error)) return false;
    load_signature_roles(table, knowledge);
    if (!load_anomaly_parameters(table, knowledge, &parameters_seen, error)) return false;
  }
  if (parameters_seen.size() != std::size(kAnomalyParameters)) {
    for (const AnomalyParameter& parameter : kAnomalyParameters) {
      if (parameters_seen.contains(std::string(parameter.name))) continue;
      *error = "no table sets anomaly_parameters." + std::string(parameter.name);
      return false;
    }
  }
  const AnomalyParameters& k = knowledge->anomaly;
  // A window that holds less than its capacity holds the whole history.
  if (k.min_history_points > k.window_points || k.stall_min_history_points > k.window_points) {
    *error = "anomaly_parameters: the minimum histories must not exceed window_points";
    return false;
  }
  for (FailureClass& c : knowledge->classes) fill_anomaly_parameters(k, &c);
  for (const auto& [number, xid] : knowledge->xids) {
    if (!index_of.contains("xid-" + std::to_string(number))) {
      add(catalog_class(xid, *knowledge));
    }
  }
  return true;
}

}  // namespace faultline
