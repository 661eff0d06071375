// The signature tables compiled into the binary; generated from signatures/*.json by CMake.
#pragma once

#include <span>
#include <string_view>

namespace faultline {

struct BuiltinTable {
  std::string_view name;  // "signatures/<file>.json"
  std::string_view text;
};

extern const std::span<const BuiltinTable> kBuiltinTables;
// The first 12 hex digits of a SHA-256 over each table's name and SHA-256.
extern const std::string_view kBuiltinTablesDigest;

}  // namespace faultline
