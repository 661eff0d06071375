// journalctl -o json: one JSON object a line (docs/formats/nvidia.md §3.3). Read by hand, not
// with a JSON library: only lines that start with '{' pay, and only the keys named here are
// kept.
#include <charconv>

#include "envelope/envelope.h"

namespace faultline {
namespace {

void skip_space(std::string_view& text) {
  while (!text.empty() && (text[0] == ' ' || text[0] == '\t')) text.remove_prefix(1);
}

void append_utf8(uint32_t code, std::string* out) {
  if (code < 0x80) {
    out->push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code >> 6)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xE0 | (code >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

// A JSON string at the front of `text`, decoded into *out when out is given. A surrogate
// (a character beyond the first plane) becomes U+FFFD: log text that matters is ASCII.
bool take_string(std::string_view& text, std::string* out) {
  if (text.empty() || text[0] != '"') return false;
  size_t i = 1;
  while (i < text.size() && text[i] != '"') {
    const char c = text[i++];
    if (c != '\\') {
      if (out) out->push_back(c);
      continue;
    }
    if (i >= text.size()) return false;
    const char escaped = text[i++];
    if (escaped == 'u') {
      uint32_t code = 0;
      if (i + 4 > text.size()) return false;
      const auto [end, ec] = std::from_chars(text.data() + i, text.data() + i + 4, code, 16);
      if (ec != std::errc() || end != text.data() + i + 4) return false;
      i += 4;
      if (out) append_utf8(code >= 0xD800 && code <= 0xDFFF ? 0xFFFD : code, out);
      continue;
    }
    if (!out) continue;
    switch (escaped) {
      case 'n':
        out->push_back('\n');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      default:  // '"', '\\', '/'
        out->push_back(escaped);
    }
  }
  if (i >= text.size()) return false;
  text.remove_prefix(i + 1);
  return true;
}

// journald's array of byte values, for a field that is not UTF-8.
bool take_bytes(std::string_view& text, std::string* out) {
  text.remove_prefix(1);  // '['
  while (true) {
    skip_space(text);
    if (text.starts_with(']')) break;
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || value > 255) return false;
    if (out) out->push_back(static_cast<char>(value));
    text.remove_prefix(static_cast<size_t>(end - text.data()));
    skip_space(text);
    if (text.starts_with(',')) text.remove_prefix(1);
    if (text.empty()) return false;
  }
  text.remove_prefix(1);
  return true;
}

// A value that is neither string nor array (a number, null): up to the next ',' or '}'.
bool skip_scalar(std::string_view& text) {
  const size_t end = text.find_first_of(",}");
  if (end == std::string_view::npos || end == 0) return false;
  text.remove_prefix(end);
  return true;
}

std::optional<uint64_t> whole_number(const std::string& text) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<JournalRecord> parse_journal_json(std::string_view line) {
  skip_space(line);
  if (!line.starts_with('{') || line.find("\"MESSAGE\"") == std::string_view::npos) {
    return std::nullopt;
  }
  line.remove_prefix(1);
  JournalRecord record;
  bool has_message = false;
  std::string key, realtime, monotonic;
  while (true) {
    skip_space(line);
    if (line.starts_with('}')) break;
    key.clear();
    if (!take_string(line, &key)) return std::nullopt;
    skip_space(line);
    if (!line.starts_with(':')) return std::nullopt;
    line.remove_prefix(1);
    skip_space(line);
    std::string* value = key == "MESSAGE"                 ? &record.message
                         : key == "_HOSTNAME"             ? &record.envelope.host
                         : key == "__REALTIME_TIMESTAMP"  ? &realtime
                         : key == "__MONOTONIC_TIMESTAMP" ? &monotonic
                                                          : nullptr;
    bool read = false;
    if (line.starts_with('"')) {
      read = take_string(line, value);
    } else if (line.starts_with('[')) {
      read = take_bytes(line, value);
    } else {
      read = skip_scalar(line);
    }
    if (!read) return std::nullopt;
    has_message = has_message || key == "MESSAGE";
    skip_space(line);
    if (line.starts_with(',')) line.remove_prefix(1);
  }
  if (!has_message) return std::nullopt;
  // Both stamps are microseconds: since the epoch, and since boot.
  if (auto boot = whole_number(monotonic)) record.envelope.boot_seconds = *boot / 1e6;
  if (auto wall = whole_number(realtime)) {
    record.envelope.time = Timestamp::Absolute(*wall / 1e6, 0);
  } else if (record.envelope.boot_seconds) {
    record.envelope.time = Timestamp::BootRelative(*record.envelope.boot_seconds);
  }
  return record;
}

}  // namespace faultline
