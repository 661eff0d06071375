#include "source/source.h"

#include <bzlib.h>
#include <doctest/doctest.h>
#include <lzma.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace faultline {
namespace {

namespace fs = std::filesystem;

// A fresh folder under the system's temporary folder, removed with its contents.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("faultline-source-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string Path(const std::string& name) const { return (path_ / name).string(); }

  std::string Write(const std::string& name, std::string_view bytes) const {
    std::string path = Path(name);
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
    return path;
  }

 private:
  fs::path path_;
};

struct Result {
  std::vector<std::string> lines;
  std::vector<uint64_t> numbers;
  std::string error;
  std::string compression;
  uint64_t bytes = 0;
  uint64_t cut_lines = 0;
  std::string notice;
};

Result ReadAll(const std::string& path) {
  std::string error;
  auto reader = LineReader::Open(path, &error);
  REQUIRE_MESSAGE(reader != nullptr, error);
  Result result;
  Line line;
  while (reader->Next(&line)) {
    result.lines.emplace_back(line.text);
    result.numbers.push_back(line.number);
  }
  CHECK_FALSE(reader->Next(&line));  // stays at the end
  CHECK(reader->lines() == (result.numbers.empty() ? 0 : result.numbers.back()));
  CHECK(reader->path() == path);
  result.error = reader->error();
  result.compression = std::string(reader->compression());
  result.bytes = reader->bytes();
  result.cut_lines = reader->cut_lines();
  result.notice = reader->notice();
  return result;
}

// Log-like lines with random hex words, so that they compress only moderately.
std::vector<std::string> LogLines(int count, uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<std::string> lines;
  for (int i = 0; i < count; ++i) {
    std::string line = "node17 kernel: [" + std::to_string(i) + "] NVRM:";
    for (int word = 0; word < 6; ++word) {
      char hex[16];
      std::snprintf(hex, sizeof hex, " %08x", static_cast<unsigned>(random()));
      line += hex;
    }
    lines.push_back(line);
  }
  return lines;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

std::string Gzip(std::string_view text) {
  z_stream stream{};
  REQUIRE(deflateInit2(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&stream, text.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&stream, Z_FINISH) == Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

std::string Bzip2(std::string_view text) {
  // Blocks of 100 kB, so that half a file holds complete blocks.
  std::string out(text.size() + text.size() / 50 + 600, '\0');
  auto size = static_cast<unsigned>(out.size());
  REQUIRE(BZ2_bzBuffToBuffCompress(out.data(), &size, const_cast<char*>(text.data()),
                                   static_cast<unsigned>(text.size()), 1, 0, 0) == BZ_OK);
  out.resize(size);
  return out;
}

std::string Xz(std::string_view text) {
  std::string out(lzma_stream_buffer_bound(text.size()), '\0');
  size_t size = 0;
  REQUIRE(lzma_easy_buffer_encode(
              6, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const uint8_t*>(text.data()),
              text.size(), reinterpret_cast<uint8_t*>(out.data()), &size, out.size()) == LZMA_OK);
  out.resize(size);
  return out;
}

std::string Zstd(std::string_view text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  size_t size = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3);
  REQUIRE_FALSE(ZSTD_isError(size));
  out.resize(size);
  return out;
}

struct Format {
  std::string name;
  std::function<std::string(std::string_view)> compress;
  // Of the lines of a file cut in half, the share a decoder recovers at least: gzip and xz
  // decode as they go, bzip2 and zstd a whole block at a time.
  size_t cut_percent;
};

const std::vector<Format>& Formats() {
  static const std::vector<Format> formats = {
      {"gzip", Gzip, 45}, {"bzip2", Bzip2, 35}, {"xz", Xz, 45}, {"zstd", Zstd, 35}};
  return formats;
}

TEST_CASE("source: plain file yields its lines with 1-based numbers") {
  TempDir dir;
  std::string path = dir.Write("kern.log", "alpha\nbeta\n\ngamma\n");
  Result result = ReadAll(path);
  CHECK(result.lines == std::vector<std::string>{"alpha", "beta", "", "gamma"});
  CHECK(result.numbers == std::vector<uint64_t>{1, 2, 3, 4});
  CHECK(result.error.empty());
  CHECK(result.compression == "none");
  CHECK(result.bytes == 18);
}

TEST_CASE("source: CRLF and mixed line ends are stripped") {
  TempDir dir;
  std::string path = dir.Write("mixed.log", "a\r\nb\nc\r\n\r\nd\re\nlast\r");
  Result result = ReadAll(path);
  CHECK(result.lines == std::vector<std::string>{"a", "b", "c", "", "d", "e", "last"});
  CHECK(result.numbers == std::vector<uint64_t>{1, 2, 3, 4, 5, 5, 6});
  CHECK(result.error.empty());
}

// UTF-16 as Windows tools write it: a byte order mark, then 16-bit units in that order.
std::string Utf16(std::u16string_view text, bool big_endian) {
  std::string bytes = big_endian ? "\xfe\xff" : "\xff\xfe";
  for (char16_t unit : text) {
    const auto high = static_cast<char>(unit >> 8);
    const auto low = static_cast<char>(unit & 0xff);
    bytes += big_endian ? std::string{high, low} : std::string{low, high};
  }
  return bytes;
}

TEST_CASE("source: UTF-16 with a byte order mark is read as UTF-8") {
  TempDir dir;
  const std::u16string xid =
      u"[ 4254.197860] NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', name=<unknown>, GPU has "
      u"fallen off the bus.";
  const std::string xid8 =
      "[ 4254.197860] NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', name=<unknown>, GPU has "
      "fallen off the bus.";
  for (bool big_endian : {false, true}) {
    // Enough lines that units and surrogate pairs straddle the converter's chunks.
    std::u16string text;
    for (int i = 0; i < 3000; ++i) text += xid + u" \u00b0C \U0001F525\r\n";
    text += u"lone \xd800 surrogate\r\n";
    Result result = ReadAll(dir.Write(big_endian ? "be.log" : "le.log", Utf16(text, big_endian)));
    REQUIRE(result.lines.size() == 3001);
    CHECK(result.lines[0] == xid8 + " \u00b0C \U0001F525");
    CHECK(result.lines[2999] == result.lines[0]);
    CHECK(result.lines[3000] == "lone \ufffd surrogate");
    CHECK(result.error.empty());
  }
  // Only the mark: an empty log.
  CHECK(ReadAll(dir.Write("mark.log", "\xff\xfe")).lines.empty());
}

TEST_CASE("source: what is written after a progress bar's carriage returns is read") {
  TempDir dir;
  // tqdm redraws its bar with "\r" and no newline; the error the job printed next joins the
  // bar's line, however long the bar grew (here past kMaxLineBytes).
  std::string bar;
  for (int i = 0; bar.size() < 2 * kMaxLineBytes; ++i) {
    bar += "\r  " + std::to_string(i % 100) + "%|####      | " + std::to_string(i) +
           "/1000 [00:12<01:40,  8.73it/s]";
  }
  const std::string error = "RuntimeError: CUDA error: an illegal memory access was encountered";
  Result result = ReadAll(dir.Write("train.log", "epoch 1\n" + bar + "\r" + error + "\r\nend\n"));
  REQUIRE(result.lines.size() >= 4);
  CHECK(result.lines[0] == "epoch 1");
  CHECK(result.lines[result.lines.size() - 2] == error);
  CHECK(result.numbers[result.numbers.size() - 2] == 2);
  CHECK(result.lines.back() == "end");
  CHECK(result.numbers.back() == 3);
  CHECK(result.cut_lines == 0);
}

TEST_CASE("source: a line cut off after a carriage return still counts (fuzz_source)") {
  TempDir dir;
  const std::string path = dir.Write("bar.log", "step 1\r 2%|#  | step 2 and more that is cut");
  std::string error;
  auto reader = LineReader::Open(path, &error, /*max_bytes=*/12);
  REQUIRE(reader != nullptr);
  Line line;
  REQUIRE(reader->Next(&line));
  CHECK(line.text == "step 1");
  CHECK(line.number == 1);
  while (reader->Next(&line)) CHECK(line.number == 1);
  CHECK(reader->lines() == 1);
  CHECK_FALSE(reader->error().empty());
}

TEST_CASE("source: a final line without a newline is yielded") {
  TempDir dir;
  Result result = ReadAll(dir.Write("tail.log", "one\ntwo"));
  CHECK(result.lines == std::vector<std::string>{"one", "two"});
  CHECK(result.numbers == std::vector<uint64_t>{1, 2});
}

TEST_CASE("source: an empty file yields nothing and no error") {
  TempDir dir;
  Result result = ReadAll(dir.Write("empty.log", ""));
  CHECK(result.lines.empty());
  CHECK(result.error.empty());
  CHECK(result.bytes == 0);
}

TEST_CASE("source: long lines are cut at kMaxLineBytes and counted") {
  const std::string exact(kMaxLineBytes, 'y');
  std::string text = std::string(3 * kMaxLineBytes + 5, 'x') + "\nafter\n" + exact + "\n" + exact +
                     "\r\n" + std::string(kMaxLineBytes + 1, 'w') + "\n" +
                     std::string(2 * kMaxLineBytes, 'v');
  TempDir dir;
  Result result = ReadAll(dir.Write("long.log", text));
  REQUIRE(result.lines.size() == 6);
  CHECK(result.lines[0] == std::string(kMaxLineBytes, 'x'));
  CHECK(result.lines[1] == "after");
  CHECK(result.numbers[1] == 2);
  CHECK(result.lines[2] == exact);
  CHECK(result.lines[3] == exact);
  CHECK(result.lines[4] == std::string(kMaxLineBytes, 'w'));
  CHECK(result.lines[5] == std::string(kMaxLineBytes, 'v'));
  CHECK(result.numbers[5] == 6);
  CHECK(result.cut_lines == 3);
  CHECK(result.bytes == text.size());
  CHECK(result.error.empty());
}

long MaxRssKib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

TEST_CASE("source: a 512 MiB line without a newline is read in bounded memory") {
  constexpr uint64_t kSize = uint64_t{512} << 20;
  TempDir dir;
  // Text first, so the input is not taken for binary; the rest is a hole read back as NULs.
  std::string path = dir.Write("huge.log", "the first line of the log\n" + std::string(8192, 'a'));
  fs::resize_file(path, kSize);
  long rss_before = MaxRssKib();
  Result result = ReadAll(path);
  CHECK(MaxRssKib() - rss_before < 64 * 1024);
  // The 'a's and the NULs after them are one binary region, skipped, not a cut line.
  CHECK(result.lines == std::vector<std::string>{"the first line of the log"});
  CHECK(result.cut_lines == 0);
  CHECK(result.bytes == kSize);
  CHECK(result.error.empty());
  CHECK(result.notice == path + ": 512 MiB of binary data skipped at byte 26");
}

TEST_CASE("source: binary regions inside text are skipped, the text around them read") {
  std::mt19937 random(11);
  std::string junk(5000, '\0');
  for (char& c : junk) c = static_cast<char>(random() % 256);
  const std::string xid = "Mar  5 10:12:33 node9 kernel: NVRM: Xid (PCI:0000:b7:00): 79, pid=0";
  TempDir dir;

  std::string path =
      dir.Write("syslog", "before the reset\n" + std::string(8192, '\0') + xid + "\n");
  Result result = ReadAll(path);
  CHECK(result.lines == std::vector<std::string>{"before the reset", xid});
  CHECK(result.error.empty());
  CHECK(result.notice == path + ": 8 KiB of binary data skipped at byte 17");

  path = dir.Write("junk-first.log", junk + xid + "\n");
  result = ReadAll(path);
  REQUIRE(!result.lines.empty());
  CHECK(result.lines.back().ends_with(xid));
  CHECK(result.lines.back().size() < xid.size() + 16);
  CHECK(result.error.empty());
  CHECK(result.notice.starts_with(path + ": 4."));

  // Junk other than NULs for more than 64 KiB after text ends the reading there.
  std::string payload(200'000, '\0');
  for (char& c : payload) c = static_cast<char>(random() % 256);
  const std::string header = "#!/bin/sh\necho the text header of a self-extracting file\n";
  path = dir.Write("installer.run", header + payload + "\n" + xid + "\n");
  result = ReadAll(path);
  REQUIRE(result.lines.size() >= 2);
  CHECK(result.lines[1] == "echo the text header of a self-extracting file");
  CHECK(std::find(result.lines.begin(), result.lines.end(), xid) == result.lines.end());
  CHECK(result.error.starts_with(path + ": binary data from byte "));
  CHECK(result.error.ends_with(" on; the rest is not read"));
}

TEST_CASE("source: NUL bytes after the start of a text log are ordinary bytes") {
  std::vector<std::string> lines = LogLines(100, 1);
  const std::string crashed("kernel: crash\0\0\0tail", 20);
  lines.push_back(crashed);
  lines.push_back("after the crash");
  TempDir dir;
  Result result = ReadAll(dir.Write("syslog", Join(lines)));
  CHECK(result.lines == lines);
  CHECK(result.error.empty());
}

TEST_CASE("source: binary data is refused and yields nothing") {
  std::mt19937 random(7);
  std::string bytes(8192, '\0');
  for (char& c : bytes) c = static_cast<char>(random() % 256);
  bytes[100] = '\0';
  std::string controls;
  for (int i = 0; i < 4096; ++i) controls += static_cast<char>(1 + i % 7);  // no NUL
  TempDir dir;

  for (const auto& [name, content] : std::vector<std::pair<std::string, std::string>>{
           {"random.bin", bytes}, {"controls.bin", controls}, {"random.gz", Gzip(bytes)}}) {
    CAPTURE(name);
    std::string path = dir.Write(name, content);
    Result result = ReadAll(path);
    CHECK(result.lines.empty());
    CHECK(result.error == path + ": binary data, not a text log");
  }
}

TEST_CASE("source: UTF-8 text and ANSI colours are text") {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 200; ++i) text += "\x1b[31mErreur détectée — GPU 3 ✗\x1b[0m\tß\n";
  Result result = ReadAll(dir.Write("utf8.log", text));
  CHECK(result.error.empty());
  CHECK(result.lines.size() == 200);
}

TEST_CASE("source: a missing path or a folder cannot be opened") {
  TempDir dir;
  std::string error;
  std::string missing = dir.Path("missing.log");
  CHECK(LineReader::Open(missing, &error) == nullptr);
  CHECK(error == missing + ": No such file or directory");

  fs::create_directories(dir.Path("folder"));
  CHECK(LineReader::Open(dir.Path("folder"), &error) == nullptr);
  CHECK(error == dir.Path("folder") + ": Is a directory");
}

TEST_CASE("source: unreadable files and folders are reported, not read") {
  if (geteuid() == 0) return;  // root reads anything
  TempDir dir;
  std::string file = dir.Write("secret.log", "s\n");
  dir.Write("locked/a.log", "a\n");
  fs::permissions(file, fs::perms::none);
  fs::permissions(dir.Path("locked"), fs::perms::none);

  std::string error;
  CHECK(LineReader::Open(file, &error) == nullptr);
  CHECK(error == file + ": Permission denied");
  std::vector<std::string> warnings;
  CHECK(expand_inputs({dir.Path("locked")}, &warnings).empty());
  CHECK(warnings == std::vector<std::string>{dir.Path("locked") + ": Permission denied"});
  fs::permissions(dir.Path("locked"), fs::perms::owner_all);  // so that it can be removed
}

TEST_CASE("source: each compression round-trips, sniffed from magic bytes, not the name") {
  std::vector<std::string> lines = LogLines(3000, 2);
  std::string text = Join(lines);
  TempDir dir;
  for (const Format& format : Formats()) {
    CAPTURE(format.name);
    Result result = ReadAll(dir.Write(format.name + ".log", format.compress(text)));
    CHECK(result.compression == format.name);
    CHECK(result.lines == lines);
    CHECK(result.bytes == text.size());
    CHECK(result.error.empty());
  }
  Result plain = ReadAll(dir.Write("plain.gz", text));
  CHECK(plain.compression == "none");
  CHECK(plain.lines == lines);
  // "BZh" must be followed by a block size digit to be bzip2.
  Result bzh = ReadAll(dir.Write("bzh.log", "BZhello\n"));
  CHECK(bzh.compression == "none");
  CHECK(bzh.lines == std::vector<std::string>{"BZhello"});
}

TEST_CASE("source: every member, stream or frame of a concatenation is read") {
  std::vector<std::string> lines = LogLines(700, 3);
  TempDir dir;
  for (const Format& format : Formats()) {
    CAPTURE(format.name);
    // Like nvidia-bug-report.log.gz: one unit per section, an empty one among them.
    std::string bytes;
    for (size_t start = 0; start < lines.size(); start += 100) {
      std::vector<std::string> section(lines.begin() + long(start),
                                       lines.begin() + long(start) + 100);
      bytes += format.compress(Join(section));
      if (start == 300) bytes += format.compress("");
    }
    Result result = ReadAll(dir.Write(format.name + ".multi", bytes));
    CHECK(result.lines == lines);
    CHECK(result.error.empty());
  }
}

TEST_CASE("source: a truncated stream yields the lines before the cut and says so") {
  std::vector<std::string> lines = LogLines(12000, 4);  // about 1 MB
  std::string text = Join(lines);
  TempDir dir;
  for (const Format& format : Formats()) {
    CAPTURE(format.name);
    std::string bytes = format.compress(text);
    std::string path = dir.Write(format.name + ".cut", bytes.substr(0, bytes.size() / 2));
    Result result = ReadAll(path);
    // All that can be decoded before the cut, and no damaged partial line.
    CHECK(result.lines.size() > lines.size() * format.cut_percent / 100);
    CHECK(result.lines.size() < lines.size());
    CHECK(std::equal(result.lines.begin(), result.lines.end(), lines.begin()));
    CHECK(result.error == path + ": truncated " + format.name + " stream after " +
                              std::to_string(result.lines.size()) + " lines");
  }
}

TEST_CASE("source: corrupt gzip data stops with an error") {
  std::string text = Join(LogLines(3000, 5));
  std::string bytes = Gzip(text);
  for (size_t i = bytes.size() / 2; i < bytes.size() / 2 + 16; ++i) bytes[i] ^= 0x5a;
  TempDir dir;
  std::string path = dir.Write("corrupt.gz", bytes);
  Result result = ReadAll(path);
  CHECK(result.error.find(path + ": corrupt gzip data (") == 0);
}

TEST_CASE("source: garbage after a magic number stops with an error, never a crash") {
  std::mt19937 random(6);
  std::string garbage(20000, '\0');
  for (char& c : garbage) c = static_cast<char>(random() % 256);
  TempDir dir;
  for (const Format& format : Formats()) {
    CAPTURE(format.name);
    std::string magic = format.compress("x").substr(0, 6);
    std::string path = dir.Write(format.name + ".garbage", magic + garbage);
    Result result = ReadAll(path);
    CHECK(result.compression == format.name);
    CHECK(result.error.find(path + ": ") == 0);
  }
}

TEST_CASE("source: expand_inputs walks folders in order and skips what it should") {
  TempDir dir;
  dir.Write("logs/b.log", "b\n");
  dir.Write("logs/a.log", "a\n");
  dir.Write("logs/.hidden", "h\n");
  dir.Write("logs/.git/config", "g\n");
  dir.Write("logs/node1/dmesg.txt", "d\n");
  dir.Write("single.log", "s\n");
  fs::create_directory_symlink("..", dir.Path("logs/node1/loop"));
  std::string missing = dir.Path("missing");

  std::vector<std::string> warnings;
  std::vector<std::string> inputs =
      expand_inputs({dir.Path("single.log"), dir.Path("logs"), "-", missing}, &warnings);
  CHECK(inputs == std::vector<std::string>{dir.Path("single.log"), dir.Path("logs/a.log"),
                                           dir.Path("logs/b.log"), dir.Path("logs/node1/dmesg.txt"),
                                           "-"});
  CHECK(warnings == std::vector<std::string>{
                        dir.Path("logs") + ": 1 symbolic link not followed (--follow reads them)",
                        missing + ": No such file or directory"});
}

// A ustar member as POSIX describes it: a 512-byte header (octal fields, its checksum summed
// with the checksum field as spaces), then the data padded to 512 bytes.
std::string TarMember(const std::string& name, const std::string& data, char type = '0') {
  std::string header(512, '\0');
  auto field = [&header](size_t at, const std::string& value) {
    header.replace(at, value.size(), value);
  };
  auto octal = [](uint64_t value, size_t width) {
    std::string digits(width - 1, '0');
    for (size_t i = width - 1; i-- > 0; value /= 8) digits[i] = static_cast<char>('0' + value % 8);
    return digits;
  };
  field(0, name);
  field(100, octal(0644, 8));
  field(124, octal(data.size(), 12));
  field(136, octal(1733149800, 12));  // 2024-12-02 14:30 UTC
  header[156] = type;
  field(257, std::string("ustar\0"
                         "00",
                         8));
  field(148, "        ");
  uint64_t sum = 0;
  for (char c : header) sum += static_cast<unsigned char>(c);
  field(148, octal(sum, 7));
  std::string padded = data;
  padded.resize((data.size() + 511) / 512 * 512, '\0');
  return header + padded;
}

TEST_CASE("source: an archive yields its regular members, named ARCHIVE!member") {
  TempDir dir;
  const std::string tar = dir.Write(
      "logs.tar", TarMember("logs/node17/kern.log", "one\ntwo\n") + TarMember("logs/", "", '5') +
                      TarMember("logs/link", "", '2') + TarMember("../x.log", "three\n") +
                      TarMember("logs/ci/node18/train.log", "four\n") + std::string(1024, '\0'));
  std::string error;
  std::unique_ptr<Input> input = Input::Open(tar, &error);
  REQUIRE(input != nullptr);
  CHECK(input->archive());
  std::vector<std::string> warnings;
  Member member;
  REQUIRE(input->Next(&member, &warnings));
  CHECK(member.reader->path() == tar + "!logs/node17/kern.log");
  // logs/ is the archive's own top folder (named like it); node17 names the host.
  CHECK(member.folders == std::vector<std::string>{"node17"});
  CHECK(member.mtime == 1733149800);
  Line line;
  REQUIRE(member.reader->Next(&line));
  CHECK(line.text == "one");
  member.reader.reset();  // the rest of the member is skipped
  REQUIRE(input->Next(&member, &warnings));
  CHECK(member.reader->path() == tar + "!logs/ci/node18/train.log");
  CHECK(member.folders == std::vector<std::string>{"ci", "node18"});
  member.reader.reset();
  CHECK_FALSE(input->Next(&member, &warnings));
  CHECK(warnings == std::vector<std::string>{
                        tar + "!logs/link: a symbolic link, not followed",
                        tar + "!../x.log: a member path that is absolute or holds '..', not read"});
}

TEST_CASE("source: a file is its only member, even with 'ustar' where a tar's magic is") {
  TempDir dir;
  std::string text(257, 'x');
  text += "ustar and more text\n";
  text.resize(600, 'y');
  const std::string path = dir.Write("looks-like-tar.log", text + "\n");
  std::string error;
  std::unique_ptr<Input> input = Input::Open(path, &error);
  REQUIRE(input != nullptr);
  CHECK_FALSE(input->archive());
  std::vector<std::string> warnings;
  Member member;
  REQUIRE(input->Next(&member, &warnings));
  CHECK(member.reader->path() == path);
  CHECK(member.folders.empty());
  CHECK(member.reader->compression() == "none");
  member.reader.reset();
  CHECK_FALSE(input->Next(&member, &warnings));
  CHECK(warnings.empty());
}

}  // namespace
}  // namespace faultline
