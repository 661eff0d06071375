#!/usr/bin/env bash
# contrib/kubernetes without a cluster: every manifest validated against the Kubernetes OpenAPI
# schemas (kubernetes-models and yaml, pinned in tests/kubernetes/package-lock.json, installed
# with `npm ci` into the build folder; unknown fields rejected too), copies with a misspelled
# field, a wrong type or a weakened security setting rejected, the security posture of issue 22
# asserted from the parsed manifests (tests/kubernetes/posture.jq), and the scripts the
# containers run executed for real: the Job's on each node of a multi-node sample (a host
# /var/log and a job log volume laid out in folders) must give, diagnosed centrally, what one run
# over the sample gives; the DaemonSet's must print the record of a kernel line appended to the
# log it follows; gather.sh, with a stand-in kubectl, must keep one pod's records per node and
# name the nodes that gave none, on stderr and as unread records the central report lists under
# "Not read". Without node, npm or jq, or when npm cannot install the
# packages, the test fails rather than skips.
# Usage: kubernetes_test.sh FAULTLINE_BINARY SOURCE_DIR
set -uo pipefail

faultline=$(realpath "$1")
root=$(realpath "$2") # absolute: gather.sh runs from the scratch folder
contrib=$root/contrib/kubernetes
samples=$root/samples
work=$PWD/kubernetes
scratch=$(mktemp -d)
follower=""
trap '[[ -n $follower ]] && kill -- -"$follower" 2>/dev/null; rm -rf "$scratch"' EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

for tool in node npm jq; do
  if ! command -v "$tool" >/dev/null; then
    echo "FAIL: $tool is needed (scripts/install-deps installs it)" >&2
    exit 1
  fi
done
mkdir -p "$work"
cp "$root/tests/kubernetes/package.json" "$root/tests/kubernetes/package-lock.json" \
  "$root/tests/kubernetes/validate.mjs" "$work/"
if ! (cd "$work" && timeout 300 npm ci --no-audit --no-fund --loglevel=error >"$scratch/npm.log" 2>&1); then
  echo "FAIL: npm ci could not install kubernetes-models: $(tail -3 "$scratch/npm.log")" >&2
  exit 1
fi
validate() { node "$work/validate.mjs" "$@"; }
posture() { jq -r -f "$root/tests/kubernetes/posture.jq" "$1"; }

# --- Every manifest: valid against the schemas, and with the posture the issue asks. ---
manifests=("$contrib"/*.yaml)
check "two manifests or more in contrib/kubernetes (${#manifests[@]})" test "${#manifests[@]}" -ge 2
for manifest in "${manifests[@]}"; do
  name=$(basename "$manifest" .yaml)
  check "$name: valid against the Kubernetes schemas: $(validate "$manifest" 2>&1 | grep -v ': valid$')" \
    validate "$manifest"
  validate --json "$manifest" >"$scratch/$name.json" 2>/dev/null
  check "$name: one workload" test "$(jq -s 'map(select(.kind == "Job" or .kind == "DaemonSet")) | length' "$scratch/$name.json")" = 1
  check "$name: the posture: $(posture "$scratch/$name.json" | paste -sd ';')" test -z "$(posture "$scratch/$name.json")"
done
job_manifest=$contrib/faultline-scan-job.yaml
daemonset_manifest=$contrib/faultline-scan-daemonset.yaml
job=$scratch/faultline-scan-job.json
daemonset=$scratch/faultline-scan-daemonset.json
check "the Job is a batch/v1 Job" jq -e '.apiVersion == "batch/v1" and .kind == "Job"' "$job" >/dev/null
check "the DaemonSet is an apps/v1 DaemonSet" \
  jq -e '.apiVersion == "apps/v1" and .kind == "DaemonSet"' "$daemonset" >/dev/null

# --- Broken copies: the validator and the posture check must reject each. ---
# rejected NAME EXPECTED SED_SCRIPT [MANIFEST]: the copy SED_SCRIPT makes of MANIFEST (the Job
# unless named) changes it, and the validator's or the posture's complaint matches EXPECTED.
rejected() {
  local name=$1 expected=$2 script=$3 manifest=${4:-$job_manifest}
  local copy=$scratch/broken-$name.yaml
  sed -e "$script" "$manifest" >"$copy"
  check "$name: the copy differs" bash -c '! cmp -s "$1" "$2"' _ "$manifest" "$copy"
  local complaint
  if complaint=$(validate --json "$copy" 2>&1 >"$copy.json"); then
    complaint=$(posture "$copy.json")
  fi
  check "$name: rejected with '$expected' (got: $complaint)" grep -qE -- "$expected" <<<"$complaint"
}
rejected misspelled-field 'unknown field spec.template.spec.hostPId' 's/hostPID: false/hostPId: false/'
rejected misspelled-mount 'unknown field .*volumeMounts\[0\]\.readonly' '0,/readOnly: true/s//readonly: true/'
rejected misspelled-daemonset 'unknown field spec.template.spec.containers\[0\].securityContext.runAsNonroot' \
  's/privileged: false/runAsNonroot: true/' "$daemonset_manifest"
rejected wrong-type 'spec/parallelism must be integer' 's/^  parallelism: [0-9]*/  parallelism: "all"/'
rejected wrong-enum 'restartPolicy must be equal to one of the allowed values' \
  's/restartPolicy: Never/restartPolicy: Sometimes/'
rejected missing-required 'must have required property topologyKey' 's/- topologyKey: /- topology: /'
rejected unknown-kind 'not a Kubernetes kind' 's/^kind: Job/kind: Jobs/'
rejected duplicate-key 'Map keys must be unique' 's/^  parallelism: \([0-9]*\).*/  parallelism: \1\n  parallelism: 1/'
rejected host-pid 'hostPID is true' 's/hostPID: false/hostPID: true/'
rejected writable-host-log 'host volume host-var-log is mounted writable' \
  '/mountPath: \/host\/var\/log/{n;s/readOnly: true/readOnly: false/}'
rejected writable-claim 'the claim is not mounted readOnly' '/claimName:/{n;s/readOnly: true/readOnly: false/}'
rejected root 'runAsNonRoot is not true' 's/runAsNonRoot: true/runAsNonRoot: false/'
rejected no-limits 'no cpu and memory limits' '/limits:/,/ephemeral-storage: 1Gi/{/memory:/d}'
rejected no-anti-affinity 'no required anti-affinity' 's/topologyKey: kubernetes.io\/hostname/topologyKey: topology.kubernetes.io\/zone/'
rejected foreign-anti-affinity 'no required anti-affinity' \
  '/podAntiAffinity:/,/tolerations:/{s/app.kubernetes.io\/name: faultline-scan/app.kubernetes.io\/name: other/}'
rejected uneven-counts 'parallelism and completions differ' 's/^  completions: [0-9]*/  completions: 99/'
rejected escalation 'allowPrivilegeEscalation is not false' \
  's/allowPrivilegeEscalation: false/allowPrivilegeEscalation: true/' "$daemonset_manifest"

# --- The Job's script, run for real on each node of job64-xid95. ---
# Each node gets a host /var/log (its kern.log) and its sub-folder of the job's log volume; PATH
# holds faultline and the few tools the script calls, so nvidia-smi and journalctl are there
# only where a case puts a stand-in.
jq -r '.spec.template.spec.containers[0].args[0]' "$job" >"$scratch/job.sh"
check "the Job runs bash -c SCRIPT" jq -e '.spec.template.spec.containers[0].command == ["/bin/bash", "-c"]' "$job" >/dev/null
check "the Job's script parses (bash -n)" bash -n "$scratch/job.sh"
check "the Job's script runs faultline scan --hostname \"\$NODE_NAME\"" \
  grep -q 'faultline scan --hostname "$NODE_NAME"' "$scratch/job.sh"
manifest_env() { jq -r --arg name "$2" '.spec.template.spec.containers[0].env[] | select(.name == $name) | .value' "$1"; }
kernel_logs=$(manifest_env "$job" KERNEL_LOGS)
journal_since=$(manifest_env "$job" JOURNAL_SINCE)
check "KERNEL_LOGS names kern.log ($kernel_logs)" grep -qw kern.log <<<"$kernel_logs"
tools=$scratch/tools
mkdir -p "$tools"
for tool in cat tail timeout sleep; do ln -s "$(command -v "$tool")" "$tools/$tool"; done
ln -s "$faultline" "$tools/faultline"
bash=$(command -v bash)
# run_job NODE HOST_DIR STANDINS_DIR: the Job's script as the pod runs it on NODE; its stdout in
# $scratch/NODE.jsonl, its status in $status.
run_job() {
  local node=$1 host=$2 standins=$3
  mkdir -p "$scratch/records-$node" "$scratch/scratch-$node"
  env -i PATH="$standins:$tools" NODE_NAME="$node" HOST_LOG_DIR="$host/var/log" \
    KERNEL_LOGS="$kernel_logs" JOURNAL_SINCE="$journal_since" JOB_LOG_DIR="$scratch/job-logs" \
    RECORDS_DIR="$scratch/records-$node" SCRATCH_DIR="$scratch/scratch-$node" \
    timeout 120 "$bash" "$scratch/job.sh" >"$scratch/$node.jsonl" 2>"$scratch/$node.err"
  status=$?
}
mkdir -p "$scratch/no-standins"
records=()
for folder in "$samples/job64-xid95"/*/; do
  node=$(basename "$folder")
  mkdir -p "$scratch/host-$node/var/log" "$scratch/job-logs/$node"
  if [[ -f $folder/kern.log ]]; then
    cp "$folder/kern.log" "$scratch/host-$node/var/log/kern.log"
  else
    gzip -dc "$folder/kern.log.gz" >"$scratch/host-$node/var/log/kern.log"
  fi
  cp "$folder/train.log" "$scratch/job-logs/$node/"
  run_job "$node" "$scratch/host-$node" "$scratch/no-standins"
  check "$node: the Job's script exits 0 (got $status: $(cat "$scratch/$node.err"))" test "$status" = 0
  check "$node: its stdout is records only" jq -e -s 'length > 0 and all(has("record"))' "$scratch/$node.jsonl" >/dev/null
  check "$node: the records are also in RECORDS_DIR" cmp -s "$scratch/$node.jsonl" "$scratch/records-$node/$node.jsonl"
  check "$node: no warning (the script keeps them for the termination message)" \
    test ! -s "$scratch/scratch-$node/scan.err"
  records+=("$scratch/$node.jsonl")
done
findings='[.diagnoses[] | {id, role, severity, subject}]'
"$faultline" diagnose --fail-on never --format json "$samples/job64-xid95" | jq "$findings" >"$scratch/all.json"
"$faultline" diagnose --fail-on never --format json --events "${records[@]}" 2>"$scratch/central.err" |
  jq "$findings" >"$scratch/central.json"
check "the Job's records read without a warning: $(head -3 "$scratch/central.err")" test ! -s "$scratch/central.err"
check "the Job's records diagnose as the whole sample does" cmp -s "$scratch/all.json" "$scratch/central.json"
check "the Xid 95 initiating, rank 29" jq -e '.[0] | .id == "ecc-uncontained" and .role == "initiating" and
  .subject.ranks == [29]' "$scratch/central.json" >/dev/null

# A node with the journal only: the kernel's lines of the window come from journalctl (a
# stand-in that checks its arguments and prints the node's kern.log, the shape of
# `journalctl -k`), and nvidia-smi, where the runtime gives the pod one, adds the GPUs' state.
standins=$scratch/standins
mkdir -p "$standins" "$scratch/host-journal/var/log/journal"
cat >"$standins/journalctl" <<EOF
#!/bin/bash
printf '%s\n' "\$*" >"$scratch/journalctl.args"
exec cat "$samples/job64-xid95/node104/kern.log"
EOF
cat >"$standins/nvidia-smi" <<EOF
#!/bin/bash
[[ \$* == -q ]] && exec cat "$samples/h100-remap-failure/nvidia-smi-q-row-remapper.txt"
exit 9
EOF
chmod +x "$standins/journalctl" "$standins/nvidia-smi"
rm -rf "$scratch/job-logs/journal-node"
run_job journal-node "$scratch/host-journal" "$standins"
check "journal node: exits 0 (got $status: $(cat "$scratch/journal-node.err"))" test "$status" = 0
check "journal node: journalctl reads the host's journal, kernel lines of the window: $(cat "$scratch/journalctl.args")" \
  test "$(cat "$scratch/journalctl.args")" = "--quiet --directory=$scratch/host-journal/var/log/journal _TRANSPORT=kernel --since=$journal_since -o short-iso --no-pager"
# kernel_events FILE INPUT: the signature and text of each event FILE's records took from INPUT.
kernel_events() { jq -c --arg input "$2" 'select(.record == "event" and .path == $input) | [.signature, .text]' "$1"; }
kernel_events "$scratch/journal-node.jsonl" "$scratch/scratch-journal-node/kernel-journal.log" >"$scratch/journal.events"
check "journal node: the kernel's events as from its kern.log ($(wc -l <"$scratch/journal.events"))" \
  cmp -s "$scratch/journal.events" \
  <(kernel_events "$scratch/node104.jsonl" "$scratch/host-node104/var/log/kern.log")
check "journal node: the kernel's events include the Xid 95" grep -q '^\["xid-95-uncontained"' "$scratch/journal.events"
check "journal node: the GPUs' state from nvidia-smi -q" \
  jq -e -s 'any(.record == "state")' "$scratch/journal-node.jsonl" >/dev/null
check "journal node: its missing job log folder is an unread record" jq -e -s --arg path "$scratch/job-logs/journal-node" \
  'any(.record == "unread" and .path == $path)' "$scratch/journal-node.jsonl" >/dev/null

# A journal the pod may not read: journalctl fails ("No journal files were opened due to
# insufficient permissions"), and faultline, given the journal's folder, reports its file as not
# read (unreadable where the test is not root; for root, binary: either way not read, and said so).
cat >"$standins/journalctl" <<'EOF'
#!/bin/bash
echo "No journal files were opened due to insufficient permissions." >&2
exit 1
EOF
printf 'LPKSHHRH\0\0\0\0' >"$scratch/host-journal/var/log/journal/system.journal"
chmod 0600 "$scratch/host-journal/var/log/journal/system.journal"
run_job journal-denied "$scratch/host-journal" "$standins"
check "journal denied: exits 0, the GPU state still read (got $status)" test "$status" = 0
check "journal denied: the journal's file is reported as not read" jq -e -s \
  --arg path "$scratch/host-journal/var/log/journal/system.journal" \
  'any((.record == "unread" and .path == $path) or (.record == "input" and .path == $path and .error != null))' \
  "$scratch/journal-denied.jsonl" >/dev/null
check "journal denied: journalctl's complaint kept for the termination message" \
  grep -q 'insufficient permissions' "$scratch/scratch-journal-denied/scan.err"

# A node with nothing to read: the pod fails (exit 2), so gather.sh counts the node as missing.
mkdir -p "$scratch/host-empty/var/log"
run_job empty-node "$scratch/host-empty" "$scratch/no-standins"
check "empty node: the Job's script exits 2 (got $status)" test "$status" = 2
check "empty node: the reason is kept for the termination message" \
  grep -q 'no input could be read' "$scratch/scratch-empty-node/scan.err"

# --- The DaemonSet's script: the record of a line appended to the followed kernel log. ---
jq -r '.spec.template.spec.containers[0].args[0]' "$daemonset" >"$scratch/follow.sh"
check "the DaemonSet's script parses (bash -n)" bash -n "$scratch/follow.sh"
mkdir -p "$scratch/host-follow/var/log"
: >"$scratch/host-follow/var/log/kern.log"
setsid env -i PATH="$tools" NODE_NAME=follow-node HOST_LOG_DIR="$scratch/host-follow/var/log" \
  KERNEL_LOG="$(manifest_env "$daemonset" KERNEL_LOG)" "$bash" "$scratch/follow.sh" \
  >"$scratch/follow.jsonl" 2>"$scratch/follow.err" &
follower=$!
# tail starts at the end of the file, so a line appended before it is running is never read: the
# line is appended again until its record comes (30 s at most; the first read prints at once).
xid=$(grep -m1 'NVRM: Xid' "$samples/job64-xid95/node104/kern.log")
for _ in $(seq 60); do
  printf '%s\n' "$xid" >>"$scratch/host-follow/var/log/kern.log"
  sleep 0.5
  grep -q '"record":"event"' "$scratch/follow.jsonl" && break
done
check "the DaemonSet's script prints the appended Xid's record while it follows: $(cat "$scratch/follow.err")" \
  jq -e -s 'any(.record == "event" and .host == "gpu-node-104")' "$scratch/follow.jsonl" >/dev/null
kill -- -"$follower" 2>/dev/null
wait "$follower" 2>/dev/null
follower=""

# --- gather.sh with a stand-in kubectl: one Succeeded pod per node, the missing nodes named
# on stderr and as unread records. ---
# Cluster: node101 scanned twice (a replacement pod), node102 once, node103's pod failed with
# faultline's message, node104 never got a pod, node105's pod succeeded but its log is gone (the
# node went away); the stand-in serves the API's JSON for them.
check "gather.sh parses (bash -n)" bash -n "$contrib/gather.sh"
cluster=$scratch/cluster
mkdir -p "$cluster/logs" "$cluster/bin"
pod() { # NAME NODE PHASE [EXIT_CODE MESSAGE]
  local state='{"running": {}}'
  # The kubelet's reasons: Completed for exit 0, Error otherwise.
  [[ $# -gt 3 ]] && state=$(jq -n --argjson code "$4" --arg message "$5" \
    '{terminated: {exitCode: $code, reason: (if $code == 0 then "Completed" else "Error" end), message: $message}}')
  jq -n --arg name "$1" --arg node "$2" --arg phase "$3" --argjson state "$state" \
    '{metadata: {name: $name, labels: {"job-name": "faultline-scan"}}, spec: {nodeName: $node},
      status: {phase: $phase, containerStatuses: [{name: "scan", state: $state}]}}'
}
{
  pod faultline-scan-a node101 Succeeded 0 ""
  pod faultline-scan-b node102 Succeeded 0 ""
  pod faultline-scan-c node101 Succeeded 0 ""
  pod faultline-scan-d node103 Failed 2 "faultline: no input could be read"
  pod faultline-scan-e node105 Succeeded 0 ""
} | jq -s '{kind: "PodList", apiVersion: "v1", items: .}' >"$cluster/pods.json"
jq -n '{kind: "NodeList", apiVersion: "v1", items: [range(101; 106) | {metadata: {name: "node\(.)"}}]}' >"$cluster/nodes.json"
jq -n '{kind: "Job", apiVersion: "batch/v1", metadata: {name: "faultline-scan"},
  status: {conditions: [{type: "Failed", status: "True", reason: "BackoffLimitExceeded"}]}}' >"$cluster/job.json"
cp "$scratch/node101.jsonl" "$cluster/logs/faultline-scan-a"
cp "$scratch/node102.jsonl" "$cluster/logs/faultline-scan-b"
cp "$scratch/node101.jsonl" "$cluster/logs/faultline-scan-c"
cat >"$cluster/bin/kubectl" <<EOF
#!/bin/bash
printf '%s\n' "\$*" >>"$cluster/calls"
case "\$1 \$2" in
  "get nodes") cat "$cluster/nodes.json" ;;
  "get job") [[ \$3 == faultline-scan ]] && cat "$cluster/job.json" ;;
  "get pods") cat "$cluster/pods.json" ;;
  "logs "*) cat "$cluster/logs/\$2" ;;
  "create -f") cat >"$cluster/created.yaml" ;;
  *) exit 1 ;;
esac
EOF
chmod +x "$cluster/bin/kubectl"
(cd "$scratch" && PATH="$cluster/bin:$PATH" RECORDS="$scratch/gathered.jsonl" \
  bash "$contrib/gather.sh" collect >"$scratch/gather.out" 2>"$scratch/gather.err")
code=$?
cat "$scratch/gather.err"
check "gather.sh exits 1 when nodes are missing (got $code)" test "$code" = 1
# The pods' records first, then one unread record per missing node.
scanned_lines=$(cat "$scratch/node101.jsonl" "$scratch/node102.jsonl" | wc -l)
check "gather.sh keeps one pod per node" cmp -s <(head -n "$scanned_lines" "$scratch/gathered.jsonl") \
  <(cat "$scratch/node101.jsonl" "$scratch/node102.jsonl")
tail -n +"$((scanned_lines + 1))" "$scratch/gathered.jsonl" >"$scratch/gathered-unread.jsonl"
check "gather.sh adds one unread record per missing node: $(jq -c '[.record, .path]' "$scratch/gathered-unread.jsonl" | paste -sd ' ')" \
  test "$(jq -c -s 'map([.record, .path])' "$scratch/gathered-unread.jsonl")" = \
  '[["unread","node103"],["unread","node104"],["unread","pod faultline-scan-e on node105"]]'
# unread_reason PATH: the reason of the unread record for PATH.
unread_reason() { jq -r --arg path "$1" 'select(.path == $path) | .reason' "$scratch/gathered-unread.jsonl"; }
check "node103's unread record has the pod's state and faultline's message ($(unread_reason node103))" \
  test "$(unread_reason node103)" = 'no records: faultline-scan-d Failed exit 2 Error: faultline: no input could be read'
check "node104's unread record says no pod ran there ($(unread_reason node104))" \
  test "$(unread_reason node104)" = 'no records: no pod ran there'
check "node105's unread record says its log could not be read ($(unread_reason 'pod faultline-scan-e on node105'))" \
  test "$(unread_reason 'pod faultline-scan-e on node105')" = \
  'no records: faultline-scan-e Succeeded exit 0 Completed: its log could not be read'
check "gather.sh selects the Job's pods and GPU nodes" \
  grep -qx 'get pods -l job-name=faultline-scan -o json' "$cluster/calls"
check "gather.sh names node103 and faultline's message" \
  grep -q 'no records from node103: faultline-scan-d Failed exit 2 Error: faultline: no input could be read' "$scratch/gather.err"
check "gather.sh names node104, where no pod ran" grep -q 'no records from node104: no pod ran there' "$scratch/gather.err"
check "gather.sh names node105, whose log is gone" \
  grep -q 'no records from node105: faultline-scan-e Succeeded exit 0 Completed: its log could not be read' "$scratch/gather.err"
check "gather.sh does not name the nodes it has" bash -c '! grep -qE "no records from node10[12]" "$1"' _ "$scratch/gather.err"
"$faultline" diagnose --fail-on never --events "$scratch/gathered.jsonl" >"$scratch/gathered.txt" \
  2>"$scratch/gathered.err"
code=$?
check "the gathered records diagnose (got $code: $(head -3 "$scratch/gathered.err"))" test "$code" = 0
# Each unread record is also a warning; any other (a line that is not a record) is a fault.
check "the gathered records warn only of the missing nodes: $(head -5 "$scratch/gathered.err" | paste -sd ' ')" \
  test "$(grep -vcE '^faultline: warning: (node103|node104|pod faultline-scan-e on node105): no records' \
    "$scratch/gathered.err")" = 0
check "the report lists the missing nodes under Not read: $(grep 'Not read' "$scratch/gathered.txt" | paste -sd ' ')" \
  test "$(grep -c -E 'Not read: (node103|node104|pod faultline-scan-e on node105): no records' "$scratch/gathered.txt")" = 3
check "the report does not list the scanned nodes under Not read" \
  bash -c '! grep -qE "Not read: .*node10[12]" "$1"' _ "$scratch/gathered.txt"
# start: the Job as created, with parallelism and completions set to the node count.
(PATH="$cluster/bin:$PATH" bash "$contrib/gather.sh" start >/dev/null 2>&1)
check "gather.sh start creates the Job from stdin" grep -qx 'create -f -' "$cluster/calls"
check "gather.sh start sets both counts to the 5 nodes" test \
  "$(validate --json "$cluster/created.yaml" 2>/dev/null | jq -c '[.spec.parallelism, .spec.completions]')" = "[5,5]"

# --- The image's Dockerfile (no Docker here: hadolint is not in Debian, so its text is checked). ---
dockerfile=$root/contrib/docker/Dockerfile
check "the Dockerfile builds FROM debian:12 only" \
  test "$(grep -E '^FROM ' "$dockerfile" | grep -cvE '^FROM debian:12( AS [a-z]+)?$')" = 0
check "the Dockerfile has a build stage and a runtime stage" test "$(grep -c '^FROM ' "$dockerfile")" = 2
check "the image runs as a non-root user" bash -c 'u=$(grep "^USER " "$1" | tail -1 | cut -d" " -f2); [[ -n $u && ${u%%:*} != 0 && ${u%%:*} != root ]]' _ "$dockerfile"
check "the image's entry point is faultline" grep -qx 'ENTRYPOINT \["faultline"\]' "$dockerfile"
check "the manifests run the uid the image runs as" test "$(grep '^USER ' "$dockerfile" | cut -d' ' -f2 | cut -d: -f1)" = \
  "$(jq -r '.spec.template.spec.securityContext.runAsUser' "$job")"
# The build stage's packages, against scripts/install-deps: none from elsewhere (but file, which
# cpack's dpkg-shlibdeps needs), and every library install-deps builds with, so that a library
# added there is not forgotten here. Left out on purpose: the test framework, the fuzzer's
# runtime and the static build's extra archives.
build_packages=$(awk '/^FROM .* AS build/ {stage = 1; next} /^FROM / {stage = 0} stage' "$dockerfile" |
  sed -n '/apt-get install/,/&& rm/p' | sed 's/.*--no-install-recommends//; s/&& rm.*//; s/\\//' |
  tr -s ' \n' '\n' | grep -v '^$' | sort -u)
deps_packages=$(sed -n '/^packages=(/,/^)/p' "$root/scripts/install-deps" | sed 's/#.*//; s/packages=(//; s/^)$//' |
  tr -s ' \n' '\n' | grep -v '^$' | sort -u)
check "the build stage installs packages ($(wc -w <<<"$build_packages"))" test "$(wc -w <<<"$build_packages")" -ge 10
check "the build stage installs only install-deps' packages, and file: $(comm -23 <(echo "$build_packages") <(echo "$deps_packages") | paste -sd ' ')" \
  test -z "$(comm -23 <(echo "$build_packages") <(echo "$deps_packages") | grep -vx file)"
check "the build stage installs every library install-deps builds with: $(comm -13 <(echo "$build_packages") <(grep -- '-dev$' <<<"$deps_packages") | paste -sd ' ')" \
  test -z "$(comm -13 <(echo "$build_packages") <(grep -- '-dev$' <<<"$deps_packages") |
    grep -vxE 'doctest-dev|libclang-rt-14-dev|libacl1-dev|liblz4-dev')"
# What the build stage copies is what CMakeLists.txt reads: every folder and file it names.
for path in CMakeLists.txt README.md cmake lib cli signatures; do
  check "the build stage copies $path" grep -qE "^COPY (.* )?$path/? " "$dockerfile"
done

finish "manifests: ${manifests[*]##*/}"
