// The relevance benchmark (issue 31, search that forgives): a generated corpus with forty facts
// planted in known conversations among near misses (`_facts.ts`), captured by this build's reindex
// and by the build before the issue's (exported from Git), and five classes of query a person
// types to find a fact again, each searched in-process with `search()`: the exact word, another
// form of a word, one typo, the first letters as typed, two words in another order. It measures,
// per class, recall@10 and MRR at the conversation level (is the expected conversation among the
// first ten hits' conversations; one over the rank of its first hit, 0 past ten), and the search
// latency; and what the feature costs the store (its size over the source's, against the build
// before) and capture (its time, against the build before).

import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { loadContext, redactorFor } from "../lib/context.ts";
import { envFrom } from "../lib/env.ts";
import type { Redactor } from "../lib/gate/secrets.ts";
import type { Forgive, Forgiven } from "../lib/store/forgive.ts";
import { loadStemmer } from "../lib/store/vocab.ts";
import { ADAPTERS } from "../lib/sources/mod.ts";
import { HistoryStore } from "../lib/store/db.ts";
import {
  search,
  SearchLimitError,
  type SearchResult,
  SearchStoppedError,
} from "../lib/store/search.ts";
import { corpusVars, generateCorpus } from "./corpus.ts";
import { type Fact, type FactLayer, plantFacts, QUERY_CLASSES, type QueryClass } from "./_facts.ts";
import {
  check,
  commandArgs,
  commandEnv,
  commitUnavailable,
  exportCommit,
  runTimed,
} from "./_measure.ts";
import { opencodeDbPath } from "./_opencode.ts";
import {
  fileSize,
  formatBytes,
  median,
  num,
  quantile,
  roundFigures,
  table,
  taskFlags,
  treeBytes,
} from "./_util.ts";

/**
 * The build before issue 31 (main when the issue was begun): the store and the capture the
 * feature's cost is measured against.
 */
export const RELEVANCE_BASELINE = "f45a21c";

/** The relevance figures, in the order `--json` prints them. */
export const RELEVANCE_KEYS = [
  "relevance_recall_exact",
  "relevance_recall_form",
  "relevance_recall_typo",
  "relevance_recall_prefix",
  "relevance_recall_order",
  "relevance_mrr",
  "relevance_exact_p50_ms",
  "relevance_exact_p95_ms",
  "relevance_forgiving_p95_ms",
  "relevance_store_ratio",
  "relevance_store_growth",
  "relevance_capture_slowdown",
] as const;
export type RelevanceKey = typeof RELEVANCE_KEYS[number];

/** A relevance figure's target, as the bench's table shows it. */
export interface RelevanceTarget {
  key: RelevanceKey;
  unit: string;
  target: string;
  met: ((value: number) => boolean) | null;
}

/** The issue's targets, and the figures shown without one. */
export const RELEVANCE_TARGETS: readonly RelevanceTarget[] = [
  { key: "relevance_recall_exact", unit: "share", target: "≥ 0.95", met: (v) => v >= 0.95 },
  ...(["form", "typo", "prefix", "order"] as const).map((cls): RelevanceTarget => ({
    key: `relevance_recall_${cls}`,
    unit: "share",
    target: "≥ 0.9",
    met: (v) => v >= 0.9,
  })),
  { key: "relevance_mrr", unit: "", target: "≥ 0.8 (all classes)", met: (v) => v >= 0.8 },
  { key: "relevance_exact_p50_ms", unit: "ms", target: "≤ 2", met: (v) => v <= 2 },
  { key: "relevance_exact_p95_ms", unit: "ms", target: "≤ 15", met: (v) => v <= 15 },
  { key: "relevance_forgiving_p95_ms", unit: "ms", target: "≤ 50", met: (v) => v <= 50 },
  { key: "relevance_store_ratio", unit: "×", target: "—", met: null },
  {
    key: "relevance_store_growth",
    unit: "share",
    target: `≤ 0.15 (over ${RELEVANCE_BASELINE})`,
    met: (v) => v <= 0.15,
  },
  {
    key: "relevance_capture_slowdown",
    unit: "share",
    target: `≤ 0.1 (over ${RELEVANCE_BASELINE})`,
    met: (v) => v <= 0.1,
  },
];

/** How each class is searched: as the `search` command does, or as the screen does as you type. */
export const FORGIVE_OF: Record<QueryClass, Forgive> = {
  exact: "fallback",
  form: "fallback",
  typo: "fallback",
  prefix: "typing",
  order: "fallback",
};

/** Classes whose queries match exactly (the latency of any search); the others are forgiven. */
const EXACT_CLASSES: readonly QueryClass[] = ["exact", "order"];

/** Hits looked at per query. */
const DEPTH = 10;

export interface RelevanceOptions {
  /** Size of the generated corpus the facts are planted in (bytes). */
  size: number;
  seed: number;
  /** Timed passes over the queries (after one warm-up pass, which is also the one judged). */
  rounds: number;
  /** Captures of the corpus by each build, alternating; the capture figures are the medians. */
  captureRounds: number;
  /** A dir of its own, emptied first: the corpus, the stores and the build before are kept here. */
  dir: string;
  log: (message: string) => void;
}

/** One query, what it found, and its times. */
export interface QueryRun {
  cls: QueryClass;
  query: string;
  expected: string;
  /** The rank of the expected conversation's first hit (1-based), or null past `DEPTH`. */
  rank: number | null;
  /** The conversations of the first hits, in order. */
  found: string[];
  forgiven: Forgiven | null;
  /** Why the search failed (a bound, the budget), or null. */
  error: string | null;
  ms: number[];
}

/** A class's figures. */
export interface ClassFigures {
  cls: QueryClass;
  forgive: Forgive;
  queries: number;
  recall: number;
  mrr: number;
  p50: number;
  p95: number;
  /** How the answers came: `exact`, or the `forgiven.how` the search gave, counted. */
  how: Record<string, number>;
}

/** A capture of the corpus by one build. */
export interface CaptureRun {
  /** Store bytes (history.db and its WAL after a checkpoint) after the first capture. */
  bytes: number;
  ratio: number;
  /** Each round's capture, spawn to exit. */
  ms: number[];
}

/** Everything the relevance benchmark measured. */
export interface RelevanceReport {
  figures: Record<RelevanceKey, number | null>;
  classes: ClassFigures[];
  runs: QueryRun[];
  corpus: { bytes: number; facts: number; decoys: number; factBytes: number };
  store: CaptureRun;
  /** The same corpus captured by `RELEVANCE_BASELINE`, or null when it cannot be had here. */
  baseline: CaptureRun | null;
  /** The store the queries ran on (this build's). */
  data: string;
  notes: string[];
}

/** Runs the relevance benchmark in `options.dir`; see the file comment. */
export async function measureRelevance(options: RelevanceOptions): Promise<RelevanceReport> {
  const { dir, log } = options;
  const notes: string[] = [];
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  const corpus = join(dir, "corpus");
  const home = join(dir, "home");
  const config = join(dir, "config");
  for (const path of [corpus, home, config]) await Deno.mkdir(path, { recursive: true });
  const layer = plantedCorpus(corpus, options, notes);
  const rawBytes = sourceBytes(corpus);
  const vars = corpusVars(corpus, home, config);
  const data = join(dir, "data");
  const { store, baseline } = await captureByBuilds(options, vars, data, rawBytes, notes);

  log(`relevance: ${layer.facts.length * QUERY_CLASSES.length} queries × ${options.rounds} rounds`);
  const redact = redactorFor(loadContext({ env: envFrom({ ...vars, LOGBOOK_DATA_DIR: data }) }));
  await loadStemmer();
  const runs = runQueries(data, redact, layer.facts, options.rounds);
  const classes = QUERY_CLASSES.map((cls) => classFigures(cls, runs.filter((r) => r.cls === cls)));
  return {
    figures: relevanceFigures(runs, classes, store, baseline),
    classes,
    runs,
    corpus: {
      bytes: rawBytes,
      facts: layer.facts.length,
      decoys: layer.decoys,
      factBytes: layer.bytes,
    },
    store,
    baseline,
    data,
    notes,
  };
}

/** Generates the corpus into `corpus` and plants the facts in it (listed in `facts.json`). */
function plantedCorpus(corpus: string, options: RelevanceOptions, notes: string[]): FactLayer {
  options.log(
    `relevance: a ${formatBytes(options.size)} corpus (seed ${options.seed}), facts planted in it`,
  );
  generateCorpus({ out: corpus, size: options.size, seed: options.seed });
  const layer = plantFacts(corpus, options.seed);
  Deno.writeTextFileSync(join(corpus, "facts.json"), JSON.stringify(layer.facts, null, 2) + "\n");
  if (layer.collisions.length) {
    notes.push(
      `words of the facts the corpus also holds by chance: ${layer.collisions.join(", ")}`,
    );
  }
  return layer;
}

/**
 * The corpus of `vars` captured by this build into `data`, and by `RELEVANCE_BASELINE` (exported
 * from Git's history) when it can be had here, `captureRounds` times each, alternating.
 */
async function captureByBuilds(
  options: RelevanceOptions,
  vars: Record<string, string>,
  data: string,
  rawBytes: number,
  notes: string[],
): Promise<{ store: CaptureRun; baseline: CaptureRun | null }> {
  const { dir, log } = options;
  const builds: { name: string; code: string | null; data: string; ms: number[] }[] = [
    { name: "this build", code: null, data, ms: [] },
  ];
  const unavailable = await commitUnavailable(RELEVANCE_BASELINE, "the build before issue 31");
  if (unavailable) {
    notes.push(`the store growth and capture slowdown were not measured: ${unavailable}`);
  } else {
    log(`relevance: the build before issue 31 (${RELEVANCE_BASELINE}), exported with git archive`);
    const code = join(dir, "baseline-code");
    await exportCommit(RELEVANCE_BASELINE, code);
    builds.push({ name: RELEVANCE_BASELINE, code, data: join(dir, "data-baseline"), ms: [] });
  }
  for (let r = 0; r < options.captureRounds; r++) {
    // Alternating, so that a noisy neighbour weighs on both.
    for (const build of r % 2 ? [...builds].reverse() : builds) {
      const into = r === 0 ? build.data : join(dir, "data-scratch");
      log(
        `relevance: ${build.name} captures it (reindex), round ${
          r + 1
        } of ${options.captureRounds}`,
      );
      build.ms.push(await captureWith(build.code, { ...vars, LOGBOOK_DATA_DIR: into }));
      if (r > 0) await Deno.remove(into, { recursive: true });
    }
  }
  const captured = builds.map((b): CaptureRun => {
    const bytes = storeBytes(b.data);
    return { bytes, ratio: bytes / rawBytes, ms: b.ms };
  });
  return { store: captured[0]!, baseline: captured[1] ?? null };
}

/** The relevance figures of the queries' runs and the captures, rounded. */
function relevanceFigures(
  runs: QueryRun[],
  classes: ClassFigures[],
  store: CaptureRun,
  baseline: CaptureRun | null,
): Record<RelevanceKey, number | null> {
  const times = (pick: (cls: QueryClass) => boolean) =>
    runs.filter((r) => pick(r.cls)).flatMap((r) => r.ms);
  const exactTimes = times((cls) => EXACT_CLASSES.includes(cls));
  const forgivingTimes = times((cls) => !EXACT_CLASSES.includes(cls));
  const recall = (cls: QueryClass) => classes.find((c) => c.cls === cls)!.recall;
  const figures: Record<RelevanceKey, number | null> = {
    relevance_recall_exact: recall("exact"),
    relevance_recall_form: recall("form"),
    relevance_recall_typo: recall("typo"),
    relevance_recall_prefix: recall("prefix"),
    relevance_recall_order: recall("order"),
    relevance_mrr: mean(runs.map(reciprocal)),
    relevance_exact_p50_ms: quantile(exactTimes, 0.5),
    relevance_exact_p95_ms: quantile(exactTimes, 0.95),
    relevance_forgiving_p95_ms: quantile(forgivingTimes, 0.95),
    relevance_store_ratio: store.ratio,
    relevance_store_growth: baseline ? store.bytes / baseline.bytes - 1 : null,
    relevance_capture_slowdown: baseline ? median(store.ms) / median(baseline.ms) - 1 : null,
  };
  roundFigures(figures);
  return figures;
}

/**
 * Searches every query of every fact once to judge it, then `rounds` more times to time it.
 */
function runQueries(
  data: string,
  redact: Redactor,
  facts: readonly Fact[],
  rounds: number,
): QueryRun[] {
  const store = HistoryStore.open({ path: join(data, "history.db"), root: data, readOnly: true });
  try {
    const runs: QueryRun[] = facts.flatMap((fact) =>
      QUERY_CLASSES.map((cls) => ({
        cls,
        query: fact.queries[cls],
        expected: fact.conversation,
        rank: null,
        found: [],
        forgiven: null,
        error: null,
        ms: [],
      }))
    );
    for (let r = 0; r <= rounds; r++) {
      for (const run of runs) {
        const options = { query: run.query, limit: DEPTH, forgive: FORGIVE_OF[run.cls] };
        const t = performance.now();
        let result: SearchResult | null = null;
        try {
          result = search(store, ADAPTERS, redact, options);
        } catch (err) {
          if (!(err instanceof SearchLimitError || err instanceof SearchStoppedError)) throw err;
          run.error = err.message;
        }
        const ms = performance.now() - t;
        if (r > 0) {
          run.ms.push(ms);
          continue;
        }
        if (!result) continue;
        run.found = result.hits.map((hit) => hit.conversation);
        const at = run.found.indexOf(run.expected);
        run.rank = at < 0 ? null : at + 1;
        run.forgiven = result.forgiven ?? null;
      }
    }
    return runs;
  } finally {
    store.close();
  }
}

function classFigures(cls: QueryClass, runs: QueryRun[]): ClassFigures {
  const how: Record<string, number> = {};
  for (const run of runs) {
    const key = run.error ? "error" : run.forgiven?.how ?? "exact";
    how[key] = (how[key] ?? 0) + 1;
  }
  const times = runs.flatMap((r) => r.ms);
  return {
    cls,
    forgive: FORGIVE_OF[cls],
    queries: runs.length,
    recall: mean(runs.map((r) => (r.rank === null ? 0 : 1))),
    mrr: mean(runs.map(reciprocal)),
    p50: quantile(times, 0.5),
    p95: quantile(times, 0.95),
    how,
  };
}

function reciprocal(run: QueryRun): number {
  return run.rank === null ? 0 : 1 / run.rank;
}

function mean(values: number[]): number {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN;
}

/**
 * Captures the corpus of `vars` with the reindex command of the build whose code is at `code`
 * (this one when null), with its task's permissions; returns the ms, spawn to exit.
 */
async function captureWith(code: string | null, vars: Record<string, string>): Promise<number> {
  const args = code === null
    ? commandArgs(taskFlags("reindex"), "reindex.ts", ["--quiet"])
    : ["run", ...taskFlags("reindex", code), join(code, "commands", "reindex.ts"), "--quiet"];
  const run = await check(
    runTimed(Deno.execPath(), args, { env: commandEnv(vars), ...(code ? { cwd: code } : {}) }),
    `the reindex of ${code ?? "this build"}`,
  );
  return run.ms;
}

/** The store's bytes: history.db and its WAL, after a checkpoint. */
function storeBytes(data: string): number {
  const path = join(data, "history.db");
  const db = new DatabaseSync(path);
  try {
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  return fileSize(path) + fileSize(`${path}-wal`);
}

/** The corpus's source bytes: what capture reads (Claude Code, Codex, the OpenCode database). */
function sourceBytes(corpus: string): number {
  const db = opencodeDbPath(corpus);
  return treeBytes(join(corpus, "claude")).bytes + treeBytes(join(corpus, "codex")).bytes +
    fileSize(db) + fileSize(`${db}-wal`);
}

/** The human report's relevance section (the figures' table is the bench's). */
export function formatRelevance(r: RelevanceReport): string[] {
  const out: string[] = [];
  out.push(
    `Relevance: ${r.corpus.facts} facts planted in known conversations of a ${
      formatBytes(r.corpus.bytes)
    } corpus (${
      formatBytes(r.corpus.factBytes)
    } of it the facts' conversations and ${r.corpus.decoys} ` +
      `holding near misses); each query searched in-process with search(), ${DEPTH} hits; ` +
      `recall@${DEPTH}: the expected conversation among the hits' conversations; MRR: 1 / the ` +
      `rank of its first hit (0 past ${DEPTH}):`,
  );
  const rows = [[
    "class",
    "forgive",
    "queries",
    `recall@${DEPTH}`,
    "MRR",
    "p50 ms",
    "p95 ms",
    "answered",
  ]];
  for (const c of r.classes) {
    rows.push([
      c.cls,
      c.forgive,
      String(c.queries),
      num(c.recall),
      num(c.mrr),
      num(c.p50),
      num(c.p95),
      Object.entries(c.how).map(([how, n]) => `${how} ${n}`).join(", "),
    ]);
  }
  out.push(table(rows, ["l", "l", "r", "r", "r", "r", "r", "l"]));
  out.push(
    "  prefix queries type 3 to 6 letters of the noun, after the fact's verb when 3 or 4",
  );
  const captures = (c: CaptureRun) => c.ms.map((ms) => Math.round(ms)).join(", ");
  out.push(
    `  store: ${formatBytes(r.store.bytes)} over ${formatBytes(r.corpus.bytes)} of source (${
      num(r.store.ratio)
    }×), captured in ${captures(r.store)} ms` +
      (r.baseline
        ? `; by the build before issue 31 (${RELEVANCE_BASELINE}): ${
          formatBytes(r.baseline.bytes)
        } (${num(r.baseline.ratio)}×), in ${captures(r.baseline)} ms`
        : ""),
  );
  const misses = QUERY_CLASSES.flatMap((cls) => {
    const missed = r.runs.filter((run) => run.cls === cls && run.rank !== 1);
    if (!missed.length) return [];
    const shown = missed.slice(0, 6).map((run) =>
      `"${run.query}" ${run.rank === null ? "missed" : `at ${run.rank}`}${
        run.forgiven ? ` (searched "${run.forgiven.searched}")` : ""
      }${run.error ? ` (${run.error})` : ""}`
    );
    const more = missed.length > shown.length ? `, and ${missed.length - shown.length} more` : "";
    return [`  ${cls}, not first: ${shown.join(", ")}${more}`];
  });
  out.push(...misses);
  return out;
}
