#include "source/source.h"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
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
// A file's text is told from binary data by region, so that the lines of a syslog around the
// NUL bytes a hard reset leaves in it, or after a few KB of junk, are still read.
//
// The first lines up to one of at least kMinTextBytes of text (kHeadBytes at most) decide
// whether an input is text at all: binary data without such a line is refused whole.
constexpr size_t kHeadBytes = size_t{64} * 1024;
constexpr size_t kMinTextBytes = 16;
static_assert(kBufferBytes >= kHeadBytes + kMaxLineBytes + 2);
// After that, only lines within this distance of a NUL byte (binary data holds one every few
// hundred bytes) are looked at byte by byte: the plain text path costs one memchr for NULs.
constexpr uint64_t kNulZoneBytes = 4096;
// Binary data other than NULs for this long in a row ends the reading (a text header before a
// binary payload); a run of NULs, what a crash leaves, is skipped whatever its length.
constexpr uint64_t kMaxBinaryRunBytes = uint64_t{64} * 1024;
constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
// The longest magic number (xz).
constexpr size_t kMagicBytes = 6;

// Length of the UTF-8 sequence that starts `s`, or 0 if none does. A sequence cut short by the
// end of `s` counts: a line cut at kMaxLineBytes may end inside one.
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

// The end of the run of NUL bytes at s[i], a word at a time.
size_t NulRunEnd(std::string_view s, size_t i) {
  uint64_t word = 0;
  while (i + sizeof word <= s.size()) {
    std::memcpy(&word, s.data() + i, sizeof word);
    if (word != 0) break;
    i += sizeof word;
  }
  while (i < s.size() && s[i] == '\0') ++i;
  return i;
}

// How a line (without its "\n") splits into binary data and text.
struct LineBytes {
  size_t binary = 0;                         // length of the binary run the line starts with
  bool junk = false;                         // that run holds bytes other than NULs
  size_t last_nul = std::string_view::npos;  // the line's last NUL byte
  // What follows the run is text beyond doubt: kMinTextBytes or more, no NUL, at most 10% odd.
  bool text = false;
};

// Odd bytes (NULs, other control characters, bytes that are not UTF-8) count +7, the others -3:
// the binary run at the start of `line` is its prefix of the highest score, if that is above 0.
// What follows is then at most 30% odd in every prefix, so a line of text with a few stray bad
// bytes stays whole. After a binary run, only text beyond doubt is kept (the end of junk is
// often a few bytes that look like text).
LineBytes SplitBinary(std::string_view line) {
  constexpr int64_t kOdd = 7;
  constexpr int64_t kClean = -3;
  LineBytes split;
  int64_t score = 0;
  int64_t best = 0;
  bool junk = false;
  size_t odd = 0;  // odd bytes and NULs: in all, and in the binary run
  size_t nuls = 0;
  size_t odd_in_run = 0;
  size_t nuls_in_run = 0;
  for (size_t i = 0; i < line.size();) {
    auto c = static_cast<unsigned char>(line[i]);
    size_t length = 1;
    if (c == 0) {
      length = NulRunEnd(line, i) - i;
      split.last_nul = i + length - 1;
      nuls += length;
      score += kOdd * static_cast<int64_t>(length);
    } else if (c >= 0x80) {
      length = Utf8Length(line.substr(i));
      if (length == 0) {
        length = 1;
        junk = true;
        ++odd;
        score += kOdd;
      } else {
        score += kClean * static_cast<int64_t>(length);
      }
    } else if ((c < 0x20 && !IsTextControl(c)) || c == 0x7f) {
      junk = true;
      ++odd;
      score += kOdd;
    } else {
      score += kClean;
    }
    i += length;
    if (score > best) {
      best = score;
      split.binary = i;
      split.junk = junk;
      odd_in_run = odd;
      nuls_in_run = nuls;
    }
  }
  const size_t rest = line.size() - split.binary;
  split.text = rest >= kMinTextBytes && nuls == nuls_in_run && (odd - odd_in_run) * 10 <= rest;
  // A short line with odd bytes near binary data is more likely part of it than text.
  const bool short_and_odd = line.size() < kMinTextBytes && odd + nuls > 0;
  if ((split.binary > 0 && !split.text) || short_and_odd) {
    split.binary = line.size();
    split.junk = junk;
  }
  return split;
}

// "8 KiB", "4.9 KiB", "300 bytes".
std::string RoundedSize(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  constexpr std::string_view kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  auto value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && value >= 1024) {
    value /= 1024;
    ++unit;
  }
  std::array<char, 32> digits{};
  const int precision = value < 10 ? 1 : 0;
  auto [end, ec] =
      std::to_chars(digits.begin(), digits.end(), value, std::chars_format::fixed, precision);
  std::string number(digits.begin(), end);
  if (number.ends_with(".0")) number.resize(number.size() - 2);
  return number + " " + std::string(kUnits[unit]);
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
  std::string notice() const override {
    if (binary_bytes_ == 0) return "";
    return path_ + ": " + RoundedSize(binary_bytes_) + " of binary data skipped at byte " +
           std::to_string(first_binary_at_);
  }

 private:
  void CheckText();
  void Fill();
  bool Yield(size_t length, size_t consumed, Line* line, bool part = false);
  // The text offset of buffer_[index].
  uint64_t Offset(size_t index) const { return bytes_ - end_ + index; }
  bool NearNul(size_t begin, size_t end);
  // Looks at the line buffer_[begin_, begin_ + length) byte by byte; skips the binary data it
  // starts with. Returns false when that ends the reading.
  bool SkipBinary(size_t length, size_t consumed_if_binary);

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
  // Text offsets: lines before head_end_ (those CheckText looked at) and before text_until_ (a
  // line split already) are not split again.
  uint64_t head_end_ = 0;
  uint64_t text_until_ = 0;
  // The last NUL byte seen, and the first at or after nul_from_ (kNone: none up to nul_to_).
  uint64_t last_nul_ = kNone;
  uint64_t next_nul_ = kNone;
  uint64_t nul_to_ = 0;
  // Binary data skipped: in all, where it was first met, and since the last line of text.
  uint64_t binary_bytes_ = 0;
  uint64_t first_binary_at_ = 0;
  uint64_t binary_run_ = 0;
  uint64_t binary_run_at_ = 0;
  bool binary_run_junk_ = false;
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

// Reads lines ahead, yielding none, until one holds kMinTextBytes of text. Binary data up to
// kHeadBytes, or to the end, without such a line is no text log; short or blank lines without
// binary data are text.
void LineReaderImpl::CheckText() {
  checked_ = true;
  size_t at = 0;
  bool binary_seen = false;
  while (at < kHeadBytes) {
    const size_t window = std::min(end_ - at, kMaxLineBytes + 2);
    const void* newline = std::memchr(buffer_.get() + at, '\n', window);
    if (newline == nullptr && window < kMaxLineBytes + 2 && !stream_done_) {
      Fill();
      continue;
    }
    if (at == end_) break;
    const size_t length =
        newline != nullptr ? static_cast<const char*>(newline) - (buffer_.get() + at) : window;
    const LineBytes split = SplitBinary(std::string_view(buffer_.get() + at, length));
    if (split.text) {
      head_end_ = Offset(at + length);
      return;
    }
    binary_seen = binary_seen || split.binary > 0;
    at += length + (newline != nullptr ? 1 : 0);
  }
  head_end_ = Offset(at);
  binary_ = binary_seen;  // short lines of text (or blank ones) without binary data are text
  if (binary_) error_ = path_ + ": binary data, not a text log";
}

// Whether a NUL byte lies within kNulZoneBytes of buffer_[begin, end).
bool LineReaderImpl::NearNul(size_t begin, size_t end) {
  const uint64_t from = Offset(begin);
  if (last_nul_ != kNone && from < last_nul_ + kNulZoneBytes) return true;
  if (next_nul_ != kNone && next_nul_ < from) {
    // Passed by a line too long to be looked at: search again from here.
    next_nul_ = kNone;
  }
  nul_to_ = std::max(nul_to_, from);
  if (next_nul_ == kNone && nul_to_ < Offset(end_)) {
    const char* search = buffer_.get() + (nul_to_ - Offset(0));
    const void* nul = std::memchr(search, '\0', Offset(end_) - nul_to_);
    next_nul_ = nul != nullptr ? Offset(static_cast<const char*>(nul) - buffer_.get()) : kNone;
    nul_to_ = Offset(end_);
  }
  return next_nul_ != kNone && next_nul_ < Offset(end) + kNulZoneBytes;
}

bool LineReaderImpl::SkipBinary(size_t length, size_t consumed_if_binary) {
  const LineBytes split = SplitBinary(std::string_view(buffer_.get() + begin_, length));
  if (split.last_nul != std::string_view::npos) last_nul_ = Offset(begin_ + split.last_nul);
  const bool all_binary = length > 0 && split.binary == length;
  // The line's text (what is left of it) is not looked at again.
  if (!all_binary) text_until_ = Offset(begin_ + consumed_if_binary);
  const size_t skipped = all_binary ? consumed_if_binary : split.binary;
  if (skipped > 0) {
    if (binary_bytes_ == 0) first_binary_at_ = Offset(begin_);
    if (binary_run_ == 0) binary_run_at_ = Offset(begin_);
    binary_bytes_ += skipped;
    binary_run_ += skipped;
    binary_run_junk_ = binary_run_junk_ || split.junk;
    begin_ += skipped;
    if (binary_run_ > kMaxBinaryRunBytes && binary_run_junk_) {
      error_ = path_ + ": binary data from byte " + std::to_string(binary_run_at_) +
               " on; the rest is not read";
      stream_done_ = true;
      begin_ = end_;
      return false;
    }
  }
  if (split.text) {
    binary_run_ = 0;
    binary_run_junk_ = false;
  }
  return true;
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
      if (available > 0 && Offset(begin_) >= text_until_ &&
          (Offset(begin_) < head_end_ || NearNul(begin_, begin_ + line_end))) {
        if (newline != nullptr || window == kMaxLineBytes + 2 || stream_done_) {
          if (!SkipBinary(line_end, line_end + (newline != nullptr ? 1 : 0))) return false;
          continue;
        }
        Fill();  // a line near binary data is split only once it is whole
        continue;
      }
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

// File systems of the kernel's own state: reading there can block for ever (/proc/kmsg,
// trace_pipe) or take messages from the system logger, and nothing there is a log to diagnose.
bool KernelFileSystem(const fs::path& path) {
  struct statfs info {};
  if (statfs(path.c_str(), &info) != 0) return false;
  switch (info.f_type) {
    case PROC_SUPER_MAGIC:
    case SYSFS_MAGIC:
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
      return true;
    default:
      return false;
  }
}

using FileId = std::pair<dev_t, ino_t>;

std::optional<FileId> IdOf(const fs::path& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return std::nullopt;
  return FileId{info.st_dev, info.st_ino};
}

// Adds the regular files below the folder argument `root` to *inputs, in sorted order, hidden
// entries left out. Symbolic links are followed only if `follow`, and then each folder and file
// is taken once, known by device and inode. One folder after another is listed with nothing
// recomputed for the levels above it, so the cost grows with the entries, whatever the depth.
void Walk(const fs::path& root, bool follow, std::set<FileId>* seen,
          std::vector<std::string>* inputs, std::vector<std::string>* warnings) {
  struct Folder {
    std::vector<fs::directory_entry> entries;
    size_t next = 0;
  };
  std::vector<Folder> stack;
  uint64_t links = 0;    // symbolic links not followed
  uint64_t special = 0;  // devices, sockets, FIFOs
  std::string first_special;

  auto enter = [&](const fs::path& dir) {
    if (KernelFileSystem(dir)) {
      warnings->push_back(dir.string() +
                          ": not walked into (the kernel's proc, sysfs, debugfs or tracefs)");
      return;
    }
    if (follow) {
      // A link back to a folder already listed would walk it forever.
      const std::optional<FileId> id = IdOf(dir);
      if (id && !seen->insert(*id).second) return;
    }
    Folder folder;
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      if (it->path().filename().string().starts_with('.')) continue;
      folder.entries.push_back(*it);
    }
    if (ec) {
      warnings->push_back(dir.string() + ": " + ec.message());
      return;
    }
    std::sort(folder.entries.begin(), folder.entries.end());
    stack.push_back(std::move(folder));
  };

  enter(root);
  while (!stack.empty()) {
    Folder& folder = stack.back();
    if (folder.next == folder.entries.size()) {
      stack.pop_back();
      continue;
    }
    const fs::directory_entry entry = folder.entries[folder.next++];
    std::error_code ec;
    fs::file_status status = entry.symlink_status(ec);
    if (!ec && fs::is_symlink(status)) {
      if (!follow) {
        ++links;
        continue;
      }
      status = entry.status(ec);
      if (!ec && KernelFileSystem(entry.path())) {
        warnings->push_back(entry.path().string() +
                            ": not read (the kernel's proc, sysfs, debugfs or tracefs)");
        continue;
      }
    }
    if (ec) {
      warnings->push_back(entry.path().string() + ": " + ec.message());
    } else if (fs::is_directory(status)) {
      enter(entry.path());
    } else if (fs::is_regular_file(status)) {
      const std::optional<FileId> id = follow ? IdOf(entry.path()) : std::nullopt;
      if (!id || seen->insert(*id).second) inputs->push_back(entry.path().string());
    } else {
      // A FIFO, socket or device could block forever, or never end.
      if (special++ == 0) first_special = entry.path().string();
    }
  }
  if (links > 0) {
    warnings->push_back(root.string() + ": " + std::to_string(links) + " symbolic link" +
                        (links == 1 ? "" : "s") + " not followed (--follow reads them)");
  }
  if (special > 0) {
    warnings->push_back(root.string() + ": " + std::to_string(special) +
                        (special == 1 ? " device, socket or FIFO" : " devices, sockets or FIFOs") +
                        " not read (" + first_special + (special == 1 ? ")" : ", ...)"));
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
                                       std::vector<std::string>* warnings, bool follow,
                                       std::vector<UnreadInput>* unread) {
  std::vector<std::string> inputs;
  std::set<FileId> seen;
  for (const std::string& arg : args) {
    if (arg == "-") {
      inputs.push_back(arg);
      continue;
    }
    std::error_code ec;
    fs::file_status status = fs::status(arg, ec);
    if (ec) {
      warnings->push_back(arg + ": " + ec.message());
      if (unread) unread->push_back({arg, ec.message()});
    } else if (fs::is_directory(status)) {
      Walk(arg, follow, &seen, &inputs, warnings);
    } else {
      inputs.push_back(arg);
    }
  }
  return inputs;
}

}  // namespace faultline
