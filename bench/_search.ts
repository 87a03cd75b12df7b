// Search's figures: `search()` in-process over every planted term alone and with filters, the
// search command end to end (from its bundle and from its sources, and what start-up alone
// costs), and rg over the same source files, as a person would run it instead.

import { join } from "node:path";
import type { Redactor } from "../lib/gate/secrets.ts";
import { ADAPTERS } from "../lib/sources/mod.ts";
import type { HistoryStore } from "../lib/store/db.ts";
import { search, type SearchFilters, SearchStoppedError } from "../lib/store/search.ts";
import type { CorpusAgent, CorpusManifest } from "./corpus.ts";
import {
  type BundleRuns,
  commandArgs,
  commandEnv,
  runTimed,
  timeBundleAndSources,
  timeEmptyScript,
  timeRg,
} from "./_measure.ts";
import { heedSignals } from "./_stop.ts";
import { INDEXED_CLASSES, TERM_CLASSES, type TermClass } from "./_text.ts";
import { median, quantile, taskFlags } from "./_util.ts";

/** In-process search latencies per term class, and hits found against planted. */
export interface SearchReport {
  queries: number;
  /** Every timed search of an indexed term (literal scans, of symbols, left out). */
  all: number[];
  /** `stopped`: searches the time budget stopped (the literal scan of a symbol, at size). */
  byClass: {
    cls: TermClass;
    filtered: boolean;
    p50: number;
    p95: number;
    n: number;
    stopped: number;
  }[];
  /** Each counted term's hits and plantings; `onSlice` where counted on the slice's store. */
  found: { term: string; cls: TermClass; hits: number; planted: number; onSlice: boolean }[];
}

/**
 * Where the literal scans' hits are counted instead of the bench's store: at size, each reads every
 * record (minutes at 10 GB), so the slice's store, of the same seed, answers for them.
 */
export interface LiteralCounts {
  store: HistoryStore;
  redact: Redactor;
  manifest: CorpusManifest;
}

/** The search command end to end, spawn to exit. */
export interface SearchCommandReport extends BundleRuns {
  /** Whether `deno task bundle` built the bundle the runs start from, or why not. */
  bundle: string;
  flags: string[];
  /**
   * The same command with --help, and an empty script with the same flags, each run right after
   * the search run of the same index.
   */
  help: number[];
  empty: number[];
}

/** rg over the source files of the captured agents. */
export interface RgReport {
  path: string | null;
  roots: string[];
  /** `rg -l -F -i -a` per term (median of its runs), and the median of those per class. */
  byTerm: Map<string, number>;
  byClass: { cls: TermClass; ms: number }[];
  /** `rg -l -F <term>` over the same files, for the same terms as the search command. */
  cli: { runs: number[]; args: string };
}

/**
 * Search latencies over the planted terms, with and without filters. The searches hold the event
 * loop, so a signal is heeded after each round (at 10 GB a round takes seconds). The hits found
 * are counted on the same store, but the literal scans' on `literal` when given.
 */
export async function measureSearch(options: {
  store: HistoryStore;
  redact: Redactor;
  manifest: CorpusManifest;
  agents: CorpusAgent[];
  rounds: number;
  /** The rounds of the literal scans (symbols), at most `rounds`. */
  scanRounds?: number;
  literal: (() => Promise<LiteralCounts>) | null;
}): Promise<SearchReport> {
  const { store, redact, manifest, agents, rounds, literal } = options;
  const scanRounds = options.scanRounds ?? rounds;
  const filters = searchFilters(store, agents);
  const queries: { term: string; cls: TermClass; query: string; filter: number }[] = [];
  for (const term of manifest.terms) {
    const query = term.class === "phrase" ? `"${term.term}"` : term.term;
    filters.forEach((_, i) => queries.push({ term: term.term, cls: term.class, query, filter: i }));
  }
  const times = new Map<string, number[]>();
  const stopped = new Map<string, number>();
  const all: number[] = [];
  for (let round = 0; round <= rounds; round++) {
    for (const q of queries) {
      const indexed = INDEXED_CLASSES.includes(q.cls);
      if (!indexed && round > scanRounds) continue;
      const key = `${q.cls}:${q.filter === 0 ? "none" : "filtered"}`;
      const t = performance.now();
      let wasStopped: boolean;
      try {
        wasStopped = search(store, ADAPTERS, redact, {
          query: q.query,
          ...filters[q.filter]!,
          limit: 20,
        }).stopped;
      } catch (err) {
        // Stopped before it found anything: the search says so with an error, not a result.
        if (!(err instanceof SearchStoppedError)) throw err;
        wasStopped = true;
      }
      const ms = performance.now() - t;
      // A symbol's literal scan reads every record: at size, the budget may stop it first.
      if (wasStopped && round > 0) stopped.set(key, (stopped.get(key) ?? 0) + 1);
      if (round === 0) continue; // warm-up pass
      // The figures are the index's: literal scans (symbols) have their own row.
      if (indexed) all.push(ms);
      times.set(key, [...(times.get(key) ?? []), ms]);
    }
    await heedSignals();
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
  // Counted: the classes whose every planted segment is a hit (a common word or a phrase is
  // more than its plantings).
  const indexed: TermClass[] = ["rare", "medium", "cjk", "hidden"];
  const scanned = TERM_CLASSES.filter((cls) => !INDEXED_CLASSES.includes(cls));
  const on = literal && await literal();
  const found = [
    ...foundAgainstPlanted(store, redact, manifest, agents, [...indexed, ...(on ? [] : scanned)]),
    ...(on ? foundAgainstPlanted(on.store, on.redact, on.manifest, agents, scanned, true) : []),
  ];
  return { all, queries: queries.length, byClass, found };
}

/** No filter, then five: agent, project, kind+role, since, no subagents. */
function searchFilters(store: HistoryStore, agents: CorpusAgent[]): SearchFilters[] {
  const project = store.db.prepare(
    `SELECT project_root FROM conversations WHERE project_root IS NOT NULL
     GROUP BY project_root ORDER BY count(*) DESC LIMIT 1`,
  ).get() as { project_root: string } | undefined;
  const since = store.db.prepare(
    "SELECT ts FROM records WHERE ts IS NOT NULL ORDER BY ts LIMIT 1 OFFSET (SELECT count(*) / 2 FROM records WHERE ts IS NOT NULL)",
  ).get() as { ts: number } | undefined;
  return [
    {},
    { agent: agents[0] ?? "claude" },
    project ? { project: project.project_root } : { agent: agents.at(-1) ?? "claude" },
    { kind: "message", role: "assistant" },
    since ? { since: since.ts } : { subagents: false },
    { subagents: false },
  ];
}

/** Each counted term's hits against the segments planted in the captured formats. */
function foundAgainstPlanted(
  store: HistoryStore,
  redact: Redactor,
  manifest: CorpusManifest,
  agents: CorpusAgent[],
  counted: readonly TermClass[],
  onSlice = false,
): SearchReport["found"] {
  const found: SearchReport["found"] = [];
  for (const term of manifest.terms.filter((t) => counted.includes(t.class))) {
    // A count, not a timing: a budget that never stops it, so no hit is left out.
    const options = { query: term.term, limit: 10_000, budgetMs: 600_000 };
    const hits = search(store, ADAPTERS, redact, options).hits.length;
    const planted = agents.reduce((n, a) => n + (term.byAgent[a] ?? 0), 0);
    found.push({ term: term.term, cls: term.class, hits, planted, onSlice });
  }
  return found;
}

/**
 * The search command for the rare terms in turn, from its bundle (`bundle` says whether it was
 * built) and from its sources, each run followed by what a start costs without searching: the
 * command's --help, and an empty script with the same flags (written under `work`). Interleaved,
 * so that the search's own cost is each search run less the empty script's beside it.
 */
export async function measureSearchCommand(options: {
  vars: Record<string, string>;
  work: string;
  rare: string[];
  runs: number;
  bundle: string;
  log: (message: string) => void;
}): Promise<SearchCommandReport> {
  const { vars, rare, runs } = options;
  const flags = taskFlags("search");
  options.log(
    `search command ×${runs} (deno run ${flags.join(" ")} commands/search.ts), each beside ` +
      `search --help and an empty script`,
  );
  const env = { ...commandEnv(vars), LOGBOOK_SOURCES: "" };
  const startup = { help: [] as number[], empty: [] as number[] };
  const timed = await timeBundleAndSources(
    vars,
    runs,
    (i) => commandArgs(flags, "search.ts", [rare[i % rare.length]!]),
    "search",
    1,
    async (i) => {
      const help = await runTimed(Deno.execPath(), commandArgs(flags, "search.ts", ["--help"]), {
        env,
      });
      const empty = await timeEmptyScript(options.work, flags, env);
      if (i > 0) {
        startup.help.push(help.ms);
        startup.empty.push(empty);
      }
    },
  );
  return { ...timed, bundle: options.bundle, flags, ...startup };
}

/**
 * rg over the captured agents' source files: `rg -l -F -i -a` for every planted term,
 * `termRuns` times each (`runs` unless told), and `rg -l -F` `runs` times for the rare terms the
 * search command was timed with. Nothing is run when `rg` is null.
 */
export async function measureRg(options: {
  rg: string | null;
  corpusDir: string;
  manifest: CorpusManifest;
  agents: CorpusAgent[];
  rare: string[];
  runs: number;
  termRuns?: number;
  log: (message: string) => void;
}): Promise<RgReport> {
  const { rg, manifest, rare, runs, log } = options;
  const termRuns = options.termRuns ?? runs;
  const roots = options.agents.map((a) =>
    join(options.corpusDir, a === "claude" ? "claude" : a === "codex" ? "codex" : "xdg-data")
  );
  const byTerm = new Map<string, number>();
  const cliRuns: number[] = [];
  if (rg) {
    log(`rg -l -F -i -a ×${termRuns} per term`);
    await timeRg(rg, rare[0]!, roots, 1);
    for (const term of manifest.terms) {
      byTerm.set(term.term, (await timeRg(rg, term.term, roots, termRuns)).ms);
    }
    // rg as a person runs it, for the terms the search command was timed with.
    log(`rg -l -F ×${runs} (the terms of the search command)`);
    for (let i = 0; i <= runs; i++) {
      const run = await runTimed(rg, ["-l", "-F", "--", rare[i % rare.length]!, ...roots]);
      if (run.code > 1) throw new Error(`rg failed (${run.code}): ${run.stderr.trim()}`);
      if (i > 0) cliRuns.push(run.ms);
    }
  }
  const byClass = TERM_CLASSES.map((cls) => ({
    cls,
    ms: median(
      manifest.terms.filter((t) => t.class === cls).map((t) => byTerm.get(t.term))
        .filter((v): v is number => v !== undefined),
    ),
  }));
  return { path: rg, roots, byTerm, byClass, cli: { runs: cliRuns, args: "-l -F" } };
}
