#!/usr/bin/env bash
# Honest summaries: the report itself, in every format, says which inputs could not be read,
# which were read only in part (--max-bytes, overlong lines) and why the filters left nothing;
# and no command faultline prints for the golden cases (samples/, tests/realworld/) holds an
# English phrase where an argument goes. Usage: summaries_test.sh FAULTLINE_BINARY SOURCE_DIR
set -uo pipefail

faultline=$1
root=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

sample=$root/samples/gpu-off-bus  # one host, gpu-node-031; its worst diagnosis is critical
syslog=$sample/syslog

# formats NAME ARGS...: `diagnose ARGS` in every format and with -q, into $scratch/NAME.FORMAT.
formats() {
  local name=$1 format
  shift
  for format in text markdown html json jsonl github; do
    run "$name.$format" diagnose --fail-on never --format "$format" "$@"
  done
  run "$name.quiet" diagnose --fail-on never -q "$@"
}

# jqe ARGS...: jq -e, quiet.
jqe() { jq -e "$@" >/dev/null; }

# has NAME.FORMAT TEXT: the output holds TEXT, as is.
has() { grep -qF -- "$2" "$scratch/$1.out"; }

# --- Inputs not read: a named path that does not exist, a file with no line of text. ---
missing=$scratch/missing.log
random_bytes 1 200000 >"$scratch/blob.bin"
formats unread "$sample" "$missing" "$scratch/blob.bin"
check "unread: exit code 2 (a named path is missing)" test "$code" = 2
check "unread text: the missing path" has unread.text "Not read: $missing: No such file or directory"
check "unread text: the binary file" has unread.text "Not read: $scratch/blob.bin: binary data"
check "unread text: the diagnoses still follow" has unread.text "gpu-off-bus"
check "unread markdown" has unread.markdown "> **Not read:** $missing: No such file or directory"
check "unread html" has unread.html \
  "<p class=\"coverage\"><strong>Not read:</strong> $missing: No such file or directory</p>"
check "unread json: coverage.unread names both, with their reasons" jqe --arg missing "$missing" \
  --arg blob "$scratch/blob.bin" '.coverage.unread | length == 2 and
    any(.path == $missing and .reason == "No such file or directory") and
    any(.path == $blob and (.reason | test("binary data")))' "$scratch/unread.json.out"
check "unread json: nothing cut, no filter note" jqe \
  '.coverage.cut == [] and .coverage.filter_note == null' "$scratch/unread.json.out"
check "unread jsonl: an unread record" jqe -s --arg missing "$missing" \
  'map(select(.record == "unread")) == [{"record": "unread", "path": $missing,
    "reason": "No such file or directory"}]' "$scratch/unread.jsonl.out"
check "unread github: a warning" has unread.github \
  "::warning title=faultline%3A Not read::$missing: No such file or directory"
check "unread -q: the verdict counts them" has unread.quiet "(1 of 2 findings) 2 inputs could not be read."

# --- Inputs read in part: --max-bytes, and a line longer than 64 KiB. ---
formats maxbytes --max-bytes 4K "$syslog"
cut="$syslog: stopped after 4 KiB of text (--max-bytes); the rest is not read"
check "max-bytes text" has maxbytes.text "Read in part: $syslog: stopped after 4 KiB of text"
check "max-bytes text: the verdict says it" has maxbytes.text "1 input was read only in part."
check "max-bytes markdown" has maxbytes.markdown "> **Read in part:** $cut"
check "max-bytes html" has maxbytes.html "<strong>Read in part:</strong> $cut</p>"
check "max-bytes json" jqe --arg path "$syslog" '.coverage.cut == [{"path": $path,
    "reason": "stopped after 4 KiB of text (--max-bytes); the rest is not read", "cut_lines": 0}]' \
  "$scratch/maxbytes.json.out"
check "max-bytes jsonl: the input record's error" jqe -s --arg path "$syslog" \
  'any(.record == "input" and .path == $path and (.error | test("--max-bytes")))' \
  "$scratch/maxbytes.jsonl.out"
check "max-bytes github" has maxbytes.github "::warning title=faultline%3A Read in part::$cut"
check "max-bytes -q" has maxbytes.quiet "1 input was read only in part."

long=$scratch/long.log
{
  head -n 20 "$syslog"
  printf '2025-07-23T20:41:00.000000+02:00 gpu-node-031 kernel: %s\n' "$(head -c 70000 /dev/zero | tr '\0' x)"
  tail -n +21 "$syslog"
} >"$long"
formats long "$long"
check "long line text" has long.text "Read in part: $long: 1 line longer than 64 KiB cut there"
check "long line markdown" has long.markdown "> **Read in part:** $long: 1 line longer than 64 KiB cut there"
check "long line html" has long.html "<strong>Read in part:</strong> $long: 1 line longer than 64 KiB cut there"
check "long line json" jqe '.coverage.cut[0].cut_lines == 1 and
    .coverage.cut[0].reason == "1 line longer than 64 KiB cut there"' "$scratch/long.json.out"
check "long line jsonl: cut_lines" jqe -s 'any(.record == "input" and .cut_lines == 1)' \
  "$scratch/long.jsonl.out"
check "long line github" has long.github "::warning title=faultline%3A Read in part::$long: 1 line"
check "long line: still diagnosed" has long.quiet "CRITICAL gpu-off-bus"

# --- Filters that leave nothing: each criterion alone, then two that only together do. ---
# filtered NAME NOTE ARGS...: NOTE in every format, in place of "no known GPU fault".
filtered() {
  local name=$1 note=$2
  shift 2
  formats "$name" "$@"
  check "$name: exit code 0" test "$code" = 0
  check "$name text: the verdict is the note" has "$name.text" "Nothing at warning or above: $note"
  check "$name text: not 'no known GPU fault'" not has "$name.text" "no known GPU fault"
  check "$name markdown" has "$name.markdown" "Nothing at warning or above: $note"
  check "$name html" has "$name.html" "<p class=\"verdict none\">Nothing at warning or above: $note"
  check "$name json" jqe --arg note "$note" '.coverage.filter_note | startswith($note)' \
    "$scratch/$name.json.out"
  check "$name github" has "$name.github" "::warning title=faultline%3A nothing left::$note"
  check "$name -q" has "$name.quiet" "Nothing at warning or above: $note"
}
not() { ! "$@"; }
filtered since "filters left no event: --since 2030-01-01T00:00:00 is after every event (the last at 2025-07-23T20:42:10" \
  --since 2030-01-01 "$sample"
filtered until "filters left no event: --until 2001-01-01T00:00:00 is before every event (the first at 2025-07-23T" \
  --until 2001-01-01 "$sample"
filtered host "filters left no event: --host nosuch matches no host of the events (gpu-node-031)" \
  --host nosuch "$sample"
filtered gpu "filters left no event: --gpu 0000:ff:00.0 matches no GPU of the events (0000:48:01.0, 0000:4a:00.0, 0000:4c:00.0)" \
  --gpu ff:00.0 "$sample"
filtered severity "filters left no diagnosis: --min-severity critical is above every diagnosis (the highest is error)" \
  --min-severity critical "$root/samples/a100-remap-pending"
# Each alone keeps the sample's events; together, none: the host and a GPU of another host.
filtered together "filters left no event: no event meets --host and --gpu together" \
  --host gpu-node-031 --gpu 0000:87:00.0 "$sample" "$root/samples/a100-remap-pending"

# A filter that leaves something, and a log with nothing to leave, get no note.
formats kept --host gpu-node-031 "$sample"
check "kept: no filter note" jqe '.coverage.filter_note == null' "$scratch/kept.json.out"
formats healthy --since 2030-01-01 "$root/samples/healthy"
check "healthy: no filter note (nothing to leave)" jqe '.coverage.filter_note == null' \
  "$scratch/healthy.json.out"
check "healthy: no known GPU fault" has healthy.text "no known GPU fault"

# --redact masks the hosts the note lists, as everywhere else.
run redacted diagnose --fail-on never --format json --redact --host nosuch "$sample"
check "redact: the note names host-1, not the host" jqe '.coverage.filter_note |
    contains("host-1") and (contains("gpu-node-031") | not)' "$scratch/redacted.out"

# --- No English phrase where an argument goes, in any command of any golden case. ---
# placeholder_phrases: reads commands, one per line, and prints each that holds an English phrase
# where an argument goes. A value the logs do not give is a placeholder, "<WHAT: where to get
# it>"; outside placeholders and quoted strings (a grep pattern, python -c) no word is an article
# or "unknown" and no parenthesis opens prose; no placeholder pretends to be a value
# ("<serial unknown>") or leaves out where to get it ("<jobid>").
placeholder_phrases() {
  local command unquoted bare
  while IFS= read -r command; do
    unquoted=$(sed -E "s/'[^']*'//g; s/\"[^\"]*\"//g" <<<"$command")
    bare=$(sed -E 's/<[^<>]*>/X/g' <<<"$unquoted")
    if grep -qE '<[^<>]*unknown[^<>]*>' <<<"$command" || grep -qE '<[A-Za-z][^<>:]*>' <<<"$unquoted" ||
      grep -qE '(^|[ =])(the|a|an|unknown|none|N/A)( |$)|\([a-z][a-z-]*[ ,]' <<<"$bare"; then
      echo "  $command"
    fi
  done
}
check "the placeholder check flags 'the GPU' in a command" \
  test -n "$(echo 'nvidia-smi -q -d ECC,ROW_REMAPPER -i the GPU' | placeholder_phrases)"
check "the placeholder check flags a placeholder that pretends to be a value" \
  test -n "$(echo 'nvidia-smi -q -i <serial unknown>' | placeholder_phrases)"
check "the placeholder check flags a placeholder that does not say where to get its value" \
  test -n "$(echo 'sacct -j <jobid> --format=JobID,MaxRSS' | placeholder_phrases)"
check "the placeholder check flags prose after a command" \
  test -n "$(echo './build/all_reduce_perf -g 1 (nccl-tests across the job'"'"'s nodes)' | placeholder_phrases)"
check "the placeholder check passes a placeholder that says its source, and quoted patterns" \
  test -z "$(printf '%s\n' 'dcgmi diag -r 2 -i <index of 0000:90:00.0: nvidia-smi --query-gpu=index --format=csv>' \
    "grep -c 'the GPU has fallen off the bus' kern.log" "python -c 'print(torch.cuda.device_count())'" |
    placeholder_phrases)"
cases=0
for expected in "$root"/samples/*.expected.json "$root"/tests/realworld/*/expect.json; do
  if [[ $expected == */expect.json ]]; then
    folder=$(dirname "$expected")
    inputs=()
    while IFS= read -r -d '' file; do inputs+=("$file"); done \
      < <(find "$folder" -type f ! -name expect.json -print0 | sort -z)
  else
    folder=$root/samples/$(jq -r --arg name "$(basename "$expected" .expected.json)" '.folder // $name' "$expected")
    inputs=("$folder")
  fi
  "$faultline" diagnose --format json --fail-on never "${inputs[@]}" >"$scratch/golden.json" 2>/dev/null
  # The verify commands, and the `commands` quoted in the fixes.
  jq -r '.diagnoses[] | (.verify[].command), (.fix[] | scan("`([^`]*)`") | .[0])' \
    "$scratch/golden.json" >"$scratch/commands"
  found=$(placeholder_phrases <"$scratch/commands")
  check "$(basename "$folder"): no placeholder phrase in a command${found:+:$'\n'$found}" test -z "$found"
  cases=$((cases + 1))
done
check "the golden cases were all read ($cases)" test "$cases" -ge 20

finish
