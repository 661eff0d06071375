#include <algorithm>
#include <cctype>
#include <string>

#include "envelope/envelope.h"
#include "model/text.h"

namespace faultline {
namespace {

// A tag that long is not a launcher's: stop looking for its closing bracket there.
constexpr size_t kMaxBracketTag = 96;
// Rank numbers beyond this many digits are not ranks (a Unix time, a port).
constexpr size_t kMaxRankDigits = 7;
// srun --label right-aligns task ids to the width of the largest one.
constexpr size_t kMaxLabelPadding = 6;
// Envelopes a rank tag may stand behind ("> 2024-05-01T12:00:00Z [rank3]: "), and the longest
// RFC 3339 stamp among them (nanoseconds and a zone offset).
constexpr size_t kMaxEnvelopes = 3;
constexpr size_t kMaxStampLength = 35;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_alpha(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0;
}

// Parses `text`, all digits, as a rank.
std::optional<int> rank_number(std::string_view text) {
  if (text.empty() || text.size() > kMaxRankDigits) return std::nullopt;
  int value = 0;
  for (char c : text) {
    if (!is_digit(c)) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

size_t with_space(std::string_view line, size_t end) {
  return end < line.size() && line[end] == ' ' ? end + 1 : end;
}

// "[1,3]<stdout>:", PRRTE's "[prterun-host-100629@1,0]<stdout>: ", and Horovod's own launcher
// (horovodrun --gloo, safe_shell_exec.py: "[{rank}]<{stdout|stderr}>:"), its rank alone.
std::optional<RankTag> open_mpi_tag(std::string_view line, std::string_view inside, size_t close) {
  const std::string_view after = line.substr(close + 1);
  if (!after.starts_with('<')) return std::nullopt;
  bool stream = false;
  for (std::string_view name : {"<stdout>:", "<stderr>:", "<stddiag>:"}) {
    if (after.starts_with(name)) {
      close += name.size();
      stream = true;
      break;
    }
  }
  if (!stream) return std::nullopt;
  const size_t comma = inside.rfind(',');
  auto rank = rank_number(comma == std::string_view::npos ? inside : inside.substr(comma + 1));
  if (!rank) return std::nullopt;
  return RankTag{*rank, false, with_space(line, close + 1), RankTag::Source::kOpenMpi};
}

// "[rank3]:" (PyTorch, global) and "[{role}{local_rank}]:" (torchrun --tee, local).
std::optional<RankTag> role_tag(std::string_view line, std::string_view inside, size_t close) {
  if (close + 1 >= line.size() || line[close + 1] != ':') return std::nullopt;
  size_t digits = inside.size();
  while (digits > 0 && is_digit(inside[digits - 1])) --digits;
  const std::string_view role = inside.substr(0, digits);
  auto rank = rank_number(inside.substr(digits));
  const bool role_ok = !role.empty() && std::all_of(role.begin(), role.end(), [](char c) {
    return is_alpha(c) || c == '_' || c == '-';
  });
  if (!rank || !role_ok) return std::nullopt;
  const bool pytorch = role == "rank";
  return RankTag{*rank, !pytorch, with_space(line, close + 2),
                 pytorch ? RankTag::Source::kPyTorch : RankTag::Source::kTorchrunTee};
}

std::optional<RankTag> bracket_tag(std::string_view line) {
  const size_t close = line.substr(0, kMaxBracketTag).find(']');
  if (close == std::string_view::npos) return std::nullopt;
  const std::string_view inside = line.substr(1, close - 1);
  if (auto tag = role_tag(line, inside, close)) return tag;
  return open_mpi_tag(line, inside, close);
}

// srun --label: "%*d: ", the task id right-aligned.
std::optional<RankTag> srun_label(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < kMaxLabelPadding && line[i] == ' ') ++i;
  const size_t first_digit = i;
  while (i < line.size() && is_digit(line[i])) ++i;
  if (i + 1 >= line.size() || line[i] != ':' || line[i + 1] != ' ') return std::nullopt;
  auto rank = rank_number(line.substr(first_digit, i - first_digit));
  if (!rank) return std::nullopt;
  return RankTag{*rank, false, i + 2, RankTag::Source::kSrunLabel};
}

// "rank3", "rank_3", "rank-03" inside one path component, not inside a word ("frank3").
std::optional<RankTag> rank_in_name(std::string_view component) {
  const std::string name = ascii_lower(component);
  for (size_t at = name.find("rank"); at != std::string::npos; at = name.find("rank", at + 1)) {
    if (at > 0 && is_alpha(name[at - 1])) continue;
    size_t i = at + 4;
    if (i < name.size() && (name[i] == '_' || name[i] == '-' || name[i] == '.')) ++i;
    size_t end = i;
    while (end < name.size() && is_digit(name[end])) ++end;
    auto rank = rank_number(std::string_view(name).substr(i, end - i));
    if (!rank) continue;
    const bool local = at >= 6 && (name.compare(at - 6, 6, "local_") == 0 ||
                                   name.compare(at - 6, 6, "local-") == 0);
    return RankTag{*rank, local, 0, RankTag::Source::kPath};
  }
  return std::nullopt;
}

// What may stand in front of a rank tag, added by whatever carried or pasted the line: an
// RFC 3339 stamp ("2024-05-01T12:00:00.123456789Z ", kubectl logs --timestamps and GitHub
// Actions), a markdown quote ("> "), a bracketed number ("[80746] ", a paste's line number), a
// collector's stream label ("[stderr] ").
// Returns its length, with the blank after it; 0 if none.
size_t envelope_length(std::string_view line) {
  if (line.starts_with("> ")) return 2;
  for (std::string_view stream : {"[stdout] ", "[stderr] ", "[STDOUT] ", "[STDERR] "}) {
    if (line.starts_with(stream)) return stream.size();
  }
  const auto digits_at = [&](size_t from, size_t count) {
    return line.size() >= from + count &&
           std::all_of(line.begin() + static_cast<long>(from),
                       line.begin() + static_cast<long>(from + count), is_digit);
  };
  if (digits_at(0, 4) && line.size() > 10 && line[4] == '-' && line[7] == '-' && line[10] == 'T' &&
      digits_at(5, 2) && digits_at(8, 2)) {
    const size_t blank = line.find(' ');
    return blank != std::string_view::npos && blank <= kMaxStampLength ? blank + 1 : 0;
  }
  if (line.starts_with('[')) {
    size_t i = 1;
    while (i < line.size() && is_digit(line[i])) ++i;
    if (i > 1 && i + 1 < line.size() && line[i] == ']' && line[i + 1] == ' ') return i + 2;
  }
  return 0;
}

}  // namespace

std::optional<RankTag> parse_rank_prefix(std::string_view line) {
  if (line.empty()) return std::nullopt;
  if (line[0] == '[') return bracket_tag(line);
  if (line[0] == ' ' || is_digit(line[0])) return srun_label(line);
  return std::nullopt;
}

std::optional<RankTag> parse_rank_prefixes(std::string_view line) {
  std::optional<RankTag> global;
  std::optional<RankTag> local;
  size_t consumed = 0;
  // Envelopes before the first tag; they count only if a tag follows them.
  for (size_t skipped = 0; skipped < kMaxEnvelopes && !parse_rank_prefix(line.substr(consumed));
       ++skipped) {
    const size_t length = envelope_length(line.substr(consumed));
    if (length == 0) return std::nullopt;
    consumed += length;
  }
  while (auto tag = parse_rank_prefix(line.substr(consumed))) {
    consumed += tag->prefix_length;
    (tag->is_local ? local : global) = tag;
  }
  std::optional<RankTag> best = global ? global : local;
  if (best) best->prefix_length = consumed;
  return best;
}

std::optional<RankTag> rank_from_path(std::string_view path) {
  std::string_view rest = path;
  std::string_view child;
  while (!rest.empty()) {
    const size_t slash = rest.rfind('/');
    const std::string_view name = slash == std::string_view::npos ? rest : rest.substr(slash + 1);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(0, slash);
    if (auto tag = rank_in_name(name)) return tag;
    // torchrun --log-dir: <run>/attempt_<n>/<local_rank>/{stdout,stderr}.log
    if ((child == "stdout.log" || child == "stderr.log") && rank_number(name)) {
      return RankTag{*rank_number(name), true, 0, RankTag::Source::kPath};
    }
    child = name;
  }
  return std::nullopt;
}

}  // namespace faultline
