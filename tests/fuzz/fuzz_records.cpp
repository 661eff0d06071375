// `faultline diagnose --events` on one records file: every line through read_record, what it
// reads written back and read again unchanged, and the whole file correlated and diagnosed.
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

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
    if (!faultline::load_catalog({}, built, &error)) std::abort();
    return built;
  }();
  return *catalog;
}

// What read_record() accepted writes a record that reads back to the same record.
void CheckRoundTrip(const faultline::Records& records) {
  for (const faultline::Event& event : records.events) {
    const std::string written = faultline::dump_json(faultline::event_record(event), -1);
    faultline::Records again;
    std::string error;
    FUZZ_CHECK(faultline::read_record(written, &again, &error));
    FUZZ_CHECK(again.events.size() == 1);
    FUZZ_CHECK(faultline::dump_json(faultline::event_record(again.events[0]), -1) == written);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    faultline::Records records;
    std::string error;
    if (!faultline::read_record(line, &records, &error)) FUZZ_CHECK(!error.empty());
    CheckRoundTrip(records);
  }
  static faultline::fuzz::MemoryFile file("fuzz_records");
  const faultline::Analysis analysis = faultline::analyze_records(
      {file.Write(data, size)}, BuiltinCatalog(), {.max_bytes = faultline::fuzz::kMaxBytes});
  for (const std::string& warning : analysis.warnings) {
    FUZZ_CHECK(warning.find('\n') == std::string::npos);
  }
  std::ostringstream document;
  faultline::render_json(analysis, document);
  (void)nlohmann::json::parse(document.str());
  return 0;
}
