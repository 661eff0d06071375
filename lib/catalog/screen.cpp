#include "catalog/screen.h"

#include <re2/filtered_re2.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <limits>
#include <map>
#include <optional>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace faultline {
namespace {

constexpr std::array<unsigned char, 256> kLower = [] {
  std::array<unsigned char, 256> table{};
  for (size_t i = 0; i < table.size(); ++i) {
    table[i] = static_cast<unsigned char>(i >= 'A' && i <= 'Z' ? i + ('a' - 'A') : i);
  }
  return table;
}();

// The literals `pattern` cannot match without, as few as RE2's prefilter allows: each of its
// atoms (FilteredRE2) is assumed present in turn, the shortest (weakest) first, and dropped if
// the pattern could still not match with only the dropped ones present. " at " goes; "nvrm: xid
// (" stays. Each pattern has a filter of its own: a filter shared by all prunes an atom that
// many patterns share ("nvrm: xid (") from their guards, and the Xid patterns would then be
// guarded by "): 13" alone, which "(ms): 1375.2" on every Megatron iteration line holds.
// nullopt if the pattern requires no literal or does not compile.
std::optional<std::vector<std::string>> required_literals(const std::string& pattern, size_t gram) {
  re2::FilteredRE2 filter(static_cast<int>(gram));
  RE2::Options options;
  options.set_log_errors(false);
  int id = 0;
  if (filter.Add(pattern, options, &id) != RE2::NoError) return std::nullopt;
  std::vector<std::string> atoms;
  filter.Compile(&atoms);
  std::vector<int> potential;
  filter.AllPotentials({}, &potential);
  if (!potential.empty() || atoms.empty()) return std::nullopt;
  std::vector<int> order(atoms.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  // Letters make an atom rare in logs, digits and punctuation do not ("): 119" is in every
  // "(ms): 1197.3"): the atom with the fewest letters, then the shortest, is dropped first.
  const auto weakness = [&](int atom) {
    const std::string& text = atoms[static_cast<size_t>(atom)];
    const auto letters = std::count_if(text.begin(), text.end(),
                                       [](unsigned char c) { return std::isalpha(c) != 0; });
    return std::make_pair(letters, text.size());
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return weakness(a) < weakness(b); });
  std::vector<int> assumed;
  std::vector<std::string> out;
  for (int atom : order) {
    assumed.push_back(atom);
    potential.clear();
    filter.AllPotentials(assumed, &potential);
    if (!potential.empty()) {
      assumed.pop_back();
      out.push_back(atoms[static_cast<size_t>(atom)]);
    }
  }
  return out;
}

// Every pattern's required literals with the groups of the patterns that require them, without
// those that hold another one of the same groups (a line with the longer holds the shorter).
// Empty if some pattern requires none.
std::map<std::string, uint32_t> screened_literals(const std::vector<std::string>& patterns,
                                                  const std::vector<uint32_t>& groups,
                                                  size_t gram) {
  std::map<std::string, uint32_t> literals;
  for (size_t i = 0; i < patterns.size(); ++i) {
    const std::optional<std::vector<std::string>> required = required_literals(patterns[i], gram);
    if (!required) return {};
    for (const std::string& literal : *required) literals[literal] |= groups[i];
  }
  for (auto it = literals.begin(); it != literals.end();) {
    const bool redundant = std::any_of(literals.begin(), literals.end(), [&](const auto& other) {
      return other.first != it->first && it->first.find(other.first) != std::string::npos &&
             (other.second | it->second) == other.second;
    });
    it = redundant ? literals.erase(it) : std::next(it);
  }
  return literals;
}

// How often each printable ASCII byte (0x20-0x7e) occurs in log text, per 10,000 bytes, counted
// over bench/generate's kernel and training logs, nvidia-smi dumps and samples/.
constexpr std::array<uint16_t, 95> kPrintableFrequency = {
    1295, 1,   99,  1,   1,   1,   1,   3,   54,  54,  1,   9,   6,   59, 167, 74, 592, 310, 295,
    214,  206, 230, 168, 152, 168, 230, 369, 1,   1,   173, 2,   1,   11, 10,  5,  34,  38,  53,
    55,   26,  2,   24,  1,   5,   26,  6,   30,  41,  61,  2,   30,  37, 58,  32, 4,   14,  3,
    5,    1,   62,  1,   62,  1,   35,  1,   281, 120, 143, 242, 593, 92, 52,  52, 239, 4,   94,
    190,  159, 313, 301, 158, 10,  327, 272, 277, 129, 27,  6,   39,  21, 11,  1,  98,  1,   1,
};

// Bytes outside printable ASCII are rare in logs; the screen never anchors on them anyway.
double frequency(unsigned char c) {
  return c >= 0x20 && c < 0x7f ? kPrintableFrequency[c - 0x20] / 10000.0 : 0;
}

// The vector pass classifies bytes by nibble tables, which cover ASCII only; NUL pads a line's
// last block, so it must never be part of an anchor.
bool anchorable(unsigned char c) {
  return c != 0 && c < 0x80;
}

// How often a byte of either case occurs (literals are lowercase), as a table: Build looks it
// up many thousand times.
const std::array<double, 128>& frequency_any_case_table() {
  static const std::array<double, 128> table = [] {
    std::array<double, 128> out{};
    for (size_t c = 0; c < out.size(); ++c) {
      const bool lower = c >= 'a' && c <= 'z';
      out[c] = frequency(static_cast<unsigned char>(c)) +
               (lower ? frequency(static_cast<unsigned char>(c - 'a' + 'A')) : 0);
    }
    return out;
  }();
  return table;
}

double frequency_any_case(unsigned char c) {
  return c < 128 ? frequency_any_case_table()[c] : 0;
}

// Letters follow each other as words do, not at random: "loc", "led" and "ion" are far more
// common in logs than the product of their letters' frequencies says. A run of letters only is
// taken to be this many times more frequent than that product.
constexpr double kWordFactor = 10;

// The product of the frequencies of `anchor` bytes at `start` of a literal.
double byte_product(const std::string& literal, size_t start, size_t anchor) {
  double product = 1;
  for (size_t k = 0; k < anchor; ++k) {
    product *= frequency_any_case(static_cast<unsigned char>(literal[start + k]));
  }
  return product;
}

// How often those bytes occur together in log text, by the model above.
double anchor_frequency(const std::string& literal, size_t start, size_t anchor) {
  const bool letters = std::all_of(literal.begin() + static_cast<long>(start),
                                   literal.begin() + static_cast<long>(start + anchor), [](char c) {
                                     return std::isalpha(static_cast<unsigned char>(c));
                                   });
  return byte_product(literal, start, anchor) * (letters ? kWordFactor : 1);
}

// For each literal, where its anchor (kAnchor adjacent bytes) starts, chosen so that few
// positions of ordinary text reach Confirm. A position does when its k-th byte is the k-th
// byte of some anchor (estimated as the product over k of the frequency of all the anchors'
// k-th bytes), and every time an anchor itself occurs (the sum of the anchors' frequencies):
// the estimate is their sum. Starts from the anchor of each literal whose bytes are rarest and
// moves one anchor at a time while that lowers the estimate. Returns an empty vector if some
// literal has no anchor.
std::vector<size_t> choose_anchors(const std::vector<std::string>& literals, size_t anchor) {
  std::vector<std::vector<size_t>> options(literals.size());
  std::vector<size_t> at(literals.size());
  for (size_t i = 0; i < literals.size(); ++i) {
    const std::string& literal = literals[i];
    double rarest = std::numeric_limits<double>::max();
    for (size_t start = 0; start + anchor <= literal.size(); ++start) {
      bool usable = true;
      for (size_t k = 0; k < anchor; ++k) {
        usable = usable && anchorable(static_cast<unsigned char>(literal[start + k]));
      }
      if (!usable) continue;
      options[i].push_back(start);
      const double product = byte_product(literal, start, anchor);
      if (product < rarest) {
        rarest = product;
        at[i] = start;
      }
    }
    if (options[i].empty()) return {};
  }
  // The estimate, kept up to date as anchors move: for each position k, how many anchors have
  // each byte there and the summed frequency of the bytes present; and the anchors' frequencies.
  std::vector<std::array<uint32_t, 128>> uses(anchor, std::array<uint32_t, 128>{});
  std::vector<double> present(anchor, 0);
  double occurring = 0;
  const auto byte_at = [&](size_t i, size_t start, size_t k) {
    return static_cast<unsigned char>(literals[i][start + k]);
  };
  const auto place = [&](size_t i, size_t start, int delta) {
    for (size_t k = 0; k < anchor; ++k) {
      const unsigned char c = byte_at(i, start, k);
      if (delta > 0 && uses[k][c]++ == 0) present[k] += frequency_any_case(c);
      if (delta < 0 && --uses[k][c] == 0) present[k] -= frequency_any_case(c);
    }
    occurring += delta * anchor_frequency(literals[i], start, anchor);
  };
  const auto estimate = [&] {
    double passing = 1;
    for (double sum : present) passing *= sum;
    return passing + occurring;
  };
  for (size_t i = 0; i < literals.size(); ++i) place(i, at[i], +1);
  double best = estimate();
  for (bool improved = true; improved;) {
    improved = false;
    for (size_t i = 0; i < literals.size(); ++i) {
      const size_t kept = at[i];
      for (size_t start : options[i]) {
        if (start == kept) continue;
        place(i, kept, -1);
        place(i, start, +1);
        // A move must gain more than rounding: the sums drift a little as anchors come and go,
        // and two equally good anchors must not be swapped back and forth forever.
        const double value = estimate();
        if (value < best * (1 - 1e-9)) {
          best = value;
          at[i] = start;
          improved = true;
          break;
        }
        place(i, start, -1);
        place(i, kept, +1);
      }
    }
  }
  return at;
}

uint32_t hash_of(unsigned char a, unsigned char b, unsigned char c) {
  const uint32_t gram = (uint32_t{a} << 16) | (uint32_t{b} << 8) | c;
  return (gram * 2654435761U) >> 16;
}

void add_to_nibble_table(unsigned char c, std::array<uint8_t, 16>* table) {
  (*table)[c & 0x0f] = static_cast<uint8_t>((*table)[c & 0x0f] | (1 << (c >> 4)));
}

// Sets bucket `bit` for byte c in one position's nibble tables.
void add_to_buckets(unsigned char c, uint8_t bit, std::array<uint8_t, 16>* low,
                    std::array<uint8_t, 16>* high) {
  (*low)[c & 0x0f] |= bit;
  (*high)[c >> 4] |= bit;
}

#if defined(__x86_64__)
using NibbleTables = std::array<std::array<uint8_t, 16>, 4>;

// 0xff where a byte is not in the set of a nibble table.
__attribute__((target("avx2"))) inline __m256i outside(__m256i bytes, __m256i table) {
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i bit_of_high =
      _mm256_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 64,
                       -128, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m256i row = _mm256_shuffle_epi8(table, _mm256_and_si256(bytes, nibble));
  const __m256i bit =
      _mm256_shuffle_epi8(bit_of_high, _mm256_and_si256(_mm256_srli_epi16(bytes, 4), nibble));
  return _mm256_cmpeq_epi8(_mm256_and_si256(row, bit), _mm256_setzero_si256());
}

// The buckets whose k-th anchor byte each byte of `bytes` may be: a byte's low-nibble row ANDed
// with its high-nibble row. Bytes >= 0x80 index past the high table's ASCII half, which is 0.
__attribute__((target("avx2"))) inline __m256i buckets_of(__m256i bytes,
                                                          const std::array<uint8_t, 16>& low,
                                                          const std::array<uint8_t, 16>& high) {
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i low_table =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(low.data())));
  const __m256i high_table =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(high.data())));
  const __m256i low_rows = _mm256_shuffle_epi8(low_table, _mm256_and_si256(bytes, nibble));
  const __m256i high_rows =
      _mm256_shuffle_epi8(high_table, _mm256_and_si256(_mm256_srli_epi16(bytes, 4), nibble));
  return _mm256_and_si256(low_rows, high_rows);
}

// Positions i in [0, 32) where, for every k < length, s[i + k] is the k-th byte of some anchor
// (`sets`) and one bucket holds all of them (`low`, `high`), as bits. Reads s[0, 31 + length).
__attribute__((target("avx2"))) uint32_t anchor_candidates(const unsigned char* s, size_t length,
                                                           const NibbleTables& low,
                                                           const NibbleTables& high,
                                                           const NibbleTables& sets) {
  __m256i buckets = _mm256_set1_epi8(-1);
  __m256i rejected = _mm256_setzero_si256();
  for (size_t k = 0; k < length; ++k) {
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + k));
    buckets = _mm256_and_si256(buckets, buckets_of(bytes, low[k], high[k]));
    const __m256i table = _mm256_broadcastsi128_si256(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(sets[k].data())));
    rejected = _mm256_or_si256(rejected, outside(bytes, table));
  }
  rejected = _mm256_or_si256(rejected, _mm256_cmpeq_epi8(buckets, _mm256_setzero_si256()));
  return ~static_cast<uint32_t>(_mm256_movemask_epi8(rejected));
}

// Calls confirm(i) for each candidate anchor position i of s[0, n), 32 at a time, until it
// returns true.
template <typename Confirm>
bool find_anchor_vector(const unsigned char* s, size_t n, size_t length, const NibbleTables& low,
                        const NibbleTables& high, const NibbleTables& sets,
                        const Confirm& confirm) {
  constexpr size_t kBlock = 32;
  const size_t reach = length - 1;  // bytes a block's last position reads past the block
  const auto try_block = [&](const unsigned char* block, size_t base, size_t positions) {
    uint32_t candidates = anchor_candidates(block, length, low, high, sets);
    if (positions < kBlock) candidates &= (uint32_t{1} << positions) - 1;
    while (candidates != 0) {
      if (confirm(base + static_cast<size_t>(__builtin_ctz(candidates)))) return true;
      candidates &= candidates - 1;
    }
    return false;
  };
  size_t at = 0;
  for (; at + kBlock + reach <= n; at += kBlock) {
    if (try_block(s + at, at, kBlock)) return true;
  }
  // The last positions: a zero-padded copy, since the line may end at the end of readable
  // memory.
  if (at + reach < n) {
    unsigned char tail[2 * kBlock] = {};
    std::memcpy(tail, s + at, n - at);
    return try_block(tail, at, n - at - reach);
  }
  return false;
}
#endif

}  // namespace

std::optional<std::vector<std::string>> LiteralScreen::RequiredLiterals(
    const std::string& pattern) {
  return required_literals(pattern, kGram);
}

void LiteralScreen::Build(const std::vector<std::string>& patterns,
                          const std::vector<uint32_t>& groups) {
  literals_.clear();
  by_anchor_.clear();
  anchors_.reset();
  for (auto& table : low_) table.fill(0);
  for (auto& table : high_) table.fill(0);
  for (auto& set : anchor_bytes_) set.fill(0);
  all_groups_ = 0;
  std::vector<uint32_t> group_of(patterns.size(), 1);
  if (!groups.empty()) group_of = groups;
  for (uint32_t group : group_of) all_groups_ |= group;
  const std::map<std::string, uint32_t> screened = screened_literals(patterns, group_of, kGram);
  // A pattern that passes with no literal at all makes the screen useless.
  if (screened.empty()) return;
  std::vector<std::string> texts;
  std::vector<uint32_t> text_groups;
  for (const auto& [text, group] : screened) {
    texts.push_back(text);
    text_groups.push_back(group);
  }
  // Four bytes pass the vector pass far more rarely than three; a literal too short for four
  // makes every anchor three bytes long.
  anchor_length_ = kMaxAnchor;
  std::vector<size_t> anchors = choose_anchors(texts, anchor_length_);
  if (anchors.empty()) {
    anchor_length_ = kGram;
    anchors = choose_anchors(texts, anchor_length_);
  }
  if (anchors.empty()) return;
  // A literal that holds a shorter one (of other groups: "nvrm: gpu at pci:" and "nvrm: ") takes
  // the same anchor bytes: a line that holds it holds those, so they cost no candidates more.
  for (size_t i = 0; i < texts.size(); ++i) {
    size_t inner = texts.size();
    for (size_t j = 0; j < texts.size(); ++j) {
      if (j != i && texts[j].size() < texts[i].size() &&
          texts[i].find(texts[j]) != std::string::npos &&
          (inner == texts.size() || texts[j].size() < texts[inner].size())) {
        inner = j;
      }
    }
    if (inner != texts.size()) anchors[i] = texts[i].find(texts[inner]) + anchors[inner];
  }
  // Buckets of neighbouring anchors in sorted order: alike anchors share a bucket's bytes.
  std::vector<size_t> order(texts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto anchor_of = [&](size_t i) {
    return std::string_view(texts[i]).substr(anchors[i], anchor_length_);
  };
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return anchor_of(a) < anchor_of(b); });
  for (size_t rank = 0; rank < order.size(); ++rank) {
    const size_t i = order[rank];
    const auto bit = static_cast<uint8_t>(1U << (rank * kBuckets / order.size()));
    const auto* bytes = reinterpret_cast<const unsigned char*>(texts[i].data()) + anchors[i];
    for (size_t k = 0; k < anchor_length_; ++k) {
      add_to_buckets(bytes[k], bit, &low_[k], &high_[k]);
      add_to_buckets(static_cast<unsigned char>(std::toupper(bytes[k])), bit, &low_[k], &high_[k]);
      add_to_nibble_table(bytes[k], &anchor_bytes_[k]);
      add_to_nibble_table(static_cast<unsigned char>(std::toupper(bytes[k])), &anchor_bytes_[k]);
    }
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(texts[i].data()) + anchors[i];
    const uint32_t hash = hash_of(bytes[0], bytes[1], bytes[2]);
    anchors_.set(hash);
    by_anchor_.emplace_back(hash, i);
    literals_.push_back({std::move(texts[i]), anchors[i], text_groups[i]});
  }
  std::sort(by_anchor_.begin(), by_anchor_.end());
#if defined(__x86_64__)
  vector_pass_ = __builtin_cpu_supports("avx2");
#endif
}

uint32_t LiteralScreen::Confirm(std::string_view line, size_t at) const {
  const auto* bytes = reinterpret_cast<const unsigned char*>(line.data());
  const uint32_t hash = hash_of(kLower[bytes[at]], kLower[bytes[at + 1]], kLower[bytes[at + 2]]);
  uint32_t found = 0;
  auto it = std::lower_bound(by_anchor_.begin(), by_anchor_.end(), std::make_pair(hash, size_t{0}));
  for (; it != by_anchor_.end() && it->first == hash; ++it) {
    const Literal& literal = literals_[it->second];
    if (at < literal.anchor) continue;
    const size_t start = at - literal.anchor;
    if (start + literal.text.size() > line.size()) continue;
    bool equal = true;
    for (size_t i = 0; i < literal.text.size() && equal; ++i) {
      equal = kLower[bytes[start + i]] == static_cast<unsigned char>(literal.text[i]);
    }
    if (equal) found |= literal.groups;
  }
  return found;
}

uint32_t LiteralScreen::Groups(std::string_view line) const {
  if (literals_.empty()) return all_groups_;
  if (line.size() < kGram) return 0;
  const auto* bytes = reinterpret_cast<const unsigned char*>(line.data());
  uint32_t found = 0;
  // Stops once every group is found: most lines that pass hold one literal. Most candidates of
  // the vector pass hold no anchor: the hash test turns them away before the call.
  const auto confirm = [&](size_t at) {
    if (!anchors_[hash_of(kLower[bytes[at]], kLower[bytes[at + 1]], kLower[bytes[at + 2]])]) {
      return false;
    }
    found |= Confirm(line, at);
    return found == all_groups_;
  };
#if defined(__x86_64__)
  if (vector_pass_) {
    find_anchor_vector(bytes, line.size(), anchor_length_, low_, high_, anchor_bytes_, confirm);
    return found;
  }
#endif
  for (size_t at = 0; at + kGram <= line.size(); ++at) {
    if (confirm(at)) break;
  }
  return found;
}

}  // namespace faultline
