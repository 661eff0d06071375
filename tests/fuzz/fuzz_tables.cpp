// The knowledge base on arbitrary table files: parse_table, SignatureSet::Build, the examples,
// load_knowledge (after the built-in tables, as --signatures loads it) and the linter. A bad
// table is an error message, never a crash.
#include <cstdint>
#include <string>

#include "catalog/catalog.h"
#include "catalog/signatures.h"
#include "catalog/tables.h"
#include "fuzz.h"
#include "pipeline/pipeline.h"

namespace {

using faultline::Table;

// A reason is given. It may span lines when a table's id or pattern holds a newline: the CLI
// escapes control characters when it prints one.
bool Explained(const std::string& message) {
  return !message.empty();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::vector<Table> tables = faultline::builtin_tables();
  const std::string text(reinterpret_cast<const char*>(data), size);
  Table table;
  std::string error;
  if (!faultline::parse_table("fuzz.json", text, &table, &error)) {
    FUZZ_CHECK(Explained(error) && error.starts_with("fuzz.json:"));
    return 0;
  }

  // Its signatures alone: compiling the built-in patterns for every input would be slow.
  faultline::Catalog catalog;
  catalog.tables.push_back(table);
  catalog.signatures = faultline::SignatureSet::Build(catalog.tables, &error);
  if (catalog.signatures == nullptr) {
    FUZZ_CHECK(Explained(error));
  } else {
    (void)faultline::check_examples(*catalog.signatures);
    std::vector<faultline::SignatureMatch> matches;
    for (const auto& signature : catalog.signatures->signatures()) {
      for (const faultline::SignatureExample& example : signature->must_match) {
        matches.clear();
        catalog.signatures->Match(example.line, &matches);
        for (const auto& match : matches) FUZZ_CHECK(match.begin <= example.line.size());
      }
    }
  }

  // Its classes and Xids over the built-in ones.
  tables.push_back(std::move(table));
  faultline::Knowledge knowledge;
  error.clear();
  const bool loaded = faultline::load_knowledge(tables, &knowledge, &error);
  tables.pop_back();
  if (!loaded) {
    FUZZ_CHECK(Explained(error));
    return 0;
  }
  if (catalog.signatures != nullptr) {
    error.clear();
    if (faultline::load_knowledge(catalog.tables, &catalog.knowledge, &error)) {
      (void)faultline::lint_tables(catalog, 0);
    }
  }
  return 0;
}
