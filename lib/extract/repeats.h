// A flood's lines differ only in their time: telling the next one from the line before it
// without matching it again. Internal to lib/extract/.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::extract_internal {

// A line read in full, and which digits of its envelope are its clock. A line that repeats it
// in everything but those digits, at a later time, says nothing new but when it was printed.
class RepeatedLine {
 public:
  // Whether `line` repeats the remembered line: the same length, the same text from the
  // message on, and before it nothing changed or only clock digits, to a later time (an
  // earlier one may be a new boot, which only a full reading tells).
  bool Repeats(std::string_view line) const;

  // Remembers `line`, read in full, whose message starts at `message` and whose events
  // `outcome` describes in all but their times (kinds, GPUs, hosts, ranks). When it repeats
  // the remembered line's message with the same outcome and its envelope differs only in
  // digits, those digits are learnt as the clock; otherwise nothing is known of its clock yet.
  void Remember(std::string_view line, size_t message, std::string_view outcome);

  // Moves on to `line`, a repeat: the next must be later than it.
  void Advance(std::string_view line) { line_.assign(line); }

  // Whether `line` holds the remembered message at `message`, the same length.
  bool SameMessage(std::string_view line, size_t message) const;

  size_t message() const { return message_; }
  bool empty() const { return line_.empty(); }
  void Forget();

 private:
  std::string line_;
  size_t message_ = 0;
  std::string outcome_;
  std::vector<bool> clock_;  // per byte before the message: a digit that counts time
};

}  // namespace faultline::extract_internal
