#!/usr/bin/env bash
# Bounded inputs: records that claim absurd counts and signature tables that are too big or too
# deep are refused with one line naming the file (and the line), in bounded memory; totals of
# large counts saturate instead of wrapping.
# Usage: bounds_test.sh FAULTLINE_BINARY SOURCE_DIR
set -uo pipefail

faultline=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

# run NAME ARGS...: faultline with a time limit, stdout in $scratch/NAME.out, stderr in .err, the
# exit code in $code and the peak RSS in $rss_kb.
run() {
  local name=$1
  shift
  timeout 120 /usr/bin/time -f 'maxrss_kb %M' -o "$scratch/$name.time" "$faultline" "$@" \
    >"$scratch/$name.out" 2>"$scratch/$name.err"
  code=$?
  rss_kb=$(sed -n 's/^maxrss_kb //p' "$scratch/$name.time")
  check "$name: no crash report" bash -c "! grep -qE 'terminate called|Sanitizer|runtime error:' '$scratch/$name.err'"
}
lines_of() {
  wc -l <"$1" | tr -d ' '
}

xid64='Mar  5 10:12:33 gpu-node-9 kernel: NVRM: Xid (PCI:0000:b7:00): 64, pid=1, name=python, Row Remapper Error: (0x3f1a2c0) - All reserved rows for bank are remapped'
good=$scratch/good.log
printf '%s\n' "$xid64" >"$good"
"$faultline" scan "$good" >"$scratch/good.jsonl"
event=$(jq -c 'select(.signature != null)' "$scratch/good.jsonl" | head -n 1)

# --- Records: a count of 2^64-1 is refused, naming file:line; the rest is read. ---
# jq would write 2^64-1 as a double: the exact number is put in by sed.
{
  jq -c '.count = 424242' <<<"$event"
  printf '%s\n' "$event"
  jq -c 'select(.record == "input") | .lines = 424242' "$scratch/good.jsonl"
} | sed 's/424242/18446744073709551615/' >"$scratch/absurd.jsonl"
run "absurd count" diagnose --events --format json --fail-on never "$scratch/absurd.jsonl"
check "absurd count: exit 0" test "$code" = 0
check "absurd count: the event's line named" grep -qF \
  'absurd.jsonl:1: not a faultline record: "count" is not a count up to 2^48' "$scratch/absurd count.err"
check "absurd count: the input's line named" grep -qF \
  'absurd.jsonl:3: not a faultline record: "lines" is not a count up to 2^48' "$scratch/absurd count.err"
check "absurd count: two warnings" test "$(lines_of "$scratch/absurd count.err")" = 2
check "absurd count: the good record diagnosed once" \
  jq -e '.diagnoses[0].id == "row-remap-failure" and .diagnoses[0].occurrences == 1' \
  "$scratch/absurd count.out" >/dev/null

# 70,000 records of 2^48 lines each add up past 2^64: the total saturates, it does not wrap
# (wrapped, it would be 4464 * 2^48, about 1.3e18).
yes "$(jq -c '.count = 281474976710656' <<<"$event")" | head -n 70000 >"$scratch/many.jsonl"
run "many counts" diagnose --events --format json --fail-on never "$scratch/many.jsonl"
check "many counts: no warning" test ! -s "$scratch/many counts.err"
check "many counts: the total saturates" \
  jq -e '.diagnoses[0].occurrences >= 18446744073709551615' "$scratch/many counts.out" >/dev/null

# --- Signature tables: over 4 MiB or nested over 64 levels, refused unparsed, one line. ---
mkdir -p "$scratch/sig-big" "$scratch/sig-deep" "$scratch/sig-huge-deep" "$scratch/sig-brackets"
{
  printf '{"signatures": [], "padding": "'
  head -c 5000000 /dev/zero | tr '\0' 'x'
  printf '"}\n'
} >"$scratch/sig-big/big.json"
{
  printf '{"signatures": [],\n"x": '
  head -c 100000 /dev/zero | tr '\0' '['
} >"$scratch/sig-deep/deep.json"
head -c 20000000 /dev/zero | tr '\0' '[' >"$scratch/sig-huge-deep/deep.json"
# Brackets inside strings (a pattern's character classes) are not nesting.
printf '{"signatures": [], "note": "%s"}\n' "$(head -c 1000 /dev/zero | tr '\0' '[')" \
  >"$scratch/sig-brackets/ok.json"
for case in big deep huge-deep; do
  run "table $case" diagnose --signatures "$scratch/sig-$case" "$good"
  check "table $case: exit 2" test "$code" = 2
  check "table $case: one line" test "$(lines_of "$scratch/table $case.err")" = 1
  # A parse that nests took 783 MB for the 20 MB table; refused unparsed it takes ~15 MB. The
  # bound leaves room for a busy machine (a CI run once measured 115 MB for all three).
  check "table $case: peak RSS ${rss_kb:-?} kB under 300 MB" test "${rss_kb:-999999999}" -lt 300000
done
check "table big: names the file and the limit" grep -qF \
  "sig-big/big.json: a signature table is at most 4 MiB; this one is 50000" "$scratch/table big.err"
check "table deep: names the file, the line and the limit" grep -qF \
  "sig-deep/deep.json:2: nested deeper than 64 levels" "$scratch/table deep.err"
check "table huge-deep: refused by its size" grep -qF \
  "sig-huge-deep/deep.json: a signature table is at most 4 MiB" "$scratch/table huge-deep.err"
run "table brackets" diagnose --signatures "$scratch/sig-brackets" "$good"
check "table brackets: read (exit 1, the Xid found)" test "$code" = 1
check "table brackets: no warning" test ! -s "$scratch/table brackets.err"

finish
