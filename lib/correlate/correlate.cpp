#include "correlate/correlate.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "model/text.h"

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

// NCCL cuts host names at the first dot; syslog may not. Compare the short names.
std::string host_key(const std::string& host) {
  const bool address = !host.empty() && host.find_first_not_of("0123456789.") == std::string::npos;
  return address ? host : host.substr(0, host.find('.'));
}

// The GPUs that lines and dumps name by UUID, with the address where one of them also gives it.
// A UUID the poster shortened ("GPU-3f2a91c0", "GPU-3f2a91c0-...") names the one known UUID it
// begins, when only one does.
class UuidDirectory {
 public:
  struct Entry {
    std::string key;   // the longest known spelling, lower case, without a trailing "-..."
    std::string uuid;  // that spelling as printed
    std::string pci;
    std::string host;
  };

  void Note(const GpuRef& gpu, const std::string& host) {
    if (gpu.uuid.empty()) return;
    const std::string key = lower(gpu.uuid.str());
    Entry& entry = entries_[key];
    entry.key = key;
    if (entry.uuid.empty()) entry.uuid = std::string(gpu.uuid.str());
    if (entry.pci.empty()) entry.pci = gpu.pci;
    if (entry.host.empty()) entry.host = host;
  }

  // The GPU `uuid` names, or nullopt when it names none or several.
  std::optional<Entry> Resolve(std::string_view uuid) const {
    const std::string key = lower(uuid);
    if (key.size() < kShortest) return std::nullopt;
    // The UUIDs it begins sort together; they name one GPU when each begins the next (a
    // shorter spelling of one UUID), and then the last is the full one.
    auto first = entries_.lower_bound(key);
    if (first == entries_.end() || !first->first.starts_with(key)) return std::nullopt;
    Entry entry = first->second;
    for (auto it = std::next(first); it != entries_.end() && it->first.starts_with(key); ++it) {
      if (!it->first.starts_with(entry.key)) return std::nullopt;
      entry.key = it->first;
      entry.uuid = it->second.uuid;
      if (entry.pci.empty()) entry.pci = it->second.pci;
      if (entry.host.empty()) entry.host = it->second.host;
    }
    return entry;
  }

 private:
  // "GPU-" and eight hex digits: the first group of a UUID, the least a poster keeps.
  static constexpr size_t kShortest = 12;

  static std::string lower(std::string_view text) {
    std::string out(text);
    // A shortened UUID ends where the poster cut it: "GPU-3f2a91c0-..." is "GPU-3f2a91c0-".
    while (!out.empty() && (out.back() == '.' || out.back() == '-')) out.pop_back();
    return ascii_lower(out);
  }

  std::map<std::string, Entry> entries_;
};

class GpuTable {
 public:
  explicit GpuTable(Correlation* out) : out_(out) {}

  // Hosts that have seen each PCI address; used to place host-less items.
  void NoteHost(const std::string& pci, const std::string& host) {
    if (!pci.empty() && !host.empty()) hosts_of_[pci].insert(host);
  }

  // Where a dump states both, which PCI address the GPU with `index` on `host` has.
  void NoteIndex(const GpuState& state) {
    if (state.gpu.index && !state.gpu.pci.empty()) {
      pci_of_index_[std::make_pair(host_key(state.host), *state.gpu.index)] = state.gpu.pci;
    }
  }

  std::string PciOfIndex(const std::string& host, std::optional<int> index) const {
    if (!index) return "";
    auto it = pci_of_index_.find(std::make_pair(host_key(host), *index));
    return it == pci_of_index_.end() ? "" : it->second;
  }

  // The merged identity of a GPU already seen, if any.
  const GpuRef* Identity(const std::string& host, const std::string& pci) const {
    auto it = index_.find(std::make_pair(host, pci));
    return it == index_.end() ? nullptr : &out_->gpus[it->second].gpu;
  }

  GpuFindings* Existing(const std::string& host, const std::string& pci) {
    auto it = index_.find(std::make_pair(host, pci));
    return it == index_.end() ? nullptr : &out_->gpus[it->second];
  }

  GpuFindings& Find(std::string host, const std::string& pci) {
    if (host.empty()) {
      auto it = hosts_of_.find(pci);
      if (it != hosts_of_.end() && it->second.size() == 1) host = *it->second.begin();
    }
    auto [it, inserted] = index_.emplace(std::make_pair(host, pci), out_->gpus.size());
    if (inserted) {
      out_->gpus.emplace_back();
      out_->gpus.back().host = host;
      out_->gpus.back().gpu.pci = pci;
    }
    return out_->gpus[it->second];
  }

  // The GPU a line or dump that shows no address names by UUID, else by index on its host
  // when another dump ties that index to an address; nullptr when neither tells.
  GpuFindings* FindWithoutAddress(const std::string& host, const GpuRef& gpu,
                                  const UuidDirectory& uuids) {
    const std::optional<UuidDirectory::Entry> known = uuids.Resolve(gpu.uuid.str());
    if (known && !known->pci.empty()) {
      return &Find(known->host.empty() ? host : known->host, known->pci);
    }
    if (const std::string pci = PciOfIndex(host, gpu.index); !pci.empty()) {
      return &Find(host, pci);
    }
    if (!known) return nullptr;
    auto [it, inserted] = by_uuid_.emplace(known->key, out_->gpus.size());
    if (inserted) {
      out_->gpus.emplace_back();
      out_->gpus.back().host = known->host.empty() ? host : known->host;
      out_->gpus.back().gpu.uuid = known->uuid;
    }
    return &out_->gpus[it->second];
  }

  // The GPU of a dump that shows no address (a pasted `-q` section, a dcgmi report naming GPUs
  // by id): its address when another dump of the host ties its index to one, else a GPU of
  // unknown address, one per host and index.
  GpuFindings& FindUnaddressed(const std::string& host, std::optional<int> index) {
    if (const std::string pci = PciOfIndex(host, index); !pci.empty()) return Find(host, pci);
    auto [it, inserted] = unaddressed_.emplace(std::make_pair(host, index), out_->gpus.size());
    if (inserted) {
      out_->gpus.emplace_back();
      out_->gpus.back().host = host;
      out_->gpus.back().gpu.index = index;
    }
    return out_->gpus[it->second];
  }

 private:
  Correlation* out_;
  std::map<std::string, std::set<std::string>> hosts_of_;
  std::map<std::pair<std::string, std::string>, size_t> index_;
  std::map<std::pair<std::string, std::optional<int>>, size_t> unaddressed_;
  std::map<std::string, size_t> by_uuid_;  // GPUs known by UUID alone
  std::map<std::pair<std::string, int>, std::string> pci_of_index_;
};

// Which GPU each rank ran on, from identity events that name both (NCCL's init line).
class RankGpus {
 public:
  RankGpus(const std::vector<Event>& events, const GpuTable& table) {
    // Sub-communicators (tensor-, pipeline-parallel groups) print the same line with ranks of
    // their own; only the communicator of the whole job numbers ranks as the job does.
    uint64_t world = 0;
    for (const Event& event : events) world = std::max(world, nranks(event));
    for (const Event& event : events) {
      if (!event.rank || (event.fields.contains("nranks") && nranks(event) != world)) continue;
      GpuRef gpu = event.gpu;
      if (gpu.pci.empty()) gpu.pci = table.PciOfIndex(event.host, visible_device(event));
      if (gpu.pci.empty()) continue;
      if (const GpuRef* known = table.Identity(event.host, gpu.pci)) gpu = *known;
      RankLink link{*event.rank, event.host, gpu,
                    "rank " + std::to_string(*event.rank) +
                        (event.host.empty() ? "" : " on " + event.host) + " ran on GPU " + gpu.pci +
                        " (" + event.signature + ", " + event.evidence.path + ":" +
                        std::to_string(event.evidence.line) + ")"};
      if (auto local = event.fields.find("local_rank"); local != event.fields.end()) {
        by_local_rank_.emplace(std::make_pair(host_key(event.host), local->second), link);
      }
      by_rank_[*event.rank].emplace(host_key(event.host), std::move(link));
    }
  }

  // The GPU of the event's rank: by its global rank, else by its node-local one on its host;
  // for a metric anomaly, by the rank of its series.
  const RankLink* Find(const Event& event) const {
    if (event.rank) return FindGlobal(event.host, *event.rank);
    auto series_rank = event.fields.find("rank");
    auto kind = event.fields.find("rank_kind");
    if (series_rank != event.fields.end() && kind != event.fields.end()) {
      if (kind->second == "global") {
        const int rank = std::atoi(std::string(series_rank->second).c_str());
        return FindGlobal(event.host, rank);
      }
      return FindLocal(event.host, std::string(series_rank->second));
    }
    auto local = event.fields.find("local_rank");
    if (local == event.fields.end()) return nullptr;
    return FindLocal(event.host, std::string(local->second));
  }

  const RankLink* FindLocal(const std::string& host, const std::string& local_rank) const {
    if (host.empty()) return nullptr;
    auto it = by_local_rank_.find(std::make_pair(host_key(host), local_rank));
    return it == by_local_rank_.end() ? nullptr : &it->second;
  }

  // The GPU of `rank` on `host`; when the event names no host, or another spelling of it, the
  // rank's only GPU (a job's global ranks are unique).
  const RankLink* FindGlobal(const std::string& host, int rank) const {
    auto it = by_rank_.find(rank);
    if (it == by_rank_.end()) return nullptr;
    auto exact = it->second.find(host_key(host));
    if (exact != it->second.end()) return &exact->second;
    return it->second.size() == 1 ? &it->second.begin()->second : nullptr;
  }

  template <typename Visit>
  void ForEach(const Visit& visit) const {
    for (const auto& [rank, hosts] : by_rank_) {
      for (const auto& [host, link] : hosts) visit(link);
    }
  }

 private:
  static uint64_t nranks(const Event& event) {
    auto it = event.fields.find("nranks");
    return it == event.fields.end() ? 0
                                    : std::strtoull(std::string(it->second).c_str(), nullptr, 10);
  }

  // The GPU index a rank used by a line that lists its process's visible devices and its local
  // rank ("LOCAL_RANK: 3 - CUDA_VISIBLE_DEVICES: [0,1,2,3]": device 3), else the one it names.
  static std::optional<int> visible_device(const Event& event) {
    auto local = event.fields.find("local_rank");
    auto visible = event.fields.find("visible_devices");
    if (local == event.fields.end() || visible == event.fields.end()) return event.gpu.index;
    std::vector<int> devices;
    std::istringstream list{std::string(visible->second)};  // "0, 1, 2, 3"
    for (std::string item; std::getline(list, item, ',');) {
      devices.push_back(std::atoi(item.c_str()));
    }
    const int position = std::atoi(std::string(local->second).c_str());
    if (position < 0 || position >= static_cast<int>(devices.size())) return std::nullopt;
    return devices[static_cast<size_t>(position)];
  }

  std::map<int, std::map<std::string, RankLink>> by_rank_;
  std::map<std::pair<std::string, std::string>, RankLink> by_local_rank_;  // (host, local rank)
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
  for (const GpuState& state : states) {
    table.NoteHost(state.gpu.pci, state.host);
    table.NoteIndex(state);
  }

  UuidDirectory uuids;
  for (const Event& event : events) uuids.Note(event.gpu, event.host);
  for (const GpuState& state : states) uuids.Note(state.gpu, state.host);

  const auto is_identity = [&](const Event& event) {
    return std::find(identity_signatures.begin(), identity_signatures.end(), event.signature) !=
           identity_signatures.end();
  };
  // A driver line that names no GPU (a GSP heartbeat, a crash-dump notice) is about the one GPU
  // the driver's lines of its input name, when they name exactly one: a single-GPU machine's log.
  std::map<std::string_view, std::string_view> only_gpu;  // by input; "" once a second is named
  for (const Event& event : events) {
    if (event.gpu.pci.empty()) continue;
    auto [it, added] = only_gpu.emplace(event.evidence.path.str(), event.gpu.pci);
    if (!added && it->second != event.gpu.pci) it->second = {};
  }
  const auto driver_gpu = [&](const Event& event) -> std::string_view {
    if (event.evidence.text.str().find("NVRM: ") == std::string_view::npos) return {};
    auto it = only_gpu.find(event.evidence.path.str());
    return it == only_gpu.end() ? std::string_view() : it->second;
  };
  for (const Event& event : events) {
    if (event.gpu.pci.empty()) {
      if (is_identity(event)) continue;
      GpuFindings* gpu = table.FindWithoutAddress(event.host, event.gpu, uuids);
      // An event of a dump's field names its GPU as the dump did: by index alone, maybe.
      if (!gpu && event.gpu.index) gpu = &table.FindUnaddressed(event.host, event.gpu.index);
      if (gpu) {
        merge_identity(event.gpu, &gpu->gpu);
        gpu->events.push_back(&event);
      } else if (const std::string_view pci = driver_gpu(event); !pci.empty()) {
        table.Find(event.host, std::string(pci)).events.push_back(&event);
      } else {
        out.without_gpu.push_back(&event);
      }
      continue;
    }
    GpuFindings& gpu = table.Find(event.host, event.gpu.pci);
    merge_identity(event.gpu, &gpu.gpu);
    if (!is_identity(event)) gpu.events.push_back(&event);
  }
  for (const GpuState& state : states) {
    GpuFindings* gpu = state.gpu.pci.empty()
                           ? table.FindWithoutAddress(state.host, state.gpu, uuids)
                           : &table.Find(state.host, state.gpu.pci);
    if (!gpu) gpu = &table.FindUnaddressed(state.host, state.gpu.index);
    merge_identity(state.gpu, &gpu->gpu);
    gpu->states.push_back(&state);
  }
  const RankGpus ranks(events, table);
  for (const Event* event : out.without_gpu) {
    if (const RankLink* link = ranks.Find(*event)) out.rank_links.emplace(event, *link);
  }
  ranks.ForEach([&](const RankLink& link) {
    if (GpuFindings* gpu = table.Existing(link.host, link.gpu.pci)) gpu->ranks.push_back(link);
  });
  // A GPU named only by identity lines (no fault, no dump) says nothing worth reporting.
  std::erase_if(out.gpus,
                [](const GpuFindings& gpu) { return gpu.events.empty() && gpu.states.empty(); });
  for (GpuFindings& gpu : out.gpus) {
    std::stable_sort(gpu.states.begin(), gpu.states.end(), state_before);
  }
  return out;
}

}  // namespace faultline
