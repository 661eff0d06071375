#include "diagnose/diagnose.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <span>
#include <tuple>
#include <unordered_set>

#include "model/captures.h"
#include "model/text.h"

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
      if (RE2::PartialMatch(gpu.product.str(), rule.pattern)) {
        return {rule.memory, "the GPU is a " + gpu.product};
      }
    }
  }
  return {knowledge.default_memory,
          "no dump names the product; " + knowledge.default_memory + " assumed"};
}

std::string field_or_empty(const GpuState& state, const std::string& name) {
  auto it = state.fields.find(name);
  return it == state.fields.end() ? "" : it->second;
}

bool state_fits(const Condition& condition, const GpuState& state) {
  const std::string value = field_or_empty(state, condition.state);
  if (value.empty()) return false;
  if (!condition.equals.empty()) return value == condition.equals;
  auto amount = parse_number<double>(value);
  if (!amount || !condition.at_least) return false;
  if (!condition.sum_with.empty()) {
    auto other = parse_number<double>(field_or_empty(state, condition.sum_with));
    if (!other) return false;
    *amount += *other;
  }
  return *amount >= *condition.at_least;
}

// Evidence lines kept per condition: the first few and the last; the rest are only counted.
constexpr size_t kEvidencePerCondition = 8;

// The Xid a line names as the cause of its own ("caused by previous Xid 149").

struct Context {
  const Knowledge& knowledge;
  MemoryRepair memory;
  // The events no diagnosis accounts for (unaccounted_events), for "unaccounted" conditions.
  const std::unordered_set<const Event*>* unaccounted = nullptr;
};

std::optional<int> cause_xid(const Event& event) {
  auto it = event.fields.find(std::string(capture::kCausedByXid));
  if (it == event.fields.end()) return std::nullopt;
  auto value = parse_number<double>(it->second);
  return value ? std::optional<int>(static_cast<int>(*value)) : std::nullopt;
}

bool has_xid(const Condition& condition, std::optional<int> xid) {
  return xid &&
         std::find(condition.xids.begin(), condition.xids.end(), *xid) != condition.xids.end();
}

bool event_fits(const Condition& condition, const Event& event, const Context& context) {
  if (condition.unaccounted) return context.unaccounted && context.unaccounted->contains(&event);
  if (!condition.signature.empty() && condition.signature != event.signature) return false;
  if (!condition.xids.empty() && !has_xid(condition, event.xid)) return false;
  if (condition.unlisted && (!event.xid || context.knowledge.find_xid(*event.xid))) return false;
  const auto has_one_of = [&](const std::string& field, const std::vector<std::string>& values) {
    auto it = event.fields.find(field);
    return it != event.fields.end() &&
           std::find(values.begin(), values.end(), it->second) != values.end();
  };
  for (const auto& [field, values] : condition.where) {
    if (!has_one_of(field, values)) return false;
  }
  for (const auto& [field, values] : condition.where_not) {
    if (has_one_of(field, values)) return false;
  }
  return condition.memory.empty() || condition.memory == context.memory.kind;
}

// A line that names an Xid as its cause stands in for that Xid's own line when it is missing.
bool cause_fits(const Condition& condition, const Event& event) {
  return condition.signature.empty() && has_xid(condition, cause_xid(event));
}

// The latest snapshot that states `field` at all: older dumps say less about the GPU now.
const GpuState* latest_with(const std::vector<const GpuState*>& states, const std::string& field) {
  for (auto it = states.rbegin(); it != states.rend(); ++it) {
    if ((*it)->fields.contains(field)) return *it;
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
  std::vector<const Event*> events;
  std::vector<const Event*> stand_ins;  // of `events`, those that only name its Xid as a cause
  std::vector<std::string> notes;
  std::vector<std::string> missing;
};

// What a template's placeholders are filled from.
struct Subject {
  const std::string& host;
  const GpuRef& gpu;
  const MemoryRepair& memory;
  const std::vector<const Event*>& events;  // {event.FIELD}: the latest that captured FIELD
};

// The value the latest of `events` captured for "event.FIELD", if one did.
std::optional<std::string> event_field(std::string_view name,
                                       const std::vector<const Event*>& events) {
  constexpr std::string_view kPrefix = "event.";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  const std::string field(name.substr(kPrefix.size()));
  for (auto it = events.rbegin(); it != events.rend(); ++it) {
    if (auto found = (*it)->fields.find(field); found != (*it)->fields.end()) {
      return std::string(found->second);
    }
  }
  return std::nullopt;
}

// Whether every {event.FIELD} of `text` has a value among the subject's events.
bool fills_completely(const std::string& text, const Subject& subject) {
  bool complete = true;
  fill_template(text, [&](std::string_view name) {
    if (name.starts_with("event.") && !event_field(name, subject.events)) complete = false;
    return std::nullopt;
  });
  return complete;
}

// The placeholders of a class's fix, verify, notes and missing evidence, for its subject.
std::string fill(const std::string& text, const Subject& subject) {
  const GpuRef& gpu = subject.gpu;
  return fill_template(text, [&](std::string_view name) -> std::optional<std::string> {
    if (name == "host") return subject.host.empty() ? "the node" : subject.host;
    // What `nvidia-smi -i` takes: the address, else the UUID or index of a dump that showed none.
    // A value the logs do not give is a placeholder that says where to get it, never a phrase
    // that a pasted command would take for an argument; the shell refuses a pasted "<...>".
    if (name == "gpu") {
      if (!gpu.pci.empty()) return gpu.pci;
      if (!gpu.uuid.empty()) return gpu.uuid;
      return gpu.index ? std::to_string(*gpu.index) : "<GPU: index or UUID from nvidia-smi -L>";
    }
    if (name == "gpu_index") {
      return gpu.index         ? std::to_string(*gpu.index)
             : gpu.pci.empty() ? std::string("<GPU index: nvidia-smi -L>")
                               : "<index of " + gpu.pci +
                                     ": nvidia-smi --query-gpu=index,pci.bus_id --format=csv>";
    }
    if (name == "serial") {
      return gpu.serial.empty() ? "<serial: nvidia-smi --query-gpu=serial --format=csv>"
                                : gpu.serial;
    }
    if (name == "uuid") return gpu.uuid.empty() ? "<UUID: nvidia-smi -L>" : gpu.uuid;
    if (name == "product") return gpu.product.empty() ? "GPU" : gpu.product;
    if (name == "memory_basis") return subject.memory.basis;
    if (name.starts_with("event.")) {
      return event_field(name, subject.events)
          .value_or("<" + std::string(name.substr(6)) + ": not in these logs>");
    }
    return std::nullopt;
  });
}

// Adds the events a condition matched: evidence for the first few and the last, all counted.
void take_events(const std::vector<const Event*>& matched, Candidate* candidate) {
  uint64_t lines = 0;
  for (size_t i = 0; i < matched.size(); ++i) {
    lines = saturating_add(lines, matched[i]->count);
    if (i < kEvidencePerCondition || i + 1 == matched.size()) {
      candidate->evidence.push_back(matched[i]->evidence);
    }
    candidate->events.push_back(matched[i]);
  }
  const uint64_t listed = std::min<uint64_t>(matched.size(), kEvidencePerCondition + 1);
  if (lines > listed) {
    candidate->notes.push_back(std::to_string(lines - listed) +
                               " more lines like these are counted but not listed.");
  }
}

std::vector<const Event*> matching_events(const Condition& condition,
                                          const std::vector<const Event*>& events,
                                          const Context& context, Candidate* candidate) {
  std::vector<const Event*> matched;
  for (const Event* event : events) {
    if (event_fits(condition, *event, context)) matched.push_back(event);
  }
  if (!matched.empty()) return matched;
  for (const Event* event : events) {
    if (cause_fits(condition, *event)) matched.push_back(event);
  }
  if (!matched.empty()) {
    candidate->missing.push_back(
        "The line of Xid " + std::to_string(*cause_xid(*matched.front())) +
        " itself is not in these logs; only a later line names it as the cause. Collect the "
        "full kernel log of {host} (`journalctl -k -b` or `dmesg -T`) to see it.");
  }
  return matched;
}

// A counter that moved the way `condition.trend` says between the first snapshot that shows
// it and the last: evidence from both, and a note with the values, times and rate.
bool trend_fits(const Condition& condition, const std::vector<const GpuState*>& states,
                Candidate* candidate) {
  std::vector<std::pair<const GpuState*, double>> values;
  for (const GpuState* state : states) {
    const std::string text = field_or_empty(*state, condition.state);
    // Flags trend too: a pending remap that later reads "no" was applied.
    auto value = text == "yes"  ? 1.0
                 : text == "no" ? std::optional<double>(0.0)
                                : parse_number<double>(text);
    if (value) values.emplace_back(state, *value);
  }
  if (values.size() < 2) return false;
  const auto& [first, from] = values.front();
  const auto& [last, to] = values.back();
  if (condition.trend == "rising" ? !(to > from) : !(to < from)) return false;
  candidate->evidence.push_back(state_evidence(*first, condition.state));
  candidate->evidence.push_back(state_evidence(*last, condition.state));
  std::string note = condition.state + " went from " + fmt::format("{:g}", from) + " to " +
                     fmt::format("{:g}", to) + " over " + std::to_string(values.size()) +
                     " snapshots";
  if (comparable(first->time, last->time) && last->time.seconds > first->time.seconds) {
    const double days = (last->time.seconds - first->time.seconds) / 86400;
    note += fmt::format(", {} to {} ({:+.2f} a day)", first->time.iso(), last->time.iso(),
                        (to - from) / days);
  }
  candidate->notes.push_back(note + ".");
  return true;
}

std::optional<Candidate> evaluate(const FailureClass& failure,
                                  const std::vector<const Event*>& events,
                                  const std::vector<const GpuState*>& states,
                                  const Context& context) {
  Candidate candidate;
  candidate.failure = &failure;
  double doubt = 1;
  for (const Condition& condition : failure.supported_by) {
    bool fits = false;
    if (condition.state.empty()) {
      const auto matched = matching_events(condition, events, context, &candidate);
      fits = !matched.empty();
      if (fits && !event_fits(condition, *matched.front(), context)) {
        candidate.stand_ins.insert(candidate.stand_ins.end(), matched.begin(), matched.end());
      }
      take_events(matched, &candidate);
    } else if (!condition.trend.empty()) {
      fits = trend_fits(condition, states, &candidate);
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

// Which classes a group of events is weighed against.
enum class Scope { kAll, kJobWide, kLocal };

bool in_scope(const FailureClass& failure, Scope scope) {
  return scope == Scope::kAll || failure.job_wide == (scope == Scope::kJobWide);
}

// Every class that fits: written classes first, then fallbacks on the events of lines no class
// took (a line that a specific class explained is not explained again by a generic one).
std::vector<Candidate> candidates_for(const std::vector<const Event*>& events,
                                      const std::vector<const GpuState*>& states,
                                      const Context& context, Scope scope = Scope::kAll) {
  std::vector<Candidate> candidates;
  std::set<const Event*> taken;
  for (bool fallback : {false, true}) {
    std::set<std::pair<std::string_view, uint64_t>> taken_lines;
    for (const Event* event : taken) {
      taken_lines.emplace(event->evidence.path.str(), event->evidence.line);
    }
    std::vector<const Event*> open;
    for (const Event* event : events) {
      if (!taken.contains(event) &&
          !taken_lines.contains({event->evidence.path.str(), event->evidence.line})) {
        open.push_back(event);
      }
    }
    for (const FailureClass& failure : context.knowledge.classes) {
      if (failure.last_resort || failure.fallback != fallback || !in_scope(failure, scope)) {
        continue;
      }
      auto candidate = evaluate(failure, fallback ? open : events, states, context);
      if (!candidate) continue;
      taken.insert(candidate->events.begin(), candidate->events.end());
      candidates.push_back(std::move(*candidate));
    }
  }
  return candidates;
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

// The kind the documentation of the library error codes `events` name gives them (error_codes.cpp
// decodes them), when every event names one and they agree; unknown otherwise.
ClassKind documented_kind(const std::vector<const Event*>& events) {
  std::optional<ClassKind> kind;
  for (const Event* event : events) {
    std::optional<ClassKind> named;
    for (std::string_view field :
         {capture::kCudaErrorKind, capture::kNvmlErrorKind, capture::kDcgmErrorKind}) {
      if (auto value = event->fields.find(std::string(field)); value != event->fields.end()) {
        named = parse_class_kind(value->second);
        break;
      }
    }
    if (!named || (kind && *kind != *named)) return ClassKind::kUnknown;
    kind = named;
  }
  return kind.value_or(ClassKind::kUnknown);
}

Diagnosis make_diagnosis(std::vector<Candidate> candidates, const std::string& host,
                         const GpuRef& gpu, const MemoryRepair& memory) {
  std::stable_sort(candidates.begin(), candidates.end(), ranks_before);
  const Candidate& top = candidates.front();
  const Subject subject{host, gpu, memory, top.events};
  Diagnosis diagnosis;
  diagnosis.failure = top.failure;
  diagnosis.kind =
      top.failure->kind == ClassKind::kUnknown ? documented_kind(top.events) : top.failure->kind;
  diagnosis.severity = top.failure->severity;
  diagnosis.confidence = std::round(top.confidence * 100) / 100;
  diagnosis.host = host;
  diagnosis.gpu = gpu;
  std::set<std::pair<std::string, uint64_t>> seen_lines;
  std::set<const Event*> seen_events;
  for (const Candidate& candidate : candidates) {
    for (const Evidence& evidence : candidate.evidence) {
      if (seen_lines.emplace(evidence.path, evidence.line).second) {
        diagnosis.evidence.push_back(evidence);
      }
    }
    seen_events.insert(candidate.events.begin(), candidate.events.end());
    for (const std::string& note : candidate.notes) {
      // A note is worth saying only with the values it is about.
      if (fills_completely(note, subject)) diagnosis.notes.emplace_back(fill(note, subject));
    }
    for (const std::string& missing : candidate.missing) {
      diagnosis.missing.emplace_back(fill(missing, subject));
    }
    if (&candidate != &top) {
      diagnosis.notes.emplace_back("Also fits " + candidate.failure->id + " (" +
                                   candidate.failure->title +
                                   "); counted as part of this incident.");
    }
  }
  std::set<int> ranks;
  for (const Event* event : seen_events) {
    diagnosis.occurrences = saturating_add(diagnosis.occurrences, event->count);
    if (event->rank) ranks.insert(*event->rank);
  }
  diagnosis.ranks.assign(ranks.begin(), ranks.end());
  diagnosis.occurrences = std::max<uint64_t>(diagnosis.occurrences, 1);
  for (const std::string& fix : top.failure->fix) diagnosis.fix.emplace_back(fill(fix, subject));
  for (const Candidate& candidate : candidates) {
    if (&candidate == &top || !candidate.failure->carry_fix || candidate.failure->fix.empty()) {
      continue;
    }
    const Subject carried{host, gpu, memory, candidate.events};
    // The driver's own request comes before the class's general advice.
    diagnosis.fix.insert(diagnosis.fix.begin(), fill(candidate.failure->fix.front(), carried));
  }
  for (const VerifyStep& step : top.failure->verify) {
    diagnosis.verify.push_back({fill(step.command, subject), fill(step.expect, subject)});
  }
  set_times(&diagnosis);
  return diagnosis;
}

// The Xid of an incident's events logged in the most boots of one input, and in how many.
std::pair<int, size_t> most_recurrent_xid(const std::vector<Candidate>& incident) {
  std::map<std::pair<std::string, int>, std::set<std::string>> boots;
  for (const Candidate& candidate : incident) {
    for (const Event* event : candidate.events) {
      if (!event->xid) continue;
      auto boot = event->fields.find(std::string(capture::kBoot));
      boots[{event->evidence.path, *event->xid}].emplace(
          boot == event->fields.end() ? "0" : boot->second);
    }
  }
  std::pair<int, size_t> most{0, 0};
  for (const auto& [key, seen] : boots) {
    if (seen.size() > most.second) most = {key.second, seen.size()};
  }
  return most;
}

// A hardware fault the GPU logged again after its machine rebooted: the reboot did not clear
// it, so the diagnosis rises to the tables' "recurrence" severity and leads with its fix.
void escalate_recurrence(std::pair<int, size_t> recurrent, const Recurrence& recurrence,
                         const Subject& subject, Diagnosis* diagnosis) {
  const int xid = recurrent.first;
  const size_t boots = recurrent.second;
  if (recurrence.boots == 0 || diagnosis->kind != ClassKind::kHardware ||
      boots < static_cast<size_t>(recurrence.boots)) {
    return;
  }
  const auto with_counts = [&](const std::string& text) {
    return fill(fill_template(text,
                              [&](std::string_view name) -> std::optional<std::string> {
                                if (name == "xid") return std::to_string(xid);
                                if (name == "boots") return std::to_string(boots);
                                return std::nullopt;
                              }),
                subject);
  };
  diagnosis->severity = std::max(diagnosis->severity, recurrence.severity);
  diagnosis->notes.insert(diagnosis->notes.begin(), with_counts(recurrence.note));
  diagnosis->fix.insert(diagnosis->fix.begin(), with_counts(recurrence.fix));
}

// One incident on a GPU: the diagnosis of its first class, the others noted.
Diagnosis describe_incident(std::vector<Candidate> incident, const GpuFindings& findings,
                            const Context& context) {
  const auto recurrent = most_recurrent_xid(incident);
  Diagnosis diagnosis =
      make_diagnosis(std::move(incident), findings.host, findings.gpu, context.memory);
  escalate_recurrence(recurrent, context.knowledge.recurrence,
                      {findings.host, findings.gpu, context.memory, {}}, &diagnosis);
  for (const RankLink& link : findings.ranks) {
    if (std::find(diagnosis.ranks.begin(), diagnosis.ranks.end(), link.rank) ==
        diagnosis.ranks.end()) {
      diagnosis.ranks.push_back(link.rank);
    }
    diagnosis.notes.emplace_back("The job's " + link.how + ".");
  }
  std::sort(diagnosis.ranks.begin(), diagnosis.ranks.end());
  if (findings.states.empty() && !diagnosis.failure->missing_without_state.empty()) {
    const Subject subject{findings.host, findings.gpu, context.memory, {}};
    diagnosis.missing.emplace_back(fill(diagnosis.failure->missing_without_state, subject));
  }
  return diagnosis;
}

// Whether `a` is a consequence of `b` by the tables (`consequence_of`).
bool consequence_of(const FailureClass& a, const FailureClass& b) {
  return std::any_of(a.consequence_of.begin(), a.consequence_of.end(),
                     [&](const std::string& id) { return id == "*" || id == b.id; });
}

// A GPU's classes that rest on different lines are different incidents (an MMU fault, then a
// PMU halt), each its own diagnosis. A class that reads lines of an incident, is a consequence
// of one of its classes or has one as its consequence (Xid 63 after Xid 48), has no line of its
// own (a dump's counters, a cause named only by later lines), or whose fix is carried to the
// top belongs to that incident; so does the first class with lines after one of state alone.
std::vector<std::vector<Candidate>> incidents(std::vector<Candidate> candidates) {
  std::stable_sort(candidates.begin(), candidates.end(), ranks_before);
  std::vector<std::vector<Candidate>> groups;
  std::vector<std::set<const Event*>> lines;
  for (Candidate& candidate : candidates) {
    std::set<const Event*> own(candidate.events.begin(), candidate.events.end());
    for (const Event* stand_in : candidate.stand_ins) own.erase(stand_in);
    const auto belongs = [&](size_t i) {
      // An incident of device state alone (a dump's counters) takes the first class with lines.
      if (lines[i].empty()) return true;
      if (std::any_of(own.begin(), own.end(), [&](const Event* e) { return lines[i].count(e); })) {
        return true;
      }
      return std::any_of(groups[i].begin(), groups[i].end(), [&](const Candidate& member) {
        return consequence_of(*candidate.failure, *member.failure) ||
               consequence_of(*member.failure, *candidate.failure);
      });
    };
    size_t group = groups.size();
    if (!groups.empty() && (own.empty() || candidate.failure->carry_fix)) group = 0;
    for (size_t i = 0; i < groups.size() && group == groups.size(); ++i) {
      if (belongs(i)) group = i;
    }
    if (group == groups.size()) {
      groups.emplace_back();
      lines.emplace_back();
    }
    lines[group].insert(own.begin(), own.end());
    groups[group].push_back(std::move(candidate));
  }
  return groups;
}

std::vector<Diagnosis> diagnose_gpu(const GpuFindings& findings, const Knowledge& knowledge) {
  const Context context{knowledge, memory_repair(findings.gpu, knowledge), nullptr};
  std::vector<Diagnosis> out;
  for (std::vector<Candidate>& incident :
       incidents(candidates_for(findings.events, findings.states, context))) {
    out.push_back(describe_incident(std::move(incident), findings, context));
  }
  return out;
}

// The one host all of `events` name, else "".
std::string common_host(const std::vector<const Event*>& events) {
  std::string host = events.empty() ? "" : events.front()->host;
  for (const Event* event : events) {
    if (event->host != host) return "";
  }
  return host;
}

// Who logs the loss, per log format: one logger per rank (a node-local rank per host; a series
// of unknown rank per input).
class LossLogging {
 public:
  explicit LossLogging(const std::vector<LossLogger>& loggers) {
    for (const LossLogger& logger : loggers) {
      const std::string key = logger.rank < 0 ? "path " + logger.path
                              : logger.rank_is_local
                                  ? "local " + logger.host + " " + std::to_string(logger.rank)
                                  : "rank " + std::to_string(logger.rank);
      by_format_[logger.format].emplace(key, &logger);
    }
  }

  // The loggers of the format of `event` (a metric anomaly's "format").
  std::vector<const LossLogger*> Of(const Event& event) const {
    std::vector<const LossLogger*> out;
    auto format = event.fields.find("format");
    if (format == event.fields.end()) return out;
    auto it = by_format_.find(std::string(format->second));
    if (it == by_format_.end()) return out;
    for (const auto& [key, logger] : it->second) out.push_back(logger);
    return out;
  }

 private:
  std::map<std::string, std::map<std::string, const LossLogger*>> by_format_;
};

// "rank 7", "local rank 3 on node-1", `unknown`.
std::string rank_words(int rank, bool local, const std::string& host, const std::string& unknown) {
  if (rank < 0) return unknown;
  return (local ? "local rank " : "rank ") + std::to_string(rank) +
         (local && !host.empty() ? " on " + host : "");
}

std::string rank_words(const Event& event) {
  auto rank = event.fields.find("rank");
  auto kind = event.fields.find("rank_kind");
  if (rank == event.fields.end() || kind == event.fields.end()) return "its rank";
  return rank_words(parse_number<int>(rank->second).value_or(-1), kind->second == "local",
                    event.host, "its rank");
}

// A note of a class with {NAME} filled with `value`, when the class has the note.
void add_note(const std::string& note, std::string_view name, const std::set<std::string>& values,
              Diagnosis* diagnosis) {
  if (note.empty() || values.empty()) return;
  std::string joined;
  for (const std::string& value : values) joined += (joined.empty() ? "" : " and ") + value;
  diagnosis->notes.emplace_back(fill_template(note, [&](std::string_view key) {
    return key == name ? std::optional<std::string>(joined) : std::nullopt;
  }));
}

// A job-wide class of one rank's series (`per_rank`: the loss): where each rank logs its own
// loss, the events of a rank whose GPU is known make a diagnosis of that GPU; the rest stay
// job-wide, saying why.
void split_per_rank(const Candidate& candidate, const Correlation& correlation,
                    const LossLogging& logging, const Context& context,
                    std::vector<Diagnosis>* out) {
  const FailureClass& failure = *candidate.failure;
  std::map<std::pair<std::string, std::string>, std::vector<const Event*>> own;
  std::map<std::pair<std::string, std::string>, const RankLink*> link_of_gpu;
  std::vector<const Event*> shared;
  std::set<std::string> reduced_by;
  std::set<std::string> unplaced;
  for (const Event* event : candidate.events) {
    const std::vector<const LossLogger*> loggers = logging.Of(*event);
    if (loggers.size() >= 2) {
      auto link = correlation.rank_links.find(event);
      if (link != correlation.rank_links.end() && !link->second.gpu.pci.empty()) {
        const auto key = std::make_pair(event->host, link->second.gpu.pci);
        link_of_gpu.emplace(key, &link->second);
        own[key].push_back(event);
        continue;
      }
      unplaced.insert(rank_words(*event));
    } else if (loggers.size() == 1) {
      const LossLogger& logger = *loggers.front();
      auto link = correlation.rank_links.find(event);
      reduced_by.insert(
          link != correlation.rank_links.end()
              ? "rank " + std::to_string(link->second.rank)
              : rank_words(logger.rank, logger.rank_is_local, logger.host, "one rank"));
    }
    shared.push_back(event);
  }
  for (const auto& [key, events] : own) {
    auto one = evaluate(failure, events, {}, context);
    if (!one) continue;
    const RankLink& link = *link_of_gpu[key];
    Diagnosis diagnosis = make_diagnosis({std::move(*one)}, key.first, link.gpu, context.memory);
    diagnosis.notes.emplace_back("Tied to its GPU: " + link.how + ".");
    if (std::find(diagnosis.ranks.begin(), diagnosis.ranks.end(), link.rank) ==
        diagnosis.ranks.end()) {
      diagnosis.ranks.push_back(link.rank);
      std::sort(diagnosis.ranks.begin(), diagnosis.ranks.end());
    }
    out->push_back(std::move(diagnosis));
  }
  if (shared.empty()) return;
  std::optional<Candidate> rest =
      own.empty() ? std::optional<Candidate>(candidate) : evaluate(failure, shared, {}, context);
  if (!rest) return;
  const std::string host = common_host(rest->events);
  Diagnosis diagnosis = make_diagnosis({std::move(*rest)}, host, GpuRef{}, context.memory);
  add_note(failure.reduced_note, "logged_by", reduced_by, &diagnosis);
  add_note(failure.unplaced_note, "rank", unplaced, &diagnosis);
  out->push_back(std::move(diagnosis));
}

// Faults that name no GPU (a job's CUDA error): one diagnosis per class, host and, where the
// rank's GPU is known, GPU. A job-wide class (NCCL timeouts on every rank) makes one diagnosis
// for the whole job instead of one per rank.
std::vector<Diagnosis> diagnose_without_gpu(const Correlation& correlation,
                                            const Knowledge& knowledge) {
  std::map<std::pair<std::string, std::string>, std::vector<const Event*>> groups;
  std::map<std::pair<std::string, std::string>, const RankLink*> link_of_gpu;
  for (const Event* event : correlation.without_gpu) {
    auto link = correlation.rank_links.find(event);
    const std::string pci = link == correlation.rank_links.end() ? "" : link->second.gpu.pci;
    if (!pci.empty()) link_of_gpu.emplace(std::make_pair(event->host, pci), &link->second);
    groups[{event->host, pci}].push_back(event);
  }
  const Context context{knowledge, {knowledge.default_memory, ""}, nullptr};
  std::vector<Diagnosis> out;
  for (const auto& [key, group] : groups) {
    const auto& [host, pci] = key;
    const RankLink* link = pci.empty() ? nullptr : link_of_gpu[key];
    for (Candidate& candidate : candidates_for(group, {}, context, Scope::kLocal)) {
      Diagnosis diagnosis =
          make_diagnosis({std::move(candidate)}, host, link ? link->gpu : GpuRef{}, context.memory);
      if (link) {
        diagnosis.notes.emplace_back("Tied to its GPU: " + link->how + ".");
        if (std::find(diagnosis.ranks.begin(), diagnosis.ranks.end(), link->rank) ==
            diagnosis.ranks.end()) {
          diagnosis.ranks.push_back(link->rank);
          std::sort(diagnosis.ranks.begin(), diagnosis.ranks.end());
        }
      }
      out.push_back(std::move(diagnosis));
    }
  }
  const LossLogging logging(correlation.loss_loggers);
  for (Candidate& candidate :
       candidates_for(correlation.without_gpu, {}, context, Scope::kJobWide)) {
    if (candidate.failure->per_rank) {
      split_per_rank(candidate, correlation, logging, context, &out);
      continue;
    }
    const std::string host = common_host(candidate.events);
    out.push_back(make_diagnosis({std::move(candidate)}, host, GpuRef{}, context.memory));
  }
  return out;
}

// Templates a last-resort diagnosis lists; the rest are counted.
constexpr size_t kTemplatesListed = 25;

// The lines of one template among a last-resort class's events.
struct TemplateGroup {
  std::string text;
  uint64_t lines = 0;
  Evidence first;
  Timestamp last;
  bool every_line_follows = true;  // each came right after a line of a diagnosis above
  bool unknown = false;            // of a line no signature knows (its text is a template)
};

// Whether an unrecognised event came right after a line of `explained` (signatures that support
// a diagnosis at warning or above): then it is most likely that fault's own report or
// traceback, which the diagnosis already stands for.
bool follows_explained(const Event& event, const std::set<std::string>& explained) {
  auto follows = event.fields.find(std::string(capture::kFollows));
  return follows != event.fields.end() && explained.contains(std::string(follows->second));
}

// One diagnosis of `failure` (a last-resort class) for the events of every host and GPU that
// fit it: one line of each template as evidence, and a note of each template's count and times.
// Lines that follow `explained` count at info.
// A line a diagnosis already stands for, as its evidence: its path, line and signature.
using EvidenceKey = std::tuple<std::string, uint64_t, std::string>;

std::optional<Diagnosis> diagnose_last_resort(const FailureClass& failure,
                                              const std::vector<const Event*>& events,
                                              const std::set<std::string>& explained,
                                              const std::set<EvidenceKey>& taken,
                                              const std::unordered_set<const Event*>& unaccounted,
                                              const Knowledge& knowledge,
                                              const Suggester* suggester) {
  const Context context{knowledge, {knowledge.default_memory, ""}, &unaccounted};
  Candidate candidate;
  candidate.failure = &failure;
  std::optional<Severity> severity;
  double doubt = 1;
  for (const Condition& condition : failure.supported_by) {
    bool held = false;
    const Severity level =
        std::min(condition.severity.value_or(failure.severity), failure.severity);
    for (const Event* event : events) {
      if (!event_fits(condition, *event, context)) continue;
      // A line another class took (one that quotes a CUDA error's message) is no longer unknown.
      if (taken.contains(EvidenceKey(event->evidence.path.str(), event->evidence.line,
                                     event->signature.str()))) {
        continue;
      }
      candidate.events.push_back(event);
      held = true;
      const Severity own = follows_explained(*event, explained) ? Severity::kInfo : level;
      severity = std::max(severity.value_or(own), own);
    }
    if (held) doubt *= 1 - condition.weight;
  }
  if (candidate.events.empty()) return std::nullopt;
  candidate.confidence = 1 - doubt;

  std::vector<TemplateGroup> groups;
  std::map<std::string, size_t> group_of;
  std::stable_sort(candidate.events.begin(), candidate.events.end(),
                   [](const Event* a, const Event* b) {
                     return std::tie(a->evidence.path, a->evidence.line) <
                            std::tie(b->evidence.path, b->evidence.line);
                   });
  for (const Event* event : candidate.events) {
    auto field = event->fields.find(std::string(capture::kTemplate));
    // A line of a known signature that no class took is listed under that signature's name.
    const std::string text =
        field == event->fields.end()
            ? fmt::format("{}: {}", event->signature.str(), event->evidence.text.str())
            : std::string(field->second);
    auto [it, added] = group_of.emplace(text, groups.size());
    if (added) {
      groups.push_back(
          {text, 0, event->evidence, event->evidence.time, true, field != event->fields.end()});
    }
    TemplateGroup& group = groups[it->second];
    group.lines = saturating_add(group.lines, event->count);
    group.every_line_follows = group.every_line_follows && follows_explained(*event, explained);
    if (event->evidence.time.known()) group.last = event->evidence.time;
  }
  uint64_t unlisted_lines = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    const TemplateGroup& group = groups[i];
    if (i >= kTemplatesListed) {
      unlisted_lines = saturating_add(unlisted_lines, group.lines);
      continue;
    }
    candidate.evidence.push_back(group.first);
    std::string note =
        fmt::format(R"({} line{} like "{}")", group.lines, group.lines == 1 ? "" : "s", group.text);
    if (group.first.time.known()) {
      note += ", first " + group.first.time.iso();
      if (group.lines > 1 && group.last.known()) note += ", last " + group.last.iso();
    }
    if (group.every_line_follows) note += ", each right after a line of a diagnosis above";
    // Only an unknown line's template is looked up: a known signature's line that no class
    // took is listed under its own name.
    if (suggester && group.unknown) {
      if (std::optional<Suggestion> nearest = suggester->Suggest(group.text)) {
        std::string like = nearest->example;  // a wrapped example is one line here
        std::replace(like.begin(), like.end(), '\n', ' ');
        note += fmt::format(R"(; probably {} (like: "{}"; similarity {:.2f}))",
                            nearest->failure->id, like, nearest->similarity);
      }
    }
    candidate.notes.push_back(note + " (e.g. " + group.first.path + ":" +
                              std::to_string(group.first.line) + ").");
  }
  if (groups.size() > kTemplatesListed) {
    candidate.notes.push_back(
        fmt::format("{} more templates ({} lines) are counted but not listed.",
                    groups.size() - kTemplatesListed, unlisted_lines));
  }

  std::string host = common_host(candidate.events);
  GpuRef gpu = candidate.events.front()->gpu;
  for (const Event* event : candidate.events) {
    if (event->gpu.pci != gpu.pci) gpu = GpuRef{};
  }
  // Notes name values already; the braces of a template stay as they are.
  std::vector<std::string> notes = std::move(candidate.notes);
  Diagnosis diagnosis = make_diagnosis({std::move(candidate)}, host, gpu, context.memory);
  diagnosis.notes.insert(diagnosis.notes.begin(), notes.begin(), notes.end());
  diagnosis.severity = *severity;
  return diagnosis;
}

// The events that no diagnosis accounts for (the rule "nothing matched is lost"): not quiet
// (identity, boot, benign), not of a signature that a diagnosis has as evidence or that its
// class names, and, for a line that is part of another's report (context), not in an input
// where a diagnosis has evidence. Unrecognised lines are the last resort's own.
std::unordered_set<const Event*> unaccounted_events(const std::vector<const Event*>& events,
                                                    const std::vector<Diagnosis>& diagnoses,
                                                    const Knowledge& knowledge) {
  std::set<std::string, std::less<>> accounted;
  std::set<std::string, std::less<>> paths;
  for (const Diagnosis& diagnosis : diagnoses) {
    for (const Evidence& evidence : diagnosis.evidence) {
      accounted.emplace(evidence.signature.str());
      paths.emplace(evidence.path.str());
    }
    for (const Condition& condition : diagnosis.failure->supported_by) {
      if (!condition.signature.empty()) accounted.insert(condition.signature);
    }
  }
  std::set<std::string, std::less<>> last_resort;
  for (const FailureClass& failure : knowledge.classes) {
    if (!failure.last_resort) continue;
    for (const Condition& condition : failure.supported_by) last_resort.insert(condition.signature);
  }
  std::unordered_set<const Event*> out;
  for (const Event* event : events) {
    const std::string_view signature = event->signature.str();
    if (knowledge.quiet_signatures.contains(signature) || accounted.contains(signature) ||
        last_resort.contains(signature)) {
      continue;
    }
    if (knowledge.context_signatures.contains(signature) &&
        paths.contains(event->evidence.path.str())) {
      continue;
    }
    out.insert(event);
  }
  return out;
}

bool diagnosis_before(const Diagnosis& a, const Diagnosis& b) {
  if (a.failure->last_resort != b.failure->last_resort) return !a.failure->last_resort;
  if (a.severity != b.severity) return a.severity > b.severity;
  if (a.failure->priority != b.failure->priority) return a.failure->priority > b.failure->priority;
  if (a.confidence != b.confidence) return a.confidence > b.confidence;
  if (comparable(a.first_seen, b.first_seen)) return a.first_seen.seconds < b.first_seen.seconds;
  return false;
}

// Sorts `diagnoses` by diagnosis_before, keeping the order of equals. A fleet's are half a
// million, so the sort orders their indices and then moves each diagnosis once along the cycles
// of that permutation, instead of std::stable_sort's buffer of half the diagnoses.
void rank_in_place(std::vector<Diagnosis>* diagnoses) {
  std::vector<Diagnosis>& all = *diagnoses;
  std::vector<size_t> order(all.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return diagnosis_before(all[a], all[b]); });
  // order[i] is the index of the diagnosis that belongs at i.
  for (size_t start = 0; start < order.size(); ++start) {
    if (order[start] == start) continue;
    Diagnosis held = std::move(all[start]);
    size_t at = start;
    while (order[at] != start) {
      size_t from = order[at];
      all[at] = std::move(all[from]);
      order[at] = at;
      at = from;
    }
    all[at] = std::move(held);
    order[at] = at;
  }
}

// Whether `cause` can explain `symptom`: a class it is a symptom of, on the same GPU when both
// name one, else on the same host unless the symptom spans the job (an NCCL timeout on every
// rank follows one rank's failure wherever it ran); a job-wide class's diagnosis tied to one GPU
// (`per_rank`: a loss anomaly of a rank that logs its own loss) only on that GPU. A cause cannot
// begin after its symptom did (beyond the clocks' skew), nor end longer before it than the
// symptom's class allows.
bool explains(const Diagnosis& cause, const Diagnosis& symptom, double clock_skew) {
  const auto& causes = symptom.failure->symptom_of;
  if (&cause == &symptom ||
      std::find(causes.begin(), causes.end(), cause.failure->id) == causes.end()) {
    return false;
  }
  if (auto lead = seconds_between(cause.first_seen, symptom.first_seen);
      lead && *lead < -clock_skew) {
    return false;
  }
  if (const auto& within = symptom.failure->symptom_within) {
    const Timestamp& latest = cause.last_seen.known() ? cause.last_seen : cause.first_seen;
    auto lag = seconds_between(latest, symptom.first_seen);
    if (lag && *lag > *within + clock_skew) return false;
  }
  if (!symptom.gpu.pci.empty() && !cause.gpu.pci.empty()) {
    return symptom.gpu.pci == cause.gpu.pci && symptom.host == cause.host;
  }
  // A job-wide class tied to one GPU (a rank's own loss) is a symptom of that GPU's faults only.
  if (symptom.failure->job_wide && !symptom.gpu.pci.empty()) return false;
  return symptom.failure->job_wide || symptom.host.empty() || cause.host.empty() ||
         symptom.host == cause.host;
}

// What would settle an unexplained diagnosis: its host's kernel log when that was not given,
// else (when it names no GPU) the kernel logs of every host.
std::optional<std::string> missing_evidence(const Diagnosis& diagnosis,
                                            const Correlation& correlation) {
  const FailureClass& failure = *diagnosis.failure;
  const auto& logged = correlation.hosts_with_kernel_log;
  const bool host_logged = !diagnosis.host.empty() && logged.contains(diagnosis.host.str());
  if (!failure.missing_without_kernel_log.empty() && !diagnosis.host.empty() && !host_logged) {
    std::string ranks;
    for (int rank : diagnosis.ranks) ranks += (ranks.empty() ? "" : ", ") + std::to_string(rank);
    ranks = diagnosis.ranks.empty()       ? "its ranks"
            : diagnosis.ranks.size() == 1 ? "rank " + ranks
                                          : "ranks " + ranks;
    return fill_template(failure.missing_without_kernel_log,
                         [&](std::string_view name) -> std::optional<std::string> {
                           if (name == "ranks") return ranks;
                           if (name == "host") return diagnosis.host;
                           if (name == "gpu") {
                             return diagnosis.gpu.pci.empty() ? "<its GPU's address>"
                                                              : diagnosis.gpu.pci;
                           }
                           return std::nullopt;
                         });
  }
  if (diagnosis.gpu.pci.empty() && !failure.missing_without_gpu.empty()) {
    return fill_template(failure.missing_without_gpu,
                         [&](std::string_view name) -> std::optional<std::string> {
                           if (name != "host") return std::nullopt;
                           return diagnosis.host.empty() ? "each host" : diagnosis.host;
                         });
  }
  return std::nullopt;
}

// The diagnoses that may explain a symptom, looked up rather than searched for: a fabric or
// power event can give one diagnosis per GPU of a fleet, and comparing each with every other
// would make linking quadratic. Each list holds diagnoses sorted by a key (their class, then
// their host and GPU where `explains` requires a cause to share them) and then by rank, so the
// diagnoses of one key are a run in rank order, found by binary search.
class CauseIndex {
 public:
  using Run = std::span<const uint32_t>;

  explicit CauseIndex(const std::vector<Diagnosis>& diagnoses) : diagnoses_(diagnoses) {
    for (uint32_t i = 0; i < diagnoses.size(); ++i) {
      const bool has_gpu = !diagnoses[i].gpu.pci.empty();
      for (List* list : {&by_class_, &by_host_}) list->indices.push_back(i);
      for (List* list : {&without_gpu_by_class_, &without_gpu_by_host_}) {
        if (!has_gpu) list->indices.push_back(i);
      }
      if (has_gpu) by_gpu_.indices.push_back(i);
    }
    for (List* list :
         {&by_class_, &by_host_, &without_gpu_by_class_, &without_gpu_by_host_, &by_gpu_}) {
      std::sort(list->indices.begin(), list->indices.end(), [&](uint32_t a, uint32_t b) {
        return std::pair(KeyOf(a, list->part), a) < std::pair(KeyOf(b, list->part), b);
      });
    }
  }

  // The runs that hold every diagnosis of class `id` that can explain `symptom` (and others).
  std::vector<Run> Runs(std::string_view id, const Diagnosis& symptom) const {
    const std::string_view host = symptom.host;
    if (!symptom.gpu.pci.empty()) {
      std::vector<Run> runs{Find(by_gpu_, {id, host, symptom.gpu.pci})};
      if (!symptom.failure->job_wide && host.empty()) {
        runs.push_back(Find(without_gpu_by_class_, {id, {}, {}}));
      }
      if (!symptom.failure->job_wide && !host.empty()) {
        runs.push_back(Find(without_gpu_by_host_, {id, host, {}}));
        runs.push_back(Find(without_gpu_by_host_, {id, {}, {}}));
      }
      return runs;
    }
    if (symptom.failure->job_wide || host.empty()) return {Find(by_class_, {id, {}, {}})};
    return {Find(by_host_, {id, host, {}}), Find(by_host_, {id, {}, {}})};
  }

 private:
  // How much of a diagnosis's (class, host, GPU) a list is keyed by.
  enum class Part { kClass, kHost, kGpu };
  using Key = std::tuple<std::string_view, std::string_view, std::string_view>;
  struct List {
    Part part;
    std::vector<uint32_t> indices;
  };

  Key KeyOf(uint32_t i, Part part) const {
    const Diagnosis& d = diagnoses_[i];
    return {d.failure->id, part == Part::kClass ? std::string_view() : d.host.str(),
            part == Part::kGpu ? std::string_view(d.gpu.pci) : std::string_view()};
  }

  Run Find(const List& list, const Key& key) const {
    // Compares a diagnosis's key with `key`, either way round (std::equal_range does both).
    struct ByKey {
      const CauseIndex& index;
      Part part;
      bool operator()(uint32_t i, const Key& k) const { return index.KeyOf(i, part) < k; }
      bool operator()(const Key& k, uint32_t i) const { return k < index.KeyOf(i, part); }
    };
    const auto [first, last] =
        std::equal_range(list.indices.begin(), list.indices.end(), key, ByKey{*this, list.part});
    return {first, last};
  }

  const std::vector<Diagnosis>& diagnoses_;
  List by_class_{Part::kClass, {}};
  List by_host_{Part::kHost, {}};
  List without_gpu_by_class_{Part::kClass, {}};
  List without_gpu_by_host_{Part::kHost, {}};
  List by_gpu_{Part::kGpu, {}};
};

// A symptom (the job's CUDA error) is collateral to the diagnosis that explains it, the first
// in rank order; its cause is the initiating one.
void link_symptoms(const Correlation& correlation, std::vector<Diagnosis>* diagnoses) {
  const CauseIndex index(*diagnoses);
  for (Diagnosis& symptom : *diagnoses) {
    std::optional<size_t> first;
    for (const std::string& id : symptom.failure->symptom_of) {
      for (const CauseIndex::Run run : index.Runs(id, symptom)) {
        for (size_t i : run) {
          if (first && i >= *first) break;
          if (explains((*diagnoses)[i], symptom, correlation.clock_skew_seconds)) {
            first = i;
            break;
          }
        }
      }
    }
    if (!first) continue;
    symptom.role = Role::kCollateral;
    symptom.caused_by = (*diagnoses)[*first].position;
  }
  for (Diagnosis& diagnosis : *diagnoses) {
    if (diagnosis.caused_by) (*diagnoses)[*diagnosis.caused_by - 1].role = Role::kInitiating;
  }
  // A cause that is itself collateral hands its symptoms to its own cause.
  for (Diagnosis& diagnosis : *diagnoses) {
    for (int hops = 0; diagnosis.caused_by && hops < 8; ++hops) {
      const Diagnosis& cause = (*diagnoses)[*diagnosis.caused_by - 1];
      if (!cause.caused_by) break;
      diagnosis.caused_by = cause.caused_by;
    }
  }
  for (Diagnosis& diagnosis : *diagnoses) {
    if (diagnosis.caused_by && diagnosis.role == Role::kInitiating)
      diagnosis.role = Role::kCollateral;
    // Unexplained: say what would rule hardware in or out.
    if (diagnosis.role == Role::kCollateral) continue;
    if (auto missing = missing_evidence(diagnosis, correlation)) {
      diagnosis.missing.emplace_back(std::move(*missing));
    }
  }
}

// Moves each collateral diagnosis that ranked above its cause (a CUDA error, at error, caused by
// an Xid 13 at warning) to just after it: the report opens on the initiating failure. Positions
// and causes are renumbered.
void causes_first(std::vector<Diagnosis>* diagnoses) {
  const auto before_cause = [&](const Diagnosis& d) {
    return d.caused_by && *d.caused_by > d.position;
  };
  if (std::none_of(diagnoses->begin(), diagnoses->end(), before_cause)) return;
  std::vector<Diagnosis> ordered;
  ordered.reserve(diagnoses->size());
  std::vector<bool> placed(diagnoses->size(), false);
  const auto place = [&](size_t i) {
    if (!placed[i]) ordered.push_back(std::move((*diagnoses)[i]));
    placed[i] = true;
  };
  for (size_t i = 0; i < diagnoses->size(); ++i) {
    const Diagnosis& d = (*diagnoses)[i];
    if (placed[i] || before_cause(d)) continue;
    const int position = d.position;
    place(i);
    for (size_t j = 0; j < i; ++j) {
      if (!placed[j] && (*diagnoses)[j].caused_by == position) place(j);
    }
  }
  for (size_t i = 0; i < diagnoses->size(); ++i) place(i);
  std::map<int, int> renumbered;
  for (size_t i = 0; i < ordered.size(); ++i) {
    renumbered[ordered[i].position] = static_cast<int>(i) + 1;
  }
  for (Diagnosis& d : ordered) {
    d.position = renumbered[d.position];
    if (d.caused_by) d.caused_by = renumbered[*d.caused_by];
  }
  *diagnoses = std::move(ordered);
}

// Makes the diagnosis's texts the pool's: a fleet's 100,000 GPUs get 500,000 diagnoses whose
// filled fixes, steps and notes are mostly the same few thousand texts.
void share_texts(Diagnosis* diagnosis, TextPool* pool) {
  pool->Share(&diagnosis->host);
  for (SharedText& text : diagnosis->fix) pool->Share(&text);
  for (SharedText& text : diagnosis->missing) pool->Share(&text);
  for (SharedText& text : diagnosis->notes) pool->Share(&text);
  for (VerifyStep& step : diagnosis->verify) {
    pool->Share(&step.command);
    pool->Share(&step.expect);
  }
}

}  // namespace

std::vector<Diagnosis> diagnose(const Correlation& correlation, const Knowledge& knowledge,
                                const Suggester* suggester) {
  std::vector<Diagnosis> diagnoses;
  TextPool pool;
  for (const GpuFindings& findings : correlation.gpus) {
    for (Diagnosis& diagnosis : diagnose_gpu(findings, knowledge)) {
      share_texts(&diagnosis, &pool);
      diagnoses.push_back(std::move(diagnosis));
    }
  }
  for (Diagnosis& diagnosis : diagnose_without_gpu(correlation, knowledge)) {
    diagnoses.push_back(std::move(diagnosis));
  }
  std::vector<const Event*> events(correlation.without_gpu.begin(), correlation.without_gpu.end());
  for (const GpuFindings& findings : correlation.gpus) {
    events.insert(events.end(), findings.events.begin(), findings.events.end());
  }
  // The signatures of the lines the diagnoses so far stand for: those of their evidence and
  // those their classes name.
  std::set<std::string> explained;
  std::set<EvidenceKey> taken;
  for (const Diagnosis& diagnosis : diagnoses) {
    for (const Evidence& evidence : diagnosis.evidence) {
      taken.emplace(evidence.path.str(), evidence.line, evidence.signature);
    }
    if (diagnosis.severity < Severity::kWarning) continue;
    for (const Evidence& evidence : diagnosis.evidence) explained.insert(evidence.signature);
    for (const Condition& condition : diagnosis.failure->supported_by) {
      if (!condition.signature.empty()) explained.insert(condition.signature);
    }
  }
  const std::unordered_set<const Event*> unaccounted =
      unaccounted_events(events, diagnoses, knowledge);
  for (const FailureClass& failure : knowledge.classes) {
    if (!failure.last_resort) continue;
    if (auto diagnosis = diagnose_last_resort(failure, events, explained, taken, unaccounted,
                                              knowledge, suggester)) {
      diagnoses.push_back(std::move(*diagnosis));
    }
  }
  rank_in_place(&diagnoses);
  for (size_t i = 0; i < diagnoses.size(); ++i) diagnoses[i].position = static_cast<int>(i) + 1;
  link_symptoms(correlation, &diagnoses);
  causes_first(&diagnoses);
  for (Diagnosis& diagnosis : diagnoses) {
    for (Evidence& evidence : diagnosis.evidence)
      evidence.lane = knowledge.lane_of(evidence.signature);
  }
  return diagnoses;
}

std::string_view role_name(Role role) {
  switch (role) {
    case Role::kStandalone:
      return "standalone";
    case Role::kInitiating:
      return "initiating";
    case Role::kCollateral:
      return "collateral";
  }
  return "";
}

}  // namespace faultline
