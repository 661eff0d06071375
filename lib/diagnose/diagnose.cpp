#include "diagnose/diagnose.h"

#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

namespace faultline {
namespace {

// How a GPU repairs bad memory, and why we think so.
struct MemoryRepair {
  std::string kind;  // "row-remapping" or "page-retirement"
  std::string basis;
};

MemoryRepair memory_repair(const GpuRef& gpu, const Knowledge& knowledge) {
  if (!gpu.product.empty()) {
    for (const ProductRule& rule : knowledge.products) {
      if (RE2::PartialMatch(gpu.product, rule.pattern)) {
        return {rule.memory, "the GPU is a " + gpu.product};
      }
    }
  }
  return {knowledge.default_memory,
          "no dump names the product; " + knowledge.default_memory + " assumed"};
}

std::optional<double> number(const std::string& text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string field_or_empty(const GpuState& state, const std::string& name) {
  auto it = state.fields.find(name);
  return it == state.fields.end() ? "" : it->second;
}

bool state_fits(const Condition& condition, const GpuState& state) {
  const std::string value = field_or_empty(state, condition.state);
  if (value.empty()) return false;
  if (!condition.equals.empty()) return value == condition.equals;
  auto amount = number(value);
  if (!amount) return false;
  if (!condition.sum_with.empty()) {
    auto other = number(field_or_empty(state, condition.sum_with));
    if (!other) return false;
    *amount += *other;
  }
  return *amount >= *condition.at_least;
}

bool event_fits(const Condition& condition, const Event& event, const MemoryRepair& memory) {
  if (condition.signature != event.signature) return false;
  if (condition.xid && event.xid != condition.xid) return false;
  return condition.memory.empty() || condition.memory == memory.kind;
}

// The latest snapshot that states `field` at all: older dumps say less about the GPU now.
const GpuState* latest_with(const std::vector<const GpuState*>& states, const std::string& field) {
  for (auto it = states.rbegin(); it != states.rend(); ++it) {
    if ((*it)->fields.count(field) != 0) return *it;
  }
  return nullptr;
}

Evidence state_evidence(const GpuState& state, const std::string& field) {
  Evidence evidence = state.source;
  evidence.signature = field;
  if (auto it = state.field_lines.find(field); it != state.field_lines.end()) {
    evidence.line = it->second.first;
    evidence.text = it->second.second;
  } else {
    evidence.text = field + " = " + field_or_empty(state, field);
  }
  return evidence;
}

struct Candidate {
  const FailureClass* failure = nullptr;
  double confidence = 0;
  bool contradicted = false;
  std::vector<Evidence> evidence;
  uint64_t events = 0;
  std::vector<std::string> notes;
};

std::string replace_all(std::string text, std::string_view from, const std::string& to) {
  for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos)) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
  return text;
}

std::string fill(std::string text, const std::string& host, const GpuRef& gpu,
                 const MemoryRepair& memory) {
  text = replace_all(std::move(text), "{host}", host.empty() ? "the node" : host);
  text = replace_all(std::move(text), "{gpu}", gpu.pci.empty() ? "the GPU" : gpu.pci);
  text = replace_all(std::move(text), "{gpu_index}",
                     gpu.index ? std::to_string(*gpu.index) : "<index of " + gpu.pci + ">");
  text = replace_all(std::move(text), "{serial}", gpu.serial.empty() ? "unknown" : gpu.serial);
  text = replace_all(std::move(text), "{uuid}", gpu.uuid.empty() ? "unknown" : gpu.uuid);
  text = replace_all(std::move(text), "{product}", gpu.product.empty() ? "GPU" : gpu.product);
  return replace_all(std::move(text), "{memory_basis}", memory.basis);
}

std::optional<Candidate> evaluate(const FailureClass& failure,
                                  const std::vector<const Event*>& events,
                                  const std::vector<const GpuState*>& states,
                                  const MemoryRepair& memory) {
  Candidate candidate;
  candidate.failure = &failure;
  double doubt = 1;
  for (const Condition& condition : failure.supported_by) {
    bool fits = false;
    if (!condition.signature.empty()) {
      for (const Event* event : events) {
        if (!event_fits(condition, *event, memory)) continue;
        fits = true;
        candidate.evidence.push_back(event->evidence);
        ++candidate.events;
      }
    } else if (const GpuState* state = latest_with(states, condition.state);
               state && state_fits(condition, *state)) {
      fits = true;
      candidate.evidence.push_back(state_evidence(*state, condition.state));
    }
    if (!fits) continue;
    doubt *= 1 - condition.weight;
    if (!condition.note.empty()) candidate.notes.push_back(condition.note);
  }
  if (doubt == 1) return std::nullopt;
  candidate.confidence = 1 - doubt;
  for (const Condition& condition : failure.contradicted_by) {
    const GpuState* state = latest_with(states, condition.state);
    if (!state || !state_fits(condition, *state)) continue;
    // A dump older than the evidence it would contradict says nothing about it.
    const bool older = std::any_of(events.begin(), events.end(), [&](const Event* event) {
      return comparable(state->time, event->evidence.time) &&
             state->time.seconds < event->evidence.time.seconds;
    });
    if (older) continue;
    candidate.contradicted = true;
    candidate.confidence *= 0.5;
    candidate.evidence.push_back(state_evidence(*state, condition.state));
    if (!condition.note.empty()) candidate.notes.push_back(condition.note);
  }
  return candidate;
}

bool ranks_before(const Candidate& a, const Candidate& b) {
  if (a.contradicted != b.contradicted) return !a.contradicted;
  if (a.failure->severity != b.failure->severity) return a.failure->severity > b.failure->severity;
  if (a.failure->priority != b.failure->priority) return a.failure->priority > b.failure->priority;
  return a.confidence > b.confidence;
}

// First and last time among the evidence, preferring wall-clock times over boot-relative ones.
void set_times(Diagnosis* diagnosis) {
  for (Timestamp::Kind kind : {Timestamp::Kind::kAbsolute, Timestamp::Kind::kBootRelative}) {
    for (const Evidence& evidence : diagnosis->evidence) {
      if (evidence.time.kind != kind) continue;
      if (!diagnosis->first_seen.known() || evidence.time.seconds < diagnosis->first_seen.seconds) {
        diagnosis->first_seen = evidence.time;
      }
      if (!diagnosis->last_seen.known() || evidence.time.seconds > diagnosis->last_seen.seconds) {
        diagnosis->last_seen = evidence.time;
      }
    }
    if (diagnosis->first_seen.known()) return;
  }
}

Diagnosis make_diagnosis(std::vector<Candidate> candidates, const std::string& host,
                         const GpuRef& gpu, const MemoryRepair& memory) {
  std::stable_sort(candidates.begin(), candidates.end(), ranks_before);
  const Candidate& top = candidates.front();
  Diagnosis diagnosis;
  diagnosis.failure = top.failure;
  diagnosis.confidence = std::round(top.confidence * 100) / 100;
  diagnosis.host = host;
  diagnosis.gpu = gpu;
  std::set<std::pair<std::string, uint64_t>> seen;
  for (const Candidate& candidate : candidates) {
    for (const Evidence& evidence : candidate.evidence) {
      if (seen.emplace(evidence.path, evidence.line).second) {
        diagnosis.evidence.push_back(evidence);
      }
    }
    diagnosis.occurrences += candidate.events;
    for (const std::string& note : candidate.notes) {
      diagnosis.notes.push_back(fill(note, host, gpu, memory));
    }
    if (&candidate != &top) {
      diagnosis.notes.push_back("Also fits " + candidate.failure->id + " (" +
                                candidate.failure->title + "); counted as part of this incident.");
    }
  }
  diagnosis.occurrences = std::max<uint64_t>(diagnosis.occurrences, 1);
  for (const std::string& fix : top.failure->fix) {
    diagnosis.fix.push_back(fill(fix, host, gpu, memory));
  }
  for (const VerifyStep& step : top.failure->verify) {
    diagnosis.verify.push_back(
        {fill(step.command, host, gpu, memory), fill(step.expect, host, gpu, memory)});
  }
  set_times(&diagnosis);
  return diagnosis;
}

std::optional<Diagnosis> diagnose_gpu(const GpuFindings& findings, const Knowledge& knowledge) {
  const MemoryRepair memory = memory_repair(findings.gpu, knowledge);
  std::vector<Candidate> candidates;
  for (const FailureClass& failure : knowledge.classes) {
    if (auto candidate = evaluate(failure, findings.events, findings.states, memory)) {
      candidates.push_back(std::move(*candidate));
    }
  }
  if (candidates.empty()) return std::nullopt;
  Diagnosis diagnosis = make_diagnosis(std::move(candidates), findings.host, findings.gpu, memory);
  if (findings.states.empty() && !diagnosis.failure->missing_without_state.empty()) {
    diagnosis.missing.push_back(
        fill(diagnosis.failure->missing_without_state, findings.host, findings.gpu, memory));
  }
  return diagnosis;
}

// Faults that name no GPU (a job's CUDA error): one diagnosis per class and host.
std::vector<Diagnosis> diagnose_without_gpu(const std::vector<const Event*>& events,
                                            const Knowledge& knowledge) {
  std::map<std::string, std::vector<const Event*>> by_host;
  for (const Event* event : events) by_host[event->host].push_back(event);
  const MemoryRepair memory{knowledge.default_memory, ""};
  std::vector<Diagnosis> out;
  for (const auto& [host, host_events] : by_host) {
    for (const FailureClass& failure : knowledge.classes) {
      if (auto candidate = evaluate(failure, host_events, {}, memory)) {
        out.push_back(make_diagnosis({std::move(*candidate)}, host, {}, memory));
      }
    }
  }
  return out;
}

bool diagnosis_before(const Diagnosis& a, const Diagnosis& b) {
  if (a.failure->severity != b.failure->severity) return a.failure->severity > b.failure->severity;
  if (a.failure->priority != b.failure->priority) return a.failure->priority > b.failure->priority;
  if (a.confidence != b.confidence) return a.confidence > b.confidence;
  if (comparable(a.first_seen, b.first_seen)) return a.first_seen.seconds < b.first_seen.seconds;
  return false;
}

// A symptom (the job's CUDA error) is collateral to the hardware diagnosis that explains it.
void link_symptoms(std::vector<Diagnosis>* diagnoses) {
  for (Diagnosis& symptom : *diagnoses) {
    const auto& causes = symptom.failure->symptom_of;
    if (causes.empty()) continue;
    for (Diagnosis& cause : *diagnoses) {
      const bool explains =
          std::find(causes.begin(), causes.end(), cause.failure->id) != causes.end() &&
          (symptom.host.empty() || cause.host.empty() || symptom.host == cause.host);
      if (!explains) continue;
      symptom.role = "collateral";
      symptom.caused_by = cause.position;
      cause.role = "initiating";
      break;
    }
    if (symptom.role != "collateral" && !symptom.failure->missing_without_gpu.empty()) {
      symptom.missing.push_back(symptom.failure->missing_without_gpu);
    }
  }
}

}  // namespace

std::vector<Diagnosis> diagnose(const Correlation& correlation, const Knowledge& knowledge) {
  std::vector<Diagnosis> diagnoses;
  for (const GpuFindings& findings : correlation.gpus) {
    if (auto diagnosis = diagnose_gpu(findings, knowledge)) {
      diagnoses.push_back(std::move(*diagnosis));
    }
  }
  for (Diagnosis& diagnosis : diagnose_without_gpu(correlation.without_gpu, knowledge)) {
    diagnoses.push_back(std::move(diagnosis));
  }
  std::stable_sort(diagnoses.begin(), diagnoses.end(), diagnosis_before);
  for (size_t i = 0; i < diagnoses.size(); ++i) diagnoses[i].position = static_cast<int>(i) + 1;
  link_symptoms(&diagnoses);
  return diagnoses;
}

}  // namespace faultline
