#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "report/common.h"
#include "report/report.h"

namespace faultline {
namespace {

// Evidence lines shown per diagnosis unless --verbose: the strongest come first.
constexpr size_t kFoldedEvidence = 4;
// Lines per diagnosis in the incident's timeline unless --verbose: its earliest and strongest.
constexpr size_t kFoldedTimeline = 4;
// Lines of the whole timeline unless --verbose: a job-wide timeout has a diagnosis per rank.
constexpr size_t kTimelineLines = 12;
// Evidence text is cut here even with --verbose: a log line can be as long as the reader allows.
constexpr size_t kEvidenceWidth = 240;
// A log line's message gets at least this many columns, else the whole line is cut at the width.
constexpr size_t kMinMessageColumns = 20;
// An evidence line's path is cut (at its head) to no less than this.
constexpr size_t kMinPathColumns = 20;

std::string upper(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), ::toupper);
  return out;
}

struct Style {
  bool on;
  std::string wrap(std::string_view code, std::string_view text) const {
    return on ? fmt::format("\x1b[{}m{}\x1b[0m", code, text) : std::string(text);
  }
  std::string bold(std::string_view text) const { return wrap("1", text); }
  std::string dim(std::string_view text) const { return wrap("2", text); }
  std::string severity(Severity severity) const {
    static constexpr std::string_view kCodes[] = {"36", "33", "31", "1;31"};
    return wrap(kCodes[static_cast<size_t>(severity)], upper(severity_name(severity)));
  }
};

enum class Tone { kPlain, kDim, kBold };

// Terminal columns of UTF-8 text: one per code point (the report's own symbols are narrow).
size_t columns(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// The first `width` columns of `text`, ending in "…" when it was longer.
std::string clip(std::string_view text, size_t width) {
  if (width == 0 || columns(text) <= width) return std::string(text);
  size_t kept = 0;
  size_t end = 0;
  while (end < text.size() && kept + 1 < width) {
    ++end;
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
    ++kept;
  }
  return std::string(text.substr(0, end)) + "…";
}

// The byte offset in `text` after its first `count` columns.
size_t offset_after(std::string_view text, size_t count) {
  size_t end = 0;
  for (size_t kept = 0; end < text.size() && kept < count; ++kept) {
    ++end;
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
  }
  return end;
}

// `text` in `width` columns, cut in the middle when it is longer: a log line's head says what
// wrote it ("NVRM: Xid (PCI:0000:ab:00): 95") and its tail what happened ("Uncontained: FBHUB.
// RST: Yes"), so both stay, half the room each.
std::string elide_middle(std::string_view text, size_t width) {
  const size_t total = columns(text);
  if (width == 0 || total <= width) return std::string(text);
  const size_t head = (width - 1) / 2;
  const size_t tail = width - 1 - head;
  return std::string(text.substr(0, offset_after(text, head))) + "…" +
         std::string(text.substr(offset_after(text, total - tail)));
}

// `text` in `width` columns, its head cut when it is longer: a path's file and folder stay.
std::string elide_front(std::string_view text, size_t width) {
  const size_t total = columns(text);
  if (width == 0 || total <= width) return std::string(text);
  return "…" + std::string(text.substr(offset_after(text, total - (width - 1))));
}

// The file an evidence path names, as a file:// URL (RFC 8089) with every byte but the
// unreserved ones and '/' percent-encoded; "" for what is no file (stdin). An archive member
// ("a.zip!node1/kern.log") links to its archive.
std::string file_url(std::string_view path, const FileLinks& links) {
  if (path.empty() || path == "-") return "";
  path = path.substr(0, path.find('!'));
  const std::string absolute =
      path.front() == '/' ? std::string(path) : links.folder + "/" + std::string(path);
  std::string url = "file://" + links.host;
  for (const unsigned char c : absolute) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      url += static_cast<char>(c);
    } else {
      url += fmt::format("%{:02X}", c);
    }
  }
  return url;
}

// `shown` as an OSC 8 hyperlink to `url` (none where `url` is empty).
std::string hyperlink(std::string_view url, std::string_view shown) {
  if (url.empty()) return std::string(shown);
  return fmt::format("\x1b]8;;{}\x1b\\{}\x1b]8;;\x1b\\", url, shown);
}

// Byte offsets in `word` at which to break it into pieces of at most `width` columns.
std::vector<size_t> piece_starts(std::string_view word, size_t width) {
  std::vector<size_t> starts = {0};
  size_t kept = 0;
  for (size_t i = 0; i < word.size(); ++i) {
    if ((static_cast<unsigned char>(word[i]) & 0xC0) == 0x80) continue;
    if (kept == width) {
      starts.push_back(i);
      kept = 0;
    }
    ++kept;
  }
  return starts;
}

// Splits prose into lines of at most `width` columns at spaces, but not inside a `code span`
// (a command must stay whole to be copied); a longer word (a path) is broken at the width.
std::vector<std::string> wrap(std::string_view text, size_t width) {
  std::vector<std::string_view> words;
  bool in_code = false;
  size_t start = 0;  // of the word being read
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '`') {
      in_code = !in_code && text.find('`', i + 1) != std::string_view::npos;
    }
    if (i == text.size() || (text[i] == ' ' && !in_code)) {
      if (i > start) words.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  std::vector<std::string> lines;
  std::string line;
  size_t line_columns = 0;
  for (const std::string_view word : words) {
    const size_t word_columns = columns(word);
    if (!line.empty() && width != 0 && line_columns + 1 + word_columns > width) {
      lines.push_back(std::move(line));
      line.clear();
      line_columns = 0;
    }
    if (width == 0 || word_columns <= width || word.starts_with('`')) {
      if (!line.empty()) {
        line += ' ';
        ++line_columns;
      }
      line += word;
      line_columns += word_columns;
      continue;
    }
    const std::vector<size_t> starts = piece_starts(word, width);
    for (size_t i = 0; i + 1 < starts.size(); ++i) {
      lines.emplace_back(word.substr(starts[i], starts[i + 1] - starts[i]));
    }
    line = std::string(word.substr(starts.back()));
    line_columns = columns(line);
  }
  if (!line.empty() || lines.empty()) lines.push_back(std::move(line));
  return lines;
}

// Writes the report's lines, wrapped or cut to the terminal width.
class Writer {
 public:
  Writer(const Style& style, size_t width, std::ostream& out)
      : style_(style), width_(width), out_(out) {}

  // Prose at `indent`: `lead` ("1. ", "Note: ") starts the first line and later lines align
  // under the text that follows it. `styled_lead`, when given, is printed in place of `lead`.
  void Prose(size_t indent, std::string_view lead, std::string_view text, Tone tone = Tone::kPlain,
             std::string_view styled_lead = {}) const {
    const size_t hang = indent + columns(lead);
    const size_t room = width_ > hang + 20 ? width_ - hang : (width_ == 0 ? 0 : 20);
    const std::vector<std::string> lines = wrap(printable(text), room);
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i == 0) {
        out_ << std::string(indent, ' ') << (styled_lead.empty() ? lead : styled_lead)
             << Styled(tone, lines[i]) << "\n";
      } else {
        out_ << std::string(hang, ' ') << Styled(tone, lines[i]) << "\n";
      }
    }
  }

  // One line, cut to the width: a log line or a timeline entry stays one line.
  void Line(size_t indent, std::string_view text, Tone tone = Tone::kPlain) const {
    const std::string line = std::string(indent, ' ') + printable(text);
    out_ << Styled(tone, width_ == 0 ? line : clip(line, width_)) << "\n";
  }

  // One line of `lead` (where a log line is from, when) and a log line's message, the message
  // cut in the middle to fit the width (elide_middle).
  // `shown_lead`, when given, is printed in place of `lead` (a hyperlink around its path).
  void LogLine(size_t indent, std::string_view lead, std::string_view message,
               Tone tone = Tone::kPlain, std::string_view shown_lead = {}) const {
    const size_t used = indent + columns(lead);
    if (shown_lead.empty() && (width_ == 0 || width_ < used + kMinMessageColumns)) {
      return Line(indent, std::string(lead) + std::string(message), tone);
    }
    const std::string line =
        std::string(indent, ' ') +
        (shown_lead.empty() ? printable(lead) : std::string(shown_lead)) +
        (width_ == 0 ? printable(message) : elide_middle(printable(message), width_ - used));
    out_ << Styled(tone, line) << "\n";
  }

  // A line as is, never cut or wrapped: a command must stay copyable.
  void Raw(std::string_view text) const { out_ << text << "\n"; }

  const Style& style() const { return style_; }

 private:
  std::string Styled(Tone tone, std::string_view text) const {
    switch (tone) {
      case Tone::kDim:
        return style_.dim(text);
      case Tone::kBold:
        return style_.bold(text);
      case Tone::kPlain:
        break;
    }
    return std::string(text);
  }

  const Style& style_;
  size_t width_;
  std::ostream& out_;
};

std::string why_line(const Diagnosis& diagnosis) {
  std::string line = fmt::format("confidence {:.2f} · {} · {}", diagnosis.confidence,
                                 class_kind_name(diagnosis.kind), role_name(diagnosis.role));
  if (diagnosis.caused_by) line += fmt::format(" (caused by #{})", *diagnosis.caused_by);
  line += fmt::format(" · {} occurrence{}", diagnosis.occurrences,
                      diagnosis.occurrences == 1 ? "" : "s");
  if (diagnosis.first_seen.known()) {
    line += " · first " + diagnosis.first_seen.iso();
    if (diagnosis.last_seen.seconds != diagnosis.first_seen.seconds) {
      line += ", last " + diagnosis.last_seen.iso();
    }
  }
  return line;
}

void render_evidence(const Diagnosis& d, const TextOptions& options, const Writer& w) {
  w.Raw("   Evidence:");
  const size_t shown =
      options.verbose ? d.evidence.size() : std::min(d.evidence.size(), kFoldedEvidence);
  for (size_t i = 0; i < shown; ++i) {
    const Evidence& e = d.evidence[i];
    // A long path gives way to the line (a quarter of the width at most, folded).
    const size_t path_room =
        options.verbose || options.width == 0 ? 0 : std::max(kMinPathColumns, options.width / 4);
    const std::string path = elide_front(printable(e.path), path_room);
    const std::string where = fmt::format("{}:{}  ", path, e.line);
    // What the terminal shows is `where`; with links its path is also a link to the file.
    const std::string shown_where =
        options.links
            ? fmt::format("{}:{}  ", hyperlink(file_url(e.path, *options.links), path), e.line)
            : where;
    // A wrapped message's evidence is its lines: each after the first on a row of its own,
    // under the first.
    const size_t newline = e.text.find('\n');
    const std::string_view first = std::string_view(e.text).substr(0, newline);
    // Folded, a line shows its message without the envelope (time, host) that the header
    // and the timeline show anyway, cut to the width; --verbose shows the line as it is, its
    // spacing kept, and leaves the wrapping to the terminal.
    if (options.verbose) {
      w.Raw("     " + shown_where + printable(clip(first, kEvidenceWidth)));
    } else {
      w.LogLine(5, where, message_of(first), Tone::kPlain, options.links ? shown_where : "");
    }
    for (size_t at = newline; at != std::string::npos;) {
      const size_t next = e.text.find('\n', at + 1);
      const std::string_view more = std::string_view(e.text).substr(at + 1, next - at - 1);
      if (options.verbose) {
        w.Raw(std::string(5 + where.size(), ' ') + printable(clip(more, kEvidenceWidth)));
      } else {
        w.Line(5 + where.size(), more);
      }
      at = next;
    }
  }
  if (shown < d.evidence.size()) {
    w.Line(5, fmt::format("… {} more (--verbose)", d.evidence.size() - shown), Tone::kDim);
  }
}

// The what-to-do part comes first: at 3 a.m. the fix and its check matter before the why.
void render_diagnosis(const Diagnosis& d, const TextOptions& options, const Writer& w) {
  const Style& style = w.style();
  const std::string severity = upper(severity_name(d.severity));
  w.Prose(0, fmt::format("{}. {}  {}  ", d.position, severity, d.failure->id), d.failure->title,
          Tone::kPlain,
          fmt::format("{}. {}  {}  ", d.position, style.severity(d.severity),
                      style.bold(d.failure->id)));
  w.Prose(3, "", subject_line(d), Tone::kBold);
  if (!d.fix.empty()) {
    w.Raw("   Fix:");
    for (size_t i = 0; i < d.fix.size(); ++i) w.Prose(5, fmt::format("{}. ", i + 1), d.fix[i]);
  }
  if (!d.verify.empty()) {
    w.Raw("   Verify:");
    for (const VerifyStep& step : d.verify) {
      w.Raw("     $ " + style.bold(printable(step.command)));
      if (!step.expect.empty()) w.Prose(7, "expect: ", step.expect);
    }
  }
  w.Prose(3, "Why: ", why_line(d), Tone::kDim);
  if (!d.failure->explanation.empty()) w.Prose(3, "", d.failure->explanation);
  render_evidence(d, options, w);
  for (const SharedText& missing : d.missing) w.Prose(3, "Missing: ", missing);
  for (const SharedText& note : d.notes) w.Prose(3, "Note: ", note, Tone::kDim);
  if (!d.failure->source.empty()) w.Prose(3, "Source: ", d.failure->source, Tone::kDim);
}

// The incident in time order, one line per event: what happened first, then the collateral.
void render_timeline(const Analysis& analysis, const TextOptions& options, const Writer& w) {
  const std::vector<TimelineEntry> entries =
      incident_timeline(analysis, options.verbose ? 0 : kFoldedTimeline);
  if (entries.size() < 2) return;
  w.Raw("");
  w.Raw(w.style().bold("Timeline of the incident (first event → collateral):"));
  // Milliseconds only when some line has them: syslog and dmesg -T have whole seconds.
  const bool millis = std::any_of(entries.begin(), entries.end(), [](const TimelineEntry& e) {
    const double seconds = e.evidence->time.seconds;
    return e.evidence->time.kind == Timestamp::Kind::kAbsolute && seconds != std::floor(seconds);
  });
  size_t time_width = 0;
  for (const TimelineEntry& entry : entries) {
    time_width = std::max(time_width, compact_time(entry.evidence->time, millis).size());
  }
  const size_t shown = options.verbose ? entries.size() : std::min(entries.size(), kTimelineLines);
  for (size_t i = 0; i < shown; ++i) {
    const TimelineEntry& entry = entries[i];
    const Diagnosis& d = *entry.diagnosis;
    w.LogLine(3,
              fmt::format("{:>{}}  #{} {}  ", compact_time(entry.evidence->time, millis),
                          time_width, d.position, d.failure->id),
              message_of(entry.evidence->text),
              d.role == Role::kCollateral ? Tone::kDim : Tone::kPlain);
  }
  if (shown < entries.size()) {
    w.Line(3, fmt::format("… {} more (--verbose)", entries.size() - shown), Tone::kDim);
  }
}

// "1.2 GiB": binary units, as --max-bytes reads them.
std::string human_bytes(double bytes) {
  static constexpr std::string_view kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, kUnits[unit]);
}

}  // namespace

std::string progress_line(std::string_view path, uint64_t bytes, double seconds, size_t width) {
  const double rate = seconds > 0 ? static_cast<double>(bytes) / seconds : 0;
  // No path (--redact hides it): the figures alone.
  return clip(fmt::format("faultline: {} read, {}/s{}{}", human_bytes(static_cast<double>(bytes)),
                          human_bytes(rate), path.empty() ? "" : " · ", printable(path)),
              width);
}

void render_text(const Analysis& analysis, const TextOptions& options, std::ostream& out) {
  const Style style{options.color};
  const Writer writer(style, options.width, out);
  uint64_t lines = 0;
  for (const InputSummary& input : analysis.inputs) lines = saturating_add(lines, input.lines);
  const size_t count = analysis.diagnoses.size();
  out << style.bold(fmt::format("faultline: {} finding{} in {} input{} ({} lines)", count,
                                count == 1 ? "" : "s", analysis.inputs.size(),
                                analysis.inputs.size() == 1 ? "" : "s", lines))
      << "\n";
  if (const std::string verdict = quiet_verdict(analysis); !verdict.empty()) out << verdict << "\n";
  for (const CoverageLine& line : coverage_lines(coverage_of(analysis))) {
    writer.Prose(0, std::string(line.label) + ": ", line.text);
  }
  for (size_t i = 0; i < analysis.diagnoses.size(); ++i) {
    out << "\n";
    render_diagnosis(analysis.diagnoses[i], options, writer);
    if (i == 0) render_timeline(analysis, options, writer);
  }
}

void render_verdict_line(const Analysis& analysis, std::ostream& out) {
  const auto top =
      std::find_if(analysis.diagnoses.begin(), analysis.diagnoses.end(),
                   [](const Diagnosis& d) { return d.severity >= Severity::kWarning; });
  if (top == analysis.diagnoses.end()) {
    out << quiet_verdict(analysis) << "\n";
    return;
  }
  const size_t count = analysis.diagnoses.size();
  out << printable(fmt::format("{} {}: {} · {} ({} of {} finding{}){}",
                               upper(severity_name(top->severity)), top->failure->id,
                               top->failure->title, subject_line(*top), top->position, count,
                               count == 1 ? "" : "s", coverage_caveat(coverage_of(analysis))))
      << "\n";
}

}  // namespace faultline
