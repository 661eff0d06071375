#!/usr/bin/env bash
# End-to-end tests of the faultline binary: golden diagnoses of samples/, stdin, bad inputs,
# exit codes. Usage: cli_test.sh FAULTLINE_BINARY SOURCE_DIR
set -uo pipefail

faultline=$1
root=$2
samples=$root/samples
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

# --- Golden: each samples/<name>/ is diagnosed as samples/<name>.expected.json says. ---
# "folder" names another sample's folder and "inputs" globs within it (default: the folder).
for expected in "$samples"/*.expected.json; do
  name=$(basename "$expected" .expected.json)
  folder=$samples/$(jq -r --arg name "$name" '.folder // $name' "$expected")
  inputs=("$folder")
  if jq -e 'has("inputs")' "$expected" >/dev/null; then
    inputs=()
    while read -r glob; do inputs+=("$folder"/$glob); done < <(jq -r '.inputs[]' "$expected")
  fi
  "$faultline" diagnose --format json "${inputs[@]}" >"$scratch/$name.json" 2>"$scratch/$name.err"
  code=$?
  check "$name: exit code" test "$code" = "$(jq -r .exit_code "$expected")"
  check "$name: valid JSON" jq -e '.schema == "faultline/diagnosis/v1"' "$scratch/$name.json" >/dev/null
  check "$name: no warnings" test ! -s "$scratch/$name.err"
  if jq -e 'has("top")' "$expected" >/dev/null; then
    for field in id class; do
      check "$name: top $field" test "$(jq -r ".diagnoses[0].$field" "$scratch/$name.json")" = \
        "$(jq -r ".top.$field" "$expected")"
    done
    for field in host gpu serial; do
      key=$field
      [[ $field == serial ]] && key=gpu_serial
      check "$name: top $field" test "$(jq -r ".diagnoses[0].subject.$key" "$scratch/$name.json")" = \
        "$(jq -r ".top.$field" "$expected")"
    done
    # A diagnosis about no GPU (a training-loss anomaly) has none to name.
    if jq -e '.top.gpu != null' "$expected" >/dev/null; then
      check "$name: a fix names the GPU" jq -e --arg gpu "$(jq -r .top.gpu "$expected")" \
        '[.diagnoses[0].fix[] | contains($gpu)] | any' "$scratch/$name.json" >/dev/null
    fi
    check "$name: a verify command" jq -e '.diagnoses[0].verify | length > 0' "$scratch/$name.json" >/dev/null
    for field in role ranks; do
      if jq -e --arg field "$field" '.top | has($field)' "$expected" >/dev/null; then
        check "$name: top $field" test "$(jq -c ".diagnoses[0].$field // .diagnoses[0].subject.$field" \
          "$scratch/$name.json")" = "$(jq -c ".top.$field" "$expected")"
      fi
    done
    # Every diagnosis of these kinds is collateral of the top one, and there is one at least.
    for id in $(jq -r '.collateral_of_top[]?' "$expected"); do
      check "$name: $id is collateral of the top" jq -e --arg id "$id" \
        '[.diagnoses[] | select(.id == $id)] | length > 0 and all(.role == "collateral" and .caused_by == 1)' \
        "$scratch/$name.json" >/dev/null
    done
    while read -r words; do
      [[ -n $words ]] || continue
      check "$name: missing names $words" jq -e --arg words "$words" \
        '[.diagnoses[0].missing[] | contains($words)] | any' "$scratch/$name.json" >/dev/null
    done < <(jq -r '.top_missing_mentions[]?' "$expected")
  fi
  if jq -e 'has("max_severity")' "$expected" >/dev/null; then
    check "$name: nothing above $(jq -r .max_severity "$expected")" jq -e \
      '[.diagnoses[].severity | select(. == "warning" or . == "error" or . == "critical")] | length == 0' \
      "$scratch/$name.json" >/dev/null
  fi
  # The text report runs too and names the same top diagnosis.
  "$faultline" diagnose "${inputs[@]}" >"$scratch/$name.txt" 2>&1
  if jq -e 'has("top")' "$expected" >/dev/null; then
    check "$name: text report" grep -q "^1\. [A-Z]*  $(jq -r .top.id "$expected")  " "$scratch/$name.txt"
  fi
done

# --- One thread or many: the same document. ---
"$faultline" diagnose --format json --fail-on never --jobs 1 "$samples" >"$scratch/jobs1.json" 2>/dev/null
"$faultline" diagnose --format json --fail-on never --jobs 4 "$samples" >"$scratch/jobs4.json" 2>/dev/null
check "--jobs 1 and --jobs 4: the same JSON" cmp -s "$scratch/jobs1.json" "$scratch/jobs4.json"

# --- A pasted log on stdin is diagnosed as the same file given by path. ---
pick=$(ls "$samples"/*/kern.log "$samples"/*/dmesg.txt 2>/dev/null | head -n 1)
if [[ -n $pick ]]; then
  # Notes that cite a line name its input as the evidence does: by path, or "-".
  "$faultline" diagnose --format json "$pick" | jq -S '.diagnoses | map(del(.evidence[].path))' |
    sed "s|$pick:|-:|g" >"$scratch/path.json"
  "$faultline" diagnose --format json - <"$pick" | jq -S '.diagnoses | map(del(.evidence[].path))' >"$scratch/stdin.json"
  check "stdin equals path" cmp -s "$scratch/path.json" "$scratch/stdin.json"
  check "stdin without '-'" bash -c "'$faultline' diagnose --format json <'$pick' | jq -e '.inputs[0].path == \"-\"' >/dev/null"
fi

# --- Bad inputs next to a good one: one warning each, the good one still diagnosed. ---
good=$scratch/good.log
printf '%s\n' 'Mar  5 10:12:33 gpu-node-9 kernel: NVRM: Xid (PCI:0000:b7:00): 64, pid=1, name=python, Row Remapper Error: (0x3f1a2c0) - All reserved rows for bank are remapped' >"$good"
seq 1 20000 | sed 's/^/[ 1.0] filler line /' | gzip -c | head -c 20000 >"$scratch/cut.log.gz"
random_bytes 1 8192 >"$scratch/junk.bin"
printf '\0\0\0ELF' >>"$scratch/junk.bin"
"$faultline" diagnose --format json --ignore-missing "$scratch/cut.log.gz" "$scratch/junk.bin" \
  "$scratch/missing.log" "$good" >"$scratch/mixed.json" 2>"$scratch/mixed.err"
code=$?
check "mixed: exit 1 (found a critical)" test "$code" = 1
check "mixed: good file diagnosed" jq -e '.diagnoses[0].id == "row-remap-failure"' "$scratch/mixed.json" >/dev/null
check "mixed: three warnings" test "$(wc -l <"$scratch/mixed.err")" = 3
check "mixed: truncated gzip named" grep -q "cut.log.gz.*truncated" "$scratch/mixed.err"
check "mixed: binary named" grep -q "junk.bin.*binary" "$scratch/mixed.err"
check "mixed: missing named" grep -q "missing.log" "$scratch/mixed.err"

# A named path that does not exist is exit 2 (issue 21), the rest still read and reported.
for command in diagnose scan; do
  "$faultline" $command "$good" "$scratch/missing.log" >"$scratch/named.out" 2>"$scratch/named.err"
  check "$command, a named path missing: exit 2" test $? = 2
  check "$command, a named path missing: the rest reported" grep -q "0000:b7:00" "$scratch/named.out"
  check "$command, a named path missing: said, with the way out" \
    grep -q "missing.log: named but not found.*--ignore-missing" "$scratch/named.err"
done

# Errors as JSON for scripts (--format json, or --error-format json): one object on stderr.
json_error() {  # json_error NAME PATTERN ARGS...: exit 2 and the error object's message matches
  local name=$1 pattern=$2
  shift 2
  "$faultline" "$@" >/dev/null 2>"$scratch/error.json"
  check "$name: exit 2" test $? = 2
  # Warnings before it stay lines of text.
  check "$name: a faultline/error/v1 object" jq -e --arg p "$pattern" 'select(.schema ==
    "faultline/error/v1") | .exit_code == 2 and (.error | test($p))' \
    <(grep '^{' "$scratch/error.json") >/dev/null
}
json_error "json error, a mistyped command" "did you mean 'diagnose'" diagnos --format json "$good"
json_error "json error, a mistyped flag" "did you mean '--format'" diagnose --frmat x --error-format json "$good"
json_error "json error, nothing readable" "no input could be read" diagnose --format=json "$scratch/missing.log"
json_error "json error, a named path missing" "missing.log: named but not found" scan --error-format json "$good" "$scratch/missing.log"
json_error "json error, a bad --tz" "--tz" diagnose --format json --tz Mars/Olympus "$good"

# --- Nothing readable: exit 2 with a reason. ---
"$faultline" diagnose "$scratch/missing.log" "$scratch/junk.bin" >/dev/null 2>"$scratch/none.err"
check "nothing readable: exit 2" test $? = 2
check "nothing readable: says so" grep -q "no input could be read" "$scratch/none.err"

# --- --fail-on and the healthy case. ---
"$faultline" diagnose --fail-on never "$good" >/dev/null
check "--fail-on never: exit 0" test $? = 0
"$faultline" diagnose --fail-on bogus "$good" >/dev/null 2>&1
check "bad flag value: exit 2" test $? = 2

# --- An invalid signature table stops the run with its file and line. ---
mkdir -p "$scratch/sigs"
printf '{\n  "signatures": [\n    {"id": "x", "pattern": "(unclosed"}\n  ]\n}\n' >"$scratch/sigs/bad.json"
"$faultline" diagnose --signatures "$scratch/sigs" "$good" >/dev/null 2>"$scratch/sigs.err"
check "bad table: exit 2" test $? = 2
check "bad table: names the file" grep -q "bad.json: signature x: pattern does not compile" "$scratch/sigs.err"

# --- Catalog commands: the built-in catalog lints clean and every example holds. ---
check "signatures lint" "$faultline" signatures lint >/dev/null
check "signatures test" "$faultline" signatures test >/dev/null
check "signatures list --patterns" bash -c "'$faultline' signatures list --patterns | grep -q 'NVRM: Xid'"
check "signatures list --json" bash -c "'$faultline' signatures list --json | jq -e '.classes | length > 20' >/dev/null"
"$faultline" signatures lint "$scratch/sigs" >/dev/null 2>&1
check "lint of a broken table: exit 2" test $? = 2

# --- explain: complete encyclopedia entries from the tables. ---
"$faultline" explain row-remap-pending >"$scratch/explain.txt"
for section in "What it is" Mechanism Symptoms "How to confirm" Fix Verify Prevent Monitor Related Source; do
  check "explain row-remap-pending: $section" grep -q "^$section\$" "$scratch/explain.txt"
done
"$faultline" explain xid 64 >"$scratch/explain64.txt"
check "explain xid 64: catalog entry" grep -q "^Xid 64 — " "$scratch/explain64.txt"
check "explain xid 64: NVIDIA's action" grep -q "^NVIDIA's immediate action" "$scratch/explain64.txt"
check "explain xid 64: the class that diagnoses it" grep -q "^row-remap-failure — " "$scratch/explain64.txt"
"$faultline" explain no-such-thing >/dev/null 2>&1
check "explain unknown id: exit 2" test $? = 2

# --- Piped into head: no error spew when the reader goes away. ---
"$faultline" scan "$good" "$good" "$good" 2>"$scratch/pipe.err" | head -n 1 >/dev/null
check "scan | head: quiet" test ! -s "$scratch/pipe.err"

# --- Manners (issue 21): -q, help, version, "did you mean", TERM=dumb. ---
"$faultline" diagnose -q "$samples/job64-xid95" >"$scratch/quiet.out"
check "-q: exit code as without it" test $? = 1
check "-q: one line, the top diagnosis and its subject" bash -c "test \$(wc -l <'$scratch/quiet.out') = 1 &&
  grep -q '^CRITICAL ecc-uncontained: .* GPU 0000:ab:00.0 on gpu-node-104 .*(1 of [0-9]* findings)$' '$scratch/quiet.out'"
"$faultline" diagnose -q "$samples/healthy" >"$scratch/quiet-healthy.out"
check "-q on a healthy log: exit 0" test $? = 0
check "-q on a healthy log: one line saying so" bash -c "test \$(wc -l <'$scratch/quiet-healthy.out') = 1 &&
  grep -q '^Nothing at warning or above' '$scratch/quiet-healthy.out'"
"$faultline" diagnos "$samples/gpu-off-bus" >"$scratch/typo.out" 2>"$scratch/typo.err"
check "a mistyped command: exit 2" test $? = 2
check "a mistyped command: one line naming it, with the command meant" \
  grep -qx "faultline: 'diagnos' is not a faultline command; did you mean 'diagnose'? (faultline help)" "$scratch/typo.err"
"$faultline" signatures lnt >/dev/null 2>"$scratch/typo-nested.err"
check "a mistyped command under signatures: exit 2" test $? = 2
check "a mistyped command under signatures: the command meant, and its parent's help" \
  grep -qx "faultline: 'lnt' is not a signatures command; did you mean 'lint'? (faultline help signatures)" "$scratch/typo-nested.err"
"$faultline" signatures lint --nonsense >/dev/null 2>"$scratch/flag-nested.err"
check "a wrong flag of a nested command: named by its whole path" \
  grep -q "^faultline: signatures lint: .*(faultline help signatures lint)$" "$scratch/flag-nested.err"
"$faultline" help signatures lint >"$scratch/help-nested.out"
check "faultline help signatures lint: that command's help" grep -q "^Usage: faultline signatures lint" "$scratch/help-nested.out"
"$faultline" diagnose --frmat json "$samples/gpu-off-bus" >/dev/null 2>"$scratch/flag.err"
check "a mistyped flag: exit 2" test $? = 2
check "a mistyped flag: the flag meant" grep -q "did you mean '--format'?" "$scratch/flag.err"
"$faultline" scan --hostnme x "$samples/gpu-off-bus" >/dev/null 2>"$scratch/flag2.err"
check "a mistyped flag of scan: the flag meant" grep -q "^faultline: scan: .*did you mean '--hostname'?" "$scratch/flag2.err"
"$faultline" diagnose --zzzzzz "$samples/gpu-off-bus" >/dev/null 2>"$scratch/flag3.err"
check "a flag near none: no guess" bash -c "! grep -q 'did you mean' '$scratch/flag3.err'"
"$faultline" explain >/dev/null 2>"$scratch/explain.err"
check "explain alone: says what it needs" grep -qx "faultline: explain: id is required (faultline help explain)" "$scratch/explain.err"
"$faultline" help >"$scratch/help.out"
check "faultline help: exit 0 and every command listed" bash -c \
  "grep -q '^Usage: faultline' '$scratch/help.out' && grep -q '^  diagnose ' '$scratch/help.out' && grep -q '^  scan ' '$scratch/help.out'"
"$faultline" help diagnose >"$scratch/help-diagnose.out"
check "faultline help diagnose: its options" grep -q -- "--format" "$scratch/help-diagnose.out"
check "faultline help diagnose: defaults, examples, exit codes" bash -c "grep -q -- '--fail-on.*=error' '$scratch/help-diagnose.out' &&
  grep -q '^Examples:' '$scratch/help-diagnose.out' && grep -q '^Exit codes: 0' '$scratch/help-diagnose.out'"
"$faultline" help diagnos >/dev/null 2>"$scratch/help-typo.err"
check "faultline help with a typo: exit 2" test $? = 2
check "faultline help with a typo: the command meant" grep -q "did you mean 'diagnose'" "$scratch/help-typo.err"
for form in -V --version version; do
  "$faultline" $form >"$scratch/version.out"
  check "faultline $form: release, commit and catalog" grep -qE \
    '^faultline [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{12}(-modified)?|unknown), catalog [0-9a-f]{12}\)$' "$scratch/version.out"
done
if command -v script >/dev/null; then
  # Colour on a terminal, none on a dumb one (script gives the run a terminal).
  TERM=xterm script -qc "'$faultline' diagnose --fail-on never '$samples/gpu-off-bus'" /dev/null >"$scratch/tty.out"
  check "a terminal gets colour" grep -q $'\e\\[' "$scratch/tty.out"
  TERM=dumb script -qc "'$faultline' diagnose --fail-on never '$samples/gpu-off-bus'" /dev/null >"$scratch/dumb.out"
  check "TERM=dumb gets none" bash -c "! grep -q $'\e' '$scratch/dumb.out'"

  # --hyperlink: evidence paths as OSC 8 links to the files (file://HOST/absolute path, bytes
  # outside the unreserved set percent-encoded), only on a terminal that shows them.
  mkdir -p "$scratch/my logs"
  cp "$samples/gpu-off-bus/syslog" "$scratch/my logs/sys log"
  binary=$(realpath "$faultline")
  (cd "$scratch" && TERM=xterm script -qc "'$binary' diagnose --hyperlink --fail-on never 'my logs/sys log'" /dev/null) >"$scratch/links.out"
  url="file://$(hostname)$(cd "$scratch" && pwd)/my%20logs/sys%20log"
  check "--hyperlink on a terminal: the evidence path links to its file" grep -qF $'\e]8;;'"$url"$'\e\\' "$scratch/links.out"
  check "--hyperlink: every link is closed" bash -c "test \$(grep -o $'\e]8;;file' '$scratch/links.out' | wc -l) -gt 0 &&
    test \$(grep -o $'\e]8;;file' '$scratch/links.out' | wc -l) = \$(grep -o $'\e]8;;\e' '$scratch/links.out' | wc -l)"
  TERM=xterm script -qc "'$faultline' diagnose --fail-on never '$samples/gpu-off-bus'" /dev/null >"$scratch/nolinks.out"
  check "no links without --hyperlink" bash -c "! grep -q $'\e]8' '$scratch/nolinks.out'"
  TERM=dumb script -qc "'$faultline' diagnose --hyperlink --fail-on never '$samples/gpu-off-bus'" /dev/null >"$scratch/dumb-links.out"
  check "--hyperlink on a dumb terminal: none" bash -c "! grep -q $'\e]8' '$scratch/dumb-links.out'"
  TERM=xterm script -qc "'$faultline' diagnose --hyperlink --redact --fail-on never '$samples/gpu-off-bus'" /dev/null >"$scratch/redact-links.out"
  check "--hyperlink --redact: none (the link would name this host)" bash -c "! grep -q $'\e]8' '$scratch/redact-links.out'"
fi
"$faultline" diagnose --hyperlink --fail-on never "$samples/gpu-off-bus" >"$scratch/piped-links.out"
check "--hyperlink into a pipe or file: none" bash -c "! grep -q $'\e' '$scratch/piped-links.out'"

finish
