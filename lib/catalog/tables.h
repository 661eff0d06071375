// Loading the knowledge base: the JSON tables of signatures/ and of --signatures folders.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace faultline {

// One parsed table file. Later stages read the parts they own ("signatures", "classes").
// NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json's destructor may allocate.
struct Table {
  std::string path;
  nlohmann::json doc;
};

// A table file's limits: the largest built-in table is 128 KB and nests 7 levels; past these a
// file is refused before it is parsed, so that its cost stays bounded.
inline constexpr size_t kMaxTableBytes = size_t{4} << 20;
inline constexpr size_t kMaxTableDepth = 64;

// The tables built into the binary (a copy of signatures/*.json, in file-name order).
std::vector<Table> builtin_tables();

// Appends every *.json file of `dir` (sorted by name) to *tables. Returns false and sets
// *error to "PATH:LINE: reason" for the first file that cannot be read or parsed.
bool load_tables(const std::string& dir, std::vector<Table>* tables, std::string* error);

// Parses one table's text. Returns false and sets *error to "PATH:LINE: reason" on failure,
// among them a text over kMaxTableBytes or nested deeper than kMaxTableDepth.
bool parse_table(const std::string& path, const std::string& text, Table* table,
                 std::string* error);

}  // namespace faultline
