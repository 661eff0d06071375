// What the state readers share: query field names, value normalisation, dump times.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/model.h"

namespace faultline::state_detail {

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

std::string_view Trim(std::string_view text);
std::string Lower(std::string_view text);

}  // namespace faultline::state_detail
