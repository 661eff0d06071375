// The dcgm-exporter (Prometheus text) reader behind StateReader.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "model/model.h"

namespace faultline::state_internal {

// Whether the exporter reader stores `field` (a query name, or "dcgm.xid_last").
bool IsExporterField(std::string_view field);

// The query field the DCGM field `dcgm_name` ("DCGM_FI_DEV_XID_ERROR") is stored under, and
// `value` as that field's text; nullopt when the exporter reader stores no such field, or the
// value is DCGM's blank, N/A or not a whole number. The dmon reader stores its columns so.
std::optional<std::pair<std::string_view, std::string>> DcgmFieldValue(std::string_view dcgm_name,
                                                                       std::string_view value);

// Reads dcgm-exporter /metrics text, `NAME{labels} value [timestamp_ms]`: one GpuState per GPU
// per scrape. A scrape ends where a (metric, GPU) pair comes again, where a family's `# HELP`
// comes again, and at the end of the input. DCGM field names of both generations are stored
// under nvidia-smi's query names.
class ExporterReader {
 public:
  // Appends each scrape's snapshots to *out.
  ExporterReader(std::string path, std::vector<GpuState>* out);

  void Feed(std::string_view text, uint64_t line_number);
  // Ends the input: the open scrape is finished.
  void Finish() { EndScrape(); }

  // Whether no scrape is open, so that Feed does nothing with a line MayOpen turns down.
  bool idle() const { return gpus_.empty(); }
  // Whether `line` (trimmed) may open a scrape or belongs to the exposition format's comments,
  // which are read even between scrapes: a cheap look, true for every such line.
  static bool MayOpen(std::string_view line);

 private:
  struct Gpu {
    std::string key;  // host, gpu, UUID and bus id labels
    GpuState state;
  };

  void EndScrape();
  Gpu* FindGpu(const std::string& key);

  std::string path_;
  std::vector<GpuState>* out_;
  std::vector<Gpu> gpus_;  // the open scrape's GPUs, in order of first sample
  std::unordered_map<std::string, size_t> gpu_index_;  // key -> position in gpus_
  // Digests of the open scrape's series (name and labels) and `# HELP` families.
  std::unordered_set<uint64_t> seen_;
  std::unordered_set<uint64_t> helps_;
  // Snapshots appended so far, and a digest of each GPU's latest fields (by key digest).
  size_t emitted_ = 0;
  std::unordered_map<uint64_t, uint64_t> last_fields_;
};

}  // namespace faultline::state_internal
