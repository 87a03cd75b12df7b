// Issue 11's adversarial searches: queries built to make FTS5 or the literal scan do as much
// work as they can, run end to end through the `search` command and through a real dashboard
// process on loopback, with `/api/status` polled while each API search runs.

import { DatabaseSync } from "node:sqlite";
import { commandArgs, commandEnv } from "./_measure.ts";
import { taskFlags } from "./_util.ts";

/** How long one adversarial search is waited for before the bench gives up on it. */
const CAP_MS = 60_000;
/** The pause between two status requests while a search runs. */
const POLL_GAP_MS = 10;

/** What one query did through the command and through the API. */
export interface AdversarialRun {
  name: string;
  chars: number;
  cli: { ms: number; code: number | null };
  api: { ms: number; status: number | null };
  /** The slowest `/api/status` answer while the API search ran (null: none was sent). */
  statusMaxMs: number | null;
  statusPolls: number;
  /** The slowest answer to a request that does no work of its own (an unknown API path). */
  otherMaxMs: number | null;
}

/** The adversarial searches and the status latency around them. */
export interface AdversarialReport {
  runs: AdversarialRun[];
  /** The slowest search, command or API, end to end. */
  maxMs: number;
  /** The slowest `/api/status` answer while any search ran. */
  statusMaxMs: number | null;
  /** The slowest answer to a request that does no work of its own while any search ran. */
  otherMaxMs: number | null;
  /** `/api/status` alone, the median and slowest of a few, for comparison. */
  statusIdle: { medianMs: number; maxMs: number };
  notes: string[];
}

/** The queries, from the store's own most frequent words so that each matches all it can. */
export function adversarialQueries(historyDb: string): { name: string; query: string }[] {
  const db = new DatabaseSync(historyDb, { readOnly: true });
  let common: string[];
  let prefixes: string[];
  try {
    db.exec("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, fts, row)");
    // One pass over the index's terms, read as they come: at 10 GB there are 19.5 million (52 s),
    // which held in memory at once passed the bench's 4 GB heap.
    const rows = db.prepare("SELECT term, doc, cnt FROM temp.vocab").iterate() as Iterable<
      { term: string; doc: number; cnt: number }
    >;
    const top: { term: string; doc: number }[] = [];
    const byPrefix = new Map<string, number>();
    for (const r of rows) {
      // The 64 in the most records, the first of equals kept (the index's order).
      if (top.length < 64 || r.doc > top.at(-1)!.doc) {
        const at = top.findIndex((t) => t.doc < r.doc);
        top.splice(at === -1 ? top.length : at, 0, { term: r.term, doc: r.doc });
        top.length = Math.min(top.length, 64);
      }
      const chars = [...r.term];
      if (chars.length < 3) continue;
      const prefix = chars.slice(0, 3).join("");
      byPrefix.set(prefix, (byPrefix.get(prefix) ?? 0) + r.cnt);
    }
    common = top.map((t) => t.term);
    prefixes = [...byPrefix].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([p]) => p);
  } finally {
    db.close();
  }
  const some = (n: number) => Array.from({ length: n }, (_, i) => common[i % common.length]!);
  const letters = [..."abcdefghijklmnopqrstuvwxyz".repeat(6)];
  return [
    { name: "26×6 one-letter prefixes, OR", query: letters.map((c) => `${c}*`).join(" OR ") },
    { name: "NEAR of 20 a*, distance 100000", query: `NEAR(${"a* ".repeat(20)}, 100000)` },
    { name: "a*", query: "a*" },
    { name: "64 commonest words, OR", query: some(64).join(" OR ") },
    { name: "32 commonest words, OR", query: some(32).join(" OR ") },
    { name: "8 commonest 3-letter prefixes, OR", query: prefixes.map((p) => `${p}*`).join(" OR ") },
    { name: "NEAR of 32 commonest, distance 1000", query: `NEAR(${some(32).join(" ")}, 1000)` },
    { name: "200-deep parentheses", query: `${"(".repeat(200)}${some(1)[0]}${")".repeat(200)}` },
    { name: "phrase of 200 words", query: `"${some(200).join(" ")}"` },
    { name: "phrase of 32 words", query: `"${some(32).join(" ")}"` },
    { name: "literal scan (unbalanced quote)", query: 'zqxv "no record says this' },
  ];
}

/** Runs every adversarial query through the command and a dashboard process on loopback. */
export async function measureAdversarial(options: {
  vars: Record<string, string>;
  historyDb: string;
  log: (message: string) => void;
}): Promise<AdversarialReport> {
  const { vars, log } = options;
  const queries = adversarialQueries(options.historyDb);
  const notes: string[] = [];
  const env = commandEnv(vars);
  const flags = taskFlags("search");
  const cliRuns: AdversarialRun["cli"][] = [];
  log(`adversarial searches: ${queries.length} through the search command`);
  for (const { query } of queries) {
    const run = await timedChild(commandArgs(flags, "search.ts", [query, "--limit", "20"]), env);
    cliRuns.push({ ms: run.ms, code: run.code });
  }

  log("adversarial searches through a dashboard process, /api/status polled meanwhile");
  let server = await Dashboard.start(env);
  const runs: AdversarialRun[] = [];
  let statusIdle = { medianMs: 0, maxMs: 0 };
  try {
    statusIdle = await server.idleStatus();
    for (const [i, { name, query }] of queries.entries()) {
      // Twice: /api/status costs time of its own on the event loop, which would delay the other.
      const api = await server.searchPolling(query, "/api/status");
      if (api.status === null) server = await server.restart(env);
      const again = await server.searchPolling(query, "/api/no-such-path");
      if (again.status === null) server = await server.restart(env);
      runs.push({
        name,
        chars: query.length,
        cli: cliRuns[i]!,
        api: { ms: Math.max(api.ms, again.ms), status: api.status },
        statusMaxMs: api.probeMaxMs,
        statusPolls: api.polls,
        otherMaxMs: again.probeMaxMs,
      });
    }
  } finally {
    await server.stop();
  }
  for (const run of runs) {
    if (run.cli.code === null) {
      notes.push(`"${run.name}": the command was stopped after ${CAP_MS} ms`);
    }
    if (run.api.status === null) {
      notes.push(`"${run.name}": the API search was given up after ${CAP_MS} ms`);
    }
    if (run.cli.code !== null && run.cli.code > 2) {
      notes.push(`"${run.name}": the command exited ${run.cli.code}`);
    }
  }
  const worst = (values: (number | null)[]) => {
    const known = values.filter((v): v is number => v !== null);
    return known.length ? Math.max(...known) : null;
  };
  return {
    runs,
    maxMs: Math.max(...runs.flatMap((r) => [r.cli.ms, r.api.ms])),
    statusMaxMs: worst(runs.map((r) => r.statusMaxMs)),
    otherMaxMs: worst(runs.map((r) => r.otherMaxMs)),
    statusIdle,
    notes,
  };
}

/** The report as the lines of the human output. */
export function formatAdversarial(report: AdversarialReport): string[] {
  const rows = [[
    "query",
    "chars",
    "command ms (exit)",
    "API ms (status)",
    "/api/status max ms",
    "other request max ms",
  ]];
  const ms = (value: number | null) => (value === null ? "-" : String(Math.round(value)));
  for (const r of report.runs) {
    rows.push([
      r.name,
      String(r.chars),
      `${Math.round(r.cli.ms)} (${r.cli.code ?? "killed"})`,
      `${Math.round(r.api.ms)} (${r.api.status ?? "given up"})`,
      `${ms(r.statusMaxMs)} (${r.statusPolls} polls)`,
      ms(r.otherMaxMs),
    ]);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  return [
    `Adversarial searches (issue 11), end to end through the search command and a dashboard ` +
    `process; /api/status alone: median ${Math.round(report.statusIdle.medianMs)} ms, max ` +
    `${Math.round(report.statusIdle.maxMs)} ms (its own work, on the event loop); the other ` +
    `request is an unknown API path (auth, then a 404):`,
    ...rows.map((row) =>
      row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
        .join("  ")
    ),
  ];
}

/** A child `deno` run, killed after CAP_MS (code null then). */
async function timedChild(
  args: string[],
  env: Record<string, string>,
): Promise<{ ms: number; code: number | null }> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const start = performance.now();
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill("SIGKILL");
  }, CAP_MS);
  const status = await child.status;
  clearTimeout(timer);
  return { ms: performance.now() - start, code: killed ? null : status.code };
}

/** A dashboard command running in its own process on a free loopback port. */
export class Dashboard {
  readonly #child: Deno.ChildProcess;
  readonly #base: string;
  readonly #token: string;

  private constructor(child: Deno.ChildProcess, base: string, token: string) {
    this.#child = child;
    this.#base = base;
    this.#token = token;
  }

  static async start(env: Record<string, string>): Promise<Dashboard> {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    const token = crypto.randomUUID() + crypto.randomUUID();
    const child = new Deno.Command(Deno.execPath(), {
      args: commandArgs(taskFlags("dashboard"), "dashboard.ts", ["--port", String(port)]),
      env: { ...env, LOGBOOK_DASHBOARD_TOKEN: token },
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const dashboard = new Dashboard(child, `http://127.0.0.1:${port}`, token);
    const until = performance.now() + 60_000;
    while (performance.now() < until) {
      if ((await dashboard.#get("/api/status", 5_000)).status === 200) return dashboard;
      await new Promise((r) => setTimeout(r, 100));
    }
    await dashboard.stop();
    throw new Error("The dashboard did not answer /api/status within 60 s");
  }

  /** `/api/status` a few times with nothing else running (`all`: each answer's ms, in order). */
  async idleStatus(): Promise<{ medianMs: number; maxMs: number; all: number[] }> {
    const all: number[] = [];
    for (let i = 0; i < 9; i++) all.push((await this.#get("/api/status", CAP_MS)).ms);
    const times = all.toSorted((a, b) => a - b);
    return { medianMs: times[4]!, maxMs: times.at(-1)!, all };
  }

  /** One API search, with `path` requested one after another until the search answers. */
  async searchPolling(query: string, path: string) {
    let done = false;
    const search = this.#get(`/api/search?q=${encodeURIComponent(query)}`, CAP_MS)
      .finally(() => (done = true));
    const poll = async (path: string) => {
      let max: number | null = null;
      let polls = 0;
      // Give the search a head start into the dashboard before the first poll.
      await new Promise((r) => setTimeout(r, POLL_GAP_MS));
      while (!done) {
        const answer = await this.#get(path, CAP_MS);
        polls++;
        max = Math.max(max ?? 0, answer.ms);
        await new Promise((r) => setTimeout(r, POLL_GAP_MS));
      }
      return { max, polls };
    };
    const probe = await poll(path);
    const result = await search;
    return { ms: result.ms, status: result.status, probeMaxMs: probe.max, polls: probe.polls };
  }

  /** A fresh dashboard in place of this one (the old one may still be inside a search). */
  async restart(env: Record<string, string>): Promise<Dashboard> {
    await this.stop();
    return await Dashboard.start(env);
  }

  async stop(): Promise<void> {
    try {
      this.#child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await this.#child.status;
  }

  /** GETs `path`; status null when it did not answer within `capMs`. */
  async #get(path: string, capMs: number): Promise<{ ms: number; status: number | null }> {
    const start = performance.now();
    try {
      const response = await fetch(this.#base + path, {
        headers: { Authorization: `Bearer ${this.#token}` },
        signal: AbortSignal.timeout(capMs),
      });
      await response.arrayBuffer();
      return { ms: performance.now() - start, status: response.status };
    } catch {
      return { ms: performance.now() - start, status: null };
    }
  }
}
