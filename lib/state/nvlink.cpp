#include "state/nvlink.h"

#include <algorithm>
#include <utility>

#include "state/fields.h"

namespace faultline::state_internal {
namespace {

constexpr std::string_view kFieldPrefix = "nvlink.errors.";
constexpr std::string_view kTotalField = "nvlink.errors.total";
// `nvidia-smi nvlink --status`: links with a speed, and links "<inactive>".
constexpr std::string_view kActiveField = "nvlink.links.active";
constexpr std::string_view kInactiveField = "nvlink.links.inactive";
// `dcgmi nvlink --link-status`: links Up ("U") and Down ("D").
constexpr std::string_view kUpField = "nvlink.links.up";
constexpr std::string_view kDownField = "nvlink.links.down";

// Counters past this are corrupt readings rather than counts: the sum stays far from overflow.
constexpr uint64_t kMaxCount = uint64_t{1} << 48;

bool IsDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-abcdefab-...)", the UUID absent on some systems:
// sets the index, product and UUID; false for any other line.
bool ParseGpuLine(std::string_view line, GpuState* state) {
  if (!line.starts_with("GPU ")) return false;
  std::string_view rest = line.substr(4);
  const size_t colon = rest.find(": ");
  if (colon == std::string_view::npos || !IsDigits(rest.substr(0, colon))) return false;
  const std::optional<int> index = parse_number<int>(rest.substr(0, colon));
  if (!index) return false;
  rest = trim(rest.substr(colon + 2));
  if (rest.empty()) return false;
  constexpr std::string_view kUuid = " (UUID: ";
  if (const size_t open = rest.find(kUuid); open != std::string_view::npos && rest.ends_with(')')) {
    const std::string_view uuid =
        trim(rest.substr(open + kUuid.size(), rest.size() - 1 - open - kUuid.size()));
    // A UUID the poster masked ("UUID: ...") names no GPU.
    if (uuid.starts_with("GPU-")) state->gpu.uuid = std::string(uuid);
    rest = trim(rest.substr(0, open));
  }
  state->gpu.index = index;
  state->gpu.product = std::string(rest);
  return true;
}

// "gpuId 3:" of `dcgmi nvlink --link-status`: the GPU's DCGM id; nullopt for any other line.
std::optional<int> ParseGpuIdLine(std::string_view line) {
  if (!line.starts_with("gpuId ") || !line.ends_with(':')) return std::nullopt;
  const std::string_view id = line.substr(6, line.size() - 7);
  return IsDigits(id) ? parse_number<int>(id) : std::nullopt;
}

// The row of link states under it, "U U D X _ ...": the counts of Up and Down links; nullopt
// unless every token is one of DCGM's key letters (Up=U, Down=D, Disabled=X, Not Supported=_).
std::optional<std::pair<uint64_t, uint64_t>> ParseLinkStates(std::string_view line) {
  uint64_t up = 0, down = 0, tokens = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t') continue;
    if ((c != 'U' && c != 'D' && c != 'X' && c != '_') ||
        (i + 1 < line.size() && line[i + 1] != ' ' && line[i + 1] != '\t')) {
      return std::nullopt;
    }
    ++tokens;
    up += c == 'U';
    down += c == 'D';
  }
  if (tokens == 0) return std::nullopt;
  return std::pair{up, down};
}

}  // namespace

bool IsNvlinkField(std::string_view field) {
  return field == "nvlink.errors.replay" || field == "nvlink.errors.recovery" ||
         field == "nvlink.errors.crc" || field == kTotalField || field == kActiveField ||
         field == kInactiveField || field == kUpField || field == kDownField;
}

bool NvlinkReader::MayOpen(std::string_view line) {
  return line.starts_with("GPU ") || line.starts_with("Link ") || line.starts_with("gpuId ");
}

NvlinkReader::NvlinkReader(std::string path, std::vector<GpuState>* out)
    : path_(std::move(path)), out_(out) {}

void NvlinkReader::Feed(std::string_view text, uint64_t line_number) {
  const std::string_view line = trim(text);
  // Blank lines separate the links of a GPU.
  if (line.empty() && block_) return;
  GpuState header;
  if (ParseGpuLine(line, &header)) {
    EndBlock();
    StartBlock(text, line_number);
    block_->gpu = std::move(header.gpu);
    return;
  }
  if (const std::optional<int> id = ParseGpuIdLine(line)) {
    EndBlock();
    StartBlock(text, line_number);
    block_->source.signature = "dcgmi-nvlink-link-status";
    block_->gpu.index = id;
    return;
  }
  if (block_ && block_->source.signature.str() == "dcgmi-nvlink-link-status" && !has_links_) {
    if (const auto states = ParseLinkStates(line)) {
      SetField(kUpField, std::to_string(states->first), line_number, text, &*block_);
      SetField(kDownField, std::to_string(states->second), line_number, text, &*block_);
      has_links_ = true;
      return;
    }
  }
  if (line.starts_with("Link ")) {
    if (!block_) StartBlock(text, line_number);
    has_link_lines_ = true;
    if (TakeLink(line, text, line_number)) return;
  }
  EndBlock();
}

void NvlinkReader::StartBlock(std::string_view text, uint64_t line_number) {
  block_ = GpuState{};
  block_->source = Evidence{.path = path_,
                            .line = line_number,
                            .time = {},
                            .text = std::string(text),
                            .signature = "nvidia-smi-nvlink"};
  has_links_ = false;
  has_link_lines_ = false;
}

// "Link 17: CRC Errors: 0": adds the count to the GPU's sum of that counter. "Link 0: 26.562
// GB/s" and "Link 3: <inactive>" (`nvlink --status`) count the GPU's active and inactive links.
// False for any other line.
bool NvlinkReader::TakeLink(std::string_view line, std::string_view text, uint64_t line_number) {
  std::string_view rest = line.substr(5);
  const size_t colon = rest.find(": ");
  if (colon == std::string_view::npos || !IsDigits(rest.substr(0, colon))) return false;
  rest = trim(rest.substr(colon + 2));
  const bool inactive = rest == "<inactive>";
  if (inactive || (rest.ends_with(" GB/s") &&
                   parse_number<double>(trim(rest.substr(0, rest.size() - 5))).has_value())) {
    const std::string_view name = inactive ? kInactiveField : kActiveField;
    const auto it = block_->fields.find(std::string(name));
    const uint64_t count =
        (it == block_->fields.end() ? 0 : parse_number<uint64_t>(it->second).value_or(0)) + 1;
    // The line kept for a count is its first link (a placeholder 0 set by the other count is
    // replaced).
    if (it == block_->fields.end() || count == 1) {
      SetField(name, std::to_string(count), line_number, text, &*block_);
      // Each count is shown, so that the other reads 0 rather than unknown.
      const std::string_view other = inactive ? kActiveField : kInactiveField;
      if (!block_->fields.contains(std::string(other)))
        SetField(other, "0", line_number, text, &*block_);
    } else {
      it->second = std::to_string(count);
    }
    has_links_ = true;
    return true;
  }
  constexpr std::string_view kErrors = " Errors: ";
  const size_t errors = rest.find(kErrors);
  if (errors == std::string_view::npos) return false;
  const std::string field = std::string(kFieldPrefix) + ascii_lower(rest.substr(0, errors));
  const std::optional<uint64_t> count =
      parse_number<uint64_t>(rest.substr(errors + kErrors.size()));
  if (!IsNvlinkField(field) || !count || *count > kMaxCount) return false;
  has_links_ = true;
  for (const std::string& name : {field, std::string(kTotalField)}) {
    const auto it = block_->fields.find(name);
    const uint64_t sum =
        (it == block_->fields.end() ? 0 : parse_number<uint64_t>(it->second).value_or(0)) + *count;
    // The line kept for a sum is the last link that added to it, else its first link.
    if (it == block_->fields.end() || *count > 0) {
      SetField(name, std::to_string(sum), line_number, text, &*block_);
    } else {
      it->second = std::to_string(sum);
    }
  }
  return true;
}

void NvlinkReader::EndBlock() {
  // A GPU line with its UUID and no link lines is a line of `nvidia-smi -L`: the GPU is listed.
  if (block_ && !has_link_lines_ && block_->gpu.uuid.starts_with("GPU-")) {
    block_->source.signature = "nvidia-smi-L";
    has_links_ = true;
  }
  if (block_ && has_links_) out_->push_back(std::move(*block_));
  block_.reset();
  has_links_ = false;
  has_link_lines_ = false;
}

}  // namespace faultline::state_internal
