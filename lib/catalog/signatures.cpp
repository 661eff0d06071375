#include "catalog/signatures.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "catalog/schema.h"
#include "catalog/tables.h"
#include "envelope/envelope.h"
#include "model/text.h"

namespace faultline {
namespace {

using catalog_internal::Need;
using nlohmann::json;

RE2::Options regex_options(int64_t budget) {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(budget);
  return options;
}

// Replaces each %{name} in `pattern` with the table's macro of that name.
bool expand_macros(const json& macros, const std::string& pattern, std::string* out,
                   std::string* error) {
  std::string result;
  size_t pos = 0;
  while (true) {
    const size_t start = pattern.find("%{", pos);
    if (start == std::string::npos) break;
    const size_t end = pattern.find('}', start);
    if (end == std::string::npos) {
      *error = "unterminated %{ in pattern";
      return false;
    }
    const std::string name = pattern.substr(start + 2, end - start - 2);
    if (!macros.is_object() || !macros.contains(name) || !macros[name].is_string()) {
      *error = "unknown macro %{" + name + "}";
      return false;
    }
    result += pattern.substr(pos, start - pos);
    result += macros[name].get<std::string>();
    pos = end + 1;
  }
  result += pattern.substr(pos);
  *out = std::move(result);
  return true;
}

std::string string_or(const json& object, const char* key, std::string fallback = "") {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::move(fallback);
}

bool bool_or(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

bool parse_examples(const json& examples, Signature* signature, std::string* error) {
  if (examples.is_null()) return true;
  if (!examples.is_object()) {
    *error = "\"examples\" must be an object";
    return false;
  }
  for (const json& example : examples.value("match", json::array())) {
    SignatureExample parsed;
    parsed.line = string_or(example, "line");
    if (auto fields = example.find("fields"); fields != example.end() && fields->is_object()) {
      for (const auto& [name, value] : fields->items()) {
        if (value.is_string()) parsed.fields.emplace_back(name, value.get<std::string>());
      }
    }
    signature->must_match.push_back(std::move(parsed));
  }
  for (const json& line : examples.value("no_match", json::array())) {
    if (line.is_string()) signature->must_not_match.push_back(line.get<std::string>());
  }
  return true;
}

// "continues": {"head": PATTERN, "lines": N}: the head a wrapped message starts with, and how
// many lines after it may complete it.
bool parse_continues(const Table& table, const json& entry, Signature* signature,
                     std::string* error) {
  const auto it = entry.find("continues");
  if (it == entry.end()) return true;
  const auto lines = it->is_object() ? it->find("lines") : it->end();
  const std::string head = it->is_object() ? string_or(*it, "head") : "";
  if (head.empty() || lines == it->end() || !lines->is_number_unsigned() ||
      lines->get<size_t>() < 1 || lines->get<size_t>() > SignatureSet::kMaxContinuationLines) {
    *error = R"("continues" must be {"head": PATTERN, "lines": 1 to )" +
             std::to_string(SignatureSet::kMaxContinuationLines) + "}";
    return false;
  }
  if (!expand_macros(table.doc.value("macros", json::object()), head, &signature->head, error)) {
    return false;
  }
  signature->continuation_lines = lines->get<size_t>();
  signature->head_regex =
      std::make_unique<RE2>(signature->head, regex_options(SignatureSet::kRegexMemoryBudget));
  if (!signature->head_regex->ok()) {
    *error = "\"continues\" head does not compile: " + signature->head_regex->error();
    return false;
  }
  return true;
}

// `pattern` with each "NVRM: " or "nvidia-smi: " of it optional: README's tolerance policy for a
// driver message or nvidia-smi's error pasted without its prefix.
std::string without_prefixes(const std::string& pattern) {
  static constexpr std::array<std::string_view, 2> kOptional = {"NVRM: ", "nvidia-smi: "};
  std::string out;
  for (size_t pos = 0;;) {
    size_t at = std::string::npos;
    std::string_view prefix;
    for (std::string_view optional : kOptional) {
      if (const size_t found = pattern.find(optional, pos); found < at) {
        at = found;
        prefix = optional;
      }
    }
    if (at == std::string::npos) return out.append(pattern, pos);
    out.append(pattern, pos, at - pos);
    pos = at + prefix.size();
    // Without the prefix a word still starts there: "Xid" must not match inside "SXid".
    const bool word =
        pos < pattern.size() && std::isalnum(static_cast<unsigned char>(pattern[pos]));
    out.append("(?:").append(prefix).append(word ? "|\\b)" : ")?");
  }
}

// Sets the signature's tolerant pattern: any case, and its prefixes optional where that still
// compiles and leaves literals for the screen; none when neither form does. The literals are
// those of the case-sensitive form (the screen compares without case anyway): RE2's prefilter
// gives up on the letters of a case-folded literal and would guard "(?i)...Xid...: 119" by
// "): 119" alone.
void set_tolerant_pattern(Signature* signature) {
  for (const std::string& candidate : {without_prefixes(signature->pattern), signature->pattern}) {
    std::optional<std::vector<std::string>> literals = LiteralScreen::RequiredLiterals(candidate);
    if (!literals) continue;
    signature->tolerant_pattern = "(?i)" + candidate;
    signature->tolerant_literals = std::move(*literals);
    return;
  }
}

// Builds one signature from its table entry; returns nullptr and sets *error on failure.
std::unique_ptr<Signature> parse_signature(const Table& table, const json& entry,
                                           std::string* error) {
  auto signature = std::make_unique<Signature>();
  signature->id = string_or(entry, "id");
  signature->table = table.path;
  const std::string pattern = string_or(entry, "pattern");
  if (auto missing = first_missing(entry, catalog_internal::kSignatureSchema, Need::kToLoad)) {
    *error = *missing == "id" ? "a signature without an \"id\"" : "no \"" + *missing + "\"";
    return nullptr;
  }
  if (signature->id.empty() || pattern.empty()) {
    *error = R"("id" and "pattern" must be text)";
    return nullptr;
  }
  if (!expand_macros(table.doc.value("macros", json::object()), pattern, &signature->pattern,
                     error)) {
    return nullptr;
  }
  signature->description = string_or(entry, "description");
  signature->source = string_or(entry, "source");
  if (auto xid = entry.find("xid"); xid != entry.end() && xid->is_number_integer()) {
    signature->xid = xid->get<int>();
  }
  signature->fallback = bool_or(entry, "fallback");
  signature->identity = bool_or(entry, "identity");
  signature->context = bool_or(entry, "context");
  signature->benign = bool_or(entry, "benign");
  if (auto sets = entry.find("sets"); sets != entry.end()) {
    if (!sets->is_object()) {
      *error = R"("sets" must be an object of texts)";
      return nullptr;
    }
    for (const auto& [name, value] : sets->items()) {
      if (!value.is_string()) {
        *error = R"("sets" must be an object of texts)";
        return nullptr;
      }
      signature->sets.emplace_back(name, value.get<std::string>());
    }
  }
  signature->gpu_from_previous_line = bool_or(entry, "gpu_from_previous_line");
  signature->boot = bool_or(entry, "boot");
  signature->collective_timeout = bool_or(entry, "collective_timeout");
  signature->installed_gpu = bool_or(entry, "installed_gpu");
  signature->unrecognised = bool_or(entry, "unrecognised");
  if (signature->unrecognised && signature->fallback) {
    *error = R"("unrecognised" and "fallback" exclude each other)";
    return nullptr;
  }
  if (!parse_continues(table, entry, signature.get(), error)) return nullptr;
  if (!parse_examples(entry.value("examples", json()), signature.get(), error)) return nullptr;

  signature->regex =
      std::make_unique<RE2>(signature->pattern, regex_options(SignatureSet::kRegexMemoryBudget));
  if (!signature->regex->ok()) {
    *error = "pattern does not compile: " + signature->regex->error();
    return nullptr;
  }
  if (!signature->unrecognised) set_tolerant_pattern(signature.get());
  signature->group_names.assign(static_cast<size_t>(signature->regex->NumberOfCapturingGroups()),
                                "");
  for (const auto& [name, index] : signature->regex->NamedCapturingGroups()) {
    signature->group_names[static_cast<size_t>(index - 1)] = name;
  }
  return signature;
}

// Length of the well-formed UTF-8 sequence at line[i], or 0 if none starts there.
size_t utf8_length(std::string_view line, size_t i) {
  const auto lead = static_cast<unsigned char>(line[i]);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80;  // the range of the second byte, narrower after some leads
  unsigned char high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    low = lead == 0xe0 ? 0xa0 : 0x80;
    high = lead == 0xed ? 0x9f : 0xbf;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    low = lead == 0xf0 ? 0x90 : 0x80;
    high = lead == 0xf4 ? 0x8f : 0xbf;
  } else {
    return 0;
  }
  if (length > line.size() - i) return 0;
  for (size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(line[i + k]);
    if (next < (k == 1 ? low : 0x80) || next > (k == 1 ? high : 0xbf)) return 0;
  }
  return length;
}

// RE2 reads a line as UTF-8, and no `.` or `[^,]` matches a byte of an invalid sequence: a
// process name cut inside a character would hide its whole Xid line. Such bytes are read as
// '?' (in a copy of the same length, so offsets into the line hold).
std::string_view as_utf8(std::string_view line, std::string* copy) {
  for (size_t i = 0; i < line.size();) {
    const size_t length = utf8_length(line, i);
    if (length == 0) {
      if (copy->empty()) copy->assign(line);
      (*copy)[i] = '?';
    }
    i += std::max<size_t>(length, 1);
  }
  return copy->empty() ? line : std::string_view(*copy);
}

// Matches `line` against one of a signature's regexes (its own or its tolerant one, which
// capture the same groups); fills *match on success.
bool match_with(const Signature& signature, const RE2& regex, std::string_view line,
                SignatureMatch* match) {
  const size_t groups = signature.group_names.size() + 1;
  std::vector<re2::StringPiece> submatches(groups);
  if (!regex.Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::UNANCHORED,
                   submatches.data(), static_cast<int>(groups))) {
    return false;
  }
  match->signature = &signature;
  match->begin = static_cast<size_t>(submatches[0].data() - line.data());
  match->fields.clear();
  for (size_t i = 1; i < groups; ++i) {
    const std::string& name = signature.group_names[i - 1];
    if (name.empty() || submatches[i].data() == nullptr) continue;
    match->fields.emplace_back(name, std::string(submatches[i].data(), submatches[i].size()));
  }
  return true;
}

// Matches `line` against one signature's own pattern alone.
bool match_one(const Signature& signature, std::string_view line, SignatureMatch* match) {
  return match_with(signature, *signature.regex, line, match);
}

// How many launcher tags a line may stand behind ("[node3] (Worker pid=12) ...").
constexpr size_t kMaxLauncherTags = 2;

// Why the wrapped example `text` ("head\ncontinuation...") fails, or nothing.
std::optional<std::string> check_wrapped(const Signature& signature, std::string_view text,
                                         SignatureMatch* match) {
  std::vector<std::string_view> lines;
  for (size_t start = 0;;) {
    const size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  const re2::StringPiece head(lines.front().data(), lines.front().size());
  if (!signature.head_regex || !RE2::PartialMatch(head, *signature.head_regex)) {
    return "wrapped example's first line is no \"continues\" head";
  }
  if (match_one(signature, lines.front(), match)) {
    return "wrapped example's first line matches on its own";
  }
  if (lines.size() - 1 > signature.continuation_lines) {
    return "wrapped example has more lines than \"continues\" allows";
  }
  std::string joined;
  if (!match_wrapped(signature, lines, &joined, match)) return "wrapped example did not match";
  return std::nullopt;
}

}  // namespace

Signature::Signature() = default;
Signature::~Signature() = default;

const RE2* Signature::tolerant_regex() const {
  std::call_once(tolerant_compiled_, [this] {
    if (tolerant_pattern.empty()) return;
    auto compiled =
        std::make_unique<RE2>(tolerant_pattern, regex_options(SignatureSet::kRegexMemoryBudget));
    if (compiled->ok()) tolerant_regex_ = std::move(compiled);
  });
  return tolerant_regex_.get();
}

// The known signatures' patterns and heads in one set, behind the screen's first group. Each
// unrecognised signature has a group of its own instead (the last bit shared by any past the 31st)
// and is matched alone: a line with only an error word ("... failed, status ...") then pays for the
// one pattern that wants that word, not for a set.
struct SignatureSet::RegexSet {
  RE2::Set set{regex_options(kSetMemoryBudget), RE2::UNANCHORED};
  std::vector<size_t> owner;         // the signature each pattern of the set is (or is the head of)
  std::vector<bool> head;            // whether it is that signature's "continues" head
  std::vector<size_t> tolerant;      // the signatures with a tolerant regex
  std::vector<size_t> unrecognised;  // the unrecognised signatures, in table order

  static constexpr uint32_t kKnown = 1;
  static uint32_t UnrecognisedGroup(size_t i) { return 1U << std::min<size_t>(1 + i, 31); }
};

SignatureSet::SignatureSet() : set_(std::make_unique<RegexSet>()) {}
SignatureSet::~SignatureSet() = default;

std::unique_ptr<SignatureSet> SignatureSet::Build(const std::vector<Table>& tables,
                                                  std::string* error) {
  std::unique_ptr<SignatureSet> set(new SignatureSet());
  std::map<std::string, size_t> index_of;
  for (const Table& table : tables) {
    const json signatures = table.doc.value("signatures", json::array());
    if (!signatures.is_array()) {
      *error = table.path + ": \"signatures\" must be an array";
      return nullptr;
    }
    for (const json& entry : signatures) {
      std::string reason;
      auto signature = entry.is_object() ? parse_signature(table, entry, &reason) : nullptr;
      if (!signature) {
        const std::string id = entry.is_object() ? string_or(entry, "id", "?") : "?";
        *error = table.path + ": signature " + id + ": " +
                 (reason.empty() ? "must be an object" : reason);
        return nullptr;
      }
      auto [it, inserted] = index_of.emplace(signature->id, set->signatures_.size());
      if (inserted) {
        set->signatures_.push_back(std::move(signature));
      } else {
        set->signatures_[it->second] = std::move(signature);
      }
    }
  }
  std::vector<std::string> patterns;
  std::vector<uint32_t> groups;
  RegexSet& regexes = *set->set_;
  // The screen passes the lines a signature's tolerant regex may match, its own pattern's
  // among them: the tolerant literals guard both, and were found once already.
  const auto add_known = [&](size_t owner, bool head, std::string* reason) {
    const Signature& signature = *set->signatures_[owner];
    const std::string& pattern = head ? signature.head : signature.pattern;
    if (regexes.set.Add(pattern, reason) < 0) return false;
    regexes.owner.push_back(owner);
    regexes.head.push_back(head);
    if (head || signature.tolerant_pattern.empty()) {
      patterns.push_back(pattern);
      groups.push_back(RegexSet::kKnown);
    } else {
      for (const std::string& literal : signature.tolerant_literals) {
        patterns.push_back(RE2::QuoteMeta(literal));
        groups.push_back(RegexSet::kKnown);
      }
      regexes.tolerant.push_back(owner);
    }
    return true;
  };
  for (size_t i = 0; i < set->signatures_.size(); ++i) {
    const Signature& signature = *set->signatures_[i];
    std::string reason;
    if (signature.unrecognised) {
      patterns.push_back(signature.pattern);
      groups.push_back(RegexSet::UnrecognisedGroup(regexes.unrecognised.size()));
      regexes.unrecognised.push_back(i);
    } else if (!add_known(i, false, &reason)) {
      *error = signature.table + ": signature " + signature.id + ": " + reason;
      return nullptr;
    }
    if (signature.continuation_lines > 0 && !add_known(i, true, &reason)) {
      *error = signature.table + ": signature " + signature.id + ": \"continues\" head: " + reason;
      return nullptr;
    }
  }
  set->screen_.Build(patterns, groups);
  if (!regexes.owner.empty() && !regexes.set.Compile()) {
    *error = "the signature tables together exceed RE2's memory budget of " +
             std::to_string(kSetMemoryBudget >> 20) + " MiB";
    return nullptr;
  }
  return set;
}

void SignatureSet::Match(std::string_view line, std::vector<SignatureMatch>* matches,
                         std::vector<const Signature*>* heads) const {
  const uint32_t groups = screen_.Groups(line);
  if (groups == 0) return;
  // A message of several lines carried in one JSON string, its newlines escaped ("message":
  // "RuntimeError: CUDA error: ...\nCUDA kernel errors might be ..."): each line is read alone.
  if (const size_t escaped = line.find("\\n"); escaped != std::string_view::npos) {
    for (size_t start = 0, end = escaped; start < line.size(); end = line.find("\\n", start)) {
      if (end == std::string_view::npos) end = line.size();
      const size_t first = matches->size();
      Match(line.substr(start, end - start), matches, nullptr);
      for (size_t i = first; i < matches->size(); ++i) (*matches)[i].begin += start;
      start = end + 2;
    }
    return;
  }
  std::string copy;
  line = as_utf8(line, &copy);
  const RegexSet& regexes = *set_;
  if ((groups & RegexSet::kKnown) != 0 && MatchKnown(line, 0, matches, heads)) return;
  // The first unrecognised signature in table order that matches decides.
  for (size_t i = 0; i < regexes.unrecognised.size(); ++i) {
    if ((groups & RegexSet::UnrecognisedGroup(i)) == 0) continue;
    SignatureMatch match;
    if (match_one(*signatures_[regexes.unrecognised[i]], line, &match)) {
      matches->push_back(std::move(match));
      return;
    }
  }
}

bool SignatureSet::MatchKnown(std::string_view line, size_t tags,
                              std::vector<SignatureMatch>* matches,
                              std::vector<const Signature*>* heads) const {
  const RegexSet& regexes = *set_;
  const re2::StringPiece text(line.data(), line.size());
  std::vector<int> hits;
  std::vector<size_t> exact;  // the signatures whose own pattern matched
  if (regexes.set.Match(text, &hits)) {
    std::sort(hits.begin(), hits.end());
    for (int hit : hits) {
      const auto at = static_cast<size_t>(hit);
      if (!regexes.head[at]) exact.push_back(regexes.owner[at]);
    }
    // A head counts only where its signature's pattern did not match.
    if (heads != nullptr) {
      for (int hit : hits) {
        const auto at = static_cast<size_t>(hit);
        if (regexes.head[at] &&
            !std::binary_search(exact.begin(), exact.end(), regexes.owner[at])) {
          heads->push_back(signatures_[regexes.owner[at]].get());
        }
      }
    }
  }
  const auto yield = [&](const std::vector<size_t>& matched, bool own) {
    const size_t first = matches->size();
    for (bool fallback : {false, true}) {
      for (size_t index : matched) {
        const Signature& signature = *signatures_[index];
        if (signature.fallback != fallback) continue;
        const RE2* regex = own ? signature.regex.get() : signature.tolerant_regex();
        SignatureMatch match;
        if (regex != nullptr && match_with(signature, *regex, line, &match)) {
          matches->push_back(std::move(match));
        }
      }
      if (matches->size() > first) return true;
    }
    return false;
  };
  if (yield(exact, true)) return true;
  // The tolerant regexes only where no pattern matched as the line stands, and only of the
  // signatures whose literals the line holds: such lines are few, and a set of every pattern
  // in any case would cost more to build its automaton for them than to try a few regexes.
  if (exact.empty() && !regexes.tolerant.empty()) {
    const std::string lower = ascii_lower(line);
    std::vector<size_t> tolerant;
    for (size_t index : regexes.tolerant) {
      const std::vector<std::string>& literals = signatures_[index]->tolerant_literals;
      if (std::any_of(literals.begin(), literals.end(), [&](const std::string& literal) {
            return lower.find(literal) != std::string::npos;
          })) {
        tolerant.push_back(index);
      }
    }
    if (yield(tolerant, false)) return true;
  }
  // Then the line without a launcher's tag, its match still placed in the whole line.
  const size_t tag = tags < kMaxLauncherTags ? launcher_tag_length(line) : 0;
  if (tag == 0) return false;
  const size_t first = matches->size();
  if (!MatchKnown(line.substr(tag), tags + 1, matches, nullptr)) return false;
  for (size_t i = first; i < matches->size(); ++i) (*matches)[i].begin += tag;
  return true;
}

bool match_tolerantly(const Signature& signature, std::string_view line, SignatureMatch* match) {
  for (size_t offset = 0, tags = 0;; ++tags) {
    const std::string_view rest = line.substr(offset);
    const RE2* tolerant = signature.tolerant_regex();
    if (match_with(signature, *signature.regex, rest, match) ||
        (tolerant != nullptr && match_with(signature, *tolerant, rest, match))) {
      match->begin += offset;
      return true;
    }
    const size_t tag = tags < kMaxLauncherTags ? launcher_tag_length(rest) : 0;
    if (tag == 0) return false;
    offset += tag;
  }
}

bool match_wrapped(const Signature& signature, const std::vector<std::string_view>& lines,
                   std::string* joined, SignatureMatch* match) {
  const auto is_blank = [](char c) { return c == ' ' || c == '\t'; };
  // Each line but the first loses its indentation, each but the last its trailing padding; a
  // seam that had either was a space, one that had neither may have been one or none.
  std::vector<std::string_view> pieces;
  std::vector<bool> spaced;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view piece = lines[i];
    bool blank_before = false;
    while (i > 0 && !piece.empty() && is_blank(piece.front())) {
      piece.remove_prefix(1);
      blank_before = true;
    }
    if (i > 0) spaced.back() = spaced.back() || blank_before;
    bool blank_after = false;
    while (i + 1 < lines.size() && !piece.empty() && is_blank(piece.back())) {
      piece.remove_suffix(1);
      blank_after = true;
    }
    pieces.push_back(piece);
    if (i + 1 < lines.size()) spaced.push_back(blank_after);
  }
  // At most 2^kMaxContinuationLines joins, and only for a line that was a head.
  for (size_t spaces = 0; spaces < (size_t{1} << spaced.size()); ++spaces) {
    joined->assign(pieces.front());
    for (size_t seam = 0; seam < spaced.size(); ++seam) {
      if (spaced[seam] || ((spaces >> seam) & 1) != 0) joined->push_back(' ');
      joined->append(pieces[seam + 1]);
    }
    if (match_one(signature, *joined, match)) return true;
  }
  return false;
}

std::vector<std::string> check_variants(const SignatureSet& set) {
  std::vector<std::string> misses;
  for (const auto& signature : set.signatures()) {
    if (signature->unrecognised) continue;
    const std::string where = signature->table + ": signature " + signature->id + ": misses ";
    for (const SignatureExample& example : signature->must_match) {
      const std::string& line = example.line;
      if (line.find('\n') != std::string::npos) continue;
      std::vector<std::pair<std::string_view, std::string>> variants;
      const std::string lower = ascii_lower(line);
      if (lower != line) variants.emplace_back("other case", lower);
      for (std::string_view prefix : {"NVRM: ", "nvidia-smi: "}) {
        if (const size_t at = line.find(prefix); at != std::string::npos) {
          variants.emplace_back("prefix removed",
                                line.substr(0, at) + line.substr(at + prefix.size()));
        }
      }
      for (std::string_view prefix : {"(RayTrainWorker pid=1234) ", "[worker-3] ", "node17 | "}) {
        variants.emplace_back("prefix added", std::string(prefix) + line);
      }
      for (const auto& [kind, text] : variants) {
        SignatureMatch match;
        if (!match_tolerantly(*signature, text, &match)) {
          misses.push_back(where + std::string(kind) + ": " + text);
        }
      }
    }
    for (const std::string& line : signature->must_not_match) {
      SignatureMatch match;
      if (!match_one(*signature, line, &match) && match_tolerantly(*signature, line, &match)) {
        misses.push_back(signature->table + ": signature " + signature->id +
                         ": reads tolerantly a line it must not match: " + line);
      }
    }
  }
  return misses;
}

std::vector<std::string> check_examples(const SignatureSet& set) {
  std::vector<std::string> failures;
  for (const auto& signature : set.signatures()) {
    const std::string where = signature->table + ": signature " + signature->id + ": ";
    if (signature->must_match.empty()) failures.push_back(where + "has no example line");
    for (const SignatureExample& example : signature->must_match) {
      SignatureMatch match;
      if (example.line.find('\n') != std::string::npos) {
        if (auto why = check_wrapped(*signature, example.line, &match)) {
          failures.push_back(where + *why + ": " + example.line);
          continue;
        }
      } else if (!match_one(*signature, example.line, &match)) {
        failures.push_back(where + "example did not match: " + example.line);
        continue;
      }
      for (const auto& [name, expected] : example.fields) {
        auto it = std::find_if(match.fields.begin(), match.fields.end(),
                               [&name = name](const auto& field) { return field.first == name; });
        const std::string got = it == match.fields.end() ? "(nothing)" : it->second;
        if (got != expected) {
          failures.push_back(where + "field " + name + " captured " + got + ", expected " +
                             expected + " in: " + example.line);
        }
      }
    }
    for (const std::string& line : signature->must_not_match) {
      SignatureMatch match;
      if (match_one(*signature, line, &match)) {
        failures.push_back(where + "matched a line it must not: " + line);
      }
    }
  }
  return failures;
}

}  // namespace faultline
