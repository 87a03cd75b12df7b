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
import { describeRun, describeUnfinished, gatherStatus } from "../lib/status.ts";
import { sharePercent } from "../lib/store/present_sources.ts";
import { summaryLine } from "./reindex.ts";

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
  return await runCommand(spec.name, io, async () => {
    const { values } = parseCommand(spec, args);
    if (values.help) {
      io.out(helpText(spec));
      return EXIT.ok;
    }
    const ctx = loadContext({ env });
    const status = await gatherStatus(ctx);
    if (values.json) {
      io.out(JSON.stringify(status) + "\n");
      return EXIT.ok;
    }
    const s = styler(io.color);
    const lines: string[] = [`data dir: ${status.dataDir}`];
    const c = status.capture;
    lines.push(
      `capture: ${c.on ? "on" : `off (${c.offReason})`}, ${c.phase}${
        c.progress ? ` — ${describeRun(c.progress, status.store?.captured ?? null)}` : ""
      }`,
    );
    if (c.latched) {
      lines.push(s.red(`failure: ${c.latched.message} (run "logbook reindex --retry")`));
    }
    if (c.lastRun) {
      const when = new Date(c.lastRun.at).toISOString();
      const what = c.lastRun.summary ? summaryLine(c.lastRun.summary) : c.lastRun.error ?? "";
      lines.push(`last capture: ${when} ${c.lastRun.ok ? "ok" : s.red("failed")} — ${what}`);
    }
    const store = status.store;
    if (store) {
      lines.push(
        `store: ${formatBytes(store.storeBytes)} (${formatBytes(store.rawBytes)} raw in ${
          store.records.toLocaleString("en-US")
        } records), ${sharePercent(store.captured.ratio)} of present sources captured (${
          formatBytes(store.captured.bytes)
        } of ${formatBytes(store.captured.of)})`,
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
    for (const d of status.drift) lines.push(s.yellow(`drift: ${d}`));
    for (const path of store?.empty ?? []) {
      lines.push(s.yellow(`warning: "${path}" yielded no conversation from a non-empty file`));
    }
    for (const u of store?.unfinished ?? []) {
      lines.push(s.yellow(`warning: ${describeUnfinished(u)}`));
    }
    for (const e of store?.errors ?? []) {
      lines.push(s.red(`source error: "${e.locator}": ${e.message}`));
    }
    lines.push(
      `snapshots: ${status.snapshots.count} (${
        formatBytes(status.snapshots.bytes)
      }) in prune-archives/`,
    );
    lines.push(`sessions: ${status.sessions.count}`);
    for (const bad of status.sessions.corrupt) {
      lines.push(s.red(`corrupt session record: "${bad.path}": ${bad.reason}`));
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
