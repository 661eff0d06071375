// Private to lib/source: opening an input whatever wraps it (compression, UTF-16, an archive),
// and the tar and zip archives that libarchive reads member by member.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "source/decode.h"
#include "source/source.h"

namespace faultline::source_internal {

// A stream whose first bytes can be looked at before they are read.
class PeekStream final : public ByteStream {
 public:
  explicit PeekStream(std::unique_ptr<ByteStream> input) : input_(std::move(input)) {}
  // Up to `size` leading bytes, left to be read again; fewer only at the end of the stream, or
  // of what a live stream has so far (Ready()).
  std::string_view Peek(size_t size);
  size_t Read(char* data, size_t size) override;
  const std::string& error() const override { return input_->error(); }
  bool Ready() const override { return !head_.empty() || input_->Ready(); }

 private:
  std::unique_ptr<ByteStream> input_;
  std::string head_;  // peeked bytes not yet read
};

enum class Container { kNone, kTar, kZip, kSevenZip };

// Leading bytes of a decoded stream that tell an archive: a tar header is 512 bytes.
inline constexpr size_t kContainerMagicBytes = 512;
Container SniffContainer(std::string_view head);

// A stream with its wrappers undone: compression or UTF-16, and what it holds.
struct Unwrapped {
  std::unique_ptr<PeekStream> stream;
  Compression compression = Compression::kNone;
  Container container = Container::kNone;
};

// Undoes the compression or UTF-16 of `input` (peeked at its magic bytes) and sniffs the result.
// `read_ahead`: decode on a thread of its own (only for streams that never wait on a process).
// Returns false with *why set (without the path) if a decoder cannot start.
bool Unwrap(std::unique_ptr<PeekStream> input, bool read_ahead, Unwrapped* out, std::string* why);

// Why a 7z archive is not read: libarchive reads 7z only from a seekable file, not as a stream.
inline constexpr std::string_view kSevenZipRefused =
    "a 7z archive, not read (faultline reads tar and zip archives; extract it first)";

// "16 GiB", "100 MiB", "1000 bytes": the largest binary unit that states `bytes` exactly.
std::string SizeName(uint64_t bytes);

// The line reader of `stream`, named `path` (source.cpp).
std::unique_ptr<LineReader> MakeLineReader(std::string path, Compression compression,
                                           std::unique_ptr<ByteStream> stream, uint64_t max_bytes);

// The members of the archive `path`, read from `unwrapped`. `raw_bytes` counts the bytes read
// from the file itself, for the compression-ratio cap. On failure returns nullptr and sets
// *error to a one-line reason that names the path.
std::unique_ptr<Input> OpenArchive(const std::string& path, Unwrapped unwrapped,
                                   std::shared_ptr<std::atomic<uint64_t>> raw_bytes,
                                   uint64_t max_bytes, std::string* error);

}  // namespace faultline::source_internal
