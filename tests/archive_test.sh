#!/usr/bin/env bash
# Archives read like the folder they hold: the same JSON (apart from input paths) for a
# multi-node sample folder and its .tar.gz, .tar.zst and .zip, built here from the folder; an
# archive inside another; `scan` and `diagnose --events` on archives.
# Usage: archive_test.sh FAULTLINE_BINARY SOURCE_DIR
set -uo pipefail

faultline=$1
root=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

# A copy, so that every file and member has the same modification time (syslog dates take
# their year from it).
cp -r "$root/samples/job64-xid95" "$scratch/job"
# The ways archives are made: with the folder as top folder (named like the archive, as an
# sosreport's .tar.xz is), with "./" names, and GitHub's artifact zip (the files at its root);
# a zip64 one too, whose members carry zip's "no date" (the archive file's time serves).
tar -C "$scratch" --sort=name -czf "$scratch/job.tar.gz" job
tar -C "$scratch" --sort=name -cJf "$scratch/job.tar.xz" job
tar -C "$scratch/job" --sort=name --zstd -cf "$scratch/job-dot.tar.zst" .
python3 - "$scratch/job" "$scratch" <<'EOF'
import os, sys, zipfile
folder, out = sys.argv[1], sys.argv[2]
for name, zip64 in (("job.zip", False), ("job64.zip", True)):
    with zipfile.ZipFile(os.path.join(out, name), "w", zipfile.ZIP_DEFLATED) as archive:
        for dirpath, dirnames, filenames in sorted(os.walk(folder)):
            dirnames.sort()
            for file in sorted(filenames):
                path = os.path.join(dirpath, file)
                info = os.path.relpath(path, folder)
                if not zip64:
                    info = zipfile.ZipInfo.from_file(path, info)
                    info.compress_type = zipfile.ZIP_DEFLATED
                with open(path, "rb") as data, archive.open(info, "w", force_zip64=zip64) as member:
                    member.write(data.read())
EOF

# diagnose NAME ARGS...: the JSON report in $scratch/NAME.json, with input paths cut to the part
# below the folder or archive, and stderr in $scratch/NAME.err.
diagnose() {
  local name=$1
  shift
  "$faultline" diagnose --format json --fail-on never "$@" 2>"$scratch/$name.err" |
    sed -e "s|$scratch/job.tar.[gx]z!job/||g" -e "s|$scratch/job-dot.tar.zst!||g" \
      -e "s|$scratch/job\(64\)\{0,1\}.zip!||g" -e "s|$scratch/job/||g" >"$scratch/$name.json"
}
diagnose folder "$scratch/job"
check "folder: diagnosed" jq -e '.diagnoses[0].id == "ecc-uncontained" and
  .diagnoses[0].subject.host == "gpu-node-104"' "$scratch/folder.json" >/dev/null
for archive in job.tar.gz job.tar.xz job-dot.tar.zst job.zip job64.zip; do
  diagnose "$archive" "$scratch/$archive"
  check "$archive: the folder's JSON" cmp -s "$scratch/folder.json" "$scratch/$archive.json"
  check "$archive: no warnings" test ! -s "$scratch/$archive.err"
  diagnose "$archive jobs 4" --jobs 4 "$scratch/$archive" "$scratch/job"
  diagnose "$archive jobs 1" --jobs 1 "$scratch/$archive" "$scratch/job"
  check "$archive: --jobs 1 and 4 the same" cmp -s "$scratch/$archive jobs 1.json" \
    "$scratch/$archive jobs 4.json"
done
check "members named ARCHIVE!member" jq -e --arg a "$scratch/job.zip" \
  '.inputs | map(.path) | index($a + "!node104/kern.log") != null' \
  <("$faultline" diagnose --format json --fail-on never "$scratch/job.zip") >/dev/null
# A node's folder names its host: node107's kern.log.gz is read inside the zip, too.
check "the gzip member inside the zip" jq -e --arg a "$scratch/job.zip" \
  '.inputs[] | select(.path == $a + "!node107/kern.log.gz") | .compression == "gzip" and .lines > 0' \
  <("$faultline" diagnose --format json --fail-on never "$scratch/job.zip") >/dev/null

# --- An archive inside another: a node's .tar.gz inside the artifacts' .zip. ---
mkdir -p "$scratch/nested"
tar -C "$scratch/job" -czf "$scratch/nested/node104.tar.gz" node104
cp -r "$scratch/job/node101" "$scratch/nested/"
(cd "$scratch/nested" && python3 -c '
import zipfile
with zipfile.ZipFile("../nested.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.write("node101/kern.log"); z.write("node104.tar.gz")')
"$faultline" diagnose --format json --fail-on never "$scratch/nested.zip" >"$scratch/nested.json" \
  2>"$scratch/nested.err"
check "nested: no warnings" test ! -s "$scratch/nested.err"
check "nested: the inner archive's members read" jq -e --arg a "$scratch/nested.zip" \
  '[.inputs[].path] == [$a + "!node101/kern.log", $a + "!node104.tar.gz!node104/kern.log",
                        $a + "!node104.tar.gz!node104/train.log"]' "$scratch/nested.json" >/dev/null
check "nested: diagnosed, host from the inner folder" jq -e '.diagnoses[0].id == "ecc-uncontained"' \
  "$scratch/nested.json" >/dev/null

# --- scan and diagnose --events read archives too. ---
"$faultline" scan "$scratch/job.zip" >"$scratch/records.jsonl" 2>"$scratch/scan.err"
check "scan: no warnings" test ! -s "$scratch/scan.err"
check "scan: records of the members" grep -qF "job.zip!node104/kern.log" "$scratch/records.jsonl"
tar -C "$scratch" --zstd -cf "$scratch/records.tar.zst" records.jsonl
"$faultline" diagnose --events --format json --fail-on never "$scratch/records.tar.zst" \
  >"$scratch/events.json" 2>"$scratch/events.err"
check "--events: no warnings" test ! -s "$scratch/events.err"
check "--events: the records inside the archive diagnosed" \
  jq -e '.diagnoses[0].id == "ecc-uncontained"' "$scratch/events.json" >/dev/null

finish
