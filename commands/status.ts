#!/usr/bin/env -S deno run -R -W -E
// `status`: logbook on this machine at a glance — where its data is, the store, capture on or
// off and its last result, drift, snapshots, unclosed stage markers and corrupt session records.

import {
  defineCommand,
  EXIT,
  formatBytes,
  formatDuration,
  helpText,
  type Io,
  parseCommand,
  runCommand,
  stdio,
  styler,
} from "../lib/cli.ts";
import { loadContext } from "../lib/context.ts";
import type { Env } from "../lib/env.ts";
import { gatherStatus } from "../lib/status.ts";
import { summaryLine } from "./reindex.ts";
import { safeIo } from "./_terminal/safe_io.ts";
import { safeJson } from "./_terminal/safe_json.ts";
import { safeText } from "./_terminal/safe_text.ts";

export const spec = defineCommand({
  name: "status",
  summary: "logbook on this machine at a glance: store, capture, drift, snapshots, problems",
  usage: "logbook status [--json]",
  options: {
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  optionHelp: [
    ["--json", "print the status as one JSON object"],
    ["-h, --help", "show this help"],
  ],
  examples: ["logbook status"],
  maxPositionals: 0,
});

/** Runs `status`; returns the exit status. */
export async function main(
  args: string[],
  io: Io = stdio(),
  env: Env = Deno.env,
): Promise<number> {
  return await runCommand(spec.name, safeIo(io), async () => {
    const { values } = parseCommand(spec, args);
    if (values.help) {
      io.out(helpText(spec));
      return EXIT.ok;
    }
    const ctx = loadContext({ env });
    const status = await gatherStatus(ctx);
    if (values.json) {
      io.out(safeJson(status) + "\n");
      return EXIT.ok;
    }
    const s = styler(io.color);
    const lines: string[] = [`data dir: ${status.dataDir}`];
    const c = status.capture;
    lines.push(
      `capture: ${c.on ? "on" : `off (${c.offReason})`}, ${c.phase}${
        c.progress
          ? ` — ${c.progress.percent}%${
            c.progress.etaMs !== null ? `, ${formatDuration(c.progress.etaMs)} left` : ""
          }`
          : ""
      }`,
    );
    if (c.latched) {
      lines.push(s.red(`failure: ${safeText(c.latched.message)} (run "logbook reindex --retry")`));
    }
    if (c.lastRun) {
      const when = new Date(c.lastRun.at).toISOString();
      const what = c.lastRun.summary
        ? summaryLine(c.lastRun.summary)
        : safeText(c.lastRun.error ?? "");
      lines.push(`last capture: ${when} ${c.lastRun.ok ? "ok" : s.red("failed")} — ${what}`);
    }
    const store = status.store;
    if (store) {
      lines.push(
        `store: ${formatBytes(store.storeBytes)} (${formatBytes(store.rawBytes)} raw in ${
          store.records.toLocaleString("en-US")
        } records), ${(store.captured.ratio * 100).toFixed(1)}% of present sources captured`,
      );
      const agents = store.conversations.map((a) => `${a.agent} ${a.count}`).join(", ");
      lines.push(`conversations: ${agents || "none"}`);
      const gone = store.conversations.reduce((n, a) => n + a.gone, 0);
      lines.push(
        `sources: ${store.sources}, ${store.sourcesGone} gone upstream (${gone} conversations kept whose source is gone)`,
      );
    } else {
      lines.push('store: none yet (run "logbook reindex")');
    }
    // Drift names, paths and messages come from transcripts: filtered before they are styled.
    for (const d of status.drift) lines.push(s.yellow(`drift: ${safeText(d)}`));
    for (const path of store?.empty ?? []) {
      lines.push(
        s.yellow(`warning: "${safeText(path)}" yielded no conversation from a non-empty file`),
      );
    }
    for (const e of store?.errors ?? []) {
      lines.push(s.red(`source error: "${safeText(e.locator)}": ${safeText(e.message)}`));
    }
    lines.push(
      `snapshots: ${status.snapshots.count} (${
        formatBytes(status.snapshots.bytes)
      }) in prune-archives/`,
    );
    lines.push(`sessions: ${status.sessions.count}`);
    for (const bad of status.sessions.corrupt) {
      lines.push(s.red(`corrupt session record: "${safeText(bad.path)}": ${safeText(bad.reason)}`));
    }
    const markers = status.stageMarkers;
    lines.push(
      `stage markers: ${
        markers.enabled ? "on" : `off (${markers.off ?? "off"})`
      }, ${markers.unclosed.length} unclosed`,
    );
    for (const step of markers.unclosed) {
      const line = `  ${step.step} (pid ${step.pid}, ${step.alive ? "alive" : "dead"}) open ${
        formatDuration(step.openMs)
      }${step.stalled ? " — stall suspected" : ""}`;
      lines.push(step.stalled ? s.red(line) : line);
    }
    io.out(lines.join("\n") + "\n");
    return EXIT.ok;
  });
}

if (import.meta.main) Deno.exit(await main(Deno.args));
