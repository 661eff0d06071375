// Opens inputs (files, folders, stdin), undoes their compression and yields their lines.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

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
//
// Text is told from binary data by region. Lines near a NUL byte (and those at the start) are
// looked at byte by byte: a run of NULs (what a crash leaves in a syslog) or of binary junk is
// skipped and counted in notice(), the text around it read. A line of text with a few stray bad
// bytes, UTF-8, tabs and ANSI colours stays whole. An input that is binary from the start, with
// no line of text in its first 64 KiB, is refused (error()), and junk other than NULs for more
// than 64 KiB in a row stops the reading there.
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
  // Empty, or one line naming the path that says how much binary data was skipped and where the
  // first of it was ("PATH: 8 KiB of binary data skipped at byte 4096"); the rest was read.
  virtual std::string notice() const = 0;
};

// Caps of an archive input (besides --max-bytes, which holds per member and for all its members
// together): entries read, archives opened inside each other, and how many times its text may
// outgrow the archive's own bytes once kArchiveRatioAfterBytes have come out.
inline constexpr uint64_t kMaxArchiveMembers = 10'000;
inline constexpr int kMaxArchiveDepth = 4;
inline constexpr uint64_t kMaxArchiveRatio = 1000;
inline constexpr uint64_t kArchiveRatioAfterBytes = uint64_t{16} << 20;

// One stream of lines of an input: the only one of a file, or a regular file inside an archive.
struct Member {
  // path() is the file's path, or "ARCHIVE!member/path" ("a.zip!b.tar.gz!node1/kern.log").
  std::unique_ptr<LineReader> reader;
  // The folders above a member inside its archives ("node17", "kernel"), the top folder named
  // like its archive (x/ of x.tar.gz) left out; empty for a file.
  std::vector<std::string> folders;
  // A member's modification time as its archive records it; 0 if it records none (the
  // archive file's own time serves then).
  int64_t mtime = 0;
};

// A command-line input opened: a file (plain or compressed, as LineReader::Open reads it), or an
// archive (tar, plain or compressed; zip), recognised by its bytes, whose regular-file members
// are read in archive order without extracting anything. A member that is itself compressed or
// an archive is opened in turn. Symlinks, hard links, devices and member paths that are
// absolute or hold ".." are never opened, only named in a warning.
class Input {
 public:
  // On failure returns nullptr and sets *error to a one-line reason that names the path.
  static std::unique_ptr<Input> Open(const std::string& path, std::string* error,
                                     uint64_t max_bytes = kDefaultMaxBytes);
  virtual ~Input() = default;

  virtual bool archive() const = 0;
  // The next member; false at the end. An archive is read in one pass: the previous member's
  // reader must be destroyed first. Members left out, caps reached and damage found add a
  // one-line warning each to *warnings, naming the archive and the member.
  virtual bool Next(Member* member, std::vector<std::string>* warnings) = 0;
};

// Expands command-line arguments into inputs: files as given (a FIFO or a file of /proc too: the
// user named it), folders recursively in sorted order. Inside a folder, symbolic links are not
// followed unless `follow`, and then each folder and file is taken once (known by device and
// inode, so loops end); devices, sockets and FIFOs are left out, and proc, sysfs, debugfs and
// tracefs never walked into. Each adds a one-line warning per folder argument, as do paths that
// do not exist or cannot be listed, which are left out (and, when `unread` is given, added to
// it). "-" stays as is.
std::vector<std::string> expand_inputs(const std::vector<std::string>& args,
                                       std::vector<std::string>* warnings, bool follow = false,
                                       std::vector<UnreadInput>* unread = nullptr);

}  // namespace faultline
