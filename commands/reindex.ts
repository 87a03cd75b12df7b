#!/usr/bin/env -S deno run -R -W -E
// `reindex`: captures what is new in every agent's transcripts into the history store. Safe
// under cron (a lock, a time limit, silence when all is well).

import type { Env } from "../lib/env.ts";
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
  UsageError,
  wholeNumber,
} from "../lib/cli.ts";
import { type CaptureRunResult, runCapture } from "../lib/capture/run.ts";
import { type Context, loadContext, openStore, redactorFor } from "../lib/context.ts";
import type { Progress } from "../lib/capture/progress.ts";
import type { CaptureSummary } from "../lib/capture/summary.ts";
import { describeDrift } from "../lib/store/status.ts";
import { captureState, describeRun, describeUnfinished, progressView } from "../lib/status.ts";
import { sharePercent } from "../lib/store/present_sources.ts";
import { watch } from "../lib/capture/watch.ts";
import { safeIo } from "./_terminal/safe_io.ts";
import { safeJson } from "./_terminal/safe_json.ts";
import { safeText } from "./_terminal/safe_text.ts";

export const spec = defineCommand({
  name: "reindex",
  summary: "capture new transcript records into the history store",
  usage: "logbook reindex [--rebuild] [--retry] [--status] [--max-seconds N] [--quiet] [--json]",
  options: {
    rebuild: { type: "boolean" },
    retry: { type: "boolean" },
    status: { type: "boolean" },
    watch: { type: "boolean" },
    "max-seconds": { type: "string" },
    quiet: { type: "boolean", short: "q" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  optionHelp: [
    ["--rebuild", "drop the text index and conversations, rebuild them from the raw records"],
    ["--retry", "clear a latched failure (a failed rebuild or migration) and try again"],
    ["--status", "print phase, counts, sizes, the share captured and the last run's result"],
    ["--watch", "keep running, capturing as transcripts change (Ctrl-C or SIGTERM stops it)"],
    [
      "--max-seconds N",
      "stop cleanly at a batch boundary after N seconds (cursors stay consistent)",
    ],
    ["-q, --quiet", "print nothing unless there is a warning or an error (for cron)"],
    ["--json", "print the summary (or the status) as JSON"],
    ["-h, --help", "show this help"],
  ],
  examples: ["logbook reindex --quiet --max-seconds 50"],
  maxPositionals: 0,
});

/** Runs `reindex` with `args`; returns the exit status. */
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
    const maxSeconds = wholeNumber(values["max-seconds"] as string | undefined, "max-seconds");
    const ctx = loadContext({ env });
    if (values.status) return printStatus(ctx, io, values.json === true);

    if (values.watch && (values.rebuild || maxSeconds)) {
      throw new UsageError(
        'Option "--watch" cannot be combined with "--rebuild" or "--max-seconds"',
      );
    }
    const store = openStore(ctx);
    const controller = new AbortController();
    const stop = () => controller.abort();
    const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
    for (const signal of signals) Deno.addSignalListener(signal, stop);
    const bar = !values.quiet && !values.json && io.errIsTerminal ? progressBar(io) : null;
    if (values.watch) {
      try {
        return await watchMode(ctx, store, controller.signal, io, values);
      } finally {
        for (const signal of signals) Deno.removeSignalListener(signal, stop);
        store.close();
      }
    }
    try {
      const result = await runCapture({
        ctx,
        store,
        redact: redactorFor(ctx),
        rebuild: values.rebuild === true,
        retry: values.retry === true,
        signal: controller.signal,
        ...(maxSeconds ? { maxSeconds } : {}),
        ...(bar ? { onProgress: bar.update } : {}),
      });
      bar?.clear();
      return report(result, io, { quiet: values.quiet === true, json: values.json === true });
    } finally {
      bar?.clear();
      for (const signal of signals) Deno.removeSignalListener(signal, stop);
      store.close();
    }
  });
}

function report(
  result: CaptureRunResult,
  io: Io,
  options: { quiet: boolean; json: boolean },
): number {
  const s = styler(io.color);
  switch (result.status) {
    case "busy": {
      const who = result.holder ? `pid ${result.holder.pid}` : "another process";
      if (options.json) {
        io.out(JSON.stringify({ status: "busy", pid: result.holder?.pid ?? null }) + "\n");
      } else if (!options.quiet) io.out(`Another capture is running (${who}); nothing to do\n`);
      return EXIT.ok;
    }
    case "off":
      if (options.json) io.out(JSON.stringify({ status: "off", reason: result.reason }) + "\n");
      else if (!options.quiet) {
        io.out(`Capture is switched off (${result.reason}); nothing was captured\n`);
      }
      return EXIT.ok;
    case "latched":
      io.err(
        `error: capture stopped after a failure on ${new Date(result.failure.at).toISOString()}: ${
          safeText(result.failure.message)
        }\n` +
          `Fix the cause, then run "logbook reindex --retry".\n`,
      );
      return EXIT.failure;
    case "captured": {
      const { summary } = result;
      if (options.json) {
        io.out(safeJson({ status: "captured", rebuilt: result.rebuilt, ...summary }) + "\n");
      } else if (!options.quiet) {
        if (result.rebuilt !== null) {
          io.out(`Rebuilt the index and conversations from ${result.rebuilt} raw records\n`);
        }
        io.out(summaryLine(summary) + "\n");
      }
      for (const line of warnings(summary)) io.err(`${s.yellow("warning:")} ${line}\n`);
      for (const e of summary.errors) {
        io.err(`${s.red("error:")} ${sourceError(e)}\n`);
      }
      return summary.errors.length ? EXIT.failure : EXIT.ok;
    }
  }
}

async function watchMode(
  ctx: Context,
  store: ReturnType<typeof openStore>,
  signal: AbortSignal,
  io: Io,
  options: { quiet?: boolean; json?: boolean; retry?: boolean },
): Promise<number> {
  const s = styler(io.color);
  if (!options.quiet && !options.json) {
    io.err("Watching for new transcript records (Ctrl-C stops)\n");
  }
  await watch({
    ctx,
    store,
    redact: redactorFor(ctx),
    signal,
    retry: options.retry === true,
    onCapture: (summary) => {
      if (options.json) io.out(safeJson({ status: "captured", ...summary }) + "\n");
      else if (!options.quiet && summary.records) io.out(summaryLine(summary) + "\n");
      for (const line of warnings(summary)) io.err(`${s.yellow("warning:")} ${line}\n`);
      for (const e of summary.errors) {
        io.err(`${s.red("error:")} ${sourceError(e)}\n`);
      }
    },
    onNote: (note) => {
      if (!options.quiet) io.err(`${safeText(note)}\n`);
    },
  });
  return EXIT.ok;
}

/** The one-line summary printed after a capture. */
export function summaryLine(summary: CaptureSummary): string {
  const parts = [
    `Captured ${count(summary.records, "new record")}`,
    `(${count(summary.conversations, "new conversation")})`,
    `from ${summary.changed} of ${count(summary.sources, "source")},`,
    `${formatBytes(summary.bytes)} in ${formatDuration(summary.ms)}`,
  ];
  let line = parts.join(" ");
  if (summary.stoppedBy === "deadline") {
    line += "; stopped at the time limit, the rest follows next run";
  }
  if (summary.stoppedBy === "signal") line += "; stopped on request, the rest follows next run";
  if (summary.stoppedBy === "ingest-off") line += "; stopped because capture was switched off";
  if (summary.gone) line += `; ${count(summary.gone, "source")} gone upstream (records kept)`;
  return line;
}

/**
 * Warning lines for a capture: drift, empty sources, new generations, skipped files. Ready for a
 * terminal: drift names and paths come from the transcripts, so each line passes the filter.
 */
export function warnings(summary: CaptureSummary): string[] {
  const lines = summary.drift.map(describeDrift);
  for (const path of summary.empty) {
    lines.push(`"${path}" yielded no conversation from a non-empty file`);
  }
  for (const skipped of Object.entries(summary.skipped)) {
    lines.push(`${count(skipped[1], "file")} skipped: ${skipped[0]}`);
  }
  return lines.map((line) => safeText(line));
}

/** The line for a source that could not be read, its parts filtered. */
export function sourceError(e: { locator: string; message: string }): string {
  return `cannot read "${safeText(e.locator)}": ${safeText(e.message)}`;
}

function count(n: number, noun: string): string {
  return `${n.toLocaleString("en-US")} ${noun}${n === 1 ? "" : "s"}`;
}

function progressBar(io: Io) {
  let last = 0;
  let shown = false;
  return {
    update(p: Progress) {
      if (p.phase === "rebuilding") {
        shown = true;
        io.err("\rRebuilding the index and conversations from the raw records…\x1b[K");
        return;
      }
      const now = Date.now();
      if (now - last < 100 || p.phase !== "capturing") return;
      last = now;
      shown = true;
      const view = progressView(p, now);
      const width = 24;
      const filled = Math.round((view.percent / 100) * width);
      const eta = view.etaMs !== null ? formatDuration(view.etaMs) : "…";
      io.err(
        `\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${view.percent}% ` +
          `${p.sourcesDone}/${p.sourcesTotal} sources ${formatBytes(p.bytesDone)}/${
            formatBytes(p.bytesTotal)
          } ${eta} left\x1b[K`,
      );
    },
    clear() {
      if (shown) io.err("\r\x1b[K");
      shown = false;
    },
  };
}

function printStatus(ctx: Context, io: Io, json: boolean): number {
  const { capture, store: status } = captureState(ctx);
  const on = capture.on ? "on" : "off";
  if (status === null) {
    const empty = { store: null, capture: on, offReason: capture.offReason, phase: "never run" };
    io.out(
      json ? JSON.stringify(empty) + "\n" : `No history captured yet in "${ctx.paths.root}"\n`,
    );
    return EXIT.ok;
  }
  const { phase, offReason, latched } = capture;
  if (json) {
    io.out(safeJson({ phase, capture: on, offReason, latched, ...status }) + "\n");
    return EXIT.ok;
  }
  const lines: string[] = [];
  let phaseLine = `phase: ${phase}`;
  const p = capture.progress;
  if (p) phaseLine += ` (${describeRun(p, status.captured)})`;
  lines.push(phaseLine);
  if (latched) lines.push(`failure: ${latched.message} (run "logbook reindex --retry")`);
  lines.push(`capture: ${capture.on ? "on" : `off (${offReason})`}`);
  lines.push(
    `store: ${status.path}, ${formatBytes(status.storeBytes)} on disk for ${
      formatBytes(status.rawBytes)
    } raw in ${count(status.records, "record")}`,
  );
  lines.push(
    `sources: ${status.sources} (${status.sourcesGone} gone upstream), ${
      sharePercent(status.captured.ratio)
    } captured (${formatBytes(status.captured.bytes)} of ${formatBytes(status.captured.of)})`,
  );
  const convs = status.conversations.map((c) =>
    `${c.agent} ${c.count}${c.gone ? ` (${c.gone} with source gone)` : ""}`
  );
  lines.push(`conversations: ${convs.length ? convs.join(", ") : "none"}`);
  if (status.multiGeneration) {
    lines.push(
      `generations: ${
        count(status.multiGeneration, "source")
      } replaced or rewritten (old records kept)`,
    );
  }
  for (const d of status.drift) lines.push(`drift: ${describeDrift(d)}`);
  for (const path of status.empty) lines.push(`warning: "${path}" yielded no conversation`);
  for (const u of status.unfinished) lines.push(`warning: ${describeUnfinished(u)}`);
  for (const e of status.errors) lines.push(`error: "${e.locator}": ${e.message}`);
  const last = capture.lastRun;
  if (last) {
    const when = new Date(last.at).toISOString();
    lines.push(
      `last run: ${when} ${last.ok ? "ok" : "failed"}${
        last.summary ? ` — ${summaryLine(last.summary)}` : last.error ? ` — ${last.error}` : ""
      }`,
    );
  } else lines.push("last run: never");
  // No styling here, and every line may carry transcript text: the whole report is filtered.
  io.out(safeText(lines.join("\n"), { multiline: true }) + "\n");
  return EXIT.ok;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
