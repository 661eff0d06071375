#include "serve/page.h"

namespace faultline {
namespace {

// Without the script the form is posted as it is and the browser shows the report that comes
// back; with it, the page posts the same form, shows the upload's progress and puts the report in
// a frame under the form (sandboxed: no script runs in it).
constexpr std::string_view kPage = R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>faultline: diagnose a failed GPU job</title>
<link rel="stylesheet" href="/app.css">
<link rel="icon" href="data:,">
<script src="/app.js" defer></script>
</head>
<body>
<header>
<h1>faultline</h1>
<p>Paste a log or drop files (kernel logs, <code>nvidia-smi -q</code>, the job's own logs; plain,
compressed or archives) and get the ranked diagnosis.</p>
<p class="private" id="private">Nothing leaves this server and nothing is kept: your logs are read
here, in temporary files deleted as soon as the answer is sent.</p>
</header>
<form id="form" method="post" action="/diagnose" enctype="multipart/form-data">
<label for="log">Paste a log</label>
<textarea id="log" name="log" rows="12" spellcheck="false"
 placeholder="[Tue Mar  5 10:12:33 2024] NVRM: Xid (PCI:0000:4c:00): 79, pid=1234, GPU has fallen off the bus."></textarea>
<div id="drop" class="drop">
<label for="files">Files</label>
<input id="files" name="files" type="file" multiple>
<p class="muted">or drop them here: several at once, <code>.gz</code>, <code>.zst</code>,
<code>.tar.gz</code> and <code>.zip</code> too</p>
<ul id="chosen"></ul>
</div>
<fieldset>
<legend>Options</legend>
<label>Time zone of times that name none <input name="tz" placeholder="UTC, +02:00, Europe/Berlin" size="24"></label>
<label>Minimum severity <select name="min_severity">
<option value="">any</option><option>info</option><option>warning</option><option>error</option><option>critical</option>
</select></label>
<label><input type="checkbox" name="redact" value="on"> Redact host names, IP addresses and user names</label>
<label id="token-row" TOKEN_HIDDEN>Access token <input id="token" type="password" autocomplete="off"></label>
</fieldset>
<button id="diagnose" type="submit">Diagnose</button>
<progress id="progress" max="1" value="0" hidden></progress>
<p id="status" role="status"></p>
</form>
<iframe id="result" title="The diagnosis" sandbox="allow-same-origin allow-downloads" hidden></iframe>
</body>
</html>
)";

constexpr std::string_view kScript =
    R"js(// faultline serve: the form, sent with progress; the report shown under it.
"use strict";
const form = document.getElementById("form");
const files = document.getElementById("files");
const drop = document.getElementById("drop");
const chosen = document.getElementById("chosen");
const progress = document.getElementById("progress");
const status = document.getElementById("status");
const result = document.getElementById("result");
const dropped = [];

function listFiles() {
  chosen.replaceChildren();
  for (const file of [...files.files, ...dropped]) {
    const item = document.createElement("li");
    item.textContent = file.name + " (" + file.size + " bytes)";
    chosen.append(item);
  }
}
files.addEventListener("change", listFiles);
drop.addEventListener("dragover", (event) => { event.preventDefault(); drop.classList.add("over"); });
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", (event) => {
  event.preventDefault();
  drop.classList.remove("over");
  dropped.push(...event.dataTransfer.files);
  listFiles();
});

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const body = new FormData(form);
  for (const file of dropped) body.append("files", file, file.name);
  const request = new XMLHttpRequest();
  request.open("POST", form.action);
  const token = document.getElementById("token").value;
  if (token) request.setRequestHeader("Authorization", "Bearer " + token);
  progress.hidden = false;
  progress.value = 0;
  status.textContent = "Uploading…";
  request.upload.addEventListener("progress", (e) => {
    if (e.lengthComputable) progress.value = e.loaded / e.total;
  });
  request.upload.addEventListener("load", () => { status.textContent = "Diagnosing…"; });
  request.addEventListener("load", () => {
    progress.hidden = true;
    if (request.status === 200) {
      status.textContent = "";
      result.hidden = false;
      result.srcdoc = request.responseText;
      return;
    }
    let message = request.statusText;
    try { message = JSON.parse(request.responseText).error; } catch (_) { /* not JSON */ }
    status.textContent = "Error " + request.status + ": " + message;
  });
  request.addEventListener("error", () => {
    progress.hidden = true;
    status.textContent = "The server could not be reached.";
  });
  request.send(body);
});
result.addEventListener("load", () => {
  const page = result.contentDocument;
  if (page && page.body) result.style.height = page.documentElement.scrollHeight + 24 + "px";
});
)js";

constexpr std::string_view kStyle = R"(* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: #1f2937; margin: 0 auto; padding: 24px 32px; max-width: 1200px; }
h1 { font-size: 22px; margin: 0 0 4px; }
code { font: 13px ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.private { background: #f0fdf4; border-left: 5px solid #16a34a; padding: 8px 12px; }
.muted { color: #6b7280; }
label { display: block; margin: 8px 0 4px; font-weight: 600; }
fieldset label { font-weight: normal; }
textarea { width: 100%; font: 13px/1.45 ui-monospace, "DejaVu Sans Mono", monospace; }
.drop { border: 2px dashed #9ca3af; border-radius: 8px; padding: 12px 16px; margin: 12px 0; }
.drop.over { border-color: #2563eb; background: #eff6ff; }
fieldset { border: 1px solid #e5e7eb; border-radius: 8px; margin: 12px 0; }
button { font-size: 16px; padding: 8px 24px; }
progress { width: 240px; margin-left: 12px; }
#status { min-height: 1.5em; }
iframe { width: 100%; min-height: 600px; border: 1px solid #e5e7eb; border-radius: 8px; }
)";

}  // namespace

std::string serve_page(bool token_field) {
  std::string page(kPage);
  const std::string_view marker = "TOKEN_HIDDEN";
  page.replace(page.find(marker), marker.size(), token_field ? "" : "hidden");
  return page;
}

std::string_view serve_script() {
  return kScript;
}

std::string_view serve_style() {
  return kStyle;
}

}  // namespace faultline
