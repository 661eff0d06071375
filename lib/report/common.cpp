#include "report/common.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <set>

#include "source/source.h"

namespace faultline {

Coverage coverage_of(const Analysis& analysis) {
  Coverage coverage;
  coverage.unread = analysis.unread;
  for (const InputSummary& input : analysis.inputs) {
    if (input.not_understood()) coverage.not_understood.push_back(input.path);
    if (!input.error.empty() && input.lines == 0) {
      coverage.unread.push_back(unread_input(input.path, input.error));
      continue;
    }
    if (input.error.empty() && input.cut_lines == 0) continue;
    std::string reason = input.error.empty() ? "" : unread_input(input.path, input.error).reason;
    if (input.cut_lines > 0) {
      reason += fmt::format("{}{} line{} longer than {} KiB cut there", reason.empty() ? "" : "; ",
                            input.cut_lines, input.cut_lines == 1 ? "" : "s", kMaxLineBytes / 1024);
    }
    coverage.cut.push_back({input.path, std::move(reason), input.cut_lines});
  }
  coverage.filter_note = analysis.filter_note;
  return coverage;
}

std::vector<CoverageLine> coverage_lines(const Coverage& coverage) {
  std::vector<CoverageLine> lines;
  for (const UnreadInput& input : coverage.unread) {
    lines.push_back({"Not read", input.path + ": " + input.reason});
  }
  for (const Coverage::Cut& input : coverage.cut) {
    lines.push_back({"Read in part", input.path + ": " + input.reason});
  }
  for (const std::string& path : coverage.not_understood) {
    lines.push_back({"Not understood", path + ": it looks like a tool's output (aligned columns, a "
                                              "table, key : value), but no reader of faultline "
                                              "knows it, so a fault it shows is not reported"});
  }
  return lines;
}

std::string coverage_caveat(const Coverage& coverage) {
  std::string caveat;
  const size_t unread = coverage.unread.size();
  const size_t cut = coverage.cut.size();
  if (unread > 0) {
    caveat += fmt::format(" {} input{} could not be read.", unread, unread == 1 ? "" : "s");
  }
  if (cut > 0) {
    caveat += fmt::format(" {} input{} {} read only in part.", cut, cut == 1 ? "" : "s",
                          cut == 1 ? "was" : "were");
  }
  if (const size_t alien = coverage.not_understood.size(); alien > 0) {
    caveat += fmt::format(" {} input{} {} not understood.", alien, alien == 1 ? "" : "s",
                          alien == 1 ? "was" : "were");
  }
  return caveat;
}

std::string quiet_verdict(const Analysis& analysis) {
  uint64_t unrecognised = 0;
  for (const Diagnosis& diagnosis : analysis.diagnoses) {
    if (diagnosis.severity >= Severity::kWarning) return "";
    if (diagnosis.failure->last_resort) unrecognised += diagnosis.occurrences;
  }
  const Coverage coverage = coverage_of(analysis);
  std::string verdict = coverage.filter_note.empty()
                            ? "Nothing at warning or above: no known GPU fault in these logs."
                            : "Nothing at warning or above: " + coverage.filter_note + ".";
  verdict += coverage_caveat(coverage);
  if (unrecognised > 0) {
    verdict +=
        fmt::format(" {} line{} faultline does not recognise {} listed at info.", unrecognised,
                    unrecognised == 1 ? "" : "s", unrecognised == 1 ? "is" : "are");
  }
  return verdict;
}

std::string subject_line(const Diagnosis& diagnosis) {
  std::vector<std::string> parts;
  const GpuRef& gpu = diagnosis.gpu;
  if (!gpu.pci.empty()) {
    parts.push_back("GPU " + gpu.pci + (diagnosis.host.empty() ? "" : " on " + diagnosis.host));
  } else if (!diagnosis.host.empty()) {
    parts.push_back("host " + diagnosis.host);
  }
  if (gpu.index) parts.push_back("index " + std::to_string(*gpu.index));
  if (!gpu.product.empty()) parts.push_back(gpu.product);
  if (!gpu.serial.empty()) parts.push_back("serial " + gpu.serial);
  if (!gpu.uuid.empty()) parts.push_back(gpu.uuid);
  if (!diagnosis.ranks.empty()) {
    std::string ranks;
    for (int rank : diagnosis.ranks) ranks += (ranks.empty() ? "" : ", ") + std::to_string(rank);
    parts.push_back((diagnosis.ranks.size() == 1 ? "rank " : "ranks ") + ranks);
  }
  std::string line;
  for (const std::string& part : parts) line += (line.empty() ? "" : " · ") + part;
  return line.empty() ? "GPU not identified" : line;
}

std::string_view message_of(std::string_view line) {
  // How far an envelope can reach into a line.
  constexpr size_t kEnvelope = 80;
  // Syslog, journal and RFC 3339 envelopes end at the "kernel: " tag.
  constexpr std::string_view kKernelTag = "kernel: ";
  const size_t tag = line.find(kKernelTag);
  if (tag < kEnvelope) line.remove_prefix(tag + kKernelTag.size());
  // A collector's "10.0.4.42: kern: warning: [2026-04-22T21:26:20.599Z]: ".
  const size_t stamp = line.find(": [");
  const size_t stamp_end = line.find("]: ");
  if (stamp < stamp_end && stamp_end < kEnvelope && stamp + 3 < line.size() &&
      std::isdigit(static_cast<unsigned char>(line[stamp + 3]))) {
    line.remove_prefix(stamp_end + 3);
  }
  // dmesg's "[ 1234.567890] " and dmesg -T's "[Mon Mar 16 04:12:55 2026] ".
  while (!line.empty() && line.front() == '[') {
    const size_t close = line.find("] ");
    if (close == std::string_view::npos || close > 40) break;
    line.remove_prefix(close + 2);
  }
  // The indentation of an nvidia-smi field.
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  return line;
}

std::string compact_time(const Timestamp& time, bool millis) {
  switch (time.kind) {
    case Timestamp::Kind::kUnknown:
      return "no time";
    case Timestamp::Kind::kBootRelative:
      return fmt::format("+{:.6f}s", time.seconds);
    case Timestamp::Kind::kAbsolute:
      break;
  }
  const double local = time.seconds + time.utc_offset_minutes.value_or(0) * 60.0;
  const auto whole = static_cast<time_t>(std::floor(local));
  const auto thousandths = std::min(999L, std::lround((local - std::floor(local)) * 1000));
  std::tm tm{};
  if (gmtime_r(&whole, &tm) == nullptr) return time.iso();
  return fmt::format("{:02}-{:02} {:02}:{:02}:{:02}", tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec) +
         (millis ? fmt::format(".{:03}", thousandths) : "");
}

namespace {

// Absolute times first, then boot-relative ones (grouped by host: each host has its own boot),
// then lines with no time; ties in input order.
bool earlier(const TimelineEntry& a, const TimelineEntry& b) {
  const Timestamp& ta = a.evidence->time;
  const Timestamp& tb = b.evidence->time;
  const auto order = [](const Timestamp& t) {
    return t.kind == Timestamp::Kind::kAbsolute ? 0 : t.known() ? 1 : 2;
  };
  if (order(ta) != order(tb)) return order(ta) < order(tb);
  if (ta.kind == Timestamp::Kind::kBootRelative && a.diagnosis->host != b.diagnosis->host) {
    return a.diagnosis->host < b.diagnosis->host;
  }
  if (ta.known() && ta.seconds != tb.seconds) return ta.seconds < tb.seconds;
  if (a.evidence->path != b.evidence->path) return a.evidence->path < b.evidence->path;
  return a.evidence->line < b.evidence->line;
}

}  // namespace

std::vector<TimelineEntry> incident_timeline(const Analysis& analysis, size_t per_diagnosis) {
  std::vector<TimelineEntry> entries;
  if (analysis.diagnoses.empty()) return entries;
  const int root =
      analysis.diagnoses.front().caused_by.value_or(analysis.diagnoses.front().position);
  std::set<std::pair<std::string, uint64_t>> seen;
  for (const Diagnosis& diagnosis : analysis.diagnoses) {
    if (diagnosis.position != root && diagnosis.caused_by != root) continue;
    // Evidence comes strongest first; folded, a diagnosis keeps its earliest line (when it
    // started) and then its strongest ones.
    std::vector<TimelineEntry> own;
    for (const Evidence& evidence : diagnosis.evidence) own.push_back({&diagnosis, &evidence});
    if (per_diagnosis != 0 && own.size() > per_diagnosis) {
      const auto first = std::min_element(own.begin(), own.end(), earlier);
      std::rotate(own.begin(), first, first + 1);
      own.resize(per_diagnosis);
    }
    for (const TimelineEntry& entry : own) {
      if (seen.emplace(entry.evidence->path, entry.evidence->line).second) entries.push_back(entry);
    }
  }
  std::stable_sort(entries.begin(), entries.end(), earlier);
  return entries;
}

std::string_view lane_title(Lane lane) {
  switch (lane) {
    case Lane::kHardware:
      return "GPU & PCIe";
    case Lane::kCuda:
      return "CUDA";
    case Lane::kNccl:
      return "NCCL";
    case Lane::kJob:
      return "Job";
  }
  return "";
}

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the well-formed UTF-8 sequence at the start of `text` (RFC 3629: no overlong
// forms, no surrogates, nothing past U+10FFFF), 0 if it is not one.
size_t utf8_length(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const auto continuation = [&](size_t i) { return i < text.size() && (byte(i) & 0xC0) == 0x80; };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    if (!continuation(1) || !continuation(2)) return 0;
    if (lead == 0xE0 && byte(1) < 0xA0) return 0;   // overlong
    if (lead == 0xED && byte(1) >= 0xA0) return 0;  // a surrogate
    return 3;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    if (!continuation(1) || !continuation(2) || !continuation(3)) return 0;
    if (lead == 0xF0 && byte(1) < 0x90) return 0;   // overlong
    if (lead == 0xF4 && byte(1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

// Appends `text` as valid UTF-8 without controls: C0 and C1 control characters (an escape
// sequence, an 8-bit CSI), DEL and bytes that are not UTF-8 become U+FFFD, one per byte; a tab
// becomes a space unless `keep` holds it, as it holds a newline.
void append_printable(std::string_view text, std::string_view keep, std::string* out) {
  out->reserve(out->size() + text.size());
  for (size_t i = 0; i < text.size();) {
    // Printable ASCII, nearly every byte of a log, is appended a run at a time.
    size_t plain_end = i;
    while (plain_end < text.size() && text[plain_end] >= 0x20 && text[plain_end] < 0x7f) {
      ++plain_end;
    }
    out->append(text.substr(i, plain_end - i));
    if ((i = plain_end) == text.size()) break;
    const char c = text[i];
    const size_t length = utf8_length(text.substr(i));
    const bool c1 = length == 2 && static_cast<unsigned char>(c) == 0xC2 &&
                    static_cast<unsigned char>(text[i + 1]) < 0xA0;
    if (length > 1 && !c1) {
      out->append(text.substr(i, length));
    } else if (keep.find(c) != std::string_view::npos) {
      *out += c;
    } else if (c == '\t') {
      *out += ' ';
    } else {
      *out += kReplacement;
    }
    i += std::max<size_t>(length, 1);
  }
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  append_printable(text, "", &out);
  return out;
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t plain = 0;  // the start of the text not yet appended
  const auto flush = [&](size_t until) {
    // Control characters would be parse errors; newlines in attribute values are fine.
    append_printable(text.substr(plain, until - plain), "\n\t", &out);
  };
  for (size_t i = 0; i < text.size(); ++i) {
    std::string_view entity;
    switch (text[i]) {
      case '&':
        entity = "&amp;";
        break;
      case '<':
        entity = "&lt;";
        break;
      case '>':
        entity = "&gt;";
        break;
      case '"':
        entity = "&quot;";
        break;
      case '\'':
        entity = "&#39;";
        break;
      default:
        continue;
    }
    flush(i);
    out += entity;
    plain = i + 1;
  }
  flush(text.size());
  return out;
}

}  // namespace faultline
