// Opens inputs (files, folders, stdin), undoes their compression and yields their lines.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace faultline {

// Lines longer than this are cut to it; the rest of the line is skipped, never held.
inline constexpr size_t kMaxLineBytes = size_t{64} * 1024;

// Decompressed text read from one input before reading it stops (--max-bytes).
inline constexpr uint64_t kDefaultMaxBytes = uint64_t{4} << 30;

struct Line {
  std::string_view text;  // without its terminator ("\n" or "\r\n"); valid until the next read
  uint64_t number = 0;    // 1-based; the parts of a line that "\r"s divide share its number
};

// A stream of lines from one input. Memory stays bounded whatever the input's size.
class LineReader {
 public:
  // Opens `path` ("-" is standard input) and sniffs its compression from magic bytes:
  // gzip (multi-member too), bzip2, xz, zstd, or none. On failure returns nullptr and sets
  // *error to a one-line reason that names the path. Reading stops, with error() saying so,
  // once `max_bytes` of (decompressed) text have been read.
  static std::unique_ptr<LineReader> Open(const std::string& path, std::string* error,
                                          uint64_t max_bytes = kDefaultMaxBytes);

  virtual ~LineReader() = default;

  // Reads the next line into *line. Returns false at the end of the input, or when reading
  // stopped early; error() then says why.
  virtual bool Next(Line* line) = 0;

  virtual const std::string& path() const = 0;
  // "none", "gzip", "bzip2", "xz" or "zstd".
  virtual std::string_view compression() const = 0;
  // Bytes of (decompressed) text read so far, and lines yielded.
  virtual uint64_t bytes() const = 0;
  virtual uint64_t lines() const = 0;
  // Lines cut at kMaxLineBytes.
  virtual uint64_t cut_lines() const = 0;
  // Empty while all is well; otherwise a one-line reason reading stopped early that names the
  // path ("truncated gzip stream", "binary data"). Lines yielded before it remain valid.
  virtual const std::string& error() const = 0;
};

// Expands command-line arguments into inputs: files as given, folders recursively in sorted
// order (symlink loops are not followed twice), "-" as is. Paths that do not exist or cannot
// be listed add a one-line warning to *warnings and are left out.
std::vector<std::string> expand_inputs(const std::vector<std::string>& args,
                                       std::vector<std::string>* warnings);

}  // namespace faultline
