#!/usr/bin/env -S deno run -R -W -E --allow-net --allow-sys=hostname
// `push`: sends this machine's conversations of the allowed projects to the team database on
// PostgreSQL (see lib/team/push.ts for what leaves and how). Silent with --quiet unless
// something is wrong, so cron mails only trouble; --watch pushes every minute until Ctrl-C.

import type { Env } from "../lib/env.ts";
import { loadContext, openStore, redactorFor, storeExists } from "../lib/context.ts";
import { projectOf, resolveFromUser } from "../lib/paths.ts";
import { ADAPTERS } from "../lib/sources/mod.ts";
import { connectTeam, safeUrl, teamError } from "../lib/team/db.ts";
import { planPush, push, type PushSummary, teamCursors } from "../lib/team/push.ts";
import { defineCommand, EXIT, run, shared, UsageError, wholeNumber } from "./_command.ts";
import { teamUrl } from "./_team.ts";
import { type Io, stdio } from "./_terminal/io.ts";
import { safeIo } from "./_terminal/safe_io.ts";
import { formatBytes, plural } from "../lib/format.ts";

export const spec = defineCommand({
  name: "push",
  summary: "send this machine's allowed projects to the team's PostgreSQL history",
  usage: "logbook push [--dry-run] [--watch] [--max-seconds N] [--quiet] [--json]",
  options: {
    "dry-run": { type: "boolean" },
    watch: { type: "boolean" },
    "max-seconds": { type: "string" },
    quiet: { type: "boolean", short: "q" },
    ...shared("json"),
  },
  optionHelp: [
    ["--dry-run", "say what would be sent, per project, and send nothing"],
    ["--watch", "push again every minute until Ctrl-C"],
    ["--max-seconds N", "stop between batches after N seconds (the next push goes on)"],
    ["-q, --quiet", "print nothing unless something is wrong (for cron)"],
    ["--json", "print what was sent (or would be) as JSON"],
  ],
  examples: ["logbook push --dry-run", "logbook push --quiet --max-seconds 50"],
  maxPositionals: 0,
});

/** Runs `push` with `args`; returns the exit status. */
export async function main(
  args: string[],
  terminal: Io = stdio(),
  env: Env = Deno.env,
  stop?: AbortSignal,
): Promise<number> {
  const io = safeIo(terminal);
  return await run(spec, args, io, async ({ values }) => {
    const maxSeconds = wholeNumber(values["max-seconds"], "max-seconds", { min: 1 });
    if (values.watch && values["dry-run"]) {
      throw new UsageError('Options "--watch" and "--dry-run" cannot be used together');
    }
    const ctx = loadContext({ env, onStall: io.err });
    const url = teamUrl(ctx);
    // Records per transaction (default 500): smaller batches lose less to a killed push.
    const batch = /^\d{1,6}$/.test(env.get("LOGBOOK_PUSH_BATCH") ?? "")
      ? Math.max(1, Number(env.get("LOGBOOK_PUSH_BATCH")))
      : undefined;
    const team = ctx.config.team ?? {};
    const machine = team.machine ?? machineName();
    const projects = (team.projects ?? []).map((dir) => projectOf(resolveFromUser(dir, env)).root);
    if (!projects.length) {
      io.err(
        "Nothing to push: no project is allowed to leave this machine. Add their directories to " +
          `"team": {"projects": [...]} in your config (none are by default).\n`,
      );
      return EXIT.ok;
    }
    if (!storeExists(ctx)) {
      io.err('Nothing captured yet: run "logbook reindex" first.\n');
      return EXIT.ok;
    }
    const store = openStore(ctx, { mustExist: true, readOnly: true });
    const sql = await connectTeam(url);
    const signal = stop ?? interrupted();
    try {
      if (values["dry-run"]) {
        let cursors: Map<string, number>;
        try {
          cursors = await teamCursors(sql, machine);
        } catch (err) {
          throw teamError(err, url);
        }
        const plan = planPush(store, projects, cursors);
        if (values.json) io.out(JSON.stringify({ machine, dryRun: true, ...plan }) + "\n");
        else {
          io.out(
            `Would send to ${safeUrl(url)} as "${machine}"${team.raw ? " (raw bytes too)" : ""}:\n`,
          );
          for (const p of plan.perProject) {
            io.out(
              `  ${p.project}: ${plural(p.conversations, "conversation")}, ${
                plural(p.records, "record")
              }\n`,
            );
          }
          io.out(
            `  in all: ${plural(plan.records, "record")}, ${
              formatBytes(plan.bytes)
            } of raw transcript\n`,
          );
        }
        return EXIT.ok;
      }
      for (;;) {
        const started = Date.now();
        let summary: PushSummary;
        try {
          summary = await push({
            store,
            sql,
            adapters: ADAPTERS,
            redact: redactorFor(ctx),
            machine,
            projects,
            raw: team.raw === true,
            ...(batch ? { batchRecords: batch } : {}),
            ...(maxSeconds ? { deadline: started + maxSeconds * 1000 } : {}),
          });
        } catch (err) {
          throw teamError(err, url);
        }
        if (values.json) io.out(JSON.stringify({ machine, ...summary }) + "\n");
        else if (!values.quiet || !summary.complete) io.out(describe(summary, machine) + "\n");
        if (!values.watch) return EXIT.ok;
        if (await sleep(60_000, signal)) return EXIT.ok;
      }
    } finally {
      await sql.end({ timeout: 5 });
      store.close();
    }
  });
}

function describe(s: PushSummary, machine: string): string {
  const sent = s.records
    ? `Sent ${plural(s.records, "record")} of ${plural(s.conversations, "conversation")} (${
      formatBytes(s.bytes)
    })`
    : "Nothing new to send";
  const forgot = s.forgotten ? `; removed ${plural(s.forgotten, "forgotten conversation")}` : "";
  const rest = s.complete ? "" : "; stopped at the time limit: run again to send the rest";
  return `${sent} as "${machine}" from ${s.projects} project${
    s.projects === 1 ? "" : "s"
  }${forgot}${rest}.`;
}

/** This machine's name for the team: its host name, reduced to the characters allowed. */
function machineName(): string {
  let name = "";
  try {
    name = Deno.hostname();
  } catch {
    // No permission to read it: the default below.
  }
  return name.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 64) || "this-machine";
}

function interrupted(): AbortSignal {
  const controller = new AbortController();
  try {
    Deno.addSignalListener("SIGINT", () => controller.abort());
  } catch {
    // Signals unavailable: --watch stops with the process.
  }
  return controller.signal;
}

/** Waits `ms`; true when `signal` stopped the wait. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve(true);
    }, { once: true });
  });
}

if (import.meta.main) Deno.exit(await main(Deno.args));
