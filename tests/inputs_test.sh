#!/usr/bin/env bash
# What an input hands over, and no more: folder walks that never leave a folder argument unless
# --follow says so, never block on a device, FIFO or /proc file and cost the same at any depth;
# binary regions inside a text file skipped with one warning, the text around them read.
# Usage: inputs_test.sh FAULTLINE_BINARY SOURCE_DIR
set -uo pipefail

faultline=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

run_timeout=60  # for run (lib.sh)

top_is() {  # top_is FILE ID
  test "$(jq -r '.diagnoses[0].id' "$1")" = "$2"
}
lines_of() {
  wc -l <"$1" | tr -d ' '
}
read_paths() {  # read_paths FILE: the inputs a JSON report read
  jq -r '.inputs[].path' "$1"
}

xid79='Mar  5 10:12:33 gpu-node-9 kernel: NVRM: Xid (PCI:0000:b7:00): 79, pid=0, name=python, GPU has fallen off the bus.'
before='Mar  5 10:12:30 gpu-node-9 kernel: pcieport 0000:b0:02.0: AER: Uncorrected (Fatal) error received: 0000:b0:02.0'
filler() {  # filler N: N ordinary syslog lines
  seq 1 "$1" | sed 's/^/Mar  5 10:11:00 gpu-node-9 systemd[1]: Started session /'
}

# --- A syslog with a run of NUL bytes (a hard reset) before the Xid 79. ---
{
  filler 50
  printf '%s\n' "$before"
  head -c 8192 /dev/zero
  printf '%s\n' "$xid79"
  filler 5
} >"$scratch/syslog"
offset=$(($(filler 50 | wc -c) + ${#before} + 1))
run "NUL run" diagnose --format json "$scratch/syslog"
check "NUL run: exit 1" test "$code" = 1
check "NUL run: the Xid 79 diagnosed" top_is "$scratch/NUL run.out" gpu-off-bus
check "NUL run: one warning" test "$(lines_of "$scratch/NUL run.err")" = 1
check "NUL run: the warning names the size and the byte offset" \
  grep -qF "syslog: 8 KiB of binary data skipped at byte $offset" "$scratch/NUL run.err"
check "NUL run: every line around it read" jq -e '.inputs[0].lines == 57' "$scratch/NUL run.out" >/dev/null
check "NUL run: the host of the Xid line kept" \
  jq -e '[.events[] | select(.host == "gpu-node-9")] | length > 0' "$scratch/NUL run.out" >/dev/null
# The same from a pipe and compressed: the offset counts decompressed text.
gzip -c "$scratch/syslog" >"$scratch/syslog.gz"
run "NUL run gzip" diagnose --format json "$scratch/syslog.gz"
check "NUL run gzip: diagnosed" top_is "$scratch/NUL run gzip.out" gpu-off-bus
check "NUL run gzip: same offset" grep -qF "skipped at byte $offset" "$scratch/NUL run gzip.err"
timeout 60 "$faultline" diagnose --format json - <"$scratch/syslog" >"$scratch/stdin.out" 2>"$scratch/stdin.err"
check "NUL run on stdin: diagnosed" top_is "$scratch/stdin.out" gpu-off-bus

# --- The same Xid after 5 KB of random bytes: at the start and in the middle. ---
for seed in 1 2 3 4 5; do
  random_bytes "$seed" 5000 >"$scratch/junk-first-$seed.log"
  printf '%s\n' "$xid79" >>"$scratch/junk-first-$seed.log"
  run "junk first $seed" diagnose --format json "$scratch/junk-first-$seed.log"
  check "junk first $seed: exit 1" test "$code" = 1
  check "junk first $seed: diagnosed" top_is "$scratch/junk first $seed.out" gpu-off-bus
  check "junk first $seed: one warning at byte 0" \
    grep -qE "junk-first-$seed.log: [0-9.]+ (KiB|bytes) of binary data skipped at byte 0$" \
    "$scratch/junk first $seed.err"
  check "junk first $seed: nothing else" test "$(lines_of "$scratch/junk first $seed.err")" = 1
done
{
  filler 100
  random_bytes 6 5000
  printf '\n%s\n' "$xid79"
} >"$scratch/junk-middle.log"
run "junk middle" diagnose --format json "$scratch/junk-middle.log"
check "junk middle: diagnosed" top_is "$scratch/junk middle.out" gpu-off-bus
check "junk middle: the filler read" jq -e '.inputs[0].lines >= 101' "$scratch/junk middle.out" >/dev/null
check "junk middle: one warning" test "$(lines_of "$scratch/junk middle.err")" = 1

# --- Text with stray bytes, colours, tabs and UTF-8 stays text: no warning. ---
{
  for i in $(seq 1 300); do
    printf '\x1b[32mok\x1b[0m\tstep %d — température ✓ loss=1.5\r\n' "$i"
    printf 'Mar  5 10:11:%02d gpu-node-9 kernel: stray \xff\xfe byte and a \x01 control in text\n' $((i % 60))
  done
  printf '%s\n' "$xid79"
} >"$scratch/text.log"
run text diagnose --format json "$scratch/text.log"
check "text: diagnosed" top_is "$scratch/text.out" gpu-off-bus
check "text: no warning" test ! -s "$scratch/text.err"
check "text: every line" jq -e '.inputs[0].lines == 601' "$scratch/text.out" >/dev/null

# --- Binary throughout: refused quickly with one line, the other inputs read. ---
printf '%s\n' "$xid79" >"$scratch/good.log"
random_bytes 7 1000000 >"$scratch/random.bin"
head -c 100000000 /dev/zero >"$scratch/zeros.bin"
cp "$faultline" "$scratch/program"
start=$(date +%s)
run binary diagnose --format json "$scratch/random.bin" "$scratch/zeros.bin" "$scratch/program" "$scratch/good.log"
check "binary: exit 1 (the good file)" test "$code" = 1
check "binary: the good file diagnosed" top_is "$scratch/binary.out" gpu-off-bus
check "binary: one line each" test "$(lines_of "$scratch/binary.err")" = 3
for name in random.bin zeros.bin program; do
  check "binary: $name refused" grep -qF "$name: binary data, not a text log" "$scratch/binary.err"
done
check "binary: quickly" test $(($(date +%s) - start)) -le 10

# --- A folder: links out of it, /proc/kmsg, a FIFO, a socket-like device. ---
mkdir -p "$scratch/outside" "$scratch/logs/node1"
printf '%s\n' "$xid79" >"$scratch/outside/secret.log"
printf '%s\n' "$before" >"$scratch/logs/node1/kern.log"
ln -s /etc "$scratch/logs/etc"
ln -s "$scratch/outside" "$scratch/logs/outside"
ln -s "$scratch/outside/secret.log" "$scratch/logs/node1/secret.log"
ln -s /proc/kmsg "$scratch/logs/kmsg"
ln -s /proc "$scratch/logs/proc"
mkfifo "$scratch/logs/node1/pipe"
run folder diagnose --format json "$scratch/logs"
check "folder: exit 1 (the AER line inside)" test "$code" = 1
check "folder: only the file inside read" \
  test "$(read_paths "$scratch/folder.out")" = "$scratch/logs/node1/kern.log"
check "folder: links counted in one warning" \
  grep -qxF "faultline: warning: $scratch/logs: 5 symbolic links not followed (--follow reads them)" \
  "$scratch/folder.err"
check "folder: the FIFO named in one warning" \
  grep -qxF "faultline: warning: $scratch/logs: 1 device, socket or FIFO not read ($scratch/logs/node1/pipe)" \
  "$scratch/folder.err"
check "folder: two warnings" test "$(lines_of "$scratch/folder.err")" = 2
rm "$scratch/logs/etc"  # with --follow, a small folder outside stands for it
run follow diagnose --format json --follow "$scratch/logs"
check "follow: exit 1 (the Xid outside)" test "$code" = 1
check "follow: the file outside read once" \
  test "$(read_paths "$scratch/follow.out" | grep -c secret.log)" = 1
check "follow: nothing of /proc read" bash -c '! grep -q "kmsg\|/proc/" "$1"' _ <(read_paths "$scratch/follow.out")
check "follow: /proc/kmsg named" grep -qF "logs/kmsg: not read (the kernel's" "$scratch/follow.err"
check "follow: /proc named" grep -qF "logs/proc: not read (the kernel's" "$scratch/follow.err"
run "follow -L scan" scan -L "$scratch/logs"
check "follow -L scan: the Xid outside" grep -q '"xid":79\|"xid": 79' "$scratch/follow -L scan.out"
# Named on the command line, a FIFO is read (the user asked).
(printf '%s\n' "$xid79" >"$scratch/logs/node1/pipe") &
writer=$!
run "FIFO named" diagnose --format json "$scratch/logs/node1/pipe"
wait "$writer"
check "FIFO named: diagnosed" top_is "$scratch/FIFO named.out" gpu-off-bus

# --- Loops with --follow end; each folder and file once. ---
mkdir -p "$scratch/loop/a/b"
printf '%s\n' "$xid79" >"$scratch/loop/a/b/dmesg.log"
ln -s .. "$scratch/loop/a/b/up"
ln -s "$scratch/loop" "$scratch/loop/a/root"
ln -s b "$scratch/loop/a/same"
ln -s self "$scratch/loop/self"
run loop diagnose --format json --follow "$scratch/loop"
check "loop: exit 1" test "$code" = 1
check "loop: the file read once" test "$(read_paths "$scratch/loop.out" | wc -l)" = 1
check "loop: the self-link named" grep -q "loop/self: Too many levels of symbolic links" "$scratch/loop.err"

# --- 1,500 folders deep, a log at the bottom: linear in the entries. ---
deep=$scratch/deep
path=$deep
for _ in $(seq 1 1500); do path=$path/d; done
mkdir -p "$path"
printf '%s\n' "$xid79" >"$path/kern.log"
start=$(date +%s)
run deep diagnose --format json "$deep"
check "deep: diagnosed" top_is "$scratch/deep.out" gpu-off-bus
check "deep: under 20 s" test $(($(date +%s) - start)) -lt 20
check "deep: no warning" test ! -s "$scratch/deep.err"

finish
