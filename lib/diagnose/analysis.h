// The whole pipeline for a set of command-line inputs: read, extract, correlate, diagnose.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "diagnose/classes.h"
#include "diagnose/diagnose.h"
#include "extract/scan.h"
#include "extract/signatures.h"

namespace faultline {

// The compiled knowledge base: built-in tables plus the user's.
struct Catalog {
  std::vector<Table> tables;
  std::unique_ptr<SignatureSet> signatures;
  Knowledge knowledge;
};

// Loads the built-in tables and then those of each folder in `extra_dirs` (their entries replace
// built-in ones of the same id). Returns false and sets *error ("PATH: ...") when a table is
// invalid.
bool load_catalog(const std::vector<std::string>& extra_dirs, Catalog* catalog, std::string* error);

struct Analysis {
  std::vector<InputSummary> inputs;
  std::vector<std::string> warnings;  // one line each, naming the input
  std::vector<Event> events;
  std::vector<GpuState> states;
  std::vector<Diagnosis> diagnoses;
  size_t readable_inputs = 0;  // inputs that yielded at least one line or ended cleanly
};

// Reads every input named by `args` (files, folders, "-") and diagnoses them together. An
// input that fails adds a warning; the rest are still read. Lines of a file in a sub-folder of a
// folder argument ("logs/node17/dmesg") belong to the host named by that sub-folder unless the
// line names its own host. Reading an input stops after `max_bytes` of its text (a warning).
Analysis analyze(const std::vector<std::string>& args, const Catalog& catalog,
                 uint64_t max_bytes = kDefaultMaxBytes);

}  // namespace faultline
