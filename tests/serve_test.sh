#!/usr/bin/env bash
# `faultline serve` over real HTTP with curl: every status code of the API, the security headers,
# uploads (raw, compressed, multipart, a `../` file name), limits (a 10 GB Content-Length, too many
# files, an upload that never finishes, one trickled a byte a second), the queue (429, 503), a
# token, and that no upload is left behind. Servers listen on a free port each (port 0) and are
# stopped on exit, whatever happens.
# Usage: serve_test.sh FAULTLINE_BINARY SOURCE_DIR
set -uo pipefail

faultline=$1
root=$2
samples=$root/samples
scratch=$(mktemp -d)
servers=()
stop_servers() {
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${servers[@]}"; do wait "$pid" 2>/dev/null; done
}
trap 'stop_servers; rm -rf "$scratch"' EXIT
# The servers' temporary folders go here, to check that none is left behind.
export TMPDIR=$scratch/tmp
mkdir -p "$TMPDIR"

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

# start_server ARGS...: a server on a free loopback port; sets $url and $pid.
start_server() {
  local out=$scratch/server-$((${#servers[@]} + 1)).out
  "$faultline" serve --listen 127.0.0.1:0 "$@" >"$out" 2>&1 &
  pid=$!
  servers+=("$pid")
  url=""
  for _ in $(seq 100); do
    url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/' "$out" | head -1)
    [[ -n $url ]] && return 0
    sleep 0.1
  done
  echo "FAIL: the server did not start: $(cat "$out")" >&2
  exit 1
}

# status ARGS...: curl's status code; the body in $scratch/body, the headers in $scratch/headers.
status() {
  curl -s --max-time 30 -o "$scratch/body" -D "$scratch/headers" -w '%{http_code}' "$@"
}
header() { grep -i "^$1:" "$scratch/headers" | head -1 | tr -d '\r' | cut -d' ' -f2-; }
body_has() { grep -qF -- "$1" "$scratch/body"; }
json_error() { jq -e '.schema == "faultline/http-error/v1" and (.error | length > 0)' "$scratch/body" >/dev/null; }

# raw_client MODE PORT: a client curl cannot be made to be (python3, the standard library).
#   never-ends: sends half of a declared body, then nothing;
#   trickle:    sends a declared 100-byte body one byte a second.
# Prints the status line of the answer and the seconds until the server closed the connection.
raw_client() {
  python3 - "$@" <<'EOF'
import socket, sys, time
mode, port = sys.argv[1], int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(30)
start = time.time()
s.sendall(b"POST /api/v1/diagnose HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
answer = b""
try:
    if mode == "never-ends":
        s.sendall(b"x" * 50)
    else:
        s.setblocking(False)
        for _ in range(100):
            try:
                chunk = s.recv(65536)
                if not chunk: break
                answer += chunk
            except BlockingIOError:
                pass
            try:
                s.send(b"x")
            except OSError:
                break
            time.sleep(1)
        s.settimeout(30)
    while True:
        chunk = s.recv(65536)
        if not chunk: break
        answer += chunk
except OSError:
    pass
print(answer.split(b"\r\n")[0].decode("latin-1"), round(time.time() - start))
EOF
}

sample_log=$samples/a100-contained-ecc/dmesg.zst
start_server --read-timeout 2 --request-timeout 5 --max-files 3
main=$url
main_pid=$pid
main_port=${url#http://127.0.0.1:}
main_port=${main_port%/}

# --- 200: each answer format; the same top diagnosis as `faultline diagnose` ---------------------
check "raw zstd body: 200" test "$(status --data-binary @"$sample_log" "${main}api/v1/diagnose")" = 200
check "raw body: diagnosis/v1 JSON" jq -e '.schema == "faultline/diagnosis/v1"' "$scratch/body"
check "raw body: input shown as upload, never a server path" \
  jq -e '[.inputs[].path] == ["upload"]' "$scratch/body"
# Every sample made of plain files, uploaded as multipart: the top diagnosis is the command line's.
for folder in "$samples"/*/; do
  name=$(basename "$folder")
  [[ -n $(find "$folder" -mindepth 1 -type d) ]] && continue
  form=()
  for file in "$folder"*; do form+=(-F "files=@$file"); done
  ((${#form[@]} > 6)) && continue # more than --max-files 3
  expected=$("$faultline" diagnose --fail-on never --format json "$folder" |
    jq -r '.diagnoses[0].id // "none"')
  check "$name: multipart 200" test "$(status "${form[@]}" "${main}api/v1/diagnose")" = 200
  check "$name: top diagnosis $expected as on the command line" \
    test "$(jq -r '.diagnoses[0].id // "none"' "$scratch/body")" = "$expected"
done
check "Accept: text/markdown" test "$(status -H 'Accept: text/markdown' \
  --data-binary @"$sample_log" "${main}api/v1/diagnose")" = 200
check "markdown: its content type" test "$(header Content-Type)" = "text/markdown; charset=utf-8"
check "markdown: a heading" grep -q '^#' "$scratch/body"
check "?format=html" test "$(status --data-binary @"$sample_log" "${main}api/v1/diagnose?format=html")" = 200
check "html: a page" body_has "<!DOCTYPE html>"
check "html: its own policy, no script" test "$(header Content-Security-Policy | grep -c script-src)" = 0
check "?format=text" test "$(status --data-binary @"$sample_log" "${main}api/v1/diagnose?format=text")" = 200
check "text: the ranked report" body_has "ecc-contained"
check "explain: 200" test "$(status "${main}api/v1/explain/gpu-off-bus")" = 200
check "explain: the entry" body_has "gpu-off-bus"
check "explain xid: 200" test "$(status "${main}api/v1/explain/xid/79")" = 200
check "healthz: 200" test "$(status "${main}healthz")" = 200

# --- security headers on every answer; no CORS --------------------------------------------------
for path in "" "api/v1/diagnose?format=xml" "nowhere"; do
  status -H 'Origin: https://evil.example' --data-binary @"$sample_log" "${main}$path" >/dev/null
  check "/$path: nosniff" test "$(header X-Content-Type-Options)" = nosniff
  check "/$path: frame-ancestors 'none'" grep -q "frame-ancestors 'none'" <<<"$(header Content-Security-Policy)"
  check "/$path: no referrer" test "$(header Referrer-Policy)" = no-referrer
  check "/$path: no CORS" test -z "$(header Access-Control-Allow-Origin)"
done

# --- the page ------------------------------------------------------------------------------------
check "page: 200" test "$(status "$main")" = 200
check "page: script from /app.js only" test "$(header Content-Security-Policy | grep -c "script-src 'self';")" = 1
check "page: no inline script" test "$(grep -c '<script>' "$scratch/body")" = 0
check "page: says nothing is kept" body_has "Nothing leaves this server and nothing is kept"
check "page: a form that works without the script" body_has 'action="/diagnose"'
check "page: no token field without --token-file" body_has 'id="token-row" hidden'
check "app.js: 200" test "$(status "${main}app.js")" = 200
check "app.js: served as script" test "$(header Content-Type)" = "text/javascript; charset=utf-8"
check "page form: the report" test "$(status -F "log=<$root/samples/gpu-off-bus/syslog" "${main}diagnose")" = 200
check "page form: the top diagnosis" body_has "gpu-off-bus"
check "page form: JSON to download" body_has 'href="data:application/json;base64,'
check "page form: Markdown to download" body_has 'href="data:text/markdown;base64,'

status -F log= -F "files=@$sample_log" "${main}api/v1/diagnose" >/dev/null
check "an empty paste box is no input" jq -e '[.inputs[].path] == ["dmesg.zst"]' "$scratch/body"
status -F "log=<$root/samples/gpu-off-bus/syslog" "${main}api/v1/diagnose" >/dev/null
check "a paste is the input 'pasted'" jq -e '[.inputs[].path] == ["pasted"]' "$scratch/body"

# --- options: redact, min_severity ---------------------------------------------------------------
printf 'Mar  5 10:12:33 node-secret-17 kernel: NVRM: Xid (PCI:0000:4c:00): 79, pid=1234, GPU has fallen off the bus.\n' >"$scratch/syslog"
status -F "files=@$scratch/syslog" "${main}api/v1/diagnose" >/dev/null
check "without redact: the host" body_has "node-secret-17"
status -F redact=on -F "files=@$scratch/syslog" "${main}api/v1/diagnose" >/dev/null
check "redact=on: no host name" test "$(grep -c node-secret-17 "$scratch/body")" = 0
check "redact=on: still diagnosed" jq -e '.diagnoses[0].id == "gpu-off-bus"' "$scratch/body"
status -F min_severity=critical -F "files=@$sample_log" "${main}api/v1/diagnose" >/dev/null
check "min_severity=critical: no error-level diagnosis" jq -e '[.diagnoses[] | select(.severity != "critical")] == []' "$scratch/body"

# --- names from the request are never paths; log text is escaped --------------------------------
check "../ file name: 200" test "$(status -F "files=@$scratch/syslog;filename=../../../etc/cron.d/x" "${main}api/v1/diagnose")" = 200
check "../ file name: shown as its last part" jq -e '[.inputs[].path] == ["x"]' "$scratch/body"
check "../ file name: nothing written outside" test ! -e /etc/cron.d/x
printf '<script>alert(1)</script> NVRM: Xid (PCI:0000:4c:00): 79, pid=1, GPU has fallen off the bus.\n' >"$scratch/evil.log"
status -F "files=@$scratch/evil.log;filename=<img src=x onerror=alert(1)>.log" "${main}api/v1/diagnose?format=html" >/dev/null
check "html: log text escaped" test "$(grep -c '<script>' "$scratch/body")" = 0
check "html: file name escaped" test "$(grep -c '<img' "$scratch/body")" = 0

# --- 400 ------------------------------------------------------------------------------------------
check "empty body: 400" test "$(status --data-binary @/dev/null "${main}api/v1/diagnose")" = 400
check "empty body: JSON error" json_error
check "unknown format: 400" test "$(status --data-binary @"$sample_log" "${main}api/v1/diagnose?format=xml")" = 400
check "bad tz: 400" test "$(status --data-binary @"$sample_log" "${main}api/v1/diagnose?tz=Mars/Olympus")" = 400
check "bad tz: JSON error" json_error
check "bad min_severity: 400" test "$(status -F min_severity=fatal -F "files=@$sample_log" "${main}api/v1/diagnose")" = 400
random_bytes 1 200000 >"$scratch/random.bin"
code=$(status --data-binary @"$scratch/random.bin" "${main}api/v1/diagnose")
check "binary data: 400 (got $code)" test "$code" = 400
check "binary data: says why" body_has "binary data"
printf -- '--XX\r\nContent-Disposition: form-data; name="files"; filename="a"\r\n\r\nabc' >"$scratch/cut.multipart"
check "cut multipart: 400" test "$(status -H 'Content-Type: multipart/form-data; boundary=XX' \
  --data-binary @"$scratch/cut.multipart" "${main}api/v1/diagnose")" = 400

# --- 404, 405 -------------------------------------------------------------------------------------
check "path outside the API: 404" test "$(status --path-as-is "${main}../../etc/passwd")" = 404
check "path outside the API: JSON error" json_error
check "path outside the API: no file content" test "$(grep -c 'root:' "$scratch/body")" = 0
check "unknown path: 404" test "$(status "${main}api/v2/diagnose")" = 404
check "unknown id: 404" test "$(status "${main}api/v1/explain/no-such-thing")" = 404
check "GET diagnose: 405" test "$(status "${main}api/v1/diagnose")" = 405
check "OPTIONS (a CORS preflight): refused" test "$(status -X OPTIONS -H 'Origin: https://evil.example' "${main}api/v1/diagnose")" = 405

# --- 413 ------------------------------------------------------------------------------------------
start=$SECONDS
check "Content-Length 10 GB: 413" test "$(status -H 'Content-Length: 10000000000' --data-binary 'abc' "${main}api/v1/diagnose")" = 413
check "Content-Length 10 GB: answered at once, nothing read" test $((SECONDS - start)) -le 2
check "Content-Length 10 GB: connection closed" test "$(header Connection)" = close
check "more than --max-files: 413" test "$(status -F "files=@$sample_log" -F "files=@$sample_log" \
  -F "files=@$sample_log" -F "files=@$sample_log" "${main}api/v1/diagnose")" = 413
check "more than --max-files: JSON error" json_error

# --- 415 ------------------------------------------------------------------------------------------
check "image/png: 415" test "$(status -H 'Content-Type: image/png' --data-binary @"$sample_log" "${main}api/v1/diagnose")" = 415

# --- slow and unfinished uploads -----------------------------------------------------------------
read -r line seconds < <(raw_client never-ends "$main_port" | awk '{print $2, $NF}')
check "upload that never finishes: 408 (got $line)" test "$line" = 408
check "upload that never finishes: closed after --read-timeout 2 (${seconds}s)" test "$seconds" -le 4
read -r line seconds < <(raw_client trickle "$main_port" | awk '{print $2, $NF}')
check "a byte a second: 408 (got $line)" test "$line" = 408
check "a byte a second: cut off at --request-timeout 5 (${seconds}s)" test "$seconds" -le 8

# --- a small body limit, streamed without Content-Length -----------------------------------------
start_server --max-body 1K
head -c 5000 /dev/zero | tr '\0' 'a' >"$scratch/5k.log"
check "chunked body over --max-body: 413" test "$(status -H 'Transfer-Encoding: chunked' --data-binary @"$scratch/5k.log" "${url}api/v1/diagnose")" = 413

# --- the queue: 429 when it is full, 503 when the wait runs out -----------------------------------
start_server --workers 1 --queue 1 --queue-timeout 1 --read-timeout 4
queue_port=${url#http://127.0.0.1:}
# load RUNNING WAITING: waits until /healthz counts that many requests diagnosed and waiting.
load() {
  for _ in $(seq 100); do
    curl -s "${url}healthz" | jq -e ".running == $1 and .waiting == $2" >/dev/null && return 0
    sleep 0.1
  done
  return 1
}
raw_client never-ends "${queue_port%/}" >/dev/null & # holds the only worker for 4 s
holder=$!
check "healthz: one request running" load 1 0
status --data-binary @"$sample_log" "${url}api/v1/diagnose" >"$scratch/waited" &
waiting=$!
check "healthz: one request waiting" load 1 1
check "queue full: 429" test "$(status --data-binary @"$sample_log" "${url}api/v1/diagnose")" = 429
check "429: Retry-After" test -n "$(header Retry-After)"
wait "$waiting"
check "waited past --queue-timeout: 503" test "$(cat "$scratch/waited")" = 503
wait "$holder"
check "after the queue: 200 again" test "$(status --data-binary @"$sample_log" "${url}api/v1/diagnose")" = 200

# --- a token --------------------------------------------------------------------------------------
printf 's3cret-token\n' >"$scratch/token"
start_server --token-file "$scratch/token"
check "token: none sent, 401" test "$(status --data-binary @"$sample_log" "${url}api/v1/diagnose")" = 401
check "token: WWW-Authenticate" test "$(header WWW-Authenticate)" = Bearer
check "token: wrong one, 401" test "$(status -H 'Authorization: Bearer s3cret-tokeN' --data-binary @"$sample_log" "${url}api/v1/diagnose")" = 401
check "token: the page's form wants it too" test "$(status -F "files=@$sample_log" "${url}diagnose")" = 401
check "token: right one, 200" test "$(status -H 'Authorization: Bearer s3cret-token' --data-binary @"$sample_log" "${url}api/v1/diagnose")" = 200
check "token: the page is served" test "$(status "$url")" = 200
check "token: the page asks for it" body_has 'id="token-row" >'
check "token: healthz needs none" test "$(status "${url}healthz")" = 200
check "empty token file: exit 2" test "$(: >"$scratch/empty"; "$faultline" serve --token-file "$scratch/empty" >/dev/null 2>&1; echo $?)" = 2
check "address in use: exit 2" test "$(timeout 10 "$faultline" serve --listen "127.0.0.1:${main_port}" >/dev/null 2>&1; echo $?)" = 2
check "bad --listen: exit 2" test "$("$faultline" serve --listen nowhere >/dev/null 2>&1; echo $?)" = 2

# --- stopping: SIGTERM ends the server with 0; no upload is left behind ---------------------------
kill -TERM "$main_pid"
wait "$main_pid"
check "SIGTERM: exit 0" test $? = 0
stop_servers
servers=()
check "no upload left behind" test -z "$(ls -A "$TMPDIR")"
check "no crash report" not_noisy <(cat "$scratch"/server-*.out)

finish
