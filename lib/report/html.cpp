// The HTML report: one file that opens anywhere, offline. No scripts, fonts or images from
// outside; a Content-Security-Policy forbids any, so a log line cannot make the page load one.
#include <fmt/format.h>

#include <algorithm>

#include "report/common.h"
#include "report/report.h"
#include "report/timeline_svg.h"

namespace faultline {
namespace {

constexpr std::string_view kStyle = R"(
:root { color-scheme: light; --ink: #1f2937; --muted: #6b7280; --line: #e5e7eb;
  --critical: #b91c1c; --error: #ea580c; --warning: #ca8a04; --info: #0891b2; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: var(--ink); margin: 0 auto; padding: 24px 32px; max-width: 1200px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; }
h3 { font-size: 16px; margin: 0 0 6px; } h4 { font-size: 14px; margin: 12px 0 4px; }
code, pre { font: 13px/1.45 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
pre { background: #f3f4f6; padding: 8px 10px; border-radius: 6px; overflow-x: auto;
  white-space: pre-wrap; word-break: break-all; margin: 4px 0; }
.muted { color: var(--muted); }
.coverage { border-left: 4px solid var(--warning); padding-left: 8px; }
.verdict { font-size: 17px; padding: 12px 16px; border-radius: 8px; border-left: 6px solid;
  background: #fef2f2; margin: 12px 0; }
.verdict.none { background: #f0fdf4; border-color: #16a34a; }
.sev { display: inline-block; font: 700 12px/1 system-ui, sans-serif; color: #fff;
  padding: 4px 7px; border-radius: 4px; text-transform: uppercase; vertical-align: 2px; }
.sev-critical { --sev: var(--critical); } .sev-error { --sev: var(--error); }
.sev-warning { --sev: var(--warning); } .sev-info { --sev: var(--info); }
.sev, .verdict { background-color: var(--sev); border-color: var(--sev); }
.verdict:not(.none) { background: color-mix(in srgb, var(--sev) 8%, white); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { font-size: 13px; color: var(--muted); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
article { border: 1px solid var(--line); border-left: 5px solid var(--sev); border-radius: 8px;
  padding: 14px 18px; margin: 14px 0; }
.subject { font-weight: 600; }
.todo { background: #f9fafb; border-radius: 6px; padding: 4px 12px 8px; margin: 8px 0; }
.evidence td:first-child { white-space: nowrap; color: var(--muted); font-size: 13px; }
.evidence td:last-child { word-break: break-all; }
details > summary { cursor: pointer; font-weight: 600; margin: 8px 0 4px; }
svg.timeline { width: 100%; height: auto; border: 1px solid var(--line); border-radius: 8px; }
svg .grid { stroke: #f0f0f0; } svg .axis { stroke: #9ca3af; }
svg .lane-line { stroke: #e5e7eb; stroke-dasharray: 2 3; }
svg .tick { font: 11px system-ui, "DejaVu Sans", sans-serif; fill: #6b7280; }
svg .lane, svg .band { font: 600 12px system-ui, "DejaVu Sans", sans-serif; fill: #374151; }
svg .label, svg .legend { font: 11px ui-monospace, "DejaVu Sans Mono", monospace; fill: #111827; }
svg .chart { fill: #fcfcfd; stroke: #e5e7eb; }
svg .curve { fill: none; stroke-width: 1.4; }
svg .event-line { stroke-width: 1; stroke-dasharray: 4 3; opacity: 0.7; }
svg .curve.validation { stroke-dasharray: 6 3; stroke-width: 1.8; }
svg .anomaly-line { stroke: #6b7280; stroke-width: 1; stroke-dasharray: 2 3; }
svg .anomaly-kind { font-size: 11px; fill: #374151; paint-order: stroke; stroke: #fff; stroke-width: 3px; }
footer { margin-top: 32px; font-size: 13px; color: var(--muted); }
)";

// Catalog prose: `spans` become <code>; everything is escaped.
std::string prose(std::string_view text) {
  std::string out;
  bool in_code = false;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != '`') continue;
    out += html_escape(text.substr(start, i - start));
    // An unpaired backtick stays a backtick.
    if (i < text.size()) {
      const bool opens = !in_code && text.find('`', i + 1) != std::string_view::npos;
      out += opens ? "<code>" : in_code ? "</code>" : "`";
      in_code = opens;
    }
    start = i + 1;
  }
  return out;
}

std::string severity_badge(Severity severity) {
  return fmt::format(R"(<span class="sev sev-{0}">{0}</span>)", severity_name(severity));
}

void render_verdict(const Analysis& analysis, std::ostream& out) {
  const auto top =
      std::find_if(analysis.diagnoses.begin(), analysis.diagnoses.end(),
                   [](const Diagnosis& d) { return d.severity >= Severity::kWarning; });
  if (top == analysis.diagnoses.end()) {
    out << R"(<p class="verdict none">)" << html_escape(quiet_verdict(analysis)) << "</p>\n";
    return;
  }
  out << fmt::format(
      R"(<p class="verdict sev-{}">{} <a href="#d{}"><code>{}</code></a> {}<br><span class="subject">{}</span></p>)",
      severity_name(top->severity), severity_badge(top->severity), top->position,
      html_escape(top->failure->id), prose(top->failure->title), html_escape(subject_line(*top)));
  out << "\n";
}

// Beside the verdict, what it could not see: inputs not read or read in part, the filters' note.
void render_coverage(const Analysis& analysis, std::ostream& out) {
  for (const CoverageLine& line : coverage_lines(coverage_of(analysis))) {
    out << "<p class=\"coverage\"><strong>" << line.label << ":</strong> " << html_escape(line.text)
        << "</p>\n";
  }
}

void render_table(const Analysis& analysis, std::ostream& out) {
  out << "<table class=\"ranked\"><tr><th>#</th><th>Severity</th><th>Diagnosis</th>"
         "<th>Class</th><th>Role</th><th>Host</th><th>GPU</th><th>Confidence</th></tr>\n";
  for (const Diagnosis& d : analysis.diagnoses) {
    const std::string role = d.caused_by
                                 ? fmt::format("{} (of #{})", role_name(d.role), *d.caused_by)
                                 : std::string(role_name(d.role));
    out << fmt::format(
        "<tr><td class=\"num\">{}</td><td>{}</td><td><a href=\"#d{}\"><code>{}</code></a> "
        "{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td class=\"num\">{:.2f}</td></tr>\n",
        d.position, severity_badge(d.severity), d.position, html_escape(d.failure->id),
        prose(d.failure->title), class_kind_name(d.kind), html_escape(role),
        d.host.empty() ? "—" : html_escape(d.host),
        d.gpu.pci.empty() ? "—" : "<code>" + html_escape(d.gpu.pci) + "</code>", d.confidence);
  }
  out << "</table>\n";
}

void render_evidence(const Diagnosis& d, bool open, std::ostream& out) {
  if (d.evidence.empty()) return;
  out << fmt::format("<details{}><summary>Evidence ({} line{})</summary>\n", open ? " open" : "",
                     d.evidence.size(), d.evidence.size() == 1 ? "" : "s");
  out << "<table class=\"evidence\">\n";
  for (const Evidence& e : d.evidence) {
    out << fmt::format("<tr><td>{}:{}<br>{}</td><td><code>{}</code></td></tr>\n",
                       html_escape(e.path), e.line, html_escape(e.time.iso()), html_escape(e.text));
  }
  out << "</table></details>\n";
}

void render_list(std::string_view title, const std::vector<SharedText>& items, std::ostream& out) {
  if (items.empty()) return;
  out << "<h4>" << title << "</h4><ul>\n";
  for (const SharedText& item : items) out << "<li>" << prose(item) << "</li>\n";
  out << "</ul>\n";
}

void render_diagnosis(const Diagnosis& d, std::ostream& out) {
  out << fmt::format(R"(<article id="d{}" class="sev-{}">)", d.position, severity_name(d.severity))
      << "\n";
  out << fmt::format("<h3>{}. {} <code>{}</code> {}</h3>\n", d.position, severity_badge(d.severity),
                     html_escape(d.failure->id), prose(d.failure->title));
  out << "<p class=\"subject\">" << html_escape(subject_line(d)) << "</p>\n";
  if (!d.fix.empty() || !d.verify.empty()) {
    out << "<div class=\"todo\">\n";
    if (!d.fix.empty()) {
      out << "<h4>Fix</h4><ol>\n";
      for (const SharedText& fix : d.fix) out << "<li>" << prose(fix) << "</li>\n";
      out << "</ol>\n";
    }
    if (!d.verify.empty()) out << "<h4>Verify</h4>\n";
    for (const VerifyStep& step : d.verify) {
      out << "<pre><code>$ " << html_escape(step.command) << "</code></pre>\n";
      if (!step.expect.empty()) out << "<p>Expect: " << prose(step.expect) << "</p>\n";
    }
    out << "</div>\n";
  }
  std::string why = fmt::format("confidence {:.2f} · {} · {}", d.confidence,
                                class_kind_name(d.kind), role_name(d.role));
  if (d.caused_by) why += fmt::format(" (caused by #{})", *d.caused_by);
  why += fmt::format(" · {} occurrence{}", d.occurrences, d.occurrences == 1 ? "" : "s");
  if (d.first_seen.known()) why += " · first " + d.first_seen.iso();
  if (d.last_seen.known() && d.last_seen.seconds != d.first_seen.seconds) {
    why += ", last " + d.last_seen.iso();
  }
  out << "<p class=\"muted\">" << html_escape(why) << "</p>\n";
  if (!d.failure->explanation.empty()) out << "<p>" << prose(d.failure->explanation) << "</p>\n";
  render_evidence(d, d.position == 1, out);
  render_list("Missing", d.missing, out);
  render_list("Notes", d.notes, out);
  if (!d.failure->source.empty()) {
    out << "<p class=\"muted\">Source: " << prose(d.failure->source) << "</p>\n";
  }
  out << "</article>\n";
}

void render_timeline(const Analysis& analysis, std::ostream& out) {
  std::vector<Curve> timed;
  std::vector<Curve> by_step;
  loss_curves(analysis.series, &timed, &by_step);
  const std::string svg = timeline_svg(analysis, timed, by_step);
  size_t untimed = 0;
  for (const Diagnosis& d : analysis.diagnoses) {
    untimed += static_cast<size_t>(std::count_if(
        d.evidence.begin(), d.evidence.end(), [](const Evidence& e) { return !e.time.known(); }));
  }
  if (svg.empty() && untimed == 0) return;
  out << "<section id=\"timeline\"><h2>Timeline</h2>\n" << svg << "\n";
  out << "<p class=\"muted\">Each mark is an evidence line (hover for the line); filled marks "
         "are the first event or a standalone finding, hollow ones collateral damage.";
  if (untimed > 0) {
    out << fmt::format(" {} evidence line{} with no time {} not on the timeline.", untimed,
                       untimed == 1 ? "" : "s", untimed == 1 ? "is" : "are");
  }
  out << "</p></section>\n";
}

void render_inputs(const Analysis& analysis, std::ostream& out) {
  out << "<section id=\"inputs\"><h2>Inputs</h2>\n<table><tr><th>Input</th><th>Kind</th>"
         "<th>Compression</th><th>Lines</th><th>Bytes</th></tr>\n";
  for (const InputSummary& input : analysis.inputs) {
    out << fmt::format(
        "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td></tr>\n",
        html_escape(input.path), html_escape(input_kind_name(input.kind)),
        html_escape(input.compression), input.lines, input.bytes);
  }
  out << "</table>\n";
  for (const std::string& warning : analysis.warnings) {
    out << "<p class=\"muted\">Warning: " << html_escape(warning) << "</p>\n";
  }
  out << "</section>\n";
}

}  // namespace

void render_html(const Analysis& analysis, std::ostream& out) {
  const std::string title = analysis.diagnoses.empty()
                                ? std::string("no GPU fault found")
                                : analysis.diagnoses.front().failure->id + " · " +
                                      subject_line(analysis.diagnoses.front());
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
         "style-src 'unsafe-inline'\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>faultline: " << html_escape(title) << "</title>\n"
      << "<style>" << kStyle << "</style>\n</head>\n<body>\n";
  uint64_t lines = 0;
  for (const InputSummary& input : analysis.inputs) lines = saturating_add(lines, input.lines);
  const size_t count = analysis.diagnoses.size();
  out << "<header><h1>faultline report</h1>\n"
      << fmt::format("<p class=\"muted\">{} finding{} in {} input{} ({} lines)</p>\n", count,
                     count == 1 ? "" : "s", analysis.inputs.size(),
                     analysis.inputs.size() == 1 ? "" : "s", lines);
  render_verdict(analysis, out);
  render_coverage(analysis, out);
  out << "</header>\n";
  render_timeline(analysis, out);
  if (count > 0) {
    out << "<section id=\"diagnoses\"><h2>Diagnoses</h2>\n";
    render_table(analysis, out);
    for (const Diagnosis& diagnosis : analysis.diagnoses) render_diagnosis(diagnosis, out);
    out << "</section>\n";
  }
  render_inputs(analysis, out);
  out << "<footer>Made offline by faultline: nothing in this page was sent anywhere, and it "
         "loads nothing.</footer>\n</body>\n</html>\n";
}

}  // namespace faultline
