// The envelope of a log line: what syslog, journald, dmesg, a collector or a launcher put in
// front of the message (its time, host and rank), and the zone of times that name none.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "model/model.h"

namespace faultline {

struct LinePrefix {
  Timestamp time;                      // absolute when the envelope has a date, else boot-relative
  std::optional<double> boot_seconds;  // the dmesg "[ 1234.567890]" stamp, when there is one
  std::string host;                    // from a syslog or journal envelope
};

// Reads `prefix`, the text of a line before the message it carries. Recognises raw dmesg,
// dmesg -T, syslog and journalctl short and short-precise ("Mar  5 10:12:33 host kernel:"),
// journalctl short-monotonic ("[  219.470994] host kernel: "), raw /dev/kmsg records
// ("6,3964,206764307,-;": microseconds since boot), ISO 8601 (RFC 3339 syslog, dmesg
// --time-format iso, kubectl logs --timestamps, a collector's "[2026-04-22T21:26:20.599Z]")
// anywhere in the prefix; whatever else the prefix holds is passed over and the time is then
// unknown.
// Syslog dates carry no year: `year` is used for them and the time is marked year_assumed.
LinePrefix parse_prefix(std::string_view prefix, int year);

// The host a shell prompt names, when `line` starts with one: someone pasted the commands they
// ran there and what those printed. Bash's defaults, after a virtual environment's "(venv) ":
//   "root@node1:~/kubespray# "   Debian and Ubuntu: user@host:folder, then $ or #
//   "[root@bh174 chenyang]# "    Red Hat: [user@host folder], then $ or #
// A command run through ssh ("user@bastion:~$ ssh gpu-node-042 'dmesg'") names the host instead.
// nullopt for any other line.
std::optional<std::string_view> prompt_host(std::string_view line);

// How much of `line` a launcher's or collector's tag takes at its start, the blanks after it
// included: a parenthesised "(RayTrainWorker pid=1234) ", a bracketed "[worker-3] " or
// "[pod/train-0/main] ", a name and a bar "node17 | " (docker compose, pdsh -S's dshbak); 0
// when it starts with none. Tags this stage reads (ranks, stamps) are not told apart here.
size_t launcher_tag_length(std::string_view line);

// One record of `journalctl -o json`, a JSON object a line: the message it carries and its
// envelope (__REALTIME_TIMESTAMP, __MONOTONIC_TIMESTAMP, _HOSTNAME).
struct JournalRecord {
  std::string message;  // MESSAGE with its escapes decoded; journald writes a message that is
                        // not UTF-8 as an array of byte values, decoded too
  LinePrefix envelope;
};

// `line` read as a journal record; nullopt unless it is a JSON object with a MESSAGE.
std::optional<JournalRecord> parse_journal_json(std::string_view line);

// The same wall-clock time in another year (for a syslog date whose year was assumed).
Timestamp with_year(const Timestamp& time, int year);

// The year of an absolute time.
int year_of(const Timestamp& time);

// The year of an absolute timestamp in `text` that states one (ISO 8601 or dmesg -T), if any.
std::optional<int> find_year(std::string_view text);

// Reads a time as Timestamp::iso() writes it: ISO 8601 ("2024-03-05T10:12:33", fraction and
// zone "Z" / "+02:00" optional; "2024-03-05 10:12:33"; a date alone is its midnight) or
// boot-relative seconds ("+1234.567890s"). Without a zone the time is a wall-clock time, like
// a syslog date's. nullopt for anything else.
std::optional<Timestamp> parse_time(std::string_view text);

// Unix seconds of a civil date and time read as UTC.
double unix_seconds(int year, int month, int day, int hour, int minute, double second);

struct RankTag {
  enum class Source { kPyTorch, kTorchrunTee, kSrunLabel, kOpenMpi, kPath };

  int rank = -1;
  bool is_local = false;     // a node-local rank (torchrun's tee header), not a global one
  size_t prefix_length = 0;  // characters of the line the tag takes, its trailing space included
  Source source = Source::kPath;
};

// The tag at the very start of `line`, if it is one of (docs/formats/training-logs.md §6, §10):
//   "[rank3]:" or "[rank3]: "  PyTorch's global-rank tag (tracebacks, C++ LOG lines);
//   "[default3]:"              torchrun --tee header, "[{role}{local_rank}]:": local;
//   "3: " or " 3: "            srun --label, the Slurm task id right-aligned: taken as global;
//   "[1,3]<stdout>:"           Open MPI --tag-output "[{jobid},{rank}]<stdout|stderr>:", also
//                              PRRTE's "[prterun-host-123@1,3]<stdout>: ": global;
//   "[3]<stderr>:"             horovodrun --gloo "[{rank}]<stdout|stderr>:": global.
std::optional<RankTag> parse_rank_prefix(std::string_view line);

// Every tag at the start of `line`: they stack ("[default2]:[rank2]: ..."). Returns the rank
// the line belongs to, preferring the innermost global rank to a local one, with
// prefix_length covering all the tags; nullopt when the line starts with none. The tags may
// stand behind what carried or pasted the line: an RFC 3339 stamp (kubectl logs --timestamps,
// GitHub Actions), a markdown quote "> ", a paste's line number "[123] ".
std::optional<RankTag> parse_rank_prefixes(std::string_view line);

// The rank a file's path names, looking at the file name and then its folders, innermost
// first: "rank3.log", "train-rank3.log", "rank_3/stdout.txt" (global), or torchrun's --log-dir
// layout ".../attempt_0/3/stdout.log" (local rank 3). prefix_length is 0.
std::optional<RankTag> rank_from_path(std::string_view path);

class TimeZone {
 public:
  // "UTC", "Z", "+02:00", "-0530", or a name of the tz database ("Europe/Berlin") whose file the
  // system has (Debian's tzdata). nullopt for anything else.
  static std::optional<TimeZone> Parse(std::string_view text);

  // `time` placed in this zone when it is a wall-clock time that names none; else unchanged.
  Timestamp Apply(const Timestamp& time) const;

 private:
  // Minutes east of UTC for a wall-clock time read as UTC seconds.
  int OffsetAt(double wall_seconds) const;

  std::optional<int> fixed_minutes_;
  std::string name_;  // a tz database name, when not fixed
};

}  // namespace faultline
