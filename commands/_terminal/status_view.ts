// The one rendering of logbook's state on a terminal. `reindex --status` prints the capture part
// (phase, switch, last run, store, sources, conversations, drift, problems); `status` prints the
// same lines and then snapshots, sessions, stage markers and the store check.

import { formatBytes, formatCount, formatDuration, plural } from "../../lib/format.ts";
import type { CaptureState, ProgressView, Status } from "../../lib/status.ts";
import type { StoreCheck } from "../../lib/store/check.ts";
import {
  type CapturedShare,
  sharePercent,
  type UnfinishedLine,
} from "../../lib/store/present_sources.ts";
import { describeDrift } from "../../lib/store/status.ts";
import type { MigrationProgress } from "../../lib/store/batched_migration.ts";
import { summaryLine } from "./capture_report.ts";
import type { Styles } from "./io.ts";
import { safeText } from "../../lib/safe_text.ts";

/** What the capture part shows: capture's state and the store, and where they are. */
export interface CaptureView extends Omit<CaptureState, "damage"> {
  dataDir: string;
  /** A check found the store damaged (the store line then says it cannot be read). */
  damaged?: boolean;
}

/**
 * The capture part, one line each. Every part that came from a transcript or the environment
 * is filtered before it is styled, so the lines are ready for a terminal.
 */
export function captureLines(view: CaptureView, s: Styles): string[] {
  const { capture: c, store } = view;
  const lines = [`data dir: ${safeText(view.dataDir)}`];
  lines.push(
    `phase: ${c.phase}${
      c.progress ? ` (${describeRun(c.progress, store?.captured ?? null)})` : ""
    }`,
  );
  lines.push(`capture: ${c.on ? "on" : `off (${safeText(c.offReason ?? "")})`}`);
  if (store?.migration) lines.push(describeMigration(store.migration));
  if (store?.forgottenInIndexSince) {
    const when = new Date(store.forgottenInIndexSince).toISOString();
    lines.push(
      `text index: still holds the words of what was forgotten at ${when}, found by no search; ${
        c.scrubbing ? "they are being taken out" : 'run "logbook forget --finish" to take them out'
      }`,
    );
  }
  if (c.latched) {
    lines.push(s.red(`failure: ${safeText(c.latched.message)} (run "logbook reindex --retry")`));
  }
  if (c.lastRun) {
    const when = new Date(c.lastRun.at).toISOString();
    // Which command ran it: `reindex --watch` records its passes as cron's `reindex` its runs.
    const by = c.lastRun.by ? `, by ${safeText(c.lastRun.by)}` : "";
    const what = c.lastRun.summary
      ? summaryLine(c.lastRun.summary)
      : safeText(c.lastRun.error ?? "");
    lines.push(
      `last capture: ${when} (${ago(c.lastRun.ageMs)} ago${by}) ${
        c.lastRun.ok ? "ok" : s.red("failed")
      } — ${what}`,
    );
  } else if (store) lines.push("last capture: never");
  if (!store) {
    lines.push(
      view.damaged
        ? s.red("store: cannot be read, it is damaged (see check below)")
        : 'store: none yet (run "logbook reindex")',
    );
    return lines;
  }
  // The raw bytes are what was captured, kept when a source is rewritten or gone (and a
  // compressed one's uncompressed): they may well be more than the sources hold now.
  lines.push(
    `store: ${formatBytes(store.storeBytes)} on disk, holding ${
      formatBytes(store.rawBytes)
    } of transcripts as captured (${plural(store.records, "record")}) and their index`,
  );
  const { captured } = store;
  lines.push(
    `sources: ${store.sources} (${store.sourcesGone} gone upstream); the files still there hold ${
      formatBytes(captured.of)
    }, ${captured.bytes >= captured.of ? "all" : sharePercent(captured.ratio)} of it captured`,
  );
  lines.push(`conversations: ${conversationsText(store.conversations)}`);
  if (store.multiGeneration) {
    lines.push(
      `generations: ${
        plural(store.multiGeneration, "source")
      } replaced or rewritten (old records kept)`,
    );
  }
  // Drift names, paths and messages come from transcripts: filtered before they are styled.
  for (const d of store.drift) lines.push(s.yellow(`drift: ${safeText(describeDrift(d))}`));
  for (const path of store.empty) {
    lines.push(
      s.yellow(`warning: "${safeText(path)}" yielded no conversation from a non-empty file`),
    );
  }
  for (const u of store.unfinished) {
    lines.push(s.yellow(`warning: ${safeText(describeUnfinished(u))}`));
  }
  for (const e of store.errors) {
    lines.push(s.red(`source error: "${safeText(e.locator)}": ${safeText(e.message)}`));
  }
  return lines;
}

/** Conversations of one agent, as the store's status counts them. */
type AgentConversations = { agent: string; count: number; subagents: number; gone: number };

/**
 * `37 conversations, 8 of them subagents` (`noun` false: `37, 8 of them subagents`): every
 * conversation counts, a subagent's too, so the total says how many of them are subagents.
 */
export function conversationTotal(agents: readonly AgentConversations[], noun = true): string {
  const total = agents.reduce((n, a) => n + a.count, 0);
  const subagents = agents.reduce((n, a) => n + a.subagents, 0);
  return `${noun ? plural(total, "conversation") : formatCount(total)}${
    subagents ? `, ${formatCount(subagents)} of them subagents` : ""
  }`;
}

/** `37, 8 of them subagents (claude 29, 2 with source gone; codex 8)`, or `none`. */
function conversationsText(agents: readonly AgentConversations[]): string {
  if (!agents.length) return "none";
  const each = agents.map((a) =>
    `${safeText(a.agent)} ${formatCount(a.count)}${a.gone ? `, ${a.gone} with source gone` : ""}`
  );
  return `${conversationTotal(agents, false)} (${each.join("; ")})`;
}

/**
 * The whole status: the capture part, then snapshots, sessions, stage markers and, when one
 * ran (or was asked for: `checkAsked`), the store check.
 */
export function statusLines(status: Status, s: Styles, checkAsked = false): string[] {
  const lines = captureLines({
    dataDir: status.dataDir,
    capture: status.capture,
    store: status.store,
    damaged: status.check?.ok === false,
  }, s);
  lines.push(
    `snapshots: ${status.snapshots.count} (${
      formatBytes(status.snapshots.bytes)
    }) in prune-archives/`,
  );
  const mirrors = status.store?.mirrors.filter((m) => m.state !== "off") ?? [];
  if (mirrors.length) {
    lines.push(`mirrors: ${mirrors.length}`);
    for (const m of mirrors) {
      const line = `  ${safeText(m.project)}: ${
        m.state === "waiting" ? `waiting: ${safeText(m.reason ?? "")}` : m.state
      }, ${plural(m.conversations, "conversation")}`;
      lines.push(m.state === "waiting" ? s.red(line) : line);
    }
  }
  lines.push(`sessions: ${status.sessions.count}`);
  for (const bad of status.sessions.corrupt) {
    lines.push(s.red(`corrupt session record: "${safeText(bad.path)}": ${safeText(bad.reason)}`));
  }
  const markers = status.stageMarkers;
  lines.push(
    `stage markers: ${
      markers.enabled ? "on" : `off (${safeText(markers.off ?? "off")})`
    }, ${markers.unclosed.length} unclosed`,
  );
  for (const step of markers.unclosed) {
    const line = `  ${safeText(step.step)} (pid ${step.pid}, ${
      step.alive ? "alive" : "dead"
    }) open ${formatDuration(step.openMs)}${step.stalled ? " — stall suspected" : ""}`;
    lines.push(step.stalled ? s.red(line) : line);
  }
  if (status.check) lines.push(...checkLines(status.check, s));
  else if (checkAsked) lines.push("check: no store yet, nothing to check");
  return lines;
}

/** The check's result: `check: ok (…)`, or each damaged part and the way to recover. */
function checkLines(check: StoreCheck, s: Styles): string[] {
  const took = formatDuration(check.ms);
  if (check.ok) return [`check: ok (${check.ran}, ${took})`];
  const lines = [s.red(`check: the store is damaged (${check.ran}, ${took})`)];
  for (const part of check.damaged) {
    lines.push(s.red(`  damaged: ${part.label}`));
    for (const message of part.messages.slice(0, 5)) lines.push(`    ${safeText(message)}`);
    if (part.messages.length > 5) lines.push(`    … ${part.messages.length - 5} more`);
  }
  lines.push(`recovery: ${check.recovery}`);
  return lines;
}

/** `migration: 0008_cjk_bigrams, copying, 42.0% done, 3.0 s left` (or why it failed). */
export function describeMigration(m: MigrationProgress): string {
  const phase = m.phase === "copy" ? "copying" : m.phase === "verify" ? "verifying" : "failed";
  const left = m.leftMs !== null ? `, ${formatDuration(m.leftMs)} left` : "";
  return `migration: ${safeText(m.name)}, ${phase}, ${(m.share * 100).toFixed(1)}% done${left}` +
    " (searches use the old index until it is verified)";
}

/** A running capture: `pid 42, 97.3% captured, 3 of 9 sources, 12.0 s left`, or what a rebuild does. */
export function describeRun(p: ProgressView, captured: CapturedShare | null): string {
  if (p.phase === "rebuilding") {
    return `pid ${p.pid}, deriving the index and conversations again from the raw records`;
  }
  if (p.phase === "migrating") return `pid ${p.pid}, migrating the store in batches`;
  if (p.phase === "rederiving") {
    const eta = p.etaMs !== null ? `, ${formatDuration(p.etaMs)} left` : "";
    return `pid ${p.pid}, deriving ${p.sourcesDone} of ${p.sourcesTotal} sources again with ` +
      `this build's adapters${eta}`;
  }
  const share = captured ? `${sharePercent(captured.ratio)} captured, ` : "";
  const eta = p.etaMs !== null ? `, ${formatDuration(p.etaMs)} left` : "";
  return `pid ${p.pid}, ${share}${p.sourcesDone} of ${p.sourcesTotal} sources${eta}`;
}

/** `"path" ends in an unfinished line (312 B without a newline, last written 3 d ago)`. */
export function describeUnfinished(u: UnfinishedLine): string {
  return `"${u.locator}" ends in an unfinished line (${
    formatBytes(u.bytes)
  } without a newline, last written ${ago(u.ageMs)} ago)`;
}

/** A coarse age: `40 s`, `12 min`, `5 h`, `3 d`. */
function ago(ms: number): string {
  const sec = Math.floor(ms / 1000);
  if (sec < 60) return `${sec} s`;
  if (sec < 3600) return `${Math.floor(sec / 60)} min`;
  if (sec < 86400) return `${Math.floor(sec / 3600)} h`;
  return `${Math.floor(sec / 86400)} d`;
}
