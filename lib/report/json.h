// The JSON faultline writes: the diagnosis document, the catalog, and the records `faultline
// scan` prints one a line (extract/ reads them back: read_record). Internal to lib/report/.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "pipeline/pipeline.h"

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

// {"record": "series", "path", "host", "format", "rank", "rank_kind", "metrics": ["loss"]}: a
// series of one rank that logs the loss (who logs it, not the values).
nlohmann::json series_record(const LossLogger& logger);

// {"path", "host", "kind", "compression", "lines", "bytes", "error"}: an entry of "inputs".
nlohmann::json input_json(const InputSummary& input);

// {"record": "unread", "path", "reason"}: an input that could not be opened (it has no "input"
// record).
nlohmann::json unread_record(const UnreadInput& input);

// input_json() with "record": "input" and "cut_lines".
// {"record": "input", "path", "host", "kind", "compression", "lines", "bytes", "cut_lines",
//  "error"}
nlohmann::json input_record(const InputSummary& input);

// The catalog: every signature and failure class.
nlohmann::json catalog_json(const Catalog& catalog);

// Serialises JSON for output: invalid UTF-8 from the inputs is replaced, never thrown on.
std::string dump_json(const nlohmann::json& value, int indent);

}  // namespace faultline
