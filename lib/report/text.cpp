#include <fmt/format.h>

#include <algorithm>

#include "report/report.h"

namespace faultline {
namespace {

// Evidence lines shown per diagnosis unless --verbose.
constexpr size_t kFoldedEvidence = 4;
// Evidence text is cut here: a log line can be as long as the reader allows.
constexpr size_t kEvidenceWidth = 240;

struct Style {
  bool on;
  std::string wrap(std::string_view code, std::string_view text) const {
    return on ? fmt::format("\x1b[{}m{}\x1b[0m", code, text) : std::string(text);
  }
  std::string bold(std::string_view text) const { return wrap("1", text); }
  std::string dim(std::string_view text) const { return wrap("2", text); }
  std::string severity(Severity severity) const {
    static constexpr std::string_view kCodes[] = {"36", "33", "31", "1;31"};
    std::string label(severity_name(severity));
    std::transform(label.begin(), label.end(), label.begin(), ::toupper);
    return wrap(kCodes[static_cast<size_t>(severity)], label);
  }
};

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
  std::string line;
  for (const std::string& part : parts) line += (line.empty() ? "" : " · ") + part;
  return line.empty() ? "GPU not identified" : line;
}

std::string when_line(const Diagnosis& diagnosis) {
  std::string line = fmt::format("confidence {:.2f} · {} · {}", diagnosis.confidence,
                                 diagnosis.failure->kind, diagnosis.role);
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

std::string clip(std::string_view text) {
  if (text.size() <= kEvidenceWidth) return std::string(text);
  return std::string(text.substr(0, kEvidenceWidth)) + "…";
}

void render_diagnosis(const Diagnosis& d, const TextOptions& options, const Style& style,
                      std::ostream& out) {
  out << fmt::format("{}. {}  {}  {}\n", d.position, style.severity(d.failure->severity),
                     style.bold(d.failure->id), d.failure->title);
  out << "   " << subject_line(d) << "\n";
  out << "   " << style.dim(when_line(d)) << "\n";
  if (!d.failure->explanation.empty()) out << "   " << d.failure->explanation << "\n";
  out << "   Evidence:\n";
  const size_t shown =
      options.verbose ? d.evidence.size() : std::min(d.evidence.size(), kFoldedEvidence);
  for (size_t i = 0; i < shown; ++i) {
    const Evidence& e = d.evidence[i];
    out << "     " << style.dim(fmt::format("{}:{}", e.path, e.line)) << "  " << clip(e.text)
        << "\n";
  }
  if (shown < d.evidence.size()) {
    out << "     " << style.dim(fmt::format("… {} more (--verbose)", d.evidence.size() - shown))
        << "\n";
  }
  if (!d.fix.empty()) {
    out << "   Fix:\n";
    for (size_t i = 0; i < d.fix.size(); ++i) out << fmt::format("     {}. {}\n", i + 1, d.fix[i]);
  }
  if (!d.verify.empty()) {
    out << "   Verify:\n";
    for (const VerifyStep& step : d.verify) {
      out << "     $ " << style.bold(step.command) << "\n";
      if (!step.expect.empty()) out << "       expect: " << step.expect << "\n";
    }
  }
  for (const std::string& missing : d.missing) out << "   Missing: " << missing << "\n";
  for (const std::string& note : d.notes) out << "   " << style.dim("Note: " + note) << "\n";
  if (!d.failure->source.empty()) out << "   " << style.dim("Source: " + d.failure->source) << "\n";
}

}  // namespace

void render_text(const Analysis& analysis, const TextOptions& options, std::ostream& out) {
  const Style style{options.color};
  uint64_t lines = 0;
  for (const InputSummary& input : analysis.inputs) lines += input.lines;
  const size_t count = analysis.diagnoses.size();
  out << style.bold(fmt::format("faultline: {} finding{} in {} input{} ({} lines)", count,
                                count == 1 ? "" : "s", analysis.inputs.size(),
                                analysis.inputs.size() == 1 ? "" : "s", lines))
      << "\n";
  const bool serious =
      std::any_of(analysis.diagnoses.begin(), analysis.diagnoses.end(),
                  [](const Diagnosis& d) { return d.failure->severity >= Severity::kWarning; });
  if (!serious) out << "Nothing at warning or above: no known GPU fault in these logs.\n";
  for (const Diagnosis& diagnosis : analysis.diagnoses) {
    out << "\n";
    render_diagnosis(diagnosis, options, style, out);
  }
}

}  // namespace faultline
