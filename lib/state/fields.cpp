#include "state/fields.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>

namespace faultline::state_internal {
namespace {

enum class Kind { kCount, kFlag, kMode, kText, kIndex, kPci, kTime };

// Identity fields whose text goes to a GpuRef member rather than to GpuState.fields.
struct IdentityField {
  std::string_view field;
  SharedText GpuRef::*member;
};
constexpr std::array<IdentityField, 6> kIdentityFields = {{
    {"name", &GpuRef::product},
    {"gpu_name", &GpuRef::product},
    {"serial", &GpuRef::serial},
    {"gpu_serial", &GpuRef::serial},
    {"uuid", &GpuRef::uuid},
    {"gpu_uuid", &GpuRef::uuid},
}};
// The fields that name the GPU's PCI address, which goes to GpuRef::pci.
constexpr std::array<std::string_view, 2> kPciFields = {"pci.bus_id", "gpu_bus_id"};

constexpr std::array<std::string_view, 14> kFlagFields = {
    "remapped_rows.pending",
    "remapped_rows.failure",
    "retired_pages.pending",
    "ecc.errors.uncorrected.aggregate.sram.thresholdExceeded",
    "channel_repair_pending",
    "tpc_repair_pending",
    "unrepairable_memory",
    "reset_status.reset_required",
    "reset_status.drain_and_reset_recommended",
    "clocks_event_reasons.sw_power_cap",
    "clocks_event_reasons.hw_slowdown",
    "clocks_event_reasons.hw_thermal_slowdown",
    "clocks_event_reasons.hw_power_brake_slowdown",
    "clocks_event_reasons.sw_thermal_slowdown",
};

// nvidia-smi accepts long and short names for the retired page counts, and the pre-535 names
// of the clock event reasons; consumers see one.
constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kAliases = {{
    {"retired_pages.single_bit_ecc.count", "retired_pages.sbe"},
    {"retired_pages.double_bit.count", "retired_pages.dbe"},
    {"clocks_throttle_reasons.sw_power_cap", "clocks_event_reasons.sw_power_cap"},
    {"clocks_throttle_reasons.hw_slowdown", "clocks_event_reasons.hw_slowdown"},
    {"clocks_throttle_reasons.hw_thermal_slowdown", "clocks_event_reasons.hw_thermal_slowdown"},
    {"clocks_throttle_reasons.hw_power_brake_slowdown",
     "clocks_event_reasons.hw_power_brake_slowdown"},
    {"clocks_throttle_reasons.sw_thermal_slowdown", "clocks_event_reasons.sw_thermal_slowdown"},
}};

template <typename Range>
bool Contains(const Range& range, std::string_view item) {
  return std::find(std::begin(range), std::end(range), item) != std::end(range);
}

const IdentityField* FindIdentity(std::string_view field) {
  for (const IdentityField& identity : kIdentityFields) {
    if (identity.field == field) return &identity;
  }
  return nullptr;
}

std::string_view Canonical(std::string_view field) {
  for (const auto& [alias, name] : kAliases) {
    if (field == alias) return name;
  }
  return field;
}

Kind KindOf(std::string_view field) {
  if (field == "index" || field == "minor_number") return Kind::kIndex;
  if (field == "pci.bus_id" || field == "gpu_bus_id") return Kind::kPci;
  if (field == "timestamp") return Kind::kTime;
  if (field.starts_with("ecc.mode.")) return Kind::kMode;
  if (Contains(kFlagFields, field)) return Kind::kFlag;
  if (field.starts_with("ecc.errors.") || field.starts_with("retired_pages.") ||
      field.starts_with("remapped_rows.") || field.starts_with("temperature.gpu")) {
    return Kind::kCount;
  }
  return Kind::kText;
}

bool IsDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The spellings nvidia-smi uses for a value it cannot give, bracketed in CSV output.
bool IsUnavailable(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  const std::string lower = ascii_lower(text);
  // 570.x XML and text print the deprecated reset-status fields this way
  // (docs/formats/bundles.md 2.4).
  return lower.empty() || lower == "n/a" || lower == "unknown error" || lower == "not supported" ||
         lower == "requested functionality has been deprecated";
}

// Counts are the first word ("640 bank(s)", "81559 MiB"). A negative count, or one past
// uint64, is a corrupt reading rather than a different kind of line.
ValueStatus NormalizeCount(std::string_view text, std::string* out) {
  std::string_view number = text.substr(0, text.find(' '));
  const bool negative = number.starts_with('-');
  if (negative) number.remove_prefix(1);
  if (!IsDigits(number)) return ValueStatus::kMalformed;
  const std::optional<uint64_t> value = parse_number<uint64_t>(number);
  if (negative || !value) return ValueStatus::kUnavailable;
  *out = std::to_string(*value);
  return ValueStatus::kSet;
}

// Flags: Yes/No in -q text and most CSV, 0/1 in some drivers' CSV (docs/formats/nvidia.md 4.5),
// Active/Not Active for the clock event reasons.
ValueStatus NormalizeFlag(std::string_view text, std::string* out) {
  const std::string lower = ascii_lower(text);
  if (lower == "yes" || lower == "true" || lower == "1" || lower == "active") {
    *out = "yes";
  } else if (lower == "no" || lower == "false" || lower == "0" || lower == "not active") {
    *out = "no";
  } else {
    return ValueStatus::kMalformed;
  }
  return ValueStatus::kSet;
}

ValueStatus NormalizeIndex(std::string_view text, std::string* out) {
  const bool negative = text.starts_with('-');
  if (!IsDigits(negative ? text.substr(1) : text)) return ValueStatus::kMalformed;
  const std::optional<int> value = parse_number<int>(text);
  if (negative || !value) return ValueStatus::kUnavailable;
  *out = std::to_string(*value);
  return ValueStatus::kSet;
}

ValueStatus Normalize(Kind kind, std::string_view text, std::string* out) {
  switch (kind) {
    case Kind::kCount:
      return NormalizeCount(text, out);
    case Kind::kFlag:
      return NormalizeFlag(text, out);
    case Kind::kIndex:
      return NormalizeIndex(text, out);
    case Kind::kPci:
      *out = normalize_pci(text);
      return out->empty() ? ValueStatus::kMalformed : ValueStatus::kSet;
    case Kind::kMode:
      *out = ascii_lower(text);
      return ValueStatus::kSet;
    case Kind::kText:
    case Kind::kTime:
      *out = std::string(text);
      return ValueStatus::kSet;
  }
  return ValueStatus::kMalformed;
}

Timestamp FromCivil(int year, unsigned month, unsigned day, std::string_view clock) {
  if (year < 1970 || year > 9999) return {};
  const std::chrono::year_month_day date{std::chrono::year{year}, std::chrono::month{month},
                                         std::chrono::day{day}};
  const size_t first = clock.find(':');
  const size_t second = clock.find(':', first + 1);
  if (!date.ok() || first == std::string_view::npos || second == std::string_view::npos) {
    return {};
  }
  const std::optional<int> hour = parse_number<int>(clock.substr(0, first));
  const std::optional<int> minute = parse_number<int>(clock.substr(first + 1, second - first - 1));
  const std::optional<double> seconds = parse_number<double>(clock.substr(second + 1));
  if (!hour || !minute || !seconds || *hour < 0 || *hour > 23 || *minute < 0 || *minute > 59 ||
      !(*seconds >= 0 && *seconds < 61)) {
    return {};
  }
  const std::chrono::sys_days midnight{date};
  const double days = static_cast<double>(midnight.time_since_epoch().count());
  return Timestamp::Absolute(days * 86400 + *hour * 3600.0 + *minute * 60.0 + *seconds,
                             std::nullopt);
}

// The --query-gpu "timestamp" column: "2021/10/25 22:06:14.123", local time, no zone.
Timestamp ParseCsvTime(std::string_view text) {
  const size_t space = text.find(' ');
  if (space != 10 || text[4] != '/' || text[7] != '/') {
    return {};
  }
  const std::optional<int> year = parse_number<int>(text.substr(0, 4));
  const std::optional<unsigned> month = parse_number<unsigned>(text.substr(5, 2));
  const std::optional<unsigned> day = parse_number<unsigned>(text.substr(8, 2));
  if (!year || !month || !day) return {};
  return FromCivil(*year, *month, *day, text.substr(space + 1));
}

// Stores an identity value; returns false if `field` is none.
bool SetIdentity(std::string_view field, const std::string& value, GpuState* state) {
  if (const IdentityField* identity = FindIdentity(field)) {
    state->gpu.*(identity->member) = value;
    return true;
  }
  if (Contains(kPciFields, field)) {
    state->gpu.pci = value;
    return true;
  }
  if (field == "index" || field == "minor_number") {
    state->gpu.index = parse_number<int>(value);
    // The minor number is /dev/nvidiaN, which need not be nvidia-smi's index: keep it too.
    return field == "index";
  }
  return false;
}

}  // namespace

ValueStatus SetField(std::string_view field, std::string_view raw, uint64_t line_number,
                     std::string_view line, GpuState* state) {
  field = Canonical(field);
  const std::string_view text = trim(raw);
  if (IsUnavailable(text)) return ValueStatus::kUnavailable;
  const Kind kind = KindOf(field);
  std::string value;
  const ValueStatus status = Normalize(kind, text, &value);
  if (status != ValueStatus::kSet) return status;
  if (kind == Kind::kTime) {
    state->time = ParseCsvTime(value);
    return state->time.known() ? ValueStatus::kSet : ValueStatus::kMalformed;
  }
  if (SetIdentity(field, value, state)) return ValueStatus::kSet;
  state->fields[std::string(field)] = std::move(value);
  state->field_lines[std::string(field)] = {line_number, std::string(line)};
  return ValueStatus::kSet;
}

bool IsDistinctiveField(std::string_view field) {
  field = Canonical(field);
  const bool word = field.find_first_of("._") == std::string_view::npos;
  return !word && (KindOf(field) != Kind::kText || FindIdentity(field) != nullptr ||
                   field == "gpu_recovery_action");
}

Timestamp ParseDumpTime(std::string_view text) {
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  // "Mon Oct 25 22:06:14 2021"; the day is padded with a space when it has one digit.
  std::array<std::string_view, 5> words;
  size_t count = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find(' ', start), text.size());
    if (end > start) {
      if (count == words.size()) return {};
      words[count++] = text.substr(start, end - start);
    }
    start = end + 1;
  }
  if (count != words.size()) return {};
  const auto* const month = std::find(kMonths.begin(), kMonths.end(), words[1]);
  const std::optional<unsigned> day = parse_number<unsigned>(words[2]);
  const std::optional<int> year = parse_number<int>(words[4]);
  if (month == kMonths.end() || !day || !year) return {};
  return FromCivil(*year, static_cast<unsigned>(month - kMonths.begin()) + 1, *day, words[3]);
}

bool MatchesCounterSet(std::string_view pattern, std::string_view field) {
  if (pattern.find('*') == std::string_view::npos) return pattern == field;
  return WithCounterSet(pattern, "volatile") == field ||
         WithCounterSet(pattern, "aggregate") == field;
}

std::string WithCounterSet(std::string_view pattern, std::string_view counter_set) {
  std::string name(pattern);
  if (const size_t star = name.find('*'); star != std::string::npos) {
    name.replace(star, 1, counter_set);
  }
  return name;
}

ValueStatus SetFlagOnce(std::string_view field, std::string_view raw, uint64_t line_number,
                        std::string_view line, GpuState* state) {
  const auto it = state->fields.find(std::string(Canonical(field)));
  if (it != state->fields.end() && it->second == "yes") return ValueStatus::kSet;
  return SetField(field, raw, line_number, line, state);
}

bool LineBuffer::Append(std::string_view text, uint64_t line_number) {
  if (starts_.size() >= max_lines_ || text_.size() + text.size() + 1 > max_bytes_) return false;
  starts_.push_back(text_.size());
  numbers_.push_back(line_number);
  text_.append(text);
  text_.push_back('\n');
  return true;
}

void LineBuffer::Clear() {
  // A 32 MiB document should not stay allocated for the rest of the input.
  constexpr size_t kKeptCapacity = 1 << 20;
  if (text_.capacity() > kKeptCapacity) {
    std::string().swap(text_);
    std::vector<size_t>().swap(starts_);
    std::vector<uint64_t>().swap(numbers_);
    return;
  }
  text_.clear();
  starts_.clear();
  numbers_.clear();
}

std::pair<uint64_t, std::string_view> LineBuffer::LineAt(std::ptrdiff_t offset) const {
  if (starts_.empty()) return {0, {}};
  size_t index = 0;
  if (offset >= 0 && static_cast<size_t>(offset) < text_.size()) {
    const auto next = std::upper_bound(starts_.begin(), starts_.end(), static_cast<size_t>(offset));
    index = static_cast<size_t>(next - starts_.begin()) - 1;
  }
  const size_t begin = starts_[index];
  const size_t end = index + 1 < starts_.size() ? starts_[index + 1] - 1 : text_.size() - 1;
  return {numbers_[index], std::string_view(text_).substr(begin, end - begin)};
}

}  // namespace faultline::state_internal
