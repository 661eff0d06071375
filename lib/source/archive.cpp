// Tar and zip archives read member by member with libarchive, on our own decoded stream: the
// compression around a tar is undone by decode.cpp (the same truncation reports, igzip, the
// read-ahead thread), and libarchive only walks the container. Nothing is extracted to disk and
// no member is held whole; member names are untrusted and never open anything.
#include "source/archive.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace faultline::source_internal {
namespace {

constexpr size_t kBlockBytes = size_t{64} * 1024;
// Member times before 1980-01-02 are no dates: zip's "none" (DOS time 0, 1980-01-01) and the
// epoch of reproducible tarballs. The archive's own time stands in for them.
constexpr int64_t kFirstDate = 315'619'200;

// What every level of one archive input shares: its caps and why reading stopped.
struct Budget {
  std::shared_ptr<std::atomic<uint64_t>> raw_bytes;  // read from the file itself
  uint64_t max_bytes = 0;
  uint64_t container_bytes = 0;  // decoded bytes of the outermost archive, skipped ones too
  uint64_t text_bytes = 0;       // text of every member read
  uint64_t entries = 0;
  std::string stop;  // the cap that ended reading; empty while none has

  // Whether the archive has outgrown its own bytes kMaxArchiveRatio times: a decompression bomb.
  bool Outgrown() {
    const uint64_t out = std::max(container_bytes, text_bytes);
    if (out <= kArchiveRatioAfterBytes || out / kMaxArchiveRatio <= raw_bytes->load()) return false;
    stop = "the archive grew past " + std::to_string(kMaxArchiveRatio) +
           " times its own size (a decompression bomb?); reading it stopped";
    return true;
  }
};

// One archive being read: the input argument itself, or a member of the level below.
struct Level {
  std::string name;                  // "a.zip", "a.zip!b.tar.gz"
  std::vector<std::string> folders;  // the folders above it inside the archives around it
  std::string top;                   // its name without suffixes: a top folder to leave out
  std::unique_ptr<ByteStream> input;
  Budget* budget = nullptr;
  bool outermost = false;
  std::unique_ptr<char[]> block{new char[kBlockBytes]};
  archive* reader = nullptr;
  std::string last;     // the last member read, for a warning on damage
  bool failed = false;  // the member being read hit damage, and its reader warned of it

  Level() = default;
  Level(const Level&) = delete;
  Level& operator=(const Level&) = delete;
  ~Level() {
    if (reader != nullptr) archive_read_free(reader);
  }
};

// libarchive's message, on one line (some end in "\n").
std::string ErrorOf(archive* reader) {
  const char* why = archive_error_string(reader);
  std::string line = why != nullptr ? why : "the archive ends early";
  std::replace_if(
      line.begin(), line.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }, ' ');
  line.erase(line.find_last_not_of(' ') + 1);
  return line;
}

// Hands libarchive the next block of the level's input; EIO when the input failed (a truncated
// compressed stream) or the archive outgrew its caps.
la_ssize_t ReadBlock(archive* reader, void* client, const void** buffer) {
  auto* level = static_cast<Level*>(client);
  const size_t got = level->input->Read(level->block.get(), kBlockBytes);
  if (got == 0 && !level->input->error().empty()) {
    archive_set_error(reader, EIO, "%s", level->input->error().c_str());
    return ARCHIVE_FATAL;
  }
  if (level->outermost) {
    level->budget->container_bytes += got;
    if (level->budget->Outgrown()) {
      archive_set_error(reader, EIO, "%s", level->budget->stop.c_str());
      return ARCHIVE_FATAL;
    }
  }
  *buffer = level->block.get();
  return static_cast<la_ssize_t>(got);
}

// The data of the member a level is at, block by block as libarchive hands it over. A check
// that fails at the member's end (a zip's bad CRC) comes with its last block, which is still
// read (archive_read_data() would drop it). Sparse members' holes are left out, not filled with
// NULs.
class MemberStream final : public ByteStream {
 public:
  explicit MemberStream(Level* level) : level_(level) {}
  size_t Read(char* data, size_t size) override {
    while (left_ == 0) {
      if (done_) return 0;
      const void* block = nullptr;
      la_int64_t offset = 0;
      const int rc = archive_read_data_block(level_->reader, &block, &left_, &offset);
      if (rc == ARCHIVE_EOF) {
        done_ = true;
      } else if (rc < ARCHIVE_OK) {
        done_ = true;
        error_ = ErrorOf(level_->reader);
        level_->failed = true;
      }
      if (rc == ARCHIVE_OK || rc == ARCHIVE_WARN) {
        next_ = static_cast<const char*>(block);
      } else {
        left_ = 0;
      }
    }
    const size_t n = std::min(size, left_);
    std::memcpy(data, next_, n);
    next_ += n;
    left_ -= n;
    return n;
  }
  const std::string& error() const override { return error_; }

 private:
  Level* level_;
  const char* next_ = nullptr;  // the unread part of libarchive's current block
  size_t left_ = 0;
  bool done_ = false;
  std::string error_;
};

// A member's text, counted against the archive's caps.
class TextStream final : public ByteStream {
 public:
  TextStream(std::unique_ptr<ByteStream> input, Budget* budget)
      : input_(std::move(input)), budget_(budget) {}
  size_t Read(char* data, size_t size) override {
    if (!error_.empty()) return 0;
    const size_t got = input_->Read(data, size);
    budget_->text_bytes += got;
    if (budget_->Outgrown()) error_ = budget_->stop;
    return got;
  }
  const std::string& error() const override { return error_.empty() ? input_->error() : error_; }

 private:
  std::unique_ptr<ByteStream> input_;
  Budget* budget_;
  std::string error_;
};

// Control characters of an untrusted name shown as "?", so that every warning stays one line.
std::string Shown(std::string_view name) {
  std::string shown(name);
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return shown;
}

// The parts of a member's path without "." and empty ones; false if it is absolute or climbs
// out with "..".
bool SplitMemberPath(std::string_view path, std::vector<std::string>* parts) {
  if (path.starts_with('/') || path.starts_with('\\')) return false;
  while (!path.empty()) {
    const size_t end = path.find('/');
    const std::string_view part = path.substr(0, end);
    if (part == "..") return false;
    if (!part.empty() && part != ".") parts->emplace_back(part);
    if (end == std::string_view::npos) break;
    path.remove_prefix(end + 1);
  }
  return true;
}

// "x" of "x.tar.gz", "x.tgz" or "x.zip": the name of the folder such an archive is made of.
std::string Stem(std::string_view name) {
  name = name.substr(name.find_last_of('/') + 1);
  static constexpr std::string_view kSuffixes[] = {".gz",  ".bz2", ".xz",  ".zst", ".tgz",
                                                   ".tbz", ".txz", ".tar", ".zip"};
  for (bool cut = true; cut;) {
    cut = false;
    for (std::string_view suffix : kSuffixes) {
      if (name.size() > suffix.size() && name.ends_with(suffix)) {
        name.remove_suffix(suffix.size());
        cut = true;
      }
    }
  }
  return std::string(name);
}

std::unique_ptr<Level> OpenLevel(std::string name, std::vector<std::string> folders,
                                 Unwrapped unwrapped, Budget* budget, bool outermost,
                                 std::string* why) {
  auto level = std::make_unique<Level>();
  level->top = Stem(name.substr(name.find_last_of('!') + 1));
  level->name = std::move(name);
  level->folders = std::move(folders);
  level->input = std::move(unwrapped.stream);
  level->budget = budget;
  level->outermost = outermost;
  level->reader = archive_read_new();
  if (level->reader == nullptr) {
    *why = "cannot start the archive reader (out of memory)";
    return nullptr;
  }
  // The streaming zip reader: it needs no central directory, so a zip cut short still yields
  // the members before the cut.
  if (unwrapped.container == Container::kTar) {
    archive_read_support_format_tar(level->reader);
  } else {
    archive_read_support_format_zip_streamable(level->reader);
  }
  if (archive_read_open(level->reader, level.get(), nullptr, ReadBlock, nullptr) != ARCHIVE_OK) {
    *why = ErrorOf(level->reader);
    return nullptr;
  }
  return level;
}

class ArchiveMembers final : public Input {
 public:
  ArchiveMembers(std::shared_ptr<std::atomic<uint64_t>> raw_bytes, uint64_t max_bytes) {
    budget_.raw_bytes = std::move(raw_bytes);
    budget_.max_bytes = max_bytes;
  }
  bool Start(const std::string& path, Unwrapped unwrapped, std::string* error) {
    std::string why;
    auto level = OpenLevel(path, {}, std::move(unwrapped), &budget_, true, &why);
    if (level == nullptr) {
      *error = path + ": " + why;
      return false;
    }
    levels_.push_back(std::move(level));
    return true;
  }

  bool archive() const override { return true; }
  bool Next(Member* member, std::vector<std::string>* warnings) override;

 private:
  // Opens the member `level` is at; returns true with *member set if it is a file to read.
  bool OpenMember(Level* level, archive_entry* entry, const std::string& name,
                  std::vector<std::string> folders, Member* member,
                  std::vector<std::string>* warnings);

  Budget budget_;
  std::vector<std::unique_ptr<Level>> levels_;  // the innermost archive last
};

bool ArchiveMembers::Next(Member* member, std::vector<std::string>* warnings) {
  while (!levels_.empty() && budget_.stop.empty()) {
    Level& level = *levels_.back();
    archive_entry* entry = nullptr;
    const int rc = archive_read_next_header(level.reader, &entry);
    if (rc == ARCHIVE_EOF || rc < ARCHIVE_WARN) {
      if (rc != ARCHIVE_EOF && !level.failed) {
        warnings->push_back(level.name + ": " + ErrorOf(level.reader) +
                            (level.last.empty() ? "; no member could be read"
                                                : "; anything after " + level.last + " is lost"));
      }
      levels_.pop_back();
      continue;
    }
    level.failed = false;  // a member's damage (a bad CRC) need not end the archive
    const char* raw_name = archive_entry_pathname(entry);
    const std::string name = Shown(raw_name != nullptr ? raw_name : "");
    const std::string shown = level.name + "!" + name;
    if (++budget_.entries > kMaxArchiveMembers) {
      budget_.stop = "more than " + std::to_string(kMaxArchiveMembers) + " members";
      warnings->push_back(shown +
                          ": not read, nor the members after it: the archive has more than " +
                          std::to_string(kMaxArchiveMembers) + " members");
      break;
    }
    std::vector<std::string> parts;
    if (!SplitMemberPath(name, &parts)) {
      warnings->push_back(shown + ": a member path that is absolute or holds '..', not read");
      continue;
    }
    const auto type = archive_entry_filetype(entry);
    if (type == AE_IFDIR || parts.empty()) continue;
    if (archive_entry_hardlink(entry) != nullptr || type == AE_IFLNK) {
      warnings->push_back(shown + ": a " + (type == AE_IFLNK ? "symbolic" : "hard") +
                          " link, not followed");
      continue;
    }
    if (type != AE_IFREG) {
      warnings->push_back(shown + ": not a regular file, not read");
      continue;
    }
    if (budget_.text_bytes >= budget_.max_bytes) {
      budget_.stop = "--max-bytes";
      warnings->push_back(shown + ": not read, nor the members after it: the archive's members " +
                          "reached " + SizeName(budget_.max_bytes) + " of text (--max-bytes)");
      break;
    }
    std::string path;
    for (const std::string& part : parts) path += (path.empty() ? "" : "/") + part;
    level.last = path;
    std::vector<std::string> folders = level.folders;
    const size_t first = parts.size() > 1 && parts.front() == level.top ? 1 : 0;
    folders.insert(folders.end(), parts.begin() + static_cast<std::ptrdiff_t>(first),
                   parts.end() - 1);
    if (OpenMember(&level, entry, level.name + "!" + path, std::move(folders), member, warnings)) {
      return true;
    }
  }
  levels_.clear();
  return false;
}

bool ArchiveMembers::OpenMember(Level* level, archive_entry* entry, const std::string& name,
                                std::vector<std::string> folders, Member* member,
                                std::vector<std::string>* warnings) {
  Unwrapped unwrapped;
  std::string why;
  if (!Unwrap(std::make_unique<PeekStream>(std::make_unique<MemberStream>(level)), false,
              &unwrapped, &why)) {
    warnings->push_back(name + ": " + why);
    return false;
  }
  switch (unwrapped.container) {
    case Container::kSevenZip:
      warnings->push_back(name + ": " + std::string(kSevenZipRefused));
      return false;
    case Container::kTar:
    case Container::kZip: {
      if (levels_.size() >= static_cast<size_t>(kMaxArchiveDepth)) {
        warnings->push_back(name + ": an archive inside " + std::to_string(kMaxArchiveDepth) +
                            " others, not opened");
        return false;
      }
      auto inner = OpenLevel(name, std::move(folders), std::move(unwrapped), &budget_, false, &why);
      if (inner == nullptr) {
        warnings->push_back(name + ": " + why);
        return false;
      }
      levels_.push_back(std::move(inner));
      return false;
    }
    case Container::kNone:
      break;
  }
  const uint64_t left = budget_.max_bytes - budget_.text_bytes;
  member->reader =
      MakeLineReader(name, unwrapped.compression,
                     std::make_unique<TextStream>(std::move(unwrapped.stream), &budget_), left);
  member->folders = std::move(folders);
  const int64_t mtime = archive_entry_mtime_is_set(entry) ? archive_entry_mtime(entry) : 0;
  member->mtime = mtime >= kFirstDate ? mtime : 0;
  return true;
}

}  // namespace

Container SniffContainer(std::string_view head) {
  if (head.starts_with("PK\x03\x04") || head.starts_with("PK\x05\x06")) return Container::kZip;
  if (head.starts_with("7z\xbc\xaf\x27\x1c")) return Container::kSevenZip;
  if (head.size() < kContainerMagicBytes || head.substr(257, 5) != "ustar") {
    return Container::kNone;
  }
  // The header's checksum (octal at 148, summed with its own field as spaces): a text log
  // that happens to hold "ustar" at byte 257 is not taken for a tar.
  uint64_t sum = 0;
  for (size_t i = 0; i < kContainerMagicBytes; ++i) {
    sum += i >= 148 && i < 156 ? ' ' : static_cast<unsigned char>(head[i]);
  }
  size_t i = 148;
  while (i < 156 && head[i] == ' ') ++i;
  uint64_t stored = 0;
  for (; i < 156 && head[i] >= '0' && head[i] <= '7'; ++i) {
    stored = stored * 8 + static_cast<uint64_t>(head[i] - '0');
  }
  return stored == sum ? Container::kTar : Container::kNone;
}

std::unique_ptr<Input> OpenArchive(const std::string& path, Unwrapped unwrapped,
                                   std::shared_ptr<std::atomic<uint64_t>> raw_bytes,
                                   uint64_t max_bytes, std::string* error) {
  auto members = std::make_unique<ArchiveMembers>(std::move(raw_bytes), max_bytes);
  if (!members->Start(path, std::move(unwrapped), error)) return nullptr;
  return members;
}

}  // namespace faultline::source_internal
