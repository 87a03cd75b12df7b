#!/usr/bin/env -S deno run -A
// Issue 7's benchmark: generates a corpus in all three formats, captures it through the real
// engine, and prints capture throughput against a bare FTS5 baseline, no-op and append reindex
// times, search latency in-process and end to end against rg, the first page of show, peak
// memory on a huge single-line transcript (captured and rebuilt), the store's size, a watcher's
// drain of the corpus against reindex, and a store the previous release captured, upgraded by this
// build, against a fresh capture, each next to its target. Each family of figures is measured in
// a file of its own (`_capture.ts`, `_reindex.ts`, `_search.ts`, `_show.ts`, `_memory.ts`, and
// the others imported below); `_figures.ts` computes the figures and holds their targets, and
// `_report.ts` prints them. This file runs the families in order and is the command.

import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type Context, loadContext, openStore, redactorFor } from "../lib/context.ts";
import { envFrom } from "../lib/env.ts";
import type { Redactor } from "../lib/gate/secrets.ts";
import type { HistoryStore } from "../lib/store/db.ts";
import { measureAdversarial } from "./_adversarial.ts";
import { measureCapture, profileCapture } from "./_capture.ts";
import { figuresOf, type Measured } from "./_figures.ts";
import { type McpSearchReport, measureMcpSearch } from "./_mcp.ts";
import { bundleAsInstalled, ensureRg } from "./_measure.ts";
import { measureCaptureRss, measureHugeLine } from "./_memory.ts";
import { measureMigration } from "./_migrate.ts";
import { measureAppendReindex, measureNoopReindex } from "./_reindex.ts";
import { measureRelevance, RELEVANCE_BASELINE, type RelevanceReport } from "./_relevance.ts";
import { type BenchReport, formatRelevanceAlone, formatReport } from "./_report.ts";
import { measureRg, measureSearch, measureSearchCommand } from "./_search.ts";
import { measureShow } from "./_show.ts";
import { measureUsage } from "./_usage.ts";
import { measureTeam } from "./_team.ts";
import { INDEXED_CLASSES } from "./_text.ts";
import { measureUpgradeOf } from "./_upgrade.ts";
import { measureWatchBacklog } from "./_watch.ts";
import { formatBytes, parseSize, treeBytes } from "./_util.ts";
import {
  corpusEnv,
  type CorpusManifest,
  DEFAULT_SEED,
  generateCorpus,
  keptCorpus,
} from "./corpus.ts";

export interface BenchOptions {
  size: number;
  seed: number;
  /** Keep the corpus and the store here (and reuse a corpus of the same size and seed). */
  keep: string | null;
  /** Size of the huge single-line transcript; 0 skips it. */
  hugeLine: number;
  /** Timed passes over the query set (after one warm-up pass). */
  rounds: number;
  /** Timed runs of the search command and of rg per term (after one warm-up run). */
  cliRuns: number;
  /** Captures from empty and FTS ceilings, alternating; their medians are the figures. */
  captureRounds: number;
  /** Write a CPU profile of a capture (the reindex command) into this dir and summarise it. */
  cpuProf: string | null;
  /** Size of the corpus the upgrade from the previous release runs on; 0 skips it. */
  upgradeSize: number;
  /** Size of the corpus the relevance benchmark plants its facts in. */
  relevanceSize: number;
  log: (message: string) => void;
}

const HUGE_DEFAULT = "1GiB";
/** The relevance benchmark's corpus, unless told: it is captured by two builds. */
const RELEVANCE_DEFAULT = "20MB";
/** The upgrade's corpus at most, unless told: it is captured three times. */
const UPGRADE_DEFAULT = 20_000_000;

/** What every step of a run works with. */
interface Run {
  options: BenchOptions;
  log: (message: string) => void;
  work: string;
  dirs: { corpus: string; data: string; home: string; config: string };
  manifest: CorpusManifest;
  /** The environment of the store under `dirs.data`, for the commands run over it. */
  vars: Record<string, string>;
  ctx: Context;
  store: HistoryStore;
  redact: Redactor;
  /** What the report lists under Notes, in the order the steps found it. */
  notes: string[];
  /** Corpus files appended to, and their sizes before, to truncate them back to at the end. */
  restore: { path: string; size: number }[];
}

/** Runs the whole benchmark; see the file comment. */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const loadBefore = Deno.loadavg();
  const work = options.keep
    ? resolve(options.keep)
    : await Deno.makeTempDir({ prefix: "logbook-bench-" });
  const dirs = {
    corpus: join(work, "corpus"),
    data: join(work, "data"),
    home: join(work, "home"),
    config: join(work, "config"),
  };
  const restore: { path: string; size: number }[] = [];
  try {
    for (const dir of [dirs.data, dirs.home, dirs.config]) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await Deno.mkdir(dir, { recursive: true });
    }
    const { manifest, reused } = await benchCorpus(dirs.corpus, options);
    const vars: Record<string, string> = {
      ...corpusEnv(dirs.corpus, dirs.home),
      LOGBOOK_DATA_DIR: dirs.data,
      LOGBOOK_CONFIG_DIR: dirs.config,
      INIT_CWD: dirs.home,
      NO_COLOR: "1",
    };
    const ctx = loadContext({ env: envFrom(vars) });
    const redact = redactorFor(ctx);
    const store = openStore(ctx);
    try {
      const { log } = options;
      const notes: string[] = [];
      const run = { options, log, work, dirs, manifest, vars, ctx, store, redact, notes, restore };
      const inProcess = await measureInProcess(run);
      const { profile, ...children } = await measureInChildren(run);
      const measured: Measured = { corpus: manifest, ...inProcess, ...children };
      return {
        ...measured,
        figures: figuresOf(measured),
        notes,
        machine: machine(loadBefore),
        work,
        corpus: { ...manifest, reused },
        profile,
      };
    } finally {
      store.close();
    }
  } finally {
    for (const { path, size } of restore) {
      try {
        Deno.truncateSync(path, size);
      } catch {
        // The corpus is being removed anyway, or the file is gone.
      }
    }
    await Deno.remove(join(work, "huge"), { recursive: true }).catch(() => {});
    if (!options.keep) await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

/**
 * The bench's corpus in `dir`: the one kept there when it was generated for this size and seed
 * and its files are whole, else a new one.
 */
async function benchCorpus(
  dir: string,
  options: BenchOptions,
): Promise<{ manifest: CorpusManifest; reused: boolean }> {
  const { log } = options;
  const kept = keptCorpus(dir, options.size, options.seed);
  if (
    kept && treeBytes(join(dir, "claude")).bytes === kept.bytes.claude &&
    treeBytes(join(dir, "codex")).bytes === kept.bytes.codex
  ) {
    log(`reusing the corpus in ${dir}`);
    return { manifest: kept, reused: true };
  }
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  log(`generating a ${formatBytes(options.size)} corpus (seed ${options.seed}) in ${dir}`);
  const manifest = generateCorpus({
    out: dir,
    size: options.size,
    seed: options.seed,
    onProgress: log,
  });
  log(`corpus: ${formatBytes(manifest.totalBytes)} in ${manifest.generationMs} ms`);
  return { manifest, reused: false };
}

/**
 * The figures measured in this process on the bench's store (and the commands that read it):
 * capture, reindex, search against rg, show. The order matters: the first capture makes the
 * store the others read, and appending to the corpus comes last.
 */
async function measureInProcess(
  run: Run,
): Promise<
  Pick<Measured, "capture" | "noop" | "search" | "cli" | "rg" | "show" | "usage" | "append">
> {
  const { options, log, manifest, vars, ctx, store, redact, notes } = run;
  const rgFound = await ensureRg(log);
  if (rgFound.note) notes.push(rgFound.note);
  const capture = await measureCapture({
    ...run,
    rounds: options.captureRounds,
  });
  notes.push(...capture.notes);
  const noop = await measureNoopReindex(ctx, store, redact, log);
  notes.push(...noop.notes);
  log(`in-process search: ${manifest.terms.length} terms × 6 filters × ${options.rounds} rounds`);
  const search = measureSearch(store, redact, manifest, capture.agents, options.rounds);
  const bundle = await bundleAsInstalled(log);
  if (bundle !== "built") notes.push(`search and show ran from their sources: ${bundle}`);
  const rare = manifest.terms.filter((t) => t.class === "rare").map((t) => t.term);
  const runs = options.cliRuns;
  const cli = await measureSearchCommand({ vars, work: run.work, rare, runs, bundle, log });
  const rg = await measureRg({
    rg: rgFound.path,
    corpusDir: run.dirs.corpus,
    manifest,
    agents: capture.agents,
    rare,
    runs,
    log,
  });
  const show = await measureShow({ store, redact, vars, runs, log });
  const usage = await measureUsage({ vars, runs, log });
  if (usage.note) notes.push(usage.note);
  const append = await measureAppendReindex({
    ctx,
    store,
    redact,
    agents: capture.agents,
    seed: options.seed,
    restore: run.restore,
    log,
  });
  notes.push(...append.notes);
  return { capture, noop, search, cli, rg, show, usage, append };
}

/**
 * The figures measured in child processes: capture's peak memory, MCP, the team history, the
 * adversarial searches, a watcher's backlog, a migration, the upgrade from the previous release,
 * relevance, the huge line, and the CPU profile when asked for.
 */
async function measureInChildren(
  run: Run,
): Promise<
  & Pick<
    Measured,
    | "captureRss"
    | "mcp"
    | "team"
    | "adversarial"
    | "watch"
    | "migration"
    | "upgrade"
    | "relevance"
    | "huge"
  >
  & { profile: BenchReport["profile"] }
> {
  const { options, log, work, dirs, vars, store, notes } = run;
  const historyDb = run.ctx.paths.historyDb;
  const captureRss = await measureCaptureRss(vars, work, log);
  const mcp = await mcpSearch(run);
  const terms = indexedTerms(run.manifest);
  const team = await measureTeam({ store, vars, work, terms, rounds: options.rounds, log });
  notes.push(...team.notes);
  const adversarial = await measureAdversarial({ vars, historyDb, log });
  notes.push(...adversarial.notes);
  const watch = await measureWatchBacklog(vars, work, options.captureRounds, log);
  if (watch.ratio === null) notes.push("reindex --watch did not capture the whole corpus");
  store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const migration = await measureMigration(vars, work, historyDb, log);
  const upgrade = await measureUpgradeOf({
    ...dirs,
    size: options.upgradeSize,
    seed: options.seed,
    work,
    corpusDir: dirs.corpus,
    corpus: run.manifest,
    log,
  });
  notes.push(...upgrade.notes);
  const relevance = await relevanceIn(work, options);
  notes.push(...relevance.notes);
  if (!options.keep) await Deno.remove(join(work, "relevance"), { recursive: true });
  const huge = options.hugeLine > 0
    ? await measureHugeLine({ ...dirs, work, bytes: options.hugeLine, seed: options.seed, log })
    : null;
  if (!huge) notes.push("huge_line_peak_rss_mb was not measured (--huge-line 0)");
  const profile = options.cpuProf ? await profileCapture(options.cpuProf, vars, work, log) : null;
  return {
    captureRss,
    mcp,
    team,
    adversarial,
    watch,
    migration,
    upgrade: upgrade.run,
    relevance,
    huge,
    profile,
  };
}

/** The planted terms the index answers (every class but symbols). */
function indexedTerms(manifest: CorpusManifest): string[] {
  return manifest.terms.filter((t) => INDEXED_CLASSES.includes(t.class)).map((t) => t.term);
}

/** Searches over an open MCP session, as an agent makes them, with what went wrong in notes. */
async function mcpSearch(run: Run): Promise<McpSearchReport> {
  const { options, manifest, notes } = run;
  run.log(
    `MCP search_history over stdio: ${manifest.terms.length} terms × ${options.rounds} rounds`,
  );
  const mcp = await measureMcpSearch(run.vars, indexedTerms(manifest), options.rounds);
  if (mcp.errors) notes.push(`${mcp.errors} MCP searches answered with a tool error`);
  if (mcp.stopped) {
    notes.push(`${mcp.stopped} MCP searches were stopped by their budget (partial hits)`);
  }
  return mcp;
}

/** The relevance benchmark, in `work`/relevance: its own corpus, captures and queries. */
function relevanceIn(work: string, options: BenchOptions): Promise<RelevanceReport> {
  return measureRelevance({
    size: options.relevanceSize,
    seed: options.seed,
    rounds: options.rounds,
    captureRounds: options.captureRounds,
    dir: join(work, "relevance"),
    log: options.log,
  });
}

/** The relevance benchmark alone (`--only relevance`), in DIR/relevance with `--keep DIR`. */
async function runRelevanceAlone(options: BenchOptions): Promise<RelevanceReport> {
  const work = options.keep
    ? resolve(options.keep)
    : await Deno.makeTempDir({ prefix: "logbook-bench-" });
  try {
    return await relevanceIn(work, options);
  } finally {
    if (!options.keep) await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

function machine(loadBefore: number[]): BenchReport["machine"] {
  let model = "unknown";
  try {
    model = /model name\s*:\s*(.+)/.exec(Deno.readTextFileSync("/proc/cpuinfo"))?.[1] ?? model;
  } catch {
    // Not Linux.
  }
  return {
    cpus: navigator.hardwareConcurrency,
    model,
    memoryGb: Math.round(Deno.systemMemoryInfo().total / 1e9),
    loadBefore,
    loadAfter: Deno.loadavg(),
  };
}

const HELP = `Usage: deno task bench [-- --size SIZE] [--json] [--keep DIR] [options]

Generates a corpus of Claude Code, Codex and OpenCode histories (bench/corpus.ts), captures it
through the real engine and prints, in one run: capture throughput against a bare FTS5 baseline,
no-op and append reindex, search latency (in-process and the command end to end) against rg,
the first page of show, peak memory capturing and rebuilding a huge single-line transcript, the
store's size, how fast reindex --watch drains the corpus against reindex, how a store the
previous release captured answers once this build upgraded it, against a fresh capture, and how
well search finds facts planted in known conversations again (bench/_relevance.ts).

Options:
  --size SIZE        corpus size, e.g. 20MB, 200MB (default 200MB; MB is 10^6 bytes)
  --json             print one JSON object with the figures (null when not measured)
  --keep DIR         work in DIR and keep it: DIR/corpus (reused when its size and seed match)
                     and DIR/data (the store); DIR/data, DIR/home and DIR/config are replaced
  --seed N           corpus seed (default ${DEFAULT_SEED})
  --huge-line SIZE   size of the single-line transcript (default ${HUGE_DEFAULT}; 0 skips it)
  --rounds N         timed passes over the search query set (default 5)
  --cli-runs N       timed runs of the search command and of rg per term (default 7)
  --capture-rounds N captures from empty, alternating with as many FTS ceilings, and as many
                     reindex and reindex --watch runs; the figures are the medians (default 3)
  --cpu-prof DIR     also profile a capture with the reindex command and summarise where time goes
  --upgrade-size SIZE the corpus of the upgrade from the previous release (default: --size, at most
                     20MB; 0 skips it)
  --relevance-size SIZE the corpus the relevance benchmark plants its facts in (default ${RELEVANCE_DEFAULT})
  --only relevance   run only the relevance benchmark (its corpus, captures and queries); with
                     --keep DIR it works in DIR/relevance
  -h, --help         show this help

Figures: capture_mb_s and fts_ceiling_mb_s are MB of captured source per second; search_*_ms
cover every planted term the index answers (CJK words inside a sentence too) alone and with
filters (symbols, a literal scan, have their own row in the table); search_cli_ms is the search
command (deno run with its task's permissions, not deno task) from spawn to exit, started from its
bundle as the install builds it (deno task bundle), and search_cli_sources_ms the same from its
sources; rg_cli_ms rg -l -F for the same terms over the same files, rg_cli_over_search_cli the one
over the other (target ≥ 2 at 200MB, ≥ 8 from 1GB); show_cli_ms is the show command's first page
end to end (show_cli_sources_ms from its sources); capture_peak_rss_mb is the peak RSS of the
reindex command capturing the corpus from empty; rg_ms is the median of rg -l -F -i -a over the
same terms, rg_over_search that of the rare terms over search's rare-term p50; huge_line_peak_rss_mb is
in MiB; store_ratio is history.db plus its WAL after a checkpoint over the captured source bytes;
adversarial_search_max_ms is the slowest of issue 11's adversarial searches end to end (the search
command and a dashboard process), status_during_search_ms the slowest /api/status meanwhile and
request_during_search_ms the slowest request that does no work of its own (auth, then a 404).
watch_backlog_over_reindex is the time reindex --watch takes to store the whole corpus from empty
over that of reindex; huge_line_rebuild_peak_rss_mb is the peak RSS of reindex --rebuild over the
huge line's store. mcp_search_ms is the p50 of search_history calls over one open logbook mcp
session (the SDK's client over stdio), every term, all projects. push_mb_s is logbook push end to
end into a local PostgreSQL (MB of the raw transcript of the records it sent, as it reports them,
per second, over every push); team_search_p50_ms/p95_ms search --team end to end (the command:
start-up, connecting, searching) after the corpus was pushed by five machines.
migrate_mb_s is the store's raw bytes over the time migration 0008 (the CJK
index, in batches) adds to a no-op reindex of a copy of the store written as before it, and
migration_peak_rss_mb that reindex's peak RSS. upgrade_terms_differing is the number of terms
(planted and common) whose hits differ between a store the previous release captured and this
build's reindex then upgraded, and a fresh capture of the same corpus by this build (target 0);
upgrade_mb_s is that corpus's MB over the time the upgrading reindex took.
relevance_*: forty facts planted in known conversations, each found again by five queries: its
noun (exact), another form of its verb (form), the noun with one typo (typo), the first 3 to 6
letters of the noun as typed (prefix, searched as the search screen does as you type) and two of
its words in another order (order). relevance_recall_<class> is the share whose conversation is
among the first 10 hits' conversations, relevance_mrr the mean of 1 / the rank of its first hit
(0 past 10) over every query; relevance_exact_p50_ms and _p95_ms time the exact and order
queries in-process, relevance_forgiving_p95_ms the others; relevance_store_ratio is that store
over its source, relevance_store_growth its size over the same corpus's captured by the build
before issue 31 (${RELEVANCE_BASELINE}), less one, and relevance_capture_slowdown likewise for the
median capture time (the reindex command, spawn to exit).

Example:
  deno task bench -- --size 200MB --keep /tmp/logbook-bench
`;

/** Command-line entry point. */
export async function main(args: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      // `deno task bench -- --size 200MB` hands the `--` on: it only separates task arguments.
      args: args[0] === "--" ? args.slice(1) : args,
      strict: true,
      allowPositionals: false,
      options: {
        size: { type: "string", default: "200MB" },
        json: { type: "boolean" },
        keep: { type: "string" },
        seed: { type: "string" },
        "huge-line": { type: "string", default: HUGE_DEFAULT },
        rounds: { type: "string", default: "5" },
        "cli-runs": { type: "string", default: "7" },
        "capture-rounds": { type: "string", default: "3" },
        "cpu-prof": { type: "string" },
        "upgrade-size": { type: "string" },
        "relevance-size": { type: "string", default: RELEVANCE_DEFAULT },
        only: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (err) {
    console.error(`error: ${(err as Error).message}\nRun with --help for usage.`);
    return 2;
  }
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  let options: BenchOptions;
  try {
    options = benchOptions(values);
    if (values.only !== undefined && values.only !== "relevance") {
      throw new RangeError(`Expected --only relevance: got "${values.only}"`);
    }
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    console.error(`error: ${err.message}\nRun with --help for usage.`);
    return 2;
  }
  const { report, human } = values.only === "relevance"
    ? await runRelevanceAlone(options).then((report) => ({
      report,
      human: () => formatRelevanceAlone(report, options),
    }))
    : await runBench(options).then((report) => ({
      report,
      human: () => formatReport(report, options),
    }));
  if (values.json) {
    for (const note of report.notes) console.error(`note: ${note}`);
    console.log(JSON.stringify(report.figures));
  } else {
    console.log(human());
  }
  return 0;
}

/** The options of a run from the command line's values; a RangeError for a bad one. */
function benchOptions(values: {
  size: string;
  seed?: string | undefined;
  keep?: string | undefined;
  "huge-line": string;
  rounds: string;
  "cli-runs": string;
  "capture-rounds": string;
  "cpu-prof"?: string | undefined;
  "upgrade-size"?: string | undefined;
  "relevance-size": string;
}): BenchOptions {
  const count = (name: string, text: string) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1) {
      throw new RangeError(`Expected a positive --${name}: got "${text}"`);
    }
    return n;
  };
  const started = performance.now();
  const size = parseSize(values.size);
  return {
    size,
    seed: values.seed === undefined ? DEFAULT_SEED : count("seed", values.seed),
    keep: values.keep ?? null,
    hugeLine: parseSize(values["huge-line"]),
    rounds: count("rounds", values.rounds),
    cliRuns: count("cli-runs", values["cli-runs"]),
    captureRounds: count("capture-rounds", values["capture-rounds"]),
    cpuProf: values["cpu-prof"] ?? null,
    upgradeSize: values["upgrade-size"] === undefined
      ? Math.min(size, UPGRADE_DEFAULT)
      : parseSize(values["upgrade-size"]),
    relevanceSize: parseSize(values["relevance-size"]),
    log: (message) =>
      console.error(`[bench ${((performance.now() - started) / 1000).toFixed(1)}s] ${message}`),
  };
}

if (import.meta.main) Deno.exit(await main(Deno.args));
