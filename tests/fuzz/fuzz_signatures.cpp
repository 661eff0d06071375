// The built-in signature catalog on arbitrary lines: the literal screen, the RE2 set and each
// signature's own match, which must agree on where a match starts.
#include <re2/re2.h>
#include <re2/set.h>

#include <cstdint>
#include <string>

#include "catalog/signatures.h"
#include "catalog/tables.h"
#include "fuzz.h"
#include "pipeline/pipeline.h"

namespace {

const faultline::SignatureSet& BuiltinSignatures() {
  static const faultline::SignatureSet* set = [] {
    std::string error;
    auto built = faultline::SignatureSet::Build(faultline::builtin_tables(), &error);
    if (built == nullptr) {
      std::fprintf(stderr, "the built-in signatures do not build: %s\n", error.c_str());
      std::abort();
    }
    return built.release();
  }();
  return *set;
}

// Every pattern in one RE2::Set without the literal screen in front: the reference that tells
// whether the screen dropped a line some signature matches.
const RE2::Set& UnscreenedSet() {
  static const RE2::Set* set = [] {
    RE2::Options options;
    options.set_log_errors(false);
    options.set_max_mem(faultline::SignatureSet::kSetMemoryBudget);
    auto* built = new RE2::Set(options, RE2::UNANCHORED);
    for (const auto& signature : BuiltinSignatures().signatures()) {
      FUZZ_CHECK(built->Add(signature->pattern, nullptr) >= 0);
    }
    FUZZ_CHECK(built->Compile());
    return built;
  }();
  return *set;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const faultline::SignatureSet& signatures = BuiltinSignatures();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<faultline::SignatureMatch> matches;
  for (const std::string_view line : faultline::fuzz::SplitLines(text)) {
    matches.clear();
    signatures.Match(line, &matches);
    for (const faultline::SignatureMatch& match : matches) {
      FUZZ_CHECK(match.signature != nullptr);
      FUZZ_CHECK(match.begin <= line.size());
      for (const auto& [name, value] : match.fields) {
        FUZZ_CHECK(!name.empty() && value.size() <= line.size());
      }
    }
    // The screen may only drop lines that no signature matches.
    if (!signatures.screen().MayMatch(line)) {
      FUZZ_CHECK(!UnscreenedSet().Match(re2::StringPiece(line.data(), line.size()), nullptr));
    }
  }
  return 0;
}
