// A cheap test that most log lines fail: does this line hold any literal that a signature
// cannot match without?
#pragma once

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
    size_t gram_at;    // where its hashed three bytes start
  };

  static uint32_t Hash(unsigned char a, unsigned char b, unsigned char c);
  bool Confirm(std::string_view line, size_t gram_start, uint32_t hash) const;

  std::vector<Literal> literals_;
  std::vector<std::pair<uint32_t, size_t>> by_hash_;  // (gram hash, literal), sorted
  std::bitset<1 << 16> grams_;                        // the gram hashes, for the fast pass
};

}  // namespace faultline
