#include <cctype>

#include "envelope/envelope.h"

namespace faultline {
namespace {

// A prompt's user stands within this many characters of the line's start (after a virtual
// environment's name); a line whose first '@' is further in is no prompt.
constexpr size_t kMaxUserReach = 64;

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '_';
}

bool is_name(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!is_name_char(c)) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string_view> prompt_host(std::string_view line) {
  const size_t at = line.substr(0, kMaxUserReach).find('@');
  if (at == std::string_view::npos) return std::nullopt;
  size_t start = 0;
  // A virtual environment's name before the prompt: "(venv) ", "(base) ".
  if (line.starts_with('(')) {
    const size_t close = line.find(") ");
    if (close == std::string_view::npos || close > at) return std::nullopt;
    start = close + 2;
  }
  const bool bracketed = start < at && line[start] == '[';
  if (bracketed) ++start;
  if (!is_name(line.substr(start, at - start))) return std::nullopt;
  size_t end = at + 1;
  while (end < line.size() && is_name_char(line[end])) ++end;
  const std::string_view host = line.substr(at + 1, end - at - 1);
  if (host.empty() || end >= line.size()) return std::nullopt;
  size_t sign;
  if (bracketed) {
    // Red Hat's "[user@host folder]# ": the folder's last name, then the bracket.
    if (line[end] != ' ') return std::nullopt;
    const size_t close = line.find(']', end);
    if (close == std::string_view::npos) return std::nullopt;
    sign = close + 1;
  } else {
    // Debian's "user@host:folder# ": the working folder, without blanks, then the sign.
    if (line[end] != ':') return std::nullopt;
    sign = line.find_first_of("$# ", end + 1);
    if (sign == std::string_view::npos) return std::nullopt;
  }
  if (sign >= line.size() || (line[sign] != '$' && line[sign] != '#')) return std::nullopt;
  if (sign + 1 < line.size() && line[sign + 1] != ' ') return std::nullopt;
  return host;
}

}  // namespace faultline
