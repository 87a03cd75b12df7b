// The status page (`/status`): capture on or off, its progress with percentage and time left
// while it runs, a button that starts one, the store's size and counts, a check of the store for
// damage on request, format drift, snapshots, and unclosed stage markers with stalls highlighted.

import { Hono } from "hono";
import { z } from "zod";
import { html } from "hono/html";
import { formatBytes, formatCount, formatDuration, tilde } from "../../lib/format.ts";
import type { LastRun } from "../../lib/capture/switch.ts";
import { homeDir } from "../../lib/paths.ts";
import type { UnclosedStep } from "../../lib/stage_markers_read.ts";
import type { StoreCheck } from "../../lib/store/check.ts";
import type { MigrationProgress } from "../../lib/store/batched_migration.ts";
import type { CaptureSummary } from "../../lib/capture/summary.ts";
import { type CapturedShare, sharePercent } from "../../lib/store/present_sources.ts";
import { driftByVersion } from "../../lib/store/status.ts";
import { startReindex } from "../api/reindex.ts";
import type { RunView } from "../_capture.ts";
import type { AppEnv, Route } from "../_deps.ts";
import { ApiError } from "../_errors.ts";
import { parseQuery, queryFlag } from "../_input.ts";
import { type ProgressView, type StatusView, statusView } from "../_status.ts";
import { type Html, layout, notice, time } from "./layout.ts";

const query = z.object({ check: queryFlag.optional() });

/**
 * The routes: the page (`?check=1` also checks the store for damage), and the form that starts
 * a capture (then back to the page).
 */
export const statusPageRoute: Route = (svc) =>
  new Hono<AppEnv>()
    .get("/status", async (c) => {
      const { check } = parseQuery(c, query);
      const status = await statusView(svc, { check: check === true });
      return c.html(layout("Status", "status", page(status, homeDir(svc.ctx.env))));
    })
    .post("/status/reindex", (c) => {
      try {
        startReindex(svc);
      } catch (err) {
        // Capture switched off: the page says so.
        if (!(err instanceof ApiError) || err.status !== 409) throw err;
      }
      return c.redirect("/status", 303);
    });

function page(s: StatusView, home: string | undefined): Html {
  return html`
    <h1>Status</h1>
    ${capture(s)}
    ${store(s, home)}
    ${checkSection(s.check)}
    ${drift(s)}
    <section aria-labelledby="snapshots-h">
      <h2 id="snapshots-h">Snapshots</h2>
      <p>${s.snapshots.count} snapshot${s.snapshots.count === 1 ? "" : "s"}, ${formatBytes(
        s.snapshots.bytes,
      )} (plain-text copies taken before compaction)</p>
    </section>
    ${markers(s)}
  `;
}

function capture(s: StatusView): Html {
  const c = s.capture;
  const state = c.on ? "Capture is on" : `Capture is switched off (${c.offReason})`;
  return html`<section aria-labelledby="capture-h" data-running="${c.running ? "1" : "0"}">
<h2 id="capture-h">Capture</h2>
<p>${state}. Phase: <strong>${c.phase}</strong>.</p>
${c.latched ? notice(`Capture stopped after a failure: ${c.latched.message}`, "error") : ""}
${s.store?.migration ? migrationLine(s.store.migration) : ""}
${c.running ? progress(c.progress, s.store?.captured ?? null) : ""}
${c.run ? runLine(c.run) : ""}
${s.store?.lastRun ? lastRunLine(s.store.lastRun as LastRun) : ""}
<form method="post" action="/status/reindex">
<button type="submit"${
    c.on && !c.running ? "" : html`
      disabled
    `
  }>Capture now</button>
</form>
</section>`;
}

/** A batched migration under way: its phase, share done and time left. */
function migrationLine(m: MigrationProgress): Html {
  const value = Math.floor(m.share * 1000) / 10;
  const phase = m.phase === "copy" ? "copying" : m.phase === "verify" ? "verifying" : "failed";
  const left = m.leftMs === null ? "" : `, about ${formatDuration(m.leftMs)} left`;
  return html`<p><label for="migration-progress">Migrating the store (${m.name}, ${phase})</label>
<progress id="migration-progress" max="100" value="${value}">${value}%</progress>
<span>${value}% done${left}; searches use the old index until it is verified</span></p>`;
}

function progress(p: ProgressView | null, captured: CapturedShare | null): Html {
  if (p?.phase === "rebuilding") {
    // A rebuild is one transaction that other connections cannot see into: no percentage.
    return html`<p><label for="capture-progress">Rebuilding</label>
<progress id="capture-progress" max="100"></progress>
<span id="capture-progress-text" aria-live="polite">${describeProgress(p, captured)}</span></p>`;
  }
  // The bar shows the share of everything captured, the figure the store's table shows.
  const value = captured ? Math.floor(captured.ratio * 1000 + 1e-9) / 10 : 0;
  return html`<p><label for="capture-progress">Captured</label>
<progress id="capture-progress" max="100" value="${value}">${value}%</progress>
<span id="capture-progress-text" aria-live="polite">${describeProgress(p, captured)}</span></p>`;
}

/** `97.3% captured · 3 of 9 sources · about 12.0 s left` (the script writes the same). */
export function describeProgress(p: ProgressView | null, captured: CapturedShare | null): string {
  if (p?.phase === "rebuilding") {
    return "deriving the index and conversations again from the raw records";
  }
  const share = captured ? `${sharePercent(captured.ratio)} captured` : "starting";
  if (!p) return share;
  const eta = p.etaMs === null ? "estimating time left" : `about ${formatDuration(p.etaMs)} left`;
  return `${share} · ${p.sourcesDone} of ${p.sourcesTotal} sources · ${eta}`;
}

function runLine(run: RunView): Html {
  const when = html`started ${time(run.startedAt)}`;
  if (run.state === "running") return html`<p>A capture started here is running (${when}).</p>`;
  const what = run.summary ? summaryText(run.summary) : run.message ?? run.outcome ?? "";
  return html`<p${
    run.state === "failed"
      ? html`
        class="warn"
      `
      : ""
  }>The last capture started here ${
    run.state === "failed" ? "failed" : "finished"
  } (${when}): ${what}</p>`;
}

function lastRunLine(last: LastRun): Html {
  const at = new Date(last.at).toISOString();
  const what = last.summary ? summaryText(last.summary) : last.error ?? "";
  return html`<p class="muted">Last run (${last.by ?? "any process"}): ${time(at)}, ${
    last.ok ? "ok" : "with errors"
  }. ${what}</p>`;
}

function summaryText(s: CaptureSummary): string {
  const stopped = s.stoppedBy ? `; stopped (${s.stoppedBy}), the rest follows next run` : "";
  return `${s.records} new records (${s.conversations} new conversations) from ${s.changed} of ${s.sources} sources, ${
    formatBytes(s.bytes)
  } in ${formatDuration(s.ms)}${stopped}`;
}

function store(s: StatusView, home: string | undefined): Html {
  const st = s.store;
  if (!st && s.check?.ok === false) {
    return html`
      <section aria-labelledby="store-h">
        <h2 id="store-h">History store</h2>
        ${notice("The store cannot be read: it is damaged (see the check below).", "error")}
      </section>
    `;
  }
  if (!st) {
    return html`
      <section aria-labelledby="store-h">
        <h2 id="store-h">History store</h2>
        <p>No history captured yet: start a capture above.</p>
      </section>
    `;
  }
  return html`<section aria-labelledby="store-h"><h2 id="store-h">History store</h2>
<table>
<tr><th scope="row">File</th><td>${tilde(st.path, home)}</td></tr>
<tr><th scope="row">Size on disk</th><td>${formatBytes(st.storeBytes)} (raw bytes kept: ${
    formatBytes(st.rawBytes)
  })</td></tr>
<tr><th scope="row">Records</th><td>${formatCount(st.records)}</td></tr>
<tr><th scope="row">Sources</th><td>${st.sources}${
    st.sourcesGone ? `, ${st.sourcesGone} gone upstream (records kept)` : ""
  }${st.multiGeneration ? `, ${st.multiGeneration} replaced or rewritten` : ""}</td></tr>
<tr><th scope="row">Captured</th><td id="captured-share">${capturedText(st.captured)}</td></tr>
</table>
<table><caption class="muted">Conversations by agent</caption>
<tr><th scope="col">Agent</th><th scope="col" class="num">Conversations</th><th scope="col" class="num">Subagents</th><th scope="col" class="num">Source gone</th></tr>
${
    st.conversations.map((c) =>
      html`
        <tr>
          <td>${c.agent}</td>
          <td class="num">${c.count - c.subagents}</td>
          <td class="num">${c.subagents}</td>
          <td class="num">${c.gone}</td>
        </tr>
      `
    )
  }
</table>
${
    st.unfinished.length
      ? html`
        <h3>Sources that end in an unfinished line</h3>
        <ul>${st.unfinished.map((u) =>
          html`<li class="warn">${tilde(u.locator, home)}: ${
            formatBytes(u.bytes)
          } without a newline, last written ${time(new Date(u.writtenAt).toISOString())}</li>`
        )}</ul>
      `
      : ""
  }
${
    st.errors.length
      ? html`
        <h3>Sources that could not be read</h3>
        <ul>${st.errors.map((e) =>
          html`<li class="warn">${tilde(e.locator, home)}: ${e.message}</li>`
        )}</ul>
      `
      : ""
  }
${
    st.empty.length
      ? html`
        <h3>Non-empty sources that yielded no conversation</h3>
        <ul>${st.empty.map((p) => html`<li class="warn">${tilde(p, home)}</li>`)}</ul>
      `
      : ""
  }
</section>`;
}

/** `97.3% (14 MB of 104 MB)`: what the store's table and the script show. */
function capturedText(c: CapturedShare): string {
  return `${sharePercent(c.ratio)} (${formatBytes(c.bytes)} of ${formatBytes(c.of)})`;
}

/** The store check: a button that runs it, or what it found and how to recover. */
function checkSection(check: StoreCheck | null): Html {
  const button = html`
    <form method="get" action="/status">
      <input type="hidden" name="check" value="1">
      <button type="submit">${check ? "Check again" : "Check the store for damage"}</button>
    </form>
  `;
  if (!check) {
    return html`<section aria-labelledby="check-h"><h2 id="check-h">Store check</h2>
<p class="muted">Reads every page of the store and its text index (a few seconds on a large store).</p>
${button}</section>`;
  }
  if (check.ok) {
    return html`<section aria-labelledby="check-h"><h2 id="check-h">Store check</h2>
<p id="check-result">No damage found (${check.ran}, ${formatDuration(check.ms)}).</p>
${button}</section>`;
  }
  return html`<section aria-labelledby="check-h"><h2 id="check-h">Store check</h2>
${notice("The store is damaged.", "error")}
<ul id="check-result">${
    check.damaged.map((part) =>
      html`<li class="warn">${part.label}<ul>${
        part.messages.slice(0, 5).map((m) => html`<li><code>${m}</code></li>`)
      }</ul></li>`
    )
  }</ul>
<p><strong>How to recover:</strong> ${check.recovery}</p>
${button}</section>`;
}

/** Drift in one line per agent version (what to do included), the details folded. */
function drift(s: StatusView): Html {
  const summary = driftByVersion(s.store?.drift ?? []);
  return html`<section aria-labelledby="drift-h"><h2 id="drift-h">Format drift</h2>${
    summary.length
      ? html`
        <ul>${summary.map((line) => html`<li class="warn">${line}</li>`)}</ul>
        <details>
          <summary>Every kind of line (${s.drift.length})</summary>
          <ul>${s.drift.map((line) => html`<li>${line}</li>`)}</ul>
        </details>
      `
      : html`<p>No format drift: every record was of a known type.</p>`
  }</section>`;
}

function markers(s: StatusView): Html {
  const m = s.stageMarkers;
  const off = m.enabled ? "" : notice(`Stage markers are off (${m.off ?? "turned off"})`);
  const rows = m.unclosed.map(stepRow);
  return html`<section aria-labelledby="markers-h"><h2 id="markers-h">Unclosed stage markers</h2>
${off}${
    rows.length
      ? html`<table><tr><th scope="col">Step</th><th scope="col">Operation</th><th scope="col">Process</th><th scope="col">Open for</th><th scope="col">Since</th></tr>${rows}</table>`
      : html`<p>No unclosed steps.</p>`
  }</section>`;
}

function stepRow(step: UnclosedStep): Html {
  const stalled = step.alive && (step.stalled || step.stallReported);
  return html`
    <tr${stalled
      ? html`
        class="stall"
      `
      : step.alive
      ? ""
      : html`
        class="dead"
      `}>
      <td>${step.step}${stalled ? " (stall suspected)" : ""}</td>
      <td>${step.op}</td>
      <td>pid ${step.pid}, ${step.alive ? "alive" : "dead"}</td>
      <td>${formatDuration(step.openMs)}</td>
      <td>${time(step.started)}</td>
      </tr>
  `;
}
