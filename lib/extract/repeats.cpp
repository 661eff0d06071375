#include "extract/repeats.h"

#include <cstring>

namespace faultline::extract_internal {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

bool RepeatedLine::SameMessage(std::string_view line, size_t message) const {
  return !line_.empty() && message == message_ && line.size() == line_.size() &&
         std::memcmp(line.data() + message, line_.data() + message, line.size() - message) == 0;
}

bool RepeatedLine::Repeats(std::string_view line) const {
  if (!SameMessage(line, message_)) return false;
  // The first changed digit is the most significant one that changed: stamps print the larger
  // units first (dmesg seconds, syslog day and clock, kmsg sequence number).
  for (size_t i = 0; i < message_; ++i) {
    if (line[i] == line_[i]) continue;
    if (!clock_[i] || !is_digit(line[i])) return false;
    for (size_t j = i + 1; j < message_; ++j) {
      if (line[j] != line_[j] && (!clock_[j] || !is_digit(line[j]))) return false;
    }
    return line[i] > line_[i];
  }
  return true;
}

void RepeatedLine::Remember(std::string_view line, size_t message, std::string_view outcome) {
  if (SameMessage(line, message) && outcome == outcome_) {
    bool digits_only = true;
    for (size_t i = 0; i < message && digits_only; ++i) {
      if (line[i] == line_[i]) continue;
      digits_only = is_digit(line[i]) && is_digit(line_[i]);
      if (digits_only) clock_[i] = true;
    }
    if (!digits_only) clock_.assign(message, false);
  } else {
    clock_.assign(message, false);
    outcome_.assign(outcome);
  }
  line_.assign(line);
  message_ = message;
}

void RepeatedLine::Forget() {
  line_.clear();
  outcome_.clear();
  clock_.clear();
}

}  // namespace faultline::extract_internal
