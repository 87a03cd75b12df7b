#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E --allow-run
// `delete-user-data`: after confirmation, stops logbook's running work and deletes all user
// data, reporting path by path. Exit 0 only when everything is gone; config is kept.

import { defineCommand, EXIT, run, shared } from "./_command.ts";
import { type Ask, terminalAsk } from "./_terminal/ask.ts";
import { type Io, stdio, styler } from "./_terminal/io.ts";
import {
  type DeleteReport,
  type DeleteStep,
  deleteUserData,
  projectMirrors,
  userDataSize,
} from "../lib/delete_data.ts";
import { formatBytes, plural } from "../lib/format.ts";
import type { Env } from "../lib/env.ts";
import { configDir, dataDir, dataPaths } from "../lib/paths.ts";

export const spec = defineCommand({
  name: "delete-user-data",
  summary: "stop logbook's running work and delete all its user data (config is kept)",
  options: {
    yes: {
      type: "boolean",
      short: "y",
      help: "do not ask (for scripts); without a terminal it is required",
    },
    ...shared({ json: "print the report as JSON" }),
  },
  examples: ["logbook delete-user-data"],
  maxPositionals: 0,
  permissions: { read: true, write: true, env: true, run: true },
});

/** Runs `delete-user-data` with `args`; returns the exit status. */
export async function main(
  args: string[],
  io: Io = stdio(),
  env: Env = Deno.env,
  ask: Ask | null = terminalAsk(),
): Promise<number> {
  return await run(spec, args, io, async ({ values }) => {
    const paths = dataPaths(dataDir(env), env);
    const mirrors = projectMirrors(paths.historyDb);
    if (!values.yes) {
      if (!ask) {
        io.err(
          "error: refusing to delete without confirmation: there is no terminal to ask on; " +
            "pass --yes to delete anyway\n",
        );
        return EXIT.failure;
      }
      const size = userDataSize(paths, mirrors);
      io.err(
        `This stops logbook's running work and deletes everything it keeps in ${paths.root}:\n` +
          "captured history, sessions, snapshots, stage markers and prompt history" +
          (mirrors.length
            ? `, and ${plural(mirrors.length, "project mirror")} (${sizeOf(size)} in all):\n${
              mirrors.map((path) => `  ${path}\n`).join("")
            }`
            : ` (${sizeOf(size)}).\n`) +
          `Your config in ${configDir(env)} is kept.\n`,
      );
      const answer = ask('Type "delete" to confirm:');
      if (answer?.trim() !== "delete") {
        io.err("Nothing was deleted\n");
        return EXIT.failure;
      }
    }
    const report = await deleteUserData({ paths, mirrors });
    if (values.json) io.out(JSON.stringify(report) + "\n");
    else {
      const s = styler(io.color);
      for (const step of report.steps) io.out(describe(step, s) + "\n");
      io.out(advice(report, paths.root, configDir(env)));
    }
    return report.complete ? EXIT.ok : EXIT.failure;
  });
}

/** The closing line: what is gone, and what to do about what is not. */
function advice(report: DeleteReport, root: string, config: string): string {
  if (report.complete) return `All logbook data is gone. Your config in ${config} was kept.\n`;
  const left = report.steps.filter((step) => step.action === "left").length;
  const failed = report.steps.some((s) => s.action === "not removed" || s.action === "not stopped");
  const foreign = left
    ? `${root} still holds ${plural(left, "entry", "entries")} logbook did not create (see ` +
      `"left" above); ${left === 1 ? "it was" : "they were"} not touched: move or delete ${
        left === 1 ? "it" : "them"
      } yourself, then remove the directory.\n`
    : "";
  if (!failed) {
    return `Everything logbook created is gone. Your config in ${config} was kept.\n${foreign}`;
  }
  return "Some of logbook's data could not be deleted (see above); fix what stopped it and run " +
    `this again.\n${foreign}`;
}

/** `1.2 MB in 9 files`. */
function sizeOf(size: { bytes: number; files: number }): string {
  return `${formatBytes(size.bytes)} in ${plural(size.files, "file")}`;
}

function describe(step: DeleteStep, s: ReturnType<typeof styler>): string {
  const what = step.path ?? `${step.command ?? "process"} (pid ${step.pid})`;
  const reason = step.reason ? `: ${step.reason}` : "";
  const padded = step.action.padEnd(11);
  const label = step.action === "removed" || step.action === "stopped"
    ? s.green(padded)
    : step.action === "not found"
    ? s.dim(padded)
    : s.red(padded);
  return `${label} ${what}${reason}`;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
