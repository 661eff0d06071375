#include "state/csv.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "state/fields.h"

namespace faultline::state_internal {
namespace {

// One cell a line cannot be told from prose, so a block needs two columns at least; the cap
// only bounds the work a hostile line can cause (nvidia-smi knows about 200 fields).
constexpr size_t kMinColumns = 2;
constexpr size_t kMaxColumns = 512;

size_t CountCells(std::string_view line) {
  return static_cast<size_t>(std::count(line.begin(), line.end(), ',')) + 1;
}

// Cells split on ',' with the blanks around them dropped: real output separates them with
// ", ", some mocks with a bare ",".
std::vector<std::string_view> SplitCells(std::string_view line) {
  std::vector<std::string_view> cells;
  size_t start = 0;
  for (size_t comma = line.find(','); comma != std::string_view::npos;
       comma = line.find(',', start)) {
    cells.push_back(trim(line.substr(start, comma - start)));
    start = comma + 1;
  }
  cells.push_back(trim(line.substr(start)));
  return cells;
}

// "memory.used [MiB]" -> "memory.used"; "" if the cell is no query field name.
std::string_view FieldName(std::string_view cell) {
  if (const size_t unit = cell.find(" ["); unit != std::string_view::npos && cell.ends_with(']')) {
    cell = cell.substr(0, unit);
  }
  const auto is_name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_';
  };
  if (cell.empty() || cell.front() < 'a' || cell.front() > 'z' ||
      !std::all_of(cell.begin(), cell.end(), is_name_char)) {
    return {};
  }
  return cell;
}

// The field names of `cells`, or nullopt if one is none.
std::optional<std::vector<std::string>> FieldNames(std::string_view cells) {
  const size_t count = CountCells(cells);
  if (count < kMinColumns || count > kMaxColumns) return std::nullopt;
  std::vector<std::string> names;
  for (std::string_view cell : SplitCells(cells)) {
    const std::string_view name = FieldName(cell);
    if (name.empty()) return std::nullopt;
    names.emplace_back(name);
  }
  return names;
}

// A header line: field names only, one of them a GPU field no prose would contain.
std::optional<std::vector<std::string>> HeaderColumns(std::string_view line) {
  if (line.empty() || line.front() < 'a' || line.front() > 'z') return std::nullopt;
  std::optional<std::vector<std::string>> names = FieldNames(line);
  if (names && std::none_of(names->begin(), names->end(), IsDistinctiveField)) {
    return std::nullopt;
  }
  return names;
}

// The value of the first option that starts with `prefix` ("--format=csv,noheader" gives
// "csv,noheader"), without the quotes a shell may need; nullopt if there is none.
std::optional<std::string_view> OptionValue(std::string_view line, std::string_view prefix) {
  const size_t start = line.find(prefix);
  if (start == std::string_view::npos) return std::nullopt;
  std::string_view option = line.substr(start);
  option = option.substr(0, option.find_first_of(" \t"));
  const size_t equals = option.find('=');
  if (equals == std::string_view::npos) return std::nullopt;
  std::string_view value = option.substr(equals + 1);
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front()) {
    value = value.substr(1, value.size() - 2);
  }
  return value;
}

bool NamesNvidiaSmi(std::string_view line) {
  // Most lines of every input come here. 'v' is the rarest byte of the name in logs, so a
  // memchr for it stops far less often than string_view::find (at each 'n') or memmem.
  constexpr std::string_view kCommand = "nvidia-smi";
  constexpr size_t kRare = kCommand.find('v');
  for (size_t at = kRare; at + kCommand.size() - kRare <= line.size(); ++at) {
    const void* found = std::memchr(line.data() + at, 'v', line.size() - at);
    if (found == nullptr) return false;
    at = static_cast<size_t>(static_cast<const char*>(found) - line.data());
    if (at >= kRare && line.substr(at - kRare).starts_with(kCommand)) return true;
  }
  return false;
}

// The fields a pasted `nvidia-smi --query-...=FIELDS --format=csv,noheader` command asks for:
// its output has no header to name them.
std::optional<std::vector<std::string>> CommandColumns(std::string_view line) {
  if (!NamesNvidiaSmi(line)) return std::nullopt;
  const std::optional<std::string_view> query = OptionValue(line, "--query-");
  const std::optional<std::string_view> format = OptionValue(line, "--format=");
  if (!query || !format || format->find("csv") == std::string_view::npos ||
      format->find("noheader") == std::string_view::npos) {
    return std::nullopt;
  }
  return FieldNames(*query);
}

}  // namespace

// A header starts with a field name; a command line names nvidia-smi.
bool CsvQueryReader::MayOpen(std::string_view line) {
  return (!line.empty() && line.front() >= 'a' && line.front() <= 'z') || NamesNvidiaSmi(line);
}

CsvQueryReader::CsvQueryReader(std::string path, std::vector<GpuState>* out)
    : path_(std::move(path)), out_(out) {}

void CsvQueryReader::Feed(std::string_view text, uint64_t line_number) {
  const std::string_view line = trim(text);
  // Values are never distinctive field names, so a header is told from a row first.
  if (std::optional<std::vector<std::string>> header = HeaderColumns(line)) {
    columns_ = std::move(*header);
    return;
  }
  if (!columns_.empty() && TakeRow(line, text, line_number)) return;
  columns_.clear();
  if (std::optional<std::vector<std::string>> command = CommandColumns(line)) {
    columns_ = std::move(*command);
  }
}

// Reads a data row of the open block; false if the line is none.
bool CsvQueryReader::TakeRow(std::string_view cells, std::string_view text, uint64_t line_number) {
  if (CountCells(cells) != columns_.size()) return false;
  const std::vector<std::string_view> values = SplitCells(cells);
  GpuState state;
  for (size_t i = 0; i < values.size(); ++i) {
    if (SetField(columns_[i], values[i], line_number, text, &state) == ValueStatus::kMalformed) {
      return false;
    }
  }
  state.source = Evidence{.path = path_,
                          .line = line_number,
                          .time = state.time,
                          .text = std::string(text),
                          .signature = "nvidia-smi-csv"};
  out_->push_back(std::move(state));
  return true;
}

}  // namespace faultline::state_internal
