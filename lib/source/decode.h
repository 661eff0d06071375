// Private to lib/source: raw input and the decoders of each compression format.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace faultline::source_internal {

// A stream of bytes. Read() returns 0 at the end; error() then says whether the end came early.
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Reads up to `size` bytes into `data`; returns how many (0 at the end or on an error).
  virtual size_t Read(char* data, size_t size) = 0;
  // Empty, or why the stream stopped early, without the path ("truncated gzip stream").
  virtual const std::string& error() const = 0;
  // Whether more bytes can be read without waiting for another process to write them: false
  // only while a pipe, FIFO or terminal has nothing new. Sniffing a live input stops there, so
  // that its first lines are read as they come, not once kilobytes have gathered.
  virtual bool Ready() const { return true; }
};

// The bytes of a file or of standard input ("-").
class FileInput final : public ByteStream {
 public:
  // Returns nullptr on failure and sets *error to "PATH: reason".
  static std::unique_ptr<FileInput> Open(const std::string& path, std::string* error);
  ~FileInput() override;
  FileInput(const FileInput&) = delete;
  FileInput& operator=(const FileInput&) = delete;

  // Up to `size` leading bytes, left to be read again; fewer only at the end of the input, or of
  // what a live input has so far (Ready()).
  std::string_view Peek(size_t size);
  // A regular file: reading it never waits on another process.
  bool regular_file() const { return regular_file_; }
  size_t Read(char* data, size_t size) override;
  const std::string& error() const override { return error_; }
  bool Ready() const override;

 private:
  FileInput(int fd, bool owned, bool regular_file)
      : fd_(fd), owned_(owned), regular_file_(regular_file) {}
  size_t ReadFd(char* data, size_t size);
  bool Readable() const;  // the descriptor has bytes, or its end, for a read

  int fd_;
  bool owned_;  // false for standard input, which is not ours to close
  bool regular_file_;
  std::string head_;  // peeked bytes not yet read
  std::string error_;
};

enum class Compression { kNone, kGzip, kBzip2, kXz, kZstd };

// Recognises a format from the first bytes of an input.
Compression SniffCompression(std::string_view head);
// "none", "gzip", "bzip2", "xz" or "zstd".
std::string_view CompressionName(Compression compression);

// Wraps `input` in the decoder of `compression` (or returns it as is for kNone). Returns nullptr
// and sets *error (without the path) if the decoder cannot start.
std::unique_ptr<ByteStream> MakeDecoder(Compression compression, std::unique_ptr<ByteStream> input,
                                        std::string* error);

enum class TextEncoding { kUtf16Le, kUtf16Be };

// UTF-16 text, recognised by its byte order mark; nullopt for anything else (UTF-8 is read as is).
std::optional<TextEncoding> SniffUtf16(std::string_view head);

// `input` (UTF-16 in `encoding`, at its byte order mark) as UTF-8 text. Returns nullptr and sets
// *error (without the path) if the conversion cannot start.
std::unique_ptr<ByteStream> Utf16ToUtf8(TextEncoding encoding, std::unique_ptr<ByteStream> input,
                                        std::string* error);

// Runs `stream` on a thread of its own that reads ahead into a few large buffers, so that
// decompressing and splitting lines use two cores. Only for streams whose reads never wait on
// another process (a regular file): the thread is joined when the returned stream is destroyed.
std::unique_ptr<ByteStream> ReadAhead(std::unique_ptr<ByteStream> stream);

}  // namespace faultline::source_internal
