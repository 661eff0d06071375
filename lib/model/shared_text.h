// SharedText: an immutable text that copies share. A fleet's diagnosis holds a million events,
// and every diagnosis copies the evidence lines it cites; a path is the same for every event of
// an input. Copies of a SharedText cost a counted pointer, not the text.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <compare>
#include <cstdint>
#include <cstring>
#include <new>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace faultline {

class SharedText {
 public:
  SharedText() = default;
  SharedText(std::string_view text)  // NOLINT(google-explicit-constructor): a text is a SharedText
      : block_(text.empty() ? nullptr : Block::Make(text)) {}
  SharedText(const std::string& text)  // NOLINT(google-explicit-constructor)
      : SharedText(std::string_view(text)) {}
  SharedText(const char* text)  // NOLINT(google-explicit-constructor)
      : SharedText(std::string_view(text)) {}
  SharedText(const SharedText& other) noexcept : block_(other.block_) {
    if (block_) block_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  SharedText(SharedText&& other) noexcept : block_(std::exchange(other.block_, nullptr)) {}
  SharedText& operator=(const SharedText& other) noexcept {
    SharedText copy(other);
    std::swap(block_, copy.block_);
    return *this;
  }
  SharedText& operator=(SharedText&& other) noexcept {
    std::swap(block_, other.block_);
    return *this;
  }
  ~SharedText() {
    if (block_ && block_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) Block::Free(block_);
  }

  std::string_view str() const {
    return block_ ? std::string_view(block_->chars(), block_->size) : std::string_view();
  }
  operator std::string_view() const { return str(); }  // NOLINT(google-explicit-constructor)
  // A copy, for the code that takes a std::string.
  operator std::string() const {
    return std::string(str());
  }  // NOLINT(google-explicit-constructor)

  // Replaces the text; the buffer is reused where no copy shares it and the text fits (a
  // flood's latest line is rewritten for every line of the flood).
  void assign(std::string_view text) {
    if (block_ && block_->refs.load(std::memory_order_acquire) == 1 && !text.empty() &&
        text.size() <= block_->capacity) {
      std::memmove(block_->chars(), text.data(), text.size());
      block_->size = static_cast<uint32_t>(text.size());
      block_->chars()[text.size()] = '\0';
    } else {
      *this = SharedText(text);
    }
  }

  // Replaces the text with what `edit` (a function of std::string*) makes of a copy of it.
  template <typename Edit>
  void rewrite(const Edit& edit) {
    std::string edited(str());
    edit(&edited);
    if (edited != str()) *this = SharedText(edited);
  }

  bool empty() const { return !block_; }
  size_t size() const { return block_ ? block_->size : 0; }
  // The text and a NUL after it, for the C functions that take one.
  const char* c_str() const { return block_ ? block_->chars() : ""; }
  const char* data() const { return c_str(); }
  // The searches of a string, for the code that reads evidence.
  size_t find(std::string_view what, size_t from = 0) const { return str().find(what, from); }
  size_t find(char what, size_t from = 0) const { return str().find(what, from); }
  bool starts_with(std::string_view prefix) const { return str().starts_with(prefix); }
  bool ends_with(std::string_view suffix) const { return str().ends_with(suffix); }
  std::string substr(size_t at, size_t count = std::string::npos) const {
    return std::string(str().substr(at, count));
  }

  friend bool operator==(const SharedText& a, const SharedText& b) {
    return a.block_ == b.block_ || a.str() == b.str();
  }
  friend bool operator==(const SharedText& a, std::string_view b) { return a.str() == b; }
  friend bool operator==(const SharedText& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const SharedText& a, const char* b) { return a.str() == b; }
  friend std::strong_ordering operator<=>(const SharedText& a, const SharedText& b) {
    return a.str() <=> b.str();
  }
  friend std::strong_ordering operator<=>(const SharedText& a, std::string_view b) {
    return a.str() <=> b;
  }
  friend std::strong_ordering operator<=>(const SharedText& a, const std::string& b) {
    return a.str() <=> std::string_view(b);
  }

  friend std::ostream& operator<<(std::ostream& out, const SharedText& text) {
    return out << text.str();
  }
  friend std::string operator+(std::string a, const SharedText& b) { return a.append(b.str()); }
  friend std::string operator+(const SharedText& a, std::string_view b) {
    return std::string(a.str()).append(b);
  }
  friend std::string operator+(const SharedText& a, char b) { return std::string(a.str()) + b; }

 private:
  // The count and the characters in one allocation, behind one pointer: a million events hold
  // eight SharedTexts. Counted atomically, as shared_ptr is: the threads that render a report
  // copy the texts they show. The characters follow the block, a NUL after them.
  struct Block {
    std::atomic<uint32_t> refs;
    uint32_t size;
    uint32_t capacity;

    char* chars() { return reinterpret_cast<char*>(this + 1); }

    static Block* Make(std::string_view text) {
      if (text.size() >= UINT32_MAX) throw std::length_error("SharedText: a text of 4 GiB");
      const auto size = static_cast<uint32_t>(text.size());
      auto* block = new (::operator new(sizeof(Block) + text.size() + 1)) Block{{1}, size, size};
      std::memcpy(block->chars(), text.data(), text.size());
      block->chars()[size] = '\0';
      return block;
    }
    static void Free(Block* block) {
      block->~Block();
      ::operator delete(block);
    }
  };

  Block* block_ = nullptr;  // null when empty; changed only by assign(), unshared
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
