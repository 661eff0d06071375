#include "state/exporter.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <functional>
#include <optional>
#include <tuple>
#include <utility>

#include "state/fields.h"

namespace faultline::state_internal {
namespace {

// How a DCGM value becomes the text of its query field.
enum class Value {
  kCount,           // a whole number ("1.000000e+00" is 1)
  kFlag,            // 0 is no, anything else yes
  kMode,            // 0 is disabled, anything else enabled
  kRecoveryAction,  // NVML's action number, as nvidia-smi names it
  kNumber,          // a whole number kept as text (the last Xid)
};

// DCGM field names of both generations (docs/formats/nvidia.md 5.1: 4.6.0 names, and the older
// names that 4.4.2 and earlier exporters print) and the query names they are stored under.
struct Metric {
  std::string_view name;
  std::string_view field;
  Value value;
};
constexpr Metric kMetrics[] = {
    {"DCGM_FI_DEV_ROW_REMAP_PENDING", "remapped_rows.pending", Value::kFlag},
    {"DCGM_FI_DEV_ROW_REMAP_FAILED", "remapped_rows.failure", Value::kFlag},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "remapped_rows.failure", Value::kFlag},
    {"DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL", "remapped_rows.uncorrectable", Value::kCount},
    {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "remapped_rows.uncorrectable", Value::kCount},
    {"DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL", "remapped_rows.correctable", Value::kCount},
    {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "remapped_rows.correctable", Value::kCount},
    {"DCGM_FI_DEV_BANK_REMAP_AVAIL_MAX", "remapped_rows.histogram.max", Value::kCount},
    {"DCGM_FI_DEV_BANK_REMAP_AVAIL_HIGH", "remapped_rows.histogram.high", Value::kCount},
    {"DCGM_FI_DEV_BANK_REMAP_AVAIL_PARTIAL", "remapped_rows.histogram.partial", Value::kCount},
    {"DCGM_FI_DEV_BANK_REMAP_AVAIL_LOW", "remapped_rows.histogram.low", Value::kCount},
    {"DCGM_FI_DEV_BANK_REMAP_AVAIL_NONE", "remapped_rows.histogram.none", Value::kCount},
    {"DCGM_FI_DEV_BANKS_REMAP_ROWS_AVAIL_MAX", "remapped_rows.histogram.max", Value::kCount},
    {"DCGM_FI_DEV_BANKS_REMAP_ROWS_AVAIL_HIGH", "remapped_rows.histogram.high", Value::kCount},
    {"DCGM_FI_DEV_BANKS_REMAP_ROWS_AVAIL_PARTIAL", "remapped_rows.histogram.partial",
     Value::kCount},
    {"DCGM_FI_DEV_BANKS_REMAP_ROWS_AVAIL_LOW", "remapped_rows.histogram.low", Value::kCount},
    {"DCGM_FI_DEV_BANKS_REMAP_ROWS_AVAIL_NONE", "remapped_rows.histogram.none", Value::kCount},
    // SBE counts are the corrected errors, DBE the uncorrected; VOL is volatile, AGG aggregate.
    {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "ecc.errors.corrected.volatile.total", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "ecc.errors.uncorrected.volatile.total", Value::kCount},
    {"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "ecc.errors.corrected.aggregate.total", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "ecc.errors.uncorrected.aggregate.total", Value::kCount},
    // DEV is device memory: the DRAM counters of nvidia-smi on Ampere and later (it calls them
    // device_memory on older GPUs). SRM is SRAM.
    {"DCGM_FI_DEV_ECC_SBE_VOL_DEV", "ecc.errors.corrected.volatile.dram", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_VOL_DEV", "ecc.errors.uncorrected.volatile.dram", Value::kCount},
    {"DCGM_FI_DEV_ECC_SBE_AGG_DEV", "ecc.errors.corrected.aggregate.dram", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_AGG_DEV", "ecc.errors.uncorrected.aggregate.dram", Value::kCount},
    {"DCGM_FI_DEV_ECC_SBE_VOL_SRM", "ecc.errors.corrected.volatile.sram", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_VOL_SRM", "ecc.errors.uncorrected.volatile.sram", Value::kCount},
    {"DCGM_FI_DEV_ECC_SBE_AGG_SRM", "ecc.errors.corrected.aggregate.sram", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_AGG_SRM", "ecc.errors.uncorrected.aggregate.sram", Value::kCount},
    {"DCGM_FI_DEV_ECC_SBE_VOL_L1", "ecc.errors.corrected.volatile.l1_cache", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_VOL_L1", "ecc.errors.uncorrected.volatile.l1_cache", Value::kCount},
    {"DCGM_FI_DEV_ECC_SBE_AGG_L1", "ecc.errors.corrected.aggregate.l1_cache", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_AGG_L1", "ecc.errors.uncorrected.aggregate.l1_cache", Value::kCount},
    {"DCGM_FI_DEV_ECC_SBE_VOL_L2", "ecc.errors.corrected.volatile.l2_cache", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_VOL_L2", "ecc.errors.uncorrected.volatile.l2_cache", Value::kCount},
    {"DCGM_FI_DEV_ECC_SBE_AGG_L2", "ecc.errors.corrected.aggregate.l2_cache", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_AGG_L2", "ecc.errors.uncorrected.aggregate.l2_cache", Value::kCount},
    {"DCGM_FI_DEV_ECC_SBE_VOL_REG", "ecc.errors.corrected.volatile.register_file", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_VOL_REG", "ecc.errors.uncorrected.volatile.register_file", Value::kCount},
    {"DCGM_FI_DEV_ECC_SBE_AGG_REG", "ecc.errors.corrected.aggregate.register_file", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_AGG_REG", "ecc.errors.uncorrected.aggregate.register_file",
     Value::kCount},
    {"DCGM_FI_DEV_ECC_SBE_VOL_TEX", "ecc.errors.corrected.volatile.texture_memory", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TEX", "ecc.errors.uncorrected.volatile.texture_memory",
     Value::kCount},
    {"DCGM_FI_DEV_ECC_SBE_AGG_TEX", "ecc.errors.corrected.aggregate.texture_memory", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_AGG_TEX", "ecc.errors.uncorrected.aggregate.texture_memory",
     Value::kCount},
    {"DCGM_FI_DEV_ECC_SBE_VOL_SHM", "ecc.errors.corrected.volatile.texture_shared", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_VOL_SHM", "ecc.errors.uncorrected.volatile.texture_shared",
     Value::kCount},
    {"DCGM_FI_DEV_ECC_SBE_AGG_SHM", "ecc.errors.corrected.aggregate.texture_shared", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_AGG_SHM", "ecc.errors.uncorrected.aggregate.texture_shared",
     Value::kCount},
    {"DCGM_FI_DEV_ECC_SBE_VOL_CBU", "ecc.errors.corrected.volatile.cbu", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_VOL_CBU", "ecc.errors.uncorrected.volatile.cbu", Value::kCount},
    {"DCGM_FI_DEV_ECC_SBE_AGG_CBU", "ecc.errors.corrected.aggregate.cbu", Value::kCount},
    {"DCGM_FI_DEV_ECC_DBE_AGG_CBU", "ecc.errors.uncorrected.aggregate.cbu", Value::kCount},
    {"DCGM_FI_DEV_ECC_MODE", "ecc.mode.current", Value::kMode},
    {"DCGM_FI_DEV_ECC_CURRENT", "ecc.mode.current", Value::kMode},
    {"DCGM_FI_DEV_ECC_PENDING", "ecc.mode.pending", Value::kMode},
    {"DCGM_FI_DEV_SRAM_EXCEEDED", "ecc.errors.uncorrected.aggregate.sram.thresholdExceeded",
     Value::kFlag},
    {"DCGM_FI_DEV_THRESHOLD_SRM", "ecc.errors.uncorrected.aggregate.sram.thresholdExceeded",
     Value::kFlag},
    {"DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL", "retired_pages.sbe", Value::kCount},
    {"DCGM_FI_DEV_RETIRED_SBE", "retired_pages.sbe", Value::kCount},
    {"DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL", "retired_pages.dbe", Value::kCount},
    {"DCGM_FI_DEV_RETIRED_DBE", "retired_pages.dbe", Value::kCount},
    {"DCGM_FI_DEV_PAGE_RETIRED_PENDING", "retired_pages.pending", Value::kFlag},
    {"DCGM_FI_DEV_RETIRED_PENDING", "retired_pages.pending", Value::kFlag},
    {"DCGM_FI_DEV_MEMORY_UNREPAIRABLE", "unrepairable_memory", Value::kFlag},
    {"DCGM_FI_DEV_MEMORY_UNREPAIRABLE_FLAG", "unrepairable_memory", Value::kFlag},
    {"DCGM_FI_DEV_GPU_RECOVERY_ACTION", "gpu_recovery_action", Value::kRecoveryAction},
    {"DCGM_FI_DEV_GET_GPU_RECOVERY_ACTION", "gpu_recovery_action", Value::kRecoveryAction},
    // A gauge: the last Xid the GPU reported, 0 for none; it does not reset
    // (docs/formats/nvidia.md 5.4).
    {"DCGM_FI_DEV_XID_ERROR", "dcgm.xid_last", Value::kNumber},
    {"DCGM_FI_DEV_XID_ERRORS", "dcgm.xid_last", Value::kNumber},
};

// nvidia-smi's names for NVML's recovery actions 0-4 (docs/formats/bundles.md 2.4); later numbers
// are kept as numbers, their nvidia-smi names not being known.
constexpr std::array<std::string_view, 5> kRecoveryActions = {"None", "Reset", "Reboot",
                                                              "Drain P2P", "Drain and Reset"};

// Labels that name the GPU, in the order the exporter prints them (by name, not position).
constexpr std::array<std::string_view, 2> kUuidLabels = {"UUID", "uuid"};
constexpr std::array<std::string_view, 2> kHostLabels = {"Hostname", "hostname"};
// A label-type counter: present only where the exporter is configured to print it.
constexpr std::string_view kSerialLabel = "DCGM_FI_DEV_SERIAL";

// DCGM_INT64_BLANK (0x7ffffffffffffff0) and the NOT_FOUND, NOT_SUPPORTED, NOT_PERMISSIONED
// sentinels after it stand for "no value" (docs/formats/bundles.md 4).
constexpr uint64_t kFirstBlank = 0x7ffffffffffffff0;
constexpr uint64_t kLastBlank = kFirstBlank + 3;

// Bounds on what one scrape can hold, whatever the input; a scrape past them is cut in two.
constexpr size_t kMaxLabels = 64;
constexpr size_t kMaxSamples = 1 << 16;
constexpr size_t kMaxGpus = 1024;
// Past this many snapshots an input keeps only those that differ from the GPU's previous one,
// and past four times as many none: a day of 15-second scrapes of 8 GPUs is 46,080.
constexpr size_t kMaxSnapshots = 1 << 16;
constexpr size_t kMaxChangedSnapshots = 4 * kMaxSnapshots;

struct Sample {
  std::string_view name;
  std::string_view series;  // the name and the label set as printed: what identifies a sample
  std::vector<std::pair<std::string_view, std::string>> labels;
  std::string_view value;
  std::optional<int64_t> timestamp_ms;

  // The value of the label named `key`, or "".
  std::string_view Label(std::string_view key) const {
    for (const auto& [label, text] : labels) {
      if (label == key) return text;
    }
    return {};
  }
  // The value of the first of `keys` that the sample has, or "".
  std::string_view Label(const std::array<std::string_view, 2>& keys) const {
    for (std::string_view key : keys) {
      if (const std::string_view text = Label(key); !text.empty()) return text;
    }
    return {};
  }
};

bool IsNameChar(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         (!first && c >= '0' && c <= '9');
}

// A name at the front of `text`, taken off it ("" if there is none).
std::string_view TakeName(std::string_view* text) {
  size_t end = 0;
  while (end < text->size() && IsNameChar((*text)[end], end == 0)) ++end;
  const std::string_view name = text->substr(0, end);
  text->remove_prefix(end);
  return name;
}

void SkipBlanks(std::string_view* text) {
  while (!text->empty() && (text->front() == ' ' || text->front() == '\t')) text->remove_prefix(1);
}

// A quoted label value at the front of `text`, unescaped (\\, \", \n) and taken off it.
std::optional<std::string> TakeQuoted(std::string_view* text) {
  if (text->empty() || text->front() != '"') return std::nullopt;
  std::string value;
  for (size_t i = 1; i < text->size(); ++i) {
    const char c = (*text)[i];
    if (c == '"') {
      text->remove_prefix(i + 1);
      return value;
    }
    if (c == '\\' && i + 1 < text->size()) {
      const char escaped = (*text)[++i];
      value.push_back(escaped == 'n' ? '\n' : escaped);
    } else {
      value.push_back(c);
    }
  }
  return std::nullopt;  // unterminated
}

// `{name="value",...}` at the front of `text` (a trailing comma and blanks allowed).
bool TakeLabels(std::string_view* text, Sample* sample) {
  text->remove_prefix(1);  // '{'
  while (true) {
    SkipBlanks(text);
    if (!text->empty() && text->front() == '}') break;
    const std::string_view key = TakeName(text);
    SkipBlanks(text);
    if (key.empty() || text->empty() || text->front() != '=') return false;
    text->remove_prefix(1);
    SkipBlanks(text);
    std::optional<std::string> value = TakeQuoted(text);
    if (!value || sample->labels.size() == kMaxLabels) return false;
    sample->labels.emplace_back(key, std::move(*value));
    SkipBlanks(text);
    if (!text->empty() && text->front() == ',') {
      text->remove_prefix(1);
    } else if (text->empty() || text->front() != '}') {
      return false;
    }
  }
  text->remove_prefix(1);  // '}'
  return true;
}

// The next blank-separated word of `text`, taken off it.
std::string_view TakeWord(std::string_view* text) {
  SkipBlanks(text);
  const size_t end = std::min(text->find_first_of(" \t"), text->size());
  const std::string_view word = text->substr(0, end);
  text->remove_prefix(end);
  return word;
}

// `NAME{labels} value [timestamp]`, or nullopt if the line is none.
std::optional<Sample> ParseSample(std::string_view line) {
  Sample sample;
  std::string_view rest = line;
  sample.name = TakeName(&rest);
  if (sample.name.empty()) return std::nullopt;
  if (!rest.empty() && rest.front() == '{' && !TakeLabels(&rest, &sample)) return std::nullopt;
  sample.series = line.substr(0, line.size() - rest.size());
  if (rest.empty() || (rest.front() != ' ' && rest.front() != '\t')) return std::nullopt;
  sample.value = TakeWord(&rest);
  const std::string_view timestamp = TakeWord(&rest);
  if (sample.value.empty() || !TakeWord(&rest).empty()) return std::nullopt;
  if (!timestamp.empty()) {
    int64_t ms = 0;
    const auto [end, error] =
        std::from_chars(timestamp.data(), timestamp.data() + timestamp.size(), ms);
    if (error != std::errc() || end != timestamp.data() + timestamp.size()) return std::nullopt;
    sample.timestamp_ms = ms;
  }
  return sample;
}

// A sample value as a whole number: integers as printed (%d), doubles (%f, or "1.000000e+00")
// when they are whole. Negative, fractional, NaN, infinite and DCGM blank values are none.
std::optional<uint64_t> WholeNumber(std::string_view text) {
  if (text.starts_with('+')) text.remove_prefix(1);
  const char* const end = text.data() + text.size();
  uint64_t integer = 0;
  if (const auto [stop, error] = std::from_chars(text.data(), end, integer); stop == end) {
    if (error != std::errc() || (integer >= kFirstBlank && integer <= kLastBlank)) {
      return std::nullopt;
    }
    return integer;
  }
  double number = 0;
  const auto [stop, error] = std::from_chars(text.data(), end, number);
  // 2^64 is the first double past uint64.
  if (error != std::errc() || stop != end || !std::isfinite(number) || number < 0 ||
      number != std::floor(number) || number >= 18446744073709551616.0) {
    return std::nullopt;
  }
  return static_cast<uint64_t>(number);
}

// The text SetField takes for a DCGM value of kind `value`.
std::string ValueText(Value value, uint64_t number) {
  switch (value) {
    case Value::kFlag:
      return number != 0 ? "1" : "0";
    case Value::kMode:
      return number != 0 ? "Enabled" : "Disabled";
    case Value::kRecoveryAction:
      if (number < kRecoveryActions.size()) return std::string(kRecoveryActions[number]);
      return std::to_string(number);
    case Value::kCount:
    case Value::kNumber:
      return std::to_string(number);
  }
  return {};
}

const Metric* FindMetric(std::string_view name) {
  for (const Metric& metric : kMetrics) {
    if (metric.name == name) return &metric;
  }
  return nullptr;
}

// What tells the GPU of a sample from the other GPUs of a scrape (several hosts may share one
// file), or "" for a sample of no GPU (an Xid sample with only err_code labels).
std::string GpuKey(const Sample& sample) {
  const std::string_view gpu = sample.Label("gpu");
  const std::string_view uuid = sample.Label(kUuidLabels);
  const std::string_view pci = sample.Label("pci_bus_id");
  if (gpu.empty() && uuid.empty() && pci.empty()) return {};
  std::string key(sample.Label(kHostLabels));
  for (std::string_view part : {gpu, uuid, pci}) {
    key += '\n';
    key += part;
  }
  return key;
}

// Fills what the GPU's snapshot does not know yet of its identity from a sample's labels: the
// samples of one GPU need not all carry the same labels (DCGM_FI_DEV_SERIAL).
void FillIdentity(const Sample& sample, uint64_t line_number, std::string_view line,
                  GpuState* state) {
  // device="nvidia3" is /dev/nvidia3, the minor number. gpu is DCGM's GPU id, which DCGM's own
  // messages use too; it is set after the minor number, so it is the index.
  const std::string_view device = sample.Label("device");
  bool minor_set = false;
  if (device.starts_with("nvidia") && !state->fields.contains("minor_number")) {
    minor_set =
        SetField("minor_number", device.substr(6), line_number, line, state) == ValueStatus::kSet;
  }
  const std::tuple<std::string_view, std::string_view, bool> identity[] = {
      {"gpu_name", sample.Label("modelName"), state->gpu.product.empty()},
      {"serial", sample.Label(kSerialLabel), state->gpu.serial.empty()},
      {"uuid", sample.Label(kUuidLabels), state->gpu.uuid.empty()},
      {"pci.bus_id", sample.Label("pci_bus_id"), state->gpu.pci.empty()},
      {"index", sample.Label("gpu"), !state->gpu.index || minor_set},
  };
  for (const auto& [field, value, missing] : identity) {
    if (missing && !value.empty()) SetField(field, value, line_number, line, state);
  }
  if (state->host.empty()) state->host = std::string(sample.Label(kHostLabels));
}

uint64_t Hash(std::string_view text) {
  return std::hash<std::string_view>{}(text);
}

// A digest of a snapshot's fields, to tell a changed state from a repeated one.
uint64_t FieldsHash(const GpuState& state) {
  uint64_t hash = 0;
  for (const auto& [field, value] : state.fields) {
    hash = hash * 1000003 ^ Hash(field);
    hash = hash * 1000003 ^ Hash(value);
  }
  return hash;
}

}  // namespace

bool IsExporterField(std::string_view field) {
  return std::any_of(std::begin(kMetrics), std::end(kMetrics),
                     [&](const Metric& metric) { return metric.field == field; });
}

std::optional<std::pair<std::string_view, std::string>> DcgmFieldValue(std::string_view dcgm_name,
                                                                       std::string_view value) {
  const Metric* metric = FindMetric(dcgm_name);
  const std::optional<uint64_t> number = metric ? WholeNumber(value) : std::nullopt;
  if (!number) return std::nullopt;
  return std::make_pair(metric->field, ValueText(metric->value, *number));
}

bool ExporterReader::MayOpen(std::string_view line) {
  return line.starts_with('#') || line.starts_with("DCGM_FI_");
}

ExporterReader::ExporterReader(std::string path, std::vector<GpuState>* out)
    : path_(std::move(path)), out_(out) {}

void ExporterReader::Feed(std::string_view text, uint64_t line_number) {
  const std::string_view line = trim(text);
  if (line.starts_with('#')) {
    // `# HELP` of a family the scrape has had: the next scrape has begun. `# TYPE` and other
    // comments belong to the exposition format.
    if (!line.starts_with("# HELP ")) return;
    std::string_view rest = line.substr(7);
    const uint64_t family = Hash(TakeWord(&rest));
    if (helps_.contains(family)) EndScrape();
    if (helps_.size() < kMaxSamples) helps_.insert(family);
    return;
  }
  if (line.empty() || (gpus_.empty() && !line.starts_with("DCGM_FI_"))) return;
  const std::optional<Sample> sample = ParseSample(line);
  if (!sample) {
    // Other text (a prompt, the next dump): the scrape is over.
    EndScrape();
    return;
  }
  if (!sample->name.starts_with("DCGM_FI_")) return;
  const std::string key = GpuKey(*sample);
  if (key.empty()) return;
  const uint64_t series = Hash(sample->series);
  if (seen_.contains(series) || seen_.size() == kMaxSamples) EndScrape();
  seen_.insert(series);

  Gpu* gpu = FindGpu(key);
  if (!gpu) {
    if (gpus_.size() == kMaxGpus) EndScrape();
    gpu_index_.emplace(key, gpus_.size());
    gpu = &gpus_.emplace_back(Gpu{.key = key, .state = {}});
    gpu->state.source = Evidence{.path = path_,
                                 .line = line_number,
                                 .time = {},
                                 .text = std::string(text),
                                 .signature = "dcgm-exporter"};
  }
  GpuState& state = gpu->state;
  FillIdentity(*sample, line_number, text, &state);
  if (sample->timestamp_ms && !state.time.known()) {
    // Milliseconds since the epoch: UTC.
    state.time = Timestamp::Absolute(static_cast<double>(*sample->timestamp_ms) / 1000.0, 0);
    state.source.time = state.time;
  }
  const Metric* metric = FindMetric(sample->name);
  const std::optional<uint64_t> number = WholeNumber(sample->value);
  if (!metric || !number) return;
  // A MIG instance repeats its GPU's device-wide values; the whole-GPU sample has the say.
  const bool instance = !sample->Label("GPU_I_ID").empty();
  if (instance && state.fields.contains(std::string(metric->field))) return;
  SetField(metric->field, ValueText(metric->value, *number), line_number, text, &state);
}

ExporterReader::Gpu* ExporterReader::FindGpu(const std::string& key) {
  const auto it = gpu_index_.find(key);
  return it == gpu_index_.end() ? nullptr : &gpus_[it->second];
}

void ExporterReader::EndScrape() {
  for (Gpu& gpu : gpus_) {
    const uint64_t digest = FieldsHash(gpu.state);
    const uint64_t gpu_key = Hash(gpu.key);
    if (emitted_ >= kMaxChangedSnapshots) break;
    if (emitted_ >= kMaxSnapshots) {
      const auto last = last_fields_.find(gpu_key);
      if (last != last_fields_.end() && last->second == digest) continue;
    }
    if (last_fields_.size() < kMaxGpus || last_fields_.contains(gpu_key)) {
      last_fields_[gpu_key] = digest;
    }
    out_->push_back(std::move(gpu.state));
    ++emitted_;
  }
  gpus_.clear();
  gpu_index_.clear();
  seen_.clear();
  helps_.clear();
}

}  // namespace faultline::state_internal
