#include "correlate/correlate.h"

#include <algorithm>
#include <map>
#include <set>

namespace faultline {
namespace {

void merge_identity(const GpuRef& from, GpuRef* into) {
  if (into->pci.empty()) into->pci = from.pci;
  if (!into->index) into->index = from.index;
  // A full UUID beats a shortened one ("GPU-3f2a91c0-...").
  if (from.uuid.size() > into->uuid.size()) into->uuid = from.uuid;
  if (into->serial.empty()) into->serial = from.serial;
  if (into->product.empty()) into->product = from.product;
}

class GpuTable {
 public:
  explicit GpuTable(Correlation* out) : out_(out) {}

  // Hosts that have seen each PCI address; used to place host-less items.
  void NoteHost(const std::string& pci, const std::string& host) {
    if (!pci.empty() && !host.empty()) hosts_of_[pci].insert(host);
  }

  GpuFindings& Find(std::string host, const std::string& pci) {
    if (host.empty()) {
      auto it = hosts_of_.find(pci);
      if (it != hosts_of_.end() && it->second.size() == 1) host = *it->second.begin();
    }
    auto [it, inserted] = index_.emplace(std::make_pair(host, pci), out_->gpus.size());
    if (inserted) {
      out_->gpus.push_back({host, {}, {}, {}});
      out_->gpus.back().gpu.pci = pci;
    }
    return out_->gpus[it->second];
  }

 private:
  Correlation* out_;
  std::map<std::string, std::set<std::string>> hosts_of_;
  std::map<std::pair<std::string, std::string>, size_t> index_;
};

bool state_before(const GpuState* a, const GpuState* b) {
  return comparable(a->time, b->time) && a->time.seconds < b->time.seconds;
}

}  // namespace

Correlation correlate(const std::vector<Event>& events, const std::vector<GpuState>& states,
                      const std::vector<std::string>& identity_signatures) {
  Correlation out;
  GpuTable table(&out);
  for (const Event& event : events) table.NoteHost(event.gpu.pci, event.host);
  for (const GpuState& state : states) table.NoteHost(state.gpu.pci, state.host);

  const auto is_identity = [&](const Event& event) {
    return std::find(identity_signatures.begin(), identity_signatures.end(), event.signature) !=
           identity_signatures.end();
  };
  for (const Event& event : events) {
    if (event.gpu.pci.empty()) {
      if (!is_identity(event)) out.without_gpu.push_back(&event);
      continue;
    }
    GpuFindings& gpu = table.Find(event.host, event.gpu.pci);
    merge_identity(event.gpu, &gpu.gpu);
    if (!is_identity(event)) gpu.events.push_back(&event);
  }
  for (const GpuState& state : states) {
    if (state.gpu.pci.empty()) continue;
    GpuFindings& gpu = table.Find(state.host, state.gpu.pci);
    merge_identity(state.gpu, &gpu.gpu);
    gpu.states.push_back(&state);
  }
  // A GPU named only by identity lines (no fault, no dump) says nothing worth reporting.
  std::erase_if(out.gpus,
                [](const GpuFindings& gpu) { return gpu.events.empty() && gpu.states.empty(); });
  for (GpuFindings& gpu : out.gpus) {
    std::stable_sort(gpu.states.begin(), gpu.states.end(), state_before);
  }
  return out;
}

}  // namespace faultline
