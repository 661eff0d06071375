#include "state/xml.h"

#include <algorithm>
#include <pugixml.hpp>
#include <string>
#include <utility>

namespace faultline::state_internal {
namespace {

// Where `nvidia-smi -q -x` keeps each field, as an element path below <gpu>, and the query name
// it is stored under. A "*" in both stands for the "volatile" or "aggregate" counter set
// (docs/formats/bundles.md 2.2-2.4). Elements a driver does not print are simply not found.
struct Rule {
  std::string_view path;
  std::string_view field;
};
constexpr Rule kRules[] = {
    {"product_name", "name"},
    {"serial", "serial"},
    {"uuid", "uuid"},
    {"minor_number", "minor_number"},
    {"pci/pci_bus_id", "pci.bus_id"},
    {"ecc_mode/current_ecc", "ecc.mode.current"},
    {"ecc_mode/pending_ecc", "ecc.mode.pending"},
    // 515 and later; 570 splits sram_uncorrectable into parity and SEC-DED.
    {"ecc_errors/*/sram_correctable", "ecc.errors.corrected.*.sram"},
    {"ecc_errors/*/sram_uncorrectable", "ecc.errors.uncorrected.*.sram"},
    {"ecc_errors/*/sram_uncorrectable_parity", "ecc.errors.uncorrected.*.sram.parity"},
    {"ecc_errors/*/sram_uncorrectable_secded", "ecc.errors.uncorrected.*.sram.secded"},
    {"ecc_errors/*/dram_correctable", "ecc.errors.corrected.*.dram"},
    {"ecc_errors/*/dram_uncorrectable", "ecc.errors.uncorrected.*.dram"},
    {"ecc_errors/*/sram_threshold_exceeded", "ecc.errors.uncorrected.*.sram.thresholdExceeded"},
    {"ecc_errors/aggregate_uncorrectable_sram_sources/sram_l2",
     "ecc.errors.uncorrected.aggregate.sram.l2"},
    {"ecc_errors/aggregate_uncorrectable_sram_sources/sram_sm",
     "ecc.errors.uncorrected.aggregate.sram.sm"},
    {"ecc_errors/aggregate_uncorrectable_sram_sources/sram_microcontroller",
     "ecc.errors.uncorrected.aggregate.sram.mcu"},
    {"ecc_errors/aggregate_uncorrectable_sram_sources/sram_pcie",
     "ecc.errors.uncorrected.aggregate.sram.pcie"},
    {"ecc_errors/aggregate_uncorrectable_sram_sources/sram_other",
     "ecc.errors.uncorrected.aggregate.sram.other"},
    // 595 (v13).
    {"ecc_errors/channel_repair_pending", "channel_repair_pending"},
    {"ecc_errors/tpc_repair_pending", "tpc_repair_pending"},
    {"ecc_errors/unrepairable_memory", "unrepairable_memory"},
    // 418: single-bit errors are the corrected ones, double-bit the uncorrected. texture_shm is
    // what the -q text calls "Texture Shared".
    {"ecc_errors/*/single_bit/device_memory", "ecc.errors.corrected.*.device_memory"},
    {"ecc_errors/*/single_bit/register_file", "ecc.errors.corrected.*.register_file"},
    {"ecc_errors/*/single_bit/l1_cache", "ecc.errors.corrected.*.l1_cache"},
    {"ecc_errors/*/single_bit/l2_cache", "ecc.errors.corrected.*.l2_cache"},
    {"ecc_errors/*/single_bit/texture_memory", "ecc.errors.corrected.*.texture_memory"},
    {"ecc_errors/*/single_bit/texture_shm", "ecc.errors.corrected.*.texture_shared"},
    {"ecc_errors/*/single_bit/cbu", "ecc.errors.corrected.*.cbu"},
    {"ecc_errors/*/single_bit/total", "ecc.errors.corrected.*.total"},
    {"ecc_errors/*/double_bit/device_memory", "ecc.errors.uncorrected.*.device_memory"},
    {"ecc_errors/*/double_bit/register_file", "ecc.errors.uncorrected.*.register_file"},
    {"ecc_errors/*/double_bit/l1_cache", "ecc.errors.uncorrected.*.l1_cache"},
    {"ecc_errors/*/double_bit/l2_cache", "ecc.errors.uncorrected.*.l2_cache"},
    {"ecc_errors/*/double_bit/texture_memory", "ecc.errors.uncorrected.*.texture_memory"},
    {"ecc_errors/*/double_bit/texture_shm", "ecc.errors.uncorrected.*.texture_shared"},
    {"ecc_errors/*/double_bit/cbu", "ecc.errors.uncorrected.*.cbu"},
    {"ecc_errors/*/double_bit/total", "ecc.errors.uncorrected.*.total"},
    // 418 has pending_retirement only; 515 and later print pending_blacklist before it. Either
    // being Yes makes the flag yes.
    {"retired_pages/multiple_single_bit_retirement/retired_count", "retired_pages.sbe"},
    {"retired_pages/double_bit_retirement/retired_count", "retired_pages.dbe"},
    {"retired_pages/pending_blacklist", "retired_pages.pending"},
    {"retired_pages/pending_retirement", "retired_pages.pending"},
    // A container on GPUs with row remapping; the bare text N/A elsewhere, which no path finds.
    {"remapped_rows/remapped_row_corr", "remapped_rows.correctable"},
    {"remapped_rows/remapped_row_corr_inactive", "remapped_rows.correctable_inactive"},
    {"remapped_rows/remapped_row_unc", "remapped_rows.uncorrectable"},
    {"remapped_rows/remapped_row_unc_inactive", "remapped_rows.uncorrectable_inactive"},
    {"remapped_rows/remapped_row_pending", "remapped_rows.pending"},
    {"remapped_rows/remapped_row_failure", "remapped_rows.failure"},
    {"remapped_rows/row_remapper_histogram/row_remapper_histogram_max",
     "remapped_rows.histogram.max"},
    {"remapped_rows/row_remapper_histogram/row_remapper_histogram_high",
     "remapped_rows.histogram.high"},
    {"remapped_rows/row_remapper_histogram/row_remapper_histogram_partial",
     "remapped_rows.histogram.partial"},
    {"remapped_rows/row_remapper_histogram/row_remapper_histogram_low",
     "remapped_rows.histogram.low"},
    {"remapped_rows/row_remapper_histogram/row_remapper_histogram_none",
     "remapped_rows.histogram.none"},
    // 535-536 print Yes/No; 570 and 575 "Requested functionality has been deprecated" (absent).
    {"gpu_reset_status/reset_required", "reset_status.reset_required"},
    {"gpu_reset_status/drain_and_reset_recommended", "reset_status.drain_and_reset_recommended"},
    {"gpu_recovery_action", "gpu_recovery_action"},
    // "clocks_throttle_reasons" until 530.x, "clocks_event_reasons" after; the text names both
    // by the newer query names.
    {"clocks_throttle_reasons/clocks_throttle_reason_sw_power_cap",
     "clocks_event_reasons.sw_power_cap"},
    {"clocks_throttle_reasons/clocks_throttle_reason_hw_slowdown",
     "clocks_event_reasons.hw_slowdown"},
    {"clocks_throttle_reasons/clocks_throttle_reason_hw_thermal_slowdown",
     "clocks_event_reasons.hw_thermal_slowdown"},
    {"clocks_throttle_reasons/clocks_throttle_reason_hw_power_brake_slowdown",
     "clocks_event_reasons.hw_power_brake_slowdown"},
    {"clocks_throttle_reasons/clocks_throttle_reason_sw_thermal_slowdown",
     "clocks_event_reasons.sw_thermal_slowdown"},
    {"clocks_event_reasons/clocks_event_reason_sw_power_cap", "clocks_event_reasons.sw_power_cap"},
    {"clocks_event_reasons/clocks_event_reason_hw_slowdown", "clocks_event_reasons.hw_slowdown"},
    {"clocks_event_reasons/clocks_event_reason_hw_thermal_slowdown",
     "clocks_event_reasons.hw_thermal_slowdown"},
    {"clocks_event_reasons/clocks_event_reason_hw_power_brake_slowdown",
     "clocks_event_reasons.hw_power_brake_slowdown"},
    {"clocks_event_reasons/clocks_event_reason_sw_thermal_slowdown",
     "clocks_event_reasons.sw_thermal_slowdown"},
    {"temperature/gpu_temp", "temperature.gpu"},
    {"temperature/gpu_temp_max_threshold", "temperature.gpu.shutdown"},
    {"temperature/gpu_temp_slow_threshold", "temperature.gpu.slowdown"},
    {"temperature/gpu_temp_max_gpu_threshold", "temperature.gpu.max_operating"},
};

// Real documents have a few text-only lines (`<mig_devices>` holding "None"); this many in a
// row means the paste ended and other text goes on.
constexpr size_t kMaxTextRun = 64;

constexpr char kRoot[] = "nvidia_smi_log";

bool IsPrologStart(std::string_view line) {
  return line.starts_with("<?xml");
}

// The root's start tag, alone or after the declaration on one line.
bool HoldsRootStart(std::string_view line) {
  const size_t at = line.find("<nvidia_smi_log");
  if (at == std::string_view::npos) return false;
  const std::string_view after = line.substr(at + sizeof(kRoot));
  return after.empty() || after.front() == '>' || after.front() == ' ' || after.front() == '\t';
}

bool HoldsRootEnd(std::string_view line) {
  return line.find("</nvidia_smi_log>") != std::string_view::npos;
}

// What may stand between the declaration and the root: a DOCTYPE, a comment, a blank.
bool IsPrologLine(std::string_view line) {
  return line.empty() || line.starts_with("<!");
}

// Stores the text of `node` under `field`, noting the line that printed the element. A "yes"
// stays: two elements feed retired_pages.pending.
void SetFromElement(std::string_view field, const pugi::xml_node& node, const LineBuffer& buffer,
                    GpuState* state) {
  const auto [number, line] = buffer.LineAt(node.offset_debug());
  SetFlagOnce(field, node.child_value(), number, line, state);
}

GpuState ReadGpu(const pugi::xml_node& gpu, const LineBuffer& buffer, const std::string& path,
                 const Timestamp& time) {
  GpuState state;
  state.time = time;
  const auto [number, line] = buffer.LineAt(gpu.offset_debug());
  state.source = Evidence{.path = path,
                          .line = number,
                          .time = time,
                          .text = std::string(line),
                          .signature = "nvidia-smi-xml"};
  for (const Rule& rule : kRules) {
    for (std::string_view counter_set : {"volatile", "aggregate"}) {
      const std::string element_path = WithCounterSet(rule.path, counter_set);
      if (const pugi::xml_node node = gpu.first_element_by_path(element_path.c_str())) {
        SetFromElement(WithCounterSet(rule.field, counter_set), node, buffer, &state);
      }
      if (element_path == rule.path) break;  // no counter set to vary
    }
  }
  // The id attribute repeats pci/pci_bus_id in nvidia-smi's own output; some fixtures invent
  // other ids, so it only stands in when the element is missing (docs/formats/bundles.md 2.1).
  if (state.gpu.pci.empty()) {
    SetField("pci.bus_id", gpu.attribute("id").value(), number, line, &state);
  }
  return state;
}

}  // namespace

bool IsXmlField(std::string_view field) {
  return std::any_of(std::begin(kRules), std::end(kRules),
                     [&](const Rule& rule) { return MatchesCounterSet(rule.field, field); });
}

bool XmlDumpReader::MayOpen(std::string_view line) {
  return IsPrologStart(line) || HoldsRootStart(line);
}

XmlDumpReader::XmlDumpReader(std::string path, std::vector<GpuState>* out, size_t max_bytes)
    : path_(std::move(path)), out_(out), buffer_(max_bytes, kMaxLines) {}

void XmlDumpReader::Feed(std::string_view text, uint64_t line_number) {
  const std::string_view line = trim(text);
  switch (phase_) {
    case Phase::kOutside:
      if (IsPrologStart(line) || HoldsRootStart(line)) {
        Start(text, line_number, HoldsRootStart(line) ? Phase::kBody : Phase::kProlog);
      }
      return;
    case Phase::kProlog:
      if (IsPrologStart(line)) {
        Start(text, line_number, HoldsRootStart(line) ? Phase::kBody : Phase::kProlog);
      } else if (HoldsRootStart(line)) {
        phase_ = Phase::kBody;
        Keep(text, line_number);
      } else if (IsPrologLine(line)) {
        Keep(text, line_number);
      } else {
        // An XML document of some other tool.
        buffer_.Clear();
        phase_ = Phase::kOutside;
      }
      return;
    case Phase::kBody:
      if (IsPrologStart(line) || HoldsRootStart(line)) {
        // The next document: the open one was cut short.
        End();
        Start(text, line_number, HoldsRootStart(line) ? Phase::kBody : Phase::kProlog);
        return;
      }
      Keep(text, line_number);
      text_run_ = line.empty() || line.front() == '<' ? 0 : text_run_ + 1;
      if (phase_ == Phase::kBody && (HoldsRootEnd(line) || text_run_ >= kMaxTextRun)) End();
      return;
    case Phase::kSkipping:
      if (IsPrologStart(line) || HoldsRootStart(line)) {
        Start(text, line_number, HoldsRootStart(line) ? Phase::kBody : Phase::kProlog);
      } else if (HoldsRootEnd(line)) {
        phase_ = Phase::kOutside;
      }
      return;
  }
}

void XmlDumpReader::Finish() {
  if (phase_ == Phase::kBody) End();
  buffer_.Clear();
  phase_ = Phase::kOutside;
}

void XmlDumpReader::Start(std::string_view text, uint64_t line_number, Phase phase) {
  buffer_.Clear();
  text_run_ = 0;
  phase_ = phase;
  Keep(text, line_number);
  if (phase_ == Phase::kBody && HoldsRootEnd(trim(text))) End();  // a one-line document
}

// Buffers a line of the open document; past a cap the document is dropped.
void XmlDumpReader::Keep(std::string_view text, uint64_t line_number) {
  if (buffer_.Append(text, line_number)) return;
  buffer_.Clear();
  ++dropped_;
  phase_ = HoldsRootEnd(trim(text)) ? Phase::kOutside : Phase::kSkipping;
}

// Parses the open document and appends one snapshot per <gpu>. pugixml keeps the tree it built
// up to an error, so a document cut short gives what it holds; it never throws while parsing.
void XmlDumpReader::End() {
  phase_ = Phase::kOutside;
  text_run_ = 0;
  if (buffer_.empty()) return;
  pugi::xml_document document;
  const std::string& text = buffer_.text();
  // UTF-8 as is: no conversion, so element offsets stay offsets into the buffered text.
  const pugi::xml_parse_result result =
      document.load_buffer(text.data(), text.size(), pugi::parse_default, pugi::encoding_utf8);
  if (result.status != pugi::status_out_of_memory && result.status != pugi::status_internal_error) {
    const pugi::xml_node root = document.child(kRoot);
    const Timestamp time = ParseDumpTime(trim(root.child_value("timestamp")));
    for (const pugi::xml_node& gpu : root.children("gpu")) {
      out_->push_back(ReadGpu(gpu, buffer_, path_, time));
    }
  }
  buffer_.Clear();
}

}  // namespace faultline::state_internal
