// Archives on arbitrary bytes: tar (plain or compressed) and zip, whole, cut, corrupt or nested.
// Every member is named inside its archive, every warning is one line, the caps hold, and
// reading always ends.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz.h"
#include "source/source.h"

namespace {

using faultline::Input;
using faultline::Line;
using faultline::Member;

void ReadAll(const std::string& path, uint64_t max_bytes) {
  std::string error;
  const std::unique_ptr<Input> input = Input::Open(path, &error, max_bytes);
  if (input == nullptr) {
    FUZZ_CHECK(!error.empty() && error.find('\n') == std::string::npos);
    return;
  }
  std::vector<std::string> warnings;
  Member member;
  uint64_t members = 0;
  uint64_t text_bytes = 0;
  while (input->Next(&member, &warnings)) {
    ++members;
    FUZZ_CHECK(members <= faultline::kMaxArchiveMembers);
    const std::string& name = member.reader->path();
    FUZZ_CHECK(input->archive() ? name.starts_with(path + "!") : name == path);
    FUZZ_CHECK(name.find('\n') == std::string::npos);
    Line line;
    while (member.reader->Next(&line)) {
      FUZZ_CHECK(line.text.size() <= faultline::kMaxLineBytes);
    }
    FUZZ_CHECK(member.reader->bytes() <= max_bytes);
    text_bytes += member.reader->bytes();
    const std::string& why = member.reader->error();
    FUZZ_CHECK(why.empty() ||
               (why.starts_with(name + ": ") && why.find('\n') == std::string::npos));
    member.reader.reset();
  }
  FUZZ_CHECK(text_bytes <= max_bytes);
  FUZZ_CHECK(!input->Next(&member, &warnings));  // stays at the end
  for (const std::string& warning : warnings) {
    FUZZ_CHECK(warning.starts_with(path) && warning.find('\n') == std::string::npos);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static faultline::fuzz::MemoryFile file("fuzz_archive");
  const std::string& path = file.Write(data, size);
  ReadAll(path, faultline::fuzz::kMaxBytes);
  // Again with an archive total that members reach (--max-bytes).
  ReadAll(path, 1 + size / 2);
  return 0;
}
