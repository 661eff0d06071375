// Rendering an analysis: the terminal report, the JSON document and JSON Lines events.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "diagnose/analysis.h"

namespace faultline {

struct TextOptions {
  bool color = false;
  bool verbose = false;  // every evidence line, not only the first few
};

// The ranked report for people: verdict, subject, evidence, fix and verify per diagnosis.
void render_text(const Analysis& analysis, const TextOptions& options, std::ostream& out);

// The "faultline/diagnosis/v1" document of DESIGN.md.
nlohmann::json diagnosis_json(const Analysis& analysis);

// One event as it appears in the JSON document's "events" and in `faultline scan`.
nlohmann::json event_json(const Event& event);

// The encyclopedia entry of a failure class (`faultline explain ID`).
void render_class_entry(const FailureClass& failure, std::ostream& out);

// The catalog entry of an Xid and the classes that diagnose it (`faultline explain xid N`).
void render_xid_entry(int xid, const Catalog& catalog, std::ostream& out);

// The catalog as JSON (`faultline signatures list --json`).
nlohmann::json catalog_json(const Catalog& catalog);

// Serialises JSON for output: invalid UTF-8 from the inputs is replaced, never thrown on.
std::string dump_json(const nlohmann::json& json, int indent);

}  // namespace faultline
