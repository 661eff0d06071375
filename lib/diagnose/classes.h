// Failure classes: the "classes" and "products" parts of the signature tables.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "extract/tables.h"

namespace faultline {

enum class Severity { kInfo, kWarning, kError, kCritical };

std::string_view severity_name(Severity severity);
// "info", "warning", "error", "critical"; nullopt for anything else.
std::optional<Severity> parse_severity(std::string_view name);

// One piece of evidence a class looks for: events of a signature, or a state field's value.
struct Condition {
  std::string signature;           // events of this signature ...
  std::optional<int> xid;          // ... with this Xid ...
  std::string memory;              // ... on a GPU with this memory repair ("row-remapping")
  std::string state;               // or: this state field ...
  std::string equals;              // ... equal to this ...
  std::optional<double> at_least;  // ... or at least this (summed with `sum_with`)
  std::string sum_with;
  std::string note;  // for contradictions: what the contradiction means
  double weight = 0;
};

struct VerifyStep {
  std::string command;
  std::string expect;
};

struct FailureClass {
  std::string id;
  std::string title;
  std::string kind;  // "hardware", "software" or "unknown"
  Severity severity = Severity::kInfo;
  int priority = 0;  // which class names a GPU's incident when several fit
  std::vector<Condition> supported_by;
  std::vector<Condition> contradicted_by;
  std::vector<std::string> symptom_of;  // classes whose diagnosis this one is collateral to
  std::string explanation;
  std::vector<std::string> fix;  // templates: {host} {gpu} {gpu_index} {serial} {uuid} {product}
  std::vector<VerifyStep> verify;
  std::string missing_without_state;  // said when no dump of the GPU was given
  std::string missing_without_gpu;    // said when no hardware diagnosis explains it
  std::string source;
};

// How a product repairs bad memory, matched on its name.
struct ProductRule {
  std::string pattern;
  std::string memory;
};

struct Knowledge {
  std::vector<FailureClass> classes;
  std::vector<ProductRule> products;
  std::string default_memory = "row-remapping";
};

// Reads the classes and products of every table; a later class replaces an earlier one of the
// same id. Returns false and sets *error ("PATH: class ID: reason") if one is malformed.
bool load_knowledge(const std::vector<Table>& tables, Knowledge* knowledge, std::string* error);

}  // namespace faultline
