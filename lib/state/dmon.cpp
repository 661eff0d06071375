#include "state/dmon.h"

#include <array>
#include <charconv>
#include <functional>
#include <utility>

#include "model/text.h"
#include "state/exporter.h"
#include "state/fields.h"

namespace faultline::state_internal {
namespace {

// DCGM's short name of each field the exporter reader stores (dcgmlib/src/dcgm_fields.cpp,
// DcgmFieldsPopulateOneFieldWithFormatting: the field id, its tag and its short name, which
// dmon prints as the column's header).
constexpr std::pair<std::string_view, std::string_view> kColumns[] = {
    {"ECCUR", "DCGM_FI_DEV_ECC_MODE"},
    {"ECPEN", "DCGM_FI_DEV_ECC_PENDING"},
    {"ESVTL", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"},
    {"EDVTL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"},
    {"ESATL", "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL"},
    {"EDATL", "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL"},
    {"ESVL1", "DCGM_FI_DEV_ECC_SBE_VOL_L1"},
    {"EDVL1", "DCGM_FI_DEV_ECC_DBE_VOL_L1"},
    {"ESVL2", "DCGM_FI_DEV_ECC_SBE_VOL_L2"},
    {"EDVL2", "DCGM_FI_DEV_ECC_DBE_VOL_L2"},
    {"ESVDV", "DCGM_FI_DEV_ECC_SBE_VOL_DEV"},
    {"EDVDV", "DCGM_FI_DEV_ECC_DBE_VOL_DEV"},
    {"ESVRG", "DCGM_FI_DEV_ECC_SBE_VOL_REG"},
    {"EDVRG", "DCGM_FI_DEV_ECC_DBE_VOL_REG"},
    {"ESVTX", "DCGM_FI_DEV_ECC_SBE_VOL_TEX"},
    {"EDVTX", "DCGM_FI_DEV_ECC_DBE_VOL_TEX"},
    {"ESAL1", "DCGM_FI_DEV_ECC_SBE_AGG_L1"},
    {"EDAL1", "DCGM_FI_DEV_ECC_DBE_AGG_L1"},
    {"ESAL2", "DCGM_FI_DEV_ECC_SBE_AGG_L2"},
    {"EDAL2", "DCGM_FI_DEV_ECC_DBE_AGG_L2"},
    {"ESADV", "DCGM_FI_DEV_ECC_SBE_AGG_DEV"},
    {"EDADV", "DCGM_FI_DEV_ECC_DBE_AGG_DEV"},
    {"ESARG", "DCGM_FI_DEV_ECC_SBE_AGG_REG"},
    {"EDARG", "DCGM_FI_DEV_ECC_DBE_AGG_REG"},
    {"ESATX", "DCGM_FI_DEV_ECC_SBE_AGG_TEX"},
    {"EDATX", "DCGM_FI_DEV_ECC_DBE_AGG_TEX"},
    {"ESVSHM", "DCGM_FI_DEV_ECC_SBE_VOL_SHM"},
    {"EDVSHM", "DCGM_FI_DEV_ECC_DBE_VOL_SHM"},
    {"ESVCBU", "DCGM_FI_DEV_ECC_SBE_VOL_CBU"},
    {"EDVCBU", "DCGM_FI_DEV_ECC_DBE_VOL_CBU"},
    {"ESVSRM", "DCGM_FI_DEV_ECC_SBE_VOL_SRM"},
    {"EDVSRM", "DCGM_FI_DEV_ECC_DBE_VOL_SRM"},
    {"ESDSHM", "DCGM_FI_DEV_ECC_SBE_AGG_SHM"},
    {"EDDSHM", "DCGM_FI_DEV_ECC_DBE_AGG_SHM"},
    {"ESDCBU", "DCGM_FI_DEV_ECC_SBE_AGG_CBU"},
    {"EDDCBU", "DCGM_FI_DEV_ECC_DBE_AGG_CBU"},
    {"ESDSRM", "DCGM_FI_DEV_ECC_SBE_AGG_SRM"},
    {"EDDSRM", "DCGM_FI_DEV_ECC_DBE_AGG_SRM"},
    {"ECCTHRSRM", "DCGM_FI_DEV_SRAM_EXCEEDED"},
    {"RPSBE", "DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL"},
    {"RPDBE", "DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL"},
    {"RPPEN", "DCGM_FI_DEV_PAGE_RETIRED_PENDING"},
    {"URMPS", "DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL"},
    {"RRAM", "DCGM_FI_DEV_BANK_REMAP_AVAIL_MAX"},
    {"RRAH", "DCGM_FI_DEV_BANK_REMAP_AVAIL_HIGH"},
    {"RRAP", "DCGM_FI_DEV_BANK_REMAP_AVAIL_PARTIAL"},
    {"RRAL", "DCGM_FI_DEV_BANK_REMAP_AVAIL_LOW"},
    {"RRAN", "DCGM_FI_DEV_BANK_REMAP_AVAIL_NONE"},
    {"CRMPS", "DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL"},
    {"RRF", "DCGM_FI_DEV_ROW_REMAP_FAILED"},
    {"RRP", "DCGM_FI_DEV_ROW_REMAP_PENDING"},
    {"XIDER", "DCGM_FI_DEV_XID_ERROR"},
    {"MEMUNR", "DCGM_FI_DEV_MEMORY_UNREPAIRABLE"},
    {"GPURECOV", "DCGM_FI_DEV_GPU_RECOVERY_ACTION"},
};

std::string_view DcgmNameOf(std::string_view short_name) {
  for (const auto& [name, dcgm] : kColumns) {
    if (name == short_name) return dcgm;
  }
  return {};
}

// dmon prints a sample a row; a long run is bounded to its changes, and then to this many rows.
constexpr size_t kMaxRows = 1 << 16;

}  // namespace

DmonReader::DmonReader(std::string path, std::vector<GpuState>* out)
    : path_(std::move(path)), out_(out) {}

void DmonReader::Feed(std::string_view text, uint64_t line_number) {
  const std::string_view line = trim(text);
  if (line.starts_with("#Entity")) {
    TakeHeader(text);
    return;
  }
  if (columns_.empty()) return;
  if (line.starts_with("ID") || line.empty()) return;  // the units line, a blank
  if (!line.starts_with("GPU ")) {
    // Another entity's row ("SW 0", "CPU 1", "GPU 0 LINK 1" is caught below) or the end.
    const bool entity = line.starts_with("SW ") || line.starts_with("CPU") ||
                        line.starts_with("Switch") || line.starts_with("Link");
    if (!entity) columns_.clear();
    return;
  }
  TakeRow(text, line, line_number);
}

void DmonReader::TakeHeader(std::string_view line) {
  columns_.clear();
  const size_t first = line.find("#Entity") + 7;
  for (size_t at = line.find_first_not_of(" \t", first); at != std::string_view::npos;) {
    const size_t end = std::min(line.find_first_of(" \t", at), line.size());
    columns_.push_back({at, DcgmNameOf(line.substr(at, end - at))});
    at = line.find_first_not_of(" \t", end);
  }
}

void DmonReader::TakeRow(std::string_view text, std::string_view line, uint64_t line_number) {
  // "GPU 1      120": the entity's id, then the cells.
  size_t pos = 4;
  int id = -1;
  const auto [end, error] = std::from_chars(line.data() + pos, line.data() + line.size(), id);
  if (error != std::errc() || id < 0) return;
  pos = static_cast<size_t>(end - line.data());
  std::string_view rest = line.substr(pos);
  if (trim(rest).starts_with("LINK")) return;  // a link of the GPU, not the GPU
  // The cells as words; a row with a blank cell has fewer words than columns, and then the
  // header's positions tell the cells apart (dmon pads each to its column).
  std::vector<std::string_view> words;
  for (size_t at = rest.find_first_not_of(" \t"); at != std::string_view::npos;) {
    const size_t stop = std::min(rest.find_first_of(" \t", at), rest.size());
    words.push_back(rest.substr(at, stop - at));
    at = rest.find_first_not_of(" \t", stop);
  }
  std::vector<std::string_view> cells(columns_.size());
  if (words.size() == columns_.size()) {
    cells = words;
  } else {
    const auto offset = static_cast<size_t>(line.data() - text.data());
    for (size_t i = 0; i < columns_.size(); ++i) {
      const size_t at = columns_[i].at;
      if (at < offset || at - offset >= line.size()) continue;
      const size_t stop = i + 1 < columns_.size() ? columns_[i + 1].at - offset : line.size();
      cells[i] = trim(line.substr(at - offset, stop - (at - offset)));
    }
  }
  GpuState state;
  state.gpu.index = id;
  uint64_t digest = std::hash<int>{}(id);
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i].dcgm_name.empty() || cells[i].empty()) continue;
    if (auto stored = DcgmFieldValue(columns_[i].dcgm_name, cells[i])) {
      SetField(stored->first, stored->second, line_number, text, &state);
      digest = digest * 1000003 ^ std::hash<std::string_view>{}(stored->first);
      digest = digest * 1000003 ^ std::hash<std::string>{}(stored->second);
    }
  }
  if (state.fields.empty()) return;
  auto [last, added] = last_row_.emplace(id, digest);
  if (!added && last->second == digest) return;
  last->second = digest;
  if (rows_ == kMaxRows) return;
  ++rows_;
  state.source = Evidence{.path = path_,
                          .line = line_number,
                          .time = {},
                          .text = std::string(text),
                          .signature = "dcgmi-dmon"};
  out_->push_back(std::move(state));
}

}  // namespace faultline::state_internal
