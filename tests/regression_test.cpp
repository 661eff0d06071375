// Regressions from fuzzing and the hostile-input corpus (tests/fuzz, tests/bad_input_test.sh):
// each case feeds the input that once failed, embedded here.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "builtin_catalog.h"
#include "catalog/signatures.h"
#include "catalog/tables.h"
#include "envelope/envelope.h"
#include "pipeline/pipeline.h"
#include "source/source.h"

namespace faultline {
namespace {

// A file under the system's temporary folder holding `bytes`, removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(std::string_view bytes) {
    path_ = (std::filesystem::temp_directory_path() / "faultline-regression-XXXXXX").string();
    const int fd = mkstemp(path_.data());
    REQUIRE(fd >= 0);
    close(fd);
    std::ofstream(path_, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  }
  ~TempFile() { std::filesystem::remove(path_); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const SignatureSet& builtin_signatures() {
  static const std::unique_ptr<SignatureSet> set = [] {
    std::string error;
    auto built = SignatureSet::Build(builtin_tables(), &error);
    REQUIRE_MESSAGE(built != nullptr, error);
    return built;
  }();
  return *set;
}

const std::string* field(const SignatureMatch& match, std::string_view name) {
  for (const auto& [key, value] : match.fields) {
    if (key == name) return &value;
  }
  return nullptr;
}

TEST_CASE("regression: invalid UTF-8 in an Xid line does not hide it") {
  // RE2 reads lines as UTF-8: `.` and `[^,]` matched no byte of the broken sequences, so the
  // whole line went unmatched (a process name cut inside a character, as the kernel cuts
  // comm at 15 bytes).
  const std::string line =
      "Mar  5 10:12:33 gpu-node-9 kernel: NVRM: Xid (PCI:0000:b7:00): 64, pid=1, "
      "name=\xff\xfe\xc3(py\xed\xa0\x80, Row Remapper Error: (0x3f1a2c0) - All reserved rows "
      "for bank are remapped \xf0\x9f";
  std::vector<SignatureMatch> matches;
  builtin_signatures().Match(line, &matches);
  const auto xid64 = std::find_if(matches.begin(), matches.end(), [](const SignatureMatch& m) {
    const std::string* xid = field(m, "xid");
    return xid != nullptr && *xid == "64";
  });
  REQUIRE(xid64 != matches.end());
  CHECK(*field(*xid64, "pci") == "0000:b7:00");
  CHECK(xid64->begin == line.find("NVRM"));
  const std::string* reason = field(*xid64, "reason");
  REQUIRE(reason != nullptr);
  CHECK(reason->starts_with("All reserved rows for bank are remapped"));

  // A lone byte that is not UTF-8 just before the message.
  const std::string cut =
      "NVRM: Xid (PCI:0000:3b:00): 79, pid=77, name=tr\xe4, GPU has fallen off the bus.";
  matches.clear();
  builtin_signatures().Match(cut, &matches);
  CHECK(std::any_of(matches.begin(), matches.end(), [](const SignatureMatch& m) {
    const std::string* xid = field(m, "xid");
    return xid != nullptr && *xid == "79";
  }));
}

TEST_CASE("regression: a number beyond a double in a table is an error, not a crash") {
  // fuzz_tables, crash-74f217ddc84d87b74c0cfabfd66094ea5a397034: nlohmann::json throws
  // out_of_range, not parse_error, for "45e9444444"; it escaped parse_table and terminated.
  Table table;
  std::string error;
  CHECK_FALSE(parse_table("fuzz.json", "45e9444444              4444444444T4\n", &table, &error));
  CHECK(error.starts_with("fuzz.json: not valid JSON ("));
  CHECK_FALSE(parse_table("big.json", R"({"signatures": [], "x": 1e999})", &table, &error));
  CHECK(error.starts_with("big.json: not valid JSON ("));
}

TEST_CASE("regression: a newline in a table's group name is an error, not a crash") {
  // fuzz_tables: a mutated built-in table whose macro put a newline into a group name. The
  // reason then spans two lines; the CLI escapes it when printing (bad_input_test.sh).
  Table table;
  std::string error;
  const std::string text = R"json({
    "macros": {"head": "NVRM: Xid \\((?P<gpu_inst\nce>\\d+)\\): "},
    "signatures": [{"id": "two\nlines", "pattern": "%{head}(?P<xid>119)"}]})json";
  REQUIRE(parse_table("fuzz.json", text, &table, &error));
  CHECK(SignatureSet::Build({table}, &error) == nullptr);
  CHECK(error.starts_with("fuzz.json: signature two\nlines: pattern does not compile: "));
}

TEST_CASE("regression: an empty line after a bug report's end is read, not passed to memmem") {
  // fuzz_pipeline (UBSan: null pointer passed to memmem): the bundle's closing lines.
  const TempFile file(std::string(44, '_') + "\n\nEnd of NVIDIA bug report log file.\n");
  const Analysis analysis = analyze({file.path()}, catalog());
  REQUIRE(analysis.inputs.size() == 1);
  CHECK(analysis.inputs[0].lines == 3);
  CHECK(analysis.diagnoses.empty());
}

TEST_CASE("regression: stamps with fields out of range are no time") {
  // These printed as "10007-06-27T04:40:39+00:00" and "+100:39": not ISO 8601.
  CHECK_FALSE(parse_prefix("9999-99-99T99:99:99Z gpu-node-1 kernel: ", 2024).time.known());
  CHECK_FALSE(find_year("9999-99-99T99:99:99Z").has_value());
  const LinePrefix zone = parse_prefix("2024-03-05T10:12:33+99:99 gpu-node-1 kernel: ", 2024);
  CHECK(zone.time.iso() == "2024-03-05T10:12:33");
  CHECK_FALSE(parse_prefix("[Tue Mar 45 10:12:33 2024] ", 2024).time.known());
  CHECK_FALSE(parse_prefix("Mar 45 10:12:33 gpu-node-1 kernel: ", 2024).time.known());
  CHECK_FALSE(parse_prefix("Mar  5 25:12:33 gpu-node-1 kernel: ", 2024).time.known());
  // The leap second and the last day of a month stay times.
  CHECK(parse_prefix("2016-12-31T23:59:60Z ", 2024).time.known());
  CHECK(parse_prefix("[Sat Dec 31 23:59:59 2016] ", 2024).time.known());
}

TEST_CASE("regression: a dmesg stamp beyond an int is dropped, not wrapped to 0") {
  // "[99999999999999999999.999999]" gave boot time 0.999999.
  const LinePrefix prefix = parse_prefix("[99999999999999999999.999999] ", 2024);
  CHECK_FALSE(prefix.boot_seconds.has_value());
  CHECK_FALSE(prefix.time.known());
  CHECK(parse_prefix("[999999999.5] ", 2024).boot_seconds == doctest::Approx(999999999.5));
}

TEST_CASE("regression: a fraction that rounds up carries into the seconds") {
  // Printed "2100-12-31T23:59:59.1000000+00:00".
  const Timestamp time = Timestamp::Absolute(unix_seconds(2100, 12, 31, 23, 59, 59.9999996), 0);
  CHECK(time.iso() == "2101-01-01T00:00:00+00:00");
}

TEST_CASE("--max-bytes: reading stops at the limit with a warning naming the file and limit") {
  std::string text;
  for (char c = 'a'; c < 'k'; ++c) text += std::string(100, c) + "\n";  // 10 lines, 1010 bytes
  const TempFile file(text);

  std::string error;
  auto reader = LineReader::Open(file.path(), &error, 512);
  REQUIRE(reader != nullptr);
  Line line;
  uint64_t lines = 0;
  while (reader->Next(&line)) {
    CHECK(line.text == std::string(100, static_cast<char>('a' + lines)));
    ++lines;
  }
  CHECK(lines == 5);  // the sixth is cut by the limit and not yielded
  CHECK(reader->bytes() == 512);
  CHECK(reader->error() ==
        file.path() + ": stopped after 512 bytes of text (--max-bytes); the rest is not read");

  // Exactly the file's size: all of it, no warning.
  reader = LineReader::Open(file.path(), &error, text.size());
  REQUIRE(reader != nullptr);
  lines = 0;
  while (reader->Next(&line)) ++lines;
  CHECK(lines == 10);
  CHECK(reader->error().empty());

  // Sizes are named in the largest unit that states them exactly.
  reader = LineReader::Open(file.path(), &error, 1024);
  while (reader->Next(&line)) {
  }
  CHECK(reader->error().empty());  // 1010 bytes < 1 KiB
  const TempFile large(std::string(3 << 20, '\n'));
  reader = LineReader::Open(large.path(), &error, uint64_t{2} << 20);
  REQUIRE(reader != nullptr);
  while (reader->Next(&line)) {
  }
  CHECK(reader->error() ==
        large.path() + ": stopped after 2 MiB of text (--max-bytes); the rest is not read");
}

}  // namespace
}  // namespace faultline
