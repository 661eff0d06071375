#include "state/dcgmi.h"

#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

namespace faultline::state_internal {
namespace {

using nlohmann::json;

// The DCGM_FR messages about GPU memory (docs/formats/nvidia.md 5.2, DCGM dcgmlib/dcgm_errors.h),
// as DCGM formats them, and what each says of the GPU it names: `field` takes `value`, or the
// number in placeholder `count_arg` when value is empty. `gpu_arg` is the placeholder of the GPU
// id.
struct Rule {
  std::string_view format;
  int gpu_arg;
  int count_arg;
  std::string_view field;
  std::string_view value;
};
constexpr Rule kRules[] = {
    // DCGM_FR_PENDING_ROW_REMAP, and its 2.4.x wording.
    {"GPU %u had memory errors and row remappings are pending", 1, 0, "remapped_rows.pending",
     "yes"},
    {"GPU %u has uncorrectable memory errors and row remappings are pending", 1, 0,
     "remapped_rows.pending", "yes"},
    // DCGM_FR_ROW_REMAP_FAILURE.
    {"GPU %u had uncorrectable memory errors and row remapping failed", 1, 0,
     "remapped_rows.failure", "yes"},
    // DCGM_FR_UNCORRECTABLE_ROW_REMAP: diag says so only when remaps are pending as well
    // (docs/formats/nvidia.md 2, DCGM nvvs/src/Software.cpp checkRowRemapping).
    {"GPU %u had uncorrectable memory errors and %u rows were remapped", 1, 2,
     "remapped_rows.uncorrectable", ""},
    {"GPU %u had uncorrectable memory errors and %u rows were remapped", 1, 0,
     "remapped_rows.pending", "yes"},
    // DCGM_FR_UNCORRECTABLE_ROW_REMAP_LIMIT.
    {"GPU %u exceeded uncorrectable row remap limit with %u remapped rows", 1, 2,
     "remapped_rows.uncorrectable", ""},
    // DCGM_FR_PENDING_PAGE_RETIREMENTS, DCGM_FR_DBE_PENDING_PAGE_RETIREMENTS.
    {"A pending retired page has been detected in GPU %u", 1, 0, "retired_pages.pending", "yes"},
    {"Pending page retirements together with a DBE were detected on GPU %u", 1, 0,
     "retired_pages.pending", "yes"},
    // DCGM_FR_RETIRED_PAGES_LIMIT: the count is DCGM's limit, a lower bound of sbe + dbe.
    {"%u or more retired pages have been detected in GPU %u", 2, 1, "dcgm.retired_pages_at_least",
     ""},
    // DCGM_FR_VOLATILE_DBE_DETECTED.
    {"Detected %d volatile double-bit ECC error(s) in GPU %u", 2, 1,
     "ecc.errors.uncorrected.volatile.total", ""},
    // DCGM_FR_SRAM_THRESHOLD.
    {"SRAM Threshold Count exceeded on GPU %d", 1, 0,
     "ecc.errors.uncorrected.aggregate.sram.thresholdExceeded", "yes"},
};

// What the diag boxes say of each test (docs/formats/bundles.md 3.1): how many each GPU failed,
// and how many failed with no GPU named.
constexpr std::string_view kFailedField = "dcgm.diag.failed";
constexpr std::string_view kFailedAllField = "dcgm.diag.failed_all";
constexpr std::string_view kFail = "Fail";
constexpr std::string_view kStatuses[] = {"Pass", "Fail", "Warn", "Skip"};

// Top keys of the documents this reader opens (docs/formats/bundles.md 3.2, 3.3); other JSON is
// skipped.
constexpr std::string_view kJsonMarkers[] = {"\"DCGM GPU Diagnostic\"", "\"DCGM Diagnostic\"",
                                             "\"Health Monitor Report\""};

// Bounds whatever the input: a message (several incidents joined), the GPUs of a report, the
// nesting a JSON walk follows, the GPU ids taken.
constexpr size_t kMaxMessage = 16 << 10;
constexpr size_t kMaxGpus = 1024;
constexpr int kMaxJsonDepth = 32;
constexpr int kMaxGpuId = 1 << 16;

std::string WithoutBlanks(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') out.push_back(c);
  }
  return out;
}

// A DCGM format as a regular expression over text without blanks: placeholders capture digits,
// the rest is literal; a closing period is optional.
std::string PatternOf(std::string_view format) {
  std::string pattern;
  std::string literal;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] == '%') {
      pattern += RE2::QuoteMeta(WithoutBlanks(literal));
      literal.clear();
      pattern += "(\\d+)";
      i = format.find_first_of("ud", i);  // %u, %d, %ld
      continue;
    }
    literal.push_back(format[i]);
  }
  return pattern + RE2::QuoteMeta(WithoutBlanks(literal));
}

struct CompiledRule {
  const Rule* rule;
  std::unique_ptr<RE2> regex;
};

const std::vector<CompiledRule>& CompiledRules() {
  static const std::vector<CompiledRule> rules = [] {
    std::vector<CompiledRule> compiled;
    RE2::Options options;
    options.set_log_errors(false);
    for (const Rule& rule : kRules) {
      compiled.push_back({&rule, std::make_unique<RE2>(PatternOf(rule.format), options)});
    }
    return compiled;
  }();
  return rules;
}

// Whether any rule matches a message without blanks.
bool Concerns(std::string_view message) {
  const re2::StringPiece text(message.data(), message.size());
  return std::any_of(
      CompiledRules().begin(), CompiledRules().end(),
      [&](const CompiledRule& compiled) { return RE2::PartialMatch(text, *compiled.regex); });
}

std::optional<int> ParseId(std::string_view digits) {
  int value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size() || value > kMaxGpuId) {
    return std::nullopt;
  }
  return value;
}

// A row of a dcgmi box: `| left | right |`. Sets *left and *right (the right cell runs to the
// last bar, so a bar inside a message stays in it); false for rules and one-cell rows.
bool SplitRow(std::string_view row, std::string_view* left, std::string_view* right) {
  const std::string_view inner = row.substr(1, row.size() - 2);
  const size_t bar = inner.find('|');
  if (bar == std::string_view::npos) return false;
  *left = trim(inner.substr(0, bar));
  *right = inner.substr(bar + 1);
  return true;
}

// The left cell of a message row: "Warning", "Info", "Error" (3.x), "Warning: GPU0" (4.x).
bool IsMessageName(std::string_view name) {
  for (std::string_view kind : {"Warning", "Info", "Error"}) {
    if (name.starts_with(kind) &&
        (name.size() == kind.size() || name.substr(kind.size()).starts_with(": "))) {
      return true;
    }
  }
  return false;
}

// The status a result cell starts with ("Fail - GPU: 1", "Fail"), taken off it; "" if none.
std::string_view TakeStatus(std::string_view* cell) {
  for (std::string_view status : kStatuses) {
    if (cell->starts_with(status)) {
      cell->remove_prefix(status.size());
      return status;
    }
  }
  return {};
}

// "0, 2, 3" -> the GPU ids; false, with *ids partly filled, if an item is none.
bool ParseIdList(std::string_view list, std::vector<int>* ids) {
  while (!list.empty()) {
    const size_t comma = std::min(list.find(','), list.size());
    const std::optional<int> id = ParseId(trim(list.substr(0, comma)));
    if (!id) return false;
    ids->push_back(*id);
    list.remove_prefix(std::min(comma + 1, list.size()));
  }
  return !ids->empty();
}

bool IsRow(std::string_view line) {
  return line.size() >= 2 && line.front() == '|' && line.back() == '|';
}

// `+----+----+`, `+====+`, `+-----  Hardware  ---+---+`.
bool IsRule(std::string_view line) {
  return line.size() >= 2 && line.front() == '+' && (line.back() == '+' || line.back() == '|');
}

// Updates the brace depth of a JSON document over `text`; strings may span no line, but the
// state is kept anyway.
void ScanBraces(std::string_view text, int* depth, bool* in_string, bool* escaped) {
  for (char c : text) {
    if (*in_string) {
      if (*escaped) {
        *escaped = false;
      } else if (c == '\\') {
        *escaped = true;
      } else if (c == '"') {
        *in_string = false;
      }
    } else if (c == '"') {
      *in_string = true;
    } else if (c == '{' || c == '[') {
      ++*depth;
    } else if (c == '}' || c == ']') {
      --*depth;
    }
  }
}

// Every message of a dcgmi JSON document: each string, and each "overflow" array (the health
// report's wrapped message) joined; `visit(message)` is called for each.
template <typename Visit>
void WalkJson(const json& node, std::string_view key, int depth, const Visit& visit) {
  if (depth > kMaxJsonDepth) return;
  if (node.is_string()) {
    visit(node.get_ref<const std::string&>());
  } else if (node.is_array()) {
    if (key == "overflow") {
      std::string joined;
      for (const json& piece : node) {
        if (piece.is_string()) joined += piece.get_ref<const std::string&>() + " ";
      }
      visit(joined);
      return;
    }
    for (const json& item : node) WalkJson(item, key, depth + 1, visit);
  } else if (node.is_object()) {
    for (const auto& [name, value] : node.items()) WalkJson(value, name, depth + 1, visit);
  }
}

}  // namespace

bool IsDcgmiField(std::string_view field) {
  return field == kFailedField || field == kFailedAllField ||
         std::any_of(std::begin(kRules), std::end(kRules),
                     [&](const Rule& rule) { return rule.field == field; });
}

// A JSON document or a row of a text box.
bool DcgmiReader::MayOpen(std::string_view line) {
  return line.starts_with('{') || IsRow(line);
}

DcgmiReader::DcgmiReader(std::string path, std::vector<GpuState>* out)
    : path_(std::move(path)), out_(out), json_(kMaxJsonBytes, kMaxJsonLines) {}

void DcgmiReader::Feed(std::string_view text, uint64_t line_number) {
  const std::string_view line = trim(text);
  // A box ends a JSON document that never closed.
  if (!json_.empty() && (IsRow(line) || IsRule(line))) EndJson();
  if (!json_.empty() || line.starts_with('{')) {
    FeedJson(text, line_number);
    return;
  }
  if (IsRow(line)) {
    TakeRow(line, text, line_number);
  } else if (IsRule(line)) {
    EndMessage();
    EndTest();
  } else {
    EndMessage();
    EndReport();
  }
}

void DcgmiReader::Finish() {
  EndJson();
  EndMessage();
  EndReport();
}

// A row with a name starts a message; a row with an empty name cell continues the last one.
void DcgmiReader::TakeRow(std::string_view row, std::string_view text, uint64_t line_number) {
  std::string_view left;
  std::string_view right;
  if (!SplitRow(row, &left, &right)) {
    EndMessage();
    return;
  }
  if (!IsMessageName(left)) TakeResult(left, trim(right), text, line_number);
  if (!left.empty() || !message_) {
    EndMessage();
    message_ = Message();
    message_->line_number = line_number;
    message_->line = std::string(text);
  }
  if (message_->text.size() < kMaxMessage) message_->text += WithoutBlanks(right);
}

// A test's result cell: 3.x `Fail - All`, `Fail - GPU: 1`, `Pass - GPUs: 0, 2, 3` (the last
// two on rows of their own); 4.x `Fail` on the test's row, then a `GPU0: Fail` row per GPU.
void DcgmiReader::TakeResult(std::string_view name, std::string_view result, std::string_view text,
                             uint64_t line_number) {
  if (!name.empty()) EndTest();
  std::string_view rest = result;
  if (name.empty() && rest.starts_with("GPU")) {
    rest.remove_prefix(3);
    const size_t colon = rest.find(": ");
    const std::optional<int> id =
        colon == std::string_view::npos ? std::nullopt : ParseId(rest.substr(0, colon));
    if (!id || rest.substr(colon + 2) != kFail) return;
    CountFailure(kFailedField, id, text, line_number);
    if (failed_test_) failed_test_->gpu_failed = true;
    return;
  }
  const std::string_view status = TakeStatus(&rest);
  if (status.empty()) return;
  if (rest.empty()) {
    if (!name.empty() && status == kFail) {
      failed_test_ = FailedTest{.line_number = line_number, .line = std::string(text)};
    }
    return;
  }
  if (status != kFail || !rest.starts_with(" - ")) return;
  rest.remove_prefix(3);
  if (rest == "All") {
    CountFailure(kFailedAllField, std::nullopt, text, line_number);
    return;
  }
  for (std::string_view head : {"GPU: ", "GPUs: "}) {
    std::vector<int> ids;
    if (rest.starts_with(head) && ParseIdList(rest.substr(head.size()), &ids)) {
      for (int id : ids) CountFailure(kFailedField, id, text, line_number);
      return;
    }
  }
}

void DcgmiReader::CountFailure(std::string_view field, std::optional<int> index,
                               std::string_view text, uint64_t line_number) {
  Gpu* gpu = GpuOf(index, line_number, text);
  if (!gpu) return;
  const auto it = gpu->state.fields.find(std::string(field));
  const int failed = it == gpu->state.fields.end() ? 0 : parse_number<int>(it->second).value_or(0);
  SetField(field, std::to_string(failed + 1), line_number, text, &gpu->state);
}

// A 4.x test that failed without a failing GPU row failed as a whole.
void DcgmiReader::EndTest() {
  if (failed_test_ && !failed_test_->gpu_failed) {
    CountFailure(kFailedAllField, std::nullopt, failed_test_->line, failed_test_->line_number);
  }
  failed_test_.reset();
}

void DcgmiReader::EndMessage() {
  if (!message_) return;
  Read(message_->text, message_->line_number, message_->line);
  message_.reset();
}

// Applies every rule to a message without blanks, as often as it matches.
void DcgmiReader::Read(std::string_view message, uint64_t line_number, std::string_view line) {
  for (const CompiledRule& compiled : CompiledRules()) {
    const Rule& rule = *compiled.rule;
    re2::StringPiece groups[3];
    size_t start = 0;
    while (start < message.size() &&
           compiled.regex->Match(re2::StringPiece(message.data(), message.size()), start,
                                 message.size(), RE2::UNANCHORED, groups, 3)) {
      start = static_cast<size_t>(groups[0].data() - message.data()) + groups[0].size();
      const re2::StringPiece id = groups[rule.gpu_arg];
      const std::optional<int> index = ParseId(std::string_view(id.data(), id.size()));
      if (!index) continue;
      Gpu* gpu = GpuOf(index, line_number, line);
      if (!gpu) continue;
      const re2::StringPiece count = groups[rule.count_arg];
      const std::string_view value =
          rule.value.empty() ? std::string_view(count.data(), count.size()) : rule.value;
      SetFlagOnce(rule.field, value, line_number, line, &gpu->state);
    }
  }
}

DcgmiReader::Gpu* DcgmiReader::GpuOf(std::optional<int> index, uint64_t line_number,
                                     std::string_view line) {
  auto gpu = std::find_if(gpus_.begin(), gpus_.end(),
                          [&](const Gpu& known) { return known.index == index; });
  if (gpu != gpus_.end()) return &*gpu;
  if (gpus_.size() == kMaxGpus) return nullptr;
  Gpu& added = gpus_.emplace_back(Gpu{.index = index, .state = {}});
  added.state.gpu.index = index;
  added.state.source = Evidence{.path = path_,
                                .line = line_number,
                                .time = {},
                                .text = std::string(line),
                                .signature = "dcgmi"};
  return &added;
}

void DcgmiReader::EndReport() {
  EndTest();
  for (Gpu& gpu : gpus_) out_->push_back(std::move(gpu.state));
  gpus_.clear();
}

// Keeps the lines of a JSON document until its braces balance, then reads it if it is dcgmi's.
void DcgmiReader::FeedJson(std::string_view text, uint64_t line_number) {
  if (json_.empty()) {
    EndMessage();
    EndReport();
    json_depth_ = 0;
    json_in_string_ = false;
    json_escaped_ = false;
  }
  if (!json_.Append(text, line_number)) {
    json_.Clear();  // past the caps: dropped
    return;
  }
  ScanBraces(text, &json_depth_, &json_in_string_, &json_escaped_);
  if (json_depth_ <= 0) EndJson();
}

void DcgmiReader::EndJson() {
  if (json_.empty()) return;
  const std::string& text = json_.text();
  const bool dcgmi =
      std::any_of(std::begin(kJsonMarkers), std::end(kJsonMarkers),
                  [&](std::string_view marker) { return text.find(marker) != std::string::npos; });
  if (dcgmi) {
    const json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!document.is_discarded()) {
      WalkJson(document, "", 0, [&](const std::string& message) {
        const std::string bare = WithoutBlanks(message);
        if (!Concerns(bare)) return;
        // The line that printed the message, where its opening words are found as printed.
        const size_t at = text.find(message.substr(0, std::min<size_t>(message.size(), 32)));
        const auto [number, line] =
            json_.LineAt(at == std::string::npos ? 0 : static_cast<std::ptrdiff_t>(at));
        Read(bare, number, line);
      });
    }
  }
  json_.Clear();
  EndReport();
}

}  // namespace faultline::state_internal
