#include "state/query.h"

#include <algorithm>
#include <array>
#include <bitset>
#include <cctype>
#include <utility>

#include "state/fields.h"

namespace faultline::state_internal {
namespace {

// Where `nvidia-smi -q` prints each field: the sections above the key, '/'-joined and
// lowercase ("*" stands for the "Volatile" or "Aggregate" counter set, which the field name
// repeats), the key, and the query name it is stored under. Drivers differ in case only
// ("Ecc Mode" in 460.x, "ECC Mode" later), so everything is compared lowercase.
struct Rule {
  std::string_view section;
  std::string_view key;
  std::string_view field;
};
constexpr Rule kRules[] = {
    {"", "product name", "name"},
    {"", "serial number", "serial"},
    {"", "gpu uuid", "uuid"},
    {"", "minor number", "minor_number"},
    {"", "gpu recovery action", "gpu_recovery_action"},
    {"pci", "bus id", "pci.bus_id"},
    {"ecc mode", "current", "ecc.mode.current"},
    {"ecc mode", "pending", "ecc.mode.pending"},
    // Ampere and later.
    {"ecc errors/*", "sram correctable", "ecc.errors.corrected.*.sram"},
    {"ecc errors/*", "sram uncorrectable", "ecc.errors.uncorrected.*.sram"},
    {"ecc errors/*", "sram uncorrectable parity", "ecc.errors.uncorrected.*.sram.parity"},
    {"ecc errors/*", "sram uncorrectable sec-ded", "ecc.errors.uncorrected.*.sram.secded"},
    {"ecc errors/*", "dram correctable", "ecc.errors.corrected.*.dram"},
    {"ecc errors/*", "dram uncorrectable", "ecc.errors.uncorrected.*.dram"},
    {"ecc errors/*", "sram threshold exceeded", "ecc.errors.uncorrected.*.sram.thresholdExceeded"},
    {"ecc errors/aggregate uncorrectable sram sources", "sram l2",
     "ecc.errors.uncorrected.aggregate.sram.l2"},
    {"ecc errors/aggregate uncorrectable sram sources", "sram sm",
     "ecc.errors.uncorrected.aggregate.sram.sm"},
    {"ecc errors/aggregate uncorrectable sram sources", "sram microcontroller",
     "ecc.errors.uncorrected.aggregate.sram.mcu"},
    {"ecc errors/aggregate uncorrectable sram sources", "sram pcie",
     "ecc.errors.uncorrected.aggregate.sram.pcie"},
    {"ecc errors/aggregate uncorrectable sram sources", "sram other",
     "ecc.errors.uncorrected.aggregate.sram.other"},
    // Blackwell era.
    {"ecc errors", "channel repair pending", "channel_repair_pending"},
    {"ecc errors", "tpc repair pending", "tpc_repair_pending"},
    {"ecc errors", "unrepairable memory", "unrepairable_memory"},
    // Before Ampere: single-bit errors are the corrected ones, double-bit the uncorrected.
    {"ecc errors/*/single bit", "device memory", "ecc.errors.corrected.*.device_memory"},
    {"ecc errors/*/single bit", "register file", "ecc.errors.corrected.*.register_file"},
    {"ecc errors/*/single bit", "l1 cache", "ecc.errors.corrected.*.l1_cache"},
    {"ecc errors/*/single bit", "l2 cache", "ecc.errors.corrected.*.l2_cache"},
    {"ecc errors/*/single bit", "texture memory", "ecc.errors.corrected.*.texture_memory"},
    {"ecc errors/*/single bit", "texture shared", "ecc.errors.corrected.*.texture_shared"},
    {"ecc errors/*/single bit", "cbu", "ecc.errors.corrected.*.cbu"},
    {"ecc errors/*/single bit", "total", "ecc.errors.corrected.*.total"},
    {"ecc errors/*/double bit", "device memory", "ecc.errors.uncorrected.*.device_memory"},
    {"ecc errors/*/double bit", "register file", "ecc.errors.uncorrected.*.register_file"},
    {"ecc errors/*/double bit", "l1 cache", "ecc.errors.uncorrected.*.l1_cache"},
    {"ecc errors/*/double bit", "l2 cache", "ecc.errors.uncorrected.*.l2_cache"},
    {"ecc errors/*/double bit", "texture memory", "ecc.errors.uncorrected.*.texture_memory"},
    {"ecc errors/*/double bit", "texture shared", "ecc.errors.uncorrected.*.texture_shared"},
    {"ecc errors/*/double bit", "cbu", "ecc.errors.uncorrected.*.cbu"},
    {"ecc errors/*/double bit", "total", "ecc.errors.uncorrected.*.total"},
    // "Pending" is 410.x's name for the blacklist flag.
    {"retired pages", "single bit ecc", "retired_pages.sbe"},
    {"retired pages", "double bit ecc", "retired_pages.dbe"},
    {"retired pages", "pending page blacklist", "retired_pages.pending"},
    {"retired pages", "pending", "retired_pages.pending"},
    {"remapped rows", "correctable error", "remapped_rows.correctable"},
    {"remapped rows", "uncorrectable error", "remapped_rows.uncorrectable"},
    {"remapped rows", "pending", "remapped_rows.pending"},
    {"remapped rows", "remapping failure occurred", "remapped_rows.failure"},
    {"remapped rows/bank remap availability histogram", "max", "remapped_rows.histogram.max"},
    {"remapped rows/bank remap availability histogram", "high", "remapped_rows.histogram.high"},
    {"remapped rows/bank remap availability histogram", "partial",
     "remapped_rows.histogram.partial"},
    {"remapped rows/bank remap availability histogram", "low", "remapped_rows.histogram.low"},
    {"remapped rows/bank remap availability histogram", "none", "remapped_rows.histogram.none"},
    {"gpu reset status", "reset required", "reset_status.reset_required"},
    {"gpu reset status", "drain and reset recommended", "reset_status.drain_and_reset_recommended"},
    // "Clocks Throttle Reasons" until 530.x is read as "Clocks Event Reasons" (SectionName); both
    // are stored under the newer query names (nvidia-smi takes clocks_throttle_reasons.* as
    // aliases). HW Thermal and HW Power Brake Slowdown are printed one level under HW Slowdown,
    // which has a value of its own.
    {"clocks event reasons", "sw power cap", "clocks_event_reasons.sw_power_cap"},
    {"clocks event reasons", "hw slowdown", "clocks_event_reasons.hw_slowdown"},
    {"clocks event reasons/hw slowdown", "hw thermal slowdown",
     "clocks_event_reasons.hw_thermal_slowdown"},
    {"clocks event reasons/hw slowdown", "hw power brake slowdown",
     "clocks_event_reasons.hw_power_brake_slowdown"},
    {"clocks event reasons", "sw thermal slowdown", "clocks_event_reasons.sw_thermal_slowdown"},
    // temperature.gpu is the --query-gpu name; the thresholds have none (--query-gpu offers only
    // the margin, temperature.gpu.tlimit), so they are named after it.
    {"temperature", "gpu current temp", "temperature.gpu"},
    {"temperature", "gpu shutdown temp", "temperature.gpu.shutdown"},
    {"temperature", "gpu slowdown temp", "temperature.gpu.slowdown"},
    {"temperature", "gpu max operating temp", "temperature.gpu.max_operating"},
};

}  // namespace

bool IsQueryTextField(std::string_view field) {
  for (const Rule& rule : kRules) {
    const size_t star = rule.field.find('*');
    if (star == std::string_view::npos) {
      if (rule.field == field) return true;
      continue;
    }
    for (std::string_view counters : {"volatile", "aggregate"}) {
      std::string name(rule.field);
      name.replace(star, 1, counters);
      if (name == field) return true;
    }
  }
  return false;
}

namespace {

// Keys of the dump header besides its Timestamp; any other line outside a block ends a dump.
constexpr std::array<std::string_view, 5> kHeaderKeys = {
    "driver version", "cuda version", "attached gpus", "kmd version", "cuda umd version"};

// Deeper than any nvidia-smi key; bounds the section stack whatever the indentation.
constexpr size_t kMaxLevel = 8;

// No nvidia-smi key is longer; leaving longer (prose) keys unread keeps other lines cheap.
constexpr size_t kMaxKeyLength = 64;

// One line of -q output: "    Bus Id      : 00000000:3B:00.0" is indent 4, key "bus id",
// value "00000000:3B:00.0"; a section line ("    ECC Errors") has no value.
struct QueryLine {
  int indent = 0;
  std::string key;
  std::optional<std::string_view> value;
};

QueryLine SplitLine(std::string_view text) {
  QueryLine line;
  line.indent = static_cast<int>(std::min(text.find_first_not_of(' '), text.size()));
  std::string_view rest = trim(text);
  size_t colon = rest.find(": ");
  if (colon == std::string_view::npos && rest.ends_with(':')) colon = rest.size() - 1;
  if (colon != std::string_view::npos) {
    line.value = trim(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
  }
  rest = trim(rest);
  if (rest.size() <= kMaxKeyLength) line.key = ascii_lower(rest);
  return line;
}

// "GPU 00000000:3B:00.0" and nothing more ("GPU 00000000:3B:00.0 was successfully reset." is
// nvidia-smi -r reporting, not a block).
bool IsGpuHeader(std::string_view line) {
  constexpr std::string_view kShape = "GPU ########:##:##.#";
  if (line.size() != kShape.size()) return false;
  for (size_t i = 0; i < kShape.size(); ++i) {
    const bool hex = std::isxdigit(static_cast<unsigned char>(line[i])) != 0;
    if (kShape[i] == '#' ? !hex : line[i] != kShape[i]) return false;
  }
  return true;
}

// "..." where whoever pasted the dump cut lines out; the block goes on after it.
bool IsElision(std::string_view line) {
  return line == "\u2026" || line.find_first_not_of('.') == std::string_view::npos;
}

bool IsDumpStart(std::string_view line) {
  return line.starts_with('=') && line.find("NVSMI LOG") != std::string_view::npos;
}

// A section's name as the rules know it: the one section nvidia-smi renamed, by its newer name.
constexpr std::string_view kOldClocksSection = "clocks throttle reasons";
std::string_view SectionName(std::string_view name) {
  return name == kOldClocksSection ? "clocks event reasons" : name;
}

// Whether `name` heads a section the rules read from ("ecc errors", "remapped rows").
bool IsStateSection(std::string_view name) {
  name = SectionName(name);
  return std::any_of(std::begin(kRules), std::end(kRules), [&](const Rule& rule) {
    return !rule.section.empty() && rule.section.substr(0, rule.section.find('/')) == name;
  });
}

bool StartsWithIgnoringCase(std::string_view text, std::string_view lower_prefix) {
  if (text.size() < lower_prefix.size()) return false;
  for (size_t i = 0; i < lower_prefix.size(); ++i) {
    // ASCII only, and no call to the locale's tolower: most lines of every input come here.
    const char c =
        text[i] >= 'A' && text[i] <= 'Z' ? static_cast<char>(text[i] - 'A' + 'a') : text[i];
    if (c != lower_prefix[i]) return false;
  }
  return true;
}

bool IsTopLevelKey(std::string_view key) {
  return std::any_of(std::begin(kRules), std::end(kRules),
                     [&](const Rule& rule) { return rule.section.empty() && rule.key == key; });
}

// The query name of `key` under `sections`, or "" for a key no rule reads.
std::string FieldFor(const std::vector<std::string>& sections, std::string_view key) {
  std::string section;
  std::string_view counter_set;
  for (const std::string& name : sections) {
    if (!section.empty()) section += '/';
    if (name == "volatile" || name == "aggregate") {
      counter_set = name;
      section += '*';
    } else {
      section += SectionName(name);
    }
  }
  for (const Rule& rule : kRules) {
    if (rule.section != section || rule.key != key) continue;
    std::string field(rule.field);
    if (const size_t star = field.find('*'); star != std::string::npos) {
      field.replace(star, 1, counter_set);
    }
    return field;
  }
  return {};
}

}  // namespace

// The "==NVSMI LOG==" banner, a GPU line, the Timestamp or the first section of a header-less
// excerpt.
bool QueryTextReader::MayOpen(std::string_view line) {
  static const std::vector<std::string_view> kOpening = [] {
    std::vector<std::string_view> names = {"timestamp", "gpu ", kOldClocksSection};
    for (const Rule& rule : kRules) {
      const std::string_view section = rule.section.substr(0, rule.section.find('/'));
      if (!section.empty() && std::find(names.begin(), names.end(), section) == names.end()) {
        names.push_back(section);
      }
    }
    return names;
  }();
  // The names' first bytes, either case: most lines of every input start with none of them.
  static const std::bitset<256> kFirstBytes = [] {
    std::bitset<256> bytes;
    for (std::string_view name : kOpening) {
      const auto c = static_cast<unsigned char>(name.front());
      bytes.set(c);
      if (c >= 'a' && c <= 'z') bytes.set(c - 'a' + 'A');
    }
    return bytes;
  }();
  if (line.empty()) return false;
  if (line.front() == '=') return true;
  return kFirstBytes[static_cast<unsigned char>(line.front())] &&
         std::any_of(kOpening.begin(), kOpening.end(),
                     [&](std::string_view name) { return StartsWithIgnoringCase(line, name); });
}

QueryTextReader::QueryTextReader(std::string path, std::vector<GpuState>* out)
    : path_(std::move(path)), out_(out) {}

void QueryTextReader::Feed(std::string_view text, uint64_t line_number) {
  const std::string_view trimmed = trim(text);
  // Blank lines separate the GPUs of a `-d` dump.
  if (trimmed.empty() || IsElision(trimmed)) return;
  if (IsDumpStart(trimmed)) {
    EndBlock();
    dump_time_ = {};
    return;
  }
  if (IsGpuHeader(trimmed)) {
    EndBlock();
    StartBlock(text, line_number, static_cast<int>(text.find_first_not_of(' ')));
    SetField("pci.bus_id", trimmed.substr(4), line_number, text, &block_->state);
    return;
  }
  if (block_ && TakeBlockLine(text, line_number)) return;
  EndBlock();
  TakeOuterLine(text, line_number);
}

void QueryTextReader::Finish() {
  EndBlock();
  dump_time_ = {};
}

// Reads a line into the open block; false if the line is outside it.
bool QueryTextReader::TakeBlockLine(std::string_view text, uint64_t line_number) {
  const QueryLine line = SplitLine(text);
  const int depth = line.indent - block_->base_indent;
  if (depth < 4) return false;
  const auto level = static_cast<size_t>(depth / 4);
  // A header-less excerpt has no outer edge but its sections: anything else ends it.
  if (block_->headerless && level == 1 && !IsStateSection(line.key) && !IsTopLevelKey(line.key)) {
    return false;
  }
  if (level > kMaxLevel) return true;
  std::vector<std::string>& sections = block_->sections;
  sections.resize(level - 1);  // a skipped level leaves an empty name, which no rule matches
  if (!line.value) {
    sections.push_back(line.key);
    return true;
  }
  const std::string field = FieldFor(sections, line.key);
  if (!field.empty()) SetField(field, *line.value, line_number, text, &block_->state);
  // A key with a value can head deeper keys too ("HW Slowdown : Active" over "HW Thermal
  // Slowdown"); the next line at this level or above drops it again.
  sections.push_back(line.key);
  return true;
}

void QueryTextReader::TakeOuterLine(std::string_view text, uint64_t line_number) {
  const QueryLine line = SplitLine(text);
  if (line.value && line.key == "timestamp") {
    dump_time_ = ParseDumpTime(*line.value);
    return;
  }
  if (line.value &&
      std::find(kHeaderKeys.begin(), kHeaderKeys.end(), line.key) != kHeaderKeys.end()) {
    return;
  }
  if (!line.value && IsStateSection(line.key)) {
    // `-q -d ECC` excerpts pasted without their GPU line (common for Blackwell).
    StartBlock(text, line_number, line.indent - 4);
    block_->headerless = true;
    TakeBlockLine(text, line_number);
    return;
  }
  // The dump is over; a later excerpt gets its own time, or none.
  dump_time_ = {};
}

void QueryTextReader::StartBlock(std::string_view text, uint64_t line_number, int base_indent) {
  block_ = Block{};
  block_->base_indent = base_indent;
  block_->state.time = dump_time_;
  block_->state.source = Evidence{.path = path_,
                                  .line = line_number,
                                  .time = dump_time_,
                                  .text = std::string(text),
                                  .signature = "nvidia-smi-q"};
}

void QueryTextReader::EndBlock() {
  if (!block_) return;
  // A header-less excerpt is known only by the fields it gave; without any it was prose.
  if (!block_->headerless || !block_->state.fields.empty()) {
    out_->push_back(std::move(block_->state));
  }
  block_.reset();
}

}  // namespace faultline::state_internal
