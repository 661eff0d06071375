#include "extract/screen.h"

#include <re2/filtered_re2.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace faultline {
namespace {

constexpr std::array<unsigned char, 256> kLower = [] {
  std::array<unsigned char, 256> table{};
  for (size_t i = 0; i < table.size(); ++i) {
    table[i] = static_cast<unsigned char>(i >= 'A' && i <= 'Z' ? i + ('a' - 'A') : i);
  }
  return table;
}();

// Where in a (lowercase) literal its least common three bytes start, by a rough rule: letters
// and digits are rarer in log text than punctuation, and spaces are everywhere. "): 95, " is
// screened by "95,", not by "): ". A rarer gram means fewer confirmations.
size_t rarest_gram(const std::string& literal) {
  const auto weight = [](char c) {
    if (std::isalnum(static_cast<unsigned char>(c))) return 2;
    return c == ' ' ? 0 : 1;
  };
  size_t best = 0;
  int best_weight = -1;
  for (size_t i = 0; i + 3 <= literal.size(); ++i) {
    const int w = weight(literal[i]) + weight(literal[i + 1]) + weight(literal[i + 2]);
    if (w > best_weight) {
      best = i;
      best_weight = w;
    }
  }
  return best;
}

// Keeps only the literals some pattern cannot do without: assumes each present in turn, the
// shortest (weakest) first, and drops it if no pattern could then match without another, kept
// literal. " at " goes; "nvrm: xid (" stays.
std::vector<std::string> needed_literals(const re2::FilteredRE2& filter,
                                         const std::vector<std::string>& atoms) {
  std::vector<int> order(atoms.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return atoms[static_cast<size_t>(a)].size() < atoms[static_cast<size_t>(b)].size();
  });
  std::vector<int> assumed;
  std::vector<bool> needed(atoms.size(), true);
  std::vector<int> potential;
  for (int atom : order) {
    assumed.push_back(atom);
    potential.clear();
    filter.AllPotentials(assumed, &potential);
    if (potential.empty()) {
      needed[static_cast<size_t>(atom)] = false;
    } else {
      assumed.pop_back();
    }
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < atoms.size(); ++i) {
    if (needed[i]) out.push_back(atoms[i]);
  }
  return out;
}

}  // namespace

uint32_t LiteralScreen::Hash(unsigned char a, unsigned char b, unsigned char c) {
  const uint32_t gram = (uint32_t{a} << 16) | (uint32_t{b} << 8) | c;
  return (gram * 2654435761U) >> 16;
}

void LiteralScreen::Build(const std::vector<std::string>& patterns) {
  literals_.clear();
  by_hash_.clear();
  grams_.reset();
  re2::FilteredRE2 filter(static_cast<int>(kGram));
  RE2::Options options;
  options.set_log_errors(false);
  for (const std::string& pattern : patterns) {
    int id = 0;
    if (filter.Add(pattern, options, &id) != RE2::NoError) return;
  }
  std::vector<std::string> atoms;
  filter.Compile(&atoms);
  // A pattern that passes with no literal at all makes the screen useless.
  std::vector<int> unfiltered;
  filter.AllPotentials({}, &unfiltered);
  if (!unfiltered.empty() || atoms.empty()) return;
  std::vector<Literal> literals;
  for (std::string& text : needed_literals(filter, atoms)) {
    if (text.size() < kGram) return;
    const size_t at = rarest_gram(text);
    literals.push_back({std::move(text), at});
  }
  literals_ = std::move(literals);
  for (size_t i = 0; i < literals_.size(); ++i) {
    const auto* gram =
        reinterpret_cast<const unsigned char*>(literals_[i].text.data()) + literals_[i].gram_at;
    const uint32_t hash = Hash(gram[0], gram[1], gram[2]);
    grams_.set(hash);
    by_hash_.emplace_back(hash, i);
  }
  std::sort(by_hash_.begin(), by_hash_.end());
}

bool LiteralScreen::Confirm(std::string_view line, size_t gram_start, uint32_t hash) const {
  auto it = std::lower_bound(by_hash_.begin(), by_hash_.end(), std::make_pair(hash, size_t{0}));
  for (; it != by_hash_.end() && it->first == hash; ++it) {
    const Literal& literal = literals_[it->second];
    if (gram_start < literal.gram_at) continue;
    const size_t start = gram_start - literal.gram_at;
    if (start + literal.text.size() > line.size()) continue;
    bool equal = true;
    for (size_t i = 0; i < literal.text.size() && equal; ++i) {
      equal = kLower[static_cast<unsigned char>(line[start + i])] ==
              static_cast<unsigned char>(literal.text[i]);
    }
    if (equal) return true;
  }
  return false;
}

bool LiteralScreen::MayMatch(std::string_view line) const {
  if (literals_.empty()) return true;
  if (line.size() < kGram) return false;
  const auto* bytes = reinterpret_cast<const unsigned char*>(line.data());
  unsigned char a = kLower[bytes[0]], b = kLower[bytes[1]];
  for (size_t i = 2; i < line.size(); ++i) {
    const unsigned char c = kLower[bytes[i]];
    const uint32_t hash = Hash(a, b, c);
    if (grams_[hash] && Confirm(line, i - 2, hash)) return true;
    a = b;
    b = c;
  }
  return false;
}

}  // namespace faultline
