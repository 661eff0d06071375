// The built-in catalog, loaded once for all the tests of a file that need it.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "catalog/catalog.h"

namespace faultline {

inline const Catalog& catalog() {
  static const Catalog* loaded = [] {
    auto* built = new Catalog();
    std::string error;
    REQUIRE_MESSAGE(load_catalog({}, built, &error), error);
    return built;
  }();
  return *loaded;
}

}  // namespace faultline
