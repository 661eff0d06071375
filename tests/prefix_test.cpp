#include <doctest/doctest.h>

#include "envelope/envelope.h"

using faultline::find_year;
using faultline::parse_prefix;
using faultline::Timestamp;
using faultline::TimeZone;
using faultline::unix_seconds;

TEST_CASE("unix_seconds") {
  CHECK(unix_seconds(1970, 1, 1, 0, 0, 0) == 0);
  CHECK(unix_seconds(2024, 3, 5, 10, 12, 33) == 1709633553);
  CHECK(unix_seconds(2000, 2, 29, 0, 0, 0) == 951782400);
}

TEST_CASE("raw dmesg: seconds since boot") {
  auto p = parse_prefix("[  219.470994] ", 2024);
  CHECK(p.time.kind == Timestamp::Kind::kBootRelative);
  CHECK(p.time.seconds == doctest::Approx(219.470994));
  CHECK(p.host.empty());
}

TEST_CASE("dmesg -T: wall clock without a zone") {
  auto p = parse_prefix("[Sat Jul 11 05:52:47 2026] ", 1999);
  CHECK(p.time.kind == Timestamp::Kind::kAbsolute);
  CHECK(p.time.iso() == "2026-07-11T05:52:47");
  CHECK(parse_prefix("[Tue Mar  5 10:12:33 2024] ", 1999).time.iso() == "2024-03-05T10:12:33");
}

TEST_CASE("syslog and journalctl short: the year comes from the caller, the host from the line") {
  auto p = parse_prefix("Dec  2 11:38:47 worker4 kernel: [  219.470994] ", 2025);
  CHECK(p.time.iso() == "2025-12-02T11:38:47");
  CHECK(p.host == "worker4");
  REQUIRE(p.boot_seconds);
  CHECK(*p.boot_seconds == doctest::Approx(219.470994));

  auto journal = parse_prefix("Aug 10 15:36:05 gpu-node-a kernel: ", 2026);
  CHECK(journal.host == "gpu-node-a");
  CHECK(journal.time.iso() == "2026-08-10T15:36:05");

  auto hostless = parse_prefix("May 18 19:02:39 kernel: ", 2026);
  CHECK(hostless.host.empty());
  CHECK(hostless.time.known());
}

// A paste in front of the envelope: a markdown quote, grep -n's "N:" and grep -Hn's "FILE:N:"
// (POSIX grep's "%s:%d:" output), before the real line of k-xid48-xid64-rminit-syslog-k8s.
TEST_CASE("a quote or grep's line number before the envelope leaves it readable") {
  for (const char* paste : {"> ", "> > ", "11407:", "/var/log/syslog:11407:", "kern.log:7:"}) {
    INFO(paste);
    auto p =
        parse_prefix(std::string(paste) + "Dec  2 11:38:47 worker4 kernel: [  219.470994] ", 2025);
    CHECK(p.time.iso() == "2025-12-02T11:38:47");
    CHECK(p.host == "worker4");
  }
  auto dmesg = parse_prefix("1075:[  219.470994] ", 2025);
  REQUIRE(dmesg.boot_seconds);
  CHECK(*dmesg.boot_seconds == doctest::Approx(219.470994));
  // NCCL's host:pid:tid looks like a file and a line number, but no stamp follows it.
  CHECK(parse_prefix("gpu-node-7:1234:1234 [0] ", 2025).host == "gpu-node-7");
}

TEST_CASE("ISO 8601: RFC 3339 syslog, dmesg --time-format iso, a collector's prefix") {
  auto rfc = parse_prefix(
      "2025-07-23T20:41:46.835238+02:00 ThreadripperIntern kernel: [614950.716345] ", 0);
  CHECK(rfc.host == "ThreadripperIntern");
  CHECK(rfc.time.iso() == "2025-07-23T20:41:46.835238+02:00");
  CHECK(rfc.time.seconds == doctest::Approx(unix_seconds(2025, 7, 23, 18, 41, 46.835238)));

  auto decode = parse_prefix("kern  :warn  : 2025-01-21T04:41:44,283302+00:00 ", 0);
  CHECK(decode.time.iso() == "2025-01-21T04:41:44.283302+00:00");
  CHECK(decode.host.empty());

  auto collector = parse_prefix("10.0.0.5: kern: warning: [2026-04-22T21:26:20.599Z]: ", 0);
  CHECK(collector.time.iso() == "2026-04-22T21:26:20.599000+00:00");
}

TEST_CASE("glog and PyTorch c10 stamps: month and day without a year, nanoseconds") {
  // c10 prints the month unpadded (T §7): E810 is Aug 10, E1202 Dec 2.
  auto c10 = parse_prefix(
      "[default5]:[rank29]:[E1202 14:07:32.123456789 ProcessGroupNCCL.cpp:1515] ", 2026);
  CHECK(c10.time.iso() == "2026-12-02T14:07:32.123457");
  CHECK(c10.time.year_assumed);
  CHECK(parse_prefix("[rank1]:[E810 03:04:11.061727749 ProcessGroupNCCL.cpp:683] ", 2024)
            .time.iso() == "2024-08-10T03:04:11.061728");
  // torchrun's agent: glog with a zero-padded month, microseconds and a thread id.
  auto agent =
      parse_prefix("W0216 13:04:08.104644 139999514572608 torch/distributed/elastic/", 2025);
  CHECK(agent.time.iso() == "2025-02-16T13:04:08.104644");
  // A word that only looks like a level and a date is no stamp.
  CHECK_FALSE(parse_prefix("E1302 14:07:32 ", 2026).time.known());
  CHECK_FALSE(parse_prefix("BE1202 14:07:32 ", 2026).time.known());
}

TEST_CASE("an unknown prefix leaves the time unknown") {
  CHECK_FALSE(parse_prefix("root@gpu-node-042:~# ", 2026).time.known());
  CHECK_FALSE(parse_prefix("", 2026).time.known());
  CHECK_FALSE(parse_prefix("Foo 12 10:00:00 host kernel: ", 2026).time.known());
}

TEST_CASE("find_year") {
  CHECK(find_year("[Sat Jul 11 05:52:47 2026] ") == 2026);
  CHECK(find_year("2025-01-21T04:41:44,283302+00:00 ") == 2025);
  CHECK_FALSE(find_year("Aug 10 15:36:05 gpu-node-a kernel: "));
}

TEST_CASE("syslog dates are marked year_assumed and can be moved to another year") {
  auto p = parse_prefix("Nov  7 03:41:12 gpu-node-008 kernel: ", 2026);
  CHECK(p.time.year_assumed);
  CHECK_FALSE(parse_prefix("[Sat Jul 11 05:52:47 2026] ", 2026).time.year_assumed);
  const Timestamp moved = faultline::with_year(p.time, 2019);
  CHECK(moved.iso() == "2019-11-07T03:41:12");
  CHECK(faultline::year_of(moved) == 2019);
}

TEST_CASE("NCCL's host:pid:tid prefix names the host") {
  CHECK(parse_prefix("hostname-test:984:1257 [4] NCCL INFO ", 2026).host == "hostname-test");
  CHECK(parse_prefix("[rank7]:H100-2:19989:20082 [1] transport/net_ib.cc:1295 NCCL WARN ", 2026)
            .host == "H100-2");
  CHECK(parse_prefix("[2025-05-01 12:34:56] gpu-7:11:12 [0] ", 2026).host == "gpu-7");
  // The syslog envelope's host wins.
  CHECK(parse_prefix("Mar  5 10:12:33 node-a python[12]: node-b:1:2 [0] ", 2026).host == "node-a");
  CHECK(parse_prefix("ERROR 12:30:01 [3] ", 2026).host.empty());
}

TEST_CASE("--tz: fixed offsets and tz database names place wall-clock times") {
  const Timestamp summer = Timestamp::Absolute(unix_seconds(2026, 7, 1, 12, 0, 0), std::nullopt);
  const Timestamp winter = Timestamp::Absolute(unix_seconds(2026, 12, 2, 14, 7, 31), std::nullopt);
  auto fixed = TimeZone::Parse("+05:30");
  REQUIRE(fixed);
  CHECK(fixed->Apply(summer).iso() == "2026-07-01T12:00:00+05:30");
  CHECK(fixed->Apply(summer).seconds == doctest::Approx(summer.seconds - 330 * 60));
  CHECK(TimeZone::Parse("UTC")->Apply(winter).iso() == "2026-12-02T14:07:31+00:00");
  CHECK(TimeZone::Parse("-0800")->Apply(winter).iso() == "2026-12-02T14:07:31-08:00");
  // Times that name their zone, and boot-relative ones, are left alone.
  const Timestamp zoned = Timestamp::Absolute(summer.seconds, 120);
  CHECK(fixed->Apply(zoned).iso() == zoned.iso());
  CHECK(fixed->Apply(Timestamp::BootRelative(12.5)).iso() == "+12.500000s");
  // A named zone follows its summer time (needs Debian's tzdata).
  auto berlin = TimeZone::Parse("Europe/Berlin");
  REQUIRE(berlin);
  CHECK(berlin->Apply(summer).iso() == "2026-07-01T12:00:00+02:00");
  CHECK(berlin->Apply(winter).iso() == "2026-12-02T14:07:31+01:00");
  for (const char* bad : {"", "Mars/Olympus", "../../etc/passwd", "/etc/passwd", "+25:00", "+1:2:3",
                          "Europe/Berlin; rm"}) {
    CHECK_MESSAGE(!TimeZone::Parse(bad), bad);
  }
}

TEST_CASE("raw /dev/kmsg records: microseconds since boot") {
  // GPUD pkg/kmsg/testdata/kmsg.1.log.
  const std::string_view line = "6,3964,206764307,-;nvidia-nvswitch2: open (major=510)";
  auto p = parse_prefix(line.substr(0, line.find(';') + 1), 2024);
  CHECK(p.time.kind == Timestamp::Kind::kBootRelative);
  CHECK(p.time.seconds == doctest::Approx(206.764307));
  REQUIRE(p.boot_seconds);
  CHECK(*p.boot_seconds == doctest::Approx(206.764307));
}

TEST_CASE("journalctl -o short-monotonic and short-precise name the host") {
  // An ath10k report on linux-wireless (journalctl -o short-monotonic), as posted.
  auto monotonic = parse_prefix("[    9.235159] abreu kernel: ", 2025);
  CHECK(monotonic.time.seconds == doctest::Approx(9.235159));
  CHECK(monotonic.host == "abreu");
  // A raw dmesg line's message names no host.
  CHECK(parse_prefix("[    9.235159] ath10k_pci 0000:3a:00.0: ", 2025).host.empty());
  // Another tool's test data, in journalctl -o short-precise.
  auto precise = parse_prefix("Sep 12 14:25:44.984246 host kernel: ", 2025);
  CHECK(precise.host == "host");
  CHECK(precise.time.iso() == "2025-09-12T14:25:44.984246");
}

TEST_CASE("kubectl logs --timestamps: RFC 3339 with nanoseconds before the container's line") {
  // akash-network/support#244.
  auto p = parse_prefix(
      "2024-08-09T13:32:51.873588972Z I0809 13:32:51.873541       1 health.go:185] ", 2020);
  CHECK(p.time.iso() == "2024-08-09T13:32:51.873589+00:00");
  CHECK(p.host.empty());
}

TEST_CASE("journalctl -o json: the message and its envelope") {
  using faultline::parse_journal_json;
  // A record as journalctl -o json prints it (yandex wall-e checks' test data).
  const auto record = parse_journal_json(
      R"({ "__CURSOR" : "s=2c2f7f3d64d844aa9bc1844a48026313;i=1f345;b=c4b33c96f240457abc130dcb73da2b24;m=192b58ccf5;t=5aec659160d52;x=eb931437dac873e3", "__REALTIME_TIMESTAMP" : "1599541804928338", "__MONOTONIC_TIMESTAMP" : "108101422325", "_BOOT_ID" : "c4b33c96f240457abc130dcb73da2b24", "_MACHINE_ID" : "6641fb6ac4e235aef340bea75f556792", "_HOSTNAME" : "vla2-6758.search.yandex.net", "_TRANSPORT" : "kernel", "SYSLOG_FACILITY" : "0", "SYSLOG_IDENTIFIER" : "kernel", "_SOURCE_MONOTONIC_TIMESTAMP" : "108101136410", "PRIORITY" : "2", "MESSAGE" : "EXT4-fs error (device sdc2): ext4_wait_block_bitmap:519: comm Trash:store1: Cannot read block bitmap - block_group = 2571, block_bitmap = 83886091" })");
  REQUIRE(record);
  CHECK(record->message ==
        "EXT4-fs error (device sdc2): ext4_wait_block_bitmap:519: comm Trash:store1: Cannot read "
        "block bitmap - block_group = 2571, block_bitmap = 83886091");
  CHECK(record->envelope.host == "vla2-6758.search.yandex.net");
  CHECK(record->envelope.time.iso() == "2020-09-08T05:10:04.928338+00:00");
  REQUIRE(record->envelope.boot_seconds);
  CHECK(*record->envelope.boot_seconds == doctest::Approx(108101.422325));

  // Escapes, and a message journald stored as bytes.
  const auto escaped = parse_journal_json(
      R"({ "MESSAGE" : "EXT4-fs (sdh2): This should not happen!! Data will be lost\\n" })");
  REQUIRE(escaped);
  CHECK(escaped->message == "EXT4-fs (sdh2): This should not happen!! Data will be lost\\n");
  CHECK_FALSE(escaped->envelope.time.known());
  const auto bytes = parse_journal_json(R"({"MESSAGE":[78,86,82,77,58,255],"PRIORITY":"4"})");
  REQUIRE(bytes);
  CHECK(bytes->message == "NVRM:\xff");

  CHECK_FALSE(parse_journal_json(R"({"loss": 1.25, "step": 10})"));
  CHECK_FALSE(parse_journal_json(R"({ "MESSAGE" : "cut off)"));
  CHECK_FALSE(parse_journal_json("NVRM: Xid (PCI:0000:3b:00): 79"));
}

TEST_CASE("journalctl in another locale: the month as LC_TIME abbreviates it") {
  // NVIDIA/open-gpu-kernel-modules#1045 (Polish) and a Chinese blog's nvidia-bug-report grep.
  auto polish = parse_prefix("kwi 15 07:56:59 testowy kernel: ", 2025);
  CHECK(polish.time.iso() == "2025-04-15T07:56:59");
  CHECK(polish.host == "testowy");
  auto chinese = parse_prefix("6\xe6\x9c\x88 28 02:52:53 jjf-Super-Server kernel: ", 2024);
  CHECK(chinese.time.iso() == "2024-06-28T02:52:53");
  CHECK(chinese.host == "jjf-Super-Server");
  // An unknown word in the month's place gives no time.
  CHECK_FALSE(parse_prefix("step 15 07:56:59 ", 2025).time.known());
}

TEST_CASE("shell prompts: the host they name, and lines that only look like one") {
  using faultline::prompt_host;
  // akash-network/support#209 (Ubuntu, a virtual environment's name before the prompt).
  CHECK(prompt_host("(venv) root@node1:~/kubespray# nvidia-smi ") == "node1");
  CHECK(prompt_host("root@node1:~# dmesg -T | grep NVRM") == "node1");
  CHECK(prompt_host("root@node1:~# ") == "node1");
  // xxd3vin/workspace#19 and facebookresearch/deit#28 (Red Hat's bracketed prompt).
  CHECK(prompt_host("[root@bh174 chenyang]# nvidia-smi ") == "bh174");
  CHECK(prompt_host("(deit92) [yuxin.fang@gpu-dev006 deit]$ NCCL_DEBUG=INFO bash train.sh") ==
        "gpu-dev006");
  // pytorch/torchtitan#810: git's branch after the folder.
  CHECK(
      prompt_host("(pytorch) [vasiliy@devgpu005.snc8 ~/local/torchtitan (main)]$ with-proxy "
                  "CONFIG_FILE=\"./train_configs/debug_model.toml\" NGPU=1 CUDA_VISIBLE_DEVICES=0 "
                  "./run_llama_train.sh") == "devgpu005.snc8");
  // A command run through ssh printed what follows on the host it names (samples/pasted-ticket).
  CHECK(prompt_host("user@bastion:~$ ssh gpu-node-042 'sudo dmesg -T | grep -i nvrm'") ==
        "gpu-node-042");
  // No prompt: a PRRTE tag, an SCM address, a mail address in prose, a torchrun tag.
  CHECK_FALSE(prompt_host("[prterun-host-100629@1,0]<stdout>: hello"));
  CHECK_FALSE(prompt_host("git@github.com:NVIDIA/nccl.git"));
  CHECK_FALSE(prompt_host("Contact: john@example.com# for help"));
  CHECK_FALSE(prompt_host("[default0]:NCCL version 2.18.1+cuda12.1"));
  // The prompt is no envelope of the command after it: no time, no host.
  CHECK(parse_prefix("(venv) root@node1:~/kubespray# ", 2024).host.empty());
}
