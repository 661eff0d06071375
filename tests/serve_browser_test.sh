#!/usr/bin/env bash
# The page of `faultline serve` in Debian's headless Chromium, driven through the DevTools protocol
# by puppeteer-core (pinned in tests/browser/package-lock.json, installed with `npm ci` into the
# build folder): paste a log, pick two files and a .zip, press Diagnose, and read the top
# diagnosis from the rendered report; it must be the one `faultline diagnose` gives for the same
# inputs. The screenshot stays in ./serve-browser/page.png (the test's working folder).
# Without Chromium, or when npm cannot install puppeteer-core, the test fails rather than skips.
# Usage: serve_browser_test.sh FAULTLINE_BINARY SOURCE_DIR
set -uo pipefail

faultline=$1
root=$2
samples=$root/samples
work=$PWD/serve-browser
scratch=$(mktemp -d)
server=""
trap '[[ -n $server ]] && kill "$server" 2>/dev/null; rm -rf "$scratch"' EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

if ! command -v chromium >/dev/null || ! command -v npm >/dev/null; then
  echo "FAIL: chromium and npm are needed (scripts/install-deps installs them)" >&2
  exit 1
fi
mkdir -p "$work"
cp "$root/tests/browser/package.json" "$root/tests/browser/package-lock.json" \
  "$root/tests/browser/serve_page.mjs" "$work/"
# PUPPETEER_SKIP_DOWNLOAD: puppeteer-core downloads no browser; Debian's Chromium is used.
if ! (cd "$work" && PUPPETEER_SKIP_DOWNLOAD=1 timeout 300 npm ci --no-audit --no-fund \
  --loglevel=error >"$scratch/npm.log" 2>&1); then
  echo "FAIL: npm ci could not install puppeteer-core: $(tail -3 "$scratch/npm.log")" >&2
  exit 1
fi

paste=$samples/pasted-ticket/ticket.txt
files=("$samples/h100-remap-failure/kern.log.1.gz"
  "$samples/h100-remap-failure/nvidia-smi-q-row-remapper.txt"
  "$samples/job64-xid95-zip/job64-xid95.zip")
expected=$("$faultline" diagnose --fail-on never --format json "$paste" "${files[@]}" |
  jq -r '.diagnoses[0].id // "none"')

"$faultline" serve --listen 127.0.0.1:0 >"$scratch/server.out" 2>&1 &
server=$!
url=""
for _ in $(seq 100); do
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/' "$scratch/server.out" | head -1)
  [[ -n $url ]] && break
  sleep 0.1
done
check "the server started" test -n "$url"

rm -f "$work/page.png"
timeout 120 node "$work/serve_page.mjs" "$url" "$(command -v chromium)" "$work/page.png" \
  "$paste" "${files[@]}" >"$scratch/result.json" 2>"$scratch/node.err"
check "the page was driven: $(tail -3 "$scratch/node.err")" jq -e . "$scratch/result.json" >/dev/null
cat "$scratch/result.json"; echo
top=$(jq -r '.top' "$scratch/result.json")
check "the page shows the top diagnosis $expected (got $top)" test "$top" = "$expected"
check "the page shows no error" test "$(jq -r '.status' "$scratch/result.json")" = ""
check "no console error, policy violation or failed load: $(jq -c .problems "$scratch/result.json")" jq -e '.problems == []' "$scratch/result.json" >/dev/null
check "JSON and Markdown to download" \
  jq -e '.downloads == ["faultline.json", "faultline.md"]' "$scratch/result.json" >/dev/null
# A blank 1280x1800 page is a few KB as PNG; the form with a report under it is many times that.
check "a screenshot of the report" test "$(stat -c %s "$work/page.png" 2>/dev/null || echo 0)" -gt 40000
kill "$server"
wait "$server"
check "the server stopped cleanly" test $? = 0
server=""
finish "screenshot: $work/page.png"
