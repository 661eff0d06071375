// A cheap test that most log lines fail: does this line hold any literal that a signature
// cannot match without?
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultline {

class LiteralScreen {
 public:
  // Learns the literals each pattern requires (RE2's FilteredRE2 atoms) and keeps the fewest
  // that it needs one of. `groups[i]`, a bit mask, is the group of patterns[i] (all in group 1
  // when `groups` is empty). If some pattern requires no literal, every line passes.
  void Build(const std::vector<std::string>& patterns, const std::vector<uint32_t>& groups = {});

  // The groups of the patterns that may match `line`: those whose kept literals it holds
  // (compared case-insensitively). 0 only if no pattern can match.
  uint32_t Groups(std::string_view line) const;

  // Whether some pattern may match `line`.
  bool MayMatch(std::string_view line) const { return Groups(line) != 0; }

  // How many literals it screens for; 0 when it lets every line through.
  size_t literals() const { return literals_.size(); }

  // The literals (lowercase) of which `pattern` cannot match a line without one, as Build keeps
  // them; nullopt when it needs none the screen can look for (a set holding such a pattern
  // lets every line through) or does not compile.
  static std::optional<std::vector<std::string>> RequiredLiterals(const std::string& pattern);

 private:
  static constexpr size_t kGram = 3;       // the shortest literal FilteredRE2 is asked for
  static constexpr size_t kMaxAnchor = 4;  // the longest anchor
  static constexpr size_t kBuckets = 8;    // one bit of a byte each

  struct Literal {
    std::string text;  // lowercase
    size_t anchor;     // where its anchor, bytes chosen to be rare in logs, starts
    uint32_t groups;   // of the patterns that require it
  };

  // The groups of the literals whose anchor starts at line[at] and that are in the line.
  // Anchors are told apart by a hash of their first kGram bytes, which must be in anchors_.
  uint32_t Confirm(std::string_view line, size_t at) const;

  std::vector<Literal> literals_;
  std::vector<std::pair<uint32_t, size_t>> by_anchor_;  // (hash of anchor, literal), sorted
  std::bitset<1 << 16> anchors_;                        // the anchors' hashes
  // The vector pass tests 32 positions at once with two sets of nibble tables per anchor byte
  // k. anchor_bytes_[k][L] has bit H set if byte 0xHL (either case) is the k-th byte of some
  // anchor: exact, but blind to which anchor. Teddy-style buckets (Hyperscan) add that: the
  // literals are split into kBuckets buckets of alike anchors, and low_[k][n] / high_[k][n] have
  // bit b set if an anchor of bucket b has a k-th byte with low / high nibble n. A position
  // passes only if both agree for every k, so bytes of unrelated anchors rarely combine into a
  // false candidate.
  std::array<std::array<uint8_t, 16>, kMaxAnchor> anchor_bytes_{};
  std::array<std::array<uint8_t, 16>, kMaxAnchor> low_{};
  std::array<std::array<uint8_t, 16>, kMaxAnchor> high_{};
  size_t anchor_length_ = kGram;  // kMaxAnchor unless some literal is shorter
  bool vector_pass_ = false;      // the CPU has AVX2
  uint32_t all_groups_ = 0;
};

}  // namespace faultline
