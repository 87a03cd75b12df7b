#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E
// `stage-markers`: shows the stage-marker log, the last markers or the steps that started and
// never finished, so a stalled or killed step can be found. Only reads.

import type { Env } from "../lib/env.ts";
import { isOff } from "../lib/env.ts";
import { defineCommand, EXIT, run, shared, wholeNumber } from "./_command.ts";
import { type Io, stdio, styler } from "./_terminal/io.ts";
import { formatDuration } from "../lib/format.ts";
import { type Marker, stageMarkersLocation } from "../lib/stage_markers.ts";
import { readMarkers, unclosed, type UnclosedStep } from "../lib/stage_markers_read.ts";

/** Markers shown when `--tail` is not given. */
const DEFAULT_TAIL = 20;

export const spec = defineCommand({
  name: "stage-markers",
  summary: "show recent stage markers, or the steps that never finished",
  options: {
    unclosed: {
      type: "boolean",
      help: "steps that started and never finished: pid, alive or dead, open how long",
    },
    tail: {
      type: "string",
      value: "N",
      help: `the last N markers (default ${DEFAULT_TAIL}); with --unclosed, the N latest steps`,
    },
    ...shared({ json: "one JSON object per marker (or open step), one per line" }),
  },
  examples: ["logbook stage-markers --unclosed"],
  maxPositionals: 0,
  permissions: { read: true, write: true, env: true },
});

/** Runs `stage-markers` with `args`; returns the exit status. */
export async function main(
  args: string[],
  io: Io = stdio(),
  env: Env = Deno.env,
  now: () => number = Date.now,
): Promise<number> {
  return await run(spec, args, io, async ({ values }) => {
    const tail = wholeNumber(values.tail, "tail");
    const { path } = stageMarkersLocation(env);
    if (isOff(env.get("LOGBOOK_STAGE_MARKERS"))) {
      io.err("note: stage markers are off (LOGBOOK_STAGE_MARKERS=0): nothing new is recorded\n");
    }
    if (values.unclosed) {
      const open = await unclosed(path, { now: now() });
      const shown = tail === undefined ? open : open.slice(-tail);
      if (values.json) { for (const step of shown) io.out(JSON.stringify(step) + "\n"); }
      else if (!shown.length) io.err("No unclosed steps\n");
      else for (const step of shown) io.out(renderOpen(step, io));
      return EXIT.ok;
    }
    const markers = await readMarkers(path, { tail: tail ?? DEFAULT_TAIL });
    if (values.json) { for (const marker of markers) io.out(JSON.stringify(marker) + "\n"); }
    else if (!markers.length) io.err(`No stage markers in "${path}"\n`);
    else for (const marker of markers) io.out(renderMarker(marker, io));
    return EXIT.ok;
  });
}

function renderMarker(marker: Marker, io: Io): string {
  const s = styler(io.color);
  const event = marker.event === "finish"
    ? s.green(marker.event.padEnd(6))
    : marker.event === "fail"
    ? s.red(marker.event.padEnd(6))
    : marker.event === "stall"
    ? s.yellow(marker.event.padEnd(6))
    : marker.event.padEnd(6);
  const detail = [
    marker.ms === undefined ? "" : formatDuration(marker.ms),
    marker.error === undefined ? "" : marker.code ? `${marker.error} ${marker.code}` : marker.error,
  ].filter(Boolean).join("  ");
  const columns = [
    s.dim(clock(marker.time)),
    `pid ${marker.pid}`.padEnd(10),
    s.cyan(marker.op),
    s.bold(marker.step),
    event,
    detail,
  ];
  return columns.join("  ").trimEnd() + "\n";
}

function renderOpen(step: UnclosedStep, io: Io): string {
  const s = styler(io.color);
  const state = step.alive ? s.green("alive") : s.red("dead");
  const flag = step.alive && (step.stalled || step.stallReported)
    ? `  ${s.yellow("stall suspected")}`
    : "";
  return `${s.bold(step.step)}  op ${s.cyan(step.op)}  pid ${step.pid} ${state}  open ${
    formatDuration(step.openMs)
  } (since ${clock(step.started)})${flag}\n`;
}

/** `2025-01-02 10:11:12.345Z`: the stored UTC time, readable. */
function clock(time: string): string {
  return time.replace("T", " ");
}

if (import.meta.main) Deno.exit(await main(Deno.args));
