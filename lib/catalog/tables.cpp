#include "catalog/tables.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "catalog/builtin_tables.h"

namespace faultline {
namespace {

// The line of the first "[" or "{" nested deeper than kMaxTableDepth, 0 when there is none: read
// before parsing, since a parser builds every level it enters (a 20 MB "[[[[..." file took 783 MB).
size_t too_deep_line(std::string_view text) {
  size_t depth = 0;
  size_t line = 1;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (c == '\n') ++line;
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxTableDepth) return line;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return 0;
}

std::string too_big(const std::string& path, uintmax_t bytes) {
  return path + ": a signature table is at most " + std::to_string(kMaxTableBytes >> 20) +
         " MiB; this one is " + std::to_string(bytes) + " bytes";
}

}  // namespace

bool parse_table(const std::string& path, const std::string& text, Table* table,
                 std::string* error) {
  if (text.size() > kMaxTableBytes) {
    *error = too_big(path, text.size());
    return false;
  }
  if (const size_t line = too_deep_line(text); line != 0) {
    *error = path + ":" + std::to_string(line) + ": nested deeper than " +
             std::to_string(kMaxTableDepth) + " levels";
    return false;
  }
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
    // A table is a regular file, refused unread when over the limit; no more than its size and
    // one byte is read (a file that grows meanwhile is not followed).
    if (!fs::is_regular_file(file, ec)) {
      *error = file.string() + ": not a regular file";
      return false;
    }
    const uintmax_t size = fs::file_size(file, ec);
    if (ec || size > kMaxTableBytes) {
      *error = ec ? file.string() + ": " + ec.message() : too_big(file.string(), size);
      return false;
    }
    std::ifstream in(file, std::ios::binary);
    std::string text(size + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    if (in.bad() || (!in && !in.eof())) {
      *error = file.string() + ": cannot be read";
      return false;
    }
    text.resize(static_cast<size_t>(in.gcount()));
    Table table;
    if (!parse_table(file.string(), text, &table, error)) return false;
    tables->push_back(std::move(table));
  }
  return true;
}

}  // namespace faultline
