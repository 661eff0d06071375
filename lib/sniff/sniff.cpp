#include "sniff/sniff.h"

#include <algorithm>
#include <cctype>

namespace faultline {
namespace {

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// "[  219.470994] ", the raw dmesg stamp, or "[  +0.000844] ", dmesg -H's time since the line
// before.
bool has_dmesg_stamp(std::string_view line) {
  if (line.size() < 4 || line[0] != '[') return false;
  const size_t close = line.find(']');
  if (close == std::string_view::npos || close > 20) return false;
  std::string_view inside = line.substr(1, close - 1);
  if (const size_t plus = inside.find('+'); plus != std::string_view::npos) {
    if (inside.find_first_not_of(' ') != plus) return false;
    inside.remove_prefix(plus + 1);
  }
  return inside.find('.') != std::string_view::npos &&
         std::all_of(inside.begin(), inside.end(),
                     [](char c) { return c == ' ' || c == '.' || is_digit(c); });
}

// "6,3964,206764307,-;", a raw /dev/kmsg record's header.
bool has_kmsg_header(std::string_view line) {
  const size_t semicolon = line.substr(0, 48).find(';');
  if (semicolon == std::string_view::npos || semicolon == 0) return false;
  const std::string_view header = line.substr(0, semicolon);
  return is_digit(header[0]) && std::count(header.begin(), header.end(), ',') >= 3 &&
         header.find(' ') == std::string_view::npos;
}

// A markdown quote ("> ", "> > "): an issue or mail that quotes the log it pastes.
std::string_view unquoted(std::string_view line) {
  while (line.starts_with("> ")) line.remove_prefix(2);
  return line;
}

bool looks_kernel(std::string_view line) {
  if (has_dmesg_stamp(unquoted(line)) || has_kmsg_header(line)) return true;
  // journalctl -o json: a record the kernel wrote.
  if (line.starts_with('{') && line.find(R"("_TRANSPORT" : "kernel")") != std::string_view::npos) {
    return true;
  }
  const std::string_view head = line.substr(0, 80);
  return head.find(" kernel: ") != std::string_view::npos ||
         head.find("NVRM: ") != std::string_view::npos;
}

bool looks_nvidia_smi(std::string_view line) {
  if (line.starts_with("==============NVSMI LOG")) return true;
  if (line.starts_with("GPU 0000")) return true;
  // What nvidia-smi prints instead of a GPU it cannot open.
  if (line.starts_with("Unable to determine the device handle for GPU")) return true;
  // "    Product Name                          : A100-SXM4-40GB"
  return line.starts_with("    ") && line.find(" : ") != std::string_view::npos &&
         line.find("  : ") != std::string_view::npos;
}

bool looks_training(std::string_view line) {
  const std::string_view head = line.substr(0, 120);
  // A launcher's stream tag (Open MPI --tag-output, horovodrun: "[1,3]<stdout>:", "[0]<stderr>:").
  for (std::string_view marker :
       {"[rank", "[default", "NCCL INFO", "NCCL WARN", "Traceback (", "torch.distributed",
        "iteration ", "'loss': ", "Error: ", "]<stdout>:", "]<stderr>:"}) {
    if (head.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

void KindSniffer::Observe(std::string_view line, bool in_device_dump) {
  // The first lines decide; after them the vote no longer changes enough to pay for.
  if (observed_++ >= kDecidingLines) return;
  if (!in_device_dump && looks_kernel(line)) {
    ++votes_[kKernel];
  } else if (in_device_dump || looks_nvidia_smi(line)) {
    ++votes_[kNvidiaSmi];
  } else if (looks_training(line)) {
    ++votes_[kTraining];
  }
}

InputKind KindSniffer::kind() const {
  constexpr std::array<InputKind, kKinds> kNames = {InputKind::kKernelLog, InputKind::kNvidiaSmi,
                                                    InputKind::kTrainingLog};
  uint64_t total = 0;
  for (uint64_t v : votes_) total += v;
  if (total == 0) return InputKind::kText;
  int strong = 0;
  size_t best = 0;
  for (size_t i = 0; i < kKinds; ++i) {
    if (votes_[i] * 5 >= total) ++strong;  // a fifth of the recognised lines
    if (votes_[i] > votes_[best]) best = i;
  }
  return strong > 1 ? InputKind::kMixed : kNames[best];
}

}  // namespace faultline
