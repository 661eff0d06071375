#include "catalog/catalog.h"

#include "catalog/builtin_tables.h"
#include "catalog/signatures.h"
#include "catalog/tables.h"

namespace faultline {

Catalog::Catalog() = default;
Catalog::~Catalog() = default;
Catalog::Catalog(Catalog&&) noexcept = default;
Catalog& Catalog::operator=(Catalog&&) noexcept = default;

bool load_catalog(const std::vector<std::string>& extra_dirs, Catalog* catalog,
                  std::string* error) {
  catalog->tables = builtin_tables();
  for (const std::string& dir : extra_dirs) {
    if (!load_tables(dir, &catalog->tables, error)) return false;
  }
  catalog->signatures = SignatureSet::Build(catalog->tables, error);
  return catalog->signatures && load_knowledge(catalog->tables, &catalog->knowledge, error);
}

size_t builtin_table_count() {
  return builtin_tables().size();
}

std::string_view builtin_tables_version() {
  return kBuiltinTablesDigest;
}

size_t table_count(const Catalog& catalog) {
  return catalog.tables.size();
}

}  // namespace faultline
