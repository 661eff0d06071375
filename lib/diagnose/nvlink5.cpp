// NVLink5 Xids (144-150) read by NVIDIA's "XID 144-150 Decode" table: the verdict follows the
// unit, intrInfo and errorStatus the line prints, not its Fatal/Nonfatal word.
#include <fmt/format.h>

#include <bit>
#include <vector>

#include "diagnose/diagnose.h"
#include "model/captures.h"
#include "model/text.h"

namespace faultline {
namespace {

// A Data Center Recovery Action's weight: the most severe one wins.
int action_rank(const std::string& action) {
  if (action == "RESET_GPU") return 2;
  if (action == "XID_154_EVAL") return 1;
  return 0;
}

int severity_rank(const std::string& severity) {
  if (severity == "Fatal") return 2;
  if (severity == "Link Fatal") return 1;
  return 0;
}

// Whether the printed unit is the table's: its name, or one half of an "A/B" name.
bool unit_fits(std::string_view printed, std::string_view table) {
  if (printed == table) return true;
  const size_t slash = table.find('/');
  return slash != std::string_view::npos &&
         (printed == table.substr(0, slash) || printed == table.substr(slash + 1));
}

// intrInfo matches an "Action 2" pattern: its low bits, as wide as the pattern, are the pattern.
bool pattern_fits(uint32_t intr_info, uint32_t pattern) {
  const uint32_t mask = std::bit_ceil(pattern + 1) - 1;
  return (intr_info & mask) == pattern;
}

struct Verdict {
  std::string action;
  std::string severity;
};

Verdict verdict_of(const Nvlink5Decode& row, std::optional<uint32_t> intr_info) {
  if (row.action2 && intr_info &&
      (pattern_fits(*intr_info, row.action2->intr_info_v1) ||
       pattern_fits(*intr_info, row.action2->intr_info_v2))) {
    return {row.action2->action, row.action2->severity};
  }
  return {row.action, row.severity};
}

bool worse(const Verdict& a, const Verdict& b) {
  return std::make_pair(action_rank(a.action), severity_rank(a.severity)) >
         std::make_pair(action_rank(b.action), severity_rank(b.severity));
}

std::string field(const Event& event, std::string_view name) {
  auto it = event.fields.find(name);
  return std::string(it == event.fields.end() ? "" : it->second);
}

// The verdict for one event and what it decoded, or why it could not (then nullopt).
std::optional<Verdict> decode(const Event& event, const std::vector<Nvlink5Decode>& table,
                              std::string* said) {
  const std::string unit = field(event, capture::kNvlinkUnit);
  const std::string status_text = field(event, capture::kErrorStatus);
  const std::optional<uint32_t> intr_info = parse_hex32(field(event, capture::kIntrInfo));
  const std::optional<uint32_t> status = parse_hex32(status_text);
  if (unit.empty()) {
    *said = "the line names no unit, so NVIDIA's 144-150 decode table cannot be applied";
    return std::nullopt;
  }
  std::vector<const Nvlink5Decode*> rows;
  for (const Nvlink5Decode& row : table) {
    if (row.xid == *event.xid && unit_fits(unit, row.unit)) rows.push_back(&row);
  }
  const std::string name = fmt::format("Xid {} {}", *event.xid, unit);
  if (rows.empty()) {
    *said = name + " is not in NVIDIA's 144-150 decode table";
    return std::nullopt;
  }
  // Xid 149 NETIR_LINK_EVT: the link-down reason in intrInfo bits 25:20 picks the row.
  if (rows.front()->link_down_reason) {
    if (!intr_info) {
      *said = name + ": no readable intrInfo for NVIDIA's 144-150 decode";
      return std::nullopt;
    }
    const uint32_t reason = (*intr_info >> 20) & 0x3f;
    for (const Nvlink5Decode* row : rows) {
      if (row->link_down_reason != reason) continue;
      const Verdict verdict = verdict_of(*row, intr_info);
      *said = fmt::format("{} link-down reason {} (intrInfo {} bits 25:20) = {}, {}", unit, reason,
                          field(event, capture::kIntrInfo), verdict.action, verdict.severity);
      return verdict;
    }
    *said = fmt::format(
        "{}: link-down reason {} (intrInfo bits 25:20) is not in NVIDIA's 144-150 "
        "decode table",
        name, reason);
    return std::nullopt;
  }
  // A row without an errorStatus covers every errorStatus of its unit.
  for (const Nvlink5Decode* row : rows) {
    if (row->error_status) continue;
    const Verdict verdict = verdict_of(*row, intr_info);
    *said = fmt::format("{} (any errorStatus) = {}, {}", unit, verdict.action, verdict.severity);
    return verdict;
  }
  if (!status) {
    *said = name + ": no readable errorStatus for NVIDIA's 144-150 decode";
    return std::nullopt;
  }
  const auto row_for = [&](uint32_t value) -> const Nvlink5Decode* {
    for (const Nvlink5Decode* row : rows) {
      if (row->error_status == value) return row;
    }
    return nullptr;
  };
  if (const Nvlink5Decode* row = row_for(*status)) {
    const Verdict verdict = verdict_of(*row, intr_info);
    *said = fmt::format("{} errorStatus {} = {}, {}", unit, status_text, verdict.action,
                        verdict.severity);
    return verdict;
  }
  // Several bits set: each must have its row; the most severe of them stands.
  if (std::popcount(*status) < 2) {
    *said = fmt::format("{}: errorStatus {} is not in NVIDIA's 144-150 decode table", name,
                        status_text);
    return std::nullopt;
  }
  std::optional<Verdict> worst;
  for (uint32_t bit = 1; bit != 0; bit <<= 1) {
    if ((*status & bit) == 0) continue;
    const Nvlink5Decode* row = row_for(bit);
    if (row == nullptr) {
      *said = fmt::format(
          "{}: errorStatus {} has bit 0x{:08x}, which NVIDIA's 144-150 decode "
          "table does not list",
          name, status_text, bit);
      return std::nullopt;
    }
    const Verdict verdict = verdict_of(*row, intr_info);
    if (!worst || worse(verdict, *worst)) worst = verdict;
  }
  *said = fmt::format("{} errorStatus {} (each bit decoded, the most severe taken) = {}, {}", unit,
                      status_text, worst->action, worst->severity);
  return worst;
}

}  // namespace

void decode_nvlink5(const Knowledge& knowledge, std::vector<Event>* events) {
  if (knowledge.nvlink5_decode.empty()) return;
  for (Event& event : *events) {
    if (!event.xid || *event.xid < 144 || *event.xid > 150) continue;
    std::string said;
    const std::optional<Verdict> verdict = decode(event, knowledge.nvlink5_decode, &said);
    event.fields.set(capture::kCatalogAction, verdict ? verdict->action : "undecoded");
    if (verdict) {
      event.fields.set(capture::kCatalogSeverity, verdict->severity);
    } else {
      event.fields.erase(std::string(capture::kCatalogSeverity));
    }
    event.fields.set(capture::kCatalogDecode, said);
  }
}

}  // namespace faultline
