#include "extract/unrecognised.h"

#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <memory>
#include <vector>

#include "catalog/signatures.h"
#include "extract/extract.h"
#include "model/model.h"
#include "model/text.h"

namespace faultline::extract_internal {
namespace {

// How far into a line its envelope may reach.
constexpr size_t kEnvelopeReach = 120;

// Passes over the envelope: through "kernel: " (syslog, journal), then leading bracketed
// stamps and tags ("[ 12.345]", "[rank3]:", a launcher's "[1,3]<stdout>:") and an ISO 8601
// stamp.
std::string_view message_of(std::string_view line) {
  if (size_t at = line.substr(0, kEnvelopeReach).find(" kernel: "); at != std::string_view::npos) {
    line = line.substr(at + 9);
  }
  line = trim(line);
  for (int tags = 0; tags < 4 && line.starts_with('['); ++tags) {
    const size_t close = line.substr(0, kEnvelopeReach).find(']');
    if (close == std::string_view::npos) break;
    line = line.substr(close + 1);
    for (std::string_view stream : {"<stdout>", "<stderr>", "<stddiag>"}) {
      if (line.starts_with(stream)) line.remove_prefix(stream.size());
    }
    if (line.starts_with(':')) line.remove_prefix(1);
    line = trim(line);
  }
  if (line.empty() || !std::isdigit(static_cast<unsigned char>(line.front()))) return line;
  static const RE2 kIsoStamp(
      R"(^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s+)");
  re2::StringPiece rest(line.data(), line.size());
  if (RE2::Consume(&rest, kIsoStamp)) line = std::string_view(rest.data(), rest.size());
  return line;
}

struct Mask {
  const char* pattern;
  const char* replacement;
};

// In this order: a time before it is read as numbers, a PCI address before its parts are.
// kQuotesAndPaths begins the masks of quoted strings and paths.
constexpr size_t kQuotesAndPaths = 4;
constexpr std::array kMasks = {
    Mask{R"(\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?)",
         "<time>"},
    Mask{R"(\b\d{1,2}:\d\d:\d\d(?:[.,]\d+)?)", "<time>"},
    Mask{R"((?i)\b(?:GPU-|MIG-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b)",
         "<uuid>"},
    Mask{
        R"((?i)\b(?:PCI:)?(?:[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}(?:\.[0-7])?|[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])\b)",
        "<pci>"},
    Mask{R"('[^']*'|"[^"]*")", "<str>"},
    Mask{R"((?:~|\.{1,2})?/[\w.@+\-]+(?:/[\w.@+\-]*)+)", "<path>"},
    Mask{
        R"((?i)\b0x[0-9a-f]+\b|\b[0-9a-f]*\d[0-9a-f]*[a-f][0-9a-f]*\b|\b[0-9a-f]*[a-f][0-9a-f]*\d[0-9a-f]*\b)",
        "<hex>"},
    Mask{R"(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)", "<num>"},
    Mask{R"(\s+)", " "},
};

const std::vector<std::unique_ptr<RE2>>& mask_regexes() {
  static const auto* const kRegexes = [] {
    auto* regexes = new std::vector<std::unique_ptr<RE2>>();
    for (const Mask& mask : kMasks) regexes->push_back(std::make_unique<RE2>(mask.pattern));
    return regexes;
  }();
  return *kRegexes;
}

void apply_masks(size_t first, size_t last, std::string* text) {
  for (size_t i = first; i < last; ++i) {
    RE2::GlobalReplace(text, *mask_regexes()[i], kMasks[i].replacement);
  }
}

// The classes of a byte for TemplateMemo's key: part of a word, a digit, a hex digit.
enum : uint8_t { kWordByte = 1, kDigitByte = 2, kHexByte = 4 };
constexpr std::array<uint8_t, 256> kByteClass = [] {
  std::array<uint8_t, 256> table{};
  for (int c = 0; c < 256; ++c) {
    const bool digit = c >= '0' && c <= '9';
    const bool hex = digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    const bool word = digit || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    table[static_cast<size_t>(c)] = static_cast<uint8_t>(
        (word ? kWordByte : 0) | (digit ? kDigitByte : 0) | (hex ? kHexByte : 0));
  }
  return table;
}();

// Whether a word kNegated begins with ("without", "no", "zero", "0") stands before a space or a
// tab: a test far cheaper than kNegated's search, which most lines then skip.
bool has_negation_word(std::string_view line) {
  constexpr std::array<std::string_view, 4> kWords = {"without", "no", "zero", "0"};
  const auto is_word = [](char c) {
    return (kByteClass[static_cast<unsigned char>(c)] & kWordByte) != 0;
  };
  const auto ends_word = [&](size_t end) {
    for (std::string_view word : kWords) {
      if (end < word.size()) continue;
      const size_t start = end - word.size();
      if (start > 0 && is_word(line[start - 1])) continue;
      if (ascii_lower(line.substr(start, word.size())) == word) return true;
    }
    return false;
  };
  for (const char blank : {' ', '\t'}) {
    for (size_t at = line.find(blank, 1); at != std::string_view::npos;
         at = line.find(blank, at + 1)) {
      // Each word ends in 't', 'o' or '0' (0x20 folds the letters' case and keeps '0').
      const char last = static_cast<char>(line[at - 1] | 0x20);
      if ((last == 't' || last == 'o' || last == '0') && ends_word(at)) return true;
    }
  }
  return false;
}

}  // namespace

const std::string& TemplateMemo::Of(std::string_view line) {
  // The message with each word that holds a digit, or that is a short hex word ("cc" of
  // "0000:cc:00.0"), as '#': what the masks would mask, closely enough to share a template.
  const std::string_view message = message_of(line).substr(0, 2 * kTemplateLength);
  const auto* bytes = reinterpret_cast<const unsigned char*>(message.data());
  // Written in place: the key is never longer than the message. A word is copied as it is
  // read, and replaced by '#' once it is known to be masked.
  key_.resize(message.size());
  char* out = key_.data();
  for (size_t i = 0; i < message.size();) {
    if ((kByteClass[bytes[i]] & kWordByte) == 0) {
      *out++ = message[i++];
      continue;
    }
    char* const word = out;
    uint8_t all = kHexByte;
    uint8_t any = 0;
    for (; i < message.size() && (kByteClass[bytes[i]] & kWordByte) != 0; ++i) {
      all &= kByteClass[bytes[i]];
      any |= kByteClass[bytes[i]];
      *out++ = message[i];
    }
    if ((any & kDigitByte) != 0 || (all != 0 && out - word <= 4)) {
      out = word;
      *out++ = '#';
    }
  }
  key_.resize(static_cast<size_t>(out - key_.data()));
  if (auto known = templates_.find(key_); known != templates_.end()) return known->second;
  if (templates_.size() >= kMemoLines) templates_.clear();
  return templates_.emplace(key_, line_template(line)).first->second;
}

bool error_like_after_masks(std::string_view line, const Signature& signature) {
  // An error word a negation stands before: "without errors", "no errors", "0 failed".
  static const RE2 kNegated(
      R"((?i)\b(?:without|no|zero|0)\s+(?:[a-z]+\s+)?(?:errors?|fail(?:ed|ures?)?)\b)");
  // memchr for each byte (find_first_of would test the three bytes at every position).
  const bool quoted = line.find('\'') != std::string_view::npos ||
                      line.find('"') != std::string_view::npos ||
                      line.find('/') != std::string_view::npos;
  const bool negated = has_negation_word(line) &&
                       RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), kNegated);
  // Nothing to mask: the match stands.
  if (!quoted && !negated) return true;
  // A structured log's message is a quoted value ("msg":"failed to ...", zap, logrus, slog):
  // it is read as text, not masked like the quoted strings inside a message.
  static const RE2 kMessageValue(
      R"re("(?:msg|message|error|err|reason)"\s*:\s*"((?:[^"\\]|\\.)*)")re");
  std::string text(line);
  if (quoted) {
    RE2::GlobalReplace(&text, kMessageValue, " \\1 ");
    apply_masks(kQuotesAndPaths, kQuotesAndPaths + 2, &text);
  }
  if (negated) RE2::GlobalReplace(&text, kNegated, "<none>");
  return RE2::PartialMatch(text, *signature.regex);
}

std::string driver_line_gpu(std::string_view line) {
  static const RE2 kDriverLine(R"((?i)NVRM|nvidia|\bGPU\b)");
  static const RE2 kAddress(
      R"((?i)\b((?:PCI:)?[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}(?:\.[0-7])?)\b)");
  const re2::StringPiece whole(line.data(), line.size());
  if (!RE2::PartialMatch(whole, kDriverLine)) return "";
  re2::StringPiece rest = whole;
  std::string address;
  std::string found;
  while (RE2::FindAndConsume(&rest, kAddress, &address)) {
    const std::string gpu = normalize_pci(address);
    if (gpu.empty()) continue;
    if (!found.empty() && gpu != found) return "";
    found = gpu;
  }
  return found;
}

}  // namespace faultline::extract_internal

namespace faultline {

std::string line_template(std::string_view line) {
  using namespace extract_internal;
  // The envelope and the first bytes of the message are enough to tell messages apart.
  std::string text(message_of(line).substr(0, 2 * kTemplateLength));
  apply_masks(0, kMasks.size(), &text);
  if (text.size() > kTemplateLength) text.resize(kTemplateLength);
  return text;
}

}  // namespace faultline
