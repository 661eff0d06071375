// journalctl -o json: one JSON object a line (docs/formats/nvidia.md §3.3). Only lines that
// start with '{' and name MESSAGE are parsed.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "envelope/envelope.h"

namespace faultline {
namespace {

using nlohmann::json;

// A field's text: a string, or journald's array of byte values for text that is not UTF-8.
std::optional<std::string> field_text(const json& record, const char* key) {
  const auto field = record.find(key);
  if (field == record.end()) return std::nullopt;
  if (field->is_string()) return field->get<std::string>();
  if (!field->is_array()) return std::nullopt;
  std::string bytes;
  for (const json& byte : *field) {
    if (!byte.is_number_unsigned() || byte.get<uint64_t>() > 255) return std::nullopt;
    bytes.push_back(static_cast<char>(byte.get<uint64_t>()));
  }
  return bytes;
}

// journald writes its stamps as strings of decimal microseconds.
std::optional<double> seconds_of(const json& record, const char* key) {
  const std::optional<std::string> text = field_text(record, key);
  if (!text || text->empty() ||
      !std::all_of(text->begin(), text->end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return static_cast<double>(std::stoull(*text)) / 1e6;
}

}  // namespace

std::optional<JournalRecord> parse_journal_json(std::string_view line) {
  const size_t start = line.find_first_not_of(" \t");
  if (start == std::string_view::npos || line[start] != '{' ||
      line.find("\"MESSAGE\"") == std::string_view::npos) {
    return std::nullopt;
  }
  const json record = json::parse(line.substr(start), nullptr, /*allow_exceptions=*/false);
  if (!record.is_object()) return std::nullopt;
  std::optional<std::string> message = field_text(record, "MESSAGE");
  if (!message) return std::nullopt;
  JournalRecord out;
  out.message = std::move(*message);
  out.envelope.host = field_text(record, "_HOSTNAME").value_or("");
  // Both stamps: since the epoch, and since boot.
  out.envelope.boot_seconds = seconds_of(record, "__MONOTONIC_TIMESTAMP");
  if (auto wall = seconds_of(record, "__REALTIME_TIMESTAMP")) {
    out.envelope.time = Timestamp::Absolute(*wall, 0);
  } else if (out.envelope.boot_seconds) {
    out.envelope.time = Timestamp::BootRelative(*out.envelope.boot_seconds);
  }
  return out;
}

}  // namespace faultline
