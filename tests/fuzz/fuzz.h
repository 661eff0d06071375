// Shared by the fuzz targets: a check that survives release builds, and an in-memory file.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

// Like assert(), but kept in every build type, so that libFuzzer records the input.
#define FUZZ_CHECK(condition)                                                            \
  do {                                                                                   \
    if (!(condition)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (false)

namespace faultline::fuzz {

// Decompressed text a target reads from one input: a bomb reaches it in milliseconds.
inline constexpr uint64_t kMaxBytes = uint64_t{1} << 20;

// A file that lives in memory (memfd), rewritten for each input, with a path that opens it.
class MemoryFile {
 public:
  explicit MemoryFile(const char* name) : fd_(memfd_create(name, MFD_CLOEXEC)) {
    FUZZ_CHECK(fd_ >= 0);
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  // Replaces the contents with `size` bytes at `data`; returns the path.
  const std::string& Write(const uint8_t* data, size_t size) {
    FUZZ_CHECK(ftruncate(fd_, 0) == 0);
    size_t done = 0;
    while (done < size) {
      const ssize_t wrote = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      FUZZ_CHECK(wrote > 0);
      done += static_cast<size_t>(wrote);
    }
    return path_;
  }

 private:
  int fd_;
  std::string path_;
};

// The lines of `text` split at "\n", as the line reader would yield them (without the "\r").
inline std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

}  // namespace faultline::fuzz
