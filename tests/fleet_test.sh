#!/usr/bin/env bash
# Fleet mode: `faultline scan` on each node and `faultline diagnose --events` centrally give what
# one run over every file gives. Usage: fleet_test.sh FAULTLINE_BINARY SOURCE_DIR
set -uo pipefail

faultline=$1
samples=$2/samples
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

# diagnose_both NAME ALL_AT_ONCE_ARGS... -- RECORD_FILES...: the JSON of both ways.
diagnose_both() {
  local name=$1 all=() records=()
  shift
  while [[ $1 != -- ]]; do all+=("$1"); shift; done
  shift
  records=("$@")
  "$faultline" diagnose --fail-on never --format json "${all[@]}" >"$scratch/$name.all.json"
  "$faultline" diagnose --fail-on never --format json --events "${records[@]}" \
    >"$scratch/$name.central.json" 2>"$scratch/$name.err"
  check "$name: records read without a warning" test ! -s "$scratch/$name.err"
}

# --- Every sample: its records, read back, diagnose exactly as the sample itself. ---
for folder in "$samples"/*/; do
  name=$(basename "$folder")
  "$faultline" scan "$folder" >"$scratch/$name.jsonl"
  diagnose_both "$name" "$folder" -- "$scratch/$name.jsonl"
  check "$name: the same document from its records" \
    cmp -s "$scratch/$name.all.json" "$scratch/$name.central.json"
done

# --- Multi-node jobs: scan each node on its own (as srun would), correlate centrally. ---
for job in job64-xid95 job16-remap-loss-spike job16-straggler-hang; do
  records=()
  for node in "$samples/$job"/*/; do
    out=$scratch/$job-$(basename "$node").jsonl
    "$faultline" scan --hostname "$(basename "$node")" "$node" >"$out"
    records+=("$out")
  done
  diagnose_both "$job-per-node" "$samples/$job" -- "${records[@]}"
  for part in diagnoses inputs events summary; do
    check "$job per node: the same $part" cmp -s <(jq ".$part" "$scratch/$job-per-node.all.json") \
      <(jq ".$part" "$scratch/$job-per-node.central.json")
  done
done
check "job64 per node: the Xid 95 initiating, rank 29" jq -e '.diagnoses[0] |
  .id == "ecc-uncontained" and .role == "initiating" and .subject.ranks == [29]' \
  "$scratch/job64-xid95-per-node.central.json" >/dev/null

# The same job without its kernel logs: only the train.log of each node is scanned.
records=()
for node in "$samples/job64-xid95"/*/; do
  out=$scratch/train-$(basename "$node").jsonl
  "$faultline" scan "${node%/}/train.log" >"$out"
  records+=("$out")
done
diagnose_both no-kernel-logs "$samples/job64-xid95"/*/train.log -- "${records[@]}"
check "no kernel logs per node: the same diagnoses" cmp -s \
  <(jq .diagnoses "$scratch/no-kernel-logs.all.json") <(jq .diagnoses "$scratch/no-kernel-logs.central.json")
check "no kernel logs per node: rank 29 first, its host's kernel log missing" jq -e '.diagnoses[0] |
  .subject.ranks == [29] and (.missing | any(contains("gpu-node-104") and contains("journalctl -k")))' \
  "$scratch/no-kernel-logs.central.json" >/dev/null

# --- Records compressed, records of an older scan (no "record" key), bad lines. ---
gzip -c "$scratch/job16-straggler-hang.jsonl" >"$scratch/straggler.jsonl.gz"
"$faultline" diagnose --fail-on never --format json --events "$scratch/straggler.jsonl.gz" \
  >"$scratch/gz.json"
check "gzip'd records" cmp -s <(jq .diagnoses "$scratch/gz.json") \
  <(jq .diagnoses "$scratch/job16-straggler-hang.all.json")
jq -c 'select(.record == "event") | del(.record)' "$scratch/job16-straggler-hang.jsonl" >"$scratch/old.jsonl"
"$faultline" diagnose --fail-on never --format json --events "$scratch/old.jsonl" >"$scratch/old.json"
check "events without a record key" jq -e '.diagnoses[0].id == "nccl-rank-behind"' "$scratch/old.json" >/dev/null
{
  head -n 3 "$scratch/job64-xid95.jsonl"
  echo 'not json'
  echo '{"record": "event", "signature": "nccl-timeout", "line": "twelve"}'
  echo '{"record": "state", "gpu": "not a bus id"}'
  echo '{"record": "a kind from a later version"}'
  tail -n +4 "$scratch/job64-xid95.jsonl"
} >"$scratch/bad.jsonl"
"$faultline" diagnose --format json --events "$scratch/bad.jsonl" >"$scratch/bad.json" 2>"$scratch/bad.err"
check "bad records: exit 1 (the fault is still found)" test $? = 1
check "bad records: one warning per bad line, with file and line" test "$(grep -c "bad.jsonl:[4-6]: not a faultline record" "$scratch/bad.err")" = 3
check "bad records: the rest diagnosed" jq -e '.diagnoses[0].id == "ecc-uncontained"' "$scratch/bad.json" >/dev/null
printf 'garbage\n' >"$scratch/garbage.jsonl"
"$faultline" diagnose --events "$scratch/garbage.jsonl" >/dev/null 2>"$scratch/garbage.err"
check "no record at all: exit 2" test $? = 2

# --- A node's input it could not open travels in its records to the central report. ---
"$faultline" scan "$samples/gpu-off-bus" "$scratch/no-such-kern.log" >"$scratch/unread.jsonl" 2>/dev/null
check "scan, a named path missing: exit 2 after its records" test $? = 2
check "scan: an unread record for it" jq -se 'map(select(.record == "unread")) |
  length == 1 and (.[0].path | endswith("no-such-kern.log")) and (.[0].reason | length > 0)' \
  "$scratch/unread.jsonl" >/dev/null
"$faultline" diagnose --fail-on never --format json --events "$scratch/unread.jsonl" >"$scratch/unread.json" 2>/dev/null
check "diagnose --events: the node's unread input in coverage, the fault still found" jq -e '
  (.coverage.unread | length == 1 and (.[0].path | endswith("no-such-kern.log"))) and
  .diagnoses[0].id == "gpu-off-bus"' "$scratch/unread.json" >/dev/null
"$faultline" diagnose --fail-on never --events "$scratch/unread.jsonl" >"$scratch/unread.txt" 2>/dev/null
check "diagnose --events, text: says the input was not read" grep -q 'no-such-kern.log' "$scratch/unread.txt"

# --- A node's records that did not reach their file (a full disk) do not pass for written. ---
if [[ -w /dev/full ]]; then
  "$faultline" scan "$samples/gpu-off-bus" >/dev/full 2>"$scratch/full.err"
  code=$?
  check "scan > a full disk: exit 2 (exit $code)" test "$code" = 2
  check "scan > a full disk: says so" grep -q "cannot write to standard output: No space left on device" \
    "$scratch/full.err"
  "$faultline" diagnose "$samples/gpu-off-bus" >/dev/full 2>/dev/null
  code=$?
  check "diagnose > a full disk: exit 2 (exit $code)" test "$code" = 2
fi

# --- Streaming (issue 20): a live input's records come as its lines do, not at its end. ---
# `journalctl -kf | faultline scan` in small: a FIFO whose writer stays open, read by scan
# writing to a file and to a pipe.
xid79='Mar  5 10:12:33 gpu-node-9 kernel: NVRM: Xid (PCI:0000:b7:00): 79, pid=0, name=python, GPU has fallen off the bus.'
for out in file pipe; do
  fifo=$scratch/live-$out.fifo
  got=$scratch/live-$out.jsonl
  mkfifo "$fifo"
  if [[ $out == file ]]; then
    timeout 30 "$faultline" scan "$fifo" >"$got" 2>"$scratch/live-$out.err" &
  else
    timeout 30 "$faultline" scan "$fifo" 2>"$scratch/live-$out.err" | cat >"$got" &
  fi
  scan_pid=$!
  exec {writer}>"$fifo"
  echo "$xid79" >&"$writer"
  for _ in $(seq 100); do
    grep -q '"xid":79' "$got" && break
    sleep 0.1
  done
  check "live ($out): the Xid 79 record printed while its writer is still open" grep -q '"xid":79' "$got"
  check "live ($out): no input record yet (the input has not ended)" \
    test "$(grep -c '"record":"input"' "$got")" = 0
  exec {writer}>&-
  wait "$scan_pid"
  check "live ($out): scan ended with its input, exit 0" test $? = 0
  check "live ($out): then the input's record" jq -e -s \
    'map(.record) == ["event", "input"] and .[1].lines == 1' "$got" >/dev/null
done

finish
