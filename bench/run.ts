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
import { firstCapture, measureCapture, profileCapture } from "./_capture.ts";
import { type DiskPlan, diskPlan, freeBytes } from "./_disk.ts";
import { figuresOf, type Measured } from "./_figures.ts";
import { type McpSearchReport, measureMcpSearch } from "./_mcp.ts";
import { bundleAsInstalled, ensureRg } from "./_measure.ts";
import { measureCaptureRss, measureHugeLine } from "./_memory.ts";
import { measureMigration } from "./_migrate.ts";
import {
  type Needs,
  needsOf,
  parseParts,
  type Part,
  PART_NAMES,
  partsHelp,
  slicedParts,
} from "./_parts.ts";
import { measureAppendReindex, measureNoopReindex } from "./_reindex.ts";
import { measureRelevance, RELEVANCE_BASELINE, type RelevanceReport } from "./_relevance.ts";
import { type BenchReport, formatRelevanceAlone, formatReport } from "./_report.ts";
import { measureRg, measureSearch, measureSearchCommand } from "./_search.ts";
import { measureShow } from "./_show.ts";
import { measureStatus } from "./_status.ts";
import { heedSignals, onStop, stopOnSignals } from "./_stop.ts";
import { measureForget, measureRebuild } from "./_store_changes.ts";
import { measureUsage } from "./_usage.ts";
import { measureTeam } from "./_team.ts";
import { INDEXED_CLASSES } from "./_text.ts";
import { measureUpgradeOf } from "./_upgrade.ts";
import { measureWatchBacklog } from "./_watch.ts";
import { Slice } from "./_slice.ts";
import { formatBytes, parseSize, treeBytes } from "./_util.ts";
import {
  CORPUS_AGENTS,
  type CorpusAgent,
  type CorpusManifest,
  corpusVars,
  DEFAULT_SEED,
  generateInChild,
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
  /** Size of the slice the capture's breakdown, watch and migration run on (`_slice.ts`). */
  sliceSize: number;
  /** The parts to measure, in run order (every part unless `--only` names some). */
  parts: Part[];
  log: (message: string) => void;
}

const HUGE_DEFAULT = "1GiB";
/** The relevance benchmark's corpus, unless told: it is captured by two builds. */
const RELEVANCE_DEFAULT = "20MB";
/** The upgrade's corpus at most, unless told: it is captured three times. */
const UPGRADE_DEFAULT = 20_000_000;
/** From this corpus size on, the repeated captures default to one round: each is long. */
const LARGE = 1e9;
/**
 * From here a run measures once what it measures three times from LARGE: the commands that read
 * the whole corpus (rg for each term, 2 s at 10GB; ccusage, 27 to 29 s in three runs) and the
 * symbols' literal scans, which the search budget stops at the same 1.2 s every round.
 */
const HUGE = 5e9;
/** The slice at most, unless told: above it, the slice is a corpus of its own. */
const SLICE_DEFAULT = 1e9;

/**
 * The report in the work folder: the figures so far while the run goes on, and with `--keep` the
 * whole report once it has ended.
 */
const REPORT_FILE = "report.txt";

/** Writes `text` to `path` whole or not at all (a temporary file renamed over it). */
function writeAtomically(path: string, text: string): void {
  const temporary = `${path}.${Deno.pid}.tmp`;
  Deno.writeTextFileSync(temporary, text);
  Deno.renameSync(temporary, path);
}

/** What every step of a run works with. */
interface Run {
  options: BenchOptions;
  log: (message: string) => void;
  work: string;
  dirs: { corpus: string; data: string; home: string; config: string };
  /** Null when no selected part needs the corpus. */
  manifest: CorpusManifest | null;
  /** The environment of the store under `dirs.data`, for the commands run over it. */
  vars: Record<string, string>;
  ctx: Context;
  /** Null when no selected part needs the store. */
  store: HistoryStore | null;
  redact: Redactor;
  /** The slice, when it is smaller than the corpus (else those parts run on the bench's own). */
  slice: Slice | null;
  /** What the report lists under Notes, in the order the steps found it. */
  notes: string[];
  /** Corpus files appended to, and their sizes before, to truncate them back to at the end. */
  restore: { path: string; size: number }[];
  /** Whether a part was selected. */
  has: (part: Part) => boolean;
}

/** What the parts selected need of the run, and whether the corpus kept in `keep` serves. */
export function runNeeds(options: BenchOptions): { needs: Needs; reused: boolean } {
  const needs = needsOf(options.parts, options);
  const reused = needs !== "nothing" && options.keep !== null &&
    keptCorpusWhole(join(resolve(options.keep), "corpus"), options) !== null;
  return { needs, reused };
}

/** The disk a run of `options` needs, and where its work folder goes. */
export function runDiskPlan(options: BenchOptions): DiskPlan & { dir: string } {
  const { needs, reused } = runNeeds(options);
  const plan = diskPlan({
    ...options,
    generatesCorpus: needs !== "nothing" && !reused,
    makesStore: needs === "store",
  });
  return { ...plan, dir: options.keep ? resolve(options.keep) : tempRoot() };
}

/** Where Deno.makeTempDir makes the work folder. */
function tempRoot(): string {
  return Deno.env.get("TMPDIR") || "/tmp";
}

/** Runs the benchmark's selected parts; see the file comment. */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const loadBefore = Deno.loadavg();
  const { log } = options;
  const work = options.keep
    ? resolve(options.keep)
    : await Deno.makeTempDir({ prefix: "logbook-bench-" });
  log(`work folder: ${work}${options.keep ? " (kept)" : ""}`);
  const dirs = {
    corpus: join(work, "corpus"),
    data: join(work, "data"),
    home: join(work, "home"),
    config: join(work, "config"),
  };
  const restore: { path: string; size: number }[] = [];
  const cleanUp = () => cleanWork(work, restore, options.keep !== null);
  const forgetCleanUp = onStop("the work folder", cleanUp);
  try {
    for (const dir of [dirs.data, dirs.home, dirs.config]) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await Deno.mkdir(dir, { recursive: true });
    }
    const { needs } = runNeeds(options);
    const corpus = needs === "nothing" ? null : await benchCorpus(dirs.corpus, options);
    const manifest = corpus?.manifest ?? null;
    const vars = {
      ...corpusVars(dirs.corpus, dirs.home, dirs.config),
      LOGBOOK_DATA_DIR: dirs.data,
    };
    const ctx = loadContext({ env: envFrom(vars) });
    const redact = redactorFor(ctx);
    const store = needs === "store" ? openStore(ctx) : null;
    const slice = options.sliceSize < options.size
      ? new Slice({ ...dirs, size: options.sliceSize, seed: options.seed, work, log })
      : null;
    try {
      const notes: string[] = [];
      const has = (part: Part) => options.parts.includes(part);
      const run: Run = {
        options,
        log,
        work,
        dirs,
        manifest,
        vars,
        ctx,
        store,
        redact,
        slice,
        notes,
        restore,
        has,
      };
      const reportOf = (
        { profile, ...measured }: Measured & { profile: BenchReport["profile"] },
        more: string[],
      ): BenchReport => {
        const skipped = PART_NAMES.filter((part) => !has(part));
        return {
          ...measured,
          figures: figuresOf(measured),
          notes: [
            ...notes,
            ...(skipped.length ? [`not measured (--only): ${skipped.join(", ")}`] : []),
            ...(slice?.used ? [sliceNote(slice.size, options.parts)] : []),
            ...more,
          ],
          machine: machine(loadBefore),
          work,
          corpus: manifest && { ...manifest, reused: corpus!.reused },
          parts: options.parts,
          slice: slice?.used ? slice.size : null,
          profile,
        };
      };
      // The figures so far, written as each part ends: a run that dies (out of memory, killed)
      // leaves them in its work folder, which only a run that ends removes.
      const snapshot = join(work, REPORT_FILE);
      const written = (report: BenchReport) =>
        writeAtomically(snapshot, formatReport(report, options));
      const report = reportOf(
        await measureParts(run, (so) => {
          written(reportOf(so, [`the run had not ended when this was written (${snapshot})`]));
        }),
        [],
      );
      if (options.keep) written(report);
      return report;
    } finally {
      await slice?.close();
      store?.close();
    }
  } finally {
    cleanUp();
    forgetCleanUp();
  }
}

/** What ran on the slice, for the notes. */
function sliceNote(size: number, parts: readonly Part[]): string {
  const what = slicedParts(parts).map((p) => p.slice.figures);
  return `measured on the ${formatBytes(size)} slice, a corpus of the same seed ` +
    `(--slice-size), not on the whole corpus: ${what.join(", ")}`;
}

/**
 * Truncates the corpus files appended to back to their sizes, and removes the work folder, or
 * with `keep` only what the parts made beside the corpus, the store and the relevance benchmark.
 */
function cleanWork(work: string, restore: { path: string; size: number }[], keep: boolean): void {
  for (const { path, size } of restore.splice(0)) {
    try {
      Deno.truncateSync(path, size);
    } catch {
      // The corpus is being removed anyway, or the file is gone.
    }
  }
  const kept = ["corpus", "data", "home", "config", "relevance", REPORT_FILE];
  const entries = keep ? [...safeReadDir(work)].filter((name) => !kept.includes(name)) : [""];
  for (const name of entries) {
    try {
      Deno.removeSync(join(work, name), { recursive: true });
    } catch {
      // Gone already.
    }
  }
}

function safeReadDir(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)].map((entry) => entry.name);
  } catch {
    return [];
  }
}

/** The corpus kept in `dir` for this size and seed when its files are whole, else null. */
function keptCorpusWhole(
  dir: string,
  options: { size: number; seed: number },
): CorpusManifest | null {
  const kept = keptCorpus(dir, options.size, options.seed);
  return kept && treeBytes(join(dir, "claude")).bytes === kept.bytes.claude &&
      treeBytes(join(dir, "codex")).bytes === kept.bytes.codex
    ? kept
    : null;
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
  const kept = keptCorpusWhole(dir, options);
  if (kept) {
    log(`reusing the corpus in ${dir}`);
    return { manifest: kept, reused: true };
  }
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  log(`generating a ${formatBytes(options.size)} corpus (seed ${options.seed}) in ${dir}`);
  const manifest = await generateInChild(dir, options);
  log(`corpus: ${formatBytes(manifest.totalBytes)} in ${manifest.generationMs} ms`);
  return { manifest, reused: false };
}

/** Every family of figures, null until its part measures it. */
type Families = Omit<Measured, "corpus"> & { profile: BenchReport["profile"] };

/**
 * The selected parts, in order: first the store (the capture part, or one plain capture when
 * only later parts need it), then the figures read from it in this process and in commands,
 * the parts with stores or corpora of their own, and last those that change the store.
 */
async function measureParts(
  run: Run,
  onFigures: (so: Measured & { profile: BenchReport["profile"] }) => void,
): Promise<Measured & { profile: BenchReport["profile"] }> {
  const families: Families = {
    capture: null,
    noop: null,
    append: null,
    search: null,
    cli: null,
    rg: null,
    show: null,
    status: null,
    usage: null,
    captureRss: null,
    huge: null,
    mcp: null,
    team: null,
    adversarial: null,
    watch: null,
    migration: null,
    upgrade: null,
    relevance: null,
    rebuild: null,
    forget: null,
    profile: null,
  };
  const { options, log, manifest, store, notes, has } = run;
  // Each family set, wherever a part sets it, is heard by `onFigures` at once.
  const m = new Proxy(families, {
    set(target, key, value) {
      const set = Reflect.set(target, key, value);
      onFigures({ corpus: manifest, ...target });
      return set;
    },
  });
  let agents: CorpusAgent[] = [...CORPUS_AGENTS];
  if (store && manifest) {
    agents = await makeStore(run, store, manifest, m);
    await heedSignals();
    await measureFromStore(run, store, manifest, agents, m);
  }
  if (manifest && has("rg")) {
    const rgFound = await ensureRg(log);
    if (rgFound.note) notes.push(rgFound.note);
    m.rg = await measureRg({
      rg: rgFound.path,
      corpusDir: run.dirs.corpus,
      manifest,
      agents,
      rare: rareTerms(manifest),
      runs: options.cliRuns,
      termRuns: corpusReadingRuns(options),
      log,
    });
  }
  if (store && has("append")) {
    const append = await measureAppendReindex({
      ctx: run.ctx,
      store,
      redact: run.redact,
      agents,
      seed: options.seed,
      restore: run.restore,
      log,
    });
    notes.push(...append.notes);
    m.append = append;
  }
  await measureInChildren(run, m);
  if (store && has("rebuild")) m.rebuild = await measureRebuild({ store, vars: run.vars, log });
  if (store && has("forget")) m.forget = await measureForget({ store, vars: run.vars, log });
  return { corpus: manifest, ...m };
}

/**
 * Captures the corpus into the bench's store: through the capture part (with its rounds and
 * ceilings) when selected, else once. That first capture from empty is the reindex command's,
 * whose peak memory is the rss part's figure. Returns the agents captured.
 */
async function makeStore(
  run: Run,
  store: HistoryStore,
  manifest: CorpusManifest,
  m: Families,
): Promise<CorpusAgent[]> {
  const { options, notes, slice } = run;
  const args = { ...run, store, manifest };
  if (run.has("capture")) {
    const breakdownOn = async (first: { bytes: number; ms: number }) =>
      slice
        ? { ...await slice.store(), slice: slice.size }
        : { ...args, bytes: first.bytes, captureMs: first.ms, slice: null };
    m.capture = await measureCapture({ ...args, rounds: options.captureRounds, breakdownOn });
  }
  const first = m.capture ?? await firstCapture({ ...args, rounds: 1 });
  notes.push(...first.notes);
  if (run.has("rss")) {
    m.captureRss = first.rss;
    run.log("capture's peak RSS: the first capture from empty");
  }
  return first.agents;
}

/**
 * The figures read from the store in this process and by the commands a person runs over it:
 * reindex with nothing to do, search against rg, show, status, usage.
 */
async function measureFromStore(
  run: Run,
  store: HistoryStore,
  manifest: CorpusManifest,
  agents: CorpusAgent[],
  m: Families,
): Promise<void> {
  const { options, log, vars, ctx, redact, notes, has, work } = run;
  if (has("noop")) {
    m.noop = await measureNoopReindex(ctx, store, redact, log);
    notes.push(...m.noop.notes);
  }
  if (has("search")) {
    log(`in-process search: ${manifest.terms.length} terms × 6 filters × ${options.rounds} rounds`);
    const { slice } = run;
    const literal = slice &&
      (async () => ({ ...await slice.store(), manifest: (await slice.corpus()).manifest }));
    m.search = await measureSearch({
      store,
      redact,
      manifest,
      agents,
      rounds: options.rounds,
      scanRounds: options.size >= HUGE ? 1 : options.rounds,
      literal: literal || null,
    });
  }
  const runs = options.cliRuns;
  if (has("cli") || has("show") || has("status") || has("usage")) {
    const bundle = await bundleAsInstalled(log);
    if (bundle !== "built") {
      notes.push(`search, show, usage and status ran from their sources: ${bundle}`);
    }
    if (has("cli")) {
      const rare = rareTerms(manifest);
      m.cli = await measureSearchCommand({ vars, work, rare, runs, bundle, log });
    }
  }
  if (has("show")) m.show = await measureShow({ store, redact, vars, work, runs, log });
  if (has("status")) m.status = await measureStatus({ vars, work, runs, log });
  if (has("usage")) {
    m.usage = await measureUsage({ vars, runs, ccusageRuns: corpusReadingRuns(options), log });
    if (m.usage.note) notes.push(m.usage.note);
  }
}

/**
 * The runs of a command that reads the whole corpus (rg for each term, ccusage): at size, three,
 * each taking seconds (the figures are their medians), and one from HUGE.
 */
function corpusReadingRuns(options: BenchOptions): number {
  if (options.size >= HUGE) return 1;
  return options.size >= LARGE ? Math.min(3, options.cliRuns) : options.cliRuns;
}

function rareTerms(manifest: CorpusManifest): string[] {
  return manifest.terms.filter((t) => t.class === "rare").map((t) => t.term);
}

/**
 * The figures measured in child processes: capture's peak memory, MCP, the team history, the
 * adversarial searches, a watcher's backlog, a migration, the upgrade from the previous release,
 * relevance, the huge line, and the CPU profile when asked for.
 */
async function measureInChildren(run: Run, m: Families): Promise<void> {
  const { options, log, work, dirs, vars, store, manifest, notes, has, slice } = run;
  const historyDb = run.ctx.paths.historyDb;
  if (store && manifest && has("mcp")) m.mcp = await mcpSearch(run, manifest);
  if (store && manifest && has("team")) {
    const terms = indexedTerms(manifest);
    m.team = await measureTeam({ store, vars, work, terms, rounds: options.rounds, log });
    notes.push(...m.team.notes);
  }
  if (store && has("adversarial")) {
    m.adversarial = await measureAdversarial({ vars, historyDb, log });
    notes.push(...m.adversarial.notes);
  }
  if (has("watch") && (slice || manifest)) {
    const watchVars = slice ? (await slice.corpus()).vars : vars;
    m.watch = await measureWatchBacklog(watchVars, work, options.captureRounds, log);
    if (m.watch.ratio === null) notes.push("reindex --watch did not capture the whole corpus");
  }
  if (manifest && has("rss") && !m.captureRss) {
    // The watch part's plain reindex of the same corpus is a capture from empty: its peak serves.
    const shared = slice ? undefined : m.watch?.reindexRss[0];
    m.captureRss = shared ?? await measureCaptureRss(vars, work, log);
    if (shared) log("capture's peak RSS: the watch part's first reindex from empty");
  }
  if (has("migration") && (slice || store)) {
    const on = slice
      ? { ...await slice.store(), vars: (await slice.corpus()).vars }
      : { store: store!, ctx: run.ctx, vars };
    on.store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    m.migration = await measureMigration(on.vars, work, on.ctx.paths.historyDb, log);
  }
  if (has("upgrade")) {
    const upgrade = await measureUpgradeOf({
      ...dirs,
      size: options.upgradeSize,
      seed: options.seed,
      work,
      corpusDir: dirs.corpus,
      corpus: manifest,
      log,
    });
    notes.push(...upgrade.notes);
    m.upgrade = upgrade.run;
  }
  if (has("relevance")) {
    m.relevance = await relevanceIn(work, options);
    notes.push(...m.relevance.notes);
    if (!options.keep) await Deno.remove(join(work, "relevance"), { recursive: true });
  }
  if (has("huge")) {
    m.huge = options.hugeLine > 0
      ? await measureHugeLine({ ...dirs, work, bytes: options.hugeLine, seed: options.seed, log })
      : null;
    if (!m.huge) notes.push("huge_line_peak_rss_mb was not measured (--huge-line 0)");
  }
  if (options.cpuProf && manifest) {
    m.profile = await profileCapture(options.cpuProf, vars, work, log);
  }
}

/** The planted terms the index answers (every class but symbols). */
function indexedTerms(manifest: CorpusManifest): string[] {
  return manifest.terms.filter((t) => INDEXED_CLASSES.includes(t.class)).map((t) => t.term);
}

/** Searches over an open MCP session, as an agent makes them, with what went wrong in notes. */
async function mcpSearch(run: Run, manifest: CorpusManifest): Promise<McpSearchReport> {
  const { options, notes } = run;
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
  options.log(`work folder: ${work}${options.keep ? " (kept)" : ""}`);
  const cleanUp = () => cleanWork(work, [], options.keep !== null);
  const forgetCleanUp = onStop("the work folder", cleanUp);
  try {
    return await relevanceIn(work, options);
  } finally {
    cleanUp();
    forgetCleanUp();
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
previous release captured answers once this build upgraded it, against a fresh capture, how
well search finds facts planted in known conversations again (bench/_relevance.ts), and what a
person waits for: status, /api/status, reindex --rebuild, forget of a conversation.

Before it starts it says how much disk it needs (the corpus, the store at 1.3× the source, a WAL
allowance, and the largest of what one part makes and removes again) and refuses, exit 2, when
the work folder's file system has less free. Stopped (Ctrl-C, SIGTERM), it kills what it started,
truncates the corpus files it appended to and removes its work folder (with --keep, what it made
beside the corpus and the store). The figures so far are written to report.txt in the work folder
as each part ends, so a run that dies (out of memory, SIGKILL) leaves them there.

Options:
  --size SIZE        corpus size, e.g. 20MB, 200MB (default 200MB; MB is 10^6 bytes)
  --json             print one JSON object with the figures (null when not measured)
  --keep DIR         work in DIR and keep it: DIR/corpus (reused when its size and seed match)
                     and DIR/data (the store); DIR/data, DIR/home and DIR/config are replaced;
                     DIR/report.txt holds the report once the run has ended
  --seed N           corpus seed (default ${DEFAULT_SEED})
  --huge-line SIZE   size of the single-line transcript (default ${HUGE_DEFAULT}; 0 skips it)
  --rounds N         timed passes over the search query set (default 5)
  --cli-runs N       timed runs of the search command and of rg per term (default 7)
  --capture-rounds N captures from empty, alternating with as many FTS ceilings, and as many
                     reindex and reindex --watch runs; the figures are the medians (default 3,
                     1 from 1GB: each round is a capture of the whole corpus or more)
  --cpu-prof DIR     also profile a capture with the reindex command and summarise where time goes
  --upgrade-size SIZE the corpus of the upgrade from the previous release (default: --size, at most
                     20MB; 0 skips it)
  --relevance-size SIZE the corpus the relevance benchmark plants its facts in (default ${RELEVANCE_DEFAULT})
  --slice-size SIZE  the corpus the capture's breakdown (where the time goes), the watch part,
                     the migration and the count of the symbols' hits run on (default: --size,
                     at most 1GB): smaller than --size, a
                     corpus of the same seed generated and captured beside it, said in the notes
  --only PART,…      measure only these parts (below); the others' figures are null, and the
                     report says "not measured (--only)". The store is captured once for the
                     parts that need it. --only relevance alone prints only its figures, and
                     with --keep DIR works in DIR/relevance
  --dry-run          say what would run and the disk it needs, and exit (2 when it is not free)
  -h, --help         show this help

Parts, in the order they run, and what each costs. C is one capture of the corpus from empty:
28 MB/s on the 2-core reference machine in a quiet hour (about 6 min at 10GB), five times slower
under a load of 9. The first capture makes the store, once for every part that reads it.
${partsHelp()}

Figures: capture_mb_s and fts_ceiling_mb_s are MB of captured source per second (capture the reindex
command from empty, spawn to exit; the ceiling the same text into a bare FTS5 table in the bench's
process); slice_capture_mb_s is the same capture of the slice, where there is one, and
capture_over_slice the corpus's MB/s over the slice's (target ≥ 0.9: no slowdown as the store grows,
10GB against its 1GB slice in the same run); search_*_ms cover every planted term the index answers
(CJK words inside a sentence too) alone and with filters (symbols, a literal scan, have their own
row in the table); search_cli_ms is the search command (deno run with its task's permissions, not
deno task) from spawn to exit, started from its bundle as the install builds it (deno task bundle),
and search_cli_sources_ms the same from its sources; rg_cli_ms rg -l -F for the same terms over the
same files, rg_cli_over_search_cli the one over the other (target ≥ 2 at 200MB, ≥ 8 from 1GB);
show_cli_ms is the show command's first page end to end (show_cli_sources_ms from its sources);
capture_peak_rss_mb is the peak RSS of the reindex command capturing the corpus from empty (the
first capture's); rg_ms is the median of rg -l -F -i -a over the same terms, rg_over_search that of
the rare terms over search's rare-term p50; huge_line_peak_rss_mb is in MiB; store_ratio is
history.db plus its WAL after a checkpoint over the captured source bytes; adversarial_search_max_ms
is the slowest of issue 11's adversarial searches end to end (the search command and a dashboard
process), status_during_search_ms the slowest /api/status meanwhile and request_during_search_ms the
slowest request that does no work of its own (auth, then a 404). watch_backlog_over_reindex is the
time reindex --watch takes to store the whole corpus from empty over that of reindex;
huge_line_rebuild_peak_rss_mb is the peak RSS of reindex --rebuild over the huge line's store.
mcp_search_ms is the p50 of search_history calls over one open logbook mcp session (the SDK's client
over stdio), every term, all projects. push_mb_s is logbook push end to end into a local PostgreSQL
(MB of the raw transcript of the records it sent, as it reports them, per second, over every push);
team_search_p50_ms/p95_ms search --team end to end (the command: start-up, connecting, searching)
after the corpus was pushed by five machines.
empty_script_ms is an empty script run with search's flags, right after each search command (the
floor any command starts from), and search_cli_own_ms the median of each search command's time less
the empty script's beside it; show_cli_own_ms and status_cli_own_ms are the same for show and
status, each beside an empty script with its own flags. status_cli_ms is status --json end to end,
api_status_ms the median of /api/status answered by a dashboard process already running. rebuild_ms
is reindex --rebuild of the bench's store end to end, rebuild_peak_rss_mb its peak RSS;
forget_cli_ms is forget --yes of the store's longest conversation end to end (once, after every
other part: it changes the store), forget_scrub_ms the time from its start until forget --finish
returned, the text index merged by the process forget left running so that no file holds the
conversation's words. migrate_mb_s is the store's raw bytes over the time migration 0008 (the CJK
index, in batches) adds to a no-op reindex of a copy of the store written as before it, and
migration_peak_rss_mb that reindex's peak RSS. upgrade_terms_differing is the number of terms
(planted and common) whose hits differ between a store the previous release captured and this
build's reindex then upgraded, and a fresh capture of the same corpus by this build (target 0);
upgrade_mb_s is that corpus's MB over the time the upgrading reindex took. relevance_*: forty facts
planted in known conversations, each found again by five queries: its noun (exact), another form of
its verb (form), the noun with one typo (typo), the first 3 to 6 letters of the noun as typed
(prefix, searched as the search screen does as you type) and two of its words in another order
(order). relevance_recall_<class> is the share whose conversation is among the first 10 hits'
conversations, relevance_mrr the mean of 1 / the rank of its first hit (0 past 10) over every query;
relevance_exact_p50_ms and _p95_ms time the exact and order queries in-process,
relevance_forgiving_p95_ms the others; relevance_store_ratio is that store over its source,
relevance_store_growth its size over the same corpus's captured by the build before issue 31
(${RELEVANCE_BASELINE}), less one, and relevance_capture_slowdown likewise for the median capture
time (the reindex command, spawn to exit).

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
        "capture-rounds": { type: "string" },
        "cpu-prof": { type: "string" },
        "upgrade-size": { type: "string" },
        "relevance-size": { type: "string", default: RELEVANCE_DEFAULT },
        "slice-size": { type: "string" },
        only: { type: "string" },
        "dry-run": { type: "boolean" },
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
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    console.error(`error: ${err.message}\nRun with --help for usage.`);
    return 2;
  }
  const plan = runDiskPlan(options);
  const free = await freeBytes(plan.dir);
  const planText = diskText(plan, free);
  if (values["dry-run"]) {
    console.log(`parts: ${options.parts.join(", ")}\n${planText}`);
  } else options.log(planText);
  if (free !== null && free < plan.needed) {
    console.error(
      `error: Not enough free disk in "${plan.dir}" for this run: it needs ` +
        `${formatBytes(plan.needed)}, ${formatBytes(free)} are free`,
    );
    return 2;
  }
  if (values["dry-run"]) return 0;
  const stopListening = stopOnSignals(options.log);
  try {
    const alone = options.parts.length === 1 && options.parts[0] === "relevance";
    const { report, human } = alone
      ? await runRelevanceAlone(options).then((report) => ({
        report,
        human: () => formatRelevanceAlone(report, options),
      }))
      : await runBench(options).then((report) => ({
        report,
        human: () => formatReport(report, options),
      }));
    await heedSignals();
    if (values.json) {
      for (const note of report.notes) console.error(`note: ${note}`);
      console.log(JSON.stringify(report.figures));
    } else {
      console.log(human());
    }
    return 0;
  } finally {
    stopListening();
  }
}

/** The disk plan in words: what it needs, for what, and what is free. */
function diskText(plan: DiskPlan & { dir: string }, free: number | null): string {
  const items = [...plan.stays, ...(plan.largest ? [plan.largest] : [])]
    .map((item) => `${item.what} ${formatBytes(item.bytes)}`);
  return `disk: needs ${formatBytes(plan.needed)} in ${plan.dir} (${
    items.join(", ") || "nothing"
  }); ` +
    (free === null ? "df could not say how much is free" : `${formatBytes(free)} free`);
}

/** The options of a run from the command line's values; a RangeError for a bad one. */
function benchOptions(values: {
  size: string;
  seed?: string | undefined;
  keep?: string | undefined;
  "huge-line": string;
  rounds: string;
  "cli-runs": string;
  "capture-rounds"?: string | undefined;
  "cpu-prof"?: string | undefined;
  "upgrade-size"?: string | undefined;
  "relevance-size": string;
  "slice-size"?: string | undefined;
  only?: string | undefined;
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
  const captureRounds = values["capture-rounds"];
  const sliceSize = values["slice-size"] === undefined
    ? Math.min(size, SLICE_DEFAULT)
    : parseSize(values["slice-size"]);
  if (sliceSize <= 0) {
    throw new RangeError(`Expected a --slice-size above 0: got "${values["slice-size"]}"`);
  }
  return {
    size,
    seed: values.seed === undefined ? DEFAULT_SEED : count("seed", values.seed),
    keep: values.keep ?? null,
    hugeLine: parseSize(values["huge-line"]),
    rounds: count("rounds", values.rounds),
    cliRuns: count("cli-runs", values["cli-runs"]),
    captureRounds: captureRounds === undefined
      ? (size >= LARGE ? 1 : 3)
      : count("capture-rounds", captureRounds),
    cpuProf: values["cpu-prof"] ?? null,
    upgradeSize: values["upgrade-size"] === undefined
      ? Math.min(size, UPGRADE_DEFAULT)
      : parseSize(values["upgrade-size"]),
    relevanceSize: parseSize(values["relevance-size"]),
    sliceSize,
    parts: values.only === undefined ? [...PART_NAMES] : parseParts(values.only),
    // The bench's own heap beside the time: a part that holds more than it should shows.
    log: (message) =>
      console.error(
        `[bench ${((performance.now() - started) / 1000).toFixed(1)}s, heap ${
          Math.round(Deno.memoryUsage().heapUsed / 1e6)
        } MB] ${message}`,
      ),
  };
}

if (import.meta.main) Deno.exit(await main(Deno.args));
