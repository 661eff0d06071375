#!/usr/bin/env bash
# Every --format of every sample is valid for what reads it (jq, GitHub, a Markdown renderer),
# the terminal report is plain when it should be, and the filters and --redact hold end to end.
# Usage: formats_test.sh FAULTLINE_BINARY SOURCE_DIR
set -uo pipefail

faultline=$1
root=$2
samples=$root/samples
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

# Each table (a run of lines starting with '|') has the same number of unescaped pipes on
# every row, and the rule row is the second; every code fence is closed by the same fence.
markdown_ok() {
  awk '
    function pipes(line,   n, i, c, prev) {
      n = 0; prev = ""
      for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (c == "|" && prev != "\\") n++
        prev = c
      }
      return n
    }
    fence == "" && /^```/ { match($0, /^`+/); fence = substr($0, 1, RLENGTH); next }
    fence != "" { if ($0 == fence) fence = ""; next }
    /^\|/ {
      rows++
      if (rows == 1) cols = pipes($0)
      else if (pipes($0) != cols) { print "row with " pipes($0) " pipes, header has " cols ": " $0; bad = 1 }
      if (rows == 2 && $0 !~ /^\|(-+:?|:?-+:?)\|/) { print "no rule row: " $0; bad = 1 }
      next
    }
    { rows = 0 }
    END { if (fence != "") { print "unclosed fence " fence; bad = 1 }; exit bad }
  ' "$1"
}

# GitHub's workflow command syntax: ::error|warning [file=F,line=N,]title=T::MESSAGE, with the
# properties' ':' ',' '%' CR LF and the message's '%' CR LF escaped.
github_ok() {
  local bad
  bad=$(grep -cvE '^::(error|warning) (file=([^,:%]|%(25|0D|0A|3A|2C))+,line=[0-9]+,)?title=([^,:%]|%(25|0D|0A|3A|2C))+::([^%]|%(25|0D|0A))*$' "$1")
  [[ $bad == 0 ]] && ! grep -q $'\r' "$1"
}

# --- Every format of every sample. ---
# Commands can be pasted: a value the logs do not give is a placeholder that says where to get
# it, never a phrase in an argument position ("-i the GPU", "<serial unknown>"). The commands of
# a document are its verify commands and the `spans` of its fix steps.
no_placeholder_phrase() {
  ! jq -r '.diagnoses[] | .verify[].command, (.fix[] | scan("`[^`]*`"))' "$1" |
    grep -Eiq 'unknown|-i the |<GPU>'
}
# What a record is, whatever the order and the time alignment: kind, where and what.
record_key='[.record, .signature, .path, .line, .text, .count, .gpu, .host, .rank]'
for folder in "$samples"/*/; do
  name=$(basename "$folder")
  out=$scratch/$name
  for format in json jsonl markdown github html text; do
    "$faultline" diagnose --fail-on never --format "$format" "$folder" >"$out.$format" 2>"$out.$format.err"
    check "$name $format: exit 0, quiet" test $? = 0 -a ! -s "$out.$format.err"
  done
  check "$name json: parses" jq -e '.schema == "faultline/diagnosis/v1"' "$out.json" >/dev/null
  check "$name jsonl: one record per line" jq -e 'type == "object" and (.record | IN("input", "state", "event"))' "$out.jsonl" >/dev/null
  check "$name jsonl: the events of the json" test "$(jq -c 'select(.record == "event")' "$out.jsonl" | wc -l)" = "$(jq '.events | length' "$out.json")"
  check "$name jsonl: the inputs of the json" test "$(jq -c 'select(.record == "input")' "$out.jsonl" | wc -l)" = "$(jq '.inputs | length' "$out.json")"
  check "$name json: no placeholder phrase inside a command" no_placeholder_phrase "$out.json"
  # scan correlates nothing: it prints the same records but for those derived from every
  # rank's lines together, with times as the lines give them, input by input.
  "$faultline" scan "$folder" >"$out.scan"
  check "$name jsonl: the records scan prints" cmp -s \
    <(jq -c "$record_key" "$out.jsonl" | grep -v '"nccl-rank-behind"\|"gpu-missing-from-nvidia-smi"' | sort) \
    <(jq -c "$record_key" "$out.scan" | sort)
  check "$name markdown: tables and fences" markdown_ok "$out.markdown"
  check "$name github: workflow command syntax" github_ok "$out.github"
  check "$name github: one per diagnosis at warning or above" test "$(wc -l <"$out.github")" = \
    "$(jq '[.diagnoses[] | select(.severity != "info")] | length' "$out.json")"
  check "$name html: one document" bash -c "head -n 1 '$out.html' | grep -q '^<!DOCTYPE html>' && tail -n 1 '$out.html' | grep -q '^</html>'"
  top=$(jq -r '.diagnoses[0].id // empty' "$out.json")
  if [[ -n $top ]]; then
    formats=(markdown html text)
    # GitHub annotations are for findings at warning or above.
    [[ $(jq -r '.diagnoses[0].severity' "$out.json") == info ]] || formats+=(github)
    for format in "${formats[@]}"; do
      check "$name $format: names $top" grep -q -- "$top" "$out.$format"
    done
  fi
  check "$name text: no escape byte in a pipe" bash -c "! grep -q $'\x1b' '$out.text'"
done

# --- Colour: only on a terminal, never with NO_COLOR, always with --color=always. ---
folder=$samples/gpu-off-bus
tty_run() {  # tty_run COLUMNS ENV... -- ARGS...: faultline's stdout on a pseudo-terminal
  local columns=$1
  shift
  local env=()
  while [[ $1 != -- ]]; do env+=("$1"); shift; done
  shift
  script -qec "stty cols $columns; env ${env[*]} $(printf '%q ' "$faultline" "$@")" /dev/null | tr -d '\r'
}
tty_run 80 NO_COLOR=1 -- diagnose --fail-on never "$folder" >"$scratch/no_color.txt"
check "NO_COLOR=1 on a terminal: plain" bash -c "! grep -q $'\x1b' '$scratch/no_color.txt'"
check "NO_COLOR=1 on a terminal: the report" grep -q "gpu-off-bus" "$scratch/no_color.txt"
tty_run 80 NO_COLOR= -- diagnose --fail-on never "$folder" >"$scratch/color.txt"
check "a terminal: colour" grep -q $'\x1b\[1;31mCRITICAL' "$scratch/color.txt"
tty_run 80 TERM=xterm -- diagnose --fail-on never --color=never "$folder" >"$scratch/never.txt"
check "--color=never on a terminal: plain" bash -c "! grep -q $'\x1b' '$scratch/never.txt'"
"$faultline" diagnose --fail-on never --color=always "$folder" >"$scratch/always.txt"
check "--color=always in a pipe: colour" grep -q $'\x1b' "$scratch/always.txt"
# Wrapped to the terminal's width; only a command ("     $ ...") may be longer.
tty_run 60 NO_COLOR=1 -- diagnose --fail-on never "$samples/h100-remap-failure" >"$scratch/narrow.txt"
check "a 60-column terminal: lines fit" test "$(grep -v '^     \$ ' "$scratch/narrow.txt" | LC_ALL=C.UTF-8 wc -L)" -le 60
check "a pipe: 100 columns" test "$(grep -v '^     \$ ' "$scratch/h100-remap-failure.text" | LC_ALL=C.UTF-8 wc -L)" -le 100
check "text: the timeline" grep -q "^Timeline of the incident" "$scratch/h100-remap-failure.text"
check "text: --verbose shows every evidence line" bash -c \
  "'$faultline' diagnose --fail-on never --verbose '$samples/h100-remap-failure' | grep -c 'kern.log.1.gz:' | grep -qv '^[0-4]$'"

# --- Filters, after diagnosis; the exit code follows what is left. ---
diag() { "$faultline" diagnose --format json "$@" 2>"$scratch/filter.err"; }
ids() { jq -r '[.diagnoses[].id] | join(",")'; }
check "--host keeps its host" test "$(diag --host GPU-NODE-031 "$folder" | ids)" = "gpu-off-bus,pcie-aer-fatal"
check "--host drops other hosts' events" test "$(diag --host gpu-node-031 "$folder" | jq '[.events[].host] | unique | join(",")')" = '"gpu-node-031"'
diag --host gpu-node-999 "$folder" >"$scratch/none.json"
check "--host of no finding: exit 0" test $? = 0
check "--host of no finding: empty" jq -e '.diagnoses == [] and .events == [] and .summary.hardware_fault == false' "$scratch/none.json" >/dev/null
check "--gpu in the kernel's spelling" test "$(diag --gpu PCI:0000:4C:00 "$folder" | ids)" = "gpu-off-bus"
check "--gpu in nvidia-smi's spelling" test "$(diag --gpu 00000000:4C:00.0 "$folder" | ids)" = "gpu-off-bus"
check "--gpu twice" test "$(diag --gpu 4c:00.0 --gpu 0000:4a:00.0 "$folder" | ids)" = "gpu-off-bus,pcie-aer-fatal"
check "--since (zoned)" test "$(diag --since 2025-07-23T20:42:00+02:00 "$folder" | ids)" = "gpu-off-bus"
check "--since (wall clock)" test "$(diag --since '2025-07-23 20:42:00' "$folder" | ids)" = "gpu-off-bus"
check "--until" test "$(diag --until 2025-07-23T18:41:00Z "$folder" | ids)" = ""
check "--min-severity" test "$(diag --min-severity critical "$samples/h100-remap-failure" | ids)" = "row-remap-failure"
diag --min-severity critical --fail-on warning "$samples/a100-remap-pending" >/dev/null
check "--min-severity hides an error: exit 0" test $? = 0
for bad in "--since yesterday" "--until 2025-13-01" "--gpu nonsense" "--min-severity high"; do
  # shellcheck disable=SC2086
  "$faultline" diagnose $bad "$folder" >/dev/null 2>"$scratch/bad.err"
  check "$bad: exit 2" test $? = 2
  check "$bad: names the flag" grep -q -- "${bad%% *}" "$scratch/bad.err"
done

# --- --redact: every format, the same masks; GPU addresses and serials stay. ---
for format in json jsonl markdown github html text; do
  "$faultline" diagnose --fail-on never --redact --format "$format" "$folder" "$samples/pasted-ticket" \
    >"$scratch/redacted.$format"
  check "--redact $format: no host" bash -c "! grep -q 'gpu-node-031' '$scratch/redacted.$format'"
  check "--redact $format: no IP" bash -c "! grep -q '10\.0\.4\.42' '$scratch/redacted.$format'"
  check "--redact $format: GPU kept" grep -q "0000:4c:00.0" "$scratch/redacted.$format"
done
check "--redact: the host's mask" jq -e 'any(.diagnoses[]; .subject.host == "host-1")' "$scratch/redacted.json" >/dev/null
check "--redact: the IP's mask" jq -e '[.events[].text | select(test("^ip-1: kern:"))] | length > 0' "$scratch/redacted.json" >/dev/null
check "--redact: serial kept" grep -q "1652329731246" "$scratch/redacted.text"
for format in markdown github html text; do
  check "--redact $format: same mask" grep -q "host-1" "$scratch/redacted.$format"
done

finish
