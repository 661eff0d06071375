#include "state/nvlink.h"

#include <algorithm>
#include <utility>

#include "state/fields.h"

namespace faultline::state_internal {
namespace {

constexpr std::string_view kFieldPrefix = "nvlink.errors.";
constexpr std::string_view kTotalField = "nvlink.errors.total";

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
    state->gpu.uuid =
        std::string(trim(rest.substr(open + kUuid.size(), rest.size() - 1 - open - kUuid.size())));
    rest = trim(rest.substr(0, open));
  }
  state->gpu.index = index;
  state->gpu.product = std::string(rest);
  return true;
}

}  // namespace

bool IsNvlinkField(std::string_view field) {
  return field == "nvlink.errors.replay" || field == "nvlink.errors.recovery" ||
         field == "nvlink.errors.crc" || field == kTotalField;
}

bool NvlinkReader::MayOpen(std::string_view line) {
  return line.starts_with("GPU ") || line.starts_with("Link ");
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

// "Link 17: CRC Errors: 0": adds the count to the GPU's sum of that counter; false for any
// other line ("Link 0: 26.562 GB/s" is `nvlink --status`).
bool NvlinkReader::TakeLink(std::string_view line, std::string_view text, uint64_t line_number) {
  std::string_view rest = line.substr(5);
  const size_t colon = rest.find(": ");
  if (colon == std::string_view::npos || !IsDigits(rest.substr(0, colon))) return false;
  rest = rest.substr(colon + 2);
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
