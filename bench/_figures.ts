// Every figure of the benchmark: its key (the `--json` keys, in this order), how it is computed from
// what the families measured, and its unit and target, against which the report prints it.

import type { UsageReport } from "./_usage.ts";
import type { AdversarialReport } from "./_adversarial.ts";
import type { CaptureReport } from "./_capture.ts";
import type { McpSearchReport } from "./_mcp.ts";
import type { HugeLineReport, RssRun } from "./_memory.ts";
import type { MigrationRun } from "./_migrate.ts";
import type { AppendReport, NoopReport } from "./_reindex.ts";
import { RELEVANCE_KEYS, RELEVANCE_TARGETS, type RelevanceReport } from "./_relevance.ts";
import type { RgReport, SearchCommandReport, SearchReport } from "./_search.ts";
import type { ShowReport } from "./_show.ts";
import type { TeamReport } from "./_team.ts";
import { INDEXED_CLASSES } from "./_text.ts";
import type { UpgradeRun } from "./_upgrade.ts";
import type { WatchBacklog } from "./_watch.ts";
import { median, num, quantile, roundFigures } from "./_util.ts";
import type { CorpusManifest } from "./corpus.ts";

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
  "usage_cli_ms",
  "ccusage_cli_ms",
  "ccusage_over_usage",
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
  "team_search_p50_ms",
  "team_search_p95_ms",
  "migrate_mb_s",
  "migration_peak_rss_mb",
  "upgrade_terms_differing",
  "upgrade_mb_s",
  ...RELEVANCE_KEYS,
] as const;
export type FigureKey = typeof FIGURE_KEYS[number];
export type Figures = Record<FigureKey, number | null>;

/** What each figure family measured, in one run. */
export interface Measured {
  corpus: CorpusManifest;
  capture: CaptureReport;
  noop: NoopReport;
  append: AppendReport;
  search: SearchReport;
  /** The search command end to end. */
  cli: SearchCommandReport;
  rg: RgReport;
  show: ShowReport;
  /** `usage daily` end to end, and ccusage on the same Claude files. */
  usage: UsageReport;
  /** The reindex command capturing the corpus from empty in a child process. */
  captureRss: RssRun;
  huge: HugeLineReport | null;
  mcp: McpSearchReport;
  team: TeamReport;
  adversarial: AdversarialReport;
  watch: WatchBacklog;
  migration: MigrationRun;
  /** The previous release's store upgraded by this build, against a fresh capture. */
  upgrade: UpgradeRun | null;
  /** Facts planted in known conversations, found again by five classes of query. */
  relevance: RelevanceReport;
}

/** The figures of a run, rounded as `--json` prints them. */
export function figuresOf(m: Measured): Figures {
  const mbs = (ms: number) => m.capture.bytes / 1e6 / (ms / 1000);
  const rare = m.corpus.terms.filter((t) => t.class === "rare").map((t) => t.term);
  const indexed = m.corpus.terms.filter((t) => INDEXED_CLASSES.includes(t.class))
    .map((t) => t.term);
  const rgOf = (terms: string[]) =>
    terms.map((t) => m.rg.byTerm.get(t)).filter((v): v is number => v !== undefined);
  const rgRare = rgOf(rare);
  const rgAll = rgOf(indexed);
  const rareSearch = m.search.byClass.find((c) => c.cls === "rare" && !c.filtered);
  const rgCli = m.rg.cli.runs;
  const figures: Figures = {
    capture_mb_s: mbs(m.capture.ms),
    fts_ceiling_mb_s: mbs(m.capture.ceiling.insertMs),
    noop_reindex_ms: median(m.noop.runs),
    append_reindex_ms: m.append.runs.length ? median(m.append.runs) : null,
    search_p50_ms: quantile(m.search.all, 0.5),
    search_p95_ms: quantile(m.search.all, 0.95),
    search_cli_ms: median(m.cli.runs),
    search_cli_sources_ms: median(m.cli.sources),
    rg_cli_ms: rgCli.length ? median(rgCli) : null,
    rg_cli_over_search_cli: rgCli.length ? median(rgCli) / median(m.cli.runs) : null,
    rg_ms: rgAll.length ? median(rgAll) : null,
    rg_over_search: rgRare.length && rareSearch ? median(rgRare) / rareSearch.p50 : null,
    show_first_page_ms: median(m.show.runs),
    show_cli_ms: median(m.show.cli.runs),
    show_cli_sources_ms: median(m.show.cli.sources),
    usage_cli_ms: median(m.usage.runs),
    ccusage_cli_ms: m.usage.ccusage ? median(m.usage.ccusage) : null,
    ccusage_over_usage: m.usage.ccusage ? median(m.usage.ccusage) / median(m.usage.runs) : null,
    capture_peak_rss_mb: m.captureRss.mib,
    huge_line_peak_rss_mb: m.huge?.mib ?? null,
    store_ratio: (m.capture.store.db + m.capture.store.wal) / m.capture.bytes,
    adversarial_search_max_ms: m.adversarial.maxMs,
    status_during_search_ms: m.adversarial.statusMaxMs,
    request_during_search_ms: m.adversarial.otherMaxMs,
    watch_backlog_over_reindex: m.watch.ratio,
    huge_line_rebuild_peak_rss_mb: m.huge?.rebuild.mib ?? null,
    mcp_search_ms: m.mcp.p50,
    push_mb_s: m.team.pushMbS,
    team_search_p50_ms: m.team.searchP50,
    team_search_p95_ms: m.team.searchP95,
    migrate_mb_s: m.migration.mbS,
    migration_peak_rss_mb: m.migration.mib,
    upgrade_terms_differing: m.upgrade?.differing ?? null,
    upgrade_mb_s: m.upgrade ? m.upgrade.bytes / 1e6 / (m.upgrade.upgradeMs / 1000) : null,
    ...m.relevance.figures,
  };
  roundFigures(figures);
  return figures;
}

/** A figure's unit and target, and whether a run met it (null: no target, or not measured). */
export interface Target {
  key: FigureKey;
  unit: string;
  /** `size` is the corpus size asked for, in bytes. */
  target: (f: Figures, size: number) => string;
  met: (f: Figures, size: number) => boolean | null;
}

/** rg's time over the search command's, end to end: the target grows with the corpus. */
function cliRatioTarget(size: number): number {
  return size >= 1e9 ? 8 : 2;
}

/** Every figure, in the order of FIGURE_KEYS, with its target. */
export const TARGETS: Target[] = [
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
  {
    key: "push_mb_s",
    unit: "MB/s",
    target: () => "≥ 15",
    met: (f) => (f.push_mb_s === null ? null : f.push_mb_s >= 15),
  },
  {
    key: "team_search_p50_ms",
    unit: "ms",
    target: () => "≤ 100",
    met: (f) => le(f.team_search_p50_ms, 100),
  },
  {
    key: "team_search_p95_ms",
    unit: "ms",
    target: () => "≤ 300",
    met: (f) => le(f.team_search_p95_ms, 300),
  },
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
