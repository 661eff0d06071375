#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <map>
#include <memory>

#include "diagnose/diagnose.h"
#include "model/text.h"

namespace faultline {
namespace {

// user@host, as in a shell prompt, an ssh command or an e-mail address.
const RE2& user_at_host() {
  static const RE2 re(R"(([A-Za-z_][A-Za-z0-9_.-]{0,31})@([A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9]))");
  return re;
}

// A home folder: /home/NAME, /Users/NAME (also below /nfs, C:/, or relative: home/NAME),
// C:\Users\NAME (its backslashes doubled where the line was JSON or a Python repr). Group 1 is
// kept, group 2 is the user.
const RE2& home_dir() {
  static const RE2 re(R"(((?:^|/|\\+)(?i:home|users)(?:/|\\+))([^/\\\s:'"()\[\]<>,;|*?]+))");
  return re;
}

// ~NAME, a user's home as a shell writes it (POSIX user names: lower case, digits, _ and -).
const RE2& tilde_home() {
  static const RE2 re(R"(~([a-z_][a-z0-9_-]*))");
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

// An EC2 host name that spells its IPv4 address: ip-10-20-30-40 (private, the label of
// ip-10-20-30-40.ec2.internal) and ec2-54-1-2-3 (public, of ec2-54-1-2-3.compute-1.amazonaws.com).
const RE2& ec2_ip_name() {
  static const RE2 re(R"((?i)(?:ip|ec2)-(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3}))");
  return re;
}

// An EC2 instance id: "i-" and 8 (before 2016) or 17 hex digits.
const RE2& instance_id() {
  static const RE2 re(R"((?i)(i-(?:[0-9a-f]{17}|[0-9a-f]{8})))");
  return re;
}

// Lines that name a host without an envelope, each the host in group 1: a name under a private
// DNS suffix (RFC 6762 .local, ICANN's .internal, .lan, .corp, .localdomain, home.arpa); NCCL's
// "HOST:PID:TID [GPU] NCCL" prefix; torchrun's failure summary ("host      : HOST") and launch
// configuration ("master_addr: HOST", "rdzv_endpoint: HOST:PORT"); torch's c10d ("failed to connect
// to [HOST]:PORT", "any network address of (HOST, PORT)"); Slurm ("srun: error: HOST: task 3:",
// "*** JOB 17 ON HOST CANCELLED").
struct HostShape {
  HostShape(const std::string& pattern, bool names_only)
      : re(pattern), machine_names_only(names_only) {}

  RE2 re;
  // "host: unknown" names no host: after a bare keyword, only a name with a digit, dot or dash
  // (a machine's name, not a word) is taken.
  bool machine_names_only;
};

const std::vector<std::unique_ptr<HostShape>>& host_shapes() {
  static const std::vector<std::unique_ptr<HostShape>> shapes = [] {
    // A host name as the shapes print it: letters, digits, dots and dashes.
    const std::string name = R"(([A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?))";
    std::vector<std::unique_ptr<HostShape>> out;
    for (
        const auto& [pattern, names_only] : std::initializer_list<std::pair<std::string, bool>>{
            {R"((?i)((?:[A-Za-z0-9][A-Za-z0-9-]*\.)+(?:internal|local|localdomain|lan|corp|home\.arpa))(?:[^A-Za-z0-9.-]|$))",
             false},
            {name + R"(:\d+:\d+ \[\d+\] NCCL )", false},
            {R"re((?i)\b(?:host|hostname|master_addr)"?\s*[:=]\s*"?)re" + name +
                 R"((?:[^A-Za-z0-9.-]|$))",
             true},
            {R"((?i)\brdzv_endpoint\s*[:=]\s*)" + name + R"(:\d)", false},
            {R"(\bto \[)" + name + R"(\]:\d)", false},
            {R"(\baddress of \()" + name + R"(, \d)", false},
            {R"(\bsrun: error: )" + name + R"(: task )", false},
            {R"(\*\*\* (?:JOB|STEP) [\d.]+ ON )" + name + R"( CANCELLED)", false},
        }) {
      out.push_back(std::make_unique<HostShape>(pattern, names_only));
    }
    return out;
  }();
  return shapes;
}

bool is_alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}
bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
bool has_letter(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; });
}

// Whether text[begin, end) stands alone: the characters around it are not in `word`.
bool stands_alone(std::string_view text, size_t begin, size_t end, std::string_view word) {
  const auto in_word = [&](char c) {
    return is_alnum(c) || word.find(c) != std::string_view::npos;
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

std::string_view view(const re2::StringPiece& piece) {
  return {piece.data(), piece.size()};
}

// "10.20.30.40" when the four groups are the octets of an address as written (no leading zero,
// none over 255).
std::optional<std::string> octets(const Groups& g) {
  for (size_t i = 1; i <= 4; ++i) {
    if (g[i].size() > 1 && g[i][0] == '0') return std::nullopt;
    if (*parse_number<int>(view(g[i])) > 255) return std::nullopt;
  }
  return fmt::format("{}.{}.{}.{}", view(g[1]), view(g[2]), view(g[3]), view(g[4]));
}

bool is_ip(std::string_view text) {
  return RE2::FullMatch(re2::StringPiece(text.data(), text.size()), ipv4()) ||
         RE2::FullMatch(re2::StringPiece(text.data(), text.size()), ipv6());
}

// Masks in two steps: Learn() every string, which numbers each name in order of first appearance
// and collects the host names, then Mask() every string, which rewrites them all. A host is
// masked in text whatever its case and inside a compound token: wherever neither neighbour is an
// ASCII letter or digit ("node-a17_backup", "NODE-A17.cluster.local", not "node-a170"). All the
// names are one alternation, so a string is read once however many hosts the run has.
class Redactor {
 public:
  void LearnHost(const std::string& host) { MaskHost(host); }

  void LearnText(std::string_view text) {
    MaskShapes(text);
    const re2::StringPiece input(text.data(), text.size());
    for (const auto& shape : host_shapes()) {
      re2::StringPiece rest = input;
      re2::StringPiece name;
      while (RE2::FindAndConsume(&rest, shape->re, &name)) {
        if (shape->machine_names_only &&
            view(name).find_first_of("0123456789.-") == std::string_view::npos) {
          continue;
        }
        // The tail of a longer name ("compute.internal" of ip-<num>.compute.internal, a
        // template's placeholders) is not a host of its own.
        const auto begin = static_cast<size_t>(name.data() - text.data());
        if (begin > 0 && std::string_view(".->").find(text[begin - 1]) != std::string_view::npos) {
          continue;
        }
        MaskHost(std::string(view(name)));
      }
    }
    re2::StringPiece rest = input;
    re2::StringPiece id;
    while (RE2::FindAndConsume(&rest, instance_id(), &id)) {
      const auto begin = static_cast<size_t>(id.data() - text.data());
      if (stands_alone(text, begin, begin + id.size(), "")) MaskHost(std::string(view(id)));
    }
  }

  // Builds the alternation of the host names learnt; Mask() needs it.
  void Seal() {
    if (names_.empty()) return;
    // Longer names first: RE2 takes the first alternative that matches, so that
    // "node17.corp" is masked whole before "node17" could be.
    std::stable_sort(names_.begin(), names_.end(), [](const std::string& a, const std::string& b) {
      return a.size() > b.size();
    });
    std::string pattern = "(";
    for (const std::string& name : names_) {
      if (pattern.size() > 1) pattern += '|';
      pattern += RE2::QuoteMeta(name);
    }
    pattern += R"()(?:[^A-Za-z0-9]|\z))";
    RE2::Options options;
    options.set_case_sensitive(false);
    options.set_max_mem(int64_t{256} << 20);  // thousands of hosts in one automaton
    names_re_ = std::make_unique<RE2>(pattern, options);
  }

  std::string MaskHost(const std::string& host) {
    if (host.empty()) return host;
    if (is_ip(host)) return Mask(kIp, ascii_lower(host));
    // ip-10-20-30-40.ec2.internal is the address's name: ip-1.ec2.internal.
    if (RE2::PartialMatch(host, ec2_ip_name())) return MaskEc2(host);
    const std::string name = ascii_lower(host);
    std::string mask = Mask(kHost, name);
    // The first label of a qualified name stands for the host too when it numbers a machine
    // (letters and digits: "node17" of node17.corp.local, not "login" or "www").
    const size_t dot = name.find('.');
    if (dot != std::string::npos && dot > 0) {
      const std::string label = name.substr(0, dot);
      if (has_letter(label) && std::any_of(label.begin(), label.end(), is_digit) &&
          masks_[kHost].try_emplace(label, mask).second) {
        AddName(label);
      }
    }
    return mask;
  }

  std::string MaskText(std::string_view text) { return MaskShapes(text, /*hosts=*/true); }

 private:
  enum Kind { kHost, kUser, kIp };

  // Every shape of MaskText; the learnt host names only when `hosts` (after Seal()).
  std::string MaskShapes(std::string_view text, bool hosts = false) {
    std::string out = replace(text, user_at_host(), [&](const Groups& g) {
      return Mask(kUser, std::string(view(g[1]))) + "@" + MaskHost(std::string(view(g[2])));
    });
    out = replace(out, home_dir(), [&](const Groups& g) {
      std::string path(view(g[1]));
      return path.append(Mask(kUser, std::string(view(g[2]))));
    });
    out = replace(out, tilde_home(), [&](const Groups& g) -> std::optional<std::string> {
      const auto begin = static_cast<size_t>(g[0].data() - out.data());
      const size_t end = begin + g[0].size();
      // After a space, "=", a quote or bracket and before "/" or the end of a word: not a C++
      // destructor ("ProcessGroupNCCL::~ProcessGroupNCCL()") or a version ("1ubuntu1~22.04").
      const bool after_space = begin == 0 || std::string_view(" \t='\"([,").find(out[begin - 1]) !=
                                                 std::string_view::npos;
      const bool before_end =
          end == out.size() ||
          std::string_view("/ \t'\")],;:").find(out[end]) != std::string_view::npos;
      if (!after_space || !before_end) return std::nullopt;
      return "~" + Mask(kUser, std::string(view(g[1])));
    });
    if (hosts && names_re_) out = MaskNames(out);
    out = replace(out, ec2_ip_name(), [&](const Groups& g) -> std::optional<std::string> {
      const auto begin = static_cast<size_t>(g[0].data() - out.data());
      if (!stands_alone(out, begin, begin + g[0].size(), "")) return std::nullopt;
      const std::optional<std::string> address = octets(g);
      if (!address) return std::nullopt;
      return Mask(kIp, *address);
    });
    out = replace(out, ipv4(), [&](const Groups& g) -> std::optional<std::string> {
      const auto begin = static_cast<size_t>(g[0].data() - out.data());
      // Not part of a longer dotted number (a version string).
      if (!stands_alone(out, begin, begin + g[0].size(), ".")) return std::nullopt;
      const std::optional<std::string> address = octets(g);
      if (!address) return std::nullopt;
      return Mask(kIp, *address);
    });
    out = replace(out, ipv6(), [&](const Groups& g) -> std::optional<std::string> {
      const auto begin = static_cast<size_t>(g[0].data() - out.data());
      // Not a C++ scope ("c10::cuda") or a longer run of colons.
      if (!stands_alone(out, begin, begin + g[0].size(), "_:.")) return std::nullopt;
      return Mask(kIp, ascii_lower(view(g[0])));
    });
    return out;
  }

  // `host` with its EC2 address label masked as that address: ip-10-20-30-40.ec2.internal is
  // ip-1.ec2.internal.
  std::string MaskEc2(const std::string& host) {
    return replace(host, ec2_ip_name(), [&](const Groups& g) -> std::optional<std::string> {
      const std::optional<std::string> address = octets(g);
      if (!address) return std::nullopt;
      return Mask(kIp, *address);
    });
  }

  // `text` with every learnt host name (any case, not touching a letter or digit) masked.
  std::string MaskNames(std::string_view text) {
    const re2::StringPiece input(text.data(), text.size());
    std::array<re2::StringPiece, 2> groups;
    std::string out;
    size_t copied = 0;
    size_t from = 0;
    while (from < text.size() &&
           names_re_->Match(input, from, text.size(), RE2::UNANCHORED, groups.data(), 2)) {
      const auto begin = static_cast<size_t>(groups[1].data() - text.data());
      const size_t end = begin + groups[1].size();
      if (begin > 0 && is_alnum(text[begin - 1])) {
        from = begin + 1;
        continue;
      }
      out.append(text.substr(copied, begin - copied));
      // Case folding beyond ASCII ("K" for the Kelvin sign) can match a spelling that is no key:
      // it gets a mask of its own.
      out += Mask(kHost, ascii_lower(view(groups[1])));
      copied = end;
      from = end;
    }
    out.append(text.substr(copied));
    return out;
  }

  std::string Mask(Kind kind, const std::string& name) {
    static constexpr std::array<std::string_view, 3> kPrefixes = {"host", "user", "ip"};
    auto [it, added] = masks_[kind].try_emplace(name);
    if (added) {
      it->second = fmt::format("{}-{}", kPrefixes[kind], ++counts_[kind]);
      if (kind == kHost) AddName(name);
    }
    return it->second;
  }

  // A host name is masked in text when it has a letter and two characters or more: a bare number
  // (a rank's folder "0") or a letter would hit every number or word.
  void AddName(const std::string& name) {
    if (name.size() >= 2 && has_letter(name)) {
      names_.push_back(name);
    }
  }

  std::array<std::map<std::string, std::string>, 3> masks_;  // by name (hosts in lower case)
  std::array<int, 3> counts_{};
  std::vector<std::string> names_;  // the hosts to mask in text
  std::unique_ptr<RE2> names_re_;
};

using Edit = std::function<void(std::string*)>;

// Calls `host` on every host field of the analysis and `text` on every other string.
void visit(Analysis* analysis, const Edit& host, const Edit& text) {
  const auto evidence = [&](Evidence& e) {
    e.path.rewrite(text);
    e.text.rewrite(text);
  };
  for (InputSummary& input : analysis->inputs) {
    host(&input.host);
    text(&input.path);
    text(&input.error);
  }
  for (UnreadInput& input : analysis->unread) {
    text(&input.path);
    text(&input.reason);
  }
  for (std::string& warning : analysis->warnings) text(&warning);
  text(&analysis->filter_note);
  for (Event& event : analysis->events) {
    event.host.rewrite(host);
    evidence(event.evidence);
    event.fields.rewrite_values(text);
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
    d.host.rewrite(host);
    for (Evidence& e : d.evidence) evidence(e);
    for (SharedText& fix : d.fix) fix.rewrite(text);
    for (VerifyStep& step : d.verify) {
      step.command.rewrite(text);
      step.expect.rewrite(text);
    }
    for (SharedText& missing : d.missing) missing.rewrite(text);
    for (SharedText& note : d.notes) note.rewrite(text);
  }
}

}  // namespace

void redact(Analysis* analysis) {
  Redactor redactor;
  // First every name gets its number, in order of appearance; then every string is rewritten,
  // so that a host named late in the run is masked in the lines read before it too.
  visit(
      analysis, [&](std::string* host) { redactor.LearnHost(*host); },
      [&](std::string* text) { redactor.LearnText(*text); });
  redactor.Seal();
  visit(
      analysis, [&](std::string* host) { *host = redactor.MaskHost(*host); },
      [&](std::string* text) { *text = redactor.MaskText(*text); });
}

}  // namespace faultline
