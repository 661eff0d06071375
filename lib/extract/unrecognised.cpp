#include "extract/unrecognised.h"

#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <memory>
#include <vector>

#include "catalog/signatures.h"
#include "model/model.h"
#include "model/text.h"

namespace faultline::extract_internal {
namespace {

// How far into a line its envelope may reach.
constexpr size_t kEnvelopeReach = 120;

// Passes over the envelope: through "kernel: " (syslog, journal), then leading bracketed
// stamps and tags ("[ 12.345]", "[rank3]:") and an ISO 8601 stamp.
std::string_view message_of(std::string_view line) {
  if (size_t at = line.substr(0, kEnvelopeReach).find(" kernel: "); at != std::string_view::npos) {
    line = line.substr(at + 9);
  }
  line = trim(line);
  for (int tags = 0; tags < 4 && line.starts_with('['); ++tags) {
    const size_t close = line.substr(0, kEnvelopeReach).find(']');
    if (close == std::string_view::npos) break;
    line = line.substr(close + 1);
    if (line.starts_with(':')) line.remove_prefix(1);
    line = trim(line);
  }
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

}  // namespace

std::string line_template(std::string_view line) {
  // The envelope and the first bytes of the message are enough to tell messages apart.
  std::string text(message_of(line).substr(0, 2 * kTemplateLength));
  apply_masks(0, kMasks.size(), &text);
  if (text.size() > kTemplateLength) text.resize(kTemplateLength);
  return text;
}

const std::string& TemplateMemo::Of(std::string_view line) {
  // The message with each word that holds a digit, or that is a short hex word ("cc" of
  // "0000:cc:00.0"), as '#': what the masks would mask, closely enough to share a template.
  const std::string_view message = message_of(line).substr(0, 2 * kTemplateLength);
  std::string key;
  key.reserve(message.size());
  for (size_t i = 0; i < message.size();) {
    size_t end = i;
    bool digit = false;
    bool hex = true;
    while (end < message.size() &&
           (std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '_')) {
      digit = digit || std::isdigit(static_cast<unsigned char>(message[end]));
      hex = hex && std::isxdigit(static_cast<unsigned char>(message[end]));
      ++end;
    }
    if (end == i) {
      key += message[i++];
      continue;
    }
    if (digit || (hex && end - i <= 4)) {
      key += '#';
    } else {
      key.append(message.substr(i, end - i));
    }
    i = end;
  }
  if (auto known = templates_.find(key); known != templates_.end()) return known->second;
  if (templates_.size() >= kMemoLines) templates_.clear();
  return templates_.emplace(std::move(key), line_template(line)).first->second;
}

bool error_like_outside_quotes(std::string_view line, const Signature& signature) {
  // Nothing to mask: the match stands.
  if (line.find_first_of("'\"/") == std::string_view::npos) return true;
  std::string text(line);
  apply_masks(kQuotesAndPaths, kQuotesAndPaths + 2, &text);
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
