// The source stage on arbitrary bytes: plain, UTF-16, gzip, bzip2, xz and zstd streams, whole, cut
// or corrupt. Every line that comes out is bounded, numbered in order, and reading always ends.
#include <cstdint>
#include <string>

#include "fuzz.h"
#include "source/source.h"

namespace {

using faultline::Line;
using faultline::LineReader;

void ReadAll(const std::string& path, uint64_t max_bytes) {
  std::string error;
  const std::unique_ptr<LineReader> reader = LineReader::Open(path, &error, max_bytes);
  if (reader == nullptr) {
    FUZZ_CHECK(!error.empty() && error.find('\n') == std::string::npos);
    return;
  }
  Line line;
  uint64_t count = 0;
  uint64_t text_bytes = 0;
  while (reader->Next(&line)) {
    // The parts of a line cut by carriage returns share its number.
    FUZZ_CHECK(line.number == count + 1 || (count > 0 && line.number == count));
    count = line.number;
    FUZZ_CHECK(line.text.size() <= faultline::kMaxLineBytes);
    FUZZ_CHECK(line.text.find('\n') == std::string_view::npos);
    text_bytes += line.text.size();
  }
  FUZZ_CHECK(!reader->Next(&line));  // stays at the end
  FUZZ_CHECK(reader->lines() == count);
  FUZZ_CHECK(reader->cut_lines() <= count);
  FUZZ_CHECK(text_bytes <= reader->bytes());
  FUZZ_CHECK(reader->bytes() <= max_bytes);
  const std::string& why = reader->error();
  FUZZ_CHECK(why.empty() || (why.starts_with(path + ": ") && why.find('\n') == std::string::npos));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static faultline::fuzz::MemoryFile file("fuzz_source");
  const std::string& path = file.Write(data, size);
  ReadAll(path, faultline::fuzz::kMaxBytes);
  // Again with a limit that plain text reaches too (--max-bytes).
  ReadAll(path, 1 + size / 2);
  return 0;
}
