// GitHub Actions workflow commands, escaped as GitHub's toolkit does (actions/toolkit
// packages/core/src/command.ts): in the message % CR LF; in property values also ':' and ','.
#include <fmt/format.h>

#include "report/common.h"
#include "report/report.h"

namespace faultline {
namespace {

std::string escape_data(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '%':
        out += "%25";
        break;
      case '\r':
        out += "%0D";
        break;
      case '\n':
        out += "%0A";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string escape_property(std::string_view text) {
  std::string out;
  for (char c : escape_data(text)) {
    if (c == ':') {
      out += "%3A";
    } else if (c == ',') {
      out += "%2C";
    } else {
      out += c;
    }
  }
  return out;
}

// The annotation's body: the subject, then what to do; GitHub shows its lines as written.
std::string message(const Diagnosis& d) {
  std::string text = printable(d.failure->title) + "\n" + printable(subject_line(d));
  for (const SharedText& fix : d.fix) text += "\nFix: " + printable(fix);
  for (const VerifyStep& step : d.verify) {
    text += "\nVerify: " + printable(step.command);
    if (!step.expect.empty()) text += " (expect: " + printable(step.expect) + ")";
  }
  return text;
}

}  // namespace

void render_github(const Analysis& analysis, std::ostream& out) {
  for (const Diagnosis& d : analysis.diagnoses) {
    if (d.severity < Severity::kWarning) continue;
    std::string properties;
    if (!d.evidence.empty()) {
      properties =
          fmt::format("file={},line={},", escape_property(printable(d.evidence.front().path)),
                      d.evidence.front().line);
    }
    properties += "title=" + escape_property(fmt::format("faultline #{} {} ({})", d.position,
                                                         d.failure->id, severity_name(d.severity)));
    out << "::" << (d.severity >= Severity::kError ? "error" : "warning") << " " << properties
        << "::" << escape_data(message(d)) << "\n";
  }
  // What the diagnoses could not see: a gate that passed may have passed for want of input.
  const Coverage coverage = coverage_of(analysis);
  for (const CoverageLine& line : coverage_lines(coverage)) {
    out << "::warning title=" << escape_property("faultline: " + std::string(line.label))
        << "::" << escape_data(printable(line.text)) << "\n";
  }
  if (!coverage.filter_note.empty()) {
    out << "::warning title=" << escape_property("faultline: nothing left")
        << "::" << escape_data(printable(coverage.filter_note)) << "\n";
  }
}

}  // namespace faultline
