#!/usr/bin/env bash
# The real-world corpus (tests/realworld/): logs people posted, each case a folder of inputs and
# an expect.json written from its source (SOURCES.md). Runs faultline on each case's inputs and
# checks the expectation:
#   top_any            the top diagnosis's id is one of these
#   any                each of these ids is among the diagnoses
#   gpu, class         the top diagnosis's GPU (PCI address) and class
#   top_not_class      the top diagnosis's class is not this one (or there is none)
#   top_not_severity   the top diagnosis's severity is none of these
#   max_severity       no diagnosis is more severe
# and, whatever the case expects, that an input with an NVRM/Xid line or an error line never
# gets an empty report, unless faultline read each such line as a known harmless one (an event).
# Prints each failure and why, then "realworld: N/M passed".
#   realworld_test.sh FAULTLINE SOURCE_DIR
# Fails when fewer cases pass than tests/realworld/PASSING says: a ratchet, raised as readers
# improve, so that no change loses a case silently.
set -uo pipefail
bin=${1:?usage: realworld_test.sh FAULTLINE SOURCE_DIR}
root=${2:?usage: realworld_test.sh FAULTLINE SOURCE_DIR}
corpus=$root/tests/realworld
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# A file's text, decompressed by whichever decompressor takes it.
text_of() {
  local tool
  for tool in "gzip -dc" "xz -dc" "zstd -dcq" "bzip2 -dc"; do
    $tool "$1" 2>/dev/null && return
  done
  cat "$1"
}

severity_rank='{"info": 0, "warning": 1, "error": 2, "critical": 3}'
passed=0 total=0
for case_dir in "$corpus"/*/; do
  name=$(basename "$case_dir")
  expect=$case_dir/expect.json
  [[ -f $expect ]] || continue
  total=$((total + 1))
  inputs=()
  while IFS= read -r -d '' file; do inputs+=("$file"); done \
    < <(find "$case_dir" -type f ! -name expect.json -print0 | sort -z)
  "$bin" diagnose --format json --fail-on never "${inputs[@]}" >"$out/report.json" 2>"$out/stderr"
  rc=$?
  if ((rc != 0)) || ! jq -e . "$out/report.json" >/dev/null 2>&1; then
    echo "FAIL $name: faultline exited $rc: $(head -c 300 "$out/stderr")"
    continue
  fi
  why=$(jq -r --argjson rank "$severity_rank" --slurpfile e "$expect" '
    ($e[0]) as $x | .diagnoses as $d | ($d[0] // {}) as $top |
    [ (if $x.top_any and (($x.top_any | index($top.id)) | not)
       then "top is \($top.id // "nothing"), expected one of \($x.top_any | join(", "))" else empty end),
      ($x.any // [] | .[] | select(. as $id | ($d | map(.id) | index($id)) | not)
       | "no \(.) among \($d | map(.id) | join(", "))"),
      (if $x.gpu and $top.subject.gpu != $x.gpu
       then "top GPU is \($top.subject.gpu // "unknown"), expected \($x.gpu)" else empty end),
      (if $x.class and $top.class != $x.class
       then "top class is \($top.class // "none"), expected \($x.class)" else empty end),
      (if $x.top_not_class and $top.class == $x.top_not_class
       then "top \($top.id) is \($top.class), expected not \($x.top_not_class)" else empty end),
      (if $x.top_not_severity and (($x.top_not_severity | index($top.severity)) != null)
       then "top \($top.id) is \($top.severity)" else empty end),
      (if $x.max_severity then ($d[] | select($rank[.severity] > $rank[$x.max_severity])
       | "\(.id) is \(.severity), expected at most \($x.max_severity)") else empty end)
    ] | join("; ")' "$out/report.json")
  if [[ -z $why ]] && [[ $(jq '.diagnoses | length' "$out/report.json") == 0 ]]; then
    for file in "${inputs[@]}"; do
      # An error-like line that faultline read as a known harmless one (an event of a benign
      # signature: the driver's load banner) may leave the report empty; any other may not. Nor
      # may an input a reader understood whole (a dump whose counters are all zero): Prometheus
      # `# HELP`/`# TYPE` lines, the exposition format's comments, aside.
      known=$(jq -r --arg p "$file" '.events[] | select(.path == $p) | .line' "$out/report.json")
      read -r lines understood < <(jq -r --arg p "$file" \
        '.inputs[] | select(.path == $p) | "\(.lines) \(.understood_lines)"' "$out/report.json")
      comments=$(text_of "$file" | grep -cE '^# (HELP|TYPE) ' || true)
      if ((${lines:-0} > 0 && ${understood:-0} + comments >= lines)); then continue; fi
      if text_of "$file" |
        grep -naiE 'NVRM:|Xid|error|fail(ed|ure)?\b|fatal|panic|terminate called|Traceback' |
        cut -d: -f1 | grep -qvxF -f <(echo "$known"; echo 0); then
        why="empty report, but $(basename "$file") has NVRM/Xid or error lines"
        break
      fi
    done
  fi
  if [[ -z $why ]]; then
    passed=$((passed + 1))
  else
    echo "FAIL $name: $why"
  fi
done

echo "realworld: $passed/$total passed"
floor=$(cat "$corpus/PASSING" 2>/dev/null || echo 0)
if ((passed < floor)); then
  echo "realworld: $passed passed, fewer than the $floor of tests/realworld/PASSING"
  exit 1
fi
