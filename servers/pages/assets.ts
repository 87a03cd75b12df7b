// The dashboard's only style sheet and script, inlined into every page and allowed by their
// SHA-256 hashes in the content security policy: no external asset, so it works offline.

import { createHash } from "node:crypto";

/** The style sheet. */
export const STYLE = `
:root { color-scheme: light dark; --fg: #1d1f21; --bg: #fdfdfc; --muted: #5f6368; --line: #d7d7d2;
  --accent: #0b57d0; --mark: #ffe27a; --warn: #a35200; --bad: #b3261e; --ok: #1e7d32; --code: #f2f2ee; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e6e3; --bg: #17181a; --muted: #a5a7ab; --line: #3a3c40; --accent: #8ab4f8;
    --mark: #6b5a00; --warn: #f0a35c; --bad: #f28b82; --ok: #81c995; --code: #222428; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--bg); padding: .5em; }
.skip:focus { left: .5em; }
header.top { display: flex; gap: 1.5em; align-items: baseline; padding: .6em 1.2em;
  border-bottom: 1px solid var(--line); }
header.top .brand { font-weight: 700; }
header.top nav a { margin-right: 1em; }
header.top nav a[aria-current="page"] { font-weight: 700; text-decoration: none; }
main { padding: 1em 1.2em 3em; max-width: 72em; }
h1 { font-size: 1.4em; margin: .2em 0 .6em; }
h2 { font-size: 1.15em; margin: 1.4em 0 .4em; }
form.search { display: grid; gap: .6em; grid-template-columns: repeat(auto-fill, minmax(11em, 1fr));
  align-items: end; margin-bottom: 1em; }
form.search .q { grid-column: 1 / -1; display: flex; gap: .5em; align-items: end; }
form.search .q label { flex: 1; }
label { display: flex; flex-direction: column; font-size: .85em; color: var(--muted); gap: .15em; }
input, select, button { font: inherit; color: var(--fg); background: var(--bg);
  border: 1px solid var(--line); border-radius: 4px; padding: .3em .5em; }
button { cursor: pointer; background: var(--code); }
kbd { border: 1px solid var(--line); border-radius: 3px; padding: 0 .3em; font-size: .85em; }
.muted, .meta-line { color: var(--muted); font-size: .88em; }
.hits { list-style: none; padding: 0; margin: 0; }
.hit { border-top: 1px solid var(--line); padding: .6em 0; }
.hit .snippet { margin: .2em 0 0; overflow-wrap: anywhere; }
mark { background: var(--mark); color: inherit; padding: 0 .1em; border-radius: 2px; }
.pager { display: flex; gap: 1em; margin: 1em 0; align-items: center; flex-wrap: wrap; }
.pager form { display: flex; gap: .5em; align-items: end; }
.notice { border-left: 4px solid var(--warn); padding: .3em .8em; background: var(--code); }
.error { border-left-color: var(--bad); }
.rec { border-top: 1px solid var(--line); padding: .5em 0; }
.rec:target { background: var(--code); outline: 2px solid var(--mark); }
.rec .who { font-weight: 700; }
.rec.role-user .who { color: var(--accent); }
.rec.role-assistant .who { color: var(--ok); }
.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: .2em 0; }
.reasoning .text { color: var(--muted); font-style: italic; }
pre { background: var(--code); padding: .5em; overflow: auto; white-space: pre-wrap;
  overflow-wrap: anywhere; max-height: 30em; margin: .3em 0; }
details > summary { cursor: pointer; }
details.fold > summary, details.raw > summary { color: var(--muted); font-size: .9em; }
.esc { color: var(--warn); }
code.cmd { background: var(--code); padding: .2em .4em; border-radius: 3px;
  overflow-wrap: anywhere; }
.actions { display: flex; gap: .6em 1.2em; flex-wrap: wrap; align-items: end; margin: .4em 0; }
.actions form { display: flex; gap: .5em; align-items: end; }
table { border-collapse: collapse; margin: .4em 0; }
th, td { text-align: left; padding: .25em .9em .25em 0; border-bottom: 1px solid var(--line);
  vertical-align: top; }
progress { width: 20em; height: 1.1em; }
.stall { color: var(--bad); font-weight: 700; }
.dead { color: var(--muted); }
.warn { color: var(--warn); }
`;

/** The script: `/` focuses the search box, copy buttons, and live capture progress. */
export const SCRIPT = `
"use strict";
(function () {
  document.addEventListener("keydown", function (event) {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    var box = document.getElementById("q");
    if (!box) return;
    event.preventDefault();
    box.focus();
    box.select();
  });

  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      var text = button.getAttribute("data-copy") || "";
      var done = function (label) {
        button.textContent = label;
        setTimeout(function () { button.textContent = "Copy"; }, 2000);
      };
      // Without the clipboard (or when it is refused), the command is selected for Ctrl+C.
      var select = function () {
        var code = document.getElementById(button.getAttribute("data-copy-for") || "");
        var selection = window.getSelection();
        if (!code || !selection) { done("Select and copy by hand"); return; }
        var range = document.createRange();
        range.selectNodeContents(code);
        selection.removeAllRanges();
        selection.addRange(range);
        done("Selected: press Ctrl+C");
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(function () { done("Copied"); }, select);
      } else select();
    });
  });

  var live = document.querySelector("[data-running='1']");
  if (live) {
    var tick = function () {
      fetch("/api/status", { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (status) {
          if (!status) return;
          if (!status.capture.running) { location.reload(); return; }
          var p = status.capture.progress;
          var captured = status.store ? status.store.captured : null;
          var bar = document.getElementById("capture-progress");
          var text = document.getElementById("capture-progress-text");
          var cell = document.getElementById("captured-share");
          var rebuilding = p && p.phase === "rebuilding";
          if (bar && captured && !rebuilding) bar.value = tenths(captured.ratio);
          if (text) text.textContent = describe(p, captured);
          if (cell && captured) {
            cell.textContent = share(captured.ratio) + " (" + bytes(captured.bytes) + " of " + bytes(captured.of) + ")";
          }
          setTimeout(tick, 1000);
        }, function () { setTimeout(tick, 3000); });
    };
    setTimeout(tick, 1000);
  }

  // These mirror describeProgress, sharePercent and formatBytes on the server.
  function describe(p, captured) {
    if (p && p.phase === "rebuilding") return "deriving the index and conversations again from the raw records";
    var head = captured ? share(captured.ratio) + " captured" : "starting";
    if (!p) return head;
    var eta = p.etaMs === null ? "estimating time left" : "about " + duration(p.etaMs) + " left";
    return head + " \\u00b7 " + p.sourcesDone + " of " + p.sourcesTotal + " sources \\u00b7 " + eta;
  }
  function tenths(ratio) { return Math.floor(ratio * 1000 + 1e-9) / 10; }
  function share(ratio) { return tenths(ratio).toFixed(1) + "%"; }
  function bytes(n) {
    var units = ["B", "KB", "MB", "GB", "TB"], value = n, unit = 0;
    while (value >= 1000 && unit < units.length - 1) { value /= 1000; unit++; }
    return unit === 0 ? n + " B" : value.toFixed(value < 10 ? 1 : 0) + " " + units[unit];
  }
  function duration(ms) {
    if (ms < 1000) return "1 s";
    if (ms < 60000) return Math.round(ms / 1000) + " s";
    return Math.floor(ms / 60000) + " min " + String(Math.round((ms % 60000) / 1000)).padStart(2, "0") + " s";
  }
})();
`;

function sha256(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

/**
 * The content security policy: this origin only, the inline style and script above by hash,
 * nothing framed, forms posting only here.
 */
export const CSP = [
  "default-src 'self'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");
