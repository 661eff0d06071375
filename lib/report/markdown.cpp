#include <fmt/format.h>

#include <algorithm>

#include "report/common.h"
#include "report/report.h"

namespace faultline {
namespace {

// The longest run of backticks in `text`: a code span or block needs a longer fence.
size_t longest_backtick_run(std::string_view text) {
  size_t longest = 0;
  size_t run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

// Text from an input as a code span: nothing in it is Markdown.
std::string code(std::string_view text) {
  const std::string fence(longest_backtick_run(text) + 1, '`');
  const std::string body = printable(text);
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`');
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

// Prose from the catalog: its `code spans` stay code; everything else that Markdown or HTML
// would read as markup is escaped.
std::string prose(std::string_view text) {
  std::string out;
  const std::string body = printable(text);
  size_t i = 0;
  while (i < body.size()) {
    const size_t close = body[i] == '`' ? body.find('`', i + 1) : std::string::npos;
    if (close != std::string::npos) {
      out.append(body, i, close + 1 - i);
      i = close + 1;
      continue;
    }
    if (std::string_view("\\`*_[]<>|~#!").find(body[i]) != std::string_view::npos) out += '\\';
    out += body[i] == '&' ? std::string("&amp;") : std::string(1, body[i]);
    ++i;
  }
  return out;
}

// A table cell: a pipe splits a GFM table row even inside a code span, so it is escaped there
// too; a cell is one line.
std::string cell(std::string text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '|' && (i == 0 || text[i - 1] != '\\')) out += '\\';
    out += text[i] == '\n' ? ' ' : text[i];
  }
  return out;
}

std::string or_dash(const std::string& text) {
  return text.empty() ? "—" : code(text);
}

void render_table(const Analysis& analysis, std::ostream& out) {
  out << "| # | Severity | Diagnosis | Class | Role | Host | GPU | Confidence |\n"
      << "|---:|---|---|---|---|---|---|---:|\n";
  for (const Diagnosis& d : analysis.diagnoses) {
    const std::string role = d.caused_by
                                 ? fmt::format("{} (of #{})", role_name(d.role), *d.caused_by)
                                 : std::string(role_name(d.role));
    out << fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {:.2f} |\n", d.position, severity_name(d.severity),
        cell(code(d.failure->id) + " " + prose(d.failure->title)), class_kind_name(d.kind), role,
        cell(or_dash(d.host)), cell(or_dash(d.gpu.pci)), d.confidence);
  }
}

// A fenced block of input lines: the fence is longer than any backtick run inside.
void code_block(std::string_view info, const std::vector<std::string>& lines, std::ostream& out) {
  size_t run = 0;
  for (const std::string& line : lines) run = std::max(run, longest_backtick_run(line));
  const std::string fence(std::max<size_t>(3, run + 1), '`');
  out << fence << info << "\n";
  for (const std::string& line : lines) out << printable(line) << "\n";
  out << fence << "\n";
}

void render_diagnosis(const Diagnosis& d, std::ostream& out) {
  out << fmt::format("\n### {}. {} {}: {}\n\n", d.position, severity_name(d.severity),
                     code(d.failure->id), prose(d.failure->title));
  out << "**Subject:** " << prose(subject_line(d)) << "  \n";
  out << fmt::format("**Why:** confidence {:.2f}, {}, {}", d.confidence, class_kind_name(d.kind),
                     role_name(d.role));
  if (d.caused_by) out << fmt::format(" (caused by #{})", *d.caused_by);
  out << fmt::format(", {} occurrence{}", d.occurrences, d.occurrences == 1 ? "" : "s");
  if (d.first_seen.known()) out << ", first " << code(d.first_seen.iso());
  out << "\n";
  if (!d.failure->explanation.empty()) out << "\n" << prose(d.failure->explanation) << "\n";
  if (!d.fix.empty()) {
    out << "\n**Fix**\n\n";
    for (size_t i = 0; i < d.fix.size(); ++i) out << i + 1 << ". " << prose(d.fix[i]) << "\n";
  }
  if (!d.verify.empty()) {
    out << "\n**Verify**\n";
    for (const VerifyStep& step : d.verify) {
      out << "\n";
      code_block("sh", {step.command}, out);
      if (!step.expect.empty()) out << "\nExpect: " << prose(step.expect) << "\n";
    }
  }
  if (!d.missing.empty()) {
    out << "\n**Missing**\n\n";
    for (const SharedText& missing : d.missing) out << "- " << prose(missing) << "\n";
  }
  if (!d.evidence.empty()) {
    std::vector<std::string> lines;
    for (const Evidence& e : d.evidence)
      lines.push_back(fmt::format("{}:{}  {}", e.path, e.line, e.text));
    out << fmt::format("\n<details><summary>Evidence ({} line{})</summary>\n\n", lines.size(),
                       lines.size() == 1 ? "" : "s");
    code_block("text", lines, out);
    out << "\n</details>\n";
  }
  if (!d.notes.empty()) {
    out << "\n<details><summary>Notes</summary>\n\n";
    for (const SharedText& note : d.notes) out << "- " << prose(note) << "\n";
    out << "\n</details>\n";
  }
}

void render_inputs(const Analysis& analysis, std::ostream& out) {
  out << "\n<details><summary>Inputs</summary>\n\n"
      << "| Input | Kind | Compression | Lines | Bytes |\n"
      << "|---|---|---|---:|---:|\n";
  for (const InputSummary& input : analysis.inputs) {
    out << fmt::format("| {} | {} | {} | {} | {} |\n", cell(code(input.path)),
                       input_kind_name(input.kind), input.compression, input.lines, input.bytes);
  }
  for (const std::string& warning : analysis.warnings) out << "\n> " << prose(warning) << "\n";
  out << "\n</details>\n";
}

}  // namespace

void render_markdown(const Analysis& analysis, std::ostream& out) {
  const size_t count = analysis.diagnoses.size();
  out << fmt::format("## faultline: {} finding{} in {} input{}\n\n", count, count == 1 ? "" : "s",
                     analysis.inputs.size(), analysis.inputs.size() == 1 ? "" : "s");
  const auto top =
      std::find_if(analysis.diagnoses.begin(), analysis.diagnoses.end(),
                   [](const Diagnosis& d) { return d.severity >= Severity::kWarning; });
  if (top == analysis.diagnoses.end()) {
    out << prose(quiet_verdict(analysis)) << "\n";
  } else {
    out << fmt::format("**{}** {} {}  \n{}\n", severity_name(top->severity), code(top->failure->id),
                       prose(top->failure->title), prose(subject_line(*top)));
  }
  for (const CoverageLine& line : coverage_lines(coverage_of(analysis))) {
    out << "\n> **" << line.label << ":** " << prose(line.text) << "\n";
  }
  if (count > 0) {
    out << "\n";
    render_table(analysis, out);
  }
  for (const Diagnosis& diagnosis : analysis.diagnoses) render_diagnosis(diagnosis, out);
  render_inputs(analysis, out);
}

}  // namespace faultline
