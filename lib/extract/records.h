// The records `faultline scan` prints, one JSON object a line, and `faultline diagnose --events`
// reads back: what each input yielded (its events, its GPUs' state and the input itself), so
// that scanning every node where its logs are and correlating the records centrally gives what
// one run over all the files gives.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "extract/scan.h"
#include "model/model.h"

namespace faultline {

// The convention of every JSON faultline writes: an unknown value is null, never "".
nlohmann::json text_or_null(const std::string& text);
nlohmann::json time_or_null(const Timestamp& time);

// {"record": "event", "signature", "host", "rank", "gpu", "gpu_index", "gpu_uuid", "gpu_serial",
//  "gpu_product", "xid", "time", "year_assumed", "path", "line", "text", "count", "fields"}
nlohmann::json event_record(const Event& event);

// {"record": "state", "host", "gpu", ..., "time", "path", "line", "text", "fields",
//  "field_lines": {"FIELD": [line, "text"]}}
nlohmann::json state_record(const GpuState& state);

// {"record": "input", "path", "host", "kind", "compression", "lines", "bytes", "cut_lines",
//  "error"}
nlohmann::json input_record(const InputSummary& input);

struct Records {
  std::vector<InputSummary> inputs;
  std::vector<Event> events;
  std::vector<GpuState> states;
};

// Adds the record on `line` to `records`. A line without "record" is an event (as scan printed
// before it wrote other records); a record of a kind this version does not know is skipped.
// Returns false and sets *error (why, without the path) when the line is not a record.
bool read_record(std::string_view line, Records* records, std::string* error);

}  // namespace faultline
