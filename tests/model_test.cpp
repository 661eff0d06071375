#include "model/model.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <stdexcept>

using faultline::normalize_pci;
using faultline::Timestamp;

TEST_CASE("normalize_pci: every spelling of one GPU is the same address") {
  CHECK(normalize_pci("PCI:0000:3b:00") == "0000:3b:00.0");
  CHECK(normalize_pci("0000:3b:00") == "0000:3b:00.0");
  CHECK(normalize_pci("00000000:3B:00.0") == "0000:3b:00.0");
  CHECK(normalize_pci("0000:2b:00.0") == "0000:2b:00.0");
  CHECK(normalize_pci("00000001:00:00.0") == "0001:00:00.0");
  CHECK(normalize_pci("0018:01:00") == "0018:01:00.0");
  CHECK(normalize_pci("3b:00.1") == "0000:3b:00.1");
}

TEST_CASE("normalize_pci: NCCL's packed busId") {
  CHECK(normalize_pci("3b000") == "0000:3b:00.0");
  CHECK(normalize_pci("bd000") == "0000:bd:00.0");
  CHECK(normalize_pci("13b000") == "0001:3b:00.0");
}

TEST_CASE("normalize_pci: rejects what is no address") {
  CHECK(normalize_pci("") == "");
  CHECK(normalize_pci("GPU-3f2a91c0") == "");
  CHECK(normalize_pci("0000:3b") == "");
  CHECK(normalize_pci("0000:3b:00:0") == "");
  CHECK(normalize_pci("12") == "");
}

TEST_CASE("Timestamp::iso") {
  CHECK(Timestamp().iso() == "");
  CHECK(Timestamp::BootRelative(1234.56789).iso() == "+1234.567890s");
  CHECK(Timestamp::Absolute(1709633553, 0).iso() == "2024-03-05T10:12:33+00:00");
  CHECK(Timestamp::Absolute(1709633553.25, std::nullopt).iso() == "2024-03-05T10:12:33.250000");
  // The offset is shown as the input stated it; the seconds stay UTC.
  CHECK(Timestamp::Absolute(1709633553, 120).iso() == "2024-03-05T12:12:33+02:00");
  CHECK(Timestamp::Absolute(1709633553, -300).iso() == "2024-03-05T05:12:33-05:00");
}

TEST_CASE("comparable: only timestamps of one kind order") {
  CHECK(comparable(Timestamp::BootRelative(1), Timestamp::BootRelative(2)));
  CHECK_FALSE(comparable(Timestamp::BootRelative(1), Timestamp::Absolute(2, 0)));
  CHECK_FALSE(comparable(Timestamp(), Timestamp()));
}

TEST_CASE("Fields: a map from name to text, iterated in name order") {
  faultline::Fields fields{{"xid", "79"}, {"pci", "0000:3b:00"}};
  fields.set("boot", "2");
  fields.set("xid", "48");  // an existing name is replaced, not added
  REQUIRE(fields.size() == 3);
  std::string order;
  for (const auto& [name, value] : fields) order += fmt::format("{}={};", name, value);
  CHECK(order == "boot=2;pci=0000:3b:00;xid=48;");
  CHECK(fields.contains("pci"));
  CHECK_FALSE(fields.contains("pc"));
  CHECK(fields.find("rank") == fields.end());
  CHECK(fields.at("boot") == "2");
  CHECK_THROWS_AS((void)fields.at("rank"), std::out_of_range);
  CHECK(fields.erase("pci") == 1);
  CHECK(fields.erase("pci") == 0);
  CHECK(fields == faultline::Fields{{"xid", "48"}, {"boot", "2"}});
}

TEST_CASE("Fields::FromSorted: the same fields as set() one by one, in any order given") {
  const std::string long_value(300, 'v');  // a length of two bytes
  const faultline::Fields sorted =
      faultline::Fields::FromSorted({{"boot", "2"}, {"message", long_value}, {"xid", "79"}});
  CHECK(sorted == faultline::Fields{{"xid", "79"}, {"message", long_value}, {"boot", "2"}});
  CHECK(sorted.at("message") == long_value);
  // Out of order, or a name twice: set one by one, the later value kept.
  const faultline::Fields unsorted =
      faultline::Fields::FromSorted({{"xid", "79"}, {"boot", "2"}, {"xid", "48"}});
  CHECK(unsorted == faultline::Fields{{"boot", "2"}, {"xid", "48"}});
  CHECK(faultline::Fields::FromSorted({}).empty());
}

TEST_CASE("Fields::FromSorted with a source: values found in the line read the same") {
  const faultline::SharedText line(
      "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.");
  faultline::Fields fields = faultline::Fields::FromSorted(
      {{"message", "GPU has fallen off the bus."}, {"pci", "0000:3b:00"}, {"user", "alice"}}, line);
  const faultline::Fields copied{
      {"message", "GPU has fallen off the bus."}, {"pci", "0000:3b:00"}, {"user", "alice"}};
  CHECK(fields == copied);
  // A value kept as a place is a view of the line itself; one the line lacks is copied.
  CHECK(fields.at("pci").data() == line.data() + line.find("0000:3b:00"));
  CHECK(fields.at("user") == "alice");
  // Setting and erasing other fields leaves those places as they were.
  fields.set("boot", "2");
  CHECK(fields.erase("user") == 1);
  CHECK(fields == faultline::Fields{{"boot", "2"},
                                    {"message", "GPU has fallen off the bus."},
                                    {"pci", "0000:3b:00"}});
  // A rewrite copies every value: redaction keeps nothing of the original line.
  fields.rewrite_values([](std::string* text) { *text = "~" + *text; });
  CHECK(fields.at("pci") == "~0000:3b:00");
  for (const auto& [name, value] : fields) {
    CHECK_FALSE((value.data() >= line.data() && value.data() < line.data() + line.size()));
  }
}

TEST_CASE("SharedText: copies share one counted text, a NUL after it") {
  faultline::SharedText line("NVRM: Xid (PCI:0000:3b:00): 79");
  const faultline::SharedText copy = line;
  CHECK(copy.data() == line.data());  // shared, not copied
  CHECK(std::string_view(line.c_str()) == "NVRM: Xid (PCI:0000:3b:00): 79");
  CHECK(line.size() == 30);
  // Shared: assign() leaves the copy as it was.
  line.assign("NVRM: Xid (PCI:0000:3b:00): 48");
  CHECK(copy == "NVRM: Xid (PCI:0000:3b:00): 79");
  CHECK(line == "NVRM: Xid (PCI:0000:3b:00): 48");
  // Unshared: a text that fits is written in place, a longer one gets its own.
  const char* before = line.data();
  line.assign("Xid 63");
  CHECK(line.data() == before);
  CHECK(std::string_view(line.c_str()) == "Xid 63");
  line.assign("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python");
  CHECK(line == "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python");
  line.assign("");
  CHECK(line.empty());
  CHECK(std::string_view(line.c_str()).empty());
  CHECK(faultline::SharedText(std::string()).empty());
}
