// Checks of the signature tables beyond what loading them needs: the schema, unique ids,
// examples, and that every class can be reached by some evidence.
#pragma once

#include <string>
#include <vector>

#include "diagnose/analysis.h"

namespace faultline {

// Lints catalog.tables[first..] against the whole catalog (a user's table may name built-in
// signatures). Returns one line per problem, "PATH: signature|class ID: problem"; none if clean.
std::vector<std::string> lint_tables(const Catalog& catalog, size_t first);

}  // namespace faultline
