#include "model/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <ctime>
#include <optional>
#include <stdexcept>
#include <vector>

#include "model/text.h"

namespace faultline {

namespace {

// Lengths in the blob of Fields: seven bits a byte, the high bit set on all but the last.
void append_length(std::string* blob, size_t length) {
  while (length >= 0x80) {
    blob->push_back(static_cast<char>((length & 0x7f) | 0x80));
    length >>= 7;
  }
  blob->push_back(static_cast<char>(length));
}

// One entry of the blob, its value written out.
void append_entry(std::string* blob, std::string_view name, std::string_view value) {
  append_length(blob, name.size());
  blob->append(name);
  append_length(blob, value.size() << 1);
  blob->append(value);
}

size_t length_bytes(size_t length) {
  size_t bytes = 1;
  for (; length >= 0x80; length >>= 7) ++bytes;
  return bytes;
}

// Where `value` is in `source`, if keeping that place takes fewer bytes than the value does.
std::optional<size_t> place_in(std::string_view source, std::string_view value) {
  if (value.size() < 2) return std::nullopt;
  const size_t at = source.find(value);
  if (at == std::string_view::npos || length_bytes(at) >= value.size()) return std::nullopt;
  return at;
}

size_t read_length(std::string_view blob, size_t* at) {
  size_t length = 0;
  for (int shift = 0; *at < blob.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(blob[(*at)++]);
    length |= static_cast<size_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) break;
  }
  return length;
}

}  // namespace

Fields::Blob::Blob(std::string_view bytes) {
  if (bytes.empty()) return;
  if (bytes.size() > UINT32_MAX) throw std::length_error("Fields: 4 GiB of fields");
  const auto count = static_cast<uint32_t>(bytes.size());
  data_ = std::make_unique_for_overwrite<char[]>(sizeof count + bytes.size());
  std::memcpy(data_.get(), &count, sizeof count);
  std::memcpy(data_.get() + sizeof count, bytes.data(), bytes.size());
}

std::string_view Fields::Blob::view() const {
  if (!data_) return {};
  uint32_t count = 0;
  std::memcpy(&count, data_.get(), sizeof count);
  return {data_.get() + sizeof count, count};
}

Fields::const_iterator::const_iterator(std::string_view blob, std::string_view source, size_t at)
    : blob_(blob), source_(source), at_(at) {
  if (at_ >= blob_.size()) {
    at_ = blob_.size();
    return;
  }
  size_t cursor = at_;
  const size_t name_length = read_length(blob_, &cursor);
  entry_.first = blob_.substr(cursor, name_length);
  cursor += name_length;
  const size_t tagged_length = read_length(blob_, &cursor);
  const size_t value_length = tagged_length >> 1;
  if (tagged_length & 1) {
    entry_.second = source_.substr(read_length(blob_, &cursor), value_length);
  } else {
    entry_.second = blob_.substr(cursor, value_length);
    cursor += value_length;
  }
  next_ = cursor;
}

Fields::const_iterator& Fields::const_iterator::operator++() {
  *this = const_iterator(blob_, source_, next_);
  return *this;
}

Fields::Fields(std::initializer_list<value_type> entries) {
  for (const auto& [name, value] : entries) set(name, value);
}

Fields Fields::FromSorted(const std::vector<value_type>& entries, const SharedText& source) {
  Fields fields;
  for (size_t i = 1; i < entries.size(); ++i) {
    if (!(entries[i - 1].first < entries[i].first)) {
      for (const auto& [name, value] : entries) fields.set(name, value);
      return fields;
    }
  }
  std::vector<std::optional<size_t>> places;
  size_t size = 0;
  for (const auto& [name, value] : entries) {
    places.push_back(place_in(source, value));
    size += length_bytes(name.size()) + name.size() + length_bytes(value.size() << 1) +
            (places.back() ? length_bytes(*places.back()) : value.size());
  }
  std::string blob;
  blob.reserve(size);
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& [name, value] = entries[i];
    if (!places[i]) {
      append_entry(&blob, name, value);
      continue;
    }
    append_length(&blob, name.size());
    blob.append(name);
    append_length(&blob, value.size() << 1 | 1);
    append_length(&blob, *places[i]);
  }
  fields.blob_ = Blob(blob);
  if (std::any_of(places.begin(), places.end(), [](auto place) { return place.has_value(); })) {
    fields.source_ = source;
  }
  return fields;
}

size_t Fields::size() const {
  return static_cast<size_t>(std::distance(begin(), end()));
}

Fields::const_iterator Fields::find(std::string_view name) const {
  for (auto it = begin(); it != end(); ++it) {
    if (it->first == name) return it;
    if (it->first > name) break;
  }
  return end();
}

std::string_view Fields::at(std::string_view name) const {
  auto it = find(name);
  if (it == end()) throw std::out_of_range("Fields::at: no field " + std::string(name));
  return it->second;
}

void Fields::set(std::string_view name, std::string_view value) {
  auto it = begin();
  while (it != end() && it->first < name) ++it;
  std::string entry;
  append_entry(&entry, name, value);
  const size_t replaced = it != end() && it->first == name ? it.next_ - it.at_ : 0;
  // The other entries keep their places in source_.
  const std::string_view before = blob_.view();
  std::string blob;
  blob.reserve(before.size() - replaced + entry.size());
  blob.append(before.substr(0, it.at_)).append(entry).append(before.substr(it.at_ + replaced));
  blob_ = Blob(blob);
}

size_t Fields::erase(std::string_view name) {
  auto it = find(name);
  if (it == end()) return 0;
  std::string blob(blob_.view());
  blob.erase(it.at_, it.next_ - it.at_);
  blob_ = Blob(blob);
  return 1;
}

Timestamp Timestamp::Absolute(double unix_seconds, std::optional<int> utc_offset_minutes) {
  Timestamp out;
  out.kind = Kind::kAbsolute;
  out.seconds = unix_seconds;
  // Inputs spell offsets with two-digit hours and minutes: they fit 16 bits.
  if (utc_offset_minutes) out.utc_offset_minutes = static_cast<int16_t>(*utc_offset_minutes);
  return out;
}

Timestamp Timestamp::BootRelative(double seconds_since_boot) {
  Timestamp out;
  out.kind = Kind::kBootRelative;
  out.seconds = seconds_since_boot;
  return out;
}

std::string Timestamp::iso() const {
  switch (kind) {
    case Kind::kUnknown:
      return "";
    case Kind::kBootRelative:
      return fmt::format("+{:.6f}s", seconds);
    case Kind::kAbsolute:
      break;
  }
  const int offset = utc_offset_minutes.value_or(0);
  const double local = seconds + offset * 60.0;
  double whole = std::floor(local);
  auto micros = static_cast<long>(std::lround((local - whole) * 1e6));
  if (micros == 1000000) {  // .9999996 rounds up to the next second
    whole += 1;
    micros = 0;
  }
  const auto t = static_cast<time_t>(whole);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return "";
  std::string out = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", tm.tm_year + 1900,
                                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  if (micros != 0) out += fmt::format(".{:06}", micros);
  if (utc_offset_minutes) {
    const int magnitude = std::abs(offset);
    out += fmt::format("{}{:02}:{:02}", offset < 0 ? '-' : '+', magnitude / 60, magnitude % 60);
  }
  return out;
}

bool comparable(const Timestamp& a, const Timestamp& b) {
  return a.known() && a.kind == b.kind;
}

std::optional<double> seconds_between(const Timestamp& a, const Timestamp& b) {
  if (!comparable(a, b)) return std::nullopt;
  if (a.utc_offset_minutes && b.utc_offset_minutes) return b.seconds - a.seconds;
  const auto wall_clock = [](const Timestamp& t) {
    return t.seconds + t.utc_offset_minutes.value_or(0) * 60.0;
  };
  return wall_clock(b) - wall_clock(a);
}

namespace {

// Parses up to `max_digits` hex digits from the front of `text`; advances past them.
std::optional<unsigned long> take_hex(std::string_view& text, size_t max_digits) {
  size_t n = 0;
  unsigned long value = 0;
  while (n < text.size() && n < max_digits && std::isxdigit(static_cast<unsigned char>(text[n]))) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text[n])));
    value = value * 16 + static_cast<unsigned long>(c <= '9' ? c - '0' : c - 'a' + 10);
    ++n;
  }
  if (n == 0) return std::nullopt;
  text.remove_prefix(n);
  return value;
}

bool take_char(std::string_view& text, char c) {
  if (text.empty() || text.front() != c) return false;
  text.remove_prefix(1);
  return true;
}

std::string format_pci(unsigned long domain, unsigned long bus, unsigned long device,
                       unsigned long function) {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
}

}  // namespace

std::string normalize_pci(std::string_view text) {
  if (text.starts_with("PCI:") || text.starts_with("pci:")) text.remove_prefix(4);
  std::string_view rest = text;
  // "dddd:bb:dd[.f]" with a 4- or 8-digit domain, or "bb:dd.f" without one.
  auto first = take_hex(rest, 8);
  if (first && take_char(rest, ':')) {
    auto second = take_hex(rest, 2);
    if (!second) return "";
    if (take_char(rest, ':')) {
      auto device = take_hex(rest, 2);
      if (!device) return "";
      unsigned long function = 0;
      if (take_char(rest, '.')) {
        auto f = take_hex(rest, 1);
        if (!f) return "";
        function = *f;
      }
      if (!rest.empty()) return "";
      return format_pci(*first & 0xffff, *second, *device, function);
    }
    if (take_char(rest, '.')) {
      auto f = take_hex(rest, 1);
      if (!f || !rest.empty()) return "";
      return format_pci(0, *first, *second, *f);
    }
    return "";
  }
  // NCCL's busId: the address's hex digits run together ("3b000" is 0000:3b:00.0).
  rest = text;
  auto packed = take_hex(rest, 12);
  if (!packed || !rest.empty() || text.size() < 4) return "";
  return format_pci(*packed >> 20, (*packed >> 12) & 0xff, (*packed >> 4) & 0xff, *packed & 0xf);
}

std::string_view trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

std::string fill_template(
    std::string_view text,
    const std::function<std::optional<std::string>(std::string_view)>& value) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t open = text.find('{');
    const size_t close = open == std::string_view::npos ? open : text.find('}', open);
    if (close == std::string_view::npos) break;
    out += text.substr(0, open);
    const std::optional<std::string> filled = value(text.substr(open + 1, close - open - 1));
    out += filled ? std::string_view(*filled) : text.substr(open, close - open + 1);
    text.remove_prefix(close + 1);
  }
  out += text;
  return out;
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  const auto lower = [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [&](char x, char y) { return lower(x) == lower(y); });
}

namespace {
constexpr std::string_view kInputKindNames[] = {"text", "kernel-log", "nvidia-smi", "training-log",
                                                "mixed"};
constexpr std::string_view kLaneNames[] = {"hardware", "cuda", "nccl", "job"};
}  // namespace

std::string_view lane_name(Lane lane) {
  return kLaneNames[static_cast<size_t>(lane)];
}

std::optional<Lane> parse_lane(std::string_view name) {
  for (size_t i = 0; i < std::size(kLaneNames); ++i) {
    if (kLaneNames[i] == name) return static_cast<Lane>(i);
  }
  return std::nullopt;
}

std::string_view input_kind_name(InputKind kind) {
  return kInputKindNames[static_cast<size_t>(kind)];
}

std::optional<InputKind> parse_input_kind(std::string_view name) {
  for (size_t i = 0; i < std::size(kInputKindNames); ++i) {
    if (kInputKindNames[i] == name) return static_cast<InputKind>(i);
  }
  return std::nullopt;
}

UnreadInput unread_input(const std::string& path, std::string_view error) {
  const std::string prefix = path + ": ";
  if (error.starts_with(prefix)) error.remove_prefix(prefix.size());
  return {path, std::string(error)};
}

}  // namespace faultline
