#include "source/source.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>
#include <utility>

#include "source/archive.h"
#include "source/decode.h"

namespace faultline {
namespace {

using source_internal::ByteStream;
using source_internal::Compression;
using source_internal::Container;
using source_internal::PeekStream;
using source_internal::SizeName;
using source_internal::Unwrapped;

namespace fs = std::filesystem;

constexpr size_t kBufferBytes = size_t{256} * 1024;
// A partial line (at most kMaxLineBytes plus "\r\n") stays in the buffer while more is read.
static_assert(kBufferBytes >= 2 * (kMaxLineBytes + 2));
// Leading decoded bytes that decide whether an input is text.
constexpr size_t kSniffBytes = 4096;
// The longest magic number (xz).
constexpr size_t kMagicBytes = 6;

// Length of the UTF-8 sequence that starts `s`, or 0 if none does. A sequence cut short by the
// end of `s` counts: the sniffed prefix may end inside one.
size_t Utf8Length(std::string_view s) {
  auto lead = static_cast<unsigned char>(s[0]);
  size_t length = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
  } else {
    return 0;
  }
  length = std::min(length, s.size());
  for (size_t i = 1; i < length; ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80) return 0;
  }
  return length;
}

// Control characters that text logs do contain: whitespace, backspace and ESC (ANSI colours).
bool IsTextControl(unsigned char c) {
  return (c >= '\b' && c <= '\r') || c == 0x1b;
}

// Binary if `head` holds a NUL byte, or if more than 30% of it is control characters or
// bytes that are not UTF-8.
bool LooksBinary(std::string_view head) {
  if (head.find('\0') != std::string_view::npos) return true;
  size_t odd = 0;
  for (size_t i = 0; i < head.size();) {
    auto c = static_cast<unsigned char>(head[i]);
    size_t length = 1;
    if (c >= 0x80) {
      length = std::max<size_t>(Utf8Length(head.substr(i)), 1);
      if (length == 1) ++odd;
    } else if ((c < 0x20 && !IsTextControl(c)) || c == 0x7f) {
      ++odd;
    }
    i += length;
  }
  return odd * 10 > head.size() * 3;
}

std::string Plural(uint64_t count, std::string_view noun) {
  return std::to_string(count) + " " + std::string(noun) + (count == 1 ? "" : "s");
}

class LineReaderImpl final : public LineReader {
 public:
  LineReaderImpl(std::string path, Compression compression, std::unique_ptr<ByteStream> stream,
                 uint64_t max_bytes)
      : path_(std::move(path)),
        compression_(source_internal::CompressionName(compression)),
        stream_(std::move(stream)),
        buffer_(new char[kBufferBytes]),
        max_bytes_(max_bytes) {}

  bool Next(Line* line) override;

  const std::string& path() const override { return path_; }
  std::string_view compression() const override { return compression_; }
  uint64_t bytes() const override { return bytes_; }
  uint64_t lines() const override { return lines_; }
  uint64_t cut_lines() const override { return cut_lines_; }
  const std::string& error() const override { return error_; }

 private:
  void CheckText();
  void Fill();
  bool Yield(size_t length, size_t consumed, Line* line, bool part = false);

  std::string path_;
  std::string_view compression_;
  std::unique_ptr<ByteStream> stream_;
  std::unique_ptr<char[]> buffer_;
  uint64_t max_bytes_;
  size_t begin_ = 0;  // unread text is buffer_[begin_, end_)
  size_t end_ = 0;
  bool checked_ = false;
  bool binary_ = false;
  bool stream_done_ = false;
  bool skipping_ = false;  // dropping the rest of a line cut at kMaxLineBytes
  bool in_line_ = false;   // parts of the current line have been yielded
  uint64_t bytes_ = 0;
  uint64_t lines_ = 0;
  uint64_t cut_lines_ = 0;
  std::string error_;
};

// Reads more text after the unread part, which moves to the front of the buffer first.
void LineReaderImpl::Fill() {
  if (begin_ > 0) {
    std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (bytes_ >= max_bytes_) {
    // At the limit: stop, unless the input ends right here.
    char probe = 0;
    if (stream_->Read(&probe, 1) > 0) {
      stream_done_ = true;
      error_ = path_ + ": stopped after " + SizeName(max_bytes_) +
               " of text (--max-bytes); the rest is not read";
      return;
    }
  } else {
    const size_t room =
        static_cast<size_t>(std::min<uint64_t>(kBufferBytes - end_, max_bytes_ - bytes_));
    size_t got = stream_->Read(buffer_.get() + end_, room);
    end_ += got;
    bytes_ += got;
    if (got > 0) return;
  }
  stream_done_ = true;
  if (!stream_->error().empty()) {
    error_ = path_ + ": " + stream_->error() + " after " + Plural(lines_, "line");
  }
}

void LineReaderImpl::CheckText() {
  checked_ = true;
  // A live input is judged by what it has written so far.
  while (end_ < kSniffBytes && !stream_done_ && (end_ == 0 || stream_->Ready())) Fill();
  binary_ = LooksBinary(std::string_view(buffer_.get(), std::min(end_, kSniffBytes)));
  if (binary_) error_ = path_ + ": binary data, not a text log";
}

// Yields the `length` bytes at begin_ as a line, without a final "\r", and consumes `consumed`.
// A `part` of a line (before a carriage return) has the number of the line it is part of.
bool LineReaderImpl::Yield(size_t length, size_t consumed, Line* line, bool part) {
  const char* text = buffer_.get() + begin_;
  if (length > 0 && text[length - 1] == '\r') --length;
  if (length > kMaxLineBytes) {
    length = kMaxLineBytes;
    ++cut_lines_;
  }
  begin_ += consumed;
  line->text = std::string_view(text, length);
  // A line is counted at its first part, so that one whose end never comes still counts.
  if (!in_line_) ++lines_;
  in_line_ = part;
  line->number = lines_;
  return true;
}

bool LineReaderImpl::Next(Line* line) {
  if (!checked_) CheckText();
  if (binary_) return false;
  while (true) {
    const char* text = buffer_.get() + begin_;
    size_t available = end_ - begin_;
    if (skipping_) {
      const void* newline = std::memchr(text, '\n', available);
      if (newline != nullptr) {
        begin_ += static_cast<const char*>(newline) - text + 1;
        skipping_ = false;
        continue;
      }
      begin_ = end_;  // the dropped rest is never kept
    } else {
      // The longest line that is not cut, with its "\r\n".
      size_t window = std::min(available, kMaxLineBytes + 2);
      const void* newline = std::memchr(text, '\n', window);
      // A carriage return inside a line (a progress bar redrawn in place) ends what a terminal
      // showed: each part is a line of its own, under the line's number, so that what was
      // written after the bar is read however long the bar grew. A "\r" right before the
      // "\n" is the line end's.
      const size_t line_end =
          newline != nullptr ? static_cast<const char*>(newline) - text : window;
      if (line_end > 1) {
        const void* ret = std::memchr(text, '\r', line_end - 1);
        if (ret != nullptr) {
          const size_t length = static_cast<const char*>(ret) - text;
          if (length == 0) {
            ++begin_;
            continue;
          }
          return Yield(length, length + 1, line, /*part=*/true);
        }
      }
      if (newline != nullptr) {
        size_t length = static_cast<const char*>(newline) - text;
        return Yield(length, length + 1, line);
      }
      if (window == kMaxLineBytes + 2) {
        skipping_ = true;
        return Yield(window, window, line);
      }
      // A damaged last line of a truncated or corrupt stream is not yielded.
      if (stream_done_) return available > 0 && error_.empty() && Yield(available, available, line);
    }
    if (stream_done_) return false;
    Fill();
  }
}

// Adds the entries of `dir` (sorted, hidden ones left out) and of its subfolders to *inputs.
void Walk(const fs::path& dir, std::set<fs::path>* visited, std::vector<std::string>* inputs,
          std::vector<std::string>* warnings) {
  std::error_code ec;
  fs::path canonical = fs::canonical(dir, ec);
  if (ec) {
    warnings->push_back(dir.string() + ": " + ec.message());
    return;
  }
  // A symlink back to a folder already listed would recurse forever.
  if (!visited->insert(canonical).second) return;

  std::vector<fs::path> entries;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().filename().string().starts_with('.')) continue;
    entries.push_back(it->path());
  }
  if (ec) {
    warnings->push_back(dir.string() + ": " + ec.message());
    return;
  }
  std::sort(entries.begin(), entries.end());

  for (const fs::path& entry : entries) {
    fs::file_status status = fs::status(entry, ec);
    if (ec) {
      warnings->push_back(entry.string() + ": " + ec.message());
    } else if (fs::is_directory(status)) {
      Walk(entry, visited, inputs, warnings);
    } else if (fs::is_regular_file(status)) {
      // Only regular files: a FIFO or socket found in a folder could block forever.
      inputs->push_back(entry.string());
    }
  }
}

// Counts the bytes read from a file, for the compression-ratio cap of an archive. Atomic: a
// compressed file is read on the read-ahead thread.
class CountingStream final : public ByteStream {
 public:
  CountingStream(std::unique_ptr<ByteStream> input, std::shared_ptr<std::atomic<uint64_t>> count)
      : input_(std::move(input)), count_(std::move(count)) {}
  size_t Read(char* data, size_t size) override {
    const size_t got = input_->Read(data, size);
    *count_ += got;
    return got;
  }
  const std::string& error() const override { return input_->error(); }
  bool Ready() const override { return input_->Ready(); }

 private:
  std::unique_ptr<ByteStream> input_;
  std::shared_ptr<std::atomic<uint64_t>> count_;
};

// Opens the file `path` and undoes its compression or UTF-16; counts its bytes in *raw_bytes.
bool OpenFile(const std::string& path, std::shared_ptr<std::atomic<uint64_t>> raw_bytes,
              Unwrapped* out, std::string* error) {
  auto input = source_internal::FileInput::Open(path, error);
  if (input == nullptr) return false;
  input->Peek(kMagicBytes);
  if (!input->error().empty()) {
    *error = path + ": " + input->error();
    return false;
  }
  // Decompression is most of the work of a compressed input: give it a core of its own. Plain
  // text is read faster than a thread could hand it over.
  const bool read_ahead = input->regular_file();
  std::string why;
  auto counted = std::make_unique<CountingStream>(std::move(input), std::move(raw_bytes));
  if (!source_internal::Unwrap(std::make_unique<PeekStream>(std::move(counted)), read_ahead, out,
                               &why)) {
    *error = path + ": " + why;
    return false;
  }
  return true;
}

// An input that is not an archive: one member, the file itself.
class FileMembers final : public Input {
 public:
  explicit FileMembers(std::unique_ptr<LineReader> reader) : reader_(std::move(reader)) {}
  bool archive() const override { return false; }
  bool Next(Member* member, std::vector<std::string>* /*warnings*/) override {
    if (reader_ == nullptr) return false;
    *member = Member{std::move(reader_), {}, 0};
    return true;
  }

 private:
  std::unique_ptr<LineReader> reader_;
};

}  // namespace

namespace source_internal {

std::string SizeName(uint64_t bytes) {
  constexpr std::string_view kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + std::string(kUnits[unit]);
}

std::string_view PeekStream::Peek(size_t size) {
  size_t have = head_.size();
  if (have >= size) return std::string_view(head_).substr(0, size);
  head_.resize(size);
  while (have < size && (have == 0 || input_->Ready())) {
    const size_t got = input_->Read(head_.data() + have, size - have);
    if (got == 0) break;
    have += got;
  }
  head_.resize(have);
  return head_;
}

size_t PeekStream::Read(char* data, size_t size) {
  if (head_.empty()) return input_->Read(data, size);
  const size_t n = std::min(size, head_.size());
  std::memcpy(data, head_.data(), n);
  head_.erase(0, n);
  return n;
}

bool Unwrap(std::unique_ptr<PeekStream> input, bool read_ahead, Unwrapped* out, std::string* why) {
  const std::string_view head = input->Peek(kMagicBytes);
  if (const auto utf16 = SniffUtf16(head)) {
    auto text = Utf16ToUtf8(*utf16, std::move(input), why);
    if (text == nullptr) return false;
    out->stream = std::make_unique<PeekStream>(std::move(text));
    return true;
  }
  out->compression = SniffCompression(head);
  std::unique_ptr<PeekStream> decoded = std::move(input);
  if (out->compression != Compression::kNone) {
    auto stream = MakeDecoder(out->compression, std::move(decoded), why);
    if (stream == nullptr) return false;
    if (read_ahead) stream = ReadAhead(std::move(stream));
    decoded = std::make_unique<PeekStream>(std::move(stream));
  }
  out->container = SniffContainer(decoded->Peek(kContainerMagicBytes));
  out->stream = std::move(decoded);
  return true;
}

std::unique_ptr<LineReader> MakeLineReader(std::string path, Compression compression,
                                           std::unique_ptr<ByteStream> stream, uint64_t max_bytes) {
  return std::make_unique<LineReaderImpl>(std::move(path), compression, std::move(stream),
                                          max_bytes);
}

}  // namespace source_internal

std::unique_ptr<LineReader> LineReader::Open(const std::string& path, std::string* error,
                                             uint64_t max_bytes) {
  Unwrapped unwrapped;
  if (!OpenFile(path, std::make_shared<std::atomic<uint64_t>>(0), &unwrapped, error)) {
    return nullptr;
  }
  return std::make_unique<LineReaderImpl>(path, unwrapped.compression, std::move(unwrapped.stream),
                                          max_bytes);
}

std::unique_ptr<Input> Input::Open(const std::string& path, std::string* error,
                                   uint64_t max_bytes) {
  auto raw_bytes = std::make_shared<std::atomic<uint64_t>>(0);
  Unwrapped unwrapped;
  if (!OpenFile(path, raw_bytes, &unwrapped, error)) return nullptr;
  switch (unwrapped.container) {
    case Container::kTar:
    case Container::kZip:
      return source_internal::OpenArchive(path, std::move(unwrapped), std::move(raw_bytes),
                                          max_bytes, error);
    case Container::kSevenZip:
      *error = path + ": " + std::string(source_internal::kSevenZipRefused);
      return nullptr;
    case Container::kNone:
      break;
  }
  return std::make_unique<FileMembers>(std::make_unique<LineReaderImpl>(
      path, unwrapped.compression, std::move(unwrapped.stream), max_bytes));
}

std::vector<std::string> expand_inputs(const std::vector<std::string>& args,
                                       std::vector<std::string>* warnings) {
  std::vector<std::string> inputs;
  std::set<fs::path> visited;
  for (const std::string& arg : args) {
    if (arg == "-") {
      inputs.push_back(arg);
      continue;
    }
    std::error_code ec;
    fs::file_status status = fs::status(arg, ec);
    if (ec) {
      warnings->push_back(arg + ": " + ec.message());
    } else if (fs::is_directory(status)) {
      Walk(arg, &visited, &inputs, warnings);
    } else {
      inputs.push_back(arg);
    }
  }
  return inputs;
}

}  // namespace faultline
