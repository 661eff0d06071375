#!/usr/bin/env bash
# Runs faultline-scan-job.yaml on every GPU node and gathers its records (contrib/kubernetes/README.md).
#
#   gather.sh start [NODE_SELECTOR]   create the Job with parallelism = completions = the number
#                                     of nodes NODE_SELECTOR matches
#   gather.sh collect [NODE_SELECTOR] wait for the Job to finish, write the records of one
#                                     Succeeded pod per node to records.jsonl, and for every
#                                     matching node that gave none, name it on stderr with its
#                                     pod's state and add an unread record for it to records.jsonl
#
# NODE_SELECTOR is a kubectl label selector (default nvidia.com/gpu.present=true). Environment:
# JOB (default faultline-scan), MANIFEST (default faultline-scan-job.yaml beside this script),
# RECORDS (default records.jsonl), WAIT_SECONDS (default 1200), KUBECTL (default kubectl; add
# -n NAMESPACE or --context here). Needs kubectl and jq.
# Exit status: 0 when every node gave its records, 1 when some did not (records.jsonl still
# holds the others, and the missing nodes as unread records, which
# `faultline diagnose --events records.jsonl` lists under "Not read"), 2 on a usage or kubectl
# error.
set -euo pipefail

mode=${1:-collect}
selector=${2:-nvidia.com/gpu.present=true}
job=${JOB:-faultline-scan}
manifest=${MANIFEST:-$(dirname "$0")/faultline-scan-job.yaml}
records=${RECORDS:-records.jsonl}
read -r -a kubectl <<<"${KUBECTL:-kubectl}"

nodes() {
  "${kubectl[@]}" get nodes -l "$selector" -o json | jq -r '.items[].metadata.name' | sort
}

case $mode in
start)
  count=$(nodes | wc -l)
  if ((count == 0)); then
    echo "gather.sh: no node matches $selector" >&2
    exit 2
  fi
  sed -E "s/^(  (parallelism|completions):) [0-9]+/\1 $count/" "$manifest" |
    "${kubectl[@]}" create -f -
  echo "gather.sh: $job started for $count nodes ($selector)" >&2
  ;;
collect)
  # The Job is over when it has a Complete or Failed condition (activeDeadlineSeconds and
  # backoffLimit make it Failed; the pods that succeeded before still hold their records).
  if ! "${kubectl[@]}" get job "$job" -o name >/dev/null; then
    echo "gather.sh: no Job $job" >&2
    exit 2
  fi
  deadline=$((SECONDS + ${WAIT_SECONDS:-1200}))
  until "${kubectl[@]}" get job "$job" -o json |
    jq -e '[.status.conditions[]? | select(.status == "True") | .type] |
      any(. == "Complete" or . == "Failed")' >/dev/null; do
    if ((SECONDS >= deadline)); then
      echo "gather.sh: $job has not finished; gathering what has" >&2
      break
    fi
    sleep 5
  done
  pods=$("${kubectl[@]}" get pods -l "job-name=$job" -o json)
  : >"$records"
  declare -A scanned=() unreadable=()
  # One Succeeded pod per node: a replacement pod may have scanned a node twice.
  while IFS=$'\t' read -r pod node; do
    [[ -n ${scanned[$node]:-} ]] && continue
    # A pod's log is gone when its node is (the kubelet serves it): that node counts as missing.
    if "${kubectl[@]}" logs "$pod" -c scan >"$records.part"; then
      cat "$records.part" >>"$records"
      scanned[$node]=$pod
    else
      unreadable[$node]=$pod
    fi
  done < <(jq -r '.items[] | select(.status.phase == "Succeeded") |
    [.metadata.name, .spec.nodeName] | @tsv' <<<"$pods")
  rm -f "$records.part"
  echo "gather.sh: records of ${#scanned[@]} nodes in $records" >&2
  missing=0
  while read -r node; do
    [[ -z $node || -n ${scanned[$node]:-} ]] && continue
    missing=$((missing + 1))
    # Why: each pod that was on the node (phase, reason, exit code, termination message, which
    # holds faultline's warnings), or none at all (never scheduled: Pending, or the Job ended).
    why=$(jq -r --arg node "$node" --arg unreadable "${unreadable[$node]:-}" '[.items[] |
      select(.spec.nodeName == $node) | "\(.metadata.name) \(.status.phase)" +
      (if .status.reason then " (\(.status.reason))" else "" end) +
      ([.status.containerStatuses[]?.state.terminated | select(.) | " exit \(.exitCode)" +
        (if .reason then " \(.reason)" else "" end) +
        (if .message and .message != "" then ": \(.message | gsub("\n"; " | "))" else "" end)] |
        join("")) +
      (if .metadata.name == $unreadable then ": its log could not be read" else "" end)] |
      if length == 0 then "no pod ran there" else join("; ") end' <<<"$pods")
    echo "gather.sh: no records from $node: $why" >&2
    # The central report lists the node under "Not read" rather than leaving it out: the input
    # not read is the pod's log where it is gone, the node otherwise.
    path=$node
    [[ -n ${unreadable[$node]:-} ]] && path="pod ${unreadable[$node]} on $node"
    jq -nc --arg path "$path" --arg reason "no records: $why" \
      '{record: "unread", path: $path, reason: $reason}' >>"$records"
  done < <(nodes)
  pending=$(jq '[.items[] | select(.status.phase == "Pending")] | length' <<<"$pods")
  if ((pending > 0)); then
    echo "gather.sh: $pending pods never ran: kubectl describe pods -l job-name=$job" >&2
  fi
  if ((missing > 0)); then
    echo "gather.sh: $missing nodes gave no records (unread records in $records); the diagnosis sees only the others" >&2
    exit 1
  fi
  ;;
*)
  echo "usage: gather.sh start|collect [NODE_SELECTOR]" >&2
  exit 2
  ;;
esac
