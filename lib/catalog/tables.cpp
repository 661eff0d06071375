#include "catalog/tables.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "catalog/builtin_tables.h"

namespace faultline {

bool parse_table(const std::string& path, const std::string& text, Table* table,
                 std::string* error) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const size_t byte = std::min<size_t>(e.byte, text.size());
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(byte), '\n');
    *error = path + ":" + std::to_string(line) + ": not valid JSON";
    return false;
  } catch (const nlohmann::json::exception& e) {
    // A number beyond a double ("1e999") is an out_of_range error, with no position.
    *error = path + ": not valid JSON (" + e.what() + ")";
    return false;
  }
  if (!doc.is_object()) {
    *error = path + ":1: a signature table must be a JSON object";
    return false;
  }
  table->path = path;
  table->doc = std::move(doc);
  return true;
}

std::vector<Table> builtin_tables() {
  std::vector<Table> tables;
  for (const BuiltinTable& builtin : kBuiltinTables) {
    Table table;
    std::string error;
    // The build embeds these files after the test suite has parsed them; a failure here is a
    // build defect, so it is surfaced loudly rather than skipped.
    if (!parse_table(std::string(builtin.name), std::string(builtin.text), &table, &error)) {
      throw std::logic_error("built-in signature table is invalid: " + error);
    }
    tables.push_back(std::move(table));
  }
  return tables;
}

bool load_tables(const std::string& dir, std::vector<Table>* tables, std::string* error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".json") files.push_back(it->path());
  }
  if (ec) {
    *error = dir + ": " + ec.message();
    return false;
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
      *error = file.string() + ": cannot be read";
      return false;
    }
    Table table;
    if (!parse_table(file.string(), text.str(), &table, error)) return false;
    tables->push_back(std::move(table));
  }
  return true;
}

}  // namespace faultline
