#include "catalog/schema.h"

#include <algorithm>

namespace faultline::catalog_internal {
namespace {

using enum Need;

constexpr Key kTableKeys[] = {
    {"schema"},     {"description"},    {"sources"},     {"macros"},
    {"products"},   {"default_memory"}, {"signatures"},  {"classes"},
    {"xids"},       {"events"},         {"actions"},     {"anomaly_parameters"},
    {"recurrence"}, {"nvlink5_decode"}, {"cuda_errors"}, {"dcgm_errors"},
    {"sxids"},      {"nvml_errors"},
};

constexpr Key kSignatureKeys[] = {
    {"id", kToLoad},
    {"pattern", kToLoad},
    {"description", kForLint},
    {"source", kForLint},
    {"examples", kForLint},
    {"lane", kForLint},
    {"xid"},
    {"fallback"},
    {"identity"},
    {"context"},
    {"benign"},
    {"boot"},
    {"gpu_from_previous_line"},
    {"collective_timeout"},
    {"installed_gpu"},
    {"unrecognised"},
    {"continues"},
    {"sets"},
};

// Everything `faultline explain` prints is asked for.
constexpr Key kClassKeys[] = {
    {"id", kToLoad},
    {"title", kToLoad},
    {"class", kToLoad},
    {"severity", kToLoad},
    {"supported_by", kToLoad},
    {"priority", kForLint},
    {"explanation", kForLint},
    {"mechanism", kForLint},
    {"symptoms", kForLint},
    {"confirm", kForLint},
    {"fix", kForLint},
    {"verify", kForLint},
    {"prevent", kForLint},
    {"monitor", kForLint},
    {"related", kForLint},
    {"source", kForLint},
    {"fallback"},
    {"last_resort"},
    {"carry_fix"},
    {"job_wide"},
    {"symptom_within_s"},
    {"per_rank"},
    {"reduced_note"},
    {"unplaced_note"},
    {"contradicted_by"},
    {"symptom_of"},
    {"consequence_of"},
    {"missing_without_state"},
    {"missing_without_gpu"},
    {"missing_without_kernel_log"},
};

constexpr Key kConditionKeys[] = {
    {"signature"}, {"xid"},    {"unlisted"}, {"unaccounted"}, {"where"},
    {"where_not"}, {"memory"}, {"state"},    {"equals"},      {"at_least"},
    {"sum_with"},  {"trend"},  {"note"},     {"weight"},      {"severity"},
};

constexpr Key kEventKeys[] = {{"id", kToLoad}, {"lane", kForLint}};

}  // namespace

const EntrySchema kTableSchema{"table", kTableKeys};
const EntrySchema kSignatureSchema{"signature", kSignatureKeys};
const EntrySchema kClassSchema{"class", kClassKeys};
const EntrySchema kConditionSchema{"condition", kConditionKeys};
const EntrySchema kEventSchema{"event", kEventKeys};

bool knows(const EntrySchema& schema, std::string_view key) {
  return std::any_of(schema.keys.begin(), schema.keys.end(),
                     [&](const Key& known) { return known.name == key; });
}

std::optional<std::string> first_missing(const nlohmann::json& entry, const EntrySchema& schema,
                                         Need need) {
  for (const Key& key : schema.keys) {
    const bool asked = need == kToLoad ? key.need == kToLoad : key.need != kOptional;
    if (asked && (!entry.is_object() || !entry.contains(key.name))) return std::string(key.name);
  }
  return std::nullopt;
}

}  // namespace faultline::catalog_internal
