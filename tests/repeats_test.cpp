// Floods at speed (issue 20): a line that repeats one read in full but for its time is counted
// without matching it again, and what the report says of the flood stays exact.
#include "extract/repeats.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

#include "catalog/tables.h"
#include "log_folder.h"
#include "pipeline/pipeline.h"

using namespace faultline;
using faultline::extract_internal::RepeatedLine;

namespace {

constexpr std::string_view kXid95 =
    "NVRM: Xid (PCI:0000:3b:00): 95, pid=2918, name=python3, Uncontained: FBHUB. RST: Yes, "
    "D-RST: No";

std::string syslog_line(int second, std::string_view host) {
  return fmt::format("Mar 24 07:39:{:02d} {} kernel: [ 1000.{:06d}] {}", second, host,
                     second * 1000, kXid95);
}

}  // namespace

TEST_CASE("a repeated line's clock is learnt from two lines with the same outcome") {
  RepeatedLine remembered;
  const std::string first = syslog_line(10, "node17");
  const size_t message = first.find("NVRM:");
  remembered.Remember(first, message, "kind");
  // Nothing is known of the clock after one line: any change is read in full.
  CHECK_FALSE(remembered.Repeats(syslog_line(11, "node17")));
  CHECK(remembered.Repeats(first));
  remembered.Remember(syslog_line(11, "node17"), message, "kind");
  CHECK(remembered.Repeats(syslog_line(12, "node17")));
  remembered.Advance(syslog_line(19, "node17"));
  // The tens of seconds have not changed yet: such a line is read in full once, and teaches.
  CHECK_FALSE(remembered.Repeats(syslog_line(20, "node17")));
  remembered.Remember(syslog_line(20, "node17"), message, "kind");
  CHECK(remembered.Repeats(syslog_line(35, "node17")));
  // A digit outside the clock (the host's), an earlier time, another message: read in full.
  CHECK_FALSE(remembered.Repeats(syslog_line(12, "node18")));
  CHECK_FALSE(remembered.Repeats(syslog_line(10, "node17")));
  std::string other = syslog_line(12, "node17");
  other[other.size() - 2] = 'X';
  CHECK_FALSE(remembered.Repeats(other));
  // Another outcome for the same text (a new boot, another rank) teaches nothing.
  remembered.Remember(syslog_line(13, "node17"), message, "other kind");
  CHECK_FALSE(remembered.Repeats(syslog_line(14, "node17")));
}

TEST_CASE("issue 20: a flood over two hosts is counted per host, with exact first and last times") {
  LogFolder logs;
  std::string flood;
  int lines17 = 0;
  for (int i = 0; i < 6000; ++i) {
    // Runs of 1,500 lines from each host in turn; the host differs from its twin in one digit.
    const bool on17 = (i / 1500) % 2 == 0;
    lines17 += on17 ? 1 : 0;
    flood += fmt::format("2024-03-24T07:{:02d}:{:02d}.{:03d}+00:00 node1{} kernel: {}\n",
                         i / 600 % 60, i / 10 % 60, i % 10 * 100, on17 ? 7 : 8, kXid95);
  }
  logs.Write("kern.log", flood);
  Catalog catalog;
  std::string error;
  REQUIRE_MESSAGE(load_catalog({}, &catalog, &error), error);
  const Analysis analysis = analyze({logs.path()}, catalog);
  REQUIRE(analysis.diagnoses.size() == 2);
  for (const Diagnosis& d : analysis.diagnoses) {
    CHECK(d.occurrences == (d.host == "node17" ? lines17 : 6000 - lines17));
  }
  const Diagnosis& d17 =
      analysis.diagnoses[0].host == "node17" ? analysis.diagnoses[0] : analysis.diagnoses[1];
  CHECK(d17.first_seen.iso() == "2024-03-24T07:00:00+00:00");
  // The last node17 line is line 4500 (0-based 4499): 07:07:29.900.
  CHECK(d17.last_seen.iso() == "2024-03-24T07:07:29.900000+00:00");
}
