#include <re2/re2.h>

#include <set>

#include "catalog/catalog.h"
#include "catalog/schema.h"
#include "catalog/signatures.h"
#include "catalog/tables.h"
#include "model/captures.h"
#include "model/text.h"
#include "state/state.h"

namespace faultline {
namespace {

using nlohmann::json;

using catalog_internal::EntrySchema;
using catalog_internal::Need;

class Linter {
 public:
  Linter(const Catalog& catalog, std::vector<std::string>* problems)
      : catalog_(catalog), problems_(problems) {
    for (const auto& signature : catalog.signatures->signatures()) {
      signature_ids_.emplace(signature->id);
    }
    // Events that code makes rather than a line signature (loss-spike) are declared by name.
    for (const faultline::Table& table : catalog.tables) {
      for (const json& event : table.doc.value("events", json::array())) {
        if (event.is_object()) signature_ids_.insert(event.value("id", ""));
      }
    }
  }

  void Table(const faultline::Table& table) {
    path_ = table.path;
    for (const auto& [key, value] : table.doc.items()) {
      if (!knows(catalog_internal::kTableSchema, key)) {
        Problem("table", "", "unknown key \"" + key + "\"");
      }
    }
    for (const json& entry : table.doc.value("signatures", json::array())) Signature(entry);
    for (const auto& signature : catalog_.signatures->signatures()) {
      if (signature->table == path_) ReservedCaptures(*signature);
    }
    for (const json& entry : table.doc.value("classes", json::array())) Class(entry);
    for (const json& entry : table.doc.value("events", json::array())) {
      if (!entry.is_object()) {
        Problem("event", "", R"(must be an object {"id", "lane"})");
        continue;
      }
      Keys(entry, catalog_internal::kEventSchema, entry.value("id", "?"));
    }
  }

 private:
  void Problem(const std::string& what, std::string_view id, const std::string& problem) {
    problems_->push_back(path_ + ": " + what + (id.empty() ? "" : " " + std::string(id)) + ": " +
                         problem);
  }

  // Reports the keys `schema` does not list and those lint asks for that `entry` lacks, as
  // problems of `what` (the entry's own kind unless it is part of another, a class's condition).
  void Keys(const json& entry, const EntrySchema& schema, const std::string& id,
            std::string_view what = "") {
    const std::string kind(what.empty() ? schema.what : what);
    for (const auto& item : entry.items()) {
      if (!knows(schema, item.key())) Problem(kind, id, "unknown key \"" + item.key() + "\"");
    }
    for (const catalog_internal::Key& key : schema.keys) {
      if (key.need != Need::kOptional && !entry.contains(key.name)) {
        Problem(kind, id, "no \"" + std::string(key.name) + "\"");
      }
    }
  }

  void Signature(const json& entry) {
    const std::string id = entry.value("id", "?");
    Keys(entry, catalog_internal::kSignatureSchema, id);
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
    Keys(entry, catalog_internal::kClassSchema, id);
    if (!seen_classes_.insert(id).second) Problem("class", id, "id defined twice");
    bool reachable = false;
    for (const json& condition : entry.value("supported_by", json::array())) {
      reachable |= Condition(id, condition);
    }
    if (!reachable) Problem("class", id, "no supporting condition can ever hold");
    if (entry.value("per_rank", false) && !entry.value("job_wide", false)) {
      Problem("class", id,
              R"("per_rank" without "job_wide": only a job-wide class is split by rank)");
    }
    for (const char* key : {"related", "symptom_of", "consequence_of"}) {
      for (const json& other : entry.value(key, json::array())) {
        const bool any = std::string_view(key) == "consequence_of" && other == "*";
        if (!any &&
            (!other.is_string() || !catalog_.knowledge.find_class(other.get<std::string>()))) {
          Problem("class", id, std::string(key) + " names an unknown class " + other.dump());
        }
      }
    }
  }

  // A capture that code reads must have the shape code expects (model/captures.h) in every
  // example line; one that only code sets must not be captured.
  void ReservedCaptures(const faultline::Signature& signature) {
    const size_t groups = signature.group_names.size();
    for (const std::string& name : signature.group_names) {
      const capture::Reserved* reserved = capture::find_reserved(name);
      if (reserved && reserved->shape == capture::Shape::kCodeOnly) {
        Problem("signature", signature.id, "captures \"" + name + "\", which only code sets");
      }
    }
    std::vector<re2::StringPiece> values(groups + 1);
    std::string joined;
    for (const SignatureExample& example : signature.must_match) {
      // A wrapped example is checked as the scan reads it: its lines joined.
      re2::StringPiece line(example.line);
      if (example.line.find('\n') != std::string::npos) {
        std::vector<std::string_view> lines;
        for (size_t start = 0, end = 0; end != std::string::npos; start = end + 1) {
          end = example.line.find('\n', start);
          lines.push_back(std::string_view(example.line).substr(start, end - start));
        }
        SignatureMatch match;
        if (!match_wrapped(signature, lines, &joined, &match)) continue;
        line = joined;
      }
      if (!signature.regex->Match(line, 0, line.size(), RE2::UNANCHORED, values.data(),
                                  static_cast<int>(values.size()))) {
        continue;  // `signatures test` reports the example
      }
      for (size_t i = 0; i < groups; ++i) {
        const capture::Reserved* reserved = capture::find_reserved(signature.group_names[i]);
        if (!reserved || values[i + 1].data() == nullptr) continue;
        const std::string value(values[i + 1].data(), values[i + 1].size());
        if (!has_shape(value, reserved->shape)) {
          Problem("signature", signature.id,
                  "captures \"" + signature.group_names[i] + "\" as \"" + value + "\", not " +
                      (reserved->shape == capture::Shape::kInteger ? "a whole number"
                                                                   : "a PCI address"));
        }
      }
    }
  }

  static bool has_shape(const std::string& value, capture::Shape shape) {
    switch (shape) {
      case capture::Shape::kPciAddress:
        return !normalize_pci(value).empty();
      case capture::Shape::kInteger:
        return parse_number<long long>(value).has_value();
      case capture::Shape::kText:
      case capture::Shape::kCodeOnly:
        return true;
    }
    return true;
  }

  // Whether the condition can hold; reports what makes it impossible.
  bool Condition(const std::string& id, const json& condition) {
    Keys(condition, catalog_internal::kConditionSchema, id, "class");
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
