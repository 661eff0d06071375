// The signature tables' schema, written once: the keys each kind of entry may have and how
// much each is needed. The parsers (signatures.cpp, classes.cpp) refuse an entry that lacks a
// key needed to load it; lint (lint.cpp) reports keys that are not listed and the keys every
// entry of the built-in catalog has. docs/architecture.md describes each key. Internal to
// lib/catalog/.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace faultline::catalog_internal {

enum class Need {
  kOptional,
  kToLoad,   // an entry without it cannot be loaded
  kForLint,  // loads without it, but `signatures lint` asks for it (`faultline explain` prints it)
};

struct Key {
  std::string_view name;
  Need need = Need::kOptional;
};

struct EntrySchema {
  std::string_view what;  // "table", "signature", "class", "condition", "event"
  std::span<const Key> keys;
};

extern const EntrySchema kTableSchema;
extern const EntrySchema kSignatureSchema;
extern const EntrySchema kClassSchema;
extern const EntrySchema kConditionSchema;
extern const EntrySchema kEventSchema;

// Whether `schema` lists `key`.
bool knows(const EntrySchema& schema, std::string_view key);

// The first key of `schema` needed at `need` or more (kToLoad: only those) that `entry` lacks.
std::optional<std::string> first_missing(const nlohmann::json& entry, const EntrySchema& schema,
                                         Need need);

}  // namespace faultline::catalog_internal
