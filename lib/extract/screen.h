// A cheap test that most log lines fail: does this line hold any literal that a signature
// cannot match without?
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultline {

class LiteralScreen {
 public:
  // Learns the literals the patterns require (RE2's FilteredRE2 atoms) and keeps the fewest
  // that every pattern needs one of. If some pattern requires none, every line passes.
  void Build(const std::vector<std::string>& patterns);

  // False only if the line holds none of the kept literals (compared case-insensitively).
  bool MayMatch(std::string_view line) const;

  // How many literals it screens for; 0 when it lets every line through.
  size_t literals() const { return literals_.size(); }

 private:
  static constexpr size_t kGram = 3;  // the shortest literal FilteredRE2 is asked for

  struct Literal {
    std::string text;  // lowercase
    size_t anchor;     // where its anchor, kGram bytes chosen to be rare in logs, starts
  };

  // Whether some literal whose anchor starts at line[at] is in the line.
  bool Confirm(std::string_view line, size_t at) const;

  std::vector<Literal> literals_;
  std::vector<std::pair<uint32_t, size_t>> by_anchor_;  // (hash of anchor, literal), sorted
  std::bitset<1 << 16> anchors_;                        // the anchors' hashes
  // For each byte k of an anchor, the bytes (either case) found there, as a nibble table: entry
  // L has bit H set if byte 0xHL belongs to the set. A vector pass tests 32 positions at once.
  std::array<std::array<uint8_t, 16>, kGram> anchor_bytes_{};
  bool vector_pass_ = false;  // the CPU has AVX2
};

}  // namespace faultline
