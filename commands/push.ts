#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E --allow-net --allow-sys=hostname
// `push`: sends this machine's conversations of the allowed projects to the team database on
// PostgreSQL (see lib/team/push.ts for what leaves and how). Silent with --quiet unless
// something is wrong, so cron mails only trouble; --watch pushes every minute until Ctrl-C.

import type { Env } from "../lib/env.ts";
import { loadContext, openStore, redactorFor, storeExists } from "../lib/context.ts";
import { mapStrings, type Redactor } from "../lib/gate/secrets.ts";
import { projectOf, resolveFromUser } from "../lib/paths.ts";
import { ADAPTERS } from "../lib/sources/mod.ts";
import { connectTeam, migrateTeam, safeUrl, TeamError, teamError } from "../lib/team/db.ts";
import {
  connectForPush,
  planPush,
  push,
  type PushPlan,
  type PushSummary,
} from "../lib/team/push.ts";
import type { HistoryStore } from "../lib/store/db.ts";
import {
  defineCommand,
  EXIT,
  run,
  shared,
  STOP_SIGNALS,
  UsageError,
  wholeNumber,
} from "./_command.ts";
import { teamUrl } from "./_team.ts";
import { type Io, stdio } from "./_terminal/io.ts";
import { safeIo } from "./_terminal/safe_io.ts";
import { formatBytes, formatCount, plural } from "../lib/format.ts";

export const spec = defineCommand({
  name: "push",
  summary: "send this machine's allowed projects to the team's PostgreSQL history",
  options: {
    "dry-run": { type: "boolean", help: "show what would be sent and removed, and send nothing" },
    watch: { type: "boolean", help: "push every minute until Ctrl-C (failed rounds retry later)" },
    interval: {
      type: "string",
      value: "N",
      within: "watch",
      help: "with --watch: push every N seconds instead",
    },
    "max-seconds": {
      type: "string",
      value: "N",
      help: "stop between batches after N seconds (the next push goes on)",
    },
    migrate: {
      type: "boolean",
      help: "update the team schema only (run it as the database's owner)",
    },
    quiet: {
      type: "boolean",
      short: "q",
      help: "print nothing unless something is wrong (for cron)",
    },
    ...shared({ json: "print what was sent (or would be) as JSON" }),
  },
  examples: ["logbook push --dry-run", "logbook push --quiet --max-seconds 50"],
  maxPositionals: 0,
  permissions: { read: true, write: true, env: true, net: true, sys: ["hostname"] },
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
    const interval = wholeNumber(values.interval, "interval", { min: 1 }) ?? 60;
    if (values.interval !== undefined && !values.watch) {
      throw new UsageError('Option "--interval" needs "--watch"');
    }
    const alone = values.migrate ? "migrate" : values.watch ? "watch" : null;
    if (alone && values["dry-run"]) {
      throw new UsageError(`Options "--${alone}" and "--dry-run" cannot be used together`);
    }
    if (values.migrate && values.watch) {
      throw new UsageError('Options "--migrate" and "--watch" cannot be used together');
    }
    const ctx = loadContext({ env, onStall: io.err, onWarning: io.err });
    const url = teamUrl(ctx);
    if (values.migrate) return await migrateOnly(url, io, values.json === true);
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
    const sql = await connectForPush(url);
    const to: Destination = { sql, url, machine, projects, raw: team.raw === true };
    const signal = stop ?? interrupted();
    try {
      if (values["dry-run"]) {
        return await dryRun(io, store, to, redactorFor(ctx), values.json === true);
      }
      return await pushRounds(io, store, to, {
        redact: redactorFor(ctx),
        signal,
        ...(batch ? { batch } : {}),
        ...(maxSeconds ? { maxSeconds } : {}),
        interval,
        watch: values.watch === true,
        json: values.json === true,
        quiet: values.quiet === true,
      });
    } finally {
      await sql.end({ timeout: 5 });
      store.close();
    }
  });
}

/** Where a push goes and what it takes: the team database, this machine, its allowed projects. */
interface Destination {
  sql: Awaited<ReturnType<typeof connectTeam>>;
  url: string;
  machine: string;
  projects: string[];
  /** Raw records too (config's `team.raw`). */
  raw: boolean;
}

/** `--dry-run`: what a push would send and remove, each project as it would be sent. */
async function dryRun(
  io: Io,
  store: HistoryStore,
  to: Destination,
  redact: Redactor,
  json: boolean,
): Promise<number> {
  let plan: PushPlan;
  try {
    // Shown as it would be sent: each project through the gate.
    plan = mapStrings(await planPush(store, to.sql, to.machine, to.projects), redact);
  } catch (err) {
    throw teamError(err, to.url);
  }
  if (json) io.out(JSON.stringify({ machine: to.machine, dryRun: true, ...plan }) + "\n");
  else io.out(describePlan(plan, to.machine, safeUrl(to.url), to.raw));
  return EXIT.ok;
}

/**
 * One push, or with `watch` one every `interval` seconds until the signal: a round that fails
 * for the team database's sake is said and tried again after a wait that doubles (up to
 * `MAX_BACKOFF_SECONDS`).
 */
async function pushRounds(
  io: Io,
  store: HistoryStore,
  to: Destination,
  options: {
    redact: Redactor;
    signal: AbortSignal;
    batch?: number;
    maxSeconds?: number;
    interval: number;
    watch: boolean;
    json: boolean;
    quiet: boolean;
  },
): Promise<number> {
  const { signal, interval } = options;
  let failures = 0;
  for (;;) {
    const started = Date.now();
    let summary: PushSummary;
    try {
      summary = await push({
        store,
        sql: to.sql,
        adapters: ADAPTERS,
        redact: options.redact,
        machine: to.machine,
        projects: to.projects,
        raw: to.raw,
        signal,
        ...(options.batch ? { batchRecords: options.batch } : {}),
        ...(options.maxSeconds ? { deadline: started + options.maxSeconds * 1000 } : {}),
      });
    } catch (err) {
      if (!options.watch || !isTeamTrouble(err)) throw teamError(err, to.url);
      // A watcher outlives a database that is down or refusing: it says so and waits longer.
      failures++;
      const wait = Math.min(
        interval * 2 ** (failures - 1),
        Math.max(interval, MAX_BACKOFF_SECONDS),
      );
      io.err(`error: ${teamError(err, to.url).message}; trying again in ${wait} s\n`);
      if (await sleep(wait * 1000, signal)) return EXIT.ok;
      continue;
    }
    failures = 0;
    if (options.json) io.out(JSON.stringify({ machine: to.machine, ...summary }) + "\n");
    else if (!options.quiet || !summary.complete || summary.newStore) {
      io.out(describe(summary, to.machine, signal.aborted) + "\n");
    }
    if (!options.watch || signal.aborted) return EXIT.ok;
    if (await sleep(interval * 1000, signal)) return EXIT.ok;
  }
}

/** The longest a watcher waits after failed rounds (doubling from the interval up to this). */
const MAX_BACKOFF_SECONDS = 15 * 60;

/** True for a failure of the team database or the way to it, which a later round may not meet. */
function isTeamTrouble(err: unknown): boolean {
  if (err instanceof TeamError) return true;
  const e = err as { code?: unknown; name?: unknown } | null;
  if (e?.name === "PostgresError") return true;
  // The driver's own (CONNECT_TIMEOUT, CONNECTION_CLOSED) and the network's (ECONNREFUSED); not
  // node:sqlite's (ERR_SQLITE_ERROR), which are this machine's store.
  return typeof e?.code === "string" && !e.code.startsWith("ERR_");
}

/** `push --migrate`: the schema brought up to date, and nothing sent. */
async function migrateOnly(url: string, io: Io, json: boolean): Promise<number> {
  const sql = await connectTeam(url);
  try {
    let applied: string[];
    try {
      applied = await migrateTeam(sql);
    } catch (err) {
      throw teamError(err, url);
    }
    if (json) io.out(JSON.stringify({ applied }) + "\n");
    else {
      io.out(
        applied.length
          ? `Brought ${safeUrl(url)} up to date: ${applied.join(", ")}\n`
          : `${safeUrl(url)} is up to date: nothing to apply\n`,
      );
    }
    return EXIT.ok;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

function describePlan(plan: PushPlan, machine: string, url: string, raw: boolean): string {
  const lines = [`Would send to ${url} as "${machine}"${raw ? " (raw bytes too)" : ""}:`];
  for (const p of plan.perProject) {
    lines.push(
      `  ${p.project}: ${plural(p.conversations, "conversation")}, ${plural(p.records, "record")}`,
    );
  }
  lines.push(
    `  in all: ${plural(plan.records, "record")}, ${formatBytes(plan.bytes)} of raw transcript`,
  );
  if (plan.forgets) {
    lines.push(
      `  and remove ${plural(plan.forgets, "forgotten conversation")} from the team database`,
    );
  }
  if (plan.newStore) {
    lines.push(
      `  (the team knows "${machine}" from another store: every record is checked again, and ` +
        "those it has already are not sent twice)",
    );
  }
  return lines.join("\n") + "\n";
}

function describe(s: PushSummary, machine: string, stopped: boolean): string {
  const sent = s.records
    ? `Sent ${plural(s.records, "record")} of ${plural(s.conversations, "conversation")} (${
      formatBytes(s.bytes)
    })`
    : "Nothing new to send";
  const already = s.already ? `; ${formatCount(s.already)} the team database had already` : "";
  const fresh = s.newStore
    ? `; this store is new to the team as "${machine}", so every record was checked again`
    : "";
  const forgot = s.forgotten ? `; removed ${plural(s.forgotten, "forgotten conversation")}` : "";
  const rest = s.complete
    ? ""
    : stopped
    ? "; stopped: run again to send the rest"
    : "; stopped at the time limit: run again to send the rest";
  return `${sent} as "${machine}" from ${s.projects} project${
    s.projects === 1 ? "" : "s"
  }${already}${fresh}${forgot}${rest}.`;
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
  for (const signal of STOP_SIGNALS) {
    try {
      Deno.addSignalListener(signal, () => controller.abort());
    } catch {
      // Signals unavailable: --watch stops with the process.
    }
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
