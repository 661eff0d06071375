// Raw input and the decoders of gzip, bzip2, xz and zstd.
//
// The decoders use the C libraries directly rather than Boost.Iostreams filters: Boost 1.74
// reports a truncated gzip, bzip2 or xz stream by throwing from read(), which discards all the
// text decoded during that call (up to the whole request, so the last lines before the cut,
// often the most telling ones), and its zstd filter ends a truncated stream as if it were
// complete.
#include "source/decode.h"

#include <bzlib.h>
#include <fcntl.h>
#include <iconv.h>
#include <lzma.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#if FAULTLINE_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace faultline::source_internal {
namespace {

constexpr size_t kInputBytes = size_t{256} * 1024;
// Enough for any xz preset (-9 needs 65 MiB); a stream that asks for more is refused.
constexpr uint64_t kXzMemoryLimit = uint64_t{512} << 20;

std::string ErrnoMessage(int error) {
  return std::generic_category().message(error);
}

// The loop every format shares: refill compressed input, decode it, and tell a stream that
// ended cleanly from one that was cut short or is corrupt. Formats that allow concatenation
// (gzip members, bzip2 streams, zstd frames) end cleanly only between two of their units.
class Decoder : public ByteStream {
 public:
  Decoder(std::string_view format, std::unique_ptr<ByteStream> input)
      : format_(format), input_(std::move(input)), buffer_(new char[kInputBytes]) {}

  size_t Read(char* data, size_t size) final;
  const std::string& error() const final { return error_; }

 protected:
  enum class Step { kOk, kEnd, kError };

  // Decodes from [*in, in_end) into [*out, out_end), advancing both. `finish`: no input
  // follows in_end. Returns kEnd when a unit (member, stream, frame) is complete, and kError
  // with *why set when the data is corrupt.
  virtual Step Decode(const char** in, const char* in_end, char** out, char* out_end, bool finish,
                      std::string* why) = 0;
  // Prepares for a further unit after kEnd.
  virtual void Restart() {}

 private:
  void Refill();
  void Fail(std::string reason) {
    error_ = std::move(reason);
    done_ = true;
  }

  std::string_view format_;
  std::unique_ptr<ByteStream> input_;
  std::unique_ptr<char[]> buffer_;
  const char* begin_ = nullptr;  // unread compressed input in buffer_
  const char* end_ = nullptr;
  bool input_done_ = false;
  bool at_boundary_ = false;  // a unit ended and nothing of another has been read
  bool done_ = false;
  std::string error_;
};

void Decoder::Refill() {
  size_t got = input_->Read(buffer_.get(), kInputBytes);
  begin_ = buffer_.get();
  end_ = begin_ + got;
  if (got > 0) return;
  input_done_ = true;
  if (!input_->error().empty()) Fail(input_->error());
}

size_t Decoder::Read(char* data, size_t size) {
  char* out = data;
  char* const out_end = data + size;
  while (!done_ && out < out_end) {
    if (begin_ == end_ && !input_done_) {
      // Hand over what is decoded before waiting for more input (stdin may be a live pipe).
      if (out > data) break;
      Refill();
      continue;
    }
    if (input_done_ && begin_ == end_ && at_boundary_) {
      done_ = true;
      break;
    }
    const char* in = begin_;
    char* const out_before = out;
    std::string why;
    Step step = Decode(&in, end_, &out, out_end, input_done_, &why);
    bool progress = in != begin_ || out != out_before;
    if (in != begin_) at_boundary_ = false;
    begin_ = in;
    if (step == Step::kError) {
      Fail("corrupt " + std::string(format_) + " data (" + why + ")");
    } else if (!progress && begin_ != end_) {
      // Input and room for output but nothing decoded: stop rather than spin.
      Fail("corrupt " + std::string(format_) + " data (decoder made no progress)");
    } else if (step == Step::kEnd) {
      at_boundary_ = true;
      if (begin_ != end_ || !input_done_) Restart();
    } else if (!progress && input_done_) {
      Fail("truncated " + std::string(format_) + " stream");
    }
  }
  return static_cast<size_t>(out - data);
}

#if !FAULTLINE_HAVE_ISAL
// zlib, where ISA-L is not installed.
class GzipDecoder final : public Decoder {
 public:
  explicit GzipDecoder(std::unique_ptr<ByteStream> input) : Decoder("gzip", std::move(input)) {}
  GzipDecoder(const GzipDecoder&) = delete;  // the library's stream state is not copyable
  GzipDecoder& operator=(const GzipDecoder&) = delete;
  ~GzipDecoder() override {
    if (initialized_) inflateEnd(&stream_);
  }

  bool Init() { return initialized_ = inflateInit2(&stream_, 15 + 16) == Z_OK; }

 private:
  Step Decode(const char** in, const char* in_end, char** out, char* out_end, bool /*finish*/,
              std::string* why) override {
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(*in));
    stream_.avail_in = static_cast<uInt>(in_end - *in);
    stream_.next_out = reinterpret_cast<Bytef*>(*out);
    stream_.avail_out = static_cast<uInt>(out_end - *out);
    int rc = inflate(&stream_, Z_NO_FLUSH);
    *in = reinterpret_cast<const char*>(stream_.next_in);
    *out = reinterpret_cast<char*>(stream_.next_out);
    if (rc == Z_STREAM_END) return Step::kEnd;
    if (rc == Z_OK || rc == Z_BUF_ERROR) return Step::kOk;
    *why = stream_.msg != nullptr ? stream_.msg : "zlib error " + std::to_string(rc);
    return Step::kError;
  }
  // nvidia-bug-report.log.gz and `cat a.gz b.gz` hold several members; read them all.
  void Restart() override { inflateReset(&stream_); }

  z_stream stream_{};
  bool initialized_ = false;
};
#endif

#if FAULTLINE_HAVE_ISAL
std::string IgzipError(int rc) {
  switch (rc) {
    case ISAL_INVALID_BLOCK:
      return "invalid block";
    case ISAL_INVALID_SYMBOL:
      return "invalid symbol";
    case ISAL_INVALID_LOOKBACK:
      return "invalid distance";
    case ISAL_INVALID_WRAPPER:
      return "incorrect header check";
    case ISAL_UNSUPPORTED_METHOD:
      return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM:
      return "incorrect data check";
    case ISAL_NEED_DICT:
      return "needs a preset dictionary";
    default:
      return "igzip error " + std::to_string(rc);
  }
}

// ISA-L's igzip decodes the same gzip members with several times less CPU than zlib (README,
// "Dependencies"). It checks each member's header and CRC, and gives back the read-ahead bytes
// of the next member when one ends, so concatenated members read as with zlib.
class GzipDecoder final : public Decoder {
 public:
  explicit GzipDecoder(std::unique_ptr<ByteStream> input)
      : Decoder("gzip", std::move(input)), state_(std::make_unique<inflate_state>()) {}

  bool Init() {
    Restart();
    return true;
  }

 private:
  Step Decode(const char** in, const char* in_end, char** out, char* out_end, bool /*finish*/,
              std::string* why) override {
    state_->next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(*in));
    state_->avail_in = static_cast<uint32_t>(in_end - *in);
    state_->next_out = reinterpret_cast<uint8_t*>(*out);
    state_->avail_out = static_cast<uint32_t>(out_end - *out);
    const int rc = isal_inflate(state_.get());
    *in = reinterpret_cast<const char*>(state_->next_in);
    *out = reinterpret_cast<char*>(state_->next_out);
    if (rc < 0 || rc == ISAL_NEED_DICT) {
      *why = IgzipError(rc);
      return Step::kError;
    }
    return state_->block_state == ISAL_BLOCK_FINISH ? Step::kEnd : Step::kOk;
  }
  void Restart() override {
    isal_inflate_init(state_.get());
    state_->crc_flag = ISAL_GZIP;
  }

  std::unique_ptr<inflate_state> state_;  // 85 KiB: the window and the decoding tables
};
#endif

std::string Bzip2Error(int rc) {
  switch (rc) {
    case BZ_DATA_ERROR:
      return "data integrity error";
    case BZ_DATA_ERROR_MAGIC:
      return "bad magic number";
    case BZ_MEM_ERROR:
      return "out of memory";
    default:
      return "bzip2 error " + std::to_string(rc);
  }
}

class Bzip2Decoder final : public Decoder {
 public:
  explicit Bzip2Decoder(std::unique_ptr<ByteStream> input) : Decoder("bzip2", std::move(input)) {}
  Bzip2Decoder(const Bzip2Decoder&) = delete;
  Bzip2Decoder& operator=(const Bzip2Decoder&) = delete;
  ~Bzip2Decoder() override {
    if (initialized_) BZ2_bzDecompressEnd(&stream_);
  }

  bool Init() { return initialized_ = BZ2_bzDecompressInit(&stream_, 0, 0) == BZ_OK; }

 private:
  Step Decode(const char** in, const char* in_end, char** out, char* out_end, bool /*finish*/,
              std::string* why) override {
    stream_.next_in = const_cast<char*>(*in);
    stream_.avail_in = static_cast<unsigned>(in_end - *in);
    stream_.next_out = *out;
    stream_.avail_out = static_cast<unsigned>(out_end - *out);
    int rc = BZ2_bzDecompress(&stream_);
    *in = stream_.next_in;
    *out = stream_.next_out;
    if (rc == BZ_STREAM_END) return Step::kEnd;
    if (rc == BZ_OK) return Step::kOk;
    *why = Bzip2Error(rc);
    return Step::kError;
  }
  // pbzip2 and `cat a.bz2 b.bz2` write several streams; libbz2 decodes one per init.
  void Restart() override {
    BZ2_bzDecompressEnd(&stream_);
    initialized_ = false;
    Init();
  }

  bz_stream stream_{};
  bool initialized_ = false;
};

std::string XzError(lzma_ret rc) {
  switch (rc) {
    case LZMA_DATA_ERROR:
      return "compressed data is corrupt";
    case LZMA_FORMAT_ERROR:
      return "file format not recognized";
    case LZMA_OPTIONS_ERROR:
      return "unsupported options";
    case LZMA_MEM_ERROR:
      return "out of memory";
    case LZMA_MEMLIMIT_ERROR:
      return "needs more than " + std::to_string(kXzMemoryLimit >> 20) + " MiB to decode";
    default:
      return "lzma error " + std::to_string(static_cast<int>(rc));
  }
}

class XzDecoder final : public Decoder {
 public:
  explicit XzDecoder(std::unique_ptr<ByteStream> input) : Decoder("xz", std::move(input)) {}
  XzDecoder(const XzDecoder&) = delete;
  XzDecoder& operator=(const XzDecoder&) = delete;
  ~XzDecoder() override { lzma_end(&stream_); }

  // LZMA_CONCATENATED reads every stream of `cat a.xz b.xz` and reports the end only once
  // LZMA_FINISH says no input follows.
  bool Init() {
    return lzma_stream_decoder(&stream_, kXzMemoryLimit, LZMA_CONCATENATED) == LZMA_OK;
  }

 private:
  Step Decode(const char** in, const char* in_end, char** out, char* out_end, bool finish,
              std::string* why) override {
    stream_.next_in = reinterpret_cast<const uint8_t*>(*in);
    stream_.avail_in = static_cast<size_t>(in_end - *in);
    stream_.next_out = reinterpret_cast<uint8_t*>(*out);
    stream_.avail_out = static_cast<size_t>(out_end - *out);
    lzma_ret rc = lzma_code(&stream_, finish ? LZMA_FINISH : LZMA_RUN);
    *in = reinterpret_cast<const char*>(stream_.next_in);
    *out = reinterpret_cast<char*>(stream_.next_out);
    if (rc == LZMA_STREAM_END) return Step::kEnd;
    if (rc == LZMA_OK || rc == LZMA_BUF_ERROR) return Step::kOk;
    *why = XzError(rc);
    return Step::kError;
  }

  lzma_stream stream_ = LZMA_STREAM_INIT;
};

class ZstdDecoder final : public Decoder {
 public:
  explicit ZstdDecoder(std::unique_ptr<ByteStream> input) : Decoder("zstd", std::move(input)) {}
  ZstdDecoder(const ZstdDecoder&) = delete;
  ZstdDecoder& operator=(const ZstdDecoder&) = delete;
  ~ZstdDecoder() override { ZSTD_freeDStream(stream_); }

  bool Init() {
    stream_ = ZSTD_createDStream();
    return stream_ != nullptr && !ZSTD_isError(ZSTD_initDStream(stream_));
  }

 private:
  // ZSTD_decompressStream returns 0 exactly when a frame is complete and flushed, and goes on
  // to the next frame by itself.
  Step Decode(const char** in, const char* in_end, char** out, char* out_end, bool /*finish*/,
              std::string* why) override {
    ZSTD_inBuffer input{*in, static_cast<size_t>(in_end - *in), 0};
    ZSTD_outBuffer output{*out, static_cast<size_t>(out_end - *out), 0};
    size_t rc = ZSTD_decompressStream(stream_, &output, &input);
    *in += input.pos;
    *out += output.pos;
    if (ZSTD_isError(rc)) {
      *why = ZSTD_getErrorName(rc);
      return Step::kError;
    }
    return rc == 0 ? Step::kEnd : Step::kOk;
  }

  ZSTD_DStream* stream_ = nullptr;
};

// UTF-16 text (as Windows tools write a log, with a byte order mark) as UTF-8, through iconv.
// A unit that is not valid UTF-16 (a lone surrogate) becomes U+FFFD; an odd byte at the end
// is dropped.
class Utf16Stream final : public ByteStream {
 public:
  Utf16Stream(std::unique_ptr<ByteStream> input, iconv_t convert)
      : input_(std::move(input)), convert_(convert) {}
  ~Utf16Stream() override { iconv_close(convert_); }
  Utf16Stream(const Utf16Stream&) = delete;
  Utf16Stream& operator=(const Utf16Stream&) = delete;

  size_t Read(char* data, size_t size) override {
    while (out_begin_ == out_.size()) {
      if (!Convert()) return 0;
    }
    const size_t n = std::min(size, out_.size() - out_begin_);
    std::memcpy(data, out_.data() + out_begin_, n);
    out_begin_ += n;
    return n;
  }
  const std::string& error() const override { return input_->error(); }

 private:
  static constexpr size_t kChunk = 64 << 10;

  // Converts the next chunk of input into out_; false at the end.
  bool Convert() {
    out_.clear();
    out_begin_ = 0;
    const size_t carried = in_.size();
    in_.resize(carried + kChunk);
    const size_t got = input_->Read(in_.data() + carried, kChunk);
    in_.resize(carried + got);
    if (got == 0) return false;
    out_.resize(in_.size() * 2 + 8);  // a UTF-16 unit is at most 3 bytes of UTF-8 (4 per pair)
    char* in = in_.data();
    size_t in_left = in_.size();
    char* out = out_.data();
    size_t out_left = out_.size();
    while (in_left > 0) {
      if (iconv(convert_, &in, &in_left, &out, &out_left) != static_cast<size_t>(-1)) break;
      if (errno == EINVAL) break;  // a unit or pair cut by the chunk: carried to the next
      if (errno != EILSEQ || out_left < 3) break;
      constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD for the unit refused
      out = std::copy(kReplacement.begin(), kReplacement.end(), out);
      out_left -= 3;
      in += std::min<size_t>(2, in_left);
      in_left -= std::min<size_t>(2, in_left);
    }
    out_.resize(out_.size() - out_left);
    in_.erase(0, in_.size() - in_left);
    return true;
  }

  std::unique_ptr<ByteStream> input_;
  iconv_t convert_;
  std::string in_;   // input not converted yet (a cut unit)
  std::string out_;  // converted text not read yet, from out_begin_
  size_t out_begin_ = 0;
};

// The producer side fills whole chunks; the consumer copies out of the oldest full one. Error
// and end pass from the producer with the last chunk, under the mutex.
class ReadAheadStream final : public ByteStream {
 public:
  explicit ReadAheadStream(std::unique_ptr<ByteStream> stream) : stream_(std::move(stream)) {
    for (size_t i = 0; i < kChunks; ++i) free_.emplace_back();
    thread_ = std::thread([this] { Produce(); });
  }
  ~ReadAheadStream() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  ReadAheadStream(const ReadAheadStream&) = delete;
  ReadAheadStream& operator=(const ReadAheadStream&) = delete;

  size_t Read(char* data, size_t size) override {
    if (taken_ == current_.size()) {
      std::unique_lock lock(mutex_);
      if (!current_.empty()) free_.push_back(std::move(current_));
      current_.clear();
      taken_ = 0;
      changed_.notify_all();
      changed_.wait(lock, [this] { return !full_.empty() || finished_; });
      if (full_.empty()) {
        error_ = producer_error_;
        return 0;
      }
      current_ = std::move(full_.front());
      full_.pop_front();
    }
    const size_t n = std::min(size, current_.size() - taken_);
    std::memcpy(data, current_.data() + taken_, n);
    taken_ += n;
    return n;
  }
  const std::string& error() const override { return error_; }

 private:
  static constexpr size_t kChunkBytes = size_t{512} << 10;
  static constexpr size_t kChunks = 4;

  void Produce() {
    while (true) {
      std::vector<char> chunk;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] { return !free_.empty() || stopping_; });
        if (stopping_) return;
        chunk = std::move(free_.back());
        free_.pop_back();
      }
      chunk.resize(kChunkBytes);
      size_t filled = 0;
      while (filled < chunk.size()) {
        const size_t got = stream_->Read(chunk.data() + filled, chunk.size() - filled);
        if (got == 0) break;
        filled += got;
      }
      chunk.resize(filled);
      const bool end = filled < kChunkBytes;
      {
        std::lock_guard lock(mutex_);
        if (filled > 0) full_.push_back(std::move(chunk));
        if (end) {
          producer_error_ = stream_->error();
          finished_ = true;
        }
      }
      changed_.notify_all();
      if (end) return;
    }
  }

  std::unique_ptr<ByteStream> stream_;  // used by the producer thread only
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<char>> full_;  // decoded, oldest first
  std::vector<std::vector<char>> free_;
  bool finished_ = false;
  bool stopping_ = false;
  std::string producer_error_;
  std::vector<char> current_;  // the consumer's chunk
  size_t taken_ = 0;
  std::string error_;
  std::thread thread_;
};

template <typename D>
std::unique_ptr<ByteStream> Start(std::unique_ptr<ByteStream> input, std::string* error) {
  auto decoder = std::make_unique<D>(std::move(input));
  if (decoder->Init()) return decoder;
  *error = "cannot start the decoder (out of memory)";
  return nullptr;
}

}  // namespace

std::unique_ptr<FileInput> FileInput::Open(const std::string& path, std::string* error) {
  if (path == "-") {
    struct stat info {};
    const bool regular = fstat(STDIN_FILENO, &info) == 0 && S_ISREG(info.st_mode);
    return std::unique_ptr<FileInput>(new FileInput(STDIN_FILENO, false, regular));
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = path + ": " + ErrnoMessage(errno);
    return nullptr;
  }
  struct stat info {};
  if (fstat(fd, &info) != 0 || S_ISDIR(info.st_mode)) {
    int reason = S_ISDIR(info.st_mode) ? EISDIR : errno;
    ::close(fd);
    *error = path + ": " + ErrnoMessage(reason);
    return nullptr;
  }
  return std::unique_ptr<FileInput>(new FileInput(fd, true, S_ISREG(info.st_mode)));
}

FileInput::~FileInput() {
  if (owned_) ::close(fd_);
}

std::string_view FileInput::Peek(size_t size) {
  size_t have = head_.size();
  if (have >= size) return std::string_view(head_).substr(0, size);
  head_.resize(size);
  while (have < size && (have == 0 || regular_file_ || Readable())) {
    size_t got = ReadFd(head_.data() + have, size - have);
    if (got == 0) break;
    have += got;
  }
  head_.resize(have);
  return head_;
}

size_t FileInput::Read(char* data, size_t size) {
  if (head_.empty()) return ReadFd(data, size);
  size_t n = std::min(size, head_.size());
  std::memcpy(data, head_.data(), n);
  head_.erase(0, n);
  return n;
}

bool FileInput::Ready() const {
  return regular_file_ || !head_.empty() || Readable();
}

bool FileInput::Readable() const {
  pollfd ready{fd_, POLLIN, 0};
  return ::poll(&ready, 1, 0) != 0;  // readable, at its end, or failed: a read will not wait
}

size_t FileInput::ReadFd(char* data, size_t size) {
  if (!error_.empty()) return 0;
  while (true) {
    ssize_t got = ::read(fd_, data, size);
    if (got >= 0) return static_cast<size_t>(got);
    if (errno != EINTR) {
      error_ = "read failed (" + ErrnoMessage(errno) + ")";
      return 0;
    }
  }
}

Compression SniffCompression(std::string_view head) {
  auto starts = [head](std::string_view magic) { return head.substr(0, magic.size()) == magic; };
  if (starts("\x1f\x8b")) return Compression::kGzip;
  // "BZh" and the block size digit: a text line may well start with "BZh".
  if (starts("BZh") && head.size() > 3 && head[3] >= '1' && head[3] <= '9') {
    return Compression::kBzip2;
  }
  if (starts(std::string_view("\xfd"
                              "7zXZ\0",
                              6)))
    return Compression::kXz;
  if (starts("\x28\xb5\x2f\xfd")) return Compression::kZstd;
  return Compression::kNone;
}

std::optional<TextEncoding> SniffUtf16(std::string_view head) {
  if (head.starts_with("\xff\xfe")) return TextEncoding::kUtf16Le;
  if (head.starts_with("\xfe\xff")) return TextEncoding::kUtf16Be;
  return std::nullopt;
}

std::unique_ptr<ByteStream> Utf16ToUtf8(TextEncoding encoding, std::unique_ptr<ByteStream> input,
                                        std::string* error) {
  // The byte order mark names the order; "UTF-16LE"/"BE" read past it as U+FEFF, dropped here.
  iconv_t convert =
      iconv_open("UTF-8", encoding == TextEncoding::kUtf16Le ? "UTF-16LE" : "UTF-16BE");
  // NOLINTNEXTLINE(performance-no-int-to-ptr): (iconv_t)-1 is iconv_open's failure value.
  if (convert == reinterpret_cast<iconv_t>(-1)) {
    *error = std::string("cannot convert UTF-16: ") + std::strerror(errno);
    return nullptr;
  }
  char bom[2];
  if (input->Read(bom, 2) != 2) {
    iconv_close(convert);
    return input;  // nothing after the mark
  }
  return std::make_unique<Utf16Stream>(std::move(input), convert);
}

std::string_view CompressionName(Compression compression) {
  switch (compression) {
    case Compression::kGzip:
      return "gzip";
    case Compression::kBzip2:
      return "bzip2";
    case Compression::kXz:
      return "xz";
    case Compression::kZstd:
      return "zstd";
    case Compression::kNone:
      break;
  }
  return "none";
}

std::unique_ptr<ByteStream> ReadAhead(std::unique_ptr<ByteStream> stream) {
  return std::make_unique<ReadAheadStream>(std::move(stream));
}

std::unique_ptr<ByteStream> MakeDecoder(Compression compression, std::unique_ptr<ByteStream> input,
                                        std::string* error) {
  switch (compression) {
    case Compression::kGzip:
      return Start<GzipDecoder>(std::move(input), error);
    case Compression::kBzip2:
      return Start<Bzip2Decoder>(std::move(input), error);
    case Compression::kXz:
      return Start<XzDecoder>(std::move(input), error);
    case Compression::kZstd:
      return Start<ZstdDecoder>(std::move(input), error);
    case Compression::kNone:
      break;
  }
  return input;
}

}  // namespace faultline::source_internal
