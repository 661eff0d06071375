#!/usr/bin/env bash
# The HTML report of every sample, rendered by headless Chromium: it renders without a console
# message (a blocked load or a script would log one), the DOM shows the top diagnosis and the SVG
# timeline, and the screenshot is not blank. The screenshots stay in ./html-screenshots/ (the
# test's working folder) for a person to look at.
# Usage: html_test.sh FAULTLINE_BINARY SOURCE_DIR
set -uo pipefail

faultline=$1
root=$2
samples=$root/samples
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
shots=$PWD/html-screenshots
mkdir -p "$shots"

# scripts/install-deps installs Chromium: without it this test fails rather than skips, so that
# CI cannot pass without rendering the page.
if ! command -v chromium >/dev/null; then
  echo "FAIL: chromium is not installed (scripts/install-deps installs it)" >&2
  exit 1
fi

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

chromium_run() {  # chromium_run ARGS...: headless, offline, a fresh profile each time
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d -p "$scratch")" --enable-logging=stderr --v=0 "$@"
}

# A blank 1280x2000 page is about 12 KB as PNG; a report with text and a timeline is several
# times that.
min_png_bytes=40000

for folder in "$samples"/*/; do
  name=$(basename "$folder")
  html=$scratch/$name.html
  "$faultline" diagnose --fail-on never --format html "$folder" >"$html"
  "$faultline" diagnose --fail-on never --format json "$folder" >"$scratch/$name.json"
  chromium_run --dump-dom "file://$html" >"$scratch/$name.dom" 2>"$scratch/$name.log"
  check "$name: chromium rendered the page" test $? = 0 -a -s "$scratch/$name.dom"
  check "$name: no console message (blocked load, script)" bash -c "! grep ':CONSOLE' '$scratch/$name.log'"
  top=$(jq -r '.diagnoses[0].id // empty' "$scratch/$name.json")
  if [[ -n $top ]]; then
    check "$name: the DOM shows $top" grep -q "<code>$top</code>" "$scratch/$name.dom"
    check "$name: the DOM has the SVG timeline" grep -q '<svg class="timeline"' "$scratch/$name.dom"
    # Every kind of training-metric anomaly found with a time is marked on the loss chart.
    for kind in $(jq -r '[.events[] | select(.fields.segment != null and .time != null)
                          | .signature] | unique[]' "$scratch/$name.json"); do
      check "$name: the loss chart marks $kind" grep -q "<g class=\"anomaly\"><title>$kind: " \
        "$scratch/$name.dom"
    done
  else
    check "$name: the DOM says nothing was found" grep -q "no known GPU fault" "$scratch/$name.dom"
  fi
  chromium_run --screenshot="$shots/$name.png" --window-size=1280,2000 "file://$html" \
    >/dev/null 2>&1
  check "$name: a screenshot" test -s "$shots/$name.png"
  check "$name: the screenshot is not blank" test "$(stat -c %s "$shots/$name.png")" -gt "$min_png_bytes"
done

finish "screenshots in $shots"
