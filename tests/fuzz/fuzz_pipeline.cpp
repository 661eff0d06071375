// The whole pipeline on one input file: analyze() with the built-in catalog, then the JSON
// document and the text report. The JSON must parse back (valid UTF-8 whatever the input).
#include <cstdint>
#include <sstream>
#include <string>

#include "catalog/signatures.h"
#include "catalog/tables.h"
#include "extract/extract.h"
#include "fuzz.h"
#include "report/json.h"
#include "report/report.h"

namespace {

const faultline::Catalog& BuiltinCatalog() {
  static const faultline::Catalog* catalog = [] {
    auto* built = new faultline::Catalog();
    std::string error;
    if (!faultline::load_catalog({}, built, &error)) {
      std::fprintf(stderr, "the built-in catalog does not load: %s\n", error.c_str());
      std::abort();
    }
    return built;
  }();
  return *catalog;
}

void CheckJson(const std::string& text) {
  try {
    (void)nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    std::fprintf(stderr, "dump_json wrote JSON that does not parse: %s\n", e.what());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const faultline::Catalog& catalog = BuiltinCatalog();
  static faultline::fuzz::MemoryFile file("fuzz_pipeline");
  const std::string& path = file.Write(data, size);

  const faultline::Analysis analysis =
      faultline::analyze({path}, catalog, {.max_bytes = faultline::fuzz::kMaxBytes});
  FUZZ_CHECK(analysis.inputs.size() + analysis.warnings.size() >= 1);
  for (const std::string& warning : analysis.warnings) {
    FUZZ_CHECK(warning.find('\n') == std::string::npos);
  }
  std::ostringstream document;
  faultline::render_json(analysis, document);
  CheckJson(document.str());
  for (const faultline::Event& event : analysis.events) {
    CheckJson(faultline::dump_json(faultline::event_record(event), -1));
  }
  std::ostringstream text;
  faultline::TextOptions verbose;
  verbose.verbose = true;
  faultline::render_text(analysis, verbose, text);
  return 0;
}
