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
import type { StoreCheck } from "../lib/store/check.ts";
import { sharePercent } from "../lib/store/present_sources.ts";
import { summaryLine } from "./reindex.ts";
import { safeIo } from "./_terminal/safe_io.ts";
import { safeJson } from "./_terminal/safe_json.ts";
import { safeText } from "./_terminal/safe_text.ts";

export const spec = defineCommand({
  name: "status",
  summary: "logbook on this machine at a glance: store, capture, drift, snapshots, problems",
  usage: "logbook status [--check] [--json]",
  options: {
    check: { type: "boolean" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  optionHelp: [
    ["--check", "also check the store for damage, name it and say how to recover (exit 1)"],
    ["--json", "print the status as one JSON object"],
    ["-h, --help", "show this help"],
  ],
  examples: ["logbook status --check"],
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
    const status = await gatherStatus(ctx, { check: values.check === true });
    const damaged = status.check?.ok === false;
    if (values.json) {
      io.out(safeJson(status) + "\n");
      return damaged ? EXIT.failure : EXIT.ok;
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
    } else if (damaged) {
      lines.push(s.red("store: cannot be read, it is damaged (see check below)"));
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
    for (const u of store?.unfinished ?? []) {
      lines.push(s.yellow(`warning: ${safeText(describeUnfinished(u))}`));
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
    if (status.check) lines.push(...checkLines(status.check, s));
    else if (values.check) lines.push("check: no store yet, nothing to check");
    io.out(lines.join("\n") + "\n");
    if (damaged) {
      io.err(
        `error: the history store is damaged; see "check" above for what and how to recover\n`,
      );
      return EXIT.failure;
    }
    return EXIT.ok;
  });
}

/** The check's result: `check: ok (…)`, or each damaged part and the way to recover. */
function checkLines(check: StoreCheck, s: ReturnType<typeof styler>): string[] {
  const took = formatDuration(check.ms);
  if (check.ok) return [`check: ok (${check.ran}, ${took})`];
  const lines = [s.red(`check: the store is damaged (${check.ran}, ${took})`)];
  for (const part of check.damaged) {
    lines.push(s.red(`  damaged: ${part.label}`));
    for (const message of part.messages.slice(0, 5)) lines.push(`    ${message}`);
    if (part.messages.length > 5) lines.push(`    … ${part.messages.length - 5} more`);
  }
  lines.push(`recovery: ${check.recovery}`);
  return lines;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
