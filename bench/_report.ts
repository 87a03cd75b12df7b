// The benchmark's human report: the figures against their targets, then the detail behind them,
// one section per figure family; and the shorter report of the relevance benchmark alone.

import { usageLine } from "./_usage.ts";
import { basename } from "node:path";
import { formatAdversarial } from "./_adversarial.ts";
import type { Breakdown, ProfileSummary } from "./_capture.ts";
import {
  FIGURE_KEYS,
  FIGURE_PARTS,
  type FigureKey,
  type Figures,
  type Measured,
  type Target,
  TARGETS,
} from "./_figures.ts";
import { type Part, PART_NAMES } from "./_parts.ts";
import { formatRelevance, RELEVANCE_KEYS, type RelevanceReport } from "./_relevance.ts";
import { INDEXED_CLASSES, TERM_CLASSES } from "./_text.ts";
import { formatBytes, num, table, taskFlags } from "./_util.ts";
import { CORPUS_AGENTS, type CorpusManifest } from "./corpus.ts";

const PART_COUNT = PART_NAMES.length;

/** Everything one run measured: the figures and the detail the human output shows. */
export interface BenchReport extends Measured {
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
  /** Null when no part selected needed the corpus. */
  corpus: (CorpusManifest & { reused: boolean }) | null;
  /** The parts measured (`--only`, or every one). */
  parts: readonly Part[];
  /** The slice's size when parts ran on a slice smaller than the corpus, else null. */
  slice: number | null;
  profile: ProfileSummary | null;
}

/** How the run was asked for, as the report tells it. */
export interface ReportOptions {
  /** The corpus size asked for, in bytes: some targets depend on it. */
  size: number;
  seed: number;
  rounds: number;
  cliRuns: number;
  keep: string | null;
}

/** The human report: the figures against their targets, then the detail behind them. */
export function formatReport(r: BenchReport, options: ReportOptions): string {
  const out = [
    ...header(r),
    targetTable(TARGETS, r.figures, options.size, r.parts),
    "",
    ...corpusSection(r),
    ...captureSection(r),
    ...profileSection(r.profile),
    ...reindexSection(r),
    ...searchSection(r, options),
    ...showAndMemorySection(r),
    ...waitSection(r),
    ...(r.adversarial ? ["", ...formatAdversarial(r.adversarial)] : []),
    ...watchSection(r),
    ...upgradeSection(r),
    ...(r.relevance ? ["", ...formatRelevance(r.relevance)] : []),
  ];
  if (r.notes.length) out.push("", "Notes:", ...r.notes.map((n) => `  - ${n}`));
  if (options.keep) out.push("", `Kept: ${r.work} (corpus/, data/)`);
  return out.join("\n") + "\n";
}

/** The human report of `--only relevance`: its figures against their targets, and the detail. */
export function formatRelevanceAlone(r: RelevanceReport, options: ReportOptions): string {
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

/**
 * The figures of `targets` against them: met, MISSED, or — for a figure without a target; a
 * figure of a part not among `parts` is "not measured (--only)".
 */
function targetTable(
  targets: readonly Target[],
  f: Figures,
  size: number,
  parts?: readonly Part[],
): string {
  const rows = [["figure", "value", "unit", "target", "result"]];
  for (const t of targets) {
    const met = t.met(f, size);
    const skipped = parts && FIGURE_PARTS[t.key].some((part) => !parts.includes(part));
    rows.push([
      t.key,
      f[t.key] === null && skipped ? "not measured (--only)" : num(f[t.key]),
      t.unit,
      t.target(f, size),
      met === null ? "—" : met ? "met" : "MISSED",
    ]);
  }
  return table(rows, ["l", "r", "l", "l", "l"]);
}

/** Times of runs, rounded to the ms, as a list. */
function ms(runs: number[]): string {
  return runs.map((x) => Math.round(x)).join(", ");
}

function header(r: BenchReport): string[] {
  const m = r.machine;
  const corpus = r.corpus
    ? `${formatBytes(r.corpus.totalBytes)} corpus (seed ${r.corpus.seed}${
      r.corpus.reused ? ", reused" : ""
    })`
    : "no corpus";
  return [
    `logbook benchmark: ${corpus}, parts: ${
      r.parts.length === PART_COUNT ? "all" : r.parts.join(", ")
    }, ${m.cpus} CPUs (${m.model}), ${m.memoryGb} GB RAM, load ${
      m.loadBefore.map((l) => l.toFixed(2)).join(" ")
    } before, ${m.loadAfter.map((l) => l.toFixed(2)).join(" ")} after`,
    `targets are for the 2-core reference machine and a 200 MB corpus`,
    "",
  ];
}

function corpusSection(r: BenchReport): string[] {
  const corpus = r.corpus;
  if (!corpus) return [];
  const rows = [[
    "agent",
    "source bytes",
    "files",
    "conversations (gen.)",
    "sources",
    "records",
    "conversations (store)",
  ]];
  for (const agent of CORPUS_AGENTS) {
    const c = r.capture?.captured.find((x) => x.agent === agent);
    rows.push([
      agent,
      formatBytes(corpus.bytes[agent]),
      String(corpus.files[agent]),
      String(corpus.conversations[agent]),
      ...[c?.sources, c?.records, c?.conversations].map((n) => r.capture ? String(n ?? 0) : "—"),
    ]);
  }
  return [
    "Corpus and what was captured:",
    table(rows, ["l", "r", "r", "r", "r", "r", "r"]),
    r.capture
      ? `captured formats: ${r.capture.agents.join(", ") || "none"} (${
        formatBytes(r.capture.bytes)
      } of source; MB/s and the store ratio are over these bytes only)`
      : "(what was captured is counted by the capture part)",
    "",
  ];
}

function captureSection(r: BenchReport): string[] {
  const c = r.capture;
  if (!c) return [];
  const s = c.summary;
  return [
    "Capture (the reindex command from empty in a child process, spawn to exit; the ceiling " +
    "in-process):",
    `  ${Math.round(c.ms)} ms, ${s.records} records, ${s.conversations} new conversations, ` +
    `${s.sources} sources, ${s.errors.length} errors, ${s.drift.length} drift kinds; ` +
    `batches written ${s.writer === "worker" ? "by a worker beside the reading" : "inline"}`,
    `  rounds, alternating (capture | FTS ceiling, ms): ${
      c.runs.map((ms, i) => `${num(ms)} | ${num(c.ceilingRuns[i] ?? NaN)}`).join(", ")
    }; the figures are the medians`,
    `  store: history.db ${formatBytes(c.store.db)} + wal ${
      formatBytes(c.store.wal)
    } after a checkpoint`,
    "",
    `Where the time goes (each step timed on its own, ${breakdownOver(c.breakdown)}):`,
    phasesTable(r),
    "",
  ];
}

/** Which corpus the breakdown's steps ran over. */
function breakdownOver(b: Breakdown): string {
  if (b.slice === null) return "same corpus";
  return `the capture and the FTS ceiling over the corpus, the other steps over the ${
    formatBytes(b.slice)
  } slice (--slice-size), captured from empty in ${num(b.captureMs)} ms, ${
    num(b.bytes / 1e6 / (b.captureMs / 1000))
  } MB/s`;
}

function phasesTable(r: BenchReport): string {
  const c = r.capture!;
  const b = c.breakdown;
  const p = b.phases;
  const rate = (bytes: number, ms: number) =>
    ms > 0 ? `${num(bytes / 1e6 / (ms / 1000))} MB/s` : "";
  return table([
    ["step", "ms", "throughput", "over"],
    ["capture, end to end", num(c.ms), rate(c.bytes, c.ms), "captured source"],
    [
      "read line sources (whole files)",
      num(p.readMs),
      rate(p.bytes, p.readMs),
      `${formatBytes(p.bytes)} jsonl`,
    ],
    ["split into lines", num(p.splitMs), rate(p.bytes, p.splitMs), `${p.lines} lines`],
    ["decode + JSON.parse", num(p.parseMs), rate(p.bytes, p.parseMs), "jsonl"],
    ["adapter parseLine (derive)", num(p.deriveMs), rate(p.bytes, p.deriveMs), "jsonl"],
    ["redact derived text", num(p.redactMs), rate(p.bytes, p.redactMs), "jsonl"],
    [
      "raw inserts (records + indexes)",
      num(b.raw.ms),
      rate(b.bytes, b.raw.ms),
      `${b.raw.rows} rows, ${formatBytes(b.raw.bytes)}`,
    ],
    [
      "FTS inserts (the ceiling)",
      num(c.ceiling.insertMs),
      rate(c.bytes, c.ceiling.insertMs),
      `${c.ceiling.rows} rows, ${formatBytes(c.ceiling.textBytes)} text`,
    ],
    [
      "FTS inserts, the store's automerge 16",
      num(b.ceilingStoreFts.insertMs),
      rate(b.bytes, b.ceilingStoreFts.insertMs),
      "as capture's index is set",
    ],
    [
      "(derive text again from raw)",
      num(c.ceiling.deriveMs),
      "",
      "TextDeriver, not in the ceiling",
    ],
  ], ["l", "r", "r", "l"]);
}

function profileSection(profile: ProfileSummary | null): string[] {
  if (!profile) return [];
  const share = (x: { share: number }) => `${(x.share * 100).toFixed(1)}%`;
  return [
    `CPU profile of a capture (reindex --cpu-prof), ${num(profile.total)} ms sampled, self time:`,
    table([
      ["function", "ms", "share"],
      ...profile.functions.slice(0, 20).map((x) => [x.name, num(x.ms), share(x)]),
    ], ["l", "r", "r"]),
    "",
    "by file:",
    table([
      ["file", "ms", "share"],
      ...profile.files.slice(0, 12).map((x) => [x.name, num(x.ms), share(x)]),
    ], ["l", "r", "r"]),
    "",
  ];
}

function reindexSection(r: BenchReport): string[] {
  const out = [];
  if (r.noop) out.push(`Reindex: no-op over ${r.noop.sources} sources: ${ms(r.noop.runs)} ms`);
  if (r.append) {
    out.push(
      `Reindex after appending ${r.append.bytes.map((b) => formatBytes(b)).join(", ")}: ${
        ms(r.append.runs)
      } ms (${r.append.records.join(", ")} new records)`,
    );
  }
  return out.length ? [...out, ""] : [];
}

function searchSection(r: BenchReport, options: ReportOptions): string[] {
  const { search, rg, cli } = r;
  const out: string[] = [];
  const rgOver = rg
    ? `; rg -l -F -i -a over ${
      rg.roots.map((x) => basename(x)).join(", ")
    }, median of ${options.cliRuns}`
    : "";
  if (search) {
    out.push(
      `Search: in-process search() over ${search.queries} queries (each planted term alone and with 5 ` +
        `filters: agent, project, kind+role, since, no subagents), ${options.rounds} rounds after a warm-up${rgOver}:`,
      searchTable(r),
    );
    const stops = search.byClass.filter((c) => c.stopped > 0)
      .map((c) => `${c.cls}${c.filtered ? " filtered" : ""} ${c.stopped} of ${c.n}`);
    out.push(
      "  cjk: a word inside a run of CJK letters; symbol: no word the index holds, so the literal " +
        "scan (not in search_p50_ms/search_p95_ms, MCP or team figures)" +
        (stops.length ? `; stopped by the search budget: ${stops.join(", ")}` : ""),
    );
  } else if (rg) {
    out.push(
      `rg${rgOver.slice(1)}, per term class: ${
        rg.byClass.map((c) => `${c.cls} ${num(c.ms)} ms`).join(", ")
      }`,
    );
  }
  if (r.corpus && (search || rg)) {
    const terms = r.corpus.terms.map((t) => `${t.term} (${t.class}, ${t.count})`).join(", ");
    out.push(`  planted terms (segments holding them): ${terms}`);
  }
  if (search) {
    const found = search.found.map((x) =>
      `${x.term} ${x.hits}/${x.planted}${
        x.onSlice && r.slice ? ` (on the ${formatBytes(r.slice)} slice)` : ""
      }`
    ).join(", ");
    out.push(`  hits found / planted in captured formats: ${found}`);
  }
  if (cli) {
    out.push(
      `  search command: deno run ${cli.flags.join(" ")} commands/search.ts <rare term>` +
        ` (${cli.bundle === "built" ? "from its bundle" : `from its sources: ${cli.bundle}`}): ` +
        `${ms(cli.runs)} ms (exit ${
          [...new Set(cli.codes)].join("/")
        }); from its sources (LOGBOOK_SOURCES=1), alternating: ` +
        `${ms(cli.sources)} ms`,
      `  start-up alone, same flags, each run right after a search run: search --help ${
        ms(cli.help)
      } ms; an empty script ${ms(cli.empty)} ms`,
    );
  }
  if (rg) {
    out.push(
      rg.cli.runs.length
        ? `  rg ${rg.cli.args} <the same terms> over the same files: ${ms(rg.cli.runs)} ms`
        : "  rg was not run (not installed)",
    );
  }
  return out.length ? [...out, ""] : [];
}

/** Search against rg per term class: alone and filtered. */
function searchTable(r: BenchReport): string {
  const rows = [[
    "class",
    "search p50",
    "p95",
    "filtered p50",
    "filtered p95",
    "rg",
    "rg / search p50",
  ]];
  for (const cls of TERM_CLASSES) {
    const plain = r.search!.byClass.find((c) => c.cls === cls && !c.filtered)!;
    const filtered = r.search!.byClass.find((c) => c.cls === cls && c.filtered)!;
    const rgMs = r.rg?.byClass.find((c) => c.cls === cls)?.ms ?? NaN;
    rows.push([
      INDEXED_CLASSES.includes(cls) ? cls : `${cls} (literal scan)`,
      num(plain.p50),
      num(plain.p95),
      num(filtered.p50),
      num(filtered.p95),
      num(rgMs),
      num(rgMs / plain.p50),
    ]);
  }
  return table(rows, ["l", "r", "r", "r", "r", "r", "r"]);
}

function showAndMemorySection(r: BenchReport): string[] {
  const out: string[] = [];
  const { show, captureRss } = r;
  if (show) {
    out.push(
      `Show: first page of ${show.conversation} (${show.records} records, ${show.page} on the page): ` +
        `${show.runs.map((x) => x.toFixed(1)).join(", ")} ms in-process; the show command ` +
        `(deno run ${taskFlags("show").join(" ")} commands/show.ts <id>), spawn to exit: ` +
        `${ms(show.cli.runs)} ms; from its sources: ${ms(show.cli.sources)} ms`,
    );
  }
  if (r.usage) out.push(usageLine(r.usage));
  if (captureRss) {
    out.push(
      `Capture's peak RSS: reindex from empty in a child process, ${num(captureRss.mib)} MiB ` +
        `(${captureRss.how}) in ${Math.round(captureRss.ms)} ms`,
    );
  }
  const h = r.huge;
  if (h) {
    out.push(
      `Huge line: ${formatBytes(h.bytes)} in one line, captured by reindex in ${
        Math.round(h.ms)
      } ms (${num(h.bytes / 1e6 / (h.ms / 1000))} MB/s, ${formatBytes(h.captured)} stored); ` +
        `peak RSS ${num(h.mib)} MiB against ${
          num(h.baselineMib)
        } MiB for an empty capture (${h.how}); reindex --rebuild of it: peak RSS ${
          num(h.rebuild.mib)
        } MiB in ${Math.round(h.rebuild.ms)} ms`,
    );
  }
  return out;
}

/** What else a person waits for: status, /api/status, a rebuild, forget. */
function waitSection(r: BenchReport): string[] {
  const out: string[] = [];
  if (r.status) {
    out.push(
      `Status: status --json, spawn to exit: ${ms(r.status.cli)} ms; /api/status of a running ` +
        `dashboard: ${ms(r.status.api)} ms`,
    );
  }
  if (r.rebuild) {
    out.push(
      `Rebuild: reindex --rebuild of the store (${r.rebuild.records} records), spawn to exit: ` +
        `${Math.round(r.rebuild.ms)} ms, peak RSS ${num(r.rebuild.mib)} MiB (${r.rebuild.how})`,
    );
  }
  if (r.forget) {
    out.push(
      `Forget: forget --yes ${r.forget.conversation} (${r.forget.records} records), spawn to ` +
        `exit: ${Math.round(r.forget.ms)} ms; its words out of the text index (forget --finish ` +
        `returned) ${Math.round(r.forget.scrubMs)} ms after it started`,
    );
  }
  return out;
}

function watchSection(r: BenchReport): string[] {
  const w = r.watch;
  if (!w) return [];
  const corpus = r.slice === null ? "the whole corpus" : `the ${formatBytes(r.slice)} slice`;
  return [
    `Watch: reindex --watch from empty until its store held ${corpus} (${w.sources} ` +
    `sources): ${w.ratio === null ? "not within the limit" : `${ms(w.watchRuns)} ms`}; ` +
    `reindex from empty: ${ms(w.reindexRuns)} ms (spawn to done, rounds alternating; the ` +
    `figure is median over median)`,
  ];
}

function upgradeSection(r: BenchReport): string[] {
  const u = r.upgrade;
  if (!u) return [];
  const differing = u.terms.filter((t) => t.upgraded !== t.fresh)
    .map((t) => `${t.term} ${t.upgraded} (fresh ${t.fresh})`);
  return [
    `Upgrade: the previous release (${u.release}) captured a ${formatBytes(u.bytes)} corpus in ` +
    `${Math.round(u.previousMs)} ms; this build's reindex upgraded that store in ` +
    `${Math.round(u.upgradeMs)} ms (${u.rederived} sources derived again), and captured it ` +
    `from empty in ${Math.round(u.freshMs)} ms; hits of ${u.terms.length} terms (planted and ` +
    `common), upgraded against fresh: ${
      differing.length ? `differing for ${differing.join(", ")}` : "the same for every one"
    } (before the upgrade, ${u.differingBefore} differed)`,
  ];
}
