// The whole pipeline for a set of command-line inputs: read, extract, correlate, diagnose.
#pragma once

#include <functional>
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
  std::vector<Series> series;  // training metrics; their anomalies are among `events`
  std::vector<Diagnosis> diagnoses;
  size_t readable_inputs = 0;  // inputs that yielded at least one line or ended cleanly
};

// Told how far reading has got: the input being read, and the bytes of text read so far from
// all inputs together.
using Progress = std::function<void(const std::string& path, uint64_t bytes)>;

// Reads every input named by `args` (files, folders, "-") and diagnoses them together. An
// input that fails adds a warning; the rest are still read. Lines of a file in a sub-folder of a
// folder argument ("logs/node17/dmesg") belong to the host named by that sub-folder unless the
// line names its own host. Reading an input stops after `max_bytes` of its text (a warning).
// `progress`, when set, is called once 64 MiB more have been read or 0.25 s has passed since
// it was last called, whichever comes first.
Analysis analyze(const std::vector<std::string>& args, const Catalog& catalog,
                 uint64_t max_bytes = kDefaultMaxBytes, const Progress& progress = {});

}  // namespace faultline
