#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "correlate/correlate.h"
#include "model/captures.h"
#include "model/text.h"

namespace faultline {
namespace {

// The nvidia-smi outputs that list every GPU the driver has, unless told to show one (-i); of
// -q, the blocks under a GPU line (a pasted section without it may be any one GPU's).
bool lists_all_gpus(const GpuState& state) {
  const std::string& by = state.source.signature;
  return by == "nvidia-smi-L" || by == "nvidia-smi-table" ||
         (by == "nvidia-smi-q" && !state.gpu.pci.empty());
}

Event missing_event(const Evidence& evidence, const std::string& host, size_t installed,
                    size_t listed) {
  Event event;
  event.signature = std::string(derived::kGpuMissing);
  event.host = host;
  event.evidence = evidence;
  event.evidence.signature = std::string(derived::kGpuMissing);
  event.fields.set("installed", std::to_string(installed));
  event.fields.set("listed", std::to_string(listed));
  return event;
}

}  // namespace

std::vector<Event> xid_events_from_states(const std::vector<GpuState>& states) {
  std::vector<Event> out;
  std::set<std::tuple<std::string, std::string, std::optional<int>, int>> seen;
  for (const GpuState& state : states) {
    auto value = state.fields.find("dcgm.xid_last");
    if (value == state.fields.end()) continue;
    const std::optional<int> xid = parse_number<int>(value->second);
    if (!xid || *xid <= 0) continue;
    if (!seen.emplace(state.host, state.gpu.pci, state.gpu.index, *xid).second) continue;
    Event event;
    event.signature = std::string(derived::kDcgmXidField);
    event.host = state.host;
    event.gpu = state.gpu;
    event.xid = *xid;
    event.evidence = state.source;
    if (auto line = state.field_lines.find("dcgm.xid_last"); line != state.field_lines.end()) {
      event.evidence.line = line->second.first;
      event.evidence.text = line->second.second;
    }
    event.evidence.signature = std::string(derived::kDcgmXidField);
    out.push_back(std::move(event));
  }
  return out;
}

std::vector<Event> find_missing_gpus(const std::vector<Event>& events,
                                     const std::vector<GpuState>& states,
                                     const std::vector<std::string>& installed_signatures) {
  const std::set<std::string> installed_by(installed_signatures.begin(),
                                           installed_signatures.end());
  // Per host: the GPUs its lines name by address (the first line naming each), the address of
  // each UUID the driver named, and the GPUs nvidia-smi listed.
  std::map<std::string, std::map<std::string, const Event*>> installed;
  std::map<std::string, std::map<std::string, std::string>> pci_of_uuid;
  for (const Event& event : events) {
    if (event.gpu.pci.empty()) continue;
    if (installed_by.contains(event.signature))
      installed[event.host].emplace(event.gpu.pci, &event);
    if (!event.gpu.uuid.empty()) pci_of_uuid[event.host][event.gpu.uuid] = event.gpu.pci;
  }
  struct Listing {
    std::set<std::string> gpus;  // each GPU by address, else UUID, else index
    bool addressed = true;       // whether every GPU's address is known
    const GpuState* first = nullptr;
  };
  std::map<std::string, Listing> listed;
  for (const GpuState& state : states) {
    if (!lists_all_gpus(state)) continue;
    std::string pci = state.gpu.pci;
    if (pci.empty() && !state.gpu.uuid.empty()) {
      const auto& known = pci_of_uuid[state.host];
      if (auto it = known.find(state.gpu.uuid); it != known.end()) pci = it->second;
    }
    std::string key = !pci.empty()                  ? pci
                      : !state.gpu.uuid.empty()     ? "uuid " + state.gpu.uuid
                      : state.gpu.index.has_value() ? "index " + std::to_string(*state.gpu.index)
                                                    : "";
    if (key.empty()) continue;
    Listing& listing = listed[state.host];
    if (!listing.first) listing.first = &state;
    listing.addressed = listing.addressed && !pci.empty();
    listing.gpus.insert(std::move(key));
  }
  // Only where the logs show both sides.
  std::vector<Event> out;
  for (const auto& [host, listing] : listed) {
    const auto gpus = installed.find(host);
    if (gpus == installed.end()) continue;
    const size_t count = gpus->second.size();
    if (!listing.addressed) {
      if (listing.gpus.size() < count) {
        out.push_back(missing_event(listing.first->source, host, count, listing.gpus.size()));
      }
      continue;
    }
    for (const auto& [pci, named_by] : gpus->second) {
      if (listing.gpus.contains(pci)) continue;
      Event event = missing_event(named_by->evidence, host, count, listing.gpus.size());
      event.gpu.pci = pci;
      out.push_back(std::move(event));
    }
  }
  return out;
}

}  // namespace faultline
