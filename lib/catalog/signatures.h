// Line signatures: the regular expressions of the signature tables, compiled into one RE2::Set.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "catalog/screen.h"
#include "model/shared_text.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace faultline {

struct Table;

// A line a signature must match, with the values some of its fields must capture.
struct SignatureExample {
  std::string line;
  std::vector<std::pair<std::string, std::string>> fields;
};

struct Signature {
  Signature();
  ~Signature();
  Signature(const Signature&) = delete;
  Signature& operator=(const Signature&) = delete;

  SharedText id;  // shared by the events it yields
  std::string description;
  std::string source;      // where the line's shape was taken from
  std::string table;       // path of the table that defined it
  std::string pattern;     // with its table's %{macros} expanded
  std::optional<int> xid;  // the Xid it stands for when the pattern captures none
  bool fallback = false;   // yields only when no other signature matched the line
  bool identity = false;   // names a GPU (UUID, serial) rather than a fault
  // Part of the report of the fault line before it (a stack frame, an AER detail line, the
  // driver's crash-dump notice): known, so never unrecognised, and says nothing on its own.
  bool context = false;
  // Known to be harmless (the driver's load banner): its events need no finding (diagnose.h).
  bool benign = false;
  bool gpu_from_previous_line = false;  // the GPU is the one the previous lines named
  // Marks the start of a new boot of the machine (the kernel's "Linux version" banner,
  // journalctl's "-- Boot ID --"): no event, the lines after it are of the next boot.
  bool boot = false;
  // A collective that timed out waiting for the other ranks: the ranks that did not time out,
  // or that enqueued fewer collectives, held it up (correlate.h, find_stragglers).
  bool collective_timeout = false;
  // Names by its PCI address a GPU that the host has (lspci's listing, the driver's lines about
  // one GPU): nvidia-smi should list it (correlate.h, find_missing_gpus).
  bool installed_gpu = false;
  // A last resort for lines that look like errors (or like harmless look-alikes of them) and
  // that no other signature, fallbacks included, matched. Of several, the first in table order
  // yields, so a table lists its look-alikes before the broad patterns.
  bool unrecognised = false;
  // A message that logs often show wrapped ("continues"): when `head` matches a line that the
  // pattern does not, up to `continuation_lines` following lines may complete it
  // (match_wrapped). 0 when the signature declares no head.
  std::string head;
  size_t continuation_lines = 0;
  std::vector<SignatureExample> must_match;
  std::vector<std::string> must_not_match;
  std::unique_ptr<re2::RE2> regex;
  // The pattern as README's tolerance policy reads a line: in any case, and without the driver's
  // "NVRM: " or nvidia-smi's "nvidia-smi: " where the pattern has one. Tried only on a line the
  // screen passed, that no signature's own pattern matched (SignatureSet::Match) and that holds
  // one of `tolerant_literals` (lowercase, in any case). Empty when no literal could guard it.
  std::string tolerant_pattern;
  std::vector<std::string> tolerant_literals;
  // The tolerant pattern compiled on first use (few lines ever need it); null when it is empty
  // or does not compile.
  const re2::RE2* tolerant_regex() const;
  std::unique_ptr<re2::RE2> head_regex;  // null without "continues"
  std::vector<std::string> group_names;  // [i] names capture group i + 1 ("" if unnamed)
  // Fields every event of it carries whatever the line says ("sets": {"dcgm_error":
  // "DCGM_FR_NVLINK_DOWN"}): what a message's fixed wording means, as a capture would say it.
  std::vector<std::pair<std::string, std::string>> sets;

 private:
  mutable std::once_flag tolerant_compiled_;
  mutable std::unique_ptr<re2::RE2> tolerant_regex_;
};

struct SignatureMatch {
  const Signature* signature = nullptr;
  size_t begin = 0;  // where the match starts in the line: the text before it is the prefix
  std::vector<std::pair<std::string, std::string>> fields;  // named groups that took part
};

class SignatureSet {
 public:
  ~SignatureSet();

  // RE2's memory budget for each signature, and for the combined set.
  static constexpr int64_t kRegexMemoryBudget = 8 << 20;
  static constexpr int64_t kSetMemoryBudget = 64 << 20;
  // The most lines a "continues" may look ahead: a wrapped message, not a paragraph.
  static constexpr size_t kMaxContinuationLines = 3;

  // Compiles the "signatures" of every table; a later table's signature replaces an earlier
  // one with the same id. Returns nullptr and sets *error ("PATH: signature ID: reason") if a
  // signature is malformed, its pattern does not compile or exceeds the memory budget.
  static std::unique_ptr<SignatureSet> Build(const std::vector<Table>& tables, std::string* error);

  // Appends a match for every signature that matches `line`: fallbacks only if none other did,
  // and one unrecognised signature only if no other did. A line no pattern matches as it
  // stands is read as the tolerance policy says (match_tolerantly): by the tolerant patterns,
  // then without a launcher's tag at its start (envelope.h, launcher_tag_length). With `heads`,
  // also appends each signature whose "continues" head matches the line while its own pattern
  // does not: the line may be the first of a wrapped message. A line holding escaped newlines
  // ("\\n", a JSON string carrying a message of several lines) is read as those lines.
  void Match(std::string_view line, std::vector<SignatureMatch>* matches,
             std::vector<const Signature*>* heads = nullptr) const;

  const std::vector<std::unique_ptr<Signature>>& signatures() const { return signatures_; }
  const LiteralScreen& screen() const { return screen_; }

 private:
  struct RegexSet;  // RE2::Set, kept out of this header

  SignatureSet();

  // Match's known signatures, for `line` behind `tags` launcher tags already peeled; true if
  // some matched.
  bool MatchKnown(std::string_view line, size_t tags, std::vector<SignatureMatch>* matches,
                  std::vector<const Signature*>* heads) const;

  std::vector<std::unique_ptr<Signature>> signatures_;
  LiteralScreen screen_;  // most lines stop here, before the regex sets
  std::unique_ptr<RegexSet> set_;
};

// Whether `lines`, a head and the lines after it, are one message of `signature` that was
// wrapped: they are joined as a wrap splits them (inside a word, or where a space was; the
// continuation's indentation dropped) and matched. On success *joined is the text matched.
bool match_wrapped(const Signature& signature, const std::vector<std::string_view>& lines,
                   std::string* joined, SignatureMatch* match);

// Matches `line` against one signature as Match would: its own pattern, then its tolerant one,
// then both without a launcher's tag at the line's start (a match's `begin` still counts from
// the start of `line`).
bool match_tolerantly(const Signature& signature, std::string_view line, SignatureMatch* match);

// Runs every signature's examples against its own pattern; returns one line per failure
// ("signatures/x.json: signature ID: example '...' did not match"). Empty when all hold. An
// example line holding "\n" is a wrapped message: its first line must be a head the pattern
// does not match, and its lines joined must match.
std::vector<std::string> check_examples(const SignatureSet& set);

// Matches every one-line example of every signature that is not "unrecognised" in the shapes
// other posts give it, and returns one line per variant the pattern misses ("PATH: signature
// ID: misses other case: LINE"): the line in lower case ("other case"), without the driver's
// "NVRM: " or nvidia-smi's "nvidia-smi: " prefix ("prefix removed"), and behind a launcher's
// prefix ("(RayTrainWorker pid=1234) ", "[worker-3] ", "node17 | ": "prefix added"), as
// match_tolerantly reads them. The policy README states, measured; also every "no_match"
// example that the tolerant reading matches.
std::vector<std::string> check_variants(const SignatureSet& set);

}  // namespace faultline
