// What the state readers share: query field names, value normalisation, dump times.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/model.h"
#include "model/text.h"

namespace faultline::state_internal {

// What became of one printed value.
enum class ValueStatus {
  kSet,          // the field, or the GPU's identity, now holds it
  kUnavailable,  // N/A, Not Supported, Unknown Error, empty, or a number out of range: absent
  kMalformed,    // not a value of that field at all: the line is likely no dump line
};

// Stores the printed value `raw` of query field `field` ("remapped_rows.pending") in *state,
// normalised as model.h says, and notes in state->field_lines that `line` (number
// `line_number`) printed it. Identity fields (name, serial, uuid, gpu_uuid, index,
// pci.bus_id, gpu_bus_id) fill state->gpu; "minor_number" fills both; "timestamp" (the CSV
// column) sets state->time. Aliases take their short name (retired_pages.sbe).
ValueStatus SetField(std::string_view field, std::string_view raw, uint64_t line_number,
                     std::string_view line, GpuState* state);

// Whether `field` is a query name worth recognising a CSV header by: a GPU state field or a
// GPU identity, other than the plain words ("index", "name") that prose is full of.
bool IsDistinctiveField(std::string_view field);

// The "Timestamp" of an nvidia-smi -q header ("Mon Oct 25 22:06:14 2021"). nvidia-smi names
// no zone, so the wall clock is read as if UTC and the offset is left unset. Unknown if the
// text is not such a time.
Timestamp ParseDumpTime(std::string_view text);

// Whether `field` is `pattern`, where a "*" in the pattern stands for the "volatile" or the
// "aggregate" counter set ("ecc.errors.corrected.*.sram").
bool MatchesCounterSet(std::string_view pattern, std::string_view field);
// `pattern` with its "*" replaced by `counter_set`; unchanged if it has none.
std::string WithCounterSet(std::string_view pattern, std::string_view counter_set);

// Stores a value as SetField does, unless *state already holds "yes" for the field: where two
// elements or messages feed one flag (pending_blacklist and pending_retirement), either being
// set sets it.
ValueStatus SetFlagOnce(std::string_view field, std::string_view raw, uint64_t line_number,
                        std::string_view line, GpuState* state);

// The lines of one document that a parser needs whole (XML, JSON), with the input line each
// came from, so that a byte offset into the text maps back to a line. Bounded: Append refuses
// the line that would pass either cap.
class LineBuffer {
 public:
  LineBuffer(size_t max_bytes, size_t max_lines) : max_bytes_(max_bytes), max_lines_(max_lines) {}

  // Appends `text` and a newline; false, keeping nothing of it, if a cap would be passed.
  bool Append(std::string_view text, uint64_t line_number);
  // Forgets everything, and gives back the memory of a large document.
  void Clear();

  bool empty() const { return starts_.empty(); }
  const std::string& text() const { return text_; }
  // The number and text (without its newline) of the line holding byte `offset` of text();
  // the first line if the offset is outside the text. {0, ""} when empty.
  std::pair<uint64_t, std::string_view> LineAt(std::ptrdiff_t offset) const;

 private:
  size_t max_bytes_;
  size_t max_lines_;
  std::string text_;
  std::vector<size_t> starts_;     // where each line begins in text_
  std::vector<uint64_t> numbers_;  // the input line number of each
};

}  // namespace faultline::state_internal
