#!/usr/bin/env bash
# contrib/slurm on a real Slurm. First the epilog alone: a hung kernel-log command (a journalctl
# stand-in that sleeps), a hung faultline, a spool that is no folder and a full spool each end
# within the epilog's time limit with exit 0 and a log line. Then a single-host cluster on
# loopback (munged, slurmctld, slurmd with their own key, socket, ports and folders in a scratch
# folder): a job that prints real failure lines (an NCCL watchdog timeout, a CUDA ECC error) and
# exits 1 leaves its records in the spool, the kernel side from a fixture the epilog's kernel-log
# command prints, and faultline-job names the initiating failure the sample's golden file names;
# a job that succeeds leaves none, and faultline-job lists its node among what it could not see.
# Every daemon is stopped and the scratch folder removed on exit, on failure too.
# Needs root (or password-less sudo) and Debian's slurm-wlm and munge (scripts/install-deps):
# without them it fails rather than pass without a cluster.
# Usage: slurm_test.sh FAULTLINE SOURCE_DIR (ctest -L slurm runs it alone)
set -uo pipefail

# slurmd must run as root: a user with password-less sudo (a CI runner) runs the test through it.
if [[ $(id -u) != 0 ]] && sudo -n true 2>/dev/null; then
  exec sudo -n bash "$(realpath "$0")" "$(realpath "$1")" "$(realpath "$2")"
fi

faultline=$(realpath "$1")
root=$(realpath "$2")
epilog=$root/contrib/slurm/faultline-epilog
faultline_job=$root/contrib/slurm/faultline-job
sample=$root/samples/job64-xid95
scratch=$(mktemp -d /tmp/faultline-slurm-test.XXXXXX)
chmod 755 "$scratch"
daemons=()
mounted=""

# Stops what this test started: the cluster's jobs, the daemons by their pids, any process left
# that works in or holds a file of the scratch folder (a job's slurmstepd), a mounted spool; then
# removes the folder.
cleanup() {
  local pid jobs
  if [[ -n ${SLURM_CONF:-} ]] && jobs=$(squeue -h -o %i 2>/dev/null) && [[ -n $jobs ]]; then
    # shellcheck disable=SC2086  # one job id a word
    scancel $jobs 2>/dev/null
    for _ in $(seq 40); do
      [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break
      sleep 0.25
    done
  fi
  for pid in "${daemons[@]}"; do kill "$pid" 2>/dev/null; done
  for _ in $(seq 50); do
    pid=""
    for pid in "${daemons[@]}"; do kill -0 "$pid" 2>/dev/null && break; pid=""; done
    [[ -z $pid ]] && break
    sleep 0.2
  done
  for pid in "${daemons[@]}"; do kill -9 "$pid" 2>/dev/null; done
  for pid in $(find /proc/[0-9]*/cwd /proc/[0-9]*/fd -maxdepth 1 -lname "$scratch/*" 2>/dev/null |
    cut -d/ -f3 | sort -u); do
    [[ $pid != "$$" ]] && kill -9 "$pid" 2>/dev/null
  done
  [[ -n $mounted ]] && umount "$mounted"
  rm -rf "$scratch"
}
trap cleanup EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

# The id the sample's golden file gives the initiating failure: what faultline-job must name.
expected_id=$(jq -r .top.id "$sample.expected.json")
expected_host=$(jq -r .top.host "$sample.expected.json")
node=$expected_host

# The epilog alone asks a stand-in scontrol about job 7: the fields it reads, in the shape of
# Slurm 22.05's `scontrol show job -o` line; its output file holds the sample's real lines.
mkdir "$scratch/bin" "$scratch/out"
cat "$sample/node104/train.log" >"$scratch/out/slurm-7.out"
cat >"$scratch/bin/scontrol" <<EOF
#!/bin/sh
echo "JobId=7 JobName=train UserId=root(0) GroupId=root(0) JobState=COMPLETING Reason=NonZeroExitCode \
ExitCode=1:0 StartTime=$(date -d -10min +%Y-%m-%dT%H:%M:%S) EndTime=$(date +%Y-%m-%dT%H:%M:%S) \
Partition=debug NodeList=$node BatchHost=$node NumNodes=1 WorkDir=$scratch/out \
StdErr=$scratch/out/slurm-7.out StdIn=/dev/null StdOut=$scratch/out/slurm-7.out Power="
EOF
chmod +x "$scratch/bin/scontrol"

# run_epilog NAME CONF: the epilog as slurmd runs it (no environment but Slurm's), for a failed
# job 7 on $node; its exit code in $code, its seconds in $seconds.
run_epilog() {
  local started
  started=$(date +%s%N)
  env -i PATH="$scratch/bin:/usr/bin:/bin" FAULTLINE_EPILOG_CONF="$2" SLURM_JOB_ID=7 SLURMD_NODENAME="$node" \
    SLURM_JOB_EXIT_CODE=256 SLURM_JOB_DERIVED_EC=0 SLURM_JOB_UID="$(id -u)" SLURM_JOB_GID="$(id -g)" \
    "$epilog" >"$scratch/$1.out" 2>&1
  code=$?
  seconds=$((($(date +%s%N) - started) / 1000000000))
}

# stopped PIDFILE: the process whose pid the file holds is gone.
stopped() {
  ! kill -0 "$(cat "$1")" 2>/dev/null
}

# write_conf FILE KEY=VALUE...: an epilog configuration.
write_conf() {
  local file=$1
  shift
  printf '%s\n' "faultline = $faultline" "nvidia_smi =" "log_file = $scratch/epilog.log" \
    "${@/=/ = }" >"$file"
}

# --- The epilog alone: its time limit and exit 0. ---
mkdir "$scratch/spool"
# A journalctl stand-in that never answers; it leaves its pid to show it was killed.
cat >"$scratch/hung-journalctl" <<EOF
#!/bin/sh
echo \$\$ >"$scratch/hung-journalctl.pid"
exec sleep 3600
EOF
chmod +x "$scratch/hung-journalctl"
# 12 s: the stand-in is cut at 8 s, which leaves 4 s to scan the job's output, enough for the
# sanitizer build on a busy 2-core machine (6 s left 2, and a CI run beside other work missed it).
time_limit=12
write_conf "$scratch/hung.conf" "spool=$scratch/spool" "time_limit=$time_limit" \
  "kernel_log=$scratch/hung-journalctl --since @{start} --until @{end}"
run_epilog hung "$scratch/hung.conf"
check "hung kernel log: the epilog exits 0 (exit $code)" test "$code" = 0
# The gathering steps end at two thirds of time_limit (the job's output is still scanned, below),
# the backstop kills all at time_limit + 3 s.
check "hung kernel log: the epilog returns within its time limit + 3 s ($seconds s, limit $time_limit s)" \
  test "$seconds" -le $((time_limit + 3))
check "hung kernel log: the stand-in was killed" stopped "$scratch/hung-journalctl.pid"
check "hung kernel log: the log says the command timed out" \
  grep -q "job 7 on $node: the kernel log command timed out: $scratch/hung-journalctl" "$scratch/epilog.log"
check "hung kernel log: the spool holds an unread record for the kernel log" jq -se '
  map(select(.record == "unread")) | length == 1 and (.[0].reason | test("timed out")) and
  (.[0].path | contains("hung-journalctl --since @"))' "$scratch/spool/7/$node.jsonl" >/dev/null
check "hung kernel log: the job's output was still read" jq -se --arg out "$scratch/out/slurm-7.out" '
  any(.[]; .record == "event" and .path == $out and .signature == "cuda-ecc-error")' \
  "$scratch/spool/7/$node.jsonl" >/dev/null
"$faultline" diagnose --fail-on never --events "$scratch/spool/7/$node.jsonl" >"$scratch/hung.txt" 2>&1
check "hung kernel log: the report says the kernel log was not read" \
  grep -q "^Not read: $node: $scratch/hung-journalctl" "$scratch/hung.txt"

# A faultline that hangs: the whole run is cut at time_limit, still exit 0.
cat >"$scratch/hung-faultline" <<EOF
#!/bin/sh
exec sleep 3600
EOF
chmod +x "$scratch/hung-faultline"
write_conf "$scratch/hung-scan.conf" "spool=$scratch/spool" "time_limit=$time_limit" \
  "kernel_log=cat $sample/node104/kern.log"
sed -i "s|^faultline = .*|faultline = $scratch/hung-faultline|" "$scratch/hung-scan.conf"
rm -rf "$scratch/spool/7"
run_epilog hung-scan "$scratch/hung-scan.conf"
check "hung faultline scan: the epilog exits 0 (exit $code)" test "$code" = 0
check "hung faultline scan: the epilog returns within its time limit + 3 s ($seconds s, limit $time_limit s)" \
  test "$seconds" -le $((time_limit + 3))
check "hung faultline scan: the log says so" grep -q "faultline scan timed out" "$scratch/epilog.log"
check "hung faultline scan: the records say they are cut short" \
  grep -q '"reason": "faultline scan timed out' "$scratch/spool/7/$node.jsonl"

# A spool that is not there (shared storage not mounted): logged, exit 0, nothing written.
write_conf "$scratch/no-spool.conf" "spool=$scratch/not-mounted" "kernel_log=cat $sample/node104/kern.log"
run_epilog no-spool "$scratch/no-spool.conf"
check "no spool: the epilog exits 0 (exit $code)" test "$code" = 0
check "no spool: the log says so" grep -q "spool $scratch/not-mounted is not a folder" "$scratch/epilog.log"
check "no spool: nothing created" test ! -e "$scratch/not-mounted"

# A full spool (a 64 KiB tmpfs, filled): logged, exit 0, no file and no temporary file left.
note=""
mkdir "$scratch/full-spool"
if mount -t tmpfs -o size=64k tmpfs "$scratch/full-spool" 2>/dev/null; then
  mounted=$scratch/full-spool
  mkdir "$scratch/full-spool/7"
  dd if=/dev/zero of="$scratch/full-spool/filler" bs=4k 2>/dev/null
  write_conf "$scratch/full.conf" "spool=$scratch/full-spool" "kernel_log=cat $sample/node104/kern.log"
  run_epilog full "$scratch/full.conf"
  check "full spool: the epilog exits 0 (exit $code)" test "$code" = 0
  check "full spool: the log says it cannot write" grep -q "cannot write $scratch/full-spool/7/" "$scratch/epilog.log"
  check "full spool: no records file, no temporary file" \
    test -z "$(find "$scratch/full-spool/7" -mindepth 1 -print -quit)"
  umount "$mounted" && mounted=""
else
  note="no tmpfs could be mounted: the full-spool case was not run"
fi

# --- A single-host Slurm cluster on loopback. ---
# Not run is a failure, never a pass: CI installs what it needs and runs as root.
missing=""
for binary in munged mungekey slurmctld slurmd sbatch scancel scontrol sinfo squeue; do
  command -v "$binary" >/dev/null || missing+=" $binary"
done
[[ -n $missing ]] && missing="missing$missing (scripts/install-deps installs slurm-wlm and munge)"
[[ -z $missing && $(id -u) != 0 ]] && missing="slurmd runs as root (it starts jobs as their users)"
if [[ -n $missing ]]; then
  echo "FAIL: no Slurm cluster: $missing" >&2
  failed=$((failed + 1))
  finish "$note"
  exit
fi

# munged with its own key and socket.
mkdir -m 700 "$scratch/munge"
mungekey --create --keyfile="$scratch/munge/munge.key" >/dev/null 2>&1
munged --foreground --force --socket="$scratch/munge/socket" --key-file="$scratch/munge/munge.key" \
  --pid-file="$scratch/munge/pid" --log-file="$scratch/munge/log" --seed-file="$scratch/munge/seed" \
  >"$scratch/munge/out" 2>&1 &
daemons+=($!)
for _ in $(seq 50); do [[ -S $scratch/munge/socket ]] && break; sleep 0.1; done

# Two free ports on loopback.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in sockets])')

# The epilog as an administrator installs it, through a wrapper that names its configuration
# (slurmd gives an Epilog no environment of its own).
mkdir "$scratch/job-spool" "$scratch/state" "$scratch/slurmd"
cat >"$scratch/fake-journalctl" <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$scratch/fake-journalctl.args"
cat "$sample/node104/kern.log"
EOF
chmod +x "$scratch/fake-journalctl"
write_conf "$scratch/epilog.conf" "spool=$scratch/job-spool" \
  "kernel_log=$scratch/fake-journalctl -k --since @{start} --until @{end} -o short-iso"
cat >"$scratch/epilog" <<EOF
#!/bin/sh
FAULTLINE_EPILOG_CONF=$scratch/epilog.conf exec $epilog
EOF
chmod +x "$scratch/epilog"

host=$(hostname -s)
export SLURM_CONF=$scratch/slurm.conf FAULTLINE_EPILOG_CONF=$scratch/epilog.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=faultline-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$scratch/munge/socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$scratch/state
SlurmdSpoolDir=$scratch/slurmd
SlurmctldPidFile=$scratch/slurmctld.pid
SlurmdPidFile=$scratch/slurmd.pid
SlurmctldLogFile=$scratch/slurmctld.log
SlurmdLogFile=$scratch/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
ReturnToService=2
Epilog=$scratch/epilog
PrologEpilogTimeout=60
EpilogMsgTime=2000
NodeName=$node NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -i -f "$SLURM_CONF" >"$scratch/slurmctld.out" 2>&1 &
daemons+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" >"$scratch/slurmd.out" 2>&1 &
daemons+=($!)
for _ in $(seq 100); do
  [[ $(sinfo -h -n "$node" -o %T 2>/dev/null) == idle ]] && break
  sleep 0.3
done
check "the node is idle in sinfo" test "$(sinfo -h -n "$node" -o %T 2>/dev/null)" = idle
if [[ $(sinfo -h -n "$node" -o %T 2>/dev/null) != idle ]]; then
  tail -n 20 "$scratch/slurmctld.log" "$scratch/slurmd.log" "$scratch/munge/out" >&2
  finish "$note"
  exit
fi

# wait_job JOBID: until the job has ended and its epilog has run (COMPLETING is over).
wait_job() {
  local state
  for _ in $(seq 120); do
    state=$(scontrol show job -o "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*')
    [[ -n $state && $state != JobState=PENDING && $state != JobState=RUNNING &&
      $state != JobState=COMPLETING && $state != JobState=CONFIGURING ]] && break
    sleep 0.5
  done
  printf '%s\n' "${state#JobState=}"
}

# Job 1: the torchrun output of the node whose GPU failed and of one that timed out in NCCL
# (the sample's real lines: an NCCL watchdog timeout, a CUDA ECC error), then exit 1. The node is
# named after the sample's (slurmd -N), so the kernel fixture's host is the node's.
failing=$(sbatch --parsable -o "$scratch/out/slurm-%j.out" -D "$scratch/out" \
  --wrap "cat $sample/node104/train.log $sample/node101/train.log; exit 1")
state=$(wait_job "$failing")
check "failing job $failing: FAILED ($state)" test "$state" = FAILED
records=$scratch/job-spool/$failing/$node.jsonl
check "failing job: the epilog spooled $records" test -s "$records"
check "failing job: no temporary file left in the spool" \
  test -z "$(find "$scratch/job-spool/$failing" -name '.*' -print -quit)"
check "failing job: the records hold the kernel's Xid, on $node" jq -se --arg node "$node" '
  any(.[]; .record == "event" and .xid == 95 and .host == $node)' "$records" >/dev/null
check "failing job: the records hold the job output's NCCL timeout and ECC error" jq -se --arg out \
  "$scratch/out/slurm-$failing.out" '
  any(.[]; .record == "event" and .path == $out and .signature == "nccl-timeout") and
  any(.[]; .record == "event" and .path == $out and (.text | test("uncorrectable ECC error")))' \
  "$records" >/dev/null
read -r since until < <(sed -n '3p;5p' "$scratch/fake-journalctl.args" | tr -d @ | paste -sd ' ')
started=$(date -d "$(scontrol show job -o "$failing" | grep -o 'StartTime=[^ ]*' | cut -d= -f2)" +%s)
check "failing job: the kernel log window runs from before the job's start to the epilog ($since..$until, start $started)" \
  test "${since:-0}" -le "$started" -a "${until:-0}" -ge "$started" -a "${until:-0}" -le "$(date +%s)"

"$faultline_job" "$failing" >"$scratch/job.txt" 2>"$scratch/job.err"
code=$?
check "faultline-job $failing: exit 1, a fault found (exit $code)" test "$code" = 1
check "faultline-job $failing: the first diagnosis is $expected_id" \
  grep -Eq "^1\. +[A-Z]+ +$expected_id " "$scratch/job.txt"
"$faultline_job" "$failing" -- --format json >"$scratch/job.json" 2>/dev/null
check "faultline-job --format json: $expected_id on $node is the initiating failure" \
  jq -e --arg id "$expected_id" --arg node "$node" '.diagnoses[0] | .id == $id and
  .role == "initiating" and .subject.host == $node' "$scratch/job.json" >/dev/null
# A finished job's comment is the accounting database's (sacctmgr), which this cluster has not:
# the verdict is said, and that it could not be posted.
"$faultline_job" --comment --beside-output "$failing" >/dev/null 2>"$scratch/comment.err"
check "faultline-job --comment: the verdict names $expected_id on $node, and that no one took it" \
  grep -q "^faultline-job: neither .* took job $failing's comment: faultline: $expected_id (critical, initiating) on $node" \
  "$scratch/comment.err"
check "faultline-job --beside-output: the report beside the job's output" \
  grep -Eq "^1\. +[A-Z]+ +$expected_id " "$scratch/out/slurm-$failing.out.faultline.txt"

# Job 2 succeeds: the epilog runs and writes nothing (run = failed); faultline-job lists the
# node that left no records among what it could not see.
succeeding=$(sbatch --parsable -o "$scratch/out/slurm-%j.out" -D "$scratch/out" --wrap "true")
state=$(wait_job "$succeeding")
check "succeeding job $succeeding: COMPLETED ($state)" test "$state" = COMPLETED
check "succeeding job: its epilog ran" \
  grep -q "job $succeeding on $node: the job succeeded (run = failed): nothing to do" "$scratch/epilog.log"
check "succeeding job: no records" test ! -e "$scratch/job-spool/$succeeding"
"$faultline_job" "$succeeding" >"$scratch/missing.txt" 2>&1
check "faultline-job on a node without records: the report says it was not read" \
  grep -q "^Not read: $scratch/job-spool/$succeeding/$node.jsonl: $node left no" "$scratch/missing.txt"

# A running job takes the comment from slurmctld.
running=$(sbatch --parsable -o /dev/null -D "$scratch/out" --wrap "sleep 60")
for _ in $(seq 60); do
  scontrol show job -o "$running" | grep -q 'JobState=RUNNING' && break
  sleep 0.5
done
"$faultline_job" --comment "$running" >/dev/null 2>&1
check "faultline-job --comment on a running job: its comment is the verdict" \
  grep -q "Comment=faultline: nothing found; 1 node(s) left no records" <(scontrol show job "$running")

if ((failed)); then
  echo "--- the epilog's log, slurmd's, faultline-job's output (last lines) ---" >&2
  tail -n 20 "$scratch/epilog.log" "$scratch/slurmd.log" "$scratch/job.err" "$scratch/missing.txt" \
    "$scratch/comment.err" >&2 2>/dev/null
fi
finish "$note"
