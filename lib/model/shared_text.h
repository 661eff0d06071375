// SharedText: an immutable text that copies share. A fleet's diagnosis holds a million events,
// and every diagnosis copies the evidence lines it cites; a path is the same for every event of
// an input. Copies of a SharedText cost a counted pointer, not the text.
#pragma once

#include <fmt/format.h>

#include <compare>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>

namespace faultline {

class SharedText {
 public:
  SharedText() = default;
  SharedText(std::string text)  // NOLINT(google-explicit-constructor): a text is a SharedText
      : text_(text.empty() ? nullptr : std::make_shared<std::string>(std::move(text))) {}
  SharedText(std::string_view text)  // NOLINT(google-explicit-constructor)
      : SharedText(std::string(text)) {}
  SharedText(const char* text)  // NOLINT(google-explicit-constructor)
      : SharedText(std::string(text)) {}

  const std::string& str() const { return text_ ? *text_ : empty_text(); }
  operator const std::string&() const { return str(); }  // NOLINT(google-explicit-constructor)
  operator std::string_view() const { return str(); }    // NOLINT(google-explicit-constructor)

  // Replaces the text; the buffer is reused where no copy shares it (a flood's latest line is
  // rewritten for every line of the flood).
  void assign(std::string_view text) {
    if (text_ && text_.use_count() == 1) {
      text_->assign(text);
    } else {
      *this = SharedText(text);
    }
  }

  // Replaces the text with what `edit` (a function of std::string*) makes of a copy of it.
  template <typename Edit>
  void rewrite(const Edit& edit) {
    std::string edited = str();
    edit(&edited);
    if (edited != str()) *this = SharedText(std::move(edited));
  }

  bool empty() const { return !text_ || text_->empty(); }
  size_t size() const { return str().size(); }
  const char* c_str() const { return str().c_str(); }
  const char* data() const { return str().data(); }
  // The searches of a const std::string, for the code that reads evidence.
  size_t find(std::string_view what, size_t from = 0) const { return str().find(what, from); }
  size_t find(char what, size_t from = 0) const { return str().find(what, from); }
  bool starts_with(std::string_view prefix) const { return str().starts_with(prefix); }
  bool ends_with(std::string_view suffix) const { return str().ends_with(suffix); }
  std::string substr(size_t at, size_t count = std::string::npos) const {
    return str().substr(at, count);
  }

  friend bool operator==(const SharedText& a, const SharedText& b) {
    return a.text_ == b.text_ || a.str() == b.str();
  }
  friend bool operator==(const SharedText& a, std::string_view b) { return a.str() == b; }
  friend bool operator==(const SharedText& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const SharedText& a, const char* b) { return a.str() == b; }
  friend std::strong_ordering operator<=>(const SharedText& a, const SharedText& b) {
    return a.str() <=> b.str();
  }
  friend std::strong_ordering operator<=>(const SharedText& a, std::string_view b) {
    return std::string_view(a.str()) <=> b;
  }
  friend std::strong_ordering operator<=>(const SharedText& a, const std::string& b) {
    return a.str() <=> b;
  }

  friend std::ostream& operator<<(std::ostream& out, const SharedText& text) {
    return out << text.str();
  }
  friend std::string operator+(std::string a, const SharedText& b) { return a.append(b.str()); }
  friend std::string operator+(const SharedText& a, std::string_view b) {
    return std::string(a.str()).append(b);
  }
  friend std::string operator+(const SharedText& a, char b) { return a.str() + b; }

 private:
  static const std::string& empty_text() {
    static const std::string empty;
    return empty;
  }

  std::shared_ptr<std::string> text_;  // null when empty; changed only by assign(), unshared
};

// Equal texts as one SharedText: where many values repeat a few texts (a fleet's signatures and
// hosts, its diagnoses' filled fixes), each distinct text is stored once.
class TextPool {
 public:
  // The pool's copy of `text`, added where it is new.
  SharedText Get(std::string_view text) {
    auto it = texts_.find(text);
    if (it != texts_.end()) return it->second;
    SharedText shared(text);
    texts_.emplace(shared.str(), shared);
    return shared;
  }
  // Makes *text the pool's copy of its text, adding it where it is new.
  void Share(SharedText* text) {
    auto [it, added] = texts_.emplace(text->str(), *text);
    if (!added) *text = it->second;
  }

 private:
  // Keyed by a view of the text the value holds, so each text is stored once.
  std::unordered_map<std::string_view, SharedText> texts_;
};

}  // namespace faultline

template <>
struct fmt::formatter<faultline::SharedText> : fmt::formatter<std::string_view> {
  auto format(const faultline::SharedText& text, format_context& context) const {
    return fmt::formatter<std::string_view>::format(text.str(), context);
  }
};
