#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <map>

#include "diagnose/diagnose.h"

namespace faultline {
namespace {

// user@host, as in a shell prompt, an ssh command or an e-mail address.
const RE2& user_at_host() {
  static const RE2 re(R"(([A-Za-z_][A-Za-z0-9_.-]{0,31})@([A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9]))");
  return re;
}

const RE2& home_dir() {
  static const RE2 re(R"(/(home|Users)/([^/\s:'"]+))");
  return re;
}

const RE2& ipv4() {
  static const RE2 re(R"((\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3}))");
  return re;
}

// The full form, and the compressed forms with "::".
const RE2& ipv6() {
  static const RE2 re(
      R"((?i)((?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}|(?:[0-9a-f]{1,4}:){1,7}:(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,6})?|::[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,6}))");
  return re;
}

// Whether text[begin, end) stands alone: the characters around it are not in `word`.
bool stands_alone(std::string_view text, size_t begin, size_t end, std::string_view word) {
  const auto in_word = [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || word.find(c) != std::string_view::npos;
  };
  return (begin == 0 || !in_word(text[begin - 1])) && (end == text.size() || !in_word(text[end]));
}

// The capture groups of a match, 0 being the whole match.
using Groups = std::vector<re2::StringPiece>;

// Replaces the matches of `re` for which `mask` gives a replacement; where it gives none, the
// search goes on from the next character.
std::string replace(std::string_view text, const RE2& re,
                    const std::function<std::optional<std::string>(const Groups&)>& mask) {
  Groups groups(static_cast<size_t>(re.NumberOfCapturingGroups()) + 1);
  const re2::StringPiece input(text.data(), text.size());
  std::string out;
  size_t copied = 0;
  size_t from = 0;
  while (from <= text.size() && re.Match(input, from, text.size(), RE2::UNANCHORED, groups.data(),
                                         static_cast<int>(groups.size()))) {
    const auto begin = static_cast<size_t>(groups[0].data() - text.data());
    const size_t end = begin + groups[0].size();
    if (std::optional<std::string> replacement = mask(groups)) {
      out.append(text.substr(copied, begin - copied));
      out += *replacement;
      copied = end;
      from = end > begin ? end : end + 1;
    } else {
      from = begin + 1;
    }
  }
  out.append(text.substr(copied));
  return out;
}

bool is_ip(std::string_view text) {
  return RE2::FullMatch(re2::StringPiece(text.data(), text.size()), ipv4()) ||
         RE2::FullMatch(re2::StringPiece(text.data(), text.size()), ipv6());
}

class Redactor {
 public:
  std::string MaskHost(const std::string& host) {
    if (host.empty()) return host;
    return is_ip(host) ? Mask(kIp, host) : Mask(kHost, host);
  }

  std::string MaskText(std::string_view text) {
    std::string out = replace(text, user_at_host(), [&](const Groups& g) {
      return Mask(kUser, std::string(g[1])) + "@" + MaskHost(std::string(g[2]));
    });
    out = replace(out, home_dir(), [&](const Groups& g) {
      // Appended rather than "/" + ...: GCC 12 at -O3 warns (-Wrestrict) about the latter.
      std::string path = "/";
      path.append(g[1].data(), g[1].size()).append("/").append(Mask(kUser, std::string(g[2])));
      return path;
    });
    for (const std::string& host : hosts_) out = MaskWord(out, host, masks_[kHost].at(host));
    out = replace(out, ipv4(), [&](const Groups& g) -> std::optional<std::string> {
      const std::string_view whole(g[0].data(), g[0].size());
      const auto begin = static_cast<size_t>(g[0].data() - out.data());
      // Not part of a longer dotted number (a version string).
      if (!stands_alone(out, begin, begin + whole.size(), ".")) return std::nullopt;
      for (size_t i = 1; i <= 4; ++i) {
        if (g[i].size() > 1 && g[i][0] == '0') return std::nullopt;
        if (std::stoi(std::string(g[i])) > 255) return std::nullopt;
      }
      return Mask(kIp, std::string(whole));
    });
    out = replace(out, ipv6(), [&](const Groups& g) -> std::optional<std::string> {
      const auto begin = static_cast<size_t>(g[0].data() - out.data());
      // Not a C++ scope ("c10::cuda") or a longer run of colons.
      if (!stands_alone(out, begin, begin + g[0].size(), "_:.")) return std::nullopt;
      std::string address(g[0]);
      std::transform(address.begin(), address.end(), address.begin(), ::tolower);
      return Mask(kIp, address);
    });
    return out;
  }

 private:
  enum Kind { kHost, kUser, kIp };

  std::string Mask(Kind kind, const std::string& name) {
    static constexpr std::array<std::string_view, 3> kPrefixes = {"host", "user", "ip"};
    auto [it, added] = masks_[kind].try_emplace(name);
    if (added) {
      it->second = fmt::format("{}-{}", kPrefixes[kind], masks_[kind].size());
      // Longer names first, so that "node17.corp" is masked before "node17" could be. A name
      // with no letter ("0", a rank's folder) is masked as a field but not in text, where it
      // would hit every number.
      const bool has_letter = std::any_of(name.begin(), name.end(), [](char c) {
        return std::isalpha(static_cast<unsigned char>(c));
      });
      if (kind == kHost && has_letter) {
        hosts_.insert(std::upper_bound(hosts_.begin(), hosts_.end(), name,
                                       [](const std::string& a, const std::string& b) {
                                         return a.size() > b.size();
                                       }),
                      name);
      }
    }
    return it->second;
  }

  // `text` with each whole-word `name` (not inside a longer host-like word) as `mask`.
  static std::string MaskWord(const std::string& text, const std::string& name,
                              const std::string& mask) {
    std::string out;
    size_t copied = 0;
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
      if (at < copied || !stands_alone(text, at, at + name.size(), "_-")) continue;
      out.append(text, copied, at - copied);
      out += mask;
      copied = at + name.size();
    }
    return copied == 0 ? text : out + text.substr(copied);
  }

  std::array<std::map<std::string, std::string>, 3> masks_;
  std::vector<std::string> hosts_;  // the names of masks_[kHost] to mask in text, longest first
};

using Edit = std::function<void(std::string*)>;

// Calls `host` on every host field of the analysis and `text` on every other string.
void visit(Analysis* analysis, const Edit& host, const Edit& text) {
  const auto evidence = [&](Evidence& e) {
    text(&e.path);
    text(&e.text);
  };
  for (InputSummary& input : analysis->inputs) {
    host(&input.host);
    text(&input.path);
    text(&input.error);
  }
  for (std::string& warning : analysis->warnings) text(&warning);
  for (Event& event : analysis->events) {
    host(&event.host);
    evidence(event.evidence);
    for (auto& [name, value] : event.fields) text(&value);
  }
  for (GpuState& state : analysis->states) {
    host(&state.host);
    evidence(state.source);
    for (auto& [name, value] : state.fields) text(&value);
    for (auto& [name, line] : state.field_lines) text(&line.second);
  }
  for (Series& series : analysis->series) {
    host(&series.host);
    text(&series.path);
  }
  for (LossLogger& logger : analysis->loss_loggers) {
    host(&logger.host);
    text(&logger.path);
  }
  for (Diagnosis& d : analysis->diagnoses) {
    host(&d.host);
    for (Evidence& e : d.evidence) evidence(e);
    for (std::string& fix : d.fix) text(&fix);
    for (VerifyStep& step : d.verify) {
      text(&step.command);
      text(&step.expect);
    }
    for (std::string& missing : d.missing) text(&missing);
    for (std::string& note : d.notes) text(&note);
  }
}

}  // namespace

void redact(Analysis* analysis) {
  Redactor redactor;
  // First every name gets its number, in order of appearance; then every string is rewritten,
  // so that a host named late in the run is masked in the lines read before it too.
  visit(
      analysis, [&](std::string* host) { redactor.MaskHost(*host); },
      [&](std::string* text) { redactor.MaskText(*text); });
  visit(
      analysis, [&](std::string* host) { *host = redactor.MaskHost(*host); },
      [&](std::string* text) { *text = redactor.MaskText(*text); });
}

}  // namespace faultline
