// The `nvidia-smi -q` text reader behind StateReader.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace faultline::state_internal {

// Whether `nvidia-smi -q` prints `field` (a query name such as "remapped_rows.pending").
bool IsQueryTextField(std::string_view field);

// Reads `nvidia-smi -q [-d ...]` output: one GpuState per `GPU dddddddd:bb:dd.f` block, or
// per header-less excerpt of the state sections. Nesting is read from the indentation, four
// spaces a level, counted from the block's own header so that an indented paste reads alike.
class QueryTextReader {
 public:
  // Appends each finished snapshot to *out.
  QueryTextReader(std::string path, std::vector<GpuState>* out);

  void Feed(std::string_view text, uint64_t line_number);
  // Ends the input: the open block, if any, is finished.
  void Finish();

  // Whether no dump is open, so that Feed does nothing with a line MayOpen turns down.
  bool idle() const { return !block_ && !dump_time_.known(); }
  // Whether `line` (trimmed) may open a dump of this shape: a cheap look, true for every line
  // that does.
  static bool MayOpen(std::string_view line);

 private:
  struct Block {
    GpuState state;
    int base_indent = 0;  // the indentation of the GPU line, one level above its contents
    bool headerless = false;
    std::vector<std::string> sections;  // the lowercase section names above the current line
  };

  bool TakeBlockLine(std::string_view text, uint64_t line_number);
  void TakeOuterLine(std::string_view text, uint64_t line_number);
  void StartBlock(std::string_view text, uint64_t line_number, int base_indent);
  void EndBlock();

  std::string path_;
  std::vector<GpuState>* out_;
  Timestamp dump_time_;
  std::optional<Block> block_;
};

}  // namespace faultline::state_internal
