#!/usr/bin/env bash
# Hostile inputs: the binary never crashes, never hangs, keeps its memory bounded and diagnoses
# whatever could be read. Every input is generated here, in a temporary folder.
# Usage: bad_input_test.sh FAULTLINE_BINARY SOURCE_DIR
set -uo pipefail

faultline=$1
root=$2
samples=$root/samples
scratch=$(mktemp -d)
trap 'chmod -R u+rwx "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

valid_json() {
  jq -e '.schema == "faultline/diagnosis/v1"' "$1" >/dev/null
}
top_is() {  # top_is FILE ID
  test "$(jq -r '.diagnoses[0].id' "$1")" = "$2"
}
lines_of() {
  wc -l <"$1" | tr -d ' '
}

xid64='Mar  5 10:12:33 gpu-node-9 kernel: NVRM: Xid (PCI:0000:b7:00): 64, pid=1, name=python, Row Remapper Error: (0x3f1a2c0) - All reserved rows for bank are remapped'
good=$scratch/good.log
printf '%s\n' "$xid64" >"$good"

# --- Truncated compressed streams: a warning naming the file, the lines before the cut kept. ---
{
  printf '%s\n' "$xid64"
  seq 1 40000 | sed 's/^/[ 12.345678] filler line /'
} >"$scratch/cut.txt"
for format in gzip bzip2 xz zstd; do
  case $format in
    gzip) gzip -c "$scratch/cut.txt" >"$scratch/cut.$format" ;;
    bzip2) bzip2 -1 -c "$scratch/cut.txt" >"$scratch/cut.$format" ;;  # 100 kB blocks
    xz) xz -c "$scratch/cut.txt" >"$scratch/cut.$format" ;;
    zstd) zstd -q -c "$scratch/cut.txt" >"$scratch/cut.$format" ;;
  esac
  size=$(wc -c <"$scratch/cut.$format")
  head -c $((size * 6 / 10)) "$scratch/cut.$format" >"$scratch/cut-$format.log"
  run "truncated $format" diagnose --format json "$scratch/cut-$format.log"
  check "truncated $format: exit 1 (the Xid before the cut)" test "$code" = 1
  check "truncated $format: diagnosed" top_is "$scratch/truncated $format.out" row-remap-failure
  check "truncated $format: one warning" test "$(lines_of "$scratch/truncated $format.err")" = 1
  check "truncated $format: names the file" grep -q "cut-$format.log: truncated $format stream" \
    "$scratch/truncated $format.err"
  check "truncated $format: lines before the cut" \
    jq -e '.inputs[0].lines > 1000' "$scratch/truncated $format.out" >/dev/null
done

# --- A decompression bomb: 1 GiB of text in ~100 kB of zstd; reading stops at --max-bytes. ---
{
  printf '%s\n' "$xid64"
  yes '[ 4242.000001] bomb: filler line of a kernel log, again and again' | head -c 1G
} | zstd -q -1 -T0 -c >"$scratch/bomb.zst"
# Peak RSS (kB) of the whole run. ~12 MB measured for a RelWithDebInfo or Debug build; ASan's
# shadow memory and quarantine add ~250 MB.
ceiling_kb=65536
grep -qa __asan_init "$faultline" && ceiling_kb=524288
measure() {  # measure NAME ARGS...: like run, with the peak RSS in $rss_kb
  local name=$1
  shift
  timeout 300 /usr/bin/time -f 'maxrss_kb %M' -o "$scratch/$name.time" "$faultline" "$@" \
    >"$scratch/$name.out" 2>"$scratch/$name.err"
  code=$?
  rss_kb=$(sed -n 's/^maxrss_kb //p' "$scratch/$name.time")
  check "$name: exit code $code is 0, 1 or 2" test "$code" -le 2
  check "$name: no crash report" not_noisy "$scratch/$name.err"
  check "$name: peak RSS ${rss_kb:-?} kB under $ceiling_kb kB" test "${rss_kb:-999999999}" -lt "$ceiling_kb"
}
measure bomb diagnose --format json --max-bytes 100M "$scratch/bomb.zst" "$good"
check "bomb: exit 1 (both Xids found)" test "$code" = 1
check "bomb: one warning" test "$(lines_of "$scratch/bomb.err")" = 1
check "bomb: the warning names the file and the limit" grep -qF \
  "bomb.zst: stopped after 100 MiB of text (--max-bytes); the rest is not read" "$scratch/bomb.err"
check "bomb: read up to the limit" jq -e '.inputs[0].bytes == 104857600' "$scratch/bomb.out" >/dev/null
check "bomb: the next input still read" jq -e '.inputs | length == 2' "$scratch/bomb.out" >/dev/null
check "bomb: diagnosed" top_is "$scratch/bomb.out" row-remap-failure
run "bad --max-bytes" diagnose --max-bytes 12Q "$good"
check "bad --max-bytes: exit 2" test "$code" = 2
check "bad --max-bytes: says why" grep -q -- "--max-bytes: '12Q' is not a size" "$scratch/bad --max-bytes.err"
run "--max-bytes K" scan --max-bytes 1K "$scratch/cut.txt"
check "--max-bytes K: scan stops too" grep -q "cut.txt: stopped after 1 KiB of text" \
  "$scratch/--max-bytes K.err"
# A file exactly at the limit is read whole, without a warning.
head -c 1024 "$scratch/cut.txt" >"$scratch/exact.log"
run "exactly --max-bytes" diagnose --max-bytes 1K "$scratch/exact.log"
check "exactly --max-bytes: no warning" test ! -s "$scratch/exactly --max-bytes.err"

# --- One 300 MB line without a newline: cut at the line cap, memory bounded. ---
head -c 300000000 /dev/zero | tr '\0' 'x' >"$scratch/long.log"
measure "300 MB line" diagnose --format json "$scratch/long.log"
check "300 MB line: exit 0" test "$code" = 0
check "300 MB line: one line of 300 MB" \
  jq -e '.inputs[0].lines == 1 and .inputs[0].bytes == 300000000' "$scratch/300 MB line.out" >/dev/null
check "300 MB line: no warning" test ! -s "$scratch/300 MB line.err"
# The same from a pipe.
head -c 300000000 /dev/zero | tr '\0' 'x' |
  timeout 120 "$faultline" diagnose --format json - >"$scratch/long-stdin.out" 2>"$scratch/long-stdin.err"
check "300 MB line on stdin: exit 0" test $? = 0
check "300 MB line on stdin: one line" jq -e '.inputs[0].lines == 1' "$scratch/long-stdin.out" >/dev/null

# --- NUL bytes and binary data. ---
random_bytes 1 65536 >"$scratch/random.bin"
run binary diagnose "$scratch/random.bin" "$good"
check "binary: exit 1 (the good file)" test "$code" = 1
check "binary: one warning naming it" grep -q "random.bin: binary data" "$scratch/binary.err"
{
  seq 1 2000 | sed 's/^/[ 1.0] filler line /'  # past the sniffed head, so read as text
  printf 'Mar  5 10:12:33 gpu-node-9 kernel: NVRM: Xid (PCI:0000:b7:00): 64, pid=1, name=py\0thon, Row Remapper Error: (0x3f1a2c0) - All reserved rows for bank are remapped\n'
  printf '\0\0\0\0\n\0'
} >"$scratch/nul.log"
run "NUL bytes" diagnose --format json "$scratch/nul.log"
check "NUL bytes: valid JSON" valid_json "$scratch/NUL bytes.out"
check "NUL bytes: diagnosed" top_is "$scratch/NUL bytes.out" row-remap-failure

# --- Invalid UTF-8 inside an NVRM Xid line: the JSON stays valid UTF-8. ---
printf 'Mar  5 10:12:33 gpu-node-9 kernel: NVRM: Xid (PCI:0000:b7:00): 64, pid=1, name=\xff\xfe\xc3(py\xed\xa0\x80, Row Remapper Error: (0x3f1a2c0) - All reserved rows for bank are remapped \xf0\x9f\n' \
  >"$scratch/utf8.log"
run "invalid UTF-8" diagnose --format json "$scratch/utf8.log"
check "invalid UTF-8: exit 1" test "$code" = 1
check "invalid UTF-8: valid JSON" valid_json "$scratch/invalid UTF-8.out"
check "invalid UTF-8: strict UTF-8" iconv -f UTF-8 -t UTF-8 -o /dev/null "$scratch/invalid UTF-8.out"
check "invalid UTF-8: diagnosed" top_is "$scratch/invalid UTF-8.out" row-remap-failure
run "invalid UTF-8 scan" scan "$scratch/utf8.log"
check "invalid UTF-8: scan writes valid JSON Lines" jq -e . "$scratch/invalid UTF-8 scan.out" >/dev/null

# --- CRLF and mixed line ends: the same diagnosis as LF. ---
for ending in lf crlf mixed; do
  mkdir -p "$scratch/$ending"
  for file in "$samples"/a100-remap-pending/*; do
    case $ending in
      lf) cp "$file" "$scratch/$ending/" ;;
      crlf) sed 's/$/\r/' "$file" >"$scratch/$ending/$(basename "$file")" ;;
      mixed) sed '0~2 s/$/\r/' "$file" >"$scratch/$ending/$(basename "$file")" ;;
    esac
  done
  touch -r "$samples/a100-remap-pending/kern.log" "$scratch/$ending"/*
  run "$ending" diagnose --format json "$scratch/$ending"
  jq -S '{diagnoses: .diagnoses | map(del(.evidence[].path)), events: .events | map(del(.path))}' \
    "$scratch/$ending.out" | sed "s|$scratch/$ending/||g" >"$scratch/$ending.cmp"
done
check "LF: diagnosed" top_is "$scratch/lf.out" row-remap-pending
check "CRLF: same diagnosis as LF" cmp -s "$scratch/lf.cmp" "$scratch/crlf.cmp"
check "mixed line ends: same diagnosis as LF" cmp -s "$scratch/lf.cmp" "$scratch/mixed.cmp"

# --- An empty file. ---
: >"$scratch/empty.log"
run empty diagnose --format json "$scratch/empty.log"
check "empty: exit 0" test "$code" = 0
check "empty: no warning" test ! -s "$scratch/empty.err"
check "empty: no lines" jq -e '.inputs[0].lines == 0 and (.diagnoses | length == 0)' \
  "$scratch/empty.out" >/dev/null

# --- A folder with symlink loops. ---
mkdir -p "$scratch/loop/node1/deeper"
cp "$good" "$scratch/loop/node1/dmesg.log"
ln -s .. "$scratch/loop/node1/deeper/up"
ln -s "$scratch/loop" "$scratch/loop/node1/root"
ln -s self "$scratch/loop/self"
run "symlink loop" diagnose --format json --follow "$scratch/loop"
check "symlink loop: exit 1" test "$code" = 1
check "symlink loop: the file read once" \
  jq -e '[.inputs[] | select(.path | endswith("dmesg.log"))] | length == 1' "$scratch/symlink loop.out" >/dev/null
check "symlink loop: the self-link named" grep -q "self" "$scratch/symlink loop.err"

# --- A file without read permission (root reads it anyway: then only that nothing breaks). ---
cp "$good" "$scratch/secret.log"
chmod 000 "$scratch/secret.log"
run unreadable diagnose "$scratch/secret.log" "$good"
check "unreadable: exit 1" test "$code" = 1
if [[ $(id -u) -ne 0 ]]; then
  check "unreadable: one warning" test "$(lines_of "$scratch/unreadable.err")" = 1
  check "unreadable: names the file" grep -q "secret.log: Permission denied" "$scratch/unreadable.err"
fi

# --- A FIFO given as a path, with a writer that writes a line and closes. ---
mkfifo "$scratch/fifo"
(printf '%s\n' "$xid64" >"$scratch/fifo") &
writer=$!
run fifo diagnose --format json "$scratch/fifo"
wait "$writer"
check "fifo: exit 1" test "$code" = 1
check "fifo: diagnosed" top_is "$scratch/fifo.out" row-remap-failure
# A FIFO inside a folder is passed over, never opened (it could block forever).
mkdir -p "$scratch/withfifo"
mkfifo "$scratch/withfifo/pipe"
cp "$good" "$scratch/withfifo/dmesg.log"
run "fifo in folder" diagnose "$scratch/withfifo"
check "fifo in folder: exit 1" test "$code" = 1

# --- Standard input closed, or empty. ---
timeout 60 "$faultline" diagnose - <&- >"$scratch/closed.out" 2>"$scratch/closed.err"
code=$?
check "stdin closed: exit 2" test "$code" = 2
check "stdin closed: says no input could be read" grep -q "no input could be read" "$scratch/closed.err"
check "stdin closed: no crash report" not_noisy "$scratch/closed.err"
timeout 60 "$faultline" diagnose <&- >"$scratch/closed2.out" 2>"$scratch/closed2.err"
check "stdin closed, no path: exit 2" test $? = 2
timeout 60 "$faultline" diagnose "$good" <&- >"$scratch/closed3.out" 2>"$scratch/closed3.err"
check "stdin closed, a path: exit 1" test $? = 1
true | timeout 60 "$faultline" diagnose - >"$scratch/emptystdin.out" 2>"$scratch/emptystdin.err"
check "empty stdin: exit 0" test $? = 0
check "empty stdin: no warning" test ! -s "$scratch/emptystdin.err"

# --- Output piped into head: no error spew, whether SIGPIPE kills or is ignored. ---
for i in $(seq 1 3000); do printf '%s\n' "$xid64"; done >"$scratch/many.log"
timeout 60 "$faultline" diagnose --format json "$scratch/many.log" 2>"$scratch/pipe.err" | head -c 100 >/dev/null
check "| head -c 100: quiet" test ! -s "$scratch/pipe.err"
(
  trap '' PIPE
  timeout 60 "$faultline" diagnose --format json "$scratch/many.log" 2>"$scratch/pipe-ign.err" |
    head -c 100 >/dev/null
  timeout 60 "$faultline" scan "$scratch/many.log" 2>>"$scratch/pipe-ign.err" | head -c 100 >/dev/null
  timeout 60 "$faultline" diagnose -v "$scratch/many.log" 2>>"$scratch/pipe-ign.err" | head -c 100 >/dev/null
)
check "| head -c 100 with SIGPIPE ignored: no crash report" not_noisy "$scratch/pipe-ign.err"

# --- Signature tables that RE2 rejects, or that break the memory budget: exit 2, one line. ---
mkdir -p "$scratch/sig-rejected" "$scratch/sig-budget"
printf '{"signatures": [{"id": "lookahead", "pattern": "NVRM(?=: Xid)"}]}\n' >"$scratch/sig-rejected/bad.json"
printf '{"signatures": [{"id": "huge", "pattern": "NVRM \\\\pL{1000}"}]}\n' >"$scratch/sig-budget/huge.json"
for case in rejected budget; do
  run "table $case" diagnose --signatures "$scratch/sig-$case" "$good"
  check "table $case: exit 2" test "$code" = 2
  check "table $case: one line" test "$(lines_of "$scratch/table $case.err")" = 1
done
check "table rejected: names the file" grep -q "sig-rejected/bad.json: signature lookahead: pattern does not compile" \
  "$scratch/table rejected.err"
check "table budget: names the file" grep -q "sig-budget/huge.json: signature huge: pattern does not compile: pattern too large" \
  "$scratch/table budget.err"

# Found by fuzzing: a number beyond a double in a table ended in std::terminate.
mkdir -p "$scratch/sig-number"
printf '{"signatures": [], "sources": 45e9444444}\n' >"$scratch/sig-number/big.json"
run "table number" diagnose --signatures "$scratch/sig-number" "$good"
check "table number: exit 2" test "$code" = 2
check "table number: one line naming the file" grep -q "sig-number/big.json: not valid JSON" \
  "$scratch/table number.err"
# Found by fuzzing: a newline in a table's id or in a pattern's group name still gives one line.
mkdir -p "$scratch/sig-newline"
printf '{"signatures": [{"id": "two\\nlines", "pattern": "NVRM (?P<gpu_inst\\nce>x)"}]}\n' \
  >"$scratch/sig-newline/bad.json"
run "table newline" diagnose --signatures "$scratch/sig-newline" "$good"
check "table newline: exit 2" test "$code" = 2
check "table newline: one line" test "$(lines_of "$scratch/table newline.err")" = 1
check "table newline: escaped" grep -qF 'signature two\nlines: pattern does not compile' \
  "$scratch/table newline.err"
# The same for an input whose name holds a newline.
cp "$scratch/random.bin" "$scratch/"$'two\nlines.bin'
run "path newline" diagnose "$scratch/"$'two\nlines.bin' "$good"
check "path newline: one warning line" test "$(lines_of "$scratch/path newline.err")" = 1
check "path newline: escaped" grep -qF 'two\nlines.bin: binary data' "$scratch/path newline.err"

# --- Absurd numbers in dumps and logs: no crash, valid JSON. ---
cat >"$scratch/absurd-q.txt" <<'EOF'
==============NVSMI LOG==============

Timestamp                                 : Thu Jan  1 00:00:00 1970
Driver Version                            : 535.129.03
CUDA Version                              : 12.2

Attached GPUs                             : 99999999999999999999
GPU 00000000:3B:00.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    Serial Number                         : 99999999999999999999
    GPU UUID                              : GPU-00000000-0000-0000-0000-000000000000
    Minor Number                          : -1
    ECC Errors
        Volatile
            SRAM Correctable              : -5
            SRAM Uncorrectable            : 18446744073709551616
            DRAM Correctable              : 99999999999999999999
            DRAM Uncorrectable            : -99999999999999999999
        Aggregate
            SRAM Correctable              : 1e308
            DRAM Uncorrectable            : 0x7fffffff
    Retired Pages
        Single Bit ECC                    : -1
        Double Bit ECC                    : 99999999999999999999
        Pending Page Blacklist            : Maybe
    Remapped Rows
        Correctable Error                 : -3
        Uncorrectable Error               : 99999999999999999999
        Pending                           : Yes
        Remapping Failure Occurred        : No
        Bank Remap Availability Histogram
            Max                           : -2560 bank(s)
            High                          : 99999999999999999999 bank(s)
            Partial                       : 0 bank(s)
            Low                           : 0 bank(s)
            None                          : 0 bank(s)

Timestamp                                 : Fri Dec 31 23:59:59 2100
GPU 00000000:3B:00.0
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 18446744073709551615
        Pending                           : No
        Remapping Failure Occurred        : No
EOF
cat >"$scratch/absurd.csv" <<'EOF'
timestamp, pci.bus_id, remapped_rows.correctable, remapped_rows.uncorrectable, remapped_rows.pending, remapped_rows.failure
1970/01/01 00:00:00.000, 00000000:3B:00.0, -1, 99999999999999999999, Yes, No
2100/12/31 23:59:59.999, 00000000:3B:00.0, 18446744073709551616, -99999999999999999999, No, Yes
9999/99/99 99:99:99.999, 0000:zz:00.0, 1e999, nan, inf, -0
EOF
cat >"$scratch/absurd-kern.log" <<'EOF'
[99999999999999999999.999999] NVRM: Xid (PCI:0000:3b:00): 99999999999999999999, pid=-1, name=python, Ch 00000000
[-5.000000] NVRM: Xid (PCI:0000:3b:00): -48, pid=99999999999999999999, name=python, Ch 00000000
[Thu Jan  1 00:00:00 1970] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0xffffffffffffffffffff.
[Fri Dec 31 23:59:59 2100] NVRM: Xid (PCI:ffffffff:ff:ff): 63, pid=1, name=python, Ch 00000000, Row remapper: New row marked for remapping, reset gpu to activate.
2100-12-31T23:59:59.999999999+99:99 gpu-node-1 kernel: NVRM: Xid (PCI:0000:3b:00): 64, pid=1, name=python, Row Remapper Error: (0x3f1a2c0) - All reserved rows for bank are remapped
9999-99-99T99:99:99Z gpu-node-1 kernel: NVRM: Xid (PCI:0000:3b:00): 94, pid=1, name=python, Ch 00000000
0000-01-01T00:00:00Z gpu-node-1 kernel: NVRM: Xid (PCI:0000:3b:00): 95, pid=1, name=python, Ch 00000000
Dec 31 23:59:59 gpu-node-1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.
EOF
for input in absurd-q.txt absurd.csv absurd-kern.log; do
  run "$input" diagnose --format json "$scratch/$input"
  check "$input: valid JSON" valid_json "$scratch/$input.out"
  check "$input: no warning" test ! -s "$scratch/$input.err"
  # Times are ISO 8601 or boot-relative, whatever the input claimed.
  check "$input: sane times" jq -e '[.. | objects | (.time?, .first_seen?, .last_seen?) | strings |
      test("^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+([+-][0-9]{2}:[0-9]{2})?|[+][0-9.]+s)$")] | all' \
    "$scratch/$input.out" >/dev/null
  # Counts are the digits a dump printed, or nothing; never negative, never rewritten.
  check "$input: no negative counts" jq -e '[.. | objects | .occurrences? | numbers | . >= 1] | all' \
    "$scratch/$input.out" >/dev/null
done
run "absurd together" diagnose --format json "$scratch/absurd-q.txt" "$scratch/absurd.csv" \
  "$scratch/absurd-kern.log"
check "absurd together: valid JSON" valid_json "$scratch/absurd together.out"

# --- Hostile archives: a warning naming archive and member, bounded memory, and the diagnosis
# of what could be read. The archives are made with Python's tarfile and zipfile. ---
python3 - "$scratch" "$xid64" <<'PY'
import io, os, sys, tarfile, zipfile
scratch, xid = sys.argv[1], sys.argv[2].encode() + b"\n"
filler = b"".join(b"[ 12.345678] filler line %d\n" % i for i in range(40000))

def add(tar, name, data=b"", **fields):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in fields.items():
        setattr(info, key, value)
    tar.addfile(info, io.BytesIO(data))

# Names that climb out or are absolute, a symlink, a hard link, a device: none opened.
with tarfile.open(os.path.join(scratch, "evil.tar"), "w", format=tarfile.GNU_FORMAT) as tar:
    add(tar, "../../etc/passwd", xid)
    add(tar, "/etc/shadow", xid)
    add(tar, "link.log", type=tarfile.SYMTYPE, linkname="/etc/passwd")
    add(tar, "good.log", xid)
    add(tar, "hard.log", type=tarfile.LNKTYPE, linkname="good.log")
    add(tar, "null", type=tarfile.CHRTYPE, devmajor=1, devminor=3)
# 100,000 empty members: reading stops at the member cap.
with tarfile.open(os.path.join(scratch, "many.tar.gz"), "w:gz") as tar:
    add(tar, "first.log", xid)
    for i in range(100000):
        add(tar, "empty/%06d.log" % i)
# The Xid, then two members; cut inside the second.
with tarfile.open(os.path.join(scratch, "whole.tar.gz"), "w:gz") as tar:
    add(tar, "node1/kern.log", xid + filler)
    add(tar, "node2/kern.log", filler + filler)
# A zip whose central directory is lost: every member is still read.
with zipfile.ZipFile(os.path.join(scratch, "whole.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("a/kern.log", filler)
    z.writestr("b/kern.log", xid)
data = open(os.path.join(scratch, "whole.zip"), "rb").read()
open(os.path.join(scratch, "nocd.zip"), "wb").write(data[: data.index(b"PK\x01\x02")])
# A stored member whose data no longer matches its CRC, then a good one.
with zipfile.ZipFile(os.path.join(scratch, "crc.zip"), "w", zipfile.ZIP_STORED) as z:
    z.writestr("a/kern.log", b"first line\n" * 10)
    z.writestr("b/kern.log", xid)
data = bytearray(open(os.path.join(scratch, "crc.zip"), "rb").read())
data[data.index(b"first line")] = ord("F")
open(os.path.join(scratch, "crc.zip"), "wb").write(bytes(data))
# A member over --max-bytes, then another.
with tarfile.open(os.path.join(scratch, "big.tar"), "w") as tar:
    add(tar, "big.log", xid + filler)
    add(tar, "after.log", xid)
PY
# A zip bomb: 1 GiB of text as a zstd member (~100 kB) of a zip.
yes '[ 4242.000001] bomb: filler line of a kernel log, again and again' | head -c 1G |
  zstd -q -1 -T0 -c >"$scratch/bomb.log.zst"
(cd "$scratch" && python3 -c 'import zipfile; zipfile.ZipFile("bomb.zip", "w").write("bomb.log.zst")')
size=$(wc -c <"$scratch/whole.tar.gz")
head -c $((size * 6 / 10)) "$scratch/whole.tar.gz" >"$scratch/cut.tar.gz"
{ head -c 1024 "$scratch/big.tar"; random_bytes 2 100000; } >"$scratch/junk.tar"
{ printf 'PK\003\004'; random_bytes 3 100000; } >"$scratch/junk.zip"
{ printf '7z\274\257\047\034'; random_bytes 4 1000; } >"$scratch/junk.7z"

measure "evil.tar" diagnose --format json "$scratch/evil.tar"
check "evil.tar: the good member diagnosed" top_is "$scratch/evil.tar.out" row-remap-failure
check "evil.tar: only the good member read" jq -e --arg a "$scratch/evil.tar" \
  '[.inputs[].path] == [$a + "!good.log"]' "$scratch/evil.tar.out" >/dev/null
for warning in "evil.tar!../../etc/passwd: a member path that is absolute or holds '..', not read" \
  "evil.tar!/etc/shadow: a member path that is absolute or holds '..', not read" \
  "evil.tar!link.log: a symbolic link, not followed" "evil.tar!hard.log: a hard link, not followed" \
  "evil.tar!null: not a regular file, not read"; do
  check "evil.tar: warns '$warning'" grep -qF "$warning" "$scratch/evil.tar.err"
done
measure "many members" diagnose --format json "$scratch/many.tar.gz"
check "many members: diagnosed" top_is "$scratch/many members.out" row-remap-failure
check "many members: one warning at the cap" grep -qF \
  "many.tar.gz!empty/009999.log: not read, nor the members after it: the archive has more than 10000 members" \
  "$scratch/many members.err"
measure "cut.tar.gz" diagnose --format json "$scratch/cut.tar.gz"
check "cut.tar.gz: diagnosed" top_is "$scratch/cut.tar.gz.out" row-remap-failure
check "cut.tar.gz: one warning" test "$(lines_of "$scratch/cut.tar.gz.err")" = 1
check "cut.tar.gz: the warning names the member cut" \
  grep -qF "cut.tar.gz!node2/kern.log: truncated gzip stream" "$scratch/cut.tar.gz.err"
check "cut.tar.gz: the lines before the cut" jq -e '.inputs | length == 2 and .[1].lines > 1000' \
  "$scratch/cut.tar.gz.out" >/dev/null
run "nocd.zip" diagnose --format json "$scratch/nocd.zip"
check "nocd.zip: every member read" jq -e '.inputs | length == 2' "$scratch/nocd.zip.out" >/dev/null
check "nocd.zip: diagnosed" top_is "$scratch/nocd.zip.out" row-remap-failure
check "nocd.zip: says where it ends" grep -qF "nocd.zip: the archive ends early; anything after b/kern.log is lost" \
  "$scratch/nocd.zip.err"
run "bad CRC" diagnose --format json "$scratch/crc.zip"
check "bad CRC: one warning naming the member" grep -qF "crc.zip!a/kern.log: ZIP bad CRC" \
  "$scratch/bad CRC.err"
check "bad CRC: its lines and the next member read" \
  jq -e '[.inputs[].lines] == [10, 1]' "$scratch/bad CRC.out" >/dev/null
check "bad CRC: diagnosed" top_is "$scratch/bad CRC.out" row-remap-failure
run "member over --max-bytes" diagnose --format json --max-bytes 1K "$scratch/big.tar"
check "member over --max-bytes: the member stops" grep -qF \
  "big.tar!big.log: stopped after 1 KiB of text (--max-bytes); the rest is not read" \
  "$scratch/member over --max-bytes.err"
check "member over --max-bytes: the archive's total stops" grep -qF \
  "big.tar!after.log: not read, nor the members after it: the archive's members reached 1 KiB of text (--max-bytes)" \
  "$scratch/member over --max-bytes.err"
check "member over --max-bytes: diagnosed" top_is "$scratch/member over --max-bytes.out" \
  row-remap-failure
measure "zip bomb" diagnose --format json "$scratch/bomb.zip" "$good"
check "zip bomb: the ratio cap" grep -qF \
  "bomb.zip!bomb.log.zst: the archive grew past 1000 times its own size (a decompression bomb?); reading it stopped after" \
  "$scratch/zip bomb.err"
check "zip bomb: the next input still read" top_is "$scratch/zip bomb.out" row-remap-failure
run "7z" diagnose --format json "$scratch/junk.7z" "$good"
check "7z: refused with a warning" grep -qF \
  "junk.7z: a 7z archive, not read (faultline reads tar and zip archives; extract it first)" "$scratch/7z.err"
check "7z: the next input still read" top_is "$scratch/7z.out" row-remap-failure
for junk in junk.tar junk.zip; do
  run "$junk" diagnose --format json "$scratch/$junk" "$good"
  check "$junk: a warning naming it" grep -qF "$junk" "$scratch/$junk.err"
  check "$junk: the next input still read" top_is "$scratch/$junk.out" row-remap-failure
done

finish
