// The vocabulary every stage shares: GPUs, times, evidence, events and device state.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/shared_text.h"

namespace faultline {

// A point in time as an input states it. Absolute times are Unix seconds; when the input named
// no zone (dmesg -T, syslog) the offset is unset and the time is the host's local wall clock.
// Every event and every evidence line holds one, so it is kept to 16 bytes.
struct Timestamp {
  enum class Kind : uint8_t { kUnknown, kAbsolute, kBootRelative };

  double seconds = 0;
  std::optional<int16_t> utc_offset_minutes;
  Kind kind = Kind::kUnknown;
  bool year_assumed = false;  // a syslog date: the input named no year, so one was assumed

  static Timestamp Absolute(double unix_seconds, std::optional<int> utc_offset_minutes);
  static Timestamp BootRelative(double seconds_since_boot);

  bool known() const { return kind != Kind::kUnknown; }
  // ISO 8601 ("2024-03-05T10:12:33.123456+00:00", no offset when the zone is unknown),
  // "+1234.567890s" for boot-relative times, "" when unknown.
  std::string iso() const;
};

// Timestamps of the same kind compare by value; anything else is unordered.
bool comparable(const Timestamp& a, const Timestamp& b);

// Seconds from `a` to `b`: in UTC when both name their zone, else as wall clocks read (a time
// without a zone is the host's local clock); nullopt when they are not comparable.
std::optional<double> seconds_between(const Timestamp& a, const Timestamp& b);

// One GPU, as far as the inputs identify it. Empty strings and unset values are unknown.
struct GpuRef {
  std::string pci;  // normalised "dddd:bb:dd.f", lowercase
  std::optional<int> index;
  // Rarely known to an event, and then the same for all of a GPU's: shared, not copied.
  SharedText uuid;
  SharedText serial;
  SharedText product;

  bool empty() const { return pci.empty() && !index && uuid.empty() && serial.empty(); }
};

// Normalises the PCI address spellings of kernel logs ("PCI:0000:3b:00"), nvidia-smi
// ("00000000:3B:00.0") and NCCL ("3b000") to "0000:3b:00.0". Returns "" if `text` is none.
std::string normalize_pci(std::string_view text);

// The bands of the timeline a report draws: what kind of event a line is. Every signature and
// derived event names its lane in the tables ("lane"); device state is drawn as hardware.
enum class Lane { kHardware, kCuda, kNccl, kJob };

// "hardware", "cuda", "nccl", "job": the tables' names.
std::string_view lane_name(Lane lane);
// nullopt for a name that is none of them.
std::optional<Lane> parse_lane(std::string_view name);

// A line of input that supports a finding.
struct Evidence {
  SharedText path;  // shared by the events of one input
  uint64_t line = 0;
  Timestamp time;
  SharedText text;              // shared by the diagnoses that cite it
  SharedText signature;         // the signature or state field that made it evidence
  Lane lane = Lane::kHardware;  // the lane of `signature` (set by diagnose())
};

// Named texts (a signature's captures, the fields code sets on an event): a map from name to
// value, iterated in name order. An event has a handful and a fleet's diagnosis holds a million
// events, so the entries live in one buffer (name and value with their lengths, sorted by
// name): about a quarter of what a vector of string pairs took, and a tenth of a tree. Values
// are mostly captured from the event's own line; those made with that line as their `source`
// keep only where in it they are.
class Fields {
 public:
  using value_type = std::pair<std::string_view, std::string_view>;

  // Iterates the entries in name order; the views stay valid until the Fields is changed.
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Fields::value_type;
    using difference_type = std::ptrdiff_t;
    using pointer = const value_type*;
    using reference = const value_type&;

    const_iterator() = default;
    reference operator*() const { return entry_; }
    pointer operator->() const { return &entry_; }
    const_iterator& operator++();
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const const_iterator& other) const { return at_ == other.at_; }

   private:
    friend class Fields;
    const_iterator(std::string_view blob, std::string_view source, size_t at);

    std::string_view blob_;
    std::string_view source_;
    size_t at_ = 0;    // where this entry starts in blob_; blob_.size() at the end
    size_t next_ = 0;  // where the next one starts
    value_type entry_;
  };
  using iterator = const_iterator;

  Fields() = default;
  Fields(std::initializer_list<value_type> entries);
  // The fields of `entries`, which are in name order with each name once (a std::map's, a
  // record's): one allocation, where set() makes one per entry. Entries in any other order are
  // set one by one. A value that `source` contains is kept as its place there, not copied.
  static Fields FromSorted(const std::vector<value_type>& entries, const SharedText& source = {});

  const_iterator begin() const { return {blob_.view(), source_, 0}; }
  const_iterator end() const { return {blob_.view(), source_, blob_.view().size()}; }
  bool empty() const { return blob_.view().empty(); }
  size_t size() const;

  const_iterator find(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != end(); }
  // The value of `name`; throws std::out_of_range where there is none, as std::map::at does.
  std::string_view at(std::string_view name) const;
  // Sets `name` to `value`, replacing the value it had.
  void set(std::string_view name, std::string_view value);
  // Removes `name`; returns how many entries went (0 or 1).
  size_t erase(std::string_view name);
  void clear() {
    blob_ = {};
    source_ = {};
  }
  // Replaces each value by what `rewrite` makes of it (redaction rewrites every value).
  template <typename Rewrite>
  void rewrite_values(Rewrite rewrite) {
    Fields out;
    for (const auto& [name, value] : *this) {
      std::string text(value);
      rewrite(&text);
      out.set(name, text);
    }
    *this = std::move(out);
  }

  friend bool operator==(const Fields& a, const Fields& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  // Bytes behind one pointer, their count in front: a std::string would take four times the
  // room in each of a million events.
  class Blob {
   public:
    Blob() = default;
    explicit Blob(std::string_view bytes);
    Blob(const Blob& other) : Blob(other.view()) {}
    Blob(Blob&&) noexcept = default;
    Blob& operator=(const Blob& other) {
      if (this != &other) *this = Blob(other.view());
      return *this;
    }
    Blob& operator=(Blob&&) noexcept = default;
    ~Blob() = default;

    std::string_view view() const;

   private:
    std::unique_ptr<char[]> data_;  // a uint32_t count, then the bytes; null when empty
  };

  // Each entry: the name's length and the name, then the value's length times two, plus one
  // where the value is a place in `source_` (its offset follows) rather than the text itself.
  Blob blob_;
  SharedText source_;  // what values kept as places are in; empty when none is
};

// A fact one signature matched in one line, with its captured fields.
//
// A fleet's diagnosis holds a million: its texts that repeat from event to event (signature,
// host, path, GPU identity) are shared, not copied.
struct Event {
  SharedText signature;
  SharedText host;
  std::optional<int> rank;  // the job's global rank whose log printed it
  GpuRef gpu;
  std::optional<int> xid;
  Fields fields;
  Evidence evidence;
  // Lines this event stands for: a flood keeps its first lines and then only its latest, which
  // counts the lines dropped before it.
  uint64_t count = 1;
};

// a + b, or the largest uint64_t where that would wrap: the totals of counts (records read back
// may claim large ones).
inline uint64_t saturating_add(uint64_t a, uint64_t b) {
  return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

// Who logs the training loss: one rank's series of one log format in one input (the values
// stay with the series). Where two or more ranks of a format log it, each logs its own loss and
// a loss anomaly is that rank's; where only one does, it is usually the job's reduced loss.
struct LossLogger {
  std::string path;
  std::string host;    // "" when unknown
  std::string format;  // Series::format
  int rank = -1;       // -1 when unknown
  bool rank_is_local = false;

  auto operator<=>(const LossLogger&) const = default;
};

// What one dump says about one GPU at one moment. Field names are nvidia-smi's query names
// ("remapped_rows.pending", "ecc.errors.uncorrected.volatile.dram"); values are normalised:
// counts as decimal digits, flags as "yes"/"no", text as printed. A field that the dump left
// out or printed as N/A is absent.
struct GpuState {
  GpuRef gpu;
  std::string host;
  Timestamp time;
  Evidence source;  // the line that opened the GPU's block
  std::map<std::string, std::string> fields;
  // Where each field was read: the line number and the line as printed.
  std::map<std::string, std::pair<uint64_t, std::string>> field_lines;
};

// What kind of text an input is (sniff/).
enum class InputKind { kText, kKernelLog, kNvidiaSmi, kTrainingLog, kMixed };

// "text", "kernel-log", "nvidia-smi", "training-log", "mixed": the report's names.
std::string_view input_kind_name(InputKind kind);
// nullopt for a name that is none of them.
std::optional<InputKind> parse_input_kind(std::string_view name);

// One input as read: the "inputs" of the report.
struct InputSummary {
  std::string path;
  std::string host;  // the host its lines belong to unless they name their own ("" if unknown)
  InputKind kind = InputKind::kText;
  std::string compression;
  uint64_t lines = 0;
  uint64_t bytes = 0;
  uint64_t cut_lines = 0;
  std::string error;  // why reading stopped early, "" if it did not
  // Lines some reader understood: a signature matched them (not as an unrecognised error), a
  // device dump's reader took them, or the metrics reader read a point from them.
  uint64_t understood_lines = 0;
  // Lines shaped like a tool's output (aligned columns, a table row, "key : value"), counted up
  // to kToolLikeLines: an input of which nothing was understood but that has them is named in
  // the report as not understood, never passed over in silence.
  uint64_t tool_like_lines = 0;
  static constexpr uint64_t kToolLikeLines = 3;

  // Whether no reader understood a line of it although it looks like a tool's output.
  bool not_understood() const { return understood_lines == 0 && tool_like_lines >= kToolLikeLines; }
};

// An input that could not be opened: a named path that does not exist, a file it may not read.
struct UnreadInput {
  std::string path;
  std::string reason;  // "No such file or directory"
};

// `error` as the readers write it, "PATH: REASON", as an UnreadInput.
UnreadInput unread_input(const std::string& path, std::string_view error);

}  // namespace faultline
