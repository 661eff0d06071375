#include <algorithm>
#include <array>
#include <charconv>
#include <iterator>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "catalog/signatures.h"
#include "envelope/envelope.h"
#include "extract/extract.h"
#include "extract/repeats.h"
#include "extract/unrecognised.h"
#include "metrics/metrics.h"
#include "model/captures.h"
#include "model/text.h"
#include "sniff/sniff.h"
#include "state/state.h"

namespace faultline {
namespace {

// Events of one kind kept per input; beyond this a flood is only counted.
constexpr uint64_t kMaxEventsPerKind = 1000;

// Lines remembered so that their repeats, a flood's lines, are counted without matching them.
constexpr size_t kRememberedLines = 8;

// The first lines of an input whose envelopes are read for its host, and how much of each.
constexpr uint64_t kHostLines = 200;
constexpr size_t kHostPrefixReach = 160;

// How far back a signature that takes its GPU from the previous lines may look.
constexpr uint64_t kPreviousLineReach = 3;

// Templates of unrecognised lines kept per input; lines of any further one share one group.
// Of each, its first line and its latest (counting those between) are enough to report it.
constexpr size_t kMaxTemplates = 200;
constexpr uint64_t kMaxEventsPerTemplate = 2;
// An unrecognised line is the companion of the recognised fault line before it (the rest of its
// report, traceback or stack frames) when it comes at most kCompanionReach lines after it, with
// no gap longer than kCompanionGap lines without a matched line since.
constexpr uint64_t kCompanionReach = 200;
constexpr uint64_t kCompanionGap = 12;

// How far a kernel's time since boot may fall back before it is read as a reboot: lines of one
// boot printed out of order by a second or so stay in it.
constexpr double kUptimeSlack = 5;

// Whether `line` is shaped like a line of a tool's output rather than a message: a table row
// (three or more '|'), "key : value" (a space on each side of the colon, as nvidia-smi -q and
// dcgmi print), or columns aligned by runs of two or more spaces between values (two or more
// such runs past the indentation).
bool tool_like(std::string_view line) {
  size_t bars = 0;
  size_t gaps = 0;
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos) return false;
  for (; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '|') {
      if (++bars >= 3) return true;
    } else if (c == ':' && i > 0 && line[i - 1] == ' ' && i + 1 < line.size() &&
               line[i + 1] == ' ') {
      return true;
    } else if (c == ' ' && i + 1 < line.size() && line[i + 1] == ' ') {
      while (i + 1 < line.size() && line[i + 1] == ' ') ++i;
      if (i + 1 < line.size() && ++gaps >= 2) return true;
    }
  }
  return false;
}

// Turns matches into events, remembering what the previous lines said.
class EventBuilder {
 public:
  EventBuilder(const std::string& path, const ScanOptions& options)
      : path_(path), options_(options), year_(options.year), path_rank_(global_rank(path)) {
    if (auto tag = rank_from_path(path); tag && tag->is_local) path_local_rank_ = tag;
  }

  // `journal` is the envelope of a journal record whose message `line` holds, else null: the
  // envelope is then read from the line before the match. `shown` is the evidence text when it
  // is not the line's own (a wrapped message's lines).
  void Add(const Line& line, const SignatureMatch& match, const LinePrefix* journal,
           std::vector<Event>* events, std::string_view shown = {}) {
    const Signature& signature = *match.signature;
    if (signature.boot) {
      ++boot_;
      last_uptime_.reset();
      ForgetRepeats();
      line_repeatable_ = false;
      return;
    }
    // Their events depend on the lines around them, not on the line alone.
    if (signature.unrecognised || signature.gpu_from_previous_line) line_repeatable_ = false;
    if (signature.unrecognised && CountFlooded(line, match, journal, events)) return;
    Event event;
    event.signature = signature.id;
    event.xid = signature.xid;
    for (const auto& [name, value] : match.fields) {
      if (name == capture::kPci) {
        event.gpu.pci = normalize_pci(value);
      } else if (name == capture::kXid) {
        event.xid = parse_number<int>(value);
      } else if (name == capture::kUuid) {
        event.gpu.uuid = value;
      } else if (name == capture::kSerial) {
        event.gpu.serial = value;
      } else if (name == capture::kRank) {
        event.rank = parse_number<int>(value);
      }
      event.fields.set(name, value);
    }
    for (const auto& [name, value] : signature.sets) event.fields.set(name, value);
    // The line's own rank tag ("[rank3]:"), else the rank its file is named after. A node-local
    // rank (torchrun's "[default3]:") is kept too: with the host it names a global rank.
    const auto tag = parse_rank_prefixes(line.text);
    if (!event.rank)
      event.rank = tag && !tag->is_local ? std::optional<int>(tag->rank) : path_rank_;
    const auto local = tag && tag->is_local ? tag : path_local_rank_;
    if (local && !(tag && !tag->is_local))
      event.fields.set(capture::kLocalRank, std::to_string(local->rank));
    if (signature.unrecognised) {
      event.fields.set(capture::kTemplate, Template(line.text));
      event.gpu.pci = extract_internal::driver_line_gpu(line.text);
      if (Follows(line)) event.fields.set(capture::kFollows, last_recognised_);
    } else if (!signature.identity && !signature.context) {
      last_recognised_ = signature.id;
      last_recognised_line_ = line.number;
    }
    last_report_line_ = line.number;
    if (event.gpu.pci.empty() && signature.gpu_from_previous_line &&
        line.number - last_pci_line_ <= kPreviousLineReach) {
      event.gpu.pci = last_pci_;
    }
    if (!event.gpu.pci.empty()) {
      last_pci_ = event.gpu.pci;
      last_pci_line_ = line.number;
    }

    const LinePrefix envelope = Envelope(line, match, journal);
    // "" until the end, when the input's own host is known, unless a shell prompt before the
    // line named the host it was printed on, and the line names none of its own further in
    // (NCCL's "host:pid:tid [dev]", which a match may take in).
    event.host = Host(envelope.host);
    if (event.host.empty() && !journal) {
      event.host = PromptHostAt(line.number);
      if (!event.host.empty()) {
        std::string own = parse_prefix(line.text.substr(0, kHostPrefixReach), year_).host;
        if (!own.empty()) event.host = own;
      }
    }
    if (!envelope.host.empty() && named_hosts_.size() < 2) named_hosts_.insert(envelope.host);
    event.evidence = {path_, line.number, envelope.time,
                      std::string(shown.empty() ? line.text : shown), signature.id};
    NoteUptime(envelope);
    if (boot_ > 0) event.fields.set(capture::kBoot, std::to_string(boot_));
    if (envelope.boot_seconds && envelope.time.kind == Timestamp::Kind::kAbsolute) {
      event.fields.set(capture::kBootSeconds, std::to_string(*envelope.boot_seconds));
    }
    Keep(std::move(event), events);
  }

  // Notes the host a line's envelope names, for InputHost(); a clean log has no events that
  // would name it.
  void NoteHost(std::string_view text, const LinePrefix* journal) {
    if (named_hosts_.size() >= 2) return;
    const std::string host =
        journal ? journal->host : parse_prefix(text.substr(0, kHostPrefixReach), year_).host;
    if (!host.empty()) named_hosts_.insert(host);
  }

  // Notes a shell prompt's host: the lines after it, up to the next prompt, were printed there.
  void NotePrompt(std::string_view host, uint64_t line_number) {
    if (prompt_hosts_.empty() || prompt_hosts_.back().second != host) {
      prompt_hosts_.emplace_back(line_number, std::string(host));
      ForgetRepeats();  // the lines after it belong to another host
    }
  }

  // Starts the events of one line: EndLine() then remembers what they were.
  void BeginLine() {
    line_floods_.clear();
    line_outcome_.clear();
    line_repeatable_ = true;
  }

  // Remembers a line whose events are now kept, its message starting at `message`, unless
  // they depend on more than the line.
  void EndLine(const Line& line, size_t message) {
    if (!line_repeatable_ || line_floods_.empty()) return;
    Remembered* slot = &remembered_.front();
    for (Remembered& remembered : remembered_) {
      if (remembered.line.SameMessage(line.text, message)) {
        slot = &remembered;
        break;
      }
      if (remembered.used < slot->used) slot = &remembered;
    }
    slot->line.Remember(line.text, message, line_outcome_);
    slot->floods = line_floods_;
    slot->recognised.reset();
    if (last_recognised_line_ == line.number) slot->recognised = last_recognised_;
    slot->pci.reset();
    if (last_pci_line_ == line.number) slot->pci = last_pci_;
    slot->used = ++uses_;
  }

  // Counts `line` if it repeats a remembered line (RepeatedLine) whose kinds have flooded and
  // whose events are their latest: the slow path would only replace each latest event by one
  // that differs in its line and time. Its time is read when the run of repeats ends
  // (SettleRepeats). False if the line is to be read in full.
  bool CountRepeat(const Line& line, std::vector<Event>* events) {
    for (Remembered& remembered : remembered_) {
      if (remembered.floods.empty() || !remembered.line.Repeats(line.text)) continue;
      const size_t message = remembered.line.message();
      for (const Flood* flood : remembered.floods) {
        const std::string_view latest = (*events)[flood->latest].evidence.text;
        if (flood->lines < kMaxEventsPerKind || !remembered.line.SameMessage(latest, message)) {
          return false;
        }
      }
      remembered.line.Advance(line.text);
      remembered.used = ++uses_;
      for (Flood* flood : remembered.floods) {
        ++flood->lines;
        Event& latest = (*events)[flood->latest];
        ++latest.count;
        latest.evidence.line = line.number;
        latest.evidence.text.assign(line.text);
        if (flood->prefix_length == 0) unsettled_.push_back(flood);
        flood->prefix_length = message;
      }
      if (remembered.recognised) {
        last_recognised_ = *remembered.recognised;
        last_recognised_line_ = line.number;
      }
      if (remembered.pci) {
        last_pci_ = *remembered.pci;
        last_pci_line_ = line.number;
      }
      last_report_line_ = line.number;
      repeat_prefix_.assign(line.text.substr(0, message));
      repeating_ = true;
      return true;
    }
    return false;
  }

  // Ends a run of repeats: their kinds' latest events get the time of their line, and the
  // clock moves on to the last one's.
  void SettleRepeats(std::vector<Event>* events) {
    if (!repeating_) return;
    repeating_ = false;
    const LinePrefix envelope = ReadEnvelope(repeat_prefix_);
    for (Flood* flood : unsettled_) SettleTime(flood, events);
    unsettled_.clear();
    NoteUptime(envelope);
  }

  // The host the latest shell prompt before line `line_number` named, or "".
  std::string PromptHostAt(uint64_t line_number) const {
    auto after =
        std::upper_bound(prompt_hosts_.begin(), prompt_hosts_.end(), line_number,
                         [](uint64_t number, const std::pair<uint64_t, std::string>& prompt) {
                           return number < prompt.first;
                         });
    return after == prompt_hosts_.begin() ? "" : std::prev(after)->second;
  }

  // The times of the latest lines of flooded kinds, which CountFlooded and CountRepeat left.
  void SettleTimes(std::vector<Event>* events) {
    SettleRepeats(events);
    for (auto& [name, kind] : floods_) SettleTime(&kind, events);
  }

  // The host of lines that name none: the one host the input names itself (its syslog or NCCL
  // prefixes), which is more specific than the caller's (a folder's name), else the caller's.
  std::string InputHost() const {
    return named_hosts_.size() == 1 ? *named_hosts_.begin() : options_.host;
  }

  // Whether the event at `index` is the latest of a flooded kind, which counts (and so changes
  // with) the lines of its kind still to come.
  bool Counting(size_t index) const { return counting_.contains(index); }

 private:
  struct Flood {
    uint64_t lines = 0;
    size_t latest = 0;               // index of the kind's latest stored event
    bool every_line_follows = true;  // each line came right after a recognised one (kFollows)
    size_t prefix_length = 0;        // of the latest line's envelope, whose time is not read yet
  };

  // A line read in full whose repeats CountRepeat counts: the kinds of its events, and what it
  // left for the lines after it.
  struct Remembered {
    extract_internal::RepeatedLine line;
    std::vector<Flood*> floods;             // into floods_, whose nodes stay put
    std::optional<std::string> recognised;  // last_recognised_ after it, if it set it
    std::optional<std::string> pci;         // last_pci_ after it, if it set it
    uint64_t used = 0;                      // when last remembered or counted
  };

  // What stands before the match, or the journal record's envelope.
  LinePrefix Envelope(const Line& line, const SignatureMatch& match, const LinePrefix* journal) {
    if (journal) return *journal;
    return ReadEnvelope(line.text.substr(0, match.begin));
  }

  LinePrefix ReadEnvelope(std::string_view prefix) {
    if (auto year = find_year(prefix)) {
      year_ = *year;
      year_from_input_ = true;
    }
    LinePrefix envelope = parse_prefix(prefix, year_);
    if (year_from_input_) envelope.time.year_assumed = false;
    return envelope;
  }

  // The time of a flooded kind's latest line, when it was left to be read.
  void SettleTime(Flood* kind, std::vector<Event>* events) const {
    if (kind->prefix_length == 0) return;
    Event& latest = (*events)[kind->latest];
    const LinePrefix envelope =
        parse_prefix(std::string_view(latest.evidence.text).substr(0, kind->prefix_length), year_);
    latest.evidence.time = envelope.time;
    if (year_from_input_) latest.evidence.time.year_assumed = false;
    if (latest.fields.contains(capture::kBootSeconds) && envelope.boot_seconds) {
      latest.fields.set(capture::kBootSeconds, std::to_string(*envelope.boot_seconds));
    }
    kind->prefix_length = 0;
  }

  void ForgetRepeats() {
    for (Remembered& remembered : remembered_) {
      remembered.line.Forget();
      remembered.floods.clear();
    }
  }

  // A kernel's time since boot that falls back by more than kUptimeSlack seconds is a new
  // boot of the machine (a dmesg or kmsg log that spans a reboot).
  void NoteUptime(const LinePrefix& envelope) {
    std::optional<double> uptime = envelope.boot_seconds;
    if (!uptime && envelope.time.kind == Timestamp::Kind::kBootRelative) {
      uptime = envelope.time.seconds;
    }
    if (!uptime) return;
    if (last_uptime_ && *uptime + kUptimeSlack < *last_uptime_) {
      ++boot_;
      ForgetRepeats();
    }
    last_uptime_ = uptime;
  }

  // Whether an unrecognised line is the companion of the recognised fault line before it.
  bool Follows(const Line& line) const {
    return !last_recognised_.empty() && line.number - last_recognised_line_ <= kCompanionReach &&
           line.number - last_report_line_ <= kCompanionGap;
  }

  // The kind an event is kept by: an unrecognised line's by its signature and template alone.
  static std::string KindOf(const Event& event) {
    if (auto it = event.fields.find(capture::kTemplate); it != event.fields.end()) {
      return event.signature + '\n' + std::string(it->second);
    }
    return event.signature + '\n' + event.host + '\n' + event.gpu.pci;
  }

  // An unrecognised line of a template that has flooded this input only moves the kind's
  // latest event on (its count, line and time): the rest of what it would say, the kind says.
  // Returns false when the line is to be an event of its own.
  bool CountFlooded(const Line& line, const SignatureMatch& match, const LinePrefix* journal,
                    std::vector<Event>* events) {
    // The key is built in a buffer of its own, reused: a flood's lines allocate nothing.
    flood_key_.assign(match.signature->id).append(1, '\n').append(Template(line.text));
    auto flood = floods_.find(flood_key_);
    if (flood == floods_.end() || flood->second.lines < kMaxEventsPerTemplate) return false;
    Flood& kind = flood->second;
    ++kind.lines;
    kind.every_line_follows = kind.every_line_follows && Follows(line);
    last_report_line_ = line.number;
    Event& latest = (*events)[kind.latest];
    ++latest.count;
    if (!kind.every_line_follows) latest.fields.erase(std::string(capture::kFollows));
    latest.evidence.line = line.number;
    latest.evidence.text.assign(line.text);  // its buffer reused
    // The time is read once, of the last line (SettleTimes): most of a flood never needs it.
    if (journal) {
      latest.evidence.time = journal->time;
      kind.prefix_length = 0;
    } else {
      kind.prefix_length = match.begin;
    }
    return true;
  }

  // The template an unrecognised line is grouped by; past kMaxTemplates, one for all others.
  // The reference holds until the next call.
  const std::string& Template(std::string_view text) {
    static const std::string kFurther = "(lines of further templates)";
    const std::string& found = template_memo_.Of(text);
    if (templates_.contains(found)) return found;
    if (templates_.size() >= kMaxTemplates) return kFurther;
    templates_.insert(found);
    return found;
  }

  // Stores the event, unless its kind (KindOf) has flooded this input: then it replaces the
  // kind's latest event, which counts the lines it stands for.
  void Keep(Event event, std::vector<Event>* events) {
    const bool unrecognised = event.fields.contains(std::string(capture::kTemplate));
    const uint64_t kept = unrecognised ? kMaxEventsPerTemplate : kMaxEventsPerKind;
    const std::string kind = KindOf(event);
    Flood& flood = floods_[kind];
    NoteOutcome(kind, event, &flood);
    flood.every_line_follows =
        flood.every_line_follows && event.fields.contains(std::string(capture::kFollows));
    if (++flood.lines <= kept) {
      flood.latest = events->size();
      if (flood.lines == kept) counting_.insert(flood.latest);
      events->push_back(std::move(event));
      return;
    }
    Event& latest = (*events)[flood.latest];
    event.count = latest.count + 1;
    if (!flood.every_line_follows) event.fields.erase(std::string(capture::kFollows));
    latest = std::move(event);
    flood.prefix_length = 0;  // its time is read
  }

  // Notes what a line's event was, but for its time, for EndLine().
  void NoteOutcome(const std::string& kind, const Event& event, Flood* flood) {
    const auto field = [&](std::string_view name) {
      auto it = event.fields.find(name);
      return it == event.fields.end() ? std::string() : std::string(it->second);
    };
    line_outcome_ += kind;
    line_outcome_ += '\n' + (event.rank ? std::to_string(*event.rank) : std::string()) + '\n' +
                     field(capture::kLocalRank) + '\n' + field(capture::kBoot) + '\n' + event.host +
                     '\x1e';
    line_floods_.push_back(flood);
  }

  static std::optional<int> global_rank(const std::string& path) {
    auto tag = rank_from_path(path);
    return tag && !tag->is_local ? std::optional<int>(tag->rank) : std::nullopt;
  }

  // The input's path and the latest host, shared by the events that name them.
  SharedText Host(const std::string& name) {
    if (last_host_ != name) last_host_ = name;
    return last_host_;
  }

  SharedText path_;
  SharedText last_host_;
  const ScanOptions& options_;
  std::unordered_map<std::string, Flood> floods_;
  int year_;
  std::optional<int> path_rank_;
  std::optional<RankTag> path_local_rank_;  // torchrun --log-dir's "<local_rank>/stdout.log"
  bool year_from_input_ = false;            // a full date earlier in this input gave the year
  std::string last_pci_;
  uint64_t last_pci_line_ = 0;
  std::string last_recognised_;  // the signature of the latest recognised fault line
  uint64_t last_recognised_line_ = 0;
  uint64_t last_report_line_ = 0;      // the latest line any signature matched
  std::set<std::string> named_hosts_;  // at most two: enough to tell one host from several
  // Shell prompts pasted with the lines: (line number, host), in input order.
  std::vector<std::pair<uint64_t, std::string>> prompt_hosts_;
  std::unordered_set<std::string> templates_;  // of unrecognised lines, at most kMaxTemplates
  std::unordered_set<size_t> counting_;        // indexes of the kinds' latest, flooded events
  std::string flood_key_;                      // CountFlooded's, its buffer reused
  // Boots of the machine seen so far in this input (boot markers, uptime falling back); 0
  // until the input shows one.
  int boot_ = 0;
  std::optional<double> last_uptime_;
  extract_internal::TemplateMemo template_memo_;
  // Repeats: the remembered lines, what the line being read gave, and the run being counted.
  std::array<Remembered, kRememberedLines> remembered_;
  uint64_t uses_ = 0;
  std::vector<Flood*> line_floods_;
  std::string line_outcome_;
  bool line_repeatable_ = true;
  std::vector<Flood*> unsettled_;  // kinds whose latest time CountRepeat left unread
  std::string repeat_prefix_;      // the envelope of the run's latest line
  bool repeating_ = false;
};

// A line that may start a wrapped message ("continues"), with the lines after it, each held
// back with its own matches until the message is complete or the look-ahead is spent.
class WrappedMessage {
 public:
  bool active() const { return !heads_.empty(); }

  void Start(const Line& line, std::vector<const Signature*> heads,
             const std::vector<SignatureMatch>& matches) {
    heads_ = std::move(heads);
    reach_ = 0;
    for (const Signature* head : heads_) reach_ = std::max(reach_, head->continuation_lines);
    held_.clear();
    Hold(line, matches);
  }

  // Adds the next line; true if the held lines now complete one of the heads' messages.
  bool Complete(const Line& line, const std::vector<SignatureMatch>& matches) {
    Hold(line, matches);
    std::vector<std::string_view> lines;
    for (const HeldLine& held : held_) lines.push_back(held.text);
    // A launcher tags every line it forwards ("[rank3]: "): the message is what follows.
    for (size_t i = 1; i < lines.size(); ++i) {
      if (auto tag = parse_rank_prefixes(lines[i])) lines[i].remove_prefix(tag->prefix_length);
    }
    for (const Signature* head : heads_) {
      if (lines.size() - 1 > head->continuation_lines) continue;
      if (match_wrapped(*head, lines, &joined_, &match_)) return true;
    }
    return false;
  }

  // Whether another line may still complete the message.
  bool Open() const { return held_.size() - 1 < reach_; }

  // The completed message: one event on the head's line whose evidence shows every line, and
  // the head line's own recognised matches; the other lines' matches were parts of it.
  void Emit(EventBuilder* builder, std::vector<Event>* events) {
    std::string shown;
    for (const HeldLine& held : held_) {
      if (!shown.empty()) shown += '\n';
      shown += held.text;
    }
    const HeldLine& head = held_.front();
    builder->Add({joined_, head.number}, match_, nullptr, events, shown);
    for (const SignatureMatch& match : head.matches) {
      if (match.signature->fallback || match.signature->unrecognised) continue;
      builder->Add({head.text, head.number}, match, nullptr, events);
    }
    heads_.clear();
  }

  // The held lines as lines of their own, all but the last if `keep_last` (it is read anew).
  void Release(EventBuilder* builder, std::vector<Event>* events, bool keep_last) {
    const size_t count = held_.size() - (keep_last ? 1 : 0);
    for (size_t i = 0; i < count; ++i) {
      for (const SignatureMatch& match : held_[i].matches) {
        builder->Add({held_[i].text, held_[i].number}, match, nullptr, events);
      }
    }
    heads_.clear();
  }

 private:
  struct HeldLine {
    std::string text;
    uint64_t number;
    std::vector<SignatureMatch> matches;
  };

  void Hold(const Line& line, const std::vector<SignatureMatch>& matches) {
    held_.push_back({std::string(line.text), line.number, matches});
  }

  std::vector<const Signature*> heads_;
  size_t reach_ = 0;
  std::vector<HeldLine> held_;  // the head first; at most kMaxContinuationLines + 1
  std::string joined_;
  SignatureMatch match_;
};

}  // namespace

ScanResult scan_input(LineReader& reader, const SignatureSet& signatures,
                      const ScanOptions& options) {
  ScanResult result;
  KindSniffer sniffer;
  StateReader states(reader.path());
  MetricsReader metrics(reader.path(), "");  // the input's host is known only at its end
  EventBuilder builder(reader.path(), options);
  std::vector<SignatureMatch> matches;
  std::vector<const Signature*> heads;
  WrappedMessage wrapped;
  bool kernel_log = false;  // decided so by the sniffer
  size_t examined = 0;      // events before it were handed to on_event, or are counting
  uint64_t understood = 0;  // lines a signature or a dump reader took (metric lines at the end)
  uint64_t tool_like_lines = 0;
  const auto hand_over = [&](Event& event) {
    if (event.host.empty()) event.host = builder.InputHost();
    options.on_event(event);
    event = Event{};  // its place is kept: flooded kinds refer to their events by index
  };
  Line read;
  while (true) {
    if (options.on_event) {
      for (; examined < result.events.size(); ++examined) {
        if (!builder.Counting(examined)) hand_over(result.events[examined]);
      }
    }
    if (!reader.Next(&read)) break;
    // journalctl -o json: the record's message is what the readers and signatures see.
    const std::optional<JournalRecord> journal = parse_journal_json(read.text);
    const Line line = journal ? Line{journal->message, read.number} : read;
    const LinePrefix* envelope = journal ? &journal->envelope : nullptr;
    if (line.number <= kHostLines) builder.NoteHost(line.text, envelope);
    if (!journal) {
      if (auto host = prompt_host(line.text)) builder.NotePrompt(*host, line.number);
    }
    states.Feed(line.text, line.number);
    sniffer.Observe(line.text, states.InDump());
    if (states.InDump()) ++understood;
    // Only an input that nothing was understood of yet may need naming as not understood.
    if (understood == 0 && !kernel_log && tool_like_lines < InputSummary::kToolLikeLines &&
        tool_like(line.text)) {
      ++tool_like_lines;
    }
    // A kernel log holds no training metrics: once that is clear, stop looking for them.
    if (!kernel_log) kernel_log = sniffer.decided() && sniffer.kind() == InputKind::kKernelLog;
    if (!kernel_log) metrics.Feed(line.text, line.number);
    // A flood's line that repeats one read in full costs no more than a line that matches
    // nothing.
    if (!journal && !wrapped.active() && !states.InDump() &&
        builder.CountRepeat(line, &result.events)) {
      ++understood;
      continue;
    }
    builder.SettleRepeats(&result.events);
    matches.clear();
    heads.clear();
    signatures.Match(line.text, &matches, &heads);
    // A device dump's words ("ECC Errors") are its fields, which the state readers take; an
    // error word inside a path or a quoted string, or a negated one, does not make a line an error.
    std::erase_if(matches, [&](const SignatureMatch& m) {
      return m.signature->unrecognised &&
             (states.InDump() ||
              !extract_internal::error_like_after_masks(line.text, *m.signature));
    });
    // A journal record is one message: never the head of a wrapped one.
    if (journal) heads.clear();
    if (wrapped.active()) {
      if (wrapped.Complete(line, matches)) {
        wrapped.Emit(&builder, &result.events);
        continue;
      }
      if (wrapped.Open()) continue;
      wrapped.Release(&builder, &result.events, /*keep_last=*/true);
    }
    if (!heads.empty()) {
      wrapped.Start(line, std::move(heads), matches);
      heads.clear();
      continue;
    }
    if (matches.empty()) continue;
    if (!states.InDump() &&
        std::any_of(matches.begin(), matches.end(), [](const SignatureMatch& m) {
          return !m.signature->unrecognised || m.signature->benign;
        })) {
      ++understood;
    }
    builder.BeginLine();
    size_t message = line.text.size();
    for (const SignatureMatch& match : matches) {
      builder.Add(line, match, envelope, &result.events);
      message = std::min(message, match.begin);
    }
    if (!journal) builder.EndLine(line, message);
  }
  if (wrapped.active()) wrapped.Release(&builder, &result.events, /*keep_last=*/false);
  builder.SettleTimes(&result.events);
  result.states = states.Finish();
  result.series = metrics.Finish();
  const std::string host = builder.InputHost();
  if (options.on_event) {
    for (size_t i = 0; i < result.events.size(); ++i) {
      if (i >= examined || builder.Counting(i)) hand_over(result.events[i]);
    }
    result.events.clear();
  }
  for (Event& event : result.events) {
    if (event.host.empty()) event.host = host;
  }
  for (GpuState& state : result.states) {
    if (state.host.empty()) state.host = builder.PromptHostAt(state.source.line);
    if (state.host.empty()) state.host = host;
  }
  for (Series& series : result.series) {
    if (series.host.empty()) series.host = host;
  }
  for (const Series& series : result.series) understood += series.logged_points();
  result.input = {reader.path(),
                  host,
                  sniffer.kind(),
                  std::string(reader.compression()),
                  reader.lines(),
                  reader.bytes(),
                  reader.cut_lines(),
                  reader.error(),
                  std::min(understood, reader.lines()),
                  tool_like_lines};
  return result;
}

}  // namespace faultline
