// The dashboard's only style sheet and script, inlined into every page and allowed by their
// SHA-256 hashes in the content security policy: no external asset, so it works offline.

import { sha256 } from "../../lib/sha256.ts";

/** The style sheet. */
export const STYLE = `
:root { color-scheme: light dark;
  --fg: #1c1e21; --bg: #fbfbfa; --panel: #ffffff; --sunk: #f1f1ee; --muted: #5c6066;
  --line: #dcdcd6; --accent: #0a58ca; --accent-bg: #e7effb; --mark: #fde68a; --mark-fg: #1c1e21;
  --warn: #8a4b00; --bad: #b3261e; --ok: #17703a; --user-bg: #eef3fb; --user-line: #c9d8f0;
  --k: #8b2a9c; --s: #176b2c; --n: #9a4a00; --c: #6a6f76; --t: #0b5394;
  --s1: .25rem; --s2: .5rem; --s3: .75rem; --s4: 1rem; --s5: 1.5rem; --s6: 2.25rem;
  --f-sm: .8125rem; --f-base: .9375rem; --f-md: 1.0625rem; --f-lg: 1.3125rem; --f-xl: 1.625rem;
  --mono: ui-monospace, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace;
  --radius: 8px; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e4e5e7; --bg: #141518; --panel: #1c1e22; --sunk: #23262b; --muted: #a4a8ae;
    --line: #34373d; --accent: #8ab4f8; --accent-bg: #1f2a3d; --mark: #7a5c00; --mark-fg: #fff7d6;
    --warn: #f0b070; --bad: #f28b82; --ok: #81c995; --user-bg: #1b2433; --user-line: #2f4163;
    --k: #d7a6f5; --s: #9fd99a; --n: #f5b97a; --c: #9097a0; --t: #8ecdf7; }
}
.usage-chart { margin: var(--s3) 0; }
.usage-chart svg { width: 100%; height: 12rem; display: block; }
.usage-chart .axis { stroke: var(--line); }
.usage-chart .axis-labels { display: flex; justify-content: space-between; font-size: var(--f-sm);
  color: var(--muted); }
.usage-chart a:hover rect, .usage-chart a:focus rect { opacity: .75; }
.usage-chart figcaption { font-size: var(--f-sm); color: var(--muted); }
.usage-chart .key { margin-right: var(--s3); white-space: nowrap; }
.swatch { display: inline-block; width: .75em; height: .75em; margin-right: .3em; border-radius: 2px;
  background: currentColor; }
.series-0 { fill: var(--accent); color: var(--accent); }
.series-1 { fill: var(--ok); color: var(--ok); }
.series-2 { fill: var(--warn); color: var(--warn); }
.series-3 { fill: var(--k); color: var(--k); }
.series-4 { fill: var(--t); color: var(--t); }
.series-5 { fill: var(--c); color: var(--c); }
* { box-sizing: border-box; }
html { scroll-padding-top: 6.5rem; }
body { margin: 0; font: var(--f-base)/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg); background: var(--bg); -webkit-text-size-adjust: 100%; }
a { color: var(--accent); text-underline-offset: 2px; }
a:hover { text-decoration-thickness: 2px; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; border-radius: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--panel); padding: var(--s2); z-index: 10; }
.skip:focus { left: var(--s2); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
  white-space: nowrap; }
header.top { display: flex; gap: var(--s5); align-items: center; padding: var(--s2) var(--s5);
  border-bottom: 1px solid var(--line); background: var(--panel); flex-wrap: wrap; }
header.top .brand { font-weight: 700; font-size: var(--f-md); letter-spacing: -.01em; }
header.top nav { display: flex; gap: var(--s1); flex-wrap: wrap; }
header.top nav a { padding: var(--s1) var(--s3); border-radius: 999px; text-decoration: none; color: var(--fg); }
header.top nav a:hover { background: var(--sunk); }
header.top nav a[aria-current="page"] { background: var(--accent-bg); color: var(--accent); font-weight: 600; }
main { padding: var(--s4) var(--s5) var(--s6); max-width: 76rem; margin: 0 auto; }
h1 { font-size: var(--f-xl); line-height: 1.25; margin: var(--s2) 0 var(--s3); letter-spacing: -.015em; }
h2 { font-size: var(--f-lg); line-height: 1.3; margin: var(--s5) 0 var(--s2); }
h3 { font-size: var(--f-md); margin: var(--s4) 0 var(--s2); }
code, kbd, pre, .cmd { font-family: var(--mono); font-size: .875em; }
kbd { border: 1px solid var(--line); border-bottom-width: 2px; border-radius: 4px; padding: 0 .35em; background: var(--panel); }
label { display: flex; flex-direction: column; font-size: var(--f-sm); color: var(--muted); gap: var(--s1); }
input, select, button { font: inherit; color: var(--fg); background: var(--panel);
  border: 1px solid var(--line); border-radius: 6px; padding: .35rem .6rem; }
input[type="checkbox"] { padding: 0; }
button { cursor: pointer; background: var(--sunk); font-weight: 500; }
button:hover { border-color: var(--muted); }
button.primary { background: var(--accent); color: var(--bg); border-color: var(--accent); }
button:disabled { cursor: not-allowed; opacity: .6; }
.muted, .meta-line { color: var(--muted); font-size: var(--f-sm); }
mark { background: var(--mark); color: var(--mark-fg); padding: 0 .1em; border-radius: 2px; }
.notice { border-left: 4px solid var(--warn); padding: var(--s2) var(--s3); background: var(--sunk); border-radius: 0 6px 6px 0; }
.notice.ok { border-left-color: var(--ok); }
.error { border-left-color: var(--bad); }
pre { background: var(--sunk); padding: var(--s2) var(--s3); overflow: auto; white-space: pre-wrap;
  overflow-wrap: anywhere; max-height: 32rem; margin: var(--s2) 0; border-radius: 6px; line-height: 1.45; }
details > summary { cursor: pointer; }
table { border-collapse: collapse; margin: var(--s2) 0; }
caption { text-align: left; padding: 0 0 var(--s1); }
th, td { text-align: left; padding: var(--s1) var(--s4) var(--s1) 0; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.table-wrap { overflow-x: auto; }
.badge { display: inline-block; padding: 0 .5em; border-radius: 999px; font-size: var(--f-sm);
  background: var(--sunk); border: 1px solid var(--line); white-space: nowrap; }
.pager { display: flex; gap: var(--s2) var(--s4); margin: var(--s4) 0; align-items: center; flex-wrap: wrap; }
.pager .numbers { display: flex; gap: var(--s1); flex-wrap: wrap; }
.pager .numbers a { min-width: 2rem; text-align: center; padding: .1rem .4rem; border-radius: 6px; text-decoration: none; border: 1px solid var(--line); }
.pager .numbers a[aria-current="page"] { background: var(--accent); color: var(--bg); border-color: var(--accent); }
.pager form { display: flex; gap: var(--s2); align-items: end; margin-left: auto; }
.pager label { flex-direction: row; align-items: center; gap: var(--s2); }
/* search */
form.search { margin: 0 0 var(--s4); }
form.search .q { display: flex; gap: var(--s2); align-items: stretch; }
form.search .q input { flex: 1; font-size: var(--f-md); padding: .5rem .75rem; min-width: 0; }
form.search details.filters { margin-top: var(--s2); }
form.search details.filters > summary { color: var(--muted); font-size: var(--f-sm); }
form.search .grid { display: grid; gap: var(--s3); grid-template-columns: repeat(auto-fill, minmax(11rem, 1fr));
  align-items: end; padding: var(--s3) 0; }
.results { display: grid; grid-template-columns: minmax(0, 1fr) 15rem; gap: var(--s5); align-items: start; }
.results aside { position: sticky; top: var(--s4); font-size: var(--f-sm); }
.results aside h2 { font-size: var(--f-sm); text-transform: uppercase; letter-spacing: .06em; color: var(--muted); margin: 0 0 var(--s1); }
.results aside ul { list-style: none; padding: 0; margin: 0 0 var(--s4); }
.results aside li { display: flex; justify-content: space-between; gap: var(--s2); padding: .1rem 0; }
.results aside li a { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.summary-line { display: flex; gap: var(--s3); align-items: baseline; flex-wrap: wrap; margin: 0 0 var(--s2); }
.summary-line .sort { margin-left: auto; display: flex; gap: var(--s2); }
.summary-line .sort a[aria-current="true"] { font-weight: 700; color: var(--fg); text-decoration: none; }
.hits { list-style: none; padding: 0; margin: 0; }
.hit { padding: var(--s3) var(--s3); border-radius: var(--radius); border: 1px solid transparent; }
.hit + .hit { border-top-color: var(--line); border-top-left-radius: 0; border-top-right-radius: 0; }
.hit.current { background: var(--accent-bg); border-color: var(--user-line); }
.hit .title { font-weight: 600; font-size: var(--f-md); text-decoration: none; }
.hit .title:hover, .hit .title:focus { text-decoration: underline; }
.hit .snippet { margin: var(--s1) 0 0; overflow-wrap: anywhere; }
.group { margin: 0 0 var(--s4); }
.group > h3 { margin: var(--s3) 0 var(--s1); }
.group .meta-line { margin: 0 0 var(--s1); }
.group .hits .hit .title { font-weight: 600; font-size: var(--f-sm); }
.group .more { margin: var(--s1) var(--s3) 0; font-size: var(--f-sm); }
/* conversation */
.conv-head { position: sticky; top: 0; z-index: 5; background: var(--bg); padding: var(--s2) 0;
  border-bottom: 1px solid var(--line); margin: 0 0 var(--s2); }
.conv-head.file { position: static; }
.conv-head .head-row { display: flex; gap: var(--s3); align-items: center; min-width: 0; }
.conv-head h1 { margin: 0; font-size: var(--f-md); line-height: 1.35; flex: 1 1 auto; min-width: 0;
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.conv-head .facts { margin: var(--s1) 0 0; color: var(--muted); font-size: var(--f-sm); line-height: 1.4; }
.conv-head .facts .sep { color: var(--muted); }
.conv-head .actions { display: flex; gap: var(--s2); align-items: center; flex: 0 0 auto; margin: 0;
  font-size: var(--f-sm); flex-wrap: nowrap; }
.conv-head .actions button, .menu > summary { padding: .2rem .6rem; font-size: var(--f-sm); }
.conv-head form.fork { margin: 0; display: block; }
.menu { position: relative; }
.menu > summary { list-style: none; border: 1px solid var(--line); border-radius: 6px; background: var(--sunk);
  font-weight: 500; white-space: nowrap; }
.menu > summary::-webkit-details-marker { display: none; }
.menu > summary::after { content: " ▾"; color: var(--muted); }
.menu[open] > summary { border-color: var(--muted); }
.menu-body { position: absolute; right: 0; top: calc(100% + 4px); z-index: 6; background: var(--panel);
  border: 1px solid var(--line); border-radius: var(--radius); padding: var(--s2) var(--s3);
  box-shadow: 0 6px 24px rgb(0 0 0 / .18); min-width: 12rem; max-width: min(40rem, 90vw); }
.menu-body p { margin: 0 0 var(--s2); }
.menu-body p:last-child { margin-bottom: 0; }
.menu.export .menu-body { display: flex; flex-direction: column; gap: var(--s1); min-width: 9rem; }
.menu.resume .menu-body { width: max-content; }
.cmd-line { display: flex; gap: var(--s2); align-items: center; flex-wrap: wrap; }
.conv-head .conv-id { overflow-wrap: anywhere; }
.gap { margin: 0; text-align: center; font-size: var(--f-sm); }
.gap a { display: inline-block; padding: .1rem .75rem; border: 1px dashed var(--line); border-radius: 999px;
  text-decoration: none; color: var(--muted); }
.gap a:hover { color: var(--accent); border-color: var(--accent); }
.toggle { flex-direction: row; align-items: center; gap: var(--s1); }
code.cmd { background: var(--sunk); padding: .15rem .4rem; border-radius: 4px; overflow-wrap: anywhere; }
.chat { display: flex; flex-direction: column; gap: var(--s2); }
.rec { scroll-margin-top: 6.5rem; display: flex; flex-wrap: wrap; align-items: baseline; gap: 0 var(--s2);
  position: relative; }
.rec > .fold, .rec > .md { flex: 1 1 0; min-width: 0; }
.rec > .msg-head { flex: 1 1 0; }
.rec > .md { flex-basis: 100%; order: 2; }
.shape-message { padding: var(--s3) var(--s4); border-radius: var(--radius); background: var(--panel);
  border: 1px solid var(--line); max-width: 60rem; }
.shape-message.role-user { background: var(--user-bg); border-color: var(--user-line); align-self: flex-end;
  max-width: min(60rem, 92%); }
.msg-head { display: flex; gap: var(--s2); align-items: baseline; font-size: var(--f-sm); color: var(--muted); }
.msg-head .who { font-weight: 700; color: var(--fg); }
.role-user .msg-head .who { color: var(--accent); }
.hit-tag { background: var(--mark); color: var(--mark-fg); border-radius: 4px; padding: 0 .4em; font-weight: 600; }
.is-hit { outline: 3px solid var(--mark); outline-offset: 2px; scroll-margin-top: 45vh; }
.rec:target { outline: 3px solid var(--mark); outline-offset: 2px; }
.md { overflow-wrap: anywhere; }
.md > :first-child { margin-top: var(--s1); }
.md > :last-child { margin-bottom: 0; }
.md p, .md ul, .md ol, .md blockquote, .md table { margin: var(--s2) 0; }
.md h1, .md h2, .md h3, .md h4 { font-size: var(--f-md); margin: var(--s3) 0 var(--s1); }
.md blockquote { border-left: 3px solid var(--line); padding-left: var(--s3); color: var(--muted); }
.md :not(pre) > code { background: var(--sunk); padding: .1em .3em; border-radius: 4px; }
.md table { display: block; overflow-x: auto; }
.md th, .md td { border: 1px solid var(--line); padding: var(--s1) var(--s2); }
.fold { font-size: var(--f-sm); color: var(--muted); padding: 0 var(--s2); }
.fold > summary { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; padding: .15rem 0; }
.fold[open] > summary { white-space: normal; }
.fold pre, .fold .md { color: var(--fg); font-size: var(--f-base); }
.fold code { font-size: .95em; }
.fold .out { color: var(--muted); white-space: nowrap; }
.fold .out.failed { color: var(--bad); }
.fold pre.input { border-left: 3px solid var(--line); }
.event-line { margin: 0; }
.result-in { display: block; margin: var(--s2) 0 0; padding-left: var(--s3); border-left: 3px solid var(--line); }
.result-head { margin: 0; }
.tag { display: inline-block; font-weight: 600; color: var(--fg); background: var(--sunk); border: 1px solid var(--line);
  border-radius: 4px; padding: 0 .35em; margin-right: .2em; font-size: .95em; }
.thinking .md { font-style: italic; color: var(--muted); }
.quiet { display: none; }
body:has(#show-quiet:checked) .quiet, .quiet.is-hit { display: block; }
/* One small control per record for its raw bytes: shown on hover and on keyboard focus. */
details.raw { font-size: var(--f-sm); color: var(--muted); position: absolute; top: .3rem; right: .4rem; }
details.raw > summary { width: max-content; max-width: 100%; list-style: none; opacity: 0; padding: 0 .35rem;
  border-radius: 4px; background: var(--panel); border: 1px solid var(--line); font-family: var(--mono); }
details.raw > summary::-webkit-details-marker { display: none; }
.rec:hover > details.raw > summary, details.raw > summary:focus-visible, details.raw[open] > summary {
  opacity: 1; }
details.raw > summary:hover, details.raw[open] > summary { color: var(--fg); }
details.raw[open] { position: static; flex-basis: 100%; order: 3; }
.result-in > details.raw { top: 0; }
.esc { color: var(--warn); }
.end { text-align: center; color: var(--muted); margin: var(--s4) 0; }
/* highlight.js */
.hljs-keyword, .hljs-selector-tag, .hljs-built_in, .hljs-literal { color: var(--k); }
.hljs-string, .hljs-regexp, .hljs-addition, .hljs-attribute { color: var(--s); }
.hljs-number, .hljs-symbol, .hljs-variable, .hljs-template-variable { color: var(--n); }
.hljs-comment, .hljs-quote, .hljs-meta { color: var(--c); font-style: italic; }
.hljs-title, .hljs-section, .hljs-type, .hljs-name, .hljs-attr { color: var(--t); }
.hljs-deletion { color: var(--bad); }
/* lists of sessions and projects */
.rows { list-style: none; padding: 0; margin: 0; border: 1px solid var(--line); border-radius: var(--radius); background: var(--panel); }
.rows > li { padding: var(--s2) var(--s3); display: grid; gap: 0 var(--s3); grid-template-columns: minmax(0, 1fr) auto; align-items: baseline; }
.rows > li + li { border-top: 1px solid var(--line); }
.rows .title { font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.rows .meta-line { grid-column: 1 / -1; overflow-wrap: anywhere; }
.rows .side { font-size: var(--f-sm); color: var(--muted); white-space: nowrap; justify-self: end; }
.rows details { grid-column: 1 / -1; font-size: var(--f-sm); }
.rows .actions { grid-column: 1 / -1; margin: var(--s1) 0 0; font-size: var(--f-sm); align-items: center; }
.rows > li.session { grid-template-columns: minmax(0, 1fr) auto; }
.rows > li.session .meta-line { grid-column: 1; align-self: center; }
.rows > li.session .actions { grid-column: 2; margin: 0; flex-wrap: nowrap; gap: var(--s2); justify-content: end; }
.rows > li.session .actions .resume { flex-wrap: nowrap; min-width: 0; }
.rows .actions code.cmd { display: inline-block; max-width: 24rem; min-width: 0; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; vertical-align: middle; }
.rows .rename { position: relative; }
.rows .rename > summary { list-style: none; border: 1px solid var(--line); border-radius: 6px; background: var(--sunk);
  padding: .15rem .5rem; font-weight: 500; }
.rows .rename > summary::-webkit-details-marker { display: none; }
.rows .rename > form { position: absolute; right: 0; top: calc(100% + 4px); z-index: 4; background: var(--panel);
  border: 1px solid var(--line); border-radius: var(--radius); padding: var(--s2); box-shadow: 0 6px 24px rgb(0 0 0 / .18);
  display: flex; gap: var(--s2); align-items: end; }
.rows .actions .resume { display: flex; gap: var(--s2); align-items: center; flex-wrap: wrap; min-width: 0; }
.rows .actions form { align-items: center; }
.rows .actions label { flex-direction: row; align-items: center; gap: var(--s2); }
.rows .actions button { padding: .15rem .5rem; }
.rows .actions input { padding: .15rem .4rem; }
.rows .title a { text-decoration: none; }
.rows .title a:hover { text-decoration: underline; }
form.search .q > label { flex: 1; }
form.search .q > label > input { width: 100%; }
form.search .q:has(> label > input) { align-items: end; }
.actions { display: flex; gap: var(--s2) var(--s4); flex-wrap: wrap; align-items: end; margin: var(--s2) 0; }
.actions form { display: flex; gap: var(--s2); align-items: end; }
progress { width: 20rem; max-width: 100%; height: 1.1rem; }
.stall { color: var(--bad); font-weight: 700; }
.dead { color: var(--muted); }
.warn { color: var(--warn); }
@media (hover: none) {
  details.raw > summary { opacity: 1; }
}
@media (max-width: 760px) {
  html { scroll-padding-top: 7rem; }
  .rec { scroll-margin-top: 7rem; }
  main { padding: var(--s3) var(--s3) var(--s6); }
  header.top { padding: var(--s2) var(--s3); gap: var(--s2); }
  .results { grid-template-columns: minmax(0, 1fr); }
  .results aside { position: static; order: -1; }
  .results aside ul { display: flex; flex-wrap: wrap; gap: var(--s1) var(--s3); }
  .shape-message, .shape-message.role-user { max-width: 100%; padding: var(--s2) var(--s3); }
  .conv-head { padding: var(--s1) 0; }
  .conv-head .head-row { flex-wrap: wrap; gap: var(--s1) var(--s2); }
  .conv-head h1 { flex-basis: 100%; }
  .conv-head .facts { white-space: nowrap; overflow-x: auto; scrollbar-width: none; }
  .conv-head .long { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  .conv-head .actions { width: 100%; }
  .conv-head .menu.export { margin-left: auto; }
  .menu-body { position: fixed; left: var(--s3); right: var(--s3); top: auto; max-width: none; }
  .menu.resume .menu-body { width: auto; }
  .rows > li.session .meta-line, .rows > li.session .actions { grid-column: 1 / -1; }
  .rows > li.session .actions { justify-content: start; flex-wrap: nowrap; margin-top: var(--s1); }
  .rows > li.session .actions .resume { flex: 1 1 auto; }
  .rows .actions code.cmd { max-width: none; flex: 1 1 auto; }
  .pager form { margin-left: 0; }
  th, td { padding-right: var(--s2); }
}
`;

/**
 * The header that marks an answer of `/search/results` (the search page's results alone) and
 * carries the page's title for them, URI-encoded: the script puts only such an answer in place.
 */
export const RESULTS_TITLE_HEADER = "X-Logbook-Title";

/**
 * The script: `/` focuses the search box, j and k move between hits, the box searches as you
 * type, copy buttons, and live capture progress.
 */
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

  // A search sends only the fields that say something: no "project=&agent=&…" in its address.
  document.querySelectorAll("form.search").forEach(function (form) {
    form.addEventListener("formdata", function (event) {
      var empty = [];
      event.formData.forEach(function (value, name) { if (value === "") empty.push(name); });
      empty.forEach(function (name) { event.formData.delete(name); });
    });
  });

  // j and k move between search hits (focusing each one's link, so Enter opens it). The hits are
  // looked up at each key: a search as you type replaces them.
  document.addEventListener("keydown", function (event) {
    if ((event.key !== "j" && event.key !== "k") || event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    var hits = Array.prototype.slice.call(document.querySelectorAll("li.hit"));
    if (!hits.length) return;
    event.preventDefault();
    var current = -1;
    hits.forEach(function (hit, i) { if (hit.classList.contains("current")) current = i; });
    current = event.key === "j" ? Math.min(hits.length - 1, current + 1) : Math.max(0, current - 1);
    hits.forEach(function (hit, i) { hit.classList.toggle("current", i === current); });
    var link = hits[current].querySelector("a.title");
    if (link) link.focus();
    hits[current].scrollIntoView({ block: "nearest" });
  });

  // Search as you type: a pause in typing searches what the box holds as the search screen does
  // (forgive=typing: the word being typed is a prefix), and the answer, rendered by the server as
  // the page renders it (/search/results), takes the place of the results below the box when it
  // comes: the old ones stay until then, and an answer to an older search is dropped. The address
  // follows, so reload and back show the same. Without the script, the form submits as ever.
  var form = document.querySelector("form.search");
  var region = document.getElementById("results");
  var box = document.getElementById("q");
  if (form && region && box && window.fetch && window.URLSearchParams && window.FormData) {
    var timer = null;
    var sequence = 0;
    var pending = null;
    var stop = function () {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      sequence++;
      if (pending) pending.abort();
      pending = null;
    };
    var search = function () {
      stop();
      var mine = sequence;
      var params = new URLSearchParams();
      new FormData(form).forEach(function (value, name) {
        if (typeof value === "string" && value !== "") params.append(name, value);
      });
      if (params.has("q")) params.set("forgive", "typing");
      var query = params.toString();
      var address = "/" + (query ? "?" + query : "");
      pending = typeof AbortController === "function" ? new AbortController() : null;
      region.setAttribute("aria-busy", "true");
      fetch("/search/results" + (query ? "?" + query : ""), {
        credentials: "same-origin",
        headers: { Accept: "text/html" },
        signal: pending ? pending.signal : undefined
      }).then(function (response) {
        if (mine !== sequence) return null;
        var title = response.headers.get("${RESULTS_TITLE_HEADER}");
        // Not the results (the session ended, the server failed): the page itself says why.
        if (title === null) { location.assign(address); return null; }
        return response.text().then(function (html) { return { title: title, html: html }; });
      }).then(function (answer) {
        if (!answer || mine !== sequence) return;
        region.innerHTML = answer.html;
        region.setAttribute("aria-busy", "false");
        document.title = decodeURIComponent(answer.title);
        history.replaceState(null, "", address);
      }, function () {
        if (mine === sequence) region.setAttribute("aria-busy", "false");
      });
    };
    box.addEventListener("input", function () {
      if (timer !== null) clearTimeout(timer);
      timer = setTimeout(search, 150);
    });
    // A filter chosen from a list searches at once; one typed in a field waits for Enter.
    form.addEventListener("change", function (event) {
      var target = event.target;
      if (target && (target.tagName === "SELECT" || target.type === "radio")) search();
    });
    form.addEventListener("submit", stop);
  }

  // Menus (resume, export, rename) close on a click elsewhere and on Escape.
  var menus = function () { return document.querySelectorAll("details.menu[open], details.rename[open]"); };
  document.addEventListener("click", function (event) {
    // A click elsewhere, or on one of the menu's links (an export), closes it.
    var chosen = event.target && event.target.closest && event.target.closest("a");
    menus().forEach(function (menu) {
      if (!menu.contains(event.target) || (chosen && menu.contains(chosen))) menu.removeAttribute("open");
    });
  });
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    menus().forEach(function (menu) {
      var inside = menu.contains(document.activeElement);
      menu.removeAttribute("open");
      var summary = menu.querySelector("summary");
      if (inside && summary) summary.focus();
    });
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

/** A CSP source allowing the inline `text` by its hash. */
function hashSource(text: string): string {
  return `'sha256-${sha256(text).toBase64()}'`;
}

/**
 * The content security policy: this origin only, the inline style and script above by hash,
 * nothing framed, forms posting only here.
 */
export const CSP = [
  "default-src 'self'",
  `script-src ${hashSource(SCRIPT)}`,
  `style-src ${hashSource(STYLE)}`,
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");
