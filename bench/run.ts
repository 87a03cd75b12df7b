#!/usr/bin/env -S deno run -A
// Issue 7's benchmark: generates a corpus in all three formats, captures it through the real
// engine, and prints capture throughput against a bare FTS5 baseline, no-op and append reindex
// times, search latency in-process and end to end against rg, the first page of show, peak
// memory on a huge single-line transcript (captured and rebuilt), the store's size, a watcher's
// drain of the corpus against reindex, and a store the previous release captured, upgraded by this
// build, against a fresh capture, each next to its target.

import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DatabaseSync } from "node:sqlite";
import { discoverContext, runCapture } from "../lib/capture/run.ts";
import { loadContext, openStore, redactorFor } from "../lib/context.ts";
import type { Redactor } from "../lib/gate.ts";
import { envFrom } from "../lib/env.ts";
import type { Adapter, LineAdapter, SourceRef } from "../lib/sources/adapter.ts";
import { ADAPTERS } from "../lib/sources/mod.ts";
import { pageConversation } from "../lib/store/conversations.ts";
import type { HistoryStore } from "../lib/store/db.ts";
import type { CaptureSummary } from "../lib/capture/summary.ts";
import { type ConversationRow, TextDeriver } from "../lib/store/records.ts";
import { search, type SearchFilters } from "../lib/store/search.ts";
import { type AdversarialReport, formatAdversarial, measureAdversarial } from "./_adversarial.ts";
import { measureMcpSearch } from "./_mcp.ts";
import { measureTeam } from "./_team.ts";
import { appendClaudeTurns } from "./_claude.ts";
import {
  CORPUS_AGENTS,
  CORPUS_VERSION,
  type CorpusAgent,
  corpusEnv,
  type CorpusManifest,
  DEFAULT_SEED,
  generateCorpus,
  readManifest,
} from "./corpus.ts";
import {
  commandArgs,
  commandEnv,
  ensureRg,
  peakRss,
  runTimed,
  summariseProfile,
  timeRg,
  writeHugeLine,
} from "./_measure.ts";
import {
  type Ceiling,
  ftsCeiling,
  type LinePhases,
  linePhases,
  rawInsertCeiling,
} from "./_phases.ts";
import {
  INDEXED_CLASSES,
  mulberry32,
  Planter,
  TERM_CLASSES,
  type TermClass,
  TextGen,
  Vocabulary,
} from "./_text.ts";
import { measureWatchBacklog, type WatchBacklog } from "./_watch.ts";
import { measureMigration } from "./_migrate.ts";
import { measureUpgrade, type UpgradeRun, upgradeUnavailable } from "./_upgrade.ts";
import {
  formatRelevance,
  measureRelevance,
  RELEVANCE_BASELINE,
  RELEVANCE_KEYS,
  RELEVANCE_TARGETS,
  type RelevanceReport,
} from "./_relevance.ts";
import {
  fileSize,
  formatBytes,
  median,
  num,
  parseSize,
  quantile,
  roundFigures,
  table,
  taskFlags,
  treeBytes,
} from "./_util.ts";

/** The figures of `--json`, in this order. */
export const FIGURE_KEYS = [
  "capture_mb_s",
  "fts_ceiling_mb_s",
  "noop_reindex_ms",
  "append_reindex_ms",
  "search_p50_ms",
  "search_p95_ms",
  "search_cli_ms",
  "search_cli_sources_ms",
  "rg_cli_ms",
  "rg_cli_over_search_cli",
  "rg_ms",
  "rg_over_search",
  "show_first_page_ms",
  "show_cli_ms",
  "show_cli_sources_ms",
  "capture_peak_rss_mb",
  "huge_line_peak_rss_mb",
  "store_ratio",
  "adversarial_search_max_ms",
  "status_during_search_ms",
  "request_during_search_ms",
  "watch_backlog_over_reindex",
  "huge_line_rebuild_peak_rss_mb",
  "mcp_search_ms",
  "push_mb_s",
  "team_search_ms",
  "migrate_mb_s",
  "migration_peak_rss_mb",
  "upgrade_terms_differing",
  "upgrade_mb_s",
  ...RELEVANCE_KEYS,
] as const;
export type FigureKey = typeof FIGURE_KEYS[number];
export type Figures = Record<FigureKey, number | null>;

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

/** Everything one run measured: the figures and the detail the human output shows. */
export interface BenchReport {
  figures: Figures;
  notes: string[];
  machine: {
    cpus: number;
    model: string;
    memoryGb: number;
    loadBefore: number[];
    loadAfter: number[];
  };
  work: string;
  corpus: CorpusManifest & { reused: boolean };
  captured: { agent: string; sources: number; records: number; conversations: number }[];
  capturedAgents: CorpusAgent[];
  capturedBytes: number;
  /** The median capture, and each round's time (the first made the store measured after). */
  capture: { ms: number; runs: number[]; summary: CaptureSummary };
  /** The median ceiling (insertMs), and each round's inserts and commits. */
  ceiling: Ceiling;
  ceilingRuns: number[];
  /** The same inserts into a table with the store's FTS settings (automerge 16). */
  ceilingStoreFts: Ceiling;
  raw: { ms: number; rows: number; bytes: number };
  phases: LinePhases;
  noop: { runs: number[]; sources: number };
  append: { runs: number[]; bytes: number[]; records: number[] };
  search: {
    queries: number;
    /** `stopped`: searches the time budget stopped (the literal scan of a symbol, at size). */
    byClass: {
      cls: TermClass;
      filtered: boolean;
      p50: number;
      p95: number;
      n: number;
      stopped: number;
    }[];
    found: { term: string; cls: TermClass; hits: number; planted: number }[];
  };
  /** The show command, first page of the longest conversation, spawn to exit. */
  showCli: { runs: number[]; codes: number[]; sources: number[] };
  /** `rg -l -F <term>` over the source files, for the same terms as the search command. */
  rgCli: { runs: number[]; args: string };
  /** The reindex command capturing the corpus from empty in a child process. */
  captureRss: { mib: number; ms: number; how: string };
  cli: {
    runs: number[];
    /** The same runs from the sources (LOGBOOK_SOURCES=1), alternating with the bundle's. */
    sources: number[];
    /** Whether `deno task bundle` built the bundle the runs start from, or why not. */
    bundle: string;
    flags: string[];
    codes: number[];
    /** The same command with --help, and an empty script with the same flags. */
    help: number[];
    empty: number[];
  };
  rg: { path: string | null; byClass: { cls: TermClass; ms: number }[]; roots: string[] };
  show: { runs: number[]; conversation: string; records: number; page: number };
  huge: {
    bytes: number;
    mib: number | null;
    baselineMib: number | null;
    ms: number;
    how: string;
    captured: number;
    /** `reindex --rebuild` of the store holding it. */
    rebuild: { mib: number; ms: number };
  } | null;
  watch: WatchBacklog;
  /** The previous release's store upgraded by this build, against a fresh capture. */
  upgrade: UpgradeRun | null;
  /** Facts planted in known conversations, found again by five classes of query. */
  relevance: RelevanceReport;
  store: { db: number; wal: number };
  profile: ReturnType<typeof summariseProfile> | null;
  adversarial: AdversarialReport;
}

const HUGE_DEFAULT = "1GiB";
/** The relevance benchmark's corpus, unless told: it is captured by two builds. */
const RELEVANCE_DEFAULT = "20MB";
/** The upgrade's corpus at most, unless told: it is captured three times. */
const UPGRADE_DEFAULT = 20_000_000;

/** Runs the whole benchmark; see the file comment. */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const { log } = options;
  const notes: string[] = [];
  const loadBefore = Deno.loadavg();
  const work = options.keep
    ? resolve(options.keep)
    : await Deno.makeTempDir({ prefix: "logbook-bench-" });
  const corpusDir = join(work, "corpus");
  const data = join(work, "data");
  const home = join(work, "home");
  const config = join(work, "config");
  const restore: { path: string; size: number }[] = [];
  try {
    for (const dir of [data, home, config]) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await Deno.mkdir(dir, { recursive: true });
    }

    // The corpus -----------------------------------------------------------------------------
    let manifest = readManifest(corpusDir);
    let reused = false;
    if (
      manifest && manifest.version === CORPUS_VERSION && manifest.seed === options.seed &&
      manifest.targetBytes === options.size &&
      treeBytes(join(corpusDir, "claude")).bytes === manifest.bytes.claude &&
      treeBytes(join(corpusDir, "codex")).bytes === manifest.bytes.codex
    ) {
      reused = true;
      log(`reusing the corpus in ${corpusDir}`);
    } else {
      await Deno.remove(corpusDir, { recursive: true }).catch(() => {});
      await Deno.mkdir(corpusDir, { recursive: true });
      log(
        `generating a ${formatBytes(options.size)} corpus (seed ${options.seed}) in ${corpusDir}`,
      );
      manifest = generateCorpus({
        out: corpusDir,
        size: options.size,
        seed: options.seed,
        onProgress: log,
      });
      log(`corpus: ${formatBytes(manifest.totalBytes)} in ${manifest.generationMs} ms`);
    }

    const rg = await ensureRg(log);
    if (rg.note) notes.push(rg.note);

    // Capture from empty, in-process through runCapture ----------------------------------------
    const vars: Record<string, string> = {
      ...corpusEnv(corpusDir, home),
      LOGBOOK_DATA_DIR: data,
      LOGBOOK_CONFIG_DIR: config,
      INIT_CWD: home,
      NO_COLOR: "1",
    };
    const ctx = loadContext({ env: envFrom(vars) });
    const redact = redactorFor(ctx);
    const store = openStore(ctx);
    try {
      log(`capture from empty (runCapture, in-process), round 1 of ${options.captureRounds}`);
      const t0 = performance.now();
      const result = await runCapture({ ctx, store, redact, command: "bench" });
      const captureRuns = [performance.now() - t0];
      if (result.status !== "captured") throw new Error(`Capture did not run: ${result.status}`);
      const summary = result.summary;
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
      const capturedAgents = CORPUS_AGENTS.filter((a) =>
        (captured.find((c) => c.agent === a)?.records ?? 0) > 0
      );
      for (const agent of CORPUS_AGENTS) {
        if (!capturedAgents.includes(agent)) {
          notes.push(
            `${agent} was not captured (no adapter registered, or its source failed): its ` +
              `${formatBytes(manifest.bytes[agent])} are left out of every figure`,
          );
        }
      }
      const capturedBytes = capturedAgents.reduce((n, a) => n + manifest!.bytes[a], 0);
      log(
        `captured ${formatBytes(capturedBytes)} (${capturedAgents.join(", ")}) in ${
          Math.round(captureRuns[0]!)
        } ms: ${summary.records} records (batches written ${summary.writer})`,
      );

      // Store size after a checkpoint ----------------------------------------------------------
      store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      const storeSize = {
        db: fileSize(ctx.paths.historyDb),
        wal: fileSize(`${ctx.paths.historyDb}-wal`),
      };

      // The bare baseline, and capture again: rounds alternate, so a noisy neighbour on a shared
      // machine weighs on both; the figures are the medians ---------------------------------------
      const ceilingDb = join(work, "ceiling.db");
      const ceilings: Ceiling[] = [];
      for (let round = 1; round <= options.captureRounds; round++) {
        log(`FTS ceiling: the same derived text into a fresh FTS5 table, round ${round}`);
        ceilings.push(ftsCeiling(store, ADAPTERS, redact, ceilingDb));
        await removeDb(ceilingDb);
        if (round === options.captureRounds) break;
        log(`capture from empty into a scratch store, round ${round + 1}`);
        captureRuns.push(await scratchCapture(vars, join(work, "data-again")));
      }
      const ceilingRuns = ceilings.map((c) => c.insertMs);
      const captureMs = median(captureRuns);
      const ceilingMs = median(ceilingRuns);
      // Rows and text are the same every round; the time is the median.
      const ceiling: Ceiling = { ...ceilings[0]!, insertMs: ceilingMs };
      log("FTS ceiling with the store's FTS settings (automerge 16), for comparison");
      const storeFts = ftsCeiling(store, ADAPTERS, redact, ceilingDb, { storeSettings: true });
      await removeDb(ceilingDb);
      log("raw ceiling: the same raw chunks into a fresh records table");
      const raw = rawInsertCeiling(store, join(work, "raw-ceiling.db"));
      await removeDb(join(work, "raw-ceiling.db"));
      log("line phases: read, split, parse, derive, redact");
      const phases = linePhases(await lineSources(ctx), redact);

      // No-op reindex ------------------------------------------------------------------------
      log("no-op reindex ×5");
      const noop: number[] = [];
      let sourcesSeen = 0;
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        const again = await runCapture({ ctx, store, redact, command: "bench" });
        noop.push(performance.now() - t);
        if (again.status === "captured") {
          sourcesSeen = again.summary.sources;
          if (again.summary.records) {
            notes.push(`a no-op reindex captured ${again.summary.records} records`);
          }
        }
      }
      if (sourcesSeen < 2000) {
        notes.push(`the no-op reindex saw ${sourcesSeen} sources (the target is for 2,000)`);
      }

      // In-process search ----------------------------------------------------------------------
      log(
        `in-process search: ${manifest.terms.length} terms × 6 filters × ${options.rounds} rounds`,
      );
      const searchResult = measureSearch(store, redact, manifest, capturedAgents, options.rounds);

      // The search command end to end, from its bundle as installed and from the sources -------
      const bundle = await bundleAsInstalled(log);
      if (bundle !== "built") notes.push(`search and show ran from their sources: ${bundle}`);
      const flags = taskFlags("search");
      const env = { ...commandEnv(vars), LOGBOOK_SOURCES: "" };
      const sourcesEnv = { ...env, LOGBOOK_SOURCES: "1" };
      const rare = manifest.terms.filter((t) => t.class === "rare").map((t) => t.term);
      log(`search command ×${options.cliRuns} (deno run ${flags.join(" ")} commands/search.ts)`);
      const cliRuns: number[] = [];
      const cliSources: number[] = [];
      const cliCodes: number[] = [];
      for (let i = 0; i <= options.cliRuns; i++) {
        const args = commandArgs(flags, "search.ts", [rare[i % rare.length]!]);
        const run = await runTimed(Deno.execPath(), args, { env });
        if (run.code > 1) throw new Error(`search failed (${run.code}): ${run.stderr.trim()}`);
        const fromSources = await runTimed(Deno.execPath(), args, { env: sourcesEnv });
        if (i > 0) {
          cliRuns.push(run.ms);
          cliSources.push(fromSources.ms);
          cliCodes.push(run.code);
        }
      }

      // What a start costs without searching: the command's --help, and an empty script.
      const emptyScript = join(work, "empty.ts");
      await Deno.writeTextFile(emptyScript, "\n");
      const startup = { help: [] as number[], empty: [] as number[] };
      for (let i = 0; i <= options.cliRuns; i++) {
        const help = await runTimed(Deno.execPath(), commandArgs(flags, "search.ts", ["--help"]), {
          env,
        });
        const empty = await runTimed(Deno.execPath(), ["run", ...flags, emptyScript], { env });
        if (i > 0) {
          startup.help.push(help.ms);
          startup.empty.push(empty.ms);
        }
      }

      // rg over the same files ----------------------------------------------------------------
      const roots = capturedAgents.map((a) =>
        join(corpusDir, a === "claude" ? "claude" : a === "codex" ? "codex" : "xdg-data")
      );
      const rgByTerm = new Map<string, number>();
      if (rg.path) {
        log(`rg -l -F -i -a ×${options.cliRuns} per term`);
        await timeRg(rg.path, rare[0]!, roots, 1);
        for (const term of manifest.terms) {
          rgByTerm.set(term.term, (await timeRg(rg.path, term.term, roots, options.cliRuns)).ms);
        }
      }

      // rg as a person runs it, for the terms the search command was timed with -------------
      const rgCliRuns: number[] = [];
      if (rg.path) {
        log(`rg -l -F ×${options.cliRuns} (the terms of the search command)`);
        for (let i = 0; i <= options.cliRuns; i++) {
          const run = await runTimed(rg.path, ["-l", "-F", "--", rare[i % rare.length]!, ...roots]);
          if (run.code > 1) throw new Error(`rg failed (${run.code}): ${run.stderr.trim()}`);
          if (i > 0) rgCliRuns.push(run.ms);
        }
      }

      // show's first page ---------------------------------------------------------------------
      const longest = store.db.prepare(
        "SELECT * FROM conversations ORDER BY record_count DESC, id LIMIT 1",
      ).get() as unknown as ConversationRow;
      log(`show: first page of ${longest.key} (${longest.record_count} records) ×9`);
      const showRuns: number[] = [];
      let pageSize = 0;
      for (let i = 0; i <= 9; i++) {
        const t = performance.now();
        const page = pageConversation(store, new TextDeriver(store, ADAPTERS, redact), longest);
        if (i > 0) showRuns.push(performance.now() - t);
        pageSize = page.records.length;
      }
      log(`show command: first page of ${longest.key} ×${options.cliRuns}`);
      const showCli = { runs: [] as number[], codes: [] as number[], sources: [] as number[] };
      for (let i = 0; i <= options.cliRuns; i++) {
        const args = commandArgs(taskFlags("show"), "show.ts", [longest.key]);
        const run = await runTimed(Deno.execPath(), args, { env });
        if (run.code !== 0) throw new Error(`show failed (${run.code}): ${run.stderr.trim()}`);
        const fromSources = await runTimed(Deno.execPath(), args, { env: sourcesEnv });
        if (i > 0) {
          showCli.runs.push(run.ms);
          showCli.sources.push(fromSources.ms);
          showCli.codes.push(run.code);
        }
      }

      // Append 1 MB to one file, then reindex ----------------------------------------------------
      const append = { runs: [] as number[], bytes: [] as number[], records: [] as number[] };
      if (capturedAgents.includes("claude")) {
        const targets = appendTargets(store, 3);
        log(`append 1 MB to one file and reindex ×${targets.length}`);
        const vocabulary = new Vocabulary(options.seed + 1, []);
        const random = mulberry32(options.seed + 1);
        const gen = new TextGen(random, vocabulary, new Planter(0, vocabulary, random));
        for (const target of targets) {
          restore.push({ path: target.path, size: fileSize(target.path) });
          append.bytes.push(
            appendClaudeTurns(gen, target.path, target.sessionId, target.cwd, 1_000_000),
          );
          const t = performance.now();
          const after = await runCapture({ ctx, store, redact, command: "bench" });
          append.runs.push(performance.now() - t);
          append.records.push(after.status === "captured" ? after.summary.records : 0);
        }
      } else {
        notes.push("append_reindex_ms was not measured: Claude Code transcripts were not captured");
      }

      // Capture's peak memory: the reindex command from empty, in a child process ---------------
      const captureRss = await measureCaptureRss(vars, work, log);

      // Adversarial searches, through the command and a dashboard process ------------------------
      // Searches over an open MCP session, as an agent makes them ------------------------------
      log(
        `MCP search_history over stdio: ${manifest.terms.length} terms × ${options.rounds} rounds`,
      );
      const indexedTerms = manifest.terms.filter((t) => INDEXED_CLASSES.includes(t.class))
        .map((t) => t.term);
      const mcp = await measureMcpSearch(vars, indexedTerms, options.rounds);
      if (mcp.errors) notes.push(`${mcp.errors} MCP searches answered with a tool error`);
      if (mcp.stopped) {
        notes.push(`${mcp.stopped} MCP searches were stopped by their budget (partial hits)`);
      }

      // The team history: push as two machines, then search the team database ---------------
      const team = await measureTeam({
        store,
        vars,
        work,
        terms: indexedTerms,
        rounds: options.rounds,
        log,
      });
      notes.push(...team.notes);

      const adversarial = await measureAdversarial({ vars, historyDb: ctx.paths.historyDb, log });
      notes.push(...adversarial.notes);
      // A watcher draining the whole corpus, against reindex --------------------------------------
      const watch = await measureWatchBacklog(vars, work, options.captureRounds, log);
      if (watch.ratio === null) notes.push("reindex --watch did not capture the whole corpus");

      // A batched migration (0008) of a copy of the store, in a child process --------------------
      store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      const migration = await measureMigration(vars, work, ctx.paths.historyDb, log);
      log(
        `migrated ${formatBytes(migration.rawBytes)} of records in ${
          Math.round(migration.ms)
        } ms (a no-op reindex takes ${Math.round(migration.noopMs)} ms), peak RSS ${
          Math.round(migration.mib)
        } MiB`,
      );

      // A store the previous release captured, upgraded by this build ------------------------------
      const upgrade = await upgradeStep(
        options,
        work,
        { home, config, corpusDir, manifest },
        notes,
      );

      // Facts planted in known conversations of a corpus of their own, found again -----------------
      const relevance = await measureRelevance({
        size: options.relevanceSize,
        seed: options.seed,
        rounds: options.rounds,
        captureRounds: options.captureRounds,
        dir: join(work, "relevance"),
        log,
      });
      notes.push(...relevance.notes);
      if (!options.keep) await Deno.remove(join(work, "relevance"), { recursive: true });

      // The huge single line, in a child process -------------------------------------------------
      const huge = options.hugeLine > 0 ? await measureHugeLine(work, home, config, options) : null;
      if (!huge) notes.push("huge_line_peak_rss_mb was not measured (--huge-line 0)");

      // A CPU profile of a whole capture, when asked for ---------------------------------------
      let profile: BenchReport["profile"] = null;
      if (options.cpuProf) {
        profile = await profileCapture(options.cpuProf, vars, work, log);
      }

      // Figures ---------------------------------------------------------------------------------
      const mbs = (ms: number) => capturedBytes / 1e6 / (ms / 1000);
      const all = searchResult.all;
      const rareSearch = searchResult.byClass.find((c) => c.cls === "rare" && !c.filtered);
      const rgRare = rare.map((t) => rgByTerm.get(t)).filter((v): v is number => v !== undefined);
      const rgAll = indexedTerms.map((t) => rgByTerm.get(t)).filter((v): v is number =>
        v !== undefined
      );
      const figures: Figures = {
        capture_mb_s: mbs(captureMs),
        fts_ceiling_mb_s: mbs(ceilingMs),
        noop_reindex_ms: median(noop),
        append_reindex_ms: append.runs.length ? median(append.runs) : null,
        search_p50_ms: quantile(all, 0.5),
        search_p95_ms: quantile(all, 0.95),
        search_cli_ms: median(cliRuns),
        search_cli_sources_ms: median(cliSources),
        rg_cli_ms: rgCliRuns.length ? median(rgCliRuns) : null,
        rg_cli_over_search_cli: rgCliRuns.length ? median(rgCliRuns) / median(cliRuns) : null,
        rg_ms: rgAll.length ? median(rgAll) : null,
        rg_over_search: rgRare.length && rareSearch ? median(rgRare) / rareSearch.p50 : null,
        show_first_page_ms: median(showRuns),
        show_cli_ms: median(showCli.runs),
        show_cli_sources_ms: median(showCli.sources),
        capture_peak_rss_mb: captureRss.mib,
        huge_line_peak_rss_mb: huge?.mib ?? null,
        store_ratio: (storeSize.db + storeSize.wal) / capturedBytes,
        adversarial_search_max_ms: adversarial.maxMs,
        status_during_search_ms: adversarial.statusMaxMs,
        request_during_search_ms: adversarial.otherMaxMs,
        watch_backlog_over_reindex: watch.ratio,
        huge_line_rebuild_peak_rss_mb: huge?.rebuild.mib ?? null,
        mcp_search_ms: mcp.p50,
        push_mb_s: team.pushMbS,
        team_search_ms: team.searchP50,
        migrate_mb_s: migration.mbS,
        migration_peak_rss_mb: migration.mib,
        upgrade_terms_differing: upgrade?.differing ?? null,
        upgrade_mb_s: upgrade ? upgrade.bytes / 1e6 / (upgrade.upgradeMs / 1000) : null,
        ...relevance.figures,
      };
      roundFigures(figures);
      return {
        figures,
        notes,
        machine: machine(loadBefore),
        work,
        corpus: { ...manifest, reused },
        captured,
        capturedAgents,
        capturedBytes,
        capture: { ms: captureMs, runs: captureRuns, summary },
        ceiling,
        ceilingRuns,
        ceilingStoreFts: storeFts,
        raw,
        phases,
        noop: { runs: noop, sources: sourcesSeen },
        append,
        search: {
          queries: searchResult.queries,
          byClass: searchResult.byClass,
          found: searchResult.found,
        },
        showCli,
        rgCli: { runs: rgCliRuns, args: "-l -F" },
        captureRss,
        cli: {
          runs: cliRuns,
          sources: cliSources,
          bundle,
          flags,
          codes: cliCodes,
          help: startup.help,
          empty: startup.empty,
        },
        rg: {
          path: rg.path,
          roots,
          byClass: TERM_CLASSES.map((cls) => ({
            cls,
            ms: median(
              manifest!.terms.filter((t) => t.class === cls).map((t) => rgByTerm.get(t.term))
                .filter((v): v is number => v !== undefined),
            ),
          })),
        },
        show: {
          runs: showRuns,
          conversation: longest.key,
          records: longest.record_count,
          page: pageSize,
        },
        huge,
        watch,
        upgrade,
        relevance,
        store: storeSize,
        profile,
        adversarial,
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
 * The upgrade from the previous release (`_upgrade.ts`) on a corpus of `options.upgradeSize`: the
 * bench's own when the sizes match, else one generated (or kept) beside it. Null, with a note,
 * when it is skipped or the previous release cannot be had here.
 */
async function upgradeStep(
  options: BenchOptions,
  work: string,
  at: { home: string; config: string; corpusDir: string; manifest: CorpusManifest },
  notes: string[],
): Promise<UpgradeRun | null> {
  const { log } = options;
  if (options.upgradeSize === 0) {
    notes.push("the upgrade from the previous release was not measured (--upgrade-size 0)");
    return null;
  }
  const unavailable = await upgradeUnavailable();
  if (unavailable) {
    notes.push(`the upgrade from the previous release was not measured: ${unavailable}`);
    return null;
  }
  let dir = at.corpusDir;
  let manifest = at.manifest;
  if (options.upgradeSize !== options.size) {
    dir = join(work, "corpus-upgrade");
    const kept = readManifest(dir);
    if (
      kept && kept.version === CORPUS_VERSION && kept.seed === options.seed &&
      kept.targetBytes === options.upgradeSize
    ) {
      manifest = kept;
    } else {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await Deno.mkdir(dir, { recursive: true });
      log(`generating a ${formatBytes(options.upgradeSize)} corpus for the upgrade in ${dir}`);
      manifest = generateCorpus({ out: dir, size: options.upgradeSize, seed: options.seed });
    }
  }
  const vars = {
    ...corpusEnv(dir, at.home),
    LOGBOOK_CONFIG_DIR: at.config,
    INIT_CWD: at.home,
    NO_COLOR: "1",
  };
  const redact = redactorFor(loadContext({ env: envFrom(vars) }));
  const run = await measureUpgrade({ vars, work, manifest, redact, log });
  log(
    `upgrade: ${run.rederived} sources derived again in ${Math.round(run.upgradeMs)} ms; ` +
      `${run.differing} of ${run.terms.length} terms answer otherwise than a fresh capture`,
  );
  return run;
}

/** Captures the corpus from empty into a store of its own, removed after; returns the ms. */
async function scratchCapture(vars: Record<string, string>, data: string): Promise<number> {
  await Deno.remove(data, { recursive: true }).catch(() => {});
  await Deno.mkdir(data, { recursive: true });
  const ctx = loadContext({ env: envFrom({ ...vars, LOGBOOK_DATA_DIR: data }) });
  const store = openStore(ctx);
  try {
    const t0 = performance.now();
    const result = await runCapture({ ctx, store, redact: redactorFor(ctx), command: "bench" });
    if (result.status !== "captured") throw new Error(`Capture did not run: ${result.status}`);
    return performance.now() - t0;
  } finally {
    store.close();
    await Deno.remove(data, { recursive: true }).catch(() => {});
  }
}

async function removeDb(path: string): Promise<void> {
  for (const suffix of ["", "-wal", "-shm"]) await Deno.remove(path + suffix).catch(() => {});
}

function capturedByAgent(store: HistoryStore): BenchReport["captured"] {
  const rows = new Map<string, BenchReport["captured"][number]>();
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
async function lineSources(
  ctx: ReturnType<typeof loadContext>,
): Promise<{ adapter: LineAdapter; ref: SourceRef }[]> {
  const out: { adapter: LineAdapter; ref: SourceRef }[] = [];
  for (const adapter of ADAPTERS as readonly Adapter[]) {
    if (adapter.mode !== "lines") continue;
    for await (const ref of adapter.discover(discoverContext(ctx))) {
      if (ref.format === "jsonl") out.push({ adapter, ref });
    }
  }
  return out;
}

/** Main-session Claude transcripts of middling size, spread over the corpus, to append to. */
function appendTargets(
  store: HistoryStore,
  count: number,
): { path: string; sessionId: string; cwd: string }[] {
  const rows = store.db.prepare(
    `SELECT s.locator, c.native_id, c.cwd FROM sources s
     JOIN conversations c ON c.source_id = s.id AND c.subagent = 0
     WHERE s.agent = 'claude' AND s.cursor BETWEEN 20000 AND 2000000 AND c.cwd IS NOT NULL
     ORDER BY s.locator`,
  ).all() as { locator: string; native_id: string; cwd: string }[];
  const picked: { path: string; sessionId: string; cwd: string }[] = [];
  for (let i = 0; i < count && rows.length; i++) {
    const r = rows[Math.floor(((i + 0.5) / count) * rows.length)]!;
    if (picked.some((p) => p.path === r.locator)) continue;
    picked.push({ path: r.locator, sessionId: r.native_id, cwd: r.cwd });
  }
  return picked;
}

/** Search latencies over the planted terms, with and without filters. */
function measureSearch(
  store: HistoryStore,
  redact: Redactor,
  manifest: CorpusManifest,
  agents: CorpusAgent[],
  rounds: number,
): {
  all: number[];
  queries: number;
  byClass: BenchReport["search"]["byClass"];
  found: BenchReport["search"]["found"];
} {
  const project = store.db.prepare(
    `SELECT project_root FROM conversations WHERE project_root IS NOT NULL
     GROUP BY project_root ORDER BY count(*) DESC LIMIT 1`,
  ).get() as { project_root: string } | undefined;
  const since = store.db.prepare(
    "SELECT ts FROM records WHERE ts IS NOT NULL ORDER BY ts LIMIT 1 OFFSET (SELECT count(*) / 2 FROM records WHERE ts IS NOT NULL)",
  ).get() as { ts: number } | undefined;
  const filters: SearchFilters[] = [
    {},
    { agent: agents[0] ?? "claude" },
    project ? { project: project.project_root } : { agent: agents.at(-1) ?? "claude" },
    { kind: "message", role: "assistant" },
    since ? { since: since.ts } : { subagents: false },
    { subagents: false },
  ];
  const queries: { term: string; cls: TermClass; query: string; filter: number }[] = [];
  for (const term of manifest.terms) {
    const query = term.class === "phrase" ? `"${term.term}"` : term.term;
    filters.forEach((_, i) => queries.push({ term: term.term, cls: term.class, query, filter: i }));
  }
  const times = new Map<string, number[]>();
  const stopped = new Map<string, number>();
  const all: number[] = [];
  const found: BenchReport["search"]["found"] = [];
  for (let round = 0; round <= rounds; round++) {
    for (const q of queries) {
      const key = `${q.cls}:${q.filter === 0 ? "none" : "filtered"}`;
      const t = performance.now();
      const result = search(store, ADAPTERS, redact, {
        query: q.query,
        ...filters[q.filter]!,
        limit: 20,
      });
      const ms = performance.now() - t;
      // A symbol's literal scan reads every record: at size, the budget may stop it first.
      if (result.stopped && round > 0) stopped.set(key, (stopped.get(key) ?? 0) + 1);
      if (round === 0) continue; // warm-up pass
      // The figures are the index's: literal scans (symbols) have their own row.
      if (INDEXED_CLASSES.includes(q.cls)) all.push(ms);
      times.set(key, [...(times.get(key) ?? []), ms]);
    }
  }
  const counted: TermClass[] = ["rare", "medium", "cjk", "hidden", "symbol"];
  for (const term of manifest.terms.filter((t) => counted.includes(t.class))) {
    // A count, not a timing: a budget that never stops it, so no hit is left out.
    const options = { query: term.term, limit: 10_000, budgetMs: 600_000 };
    const hits = search(store, ADAPTERS, redact, options).hits.length;
    const planted = agents.reduce((n, a) => n + (term.byAgent[a] ?? 0), 0);
    found.push({ term: term.term, cls: term.class, hits, planted });
  }
  const byClass = TERM_CLASSES.flatMap((cls) =>
    [false, true].map((filtered) => {
      const key = `${cls}:${filtered ? "filtered" : "none"}`;
      const list = times.get(key) ?? [];
      return {
        cls,
        filtered,
        p50: quantile(list, 0.5),
        p95: quantile(list, 0.95),
        n: list.length,
        stopped: stopped.get(key) ?? 0,
      };
    })
  );
  return { all, queries: queries.length, byClass, found };
}

/**
 * Peak RSS of the reindex command capturing the whole corpus from empty into a scratch store, as
 * a person's first `reindex` does (the in-process captures share the bench's own heap).
 */
async function measureCaptureRss(
  vars: Record<string, string>,
  work: string,
  log: (message: string) => void,
): Promise<{ mib: number; ms: number; how: string }> {
  const data = join(work, "data-rss");
  await Deno.remove(data, { recursive: true }).catch(() => {});
  log("capture's peak RSS: reindex from empty in a child process");
  try {
    const run = await peakRss(
      Deno.execPath(),
      commandArgs(taskFlags("reindex"), "reindex.ts", ["--quiet"]),
      commandEnv({ ...vars, LOGBOOK_DATA_DIR: data }),
    );
    if (run.code !== 0) throw new Error(`reindex failed (${run.code}): ${run.stderr.slice(-600)}`);
    return { mib: run.mib, ms: run.ms, how: run.how };
  } finally {
    await Deno.remove(data, { recursive: true }).catch(() => {});
  }
}

/** Peak RSS of the reindex command capturing one huge line, against an empty capture. */
async function measureHugeLine(
  work: string,
  home: string,
  config: string,
  options: BenchOptions,
): Promise<NonNullable<BenchReport["huge"]>> {
  const { log } = options;
  const dir = join(work, "huge");
  const empty = join(dir, "empty");
  const claude = join(dir, "claude");
  const project = join(claude, "projects", "-home-dev-src-huge");
  await Deno.mkdir(project, { recursive: true });
  await Deno.mkdir(empty, { recursive: true });
  const flags = taskFlags("reindex");
  const envFor = (data: string) =>
    commandEnv({
      HOME: home,
      LOGBOOK_DATA_DIR: data,
      LOGBOOK_CONFIG_DIR: config,
      CLAUDE_CONFIG_DIR: claude,
      CODEX_HOME: empty,
      XDG_DATA_HOME: empty,
      INIT_CWD: home,
    });
  const args = commandArgs(flags, "reindex.ts", ["--quiet"]);
  log("peak RSS of an empty capture (the baseline of a deno process)");
  const baseline = await peakRss(Deno.execPath(), args, envFor(join(dir, "data-empty")));
  const path = join(project, "11111111-2222-4333-8444-555555555555.jsonl");
  log(`writing a ${formatBytes(options.hugeLine)} single-line transcript`);
  const bytes = await writeHugeLine(path, options.hugeLine, options.seed);
  log(`capturing it in a child process (deno run ${flags.join(" ")} commands/reindex.ts)`);
  const data = join(dir, "data");
  const run = await peakRss(Deno.execPath(), args, envFor(data));
  if (run.code !== 0) {
    throw new Error(`reindex of the huge line failed (${run.code}): ${run.stderr.slice(-600)}`);
  }
  log("rebuilding its derived data in a child process (reindex --rebuild)");
  const rebuild = await peakRss(
    Deno.execPath(),
    commandArgs(flags, "reindex.ts", ["--quiet", "--rebuild"]),
    envFor(data),
  );
  if (rebuild.code !== 0) {
    throw new Error(
      `rebuild of the huge line failed (${rebuild.code}): ${rebuild.stderr.slice(-600)}`,
    );
  }
  await Deno.remove(path);
  const db = new DatabaseSync(join(data, "history.db"), { readOnly: true });
  let captured = 0;
  try {
    const row = db.prepare("SELECT coalesce(sum(length(raw)), 0) AS n FROM records").get() as {
      n: number;
    };
    captured = Number(row.n);
  } finally {
    db.close();
  }
  return {
    bytes,
    mib: run.mib,
    baselineMib: baseline.mib,
    ms: run.ms,
    how: run.how,
    captured,
    rebuild: { mib: rebuild.mib, ms: rebuild.ms },
  };
}

/** Runs the reindex command over the corpus with `--cpu-prof` and summarises the profile. */
async function profileCapture(
  dir: string,
  vars: Record<string, string>,
  work: string,
  log: (message: string) => void,
): Promise<ReturnType<typeof summariseProfile>> {
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

// ---- output ----------------------------------------------------------------------------------

interface Target {
  key: FigureKey;
  unit: string;
  /** `size` is the corpus size asked for, in bytes. */
  target: (f: Figures, size: number) => string;
  met: (f: Figures, size: number) => boolean | null;
}

/**
 * Builds search's and show's bundle as the install does (`deno task bundle`, run in the toolkit):
 * "built", or why it could not be, in which case the commands run from their sources.
 */
async function bundleAsInstalled(log: (message: string) => void): Promise<string> {
  const run = await runTimed(Deno.execPath(), ["task", "-q", "bundle"]);
  if (run.code !== 0) return `deno task bundle failed (${run.stderr.trim() || `exit ${run.code}`})`;
  log(`bundled search and show in ${Math.round(run.ms)} ms (deno task bundle)`);
  return "built";
}

/** rg's time over the search command's, end to end: the target grows with the corpus. */
function cliRatioTarget(size: number): number {
  return size >= 1e9 ? 8 : 2;
}

const TARGETS: Target[] = [
  {
    key: "capture_mb_s",
    unit: "MB/s",
    target: (f) =>
      `≥ 70% of the FTS ceiling (${num(f.fts_ceiling_mb_s && f.fts_ceiling_mb_s * 0.7)})`,
    met: (f) =>
      f.capture_mb_s === null || f.fts_ceiling_mb_s === null
        ? null
        : f.capture_mb_s >= 0.7 * f.fts_ceiling_mb_s,
  },
  { key: "fts_ceiling_mb_s", unit: "MB/s", target: () => "baseline", met: () => null },
  {
    key: "noop_reindex_ms",
    unit: "ms",
    target: () => "≤ 300 (2,000 files)",
    met: (f) => le(f.noop_reindex_ms, 300),
  },
  {
    key: "append_reindex_ms",
    unit: "ms",
    target: () => "≤ 500",
    met: (f) => le(f.append_reindex_ms, 500),
  },
  { key: "search_p50_ms", unit: "ms", target: () => "≤ 2", met: (f) => le(f.search_p50_ms, 2) },
  { key: "search_p95_ms", unit: "ms", target: () => "≤ 15", met: (f) => le(f.search_p95_ms, 15) },
  { key: "search_cli_ms", unit: "ms", target: () => "≤ 45", met: (f) => le(f.search_cli_ms, 45) },
  { key: "search_cli_sources_ms", unit: "ms", target: () => "—", met: () => null },
  { key: "rg_cli_ms", unit: "ms", target: () => "—", met: () => null },
  {
    key: "rg_cli_over_search_cli",
    unit: "×",
    target: (_, size) => `≥ ${cliRatioTarget(size)}`,
    met: (f, size) =>
      f.rg_cli_over_search_cli === null ? null : f.rg_cli_over_search_cli >= cliRatioTarget(size),
  },
  { key: "rg_ms", unit: "ms", target: () => "—", met: () => null },
  {
    key: "rg_over_search",
    unit: "×",
    target: () => "≥ 20 (rare terms)",
    met: (f) => (f.rg_over_search === null ? null : f.rg_over_search >= 20),
  },
  { key: "show_first_page_ms", unit: "ms", target: () => "—", met: () => null },
  { key: "show_cli_ms", unit: "ms", target: () => "≤ 60", met: (f) => le(f.show_cli_ms, 60) },
  { key: "show_cli_sources_ms", unit: "ms", target: () => "—", met: () => null },
  {
    key: "capture_peak_rss_mb",
    unit: "MiB",
    target: () => "≤ 200",
    met: (f) => le(f.capture_peak_rss_mb, 200),
  },
  {
    key: "huge_line_peak_rss_mb",
    unit: "MiB",
    target: () => "≤ 200",
    met: (f) => le(f.huge_line_peak_rss_mb, 200),
  },
  { key: "store_ratio", unit: "×", target: () => "≤ 1.3", met: (f) => le(f.store_ratio, 1.3) },
  {
    key: "adversarial_search_max_ms",
    unit: "ms",
    target: () => "≤ 2000",
    met: (f) => le(f.adversarial_search_max_ms, 2000),
  },
  {
    key: "status_during_search_ms",
    unit: "ms",
    target: () => "≤ 100",
    met: (f) => le(f.status_during_search_ms, 100),
  },
  {
    key: "request_during_search_ms",
    unit: "ms",
    target: () => "≤ 100",
    met: (f) => le(f.request_during_search_ms, 100),
  },
  {
    key: "watch_backlog_over_reindex",
    unit: "×",
    target: () => "≤ 1.5",
    met: (f) => le(f.watch_backlog_over_reindex, 1.5),
  },
  {
    key: "huge_line_rebuild_peak_rss_mb",
    unit: "MiB",
    target: () => "≤ 200",
    met: (f) => le(f.huge_line_rebuild_peak_rss_mb, 200),
  },
  {
    key: "mcp_search_ms",
    unit: "ms",
    target: () => "≤ 10 (p50)",
    met: (f) => le(f.mcp_search_ms, 10),
  },
  { key: "push_mb_s", unit: "MB/s", target: () => "—", met: () => null },
  { key: "team_search_ms", unit: "ms", target: () => "—", met: () => null },
  { key: "migrate_mb_s", unit: "MB/s", target: () => "—", met: () => null },
  {
    key: "migration_peak_rss_mb",
    unit: "MiB",
    target: () => "≤ 200",
    met: (f) => le(f.migration_peak_rss_mb, 200),
  },
  {
    key: "upgrade_terms_differing",
    unit: "terms",
    target: () => "0",
    met: (f) => le(f.upgrade_terms_differing, 0),
  },
  { key: "upgrade_mb_s", unit: "MB/s", target: () => "—", met: () => null },
  ...RELEVANCE_TARGETS.map((t): Target => ({
    key: t.key,
    unit: t.unit,
    target: () => t.target,
    met: (f) => {
      const value = f[t.key];
      return t.met === null || value === null ? null : t.met(value);
    },
  })),
];

function le(value: number | null, limit: number): boolean | null {
  return value === null ? null : value <= limit;
}

/** The relevance benchmark alone (`--only relevance`), in DIR/relevance with `--keep DIR`. */
async function runRelevanceAlone(options: BenchOptions): Promise<RelevanceReport> {
  const work = options.keep
    ? resolve(options.keep)
    : await Deno.makeTempDir({ prefix: "logbook-bench-" });
  try {
    return await measureRelevance({
      size: options.relevanceSize,
      seed: options.seed,
      rounds: options.rounds,
      captureRounds: options.captureRounds,
      dir: join(work, "relevance"),
      log: options.log,
    });
  } finally {
    if (!options.keep) await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

/** The human report of `--only relevance`: its figures against their targets, and the detail. */
function formatRelevanceAlone(r: RelevanceReport, options: BenchOptions): string {
  const figures = Object.fromEntries(FIGURE_KEYS.map((key) => [key, null])) as Figures;
  Object.assign(figures, r.figures);
  const keys: readonly FigureKey[] = RELEVANCE_KEYS;
  const out = [
    `logbook relevance benchmark (seed ${options.seed}), ${navigator.hardwareConcurrency} CPUs`,
    "",
    targetTable(TARGETS.filter((t) => keys.includes(t.key)), figures, options.size),
    "",
    ...formatRelevance(r),
  ];
  if (r.notes.length) out.push("", "Notes:", ...r.notes.map((n) => `  - ${n}`));
  if (options.keep) out.push("", `Kept: ${r.data} (the store), beside it corpus/`);
  return out.join("\n") + "\n";
}

/** The figures of `targets` against them: met, MISSED, or — for a figure without a target. */
function targetTable(targets: readonly Target[], f: Figures, size: number): string {
  const rows = [["figure", "value", "unit", "target", "result"]];
  for (const t of targets) {
    const met = t.met(f, size);
    rows.push([
      t.key,
      num(f[t.key]),
      t.unit,
      t.target(f, size),
      met === null ? "—" : met ? "met" : "MISSED",
    ]);
  }
  return table(rows, ["l", "r", "l", "l", "l"]);
}

/** The human report: the figures against their targets, then the detail behind them. */
export function formatReport(r: BenchReport, options: BenchOptions): string {
  const f = r.figures;
  const out: string[] = [];
  const m = r.machine;
  out.push(
    `logbook benchmark: ${formatBytes(r.corpus.totalBytes)} corpus (seed ${r.corpus.seed}${
      r.corpus.reused ? ", reused" : ""
    }), ${m.cpus} CPUs (${m.model}), ${m.memoryGb} GB RAM, load ${
      m.loadBefore.map((l) => l.toFixed(2)).join(" ")
    } before, ${m.loadAfter.map((l) => l.toFixed(2)).join(" ")} after`,
    `targets are for the 2-core reference machine and a 200 MB corpus`,
    "",
  );
  out.push(targetTable(TARGETS, f, options.size), "");

  out.push("Corpus and what was captured:");
  const crow = [[
    "agent",
    "source bytes",
    "files",
    "conversations (gen.)",
    "sources",
    "records",
    "conversations (store)",
  ]];
  for (const agent of CORPUS_AGENTS) {
    const c = r.captured.find((x) => x.agent === agent);
    crow.push([
      agent,
      formatBytes(r.corpus.bytes[agent]),
      String(r.corpus.files[agent]),
      String(r.corpus.conversations[agent]),
      String(c?.sources ?? 0),
      String(c?.records ?? 0),
      String(c?.conversations ?? 0),
    ]);
  }
  out.push(table(crow, ["l", "r", "r", "r", "r", "r", "r"]));
  out.push(
    `captured formats: ${r.capturedAgents.join(", ") || "none"} (${formatBytes(r.capturedBytes)} ` +
      `of source; MB/s and the store ratio are over these bytes only)`,
    "",
  );

  const s = r.capture.summary;
  out.push(
    "Capture (runCapture from lib/capture/run.ts, in-process, real ADAPTERS and redactorFor(ctx)):",
    `  ${
      Math.round(r.capture.ms)
    } ms, ${s.records} records, ${s.conversations} new conversations, ` +
      `${s.sources} sources, ${s.errors.length} errors, ${s.drift.length} drift kinds; ` +
      `batches written ${s.writer === "worker" ? "by a worker beside the reading" : "inline"}`,
    `  rounds, alternating (capture | FTS ceiling, ms): ${
      r.capture.runs.map((ms, i) => `${num(ms)} | ${num(r.ceilingRuns[i] ?? NaN)}`).join(", ")
    }; the figures are the medians`,
    `  store: history.db ${formatBytes(r.store.db)} + wal ${
      formatBytes(r.store.wal)
    } after a checkpoint`,
    "",
    "Where the time goes (each step timed on its own, same corpus):",
  );
  const p = r.phases;
  const rate = (
    bytes: number,
    ms: number,
  ) => (ms > 0 ? `${num(bytes / 1e6 / (ms / 1000))} MB/s` : "");
  const prow = [["step", "ms", "throughput", "over"]];
  prow.push([
    "capture, end to end",
    num(r.capture.ms),
    rate(r.capturedBytes, r.capture.ms),
    "captured source",
  ]);
  prow.push([
    "read line sources (whole files)",
    num(p.readMs),
    rate(p.bytes, p.readMs),
    `${formatBytes(p.bytes)} jsonl`,
  ]);
  prow.push(["split into lines", num(p.splitMs), rate(p.bytes, p.splitMs), `${p.lines} lines`]);
  prow.push(["decode + JSON.parse", num(p.parseMs), rate(p.bytes, p.parseMs), "jsonl"]);
  prow.push(["adapter parseLine (derive)", num(p.deriveMs), rate(p.bytes, p.deriveMs), "jsonl"]);
  prow.push(["redact derived text", num(p.redactMs), rate(p.bytes, p.redactMs), "jsonl"]);
  prow.push([
    "raw inserts (records + indexes)",
    num(r.raw.ms),
    rate(r.capturedBytes, r.raw.ms),
    `${r.raw.rows} rows, ${formatBytes(r.raw.bytes)}`,
  ]);
  prow.push([
    "FTS inserts (the ceiling)",
    num(r.ceiling.insertMs),
    rate(r.capturedBytes, r.ceiling.insertMs),
    `${r.ceiling.rows} rows, ${formatBytes(r.ceiling.textBytes)} text`,
  ]);
  prow.push([
    "FTS inserts, the store's automerge 16",
    num(r.ceilingStoreFts.insertMs),
    rate(r.capturedBytes, r.ceilingStoreFts.insertMs),
    "as capture's index is set",
  ]);
  prow.push([
    "(derive text again from raw)",
    num(r.ceiling.deriveMs),
    "",
    "TextDeriver, not in the ceiling",
  ]);
  out.push(table(prow, ["l", "r", "r", "l"]), "");

  if (r.profile) {
    out.push(
      `CPU profile of a capture (reindex --cpu-prof), ${
        num(r.profile.total)
      } ms sampled, self time:`,
    );
    out.push(
      table([
        ["function", "ms", "share"],
        ...r.profile.functions.slice(0, 20).map((
          x,
        ) => [x.name, num(x.ms), `${(x.share * 100).toFixed(1)}%`]),
      ], ["l", "r", "r"]),
    );
    out.push("", "by file:");
    out.push(
      table([
        ["file", "ms", "share"],
        ...r.profile.files.slice(0, 12).map((
          x,
        ) => [x.name, num(x.ms), `${(x.share * 100).toFixed(1)}%`]),
      ], ["l", "r", "r"]),
      "",
    );
  }

  out.push(
    `Reindex: no-op over ${r.noop.sources} sources: ${
      r.noop.runs.map((x) => Math.round(x)).join(", ")
    } ms; ` +
      `after appending ${r.append.bytes.map((b) => formatBytes(b)).join(", ")}: ${
        r.append.runs.map((x) => Math.round(x)).join(", ")
      } ms (${r.append.records.join(", ")} new records)`,
    "",
  );

  out.push(
    `Search: in-process search() over ${r.search.queries} queries (each planted term alone and with 5 ` +
      `filters: agent, project, kind+role, since, no subagents), ${options.rounds} rounds after a warm-up; ` +
      `rg -l -F -i -a over ${
        r.rg.roots.map((x) => basename(x)).join(", ")
      }, median of ${options.cliRuns}:`,
  );
  const srow = [[
    "class",
    "search p50",
    "p95",
    "filtered p50",
    "filtered p95",
    "rg",
    "rg / search p50",
  ]];
  for (const cls of TERM_CLASSES) {
    const plain = r.search.byClass.find((c) => c.cls === cls && !c.filtered)!;
    const filtered = r.search.byClass.find((c) => c.cls === cls && c.filtered)!;
    const rgMs = r.rg.byClass.find((c) => c.cls === cls)?.ms ?? NaN;
    srow.push([
      INDEXED_CLASSES.includes(cls) ? cls : `${cls} (literal scan)`,
      num(plain.p50),
      num(plain.p95),
      num(filtered.p50),
      num(filtered.p95),
      num(rgMs),
      num(rgMs / plain.p50),
    ]);
  }
  out.push(table(srow, ["l", "r", "r", "r", "r", "r", "r"]));
  const stops = r.search.byClass.filter((c) => c.stopped > 0)
    .map((c) => `${c.cls}${c.filtered ? " filtered" : ""} ${c.stopped} of ${c.n}`);
  out.push(
    "  cjk: a word inside a run of CJK letters; symbol: no word the index holds, so the literal " +
      "scan (not in search_p50_ms/search_p95_ms, MCP or team figures)" +
      (stops.length ? `; stopped by the search budget: ${stops.join(", ")}` : ""),
  );
  const terms = r.corpus.terms.map((t) => `${t.term} (${t.class}, ${t.count})`).join(", ");
  out.push(`  planted terms (segments holding them): ${terms}`);
  const found = r.search.found.map((x) => `${x.term} ${x.hits}/${x.planted}`).join(", ");
  out.push(`  hits found / planted in captured formats: ${found}`);
  out.push(
    `  search command: deno run ${r.cli.flags.join(" ")} commands/search.ts <rare term>` +
      ` (${r.cli.bundle === "built" ? "from its bundle" : `from its sources: ${r.cli.bundle}`}): ` +
      `${r.cli.runs.map((x) => Math.round(x)).join(", ")} ms (exit ${
        [...new Set(r.cli.codes)].join("/")
      }); from its sources (LOGBOOK_SOURCES=1), alternating: ` +
      `${r.cli.sources.map((x) => Math.round(x)).join(", ")} ms`,
    `  start-up alone, same flags: search --help ${num(median(r.cli.help))} ms, an empty script ` +
      `${num(median(r.cli.empty))} ms (medians)`,
    r.rgCli.runs.length
      ? `  rg ${r.rgCli.args} <the same terms> over the same files: ${
        r.rgCli.runs.map((x) => Math.round(x)).join(", ")
      } ms`
      : "  rg was not run (not installed)",
    "",
  );
  out.push(
    `Show: first page of ${r.show.conversation} (${r.show.records} records, ${r.show.page} on the page): ` +
      `${r.show.runs.map((x) => x.toFixed(1)).join(", ")} ms in-process; the show command ` +
      `(deno run ${taskFlags("show").join(" ")} commands/show.ts <id>), spawn to exit: ` +
      `${r.showCli.runs.map((x) => Math.round(x)).join(", ")} ms; from its sources: ` +
      `${r.showCli.sources.map((x) => Math.round(x)).join(", ")} ms`,
    `Capture's peak RSS: reindex from empty in a child process, ${num(r.captureRss.mib)} MiB ` +
      `(${r.captureRss.how}) in ${Math.round(r.captureRss.ms)} ms`,
  );
  if (r.huge) {
    out.push(
      `Huge line: ${formatBytes(r.huge.bytes)} in one line, captured by reindex in ${
        Math.round(r.huge.ms)
      } ms (${num(r.huge.bytes / 1e6 / (r.huge.ms / 1000))} MB/s, ${
        formatBytes(r.huge.captured)
      } stored); ` +
        `peak RSS ${num(r.huge.mib)} MiB against ${
          num(r.huge.baselineMib)
        } MiB for an empty capture (${r.huge.how}); reindex --rebuild of it: peak RSS ${
          num(r.huge.rebuild.mib)
        } MiB in ${Math.round(r.huge.rebuild.ms)} ms`,
    );
  }
  out.push("", ...formatAdversarial(r.adversarial));
  const ms = (runs: number[]) => runs.map((x) => Math.round(x)).join(", ");
  out.push(
    `Watch: reindex --watch from empty until its store held the whole corpus (${r.watch.sources} ` +
      `sources): ${
        r.watch.ratio === null ? "not within the limit" : `${ms(r.watch.watchRuns)} ms`
      }; reindex from empty: ` +
      `${ms(r.watch.reindexRuns)} ms (spawn to done, rounds alternating; the figure is median ` +
      `over median)`,
  );
  if (r.upgrade) {
    const u = r.upgrade;
    const differing = u.terms.filter((t) => t.upgraded !== t.fresh)
      .map((t) => `${t.term} ${t.upgraded} (fresh ${t.fresh})`);
    out.push(
      `Upgrade: the previous release (${u.release}) captured a ${formatBytes(u.bytes)} corpus in ` +
        `${Math.round(u.previousMs)} ms; this build's reindex upgraded that store in ` +
        `${Math.round(u.upgradeMs)} ms (${u.rederived} sources derived again), and captured it ` +
        `from empty in ${Math.round(u.freshMs)} ms; hits of ${u.terms.length} terms (planted and ` +
        `common), upgraded against fresh: ${
          differing.length ? `differing for ${differing.join(", ")}` : "the same for every one"
        } (before the upgrade, ${u.differingBefore} differed)`,
    );
  }
  out.push("", ...formatRelevance(r.relevance));
  if (r.notes.length) out.push("", "Notes:", ...r.notes.map((n) => `  - ${n}`));
  if (options.keep) out.push("", `Kept: ${r.work} (corpus/, data/)`);
  return out.join("\n") + "\n";
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
per second); team_search_ms the p50 of search --team end to end (the command: start-up, connecting,
searching) after the corpus was pushed from two machines.
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
    const count = (name: string, text: string) => {
      const n = Number(text);
      if (!Number.isInteger(n) || n < 1) {
        throw new RangeError(`Expected a positive --${name}: got "${text}"`);
      }
      return n;
    };
    const started = performance.now();
    const size = parseSize(values.size);
    options = {
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

if (import.meta.main) Deno.exit(await main(Deno.args));
