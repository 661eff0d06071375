#!/usr/bin/env bash
# Runs every recipe of README.md's jq cookbook (between the jq-cookbook markers, one ```sh block
# after each "recipe: NAME" marker) as written, against two samples laid out as a job's logs, and
# checks each result. A recipe in the README without a check here fails, and so does a check
# whose recipe is gone: the README and this test cannot drift apart.
# Usage: jq_test.sh FAULTLINE_BINARY SOURCE_DIR
set -uo pipefail

faultline=$1
root=$(realpath "$2")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

every_line() {  # every_line REGEX TEXT: each line of TEXT matches REGEX
  ! grep -qv -- "$1" <<<"$2"
}

# The recipes call `faultline` by name, on `logs/`.
mkdir -p "$scratch/bin" "$scratch/recipes" "$scratch/job/logs" "$scratch/healthy/logs"
ln -s "$(realpath "$faultline")" "$scratch/bin/faultline"
export PATH=$scratch/bin:$PATH
cp -r "$root/samples/a100-remap-pending" "$scratch/job/logs/gpu-node-017"
cp -r "$root/samples/gpu-off-bus" "$scratch/job/logs/gpu-node-031"
cp -r "$root/samples/healthy" "$scratch/healthy/logs/gpu-node-001"

awk -v dir="$scratch/recipes" '
  /<!-- jq-cookbook:begin -->/ { on = 1; next }
  /<!-- jq-cookbook:end -->/ { on = 0 }
  !on { next }
  match($0, /<!-- recipe: [a-z0-9-]+ -->/) { name = substr($0, RSTART + 13, RLENGTH - 17); next }
  /^```sh$/ && name != "" { file = dir "/" name ".sh"; next }
  /^```$/ && file != "" { close(file); file = ""; name = ""; next }
  file != "" { print > file }
' "$root/README.md"

run() {  # run RECIPE [healthy]: the recipe's output, in the job's folder or the healthy one
  (cd "$scratch/${2:-job}" && bash -c "$(cat "$scratch/recipes/$1.sh")" 2>"$scratch/$1${2:+.$2}.err")
}

expected=(top-id affected-gpus hardware-or-not hosts-to-exclude events-of-host counts-by-xid
  verify-commands scan-xid-79)
for name in "${expected[@]}"; do
  check "README has recipe $name" test -s "$scratch/recipes/$name.sh"
done

for recipe in "$scratch"/recipes/*.sh; do
  name=$(basename "$recipe" .sh)
  out=$(run "$name")
  status=$?
  check "$name: runs" test "$status" = 0
  check "$name: quiet" test ! -s "$scratch/$name.err"
  case $name in
    top-id)
      check "$name" test "$out" = "gpu-off-bus"
      check "$name (healthy)" test "$(run "$name" healthy)" = "none"
      ;;
    affected-gpus)
      check "$name" test "$out" = $'0000:4a:00.0\n0000:4c:00.0\n0000:87:00.0'
      ;;
    hardware-or-not)
      check "$name" test "$out" = "hardware: retry on another node"
      check "$name (healthy)" test "$(run "$name" healthy)" = "not hardware: do not retry"
      ;;
    hosts-to-exclude)
      check "$name" test "$out" = "gpu-node-017,gpu-node-031"
      check "$name (healthy)" test "$(run "$name" healthy)" = ""
      ;;
    events-of-host)
      check "$name: objects of that host's events" test "$(jq -s 'length' <<<"$out")" = \
        "$(cd "$scratch/job" && faultline scan logs/ | jq -c 'select(.record == "event" and .host == "gpu-node-017")' | wc -l)"
      check "$name: the Xid 63" jq -se 'any(.[]; .xid == 63 and .gpu == "0000:87:00.0")' <<<"$out" >/dev/null
      ;;
    counts-by-xid)
      check "$name: 48, 63, 94 once each" jq -e \
        '[.[] | select(.xid == 48 or .xid == 63 or .xid == 94) | .count] == [1, 1, 1]' <<<"$out" >/dev/null
      check "$name: 79 twice or more" jq -e 'any(.[]; .xid == 79 and .count >= 2)' <<<"$out" >/dev/null
      ;;
    verify-commands)
      check "$name" grep -q "^nvidia-smi .*0000:4c:00.0" <<<"$out"
      ;;
    scan-xid-79)
      check "$name: at least two lines" test "$(wc -l <<<"$out")" -ge 2
      check "$name: host, GPU, time" every_line '^gpu-node-031 0000:4c:00.0 2025-07-23T20:4' "$out"
      ;;
    *)
      check "$name: has a check in jq_test.sh" false
      ;;
  esac
done

finish
