#!/usr/bin/env bash
# --redact holds: a job folder whose lines carry every form of host, address and user name that
# --redact masks is diagnosed in every format (and --verbose, and from its records), and none of
# the original names appears anywhere in stdout or stderr, while without --redact they all do.
# Usage: redact_test.sh FAULTLINE_BINARY SOURCE_DIR
set -uo pipefail

faultline=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

# The job's folder is named after its host and lies in a home folder, so every path carries both.
job=$scratch/home/alice/node-a17
mkdir -p "$job"
# Syslog from the host, in two spellings, and from an EC2 host named by its address.
cat >"$job/kern.log" <<'EOF'
Mar  5 10:12:30 node-a17 kernel: [ 1234.500000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03
Mar  5 10:12:33 node-a17 kernel: [ 1234.567890] NVRM: Xid (PCI:0000:b7:00): 79, pid=4321, name=python3, GPU has fallen off the bus.
Mar  5 10:12:40 ip-10-20-30-40 kernel: [ 1240.000000] NVRM: Xid (PCI:0000:3b:00): 13, pid=999, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address
Mar  5 10:12:41 NODE-A17 amazon-ssm-agent[1422]: 2024-03-05 10:12:41 ERROR [MessageGatewayService] Failed to connect to ssmmessages for instance i-0abc1234def567890
EOF
# The job's log: NCCL prefixes, c10d and Slurm lines naming other hosts, Python errors with home
# folders, torchrun's failure summary.
cat >"$job/train.log" <<'EOF'
node-a17:4321:4321 [0] NCCL INFO Bootstrap : Using eth0:10.20.30.40<0>
node-a17:4321:4399 [0] NCCL WARN NET/IB : Got completion from peer 10.20.30.41<52716> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.20.30.40 remoteGid ::ffff:10.20.30.41
[W socket.cpp:601] [c10d] The client socket has failed to connect to [node-b22]:29500 (errno: 110 - Connection timed out).
[W socket.cpp:601] [c10d] The client socket has failed to connect to [ip-10-20-30-43.us-west-2.compute.internal]:29500 (errno: 110 - Connection timed out).
srun: error: node-b22: task 3: Out Of Memory
srun: error: ip-10-20-30-42: task 5: Out Of Memory
slurmstepd: error: *** JOB 81234 ON NODE-A17 CANCELLED AT 2024-03-05T10:13:00 ***
FileNotFoundError: [Errno 2] No such file or directory: '/home/alice/data/shard-0001.bin'
FileNotFoundError: [Errno 2] No such file or directory: '/Users/alice/data/shard-0002.bin'
PermissionError: [Errno 13] Permission denied: 'C:\\Users\\bob\\ckpt\\last.pt'
NotADirectoryError: [Errno 20] Not a directory: '~alice/ckpt/node-a17_backup.pt'
RuntimeError: CUDA error: an illegal memory access was encountered
Root Cause (first observed failure):
[0]:
  time      : 2024-03-05_10:12:50
  host      : node-c33.cluster.local
  rank      : 3 (local_rank: 3)
  exitcode  : 1 (pid: 4321)
Root Cause (first observed failure):
[0]:
  time      : 2024-03-05_10:12:51
  host      : ip-10-20-30-44.ec2.internal
  rank      : 0 (local_rank: 0)
  exitcode  : 1 (pid: 4400)
ERROR: rank 3 on node-c33 exited; see node-a17.cluster.local:/var/log/job.err
EOF
# A cut gzip stream: its warning on stderr names the file, whose name holds the host.
head -c 60 <(seq 1 5000 | gzip -c) >"$job/node-a17_backup.log.gz"

# Every original name, searched for without case; "10.20.30.4" and "10-20-30-4" cover each address.
secrets=(node-a17 node-b22 node-c33 alice bob 10.20.30.4 10-20-30-4 i-0abc1234def567890 gpu-box-9)

# outputs NAME ARGS...: stdout and stderr of `faultline diagnose ARGS` in $scratch/NAME.{out,err}.
outputs() {
  local name=$1
  shift
  timeout "${run_timeout:-120}" "$faultline" diagnose --fail-on never "$@" >"$scratch/$name.out" \
    2>"$scratch/$name.err"
  check "$name: exit 0" test $? = 0
}
leaks() {  # leaks FILE...: the secrets found in FILEs, one a line
  for secret in "${secrets[@]}"; do
    grep -qiF -- "$secret" "$@" && echo "$secret"
  done
}

# --- Without --redact every form is there, so that the test below could fail. ---
outputs plain --format json --verbose "$job"
check "plain: diagnosed" test "$(jq -r '.diagnoses[0].id' "$scratch/plain.out")" = gpu-off-bus
check "plain: the warning names the cut file" grep -qF "node-a17_backup.log.gz" "$scratch/plain.err"
for form in "~alice/" "/home/alice/" "/Users/alice/" 'C:\\\\Users\\\\bob' i-0abc1234def567890 \
  "ip-10-20-30-40 kernel" ip-10-20-30-42: ip-10-20-30-44.ec2.internal \
  ip-10-20-30-43.us-west-2.compute.internal 10.20.30.41 NODE-A17 node-a17_backup \
  node-a17.cluster.local node-b22 node-c33; do
  check "plain: $form is in the report" grep -qF -- "$form" "$scratch/plain.out"
done

# --- With --redact, none of them anywhere, in any format. ---
scan_records() {
  "$faultline" scan "$job" 2>/dev/null
}
scan_records >"$scratch/records.jsonl"
for format in text json jsonl markdown github html; do
  outputs "$format" --redact --format "$format" "$job"
  found=$(leaks "$scratch/$format.out" "$scratch/$format.err")
  check "--redact $format: nothing leaks (leaked: ${found//$'\n'/ })" test -z "$found"
  check "--redact $format: the host's mask" grep -qF "host-1" "$scratch/$format.out"
  check "--redact $format: the warning is kept, masked" \
    grep -qF "/home/user-1/host-1/host-1_backup.log.gz" "$scratch/$format.err"
done
outputs verbose --redact --verbose "$job"
outputs events --redact --format json --events "$scratch/records.jsonl"
outputs hostname --redact --format json --hostname gpu-box-9 - <"$job/kern.log"
for name in verbose events hostname; do
  found=$(leaks "$scratch/$name.out" "$scratch/$name.err")
  check "--redact $name: nothing leaks (leaked: ${found//$'\n'/ })" test -z "$found"
done

# --- What is kept: the diagnosis, the GPU, consistent masks. ---
json=$scratch/json.out
check "--redact: still diagnosed" test "$(jq -r '.diagnoses[0].id' "$json")" = gpu-off-bus
check "--redact: the events diagnosed from records too" \
  test "$(jq -r '.diagnoses[0].id' "$scratch/events.out")" = gpu-off-bus
check "--redact: the GPU kept" grep -qF "0000:b7:00.0" "$json"
check "--redact: another case, the same mask" grep -qF "ON host-1 CANCELLED" "$json"
check "--redact: inside a compound token" grep -qF "~user-1/ckpt/host-1_backup.pt" "$json"
check "--redact: a name under a private domain" grep -qE "see host-[0-9]+:/var/log" "$json"
check "--redact: a host named only in a line, in its short form too" \
  jq -e '[.. | strings | select(test("host      : host-[0-9]+$"))] | length > 0' "$json" >/dev/null
check "--redact: an EC2 name is its address" grep -qE "\[ip-[0-9]+\.us-west-2\.compute\.internal\]:29500" "$json"
check "--redact: the EC2 host's field" jq -e 'any(.diagnoses[]; .subject.host == "ip-1")' "$json" >/dev/null
check "--redact: a Windows home" grep -qF 'C:\\\\Users\\\\user-' "$json"
check "--redact: --hostname masked" jq -e '.inputs[0].host == "host-1"' \
  "$scratch/hostname.out" >/dev/null

# --- A fleet's worth of host names costs one pass: 20,000 hosts, each named in a line. ---
for i in $(seq 1 20000); do
  printf 'Mar  5 10:12:33 fleet-node-%05d kernel: [ 1234.567890] NVRM: Xid (PCI:0000:b7:00): 79, pid=1, name=python3, GPU has fallen off the bus.\n' "$i"
done >"$scratch/fleet.log"
# Its speed is bench/'s to measure; the time limit here only stops a quadratic pass (hours).
run_timeout=600 outputs fleet --redact --format json "$scratch/fleet.log"
check "fleet: no host left" test "$(grep -c 'fleet-node' "$scratch/fleet.out")" = 0

finish
