#include <algorithm>
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

// The host `ssh` runs `command` on ("ssh gpu-node-042 'sudo dmesg'", "ssh -p 22 root@node1 ..."),
// or "" when the command is no ssh to a host.
std::string_view ssh_target(std::string_view command) {
  // ssh's options that take a value, which stands in the next word.
  constexpr std::string_view kValueOptions = "BbcDEeFIiJLlmOoPpQRSWw";
  const auto next_word = [&command]() {
    const size_t start = command.find_first_not_of(' ');
    if (start == std::string_view::npos) return std::string_view();
    command.remove_prefix(start);
    const size_t end = std::min(command.find(' '), command.size());
    const std::string_view word = command.substr(0, end);
    command.remove_prefix(end);
    return word;
  };
  if (next_word() != "ssh") return {};
  for (std::string_view word = next_word(); !word.empty(); word = next_word()) {
    if (word[0] != '-') {
      const size_t at = word.rfind('@');
      const std::string_view host = at == std::string_view::npos ? word : word.substr(at + 1);
      return is_name(host) ? host : std::string_view();
    }
    if (word.size() == 2 && kValueOptions.find(word[1]) != std::string_view::npos) next_word();
  }
  return {};
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
  size_t sign = 0;
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
  // What a command run through ssh prints comes from the host it ran on.
  const std::string_view target = ssh_target(line.substr(sign + 1));
  return target.empty() ? host : target;
}

size_t launcher_tag_length(std::string_view line) {
  constexpr size_t kMaxTag = 80;
  const std::string_view head = line.substr(0, kMaxTag);
  size_t end = 0;
  if (head.starts_with('(') || head.starts_with('[')) {
    end = head.find(head.front() == '(' ? ')' : ']');
    if (end == std::string_view::npos || end < 2) return 0;
    ++end;
  } else {
    // One name, padded to the column of the bar (docker compose's "web_1  | ").
    end = head.find(" | ");
    if (end == std::string_view::npos) return 0;
    const std::string_view name = head.substr(0, head.find_last_not_of(' ', end) + 1);
    if (name.empty() || name.find_first_of(" \t") != std::string_view::npos) return 0;
    end += 2;
  }
  const size_t blanks = line.find_first_not_of(" \t", end);
  if (blanks == end || blanks == std::string_view::npos) return 0;  // a tag, then a message
  return blanks;
}

}  // namespace faultline
