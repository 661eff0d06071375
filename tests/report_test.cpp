// The report formats, the filters, --redact and the progress callback.
#include "report/report.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <regex>
#include <sstream>

#include "builtin_catalog.h"
#include "catalog/signatures.h"
#include "catalog/tables.h"
#include "diagnose/diagnose.h"
#include "log_folder.h"
#include "pipeline/progress.h"
#include "report/json.h"
#include "report/timeline_svg.h"

using namespace faultline;

namespace {

// The gpu-off-bus sample: gpu-off-bus on 0000:4c:00.0 (20:41:46 to 20:42:10, +02:00), then a
// fatal PCIe error on 0000:4a:00.0 (20:41:46), both on gpu-node-031.
Analysis off_bus() {
  return analyze({FAULTLINE_SOURCE_DIR "/samples/gpu-off-bus"}, catalog());
}

std::vector<std::string> ids(const Analysis& analysis) {
  std::vector<std::string> out;
  for (const Diagnosis& d : analysis.diagnoses) out.push_back(d.failure->id);
  return out;
}

const std::vector<std::string> kBoth = {"gpu-off-bus", "pcie-aer-fatal"};

// A diagnosis built by hand, with what --redact must mask and what it must keep.
Analysis hand_made(const FailureClass& failure) {
  Analysis analysis;
  Event event;
  event.signature = "xid-79-off-bus";
  event.host = "gpu-node-9";
  event.gpu.pci = "0000:b7:00.0";
  event.evidence = {"/home/alice/logs/gpu-node-9/syslog",
                    12,
                    {},
                    "Mar  5 10:12:33 gpu-node-9 kernel: NVRM: Xid (PCI:0000:b7:00): 79, "
                    "name=/home/alice/venv/bin/python from 10.1.2.3 driver 535.129.03",
                    "xid-79-off-bus"};
  event.fields.set("peer", "10.1.2.3");
  analysis.events.push_back(event);
  Diagnosis d;
  d.position = 1;
  d.failure = &failure;
  d.severity = failure.severity;
  d.host = "gpu-node-9";
  d.gpu.pci = "0000:b7:00.0";
  d.gpu.serial = "1652329731246";
  d.evidence = {event.evidence,
                {"ticket.txt", 3, {}, "bob@bastion:~$ ssh gpu-node-9 # fe80::1c2:3 c10::cuda", ""}};
  d.fix = {"Drain gpu-node-9 (`ssh bob@gpu-node-9`)"};
  d.verify = {{"ssh gpu-node-9 nvidia-smi -q -i 0000:b7:00.0", "the GPU answers"}};
  analysis.diagnoses.push_back(d);
  analysis.inputs.push_back(
      {"/Users/carol/gpu-node-9.log", "gpu-node-9", InputKind::kKernelLog, "none", 1, 100, 0, ""});
  return analysis;
}

FailureClass off_bus_class() {
  FailureClass failure;
  failure.id = "gpu-off-bus";
  failure.title = "GPU fell off the bus";
  failure.kind = ClassKind::kHardware;
  failure.severity = Severity::kCritical;
  return failure;
}

std::string render(void (*renderer)(const Analysis&, std::ostream&), const Analysis& analysis) {
  std::ostringstream out;
  renderer(analysis, out);
  return out.str();
}

}  // namespace

TEST_CASE("--since and --until read ISO 8601 and 'YYYY-MM-DD HH:MM:SS'") {
  const auto zoned = parse_time("2025-07-23T20:42:00.5+02:00");
  REQUIRE(zoned);
  CHECK(zoned->utc_offset_minutes == 120);
  CHECK(zoned->iso() == "2025-07-23T20:42:00.500000+02:00");
  CHECK(parse_time("2025-07-23T18:42:00Z")->seconds == doctest::Approx(zoned->seconds - 0.5));
  const auto wall = parse_time("2025-07-23 20:42:00");
  REQUIRE(wall);
  CHECK_FALSE(wall->utc_offset_minutes);
  CHECK(parse_time("2025-07-23")->iso() == "2025-07-23T00:00:00");
  for (const char* bad : {"", "yesterday", "2025-13-01", "2025-07-23T25:00:00", "2025-07-23 20:42",
                          "2025-07-23T20:42:00+2"}) {
    CHECK_MESSAGE(!parse_time(bad), bad);
  }
}

TEST_CASE("filters keep what matches every criterion") {
  const auto filtered = [](const Filter& filter) {
    Analysis analysis = off_bus();
    apply_filter(filter, &analysis);
    return analysis;
  };
  CHECK(ids(filtered({})) == kBoth);
  CHECK(ids(filtered({.hosts = {"GPU-NODE-031"}})) == kBoth);
  CHECK(filtered({.hosts = {"gpu-node-032"}}).diagnoses.empty());
  CHECK(filtered({.hosts = {"gpu-node-032"}}).events.empty());
  const Analysis gpu = filtered({.gpus = {normalize_pci("PCI:0000:4C:00")}});
  CHECK(ids(gpu) == std::vector<std::string>{"gpu-off-bus"});
  CHECK_FALSE(gpu.events.empty());
  for (const Event& event : gpu.events) CHECK(event.gpu.pci == "0000:4c:00.0");
  CHECK(gpu.diagnoses[0].position == 1);
  // The same instant, in the log's zone, in UTC and as a wall clock: only the Xid 79 at
  // 20:42:10 is after it.
  for (const char* since :
       {"2025-07-23T20:42:00+02:00", "2025-07-23T18:42:00Z", "2025-07-23 20:42:00"}) {
    const Analysis late = filtered({.since = parse_time(since)});
    CHECK_MESSAGE(ids(late) == std::vector<std::string>{"gpu-off-bus"}, since);
    CHECK(late.events.size() == 1);
  }
  CHECK(ids(filtered({.until = parse_time("2025-07-23T20:41:00+02:00")})).empty());
  CHECK(ids(filtered({.min_severity = Severity::kCritical})) == kBoth);
  // Boot-relative times cannot be placed on the calendar: kept.
  Analysis boot = analyze({FAULTLINE_SOURCE_DIR "/samples/a100-contained-ecc"}, catalog());
  const size_t before = boot.diagnoses.size();
  apply_filter({.since = parse_time("2030-01-01")}, &boot);
  CHECK(boot.diagnoses.size() == before);
}

TEST_CASE("a filter that leaves nothing says which criterion did") {
  const auto note = [](const Filter& filter) {
    Analysis analysis = off_bus();
    apply_filter(filter, &analysis);
    return analysis.filter_note;
  };
  CHECK(note({}).empty());
  CHECK(note({.hosts = {"gpu-node-031"}}).empty());  // it leaves something
  CHECK(note({.hosts = {"gpu-node-032"}}) ==
        "filters left no event: --host gpu-node-032 matches no host of the events (gpu-node-031)");
  CHECK(note({.since = parse_time("2030-01-01")})
            .starts_with("filters left no event: --since 2030-01-01T00:00:00 is after every event "
                         "(the last at 2025-07-23T"));
  CHECK(
      note({.until = parse_time("2001-01-01")})
          .starts_with("filters left no event: --until 2001-01-01T00:00:00 is before every event"));
  CHECK(
      note({.gpus = {"0000:87:00.0"}})
          .starts_with("filters left no event: --gpu 0000:87:00.0 matches no GPU of the events ("));
  // Two criteria that only together keep nothing: tests/summaries_test.sh ("together").
}

TEST_CASE("--redact masks hosts, IPs and users consistently and keeps GPU identities") {
  const FailureClass failure = off_bus_class();
  Analysis analysis = hand_made(failure);
  redact(&analysis);
  const std::string json = render(render_json, analysis);
  std::ostringstream text;
  render_text(analysis, {false, true, 0}, text);
  for (const std::string& out :
       {json, text.str(), render(render_markdown, analysis), render(render_github, analysis),
        render(render_html, analysis), render(render_jsonl, analysis)}) {
    for (const char* secret :
         {"gpu-node-9", "alice", "bob", "carol", "bastion", "10.1.2.3", "fe80::1c2:3"}) {
      CHECK_MESSAGE(out.find(secret) == std::string::npos, secret << " in\n" << out);
    }
    CHECK(out.find("0000:b7:00.0") != std::string::npos);
  }
  for (const std::string& out : {json, text.str()}) {
    for (const char* kept : {"1652329731246", "535.129.03", "c10::cuda"}) {
      CHECK_MESSAGE(out.find(kept) != std::string::npos, kept << " not in\n" << out);
    }
  }
  const Diagnosis& d = analysis.diagnoses[0];
  CHECK(d.host == "host-1");
  CHECK(analysis.events[0].host == "host-1");
  CHECK(analysis.events[0].fields.at("peer") == "ip-1");
  // Numbered in the order the analysis holds them: inputs, events, diagnoses.
  CHECK(analysis.inputs[0].path == "/Users/user-1/host-1.log");
  CHECK(analysis.inputs[0].host == "host-1");
  CHECK(d.evidence[0].path == "/home/user-2/logs/host-1/syslog");
  CHECK(d.evidence[0].text.find("name=/home/user-2/venv/bin/python from ip-1") !=
        std::string::npos);
  CHECK(d.evidence[1].text == "user-3@host-2:~$ ssh host-1 # ip-2 c10::cuda");
  CHECK(d.fix[0] == "Drain host-1 (`ssh user-3@host-1`)");
}

TEST_CASE("Markdown: every table row has the header's columns, fences survive backticks") {
  Analysis analysis = off_bus();
  analysis.diagnoses[0].evidence[0].text = "a | pipe and ``` a fence";
  analysis.diagnoses[0].host = "odd|host";
  const std::string md = render(render_markdown, analysis);
  std::istringstream lines(md);
  std::string line;
  int columns = -1;
  int tables = 0;
  while (std::getline(lines, line)) {
    if (!line.starts_with("|")) {
      columns = -1;
      continue;
    }
    // Cells are split by pipes that are not escaped.
    int pipes = 0;
    for (size_t i = 0; i < line.size(); ++i)
      pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    if (columns < 0) ++tables;
    if (columns >= 0) CHECK_MESSAGE(pipes == columns, line);
    columns = pipes;
  }
  CHECK(tables == 2);  // the diagnoses and the inputs
  CHECK(md.find("````text\n") != std::string::npos);
  CHECK(md.starts_with("## faultline: 2 findings"));
}

TEST_CASE("GitHub: one command per diagnosis at warning or above, escaped as GitHub documents") {
  const FailureClass failure = off_bus_class();
  Analysis analysis = hand_made(failure);
  analysis.diagnoses[0].evidence[0].path = "logs/a,b:c%d.log";
  // A line break inside a field cannot start a second command.
  analysis.diagnoses[0].fix = {"100% sure,\r\nreally: yes"};
  const std::string out = render(render_github, analysis);
  CHECK(out ==
        "::error file=logs/a%2Cb%3Ac%25d.log,line=12,title=faultline #1 gpu-off-bus (critical)::"
        "GPU fell off the bus%0AGPU 0000:b7:00.0 on gpu-node-9 · serial 1652329731246%0A"
        "Fix: 100%25 sure,\xEF\xBF\xBD\xEF\xBF\xBDreally: yes%0A"
        "Verify: ssh gpu-node-9 nvidia-smi -q -i 0000:b7:00.0 (expect: the GPU answers)\n");
  analysis.diagnoses[0].severity = Severity::kInfo;
  CHECK(render(render_github, analysis).empty());
}

TEST_CASE("HTML: text from the inputs is escaped, the page loads nothing") {
  Analysis analysis = off_bus();
  analysis.diagnoses[0].evidence[0].text = "<script>alert(1)</script> & \x1b[31m";
  const std::string html = render(render_html, analysis);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt; &amp; \xEF\xBF\xBD[31m") !=
        std::string::npos);
  CHECK(html.find("default-src 'none'") != std::string::npos);
  for (const char* remote : {"http:", "https:", "src=", "@import", "url("}) {
    CHECK_MESSAGE(html.find(remote) == std::string::npos, remote);
  }
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("#1 gpu-off-bus") != std::string::npos);
}

TEST_CASE("text: plain without colour, wrapped to the width, commands whole") {
  Analysis analysis = off_bus();
  analysis.diagnoses[0].evidence[0].text =
      analysis.diagnoses[0].evidence[0].text + " \x1b[31mred\x1b[0m";
  std::ostringstream out;
  render_text(analysis, {false, false, 60}, out);
  CHECK(out.str().find('\x1b') == std::string::npos);
  std::istringstream lines(out.str());
  std::string line;
  while (std::getline(lines, line)) {
    if (line.starts_with("     $ ")) continue;  // a command is never cut
    size_t columns = 0;
    for (char c : line) columns += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    CHECK_MESSAGE(columns <= 60, line);
  }
  CHECK(out.str().find("Timeline of the incident") != std::string::npos);
  std::ostringstream colour;
  render_text(analysis, {true, false, 60}, colour);
  CHECK(colour.str().find("\x1b[1;31mCRITICAL\x1b[0m") != std::string::npos);
}

TEST_CASE("text: a long log line keeps its head and its message's tail (issue 21)") {
  Analysis analysis = off_bus();
  const std::string xid95 =
      "Dec  2 14:07:31 gpu-node-104 kernel: [280244.791650] NVRM: Xid (PCI:0000:ab:00): 95, "
      "pid=53905, name=python, Uncontained: FBHUB. RST: Yes, D-RST: No";
  analysis.diagnoses[0].evidence[0].text = xid95;
  std::ostringstream out;
  render_text(analysis, {false, false, 100}, out);
  const std::string text = out.str();
  const size_t line = text.find("NVRM: Xid (PCI:0000:ab:00): 95,");
  REQUIRE(line != std::string::npos);
  const std::string shown = text.substr(line, text.find('\n', line) - line);
  CHECK(shown.find("…") != std::string::npos);
  CHECK(shown.ends_with("FBHUB. RST: Yes, D-RST: No"));
  // The path gave way: its file and folder stay.
  CHECK(text.find("gpu-off-bus/syslog:") != std::string::npos);
  CHECK(text.find(FAULTLINE_SOURCE_DIR "/samples/gpu-off-bus/syslog:") == std::string::npos);
}

TEST_CASE("text: a wrapped message's evidence shows each of its lines on a row") {
  Analysis analysis = off_bus();
  analysis.diagnoses[0].evidence[0].text =
      "Accelerator Fatal Error: call to cuCtxCreate returned error 214\n"
      "  (CUDA_ERROR_ECC_UNCORRECTABLE): uncorrectable ECC error encountered";
  for (const bool verbose : {false, true}) {
    std::ostringstream out;
    render_text(analysis, {false, verbose, 0}, out);
    const std::string text = out.str();
    const size_t first = text.find("call to cuCtxCreate returned error 214\n");
    REQUIRE_MESSAGE(first != std::string::npos, text);
    const size_t row = text.find('\n', first) + 1;
    const std::string_view next = std::string_view(text).substr(row, text.find('\n', row) - row);
    CHECK(next.find("(CUDA_ERROR_ECC_UNCORRECTABLE): uncorrectable ECC error") !=
          std::string_view::npos);
    CHECK(next.starts_with("          "));
  }
}

TEST_CASE("the SVG timeline draws the loss curves on the events' time axis") {
  const Analysis analysis = off_bus();
  // 20:41:00 to 20:43:00 local, written as the wall clock a training log prints.
  const double start = parse_time("2025-07-23 20:41:00")->seconds;
  Curve curve{"rank 0", {}};
  for (int i = 0; i <= 120; ++i)
    curve.points.emplace_back(start + i, i == 60 ? NAN : 3.0 - i * 0.01);
  const std::string svg = timeline_svg(analysis, {curve}, {});
  CHECK(svg.starts_with("<svg"));
  CHECK(std::count(svg.begin(), svg.end(), '\n') > 5);
  // The NaN splits the curve in two.
  size_t polylines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1)) {
    ++polylines;
  }
  CHECK(polylines == 2);
  CHECK(svg.find("class=\"event-line\"") != std::string::npos);
  CHECK(svg.find("UTC+02:00") != std::string::npos);
  CHECK(timeline_svg(Analysis{}, {}, {}).empty());
}

TEST_CASE("the loss chart draws the validation losses dashed and marks each anomaly's kind") {
  // The job8-early-loss-spike sample's training log, with an evaluation after iteration 100.
  Analysis analysis = analyze({FAULTLINE_SOURCE_DIR "/samples/job8-early-loss-spike"}, catalog());
  REQUIRE(analysis.series.size() == 1);
  Series& series = analysis.series[0];
  const MetricPoint& at = series.points()[99];
  series.AddValidation({.step = at.step, .line = 1, .loss = 3.9f, .time = at.time});
  series.AddValidation({.step = at.step + 1, .line = 2, .loss = 3.8f, .time = at.time + 1});
  std::vector<Curve> timed;
  std::vector<Curve> by_step;
  loss_curves(analysis.series, &timed, &by_step);
  REQUIRE(timed.size() == 2);
  CHECK(by_step.empty());
  CHECK_FALSE(timed[0].validation);
  CHECK(timed[1].validation);
  CHECK(timed[1].label == timed[0].label + " validation");
  CHECK(timed[1].points.size() == 2);
  CHECK(timed[1].points[0].first == at.time);
  const std::string svg = timeline_svg(analysis, timed, by_step);
  CHECK(svg.find(R"(class="curve validation")") != std::string::npos);
  CHECK(svg.find(R"(<text class="anomaly-kind")") != std::string::npos);
  CHECK(svg.find("<title>loss-spike: step 295:") != std::string::npos);
  CHECK(svg.find("<title>grad-norm-spike: step 295:") != std::string::npos);
}

TEST_CASE("progress is reported every 64 MiB, not every line") {
  std::vector<uint64_t> calls;
  const Progress progress = [&](const std::string&, uint64_t bytes) { calls.push_back(bytes); };
  ProgressTracker tracker(progress, std::nullopt);
  for (int i = 0; i < 999; ++i) tracker.Add("a.log", 1);
  CHECK(calls.empty());
  tracker.Add("a.log", (uint64_t{64} << 20) - 999);
  tracker.Add("b.log", uint64_t{64} << 20);
  CHECK(calls == std::vector<uint64_t>{uint64_t{64} << 20, uint64_t{128} << 20});
}

TEST_CASE("a deadline that has passed stops reading with an error naming the input") {
  const std::string path = FAULTLINE_SOURCE_DIR "/samples/a100-contained-ecc";
  AnalyzeOptions options;
  options.deadline = std::chrono::steady_clock::now();
  const Analysis stopped = analyze({path}, catalog(), options);
  const Analysis whole = analyze({path}, catalog());
  REQUIRE_FALSE(whole.events.empty());
  CHECK(stopped.events.size() < whole.events.size());
  CHECK(std::any_of(stopped.warnings.begin(), stopped.warnings.end(), [](const std::string& w) {
    return w.find("reading stopped at the time limit") != std::string::npos;
  }));
}

TEST_CASE("text: the incident's timeline runs from the first event to the collateral") {
  const Analysis analysis =
      analyze({FAULTLINE_SOURCE_DIR "/samples/a100-contained-ecc"}, catalog());
  std::ostringstream out;
  render_text(analysis, {false, false, 0}, out);
  const std::string text = out.str();
  const size_t start = text.find("Timeline of the incident");
  REQUIRE(start != std::string::npos);
  std::istringstream lines(text.substr(start));
  std::vector<std::string> timeline;
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line) && !line.empty()) timeline.push_back(line);
  REQUIRE(timeline.size() >= 2);
  CHECK(timeline.front().find("+86213.402771s  #1 ecc-contained  NVRM: Xid (PCI:0000:4e:00): 94") !=
        std::string::npos);
  CHECK(timeline.back().find("no time  #2 cuda-ecc-error  [rank3]: RuntimeError: CUDA error") !=
        std::string::npos);
}

namespace {

// Whether `text` is UTF-8 (RFC 3629) with no control character but newline (and tab where
// `tabs`): no C0, no DEL, no C1. Written apart from the renderers' own check on purpose.
bool clean_utf8(const std::string& text, bool tabs, std::string* why) {
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    uint32_t code = n == 1 ? b : n == 2 ? b & 0x1F : n == 3 ? b & 0x0F : b & 0x07;
    for (size_t k = 1; k < n; ++k) {
      const auto c = i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0;
      if ((c & 0xC0) != 0x80) n = 0;
      code = (code << 6) | (c & 0x3F);
    }
    const bool overlong =
        (n == 2 && code < 0x80) || (n == 3 && code < 0x800) || (n == 4 && code < 0x10000);
    const bool control =
        code < 0x20 ? !(code == '\n' || (tabs && code == '\t')) : (code >= 0x7F && code < 0xA0);
    if (n == 0 || overlong || control || (code >= 0xD800 && code < 0xE000) || code > 0x10FFFF) {
      *why = fmt::format("byte {} (0x{:02x})", i, b);
      return false;
    }
    i += n;
  }
  return true;
}

}  // namespace

TEST_CASE("issue 20: every format is clean UTF-8 for hostile paths and lines") {
  LogFolder logs;
  // An OSC 52 clipboard write in a folder name; an 8-bit CSI as U+009B and as a raw byte, a
  // lone surrogate, a truncated sequence and an overlong slash in the line.
  logs.Write("node\x1b]52;c;aGk=\x07/kern.log",
             "[ 100.000001] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=py\xc2\x9b"
             "31m\x9b"
             "2J\xed\xa0\x80\xe2\x82 \xc0\xaf, GPU has fallen off the bus.\n");
  const Analysis analysis = analyze({logs.path()}, catalog());
  REQUIRE_FALSE(analysis.diagnoses.empty());
  std::ostringstream text, verbose;
  render_text(analysis, {false, false, 0}, text);
  render_text(analysis, {false, true, 0}, verbose);
  const std::pair<std::string, std::string> outputs[] = {
      {"text", text.str()},
      {"text --verbose", verbose.str()},
      {"markdown", render(render_markdown, analysis)},
      {"github", render(render_github, analysis)},
      {"html", render(render_html, analysis)}};
  for (const auto& [format, out] : outputs) {
    std::string why;
    CHECK_MESSAGE(clean_utf8(out, format == "html", &why), format << ": " << why);
    const bool escape = out.find('\x1b') != std::string::npos;
    CHECK_MESSAGE(!escape, format);
  }
  CHECK(printable("a\xc2\x9b"
                  "b\x9b"
                  "c\xed\xa0\x80") == "a\uFFFDb\uFFFDc\uFFFD\uFFFD\uFFFD");
  CHECK(printable("caf\xc3\xa9 \xf0\x9f\x94\xa5\tx") == "caf\xc3\xa9 \xf0\x9f\x94\xa5 x");
}

// A qualified name is a name of its own (its domain may name the company): masked whole.
TEST_CASE("--redact: hosts in any case and inside compound tokens, not inside longer names") {
  Analysis analysis;
  analysis.inputs.push_back(
      {"logs/node-a17/kern.log", "node-a17", InputKind::kKernelLog, "none", 1, 100, 0, ""});
  analysis.warnings = {
      "NODE-A17 node-a17_backup node-a17.cluster.local node-a170 xnode-a17 node-a17-ib0",
      "srun: error: node-b22: task 3: Out Of Memory",
      "later: node-b22, ip-10-20-30-40.ec2.internal, 10.20.30.40, i-0abc1234def567890, ~alice/x",
      "frame #3: c10d::ProcessGroupNCCL::~ProcessGroupNCCL() from 1ubuntu1~22.04"};
  redact(&analysis);
  CHECK(analysis.inputs[0].host == "host-1");
  CHECK(analysis.inputs[0].path == "logs/host-1/kern.log");
  CHECK(analysis.warnings[0] == "host-1 host-1_backup host-2 node-a170 xnode-a17 host-1-ib0");
  CHECK(analysis.warnings[1] == "srun: error: host-3: task 3: Out Of Memory");
  CHECK(analysis.warnings[2] == "later: host-3, ip-1.ec2.internal, ip-1, host-4, ~user-1/x");
  CHECK(analysis.warnings[3] ==
        "frame #3: c10d::ProcessGroupNCCL::~ProcessGroupNCCL() from 1ubuntu1~22.04");
}
