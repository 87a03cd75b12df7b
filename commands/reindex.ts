#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E --allow-run=git
// `reindex`: captures what is new in every agent's transcripts into the history store. Safe
// under cron (a lock, a time limit, silence when all is well).

import type { Env } from "../lib/env.ts";
import { type CaptureRunResult, runCapture, whyNotCaptured } from "../lib/capture/run.ts";
import { type Context, loadContext, openStore, redactorFor } from "../lib/context.ts";
import { captureState } from "../lib/status.ts";
import { watch } from "../lib/capture/watch.ts";
import {
  defineCommand,
  EXIT,
  run,
  shared,
  STOP_SIGNALS,
  UsageError,
  wholeNumber,
} from "./_command.ts";
import { sourceError, STOPPED, summaryLine, warnings } from "./_terminal/capture_report.ts";
import { type Io, stdio, styler } from "./_terminal/io.ts";
import { progressBar, rebuildLines } from "./_terminal/progress.ts";
import { safeIo } from "./_terminal/safe_io.ts";
import { safeJson } from "../lib/safe_json.ts";
import { safeText } from "../lib/safe_text.ts";
import { captureLines } from "./_terminal/status_view.ts";

export const spec = defineCommand({
  name: "reindex",
  summary: "capture new transcript records into the history store",
  options: {
    rebuild: {
      type: "boolean",
      help: "drop the text index and conversations, rebuild them from the raw records",
    },
    retry: {
      type: "boolean",
      help: "clear a latched failure (a failed rebuild or migration) and try again",
    },
    status: {
      type: "boolean",
      help: "print phase, counts, sizes, the share captured and the last run's result",
    },
    watch: {
      type: "boolean",
      help: "keep running, capturing as transcripts change (Ctrl-C or SIGTERM stops it)",
    },
    "max-seconds": {
      type: "string",
      value: "N",
      help: "stop cleanly at a batch boundary after N seconds (cursors stay consistent)",
    },
    quiet: {
      type: "boolean",
      short: "q",
      help: "print nothing unless there is a warning or an error (for cron)",
    },
    ...shared({ json: "print the summary (or the status) as JSON" }),
  },
  examples: ["logbook reindex --quiet --max-seconds 50"],
  maxPositionals: 0,
  permissions: { read: true, write: true, env: true, run: ["git"] },
  embed: [
    "lib/capture/batch_worker.ts",
    "lib/capture/known_worker.ts",
    "lib/store/_check_worker.ts",
    "lib/store/_scan_worker.ts",
  ],
});

/** Runs `reindex` with `args`; returns the exit status. */
export async function main(
  args: string[],
  io: Io = stdio(),
  env: Env = Deno.env,
): Promise<number> {
  return await run(spec, args, safeIo(io), async ({ values }) => {
    const maxSeconds = wholeNumber(values["max-seconds"], "max-seconds");
    const ctx = loadContext({ env, onStall: io.err, onWarning: io.err });
    if (values.status) return printStatus(ctx, io, values.json === true);

    if (values.watch && (values.rebuild || maxSeconds)) {
      throw new UsageError(
        'Option "--watch" cannot be combined with "--rebuild" or "--max-seconds"',
      );
    }
    const store = openStore(ctx);
    const controller = new AbortController();
    const stop = () => controller.abort();
    for (const signal of STOP_SIGNALS) Deno.addSignalListener(signal, stop);
    const shown = !values.quiet && !values.json;
    const bar = shown && io.errIsTerminal ? progressBar(io) : null;
    // Off a terminal (a log), a rebuild, which takes minutes on a large store, says how it goes.
    const lines = shown && !bar && values.rebuild
      ? rebuildLines(io, { intervalMs: progressInterval(env) })
      : null;
    if (values.watch) {
      try {
        return await watchMode(ctx, store, controller.signal, io, values);
      } finally {
        for (const signal of STOP_SIGNALS) Deno.removeSignalListener(signal, stop);
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
        ...(bar ? { onProgress: bar.update } : lines ? { onProgress: lines } : {}),
      });
      bar?.clear();
      return report(result, io, {
        quiet: values.quiet === true,
        json: values.json === true,
        rebuild: values.rebuild === true,
      });
    } finally {
      bar?.clear();
      for (const signal of STOP_SIGNALS) Deno.removeSignalListener(signal, stop);
      store.close();
    }
  });
}

function report(
  result: CaptureRunResult,
  io: Io,
  options: { quiet: boolean; json: boolean; rebuild: boolean },
): number {
  const s = styler(io.color);
  switch (result.status) {
    case "busy":
      if (options.json) {
        io.out(JSON.stringify({ status: "busy", pid: result.holder?.pid ?? null }) + "\n");
      } else if (!options.quiet) io.out(`${whyNotCaptured(result)}; nothing to do\n`);
      return EXIT.ok;
    case "off":
      if (options.json) io.out(JSON.stringify({ status: "off", reason: result.reason }) + "\n");
      else if (!options.quiet) io.out(`${whyNotCaptured(result)}; nothing was captured\n`);
      return EXIT.ok;
    case "latched":
      io.err(
        `error: ${safeText(whyNotCaptured(result))}\n` +
          `Fix the cause, then run "logbook reindex --retry".\n`,
      );
      return EXIT.failure;
    case "captured": {
      const { summary } = result;
      const stopped = summary.stoppedBy === "signal";
      if (options.json) {
        io.out(
          safeJson({
            status: "captured",
            rebuilt: result.rebuilt,
            rederived: result.rederived,
            ...summary,
          }) + "\n",
        );
      } else if (stopped && options.rebuild && result.rebuilt === null) {
        // Rolled back whole: nothing was captured, and the old index still answers searches.
        io.err(`Rebuild ${STOPPED} (the index and conversations are as they were)\n`);
      } else if (options.quiet && stopped) {
        io.err(`Capture ${STOPPED}\n`);
      } else if (!options.quiet) {
        if (result.rebuilt !== null) {
          io.out(`Rebuilt the index and conversations from ${result.rebuilt} raw records\n`);
        }
        if (result.rederived) {
          io.out(
            `Derived ${result.rederived} stored sources again, as this build's adapters derive ` +
              "them\n",
          );
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

/** How often a rebuild's plain progress line is written: `LOGBOOK_PROGRESS_MS`, or 10 s. */
function progressInterval(env: Env): number {
  const value = env.get("LOGBOOK_PROGRESS_MS");
  if (value === undefined || value === "") return 10_000;
  if (!/^\d+$/.test(value)) {
    throw new UsageError(
      `Expected LOGBOOK_PROGRESS_MS to be a whole number of milliseconds: got "${value}"`,
    );
  }
  return Number(value);
}

/** `--status`: capture's state and the store, as `status` shows them (or as JSON). */
function printStatus(ctx: Context, io: Io, json: boolean): number {
  const state = captureState(ctx);
  const { capture, store: status } = state;
  const on = capture.on ? "on" : "off";
  if (json) {
    if (status === null) {
      const empty = { store: null, capture: on, offReason: capture.offReason, phase: "never run" };
      io.out(JSON.stringify(empty) + "\n");
    } else {
      const { phase, offReason, latched } = capture;
      io.out(safeJson({ phase, capture: on, offReason, latched, ...status }) + "\n");
    }
    return EXIT.ok;
  }
  const lines = captureLines({ dataDir: ctx.paths.root, ...state }, styler(io.color));
  io.out(lines.join("\n") + "\n");
  return EXIT.ok;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
