// The dcgmi (health, diag) reader behind StateReader.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"
#include "state/fields.h"

namespace faultline::state_internal {

// Whether the dcgmi reader stores `field` (a query name, or "dcgm.retired_pages_at_least").
bool IsDcgmiField(std::string_view field);

// Reads the memory verdicts of `dcgmi health -c` and `dcgmi diag -r N`, as text boxes or as
// JSON (-j): each DCGM_FR message about remapped rows, retired pages or double-bit errors
// (docs/formats/nvidia.md 5.2) sets a field of the GPU it names. The diag boxes' results
// (docs/formats/bundles.md 3.1) count the tests each GPU failed ("dcgm.diag.failed"), and those
// that failed with no GPU named ("Fail - All", or a 4.x test without a failing GPU row:
// "dcgm.diag.failed_all", on a GPU of no id). One GpuState per GPU per report, known by
// DCGM's GPU id alone (gpu.index; no bus id, no time).
class DcgmiReader {
 public:
  // A dcgmi -j document of 8 GPUs is some 100 kB.
  static constexpr size_t kMaxJsonBytes = 4 << 20;
  static constexpr size_t kMaxJsonLines = 1 << 16;

  // Appends each report's snapshots to *out.
  DcgmiReader(std::string path, std::vector<GpuState>* out);

  void Feed(std::string_view text, uint64_t line_number);
  // Ends the input: the open report, if any, is finished.
  void Finish();

  // Whether no dump is open, so that Feed does nothing with a line MayOpen turns down.
  bool idle() const { return json_.empty() && !message_ && !failed_test_ && gpus_.empty(); }
  // Whether `line` (trimmed) may open a dump of this shape: a cheap look, true for every line
  // that does.
  static bool MayOpen(std::string_view line);

 private:
  // A message of the text boxes: the right cells of a row and of the rows that continue it.
  struct Message {
    std::string text;  // without blanks: the boxes cut words (diag) or wrap them (health)
    uint64_t line_number = 0;
    std::string line;  // the row it began on
  };
  struct Gpu {
    std::optional<int> index;  // none for the failures of a test on every GPU
    GpuState state;
  };

  void TakeRow(std::string_view row, std::string_view text, uint64_t line_number);
  void TakeResult(std::string_view name, std::string_view result, std::string_view text,
                  uint64_t line_number);
  void CountFailure(std::string_view field, std::optional<int> index, std::string_view text,
                    uint64_t line_number);
  void EndTest();
  void EndMessage();
  void Read(std::string_view message, uint64_t line_number, std::string_view line);
  // The open report's GPU with `index`, added if new; null past kMaxGpus.
  Gpu* GpuOf(std::optional<int> index, uint64_t line_number, std::string_view line);
  void EndReport();

  void FeedJson(std::string_view text, uint64_t line_number);
  void EndJson();

  std::string path_;
  std::vector<GpuState>* out_;
  std::vector<Gpu> gpus_;  // the open report's GPUs, in order of first mention
  std::optional<Message> message_;
  // A 4.x test row that said Fail, kept until its GPU rows show whether any GPU failed it.
  struct FailedTest {
    uint64_t line_number = 0;
    std::string line;
    bool gpu_failed = false;
  };
  std::optional<FailedTest> failed_test_;
  // A JSON document being kept: open while braces are unbalanced.
  LineBuffer json_;
  int json_depth_ = 0;
  bool json_in_string_ = false;
  bool json_escaped_ = false;
};

}  // namespace faultline::state_internal
