#include "state/table.h"

#include <algorithm>
#include <array>
#include <utility>

#include "state/fields.h"

namespace faultline::state_internal {
namespace {

constexpr std::string_view kEccField = "ecc.errors.uncorrected.volatile.total";
constexpr std::string_view kErrField = "smi.err_readings";
// What nvidia-smi prints for a value NVML failed to read.
constexpr std::string_view kErr = "ERR!";

// The cells of a table row `| a | b | c |`; empty unless it has exactly three.
std::vector<std::string_view> Cells(std::string_view line) {
  if (line.size() < 2 || line.front() != '|' || line.back() != '|') return {};
  std::vector<std::string_view> cells;
  std::string_view inner = line.substr(1, line.size() - 2);
  while (cells.size() <= 3) {
    const size_t bar = std::min(inner.find('|'), inner.size());
    cells.push_back(inner.substr(0, bar));
    if (bar == inner.size()) break;
    inner.remove_prefix(bar + 1);
  }
  if (cells.size() != 3) cells.clear();
  return cells;
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

bool IsTableField(std::string_view field) {
  return field == kErrField;
}

bool TableReader::MayOpen(std::string_view line) {
  return line.starts_with('|');
}

TableReader::TableReader(std::string path, std::vector<GpuState>* out)
    : path_(std::move(path)), out_(out) {}

void TableReader::Feed(std::string_view text, uint64_t line_number) {
  const std::string_view line = trim(text);
  if (StartGpu(line, text, line_number)) return;
  if (!gpu_) return;
  if (!Cells(line).empty()) {
    CountErrors(line, text, line_number);
    return;
  }
  EndGpu();
}

// The first row of a GPU: its index and name, then its bus id. False for any other line.
bool TableReader::StartGpu(std::string_view line, std::string_view text, uint64_t line_number) {
  const std::vector<std::string_view> cells = Cells(line);
  if (cells.empty()) return false;
  const std::string_view first = trim(cells[0]);
  const std::string_view second = trim(cells[1]);
  const size_t digits =
      std::find_if(first.begin(), first.end(), [](char c) { return !IsDigit(c); }) - first.begin();
  if (digits == 0 || digits == first.size() || first[digits] != ' ') return false;
  const std::string_view bus_id = second.substr(0, second.find(' '));
  if (normalize_pci(bus_id).empty()) return false;
  EndGpu();
  gpu_ = GpuState{};
  gpu_->source = Evidence{.path = path_,
                          .line = line_number,
                          .time = {},
                          .text = std::string(text),
                          .signature = "nvidia-smi-table"};
  SetField("index", first.substr(0, digits), line_number, text, &*gpu_);
  SetField("pci.bus_id", bus_id, line_number, text, &*gpu_);
  // The name runs to the persistence mode (On, Off) or driver model (WDDM, TCC) column.
  std::string_view name = trim(first.substr(digits));
  const size_t last_space = name.rfind(' ');
  if (last_space != std::string_view::npos) name = trim(name.substr(0, last_space));
  if (!name.empty() && !name.ends_with("...")) SetField("name", name, line_number, text, &*gpu_);
  SetField(kEccField, trim(cells[2]), line_number, text, &*gpu_);
  CountErrors(line, text, line_number);
  return true;
}

void TableReader::CountErrors(std::string_view line, std::string_view text, uint64_t line_number) {
  size_t found = 0;
  for (size_t at = line.find(kErr); at != std::string_view::npos; at = line.find(kErr, at + 1)) {
    ++found;
  }
  if (found == 0) return;
  const auto it = gpu_->fields.find(std::string(kErrField));
  const size_t before = it == gpu_->fields.end() ? 0 : parse_number<size_t>(it->second).value_or(0);
  SetField(kErrField, std::to_string(before + found), line_number, text, &*gpu_);
}

void TableReader::EndGpu() {
  if (gpu_) out_->push_back(std::move(*gpu_));
  gpu_.reset();
}

}  // namespace faultline::state_internal
