// The nearest known failure of an unrecognised line (diagnose.h, Suggester).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "catalog/signatures.h"
#include "diagnose/diagnose.h"
#include "extract/extract.h"
#include "model/text.h"

namespace faultline {
namespace {

// The words of a template: runs of letters, lowered, two or more long; the masks ("<num>",
// "<pci>") say only that something varied, so they are no words.
std::set<std::string> words_of(std::string_view text) {
  std::set<std::string> words;
  std::string word;
  bool in_mask = false;
  const auto flush = [&] {
    if (word.size() >= 2 && !in_mask) words.insert(ascii_lower(word));
    word.clear();
  };
  for (char c : text) {
    if (c == '<') in_mask = true;
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (letter) {
      word.push_back(c);
    } else {
      flush();
    }
    if (c == '>') in_mask = false;
  }
  flush();
  return words;
}

}  // namespace

struct Suggester::Index {
  struct Example {
    std::string line;
    std::string signature;
    const FailureClass* failure = nullptr;
    std::vector<std::string> words;  // sorted
  };
  std::vector<Example> examples;
  std::map<std::string, double, std::less<>> weight;  // of each word, by its rarity
  double unknown_weight = 0;                          // of a word no example has

  double Weight(const std::string& word) const {
    auto it = weight.find(word);
    return it == weight.end() ? unknown_weight : it->second;
  }
};

Suggester::Suggester(const std::vector<const Signature*>& signatures, const Knowledge& knowledge)
    : index_(std::make_unique<Index>()) {
  std::map<std::string, const FailureClass*, std::less<>> class_of;
  for (const FailureClass& failure : knowledge.classes) {
    if (failure.last_resort) continue;
    for (const Condition& condition : failure.supported_by) {
      if (!condition.signature.empty()) class_of.emplace(condition.signature, &failure);
    }
  }
  std::map<std::string, size_t> documents;  // examples each word is in
  for (const Signature* signature : signatures) {
    if (signature->benign || signature->identity || signature->context || signature->unrecognised ||
        signature->boot) {
      continue;
    }
    auto failure = class_of.find(signature->id.str());
    if (failure == class_of.end()) continue;
    for (const SignatureExample& example : signature->must_match) {
      const std::set<std::string> words = words_of(line_template(example.line));
      if (words.empty()) continue;
      for (const std::string& word : words) ++documents[word];
      index_->examples.push_back({example.line, std::string(signature->id.str()), failure->second,
                                  std::vector<std::string>(words.begin(), words.end())});
    }
  }
  // A class's symptoms ("NCCL WARN Cuda failure '<message>'") are lines of it too, as its
  // documentation words them: they stand for the class when a signature's own examples do not.
  for (const FailureClass& failure : knowledge.classes) {
    if (failure.last_resort) continue;
    for (const std::string& symptom : failure.symptoms) {
      const std::set<std::string> words = words_of(line_template(symptom));
      if (words.size() < kMinSharedWords) continue;
      for (const std::string& word : words) ++documents[word];
      index_->examples.push_back(
          {symptom, "", &failure, std::vector<std::string>(words.begin(), words.end())});
    }
  }
  const auto n = static_cast<double>(index_->examples.size());
  for (const auto& [word, count] : documents) {
    index_->weight.emplace(word, std::log(1 + n / static_cast<double>(count)));
  }
  index_->unknown_weight = std::log(1 + n);
}

Suggester::~Suggester() = default;
Suggester::Suggester(Suggester&&) noexcept = default;
Suggester& Suggester::operator=(Suggester&&) noexcept = default;

std::optional<Suggestion> Suggester::Suggest(std::string_view line_template, double threshold,
                                             std::string_view skip) const {
  const std::set<std::string> said = words_of(line_template);
  if (said.size() < kMinSharedWords) return std::nullopt;
  double said_weight = 0;
  for (const std::string& word : said) said_weight += index_->Weight(word);
  std::optional<Suggestion> best;
  for (const Index::Example& example : index_->examples) {
    if (!skip.empty() && example.signature == skip) continue;
    double shared = 0;
    double example_weight = 0;
    size_t shared_words = 0;
    for (const std::string& word : example.words) {
      const double weight = index_->Weight(word);
      example_weight += weight;
      if (said.contains(word)) {
        shared += weight;
        ++shared_words;
      }
    }
    if (shared_words < kMinSharedWords) continue;
    const double similarity = shared / (said_weight + example_weight - shared);
    if (similarity >= threshold && (!best || similarity > best->similarity)) {
      best = Suggestion{example.failure, example.line, similarity};
    }
  }
  return best;
}

}  // namespace faultline
