// Capture's figures: the corpus captured from empty by the reindex command in a child process
// (timed spawn to exit, with its peak memory), against the bare FTS5 ceiling in-process (rounds
// alternating, so a noisy neighbour weighs on both), the store's size, where the time goes
// (`_phases.ts`), and a CPU profile of the reindex command when asked for.

import { join, resolve } from "node:path";
import { discoverContext } from "../lib/capture/run.ts";
import type { CaptureSummary } from "../lib/capture/summary.ts";
import type { Context } from "../lib/context.ts";
import type { Redactor } from "../lib/gate/secrets.ts";
import type { Adapter, LineAdapter, SourceRef } from "../lib/sources/adapter.ts";
import { ADAPTERS } from "../lib/sources/mod.ts";
import type { HistoryStore } from "../lib/store/db.ts";
import { CORPUS_AGENTS, type CorpusAgent, type CorpusManifest } from "./corpus.ts";
import { commandArgs, commandEnv, peakRss, runTimed, summariseProfile } from "./_measure.ts";
import type { RssRun } from "./_memory.ts";
import {
  type Ceiling,
  ftsCeiling,
  type LinePhases,
  linePhases,
  rawInsertCeiling,
} from "./_phases.ts";
import { fileSize, formatBytes, median, taskFlags } from "./_util.ts";

/** What the capture from empty measured, and what it left in the store. */
export interface CaptureReport {
  /** Per agent: sources, records and conversations in the store. */
  captured: { agent: string; sources: number; records: number; conversations: number }[];
  /** The corpus's agents that were captured: the figures are over their bytes only. */
  agents: CorpusAgent[];
  bytes: number;
  /**
   * The median capture (the reindex command, spawn to exit), and each round's time (the first
   * made the store measured after).
   */
  ms: number;
  runs: number[];
  /** The first capture's peak RSS. */
  rss: RssRun;
  summary: CaptureSummary;
  /** The median ceiling (insertMs), and each round's inserts and commits. */
  ceiling: Ceiling;
  ceilingRuns: number[];
  /** history.db and its WAL after a checkpoint. */
  store: { db: number; wal: number };
  /** Where the time goes, on the bench's corpus or on the slice. */
  breakdown: Breakdown;
  notes: string[];
}

/** A captured corpus the breakdown runs over: the bench's own, or the slice (`_slice.ts`). */
export interface BreakdownInput {
  ctx: Context;
  store: HistoryStore;
  redact: Redactor;
  /** The source bytes captured, and the capture from empty that made the store (ms). */
  bytes: number;
  captureMs: number;
  /** The slice's target bytes when it is the slice, null for the bench's own corpus. */
  slice: number | null;
}

/** Where capture's time goes, each step timed on its own over one captured corpus. */
export interface Breakdown {
  bytes: number;
  captureMs: number;
  slice: number | null;
  /** The same inserts as the ceiling, into a table with the store's FTS settings (automerge 16). */
  ceilingStoreFts: Ceiling;
  raw: { ms: number; rows: number; bytes: number };
  phases: LinePhases;
}

/**
 * Captures the corpus from empty into `store` (the store the rest of the bench reads), then
 * alternates FTS ceilings with captures into scratch stores, `rounds` of each; then the
 * breakdown, over the corpus `breakdownOn` gives (the bench's own, or the slice).
 */
export async function measureCapture(options: {
  ctx: Context;
  store: HistoryStore;
  redact: Redactor;
  vars: Record<string, string>;
  work: string;
  manifest: CorpusManifest;
  rounds: number;
  /** The corpus the breakdown runs over, given the first capture's bytes and time. */
  breakdownOn: (first: { bytes: number; ms: number }) => Promise<BreakdownInput>;
  log: (message: string) => void;
}): Promise<CaptureReport> {
  const { ctx, store, work } = options;
  const first = await firstCapture(options);
  store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const storeSize = {
    db: fileSize(ctx.paths.historyDb),
    wal: fileSize(`${ctx.paths.historyDb}-wal`),
  };
  const ceilingDb = join(work, "ceiling.db");
  const { runs, ceilings } = await alternateRounds(options, first.ms, ceilingDb);
  const ceilingRuns = ceilings.map((c) => c.insertMs);
  const breakdown = await measureBreakdown(await options.breakdownOn(first), work, options.log);
  return {
    captured: first.captured,
    agents: first.agents,
    bytes: first.bytes,
    ms: median(runs),
    runs,
    rss: first.rss,
    summary: first.summary,
    // Rows and text are the same every round; the time is the median.
    ceiling: { ...ceilings[0]!, insertMs: median(ceilingRuns) },
    ceilingRuns,
    store: storeSize,
    breakdown,
    notes: first.notes,
  };
}

/**
 * Where the time goes over `on`'s store: the FTS ceiling with the store's FTS settings, the raw
 * ceiling and the line phases, each on its own (scratch databases under `work`, removed after).
 */
async function measureBreakdown(
  on: BreakdownInput,
  work: string,
  log: (message: string) => void,
): Promise<Breakdown> {
  const { ctx, store, redact } = on;
  const over = on.slice === null ? "" : ` (on the ${formatBytes(on.slice)} slice)`;
  const ceilingDb = join(work, "ceiling.db");
  log(`FTS ceiling with the store's FTS settings (automerge 16), for comparison${over}`);
  const ceilingStoreFts = ftsCeiling(store, ADAPTERS, redact, ceilingDb, { storeSettings: true });
  await removeDb(ceilingDb);
  log(`raw ceiling: the same raw chunks into a fresh records table${over}`);
  const raw = rawInsertCeiling(store, join(work, "raw-ceiling.db"));
  await removeDb(join(work, "raw-ceiling.db"));
  log(`line phases: read, split, parse, derive, redact${over}`);
  const phases = linePhases(await lineSources(ctx), redact);
  const { bytes, captureMs, slice } = on;
  return { bytes, captureMs, slice, ceilingStoreFts, raw, phases };
}

/**
 * The first capture from empty, into the store of `vars`'s LOGBOOK_DATA_DIR (`store` open on it),
 * by the reindex command in a child process as a person's first `reindex` runs, timed spawn to
 * exit with its peak RSS; what it left out is said in notes.
 */
export async function firstCapture(options: {
  store: HistoryStore;
  vars: Record<string, string>;
  manifest: CorpusManifest;
  rounds: number;
  log: (message: string) => void;
}): Promise<
  Pick<CaptureReport, "captured" | "agents" | "bytes" | "summary" | "ms" | "rss" | "notes">
> {
  const { store, manifest, log } = options;
  const notes: string[] = [];
  log(`capture from empty (reindex, in a child process), round 1 of ${options.rounds}`);
  const { summary, run } = await reindexFromEmpty(options.vars);
  const ms = run.ms;
  for (const error of summary.errors.slice(0, 5)) {
    notes.push(`capture error in ${error.locator}: ${error.message}`);
  }
  if (summary.drift.length) {
    notes.push(
      `format drift: ${
        summary.drift.map((d) => `${d.agent} ${d.version} ${d.detail} ×${d.count}`).join(", ")
      }`,
    );
  }
  const captured = capturedByAgent(store);
  const agents = CORPUS_AGENTS.filter((a) =>
    (captured.find((c) => c.agent === a)?.records ?? 0) > 0
  );
  for (const agent of CORPUS_AGENTS) {
    if (!agents.includes(agent)) {
      notes.push(
        `${agent} was not captured (no adapter registered, or its source failed): its ` +
          `${formatBytes(manifest.bytes[agent])} are left out of every figure`,
      );
    }
  }
  const bytes = agents.reduce((n, a) => n + manifest.bytes[a], 0);
  log(
    `captured ${formatBytes(bytes)} (${agents.join(", ")}) in ${
      Math.round(ms)
    } ms: ${summary.records} records (batches written ${summary.writer})`,
  );
  const rss = { mib: run.mib, ms: run.ms, how: run.how };
  return { captured, agents, bytes, summary, ms, rss, notes };
}

/** `reindex --json` in a child process, with its peak RSS, and the summary it printed. */
async function reindexFromEmpty(
  vars: Record<string, string>,
): Promise<{ summary: CaptureSummary; run: Awaited<ReturnType<typeof peakRss>> }> {
  const run = await peakRss(
    Deno.execPath(),
    commandArgs(taskFlags("reindex"), "reindex.ts", ["--json"]),
    commandEnv(vars),
  );
  if (run.code !== 0) throw new Error(`reindex failed (${run.code}): ${run.stderr.slice(-600)}`);
  const { status, ...summary } = JSON.parse(run.stdout) as { status: string } & CaptureSummary;
  if (status !== "captured") throw new Error(`Capture did not run: ${status}`);
  return { summary, run };
}

/**
 * The bare baseline, and capture again: FTS ceilings alternating with captures into a scratch
 * store, after the first capture (`firstMs`), `rounds` of each.
 */
async function alternateRounds(
  options: {
    store: HistoryStore;
    redact: Redactor;
    vars: Record<string, string>;
    work: string;
    rounds: number;
    log: (message: string) => void;
  },
  firstMs: number,
  ceilingDb: string,
): Promise<{ runs: number[]; ceilings: Ceiling[] }> {
  const { store, redact, vars, work, rounds, log } = options;
  const runs = [firstMs];
  const ceilings: Ceiling[] = [];
  for (let round = 1; round <= rounds; round++) {
    log(`FTS ceiling: the same derived text into a fresh FTS5 table, round ${round}`);
    ceilings.push(ftsCeiling(store, ADAPTERS, redact, ceilingDb));
    await removeDb(ceilingDb);
    if (round === rounds) break;
    log(`capture from empty into a scratch store, round ${round + 1}`);
    runs.push(await scratchCapture(vars, join(work, "data-again")));
  }
  return { runs, ceilings };
}

/**
 * Captures the corpus from empty into a store of its own (removed after) as the first capture
 * did; returns the ms.
 */
async function scratchCapture(vars: Record<string, string>, data: string): Promise<number> {
  await Deno.remove(data, { recursive: true }).catch(() => {});
  await Deno.mkdir(data, { recursive: true });
  try {
    return (await reindexFromEmpty({ ...vars, LOGBOOK_DATA_DIR: data })).run.ms;
  } finally {
    await Deno.remove(data, { recursive: true }).catch(() => {});
  }
}

async function removeDb(path: string): Promise<void> {
  for (const suffix of ["", "-wal", "-shm"]) await Deno.remove(path + suffix).catch(() => {});
}

function capturedByAgent(store: HistoryStore): CaptureReport["captured"] {
  const rows = new Map<string, CaptureReport["captured"][number]>();
  const row = (agent: string) => {
    let r = rows.get(agent);
    if (!r) rows.set(agent, r = { agent, sources: 0, records: 0, conversations: 0 });
    return r;
  };
  for (
    const r of store.db.prepare("SELECT agent, count(*) AS n FROM sources GROUP BY agent").all()
  ) {
    row(String(r.agent)).sources = Number(r.n);
  }
  for (
    const r of store.db.prepare(
      "SELECT s.agent, count(*) AS n FROM records r JOIN sources s ON s.id = r.source_id GROUP BY s.agent",
    ).all()
  ) {
    row(String(r.agent)).records = Number(r.n);
  }
  for (
    const r of store.db.prepare("SELECT agent, count(*) AS n FROM conversations GROUP BY agent")
      .all()
  ) {
    row(String(r.agent)).conversations = Number(r.n);
  }
  return [...rows.values()].sort((a, b) => a.agent.localeCompare(b.agent));
}

/** The line sources (Claude Code, Codex) the registered adapters discover in the corpus. */
async function lineSources(ctx: Context): Promise<{ adapter: LineAdapter; ref: SourceRef }[]> {
  const out: { adapter: LineAdapter; ref: SourceRef }[] = [];
  for (const adapter of ADAPTERS as readonly Adapter[]) {
    if (adapter.mode !== "lines") continue;
    for await (const ref of adapter.discover(discoverContext(ctx))) {
      if (ref.format === "jsonl") out.push({ adapter, ref });
    }
  }
  return out;
}

/** A CPU profile's summary: self time per function and per file. */
export type ProfileSummary = ReturnType<typeof summariseProfile>;

/** Runs the reindex command over the corpus with `--cpu-prof` and summarises the profile. */
export async function profileCapture(
  dir: string,
  vars: Record<string, string>,
  work: string,
  log: (message: string) => void,
): Promise<ProfileSummary> {
  const out = resolve(dir);
  await Deno.mkdir(out, { recursive: true });
  const data = join(work, "data-profile");
  await Deno.remove(data, { recursive: true }).catch(() => {});
  const before = new Set([...Deno.readDirSync(out)].map((e) => e.name));
  log(`CPU profile of a capture from empty (reindex --cpu-prof) into ${out}`);
  const run = await runTimed(
    Deno.execPath(),
    [
      "run",
      `--cpu-prof`,
      `--cpu-prof-dir=${out}`,
      ...commandArgs(taskFlags("reindex"), "reindex.ts", ["--quiet"]).slice(1),
    ],
    { env: commandEnv({ ...vars, LOGBOOK_DATA_DIR: data }) },
  );
  await Deno.remove(data, { recursive: true }).catch(() => {});
  if (run.code !== 0) throw new Error(`reindex --cpu-prof failed: ${run.stderr.slice(-400)}`);
  const made = [...Deno.readDirSync(out)].map((e) => e.name).filter((n) =>
    n.endsWith(".cpuprofile") && !before.has(n)
  );
  if (!made.length) throw new Error(`No .cpuprofile written into "${out}"`);
  log(`profile: ${join(out, made[0]!)}`);
  return summariseProfile(join(out, made[0]!), 25);
}
