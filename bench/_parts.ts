// The parts of a benchmark run, which `--only` selects: what each needs (the store the first
// capture makes, or only the generated corpus), what it costs, and the order they run in.

/** What a part needs before it can run. */
export type Needs = "store" | "corpus" | "nothing";

/** One part of a run. */
export interface PartSpec {
  name: string;
  needs: Needs;
  /**
   * What it measures on the slice when the slice is smaller than the corpus (its figures, for the
   * report's notes), and whether all of it runs there, needing nothing of the corpus.
   */
  slice?: { figures: string; all: boolean };
  /** What it runs and costs, for --help ("C" is one capture of the corpus from empty). */
  cost: string;
}

/** Every part, in the order a run measures them (the ones that change the store come last). */
export const PARTS = [
  {
    name: "capture",
    needs: "store",
    slice: {
      figures: "the capture's breakdown (where the time goes) and slice_capture_mb_s",
      all: false,
    },
    cost: "C per --capture-rounds, as many FTS ceilings (~0.6 C each), then the breakdown of " +
      "the slice, 1.5 of its captures (the store's FTS settings, raw inserts, line phases; " +
      "a slice smaller than the corpus is captured first)",
  },
  { name: "noop", needs: "store", cost: "5 no-op reindexes" },
  {
    name: "search",
    needs: "store",
    slice: { figures: "the symbols' hits found / planted (literal scans)", all: false },
    cost: "every planted term × 6 filters × --rounds, in-process (the symbols' hits counted " +
      "on the slice; their literal scans × 1 from 5GB)",
  },
  { name: "cli", needs: "store", cost: "search command, --help and an empty script × --cli-runs" },
  {
    name: "rg",
    needs: "corpus",
    cost: "rg over the corpus, every term × --cli-runs (× 3 from 1GB, × 1 from 5GB), each " +
      "reading all of it",
  },
  { name: "show", needs: "store", cost: "show of the longest conversation × --cli-runs" },
  {
    name: "usage",
    needs: "store",
    cost: "usage daily × --cli-runs, and ccusage if installed (at most × 3 from 1GB, × 1 from 5GB)",
  },
  { name: "status", needs: "store", cost: "status command and /api/status × --cli-runs" },
  { name: "append", needs: "store", cost: "3 MB appended (truncated back after), 3 reindexes" },
  {
    name: "rss",
    needs: "corpus",
    cost: "the first capture's, when a part makes the store; else C in a child (shared " +
      "with watch's first round when the slice is the corpus)",
  },
  { name: "mcp", needs: "store", cost: "every term × --rounds over one MCP session" },
  {
    name: "team",
    needs: "store",
    cost: "the store's projects pushed by 5 machines into PostgreSQL, at most 1 GB each (5 GB " +
      "from about 1.5GB), then searched (push ran at 4.6 MB/s at 10GB: about 20 min there)",
  },
  { name: "adversarial", needs: "store", cost: "11 searches × 3, each stopped by its budget" },
  {
    name: "watch",
    needs: "corpus",
    slice: { figures: "watch_backlog_over_reindex", all: true },
    cost: "2 captures of the slice per --capture-rounds (reindex, reindex --watch)",
  },
  {
    name: "migration",
    needs: "store",
    slice: { figures: "migrate_mb_s and migration_peak_rss_mb", all: true },
    cost: "a copy of the slice's store, migration 0008 over it (6.5 MB/s at 200MB, 6.0 at " +
      "10GB: 3 min for a 1GB slice)",
  },
  {
    name: "upgrade",
    needs: "nothing",
    cost: "3 captures of the --upgrade-size corpus (the bench's own when the sizes match)",
  },
  { name: "relevance", needs: "nothing", cost: "2 captures of the --relevance-size corpus" },
  { name: "huge", needs: "nothing", cost: "a --huge-line line written, captured, rebuilt" },
  { name: "rebuild", needs: "store", cost: "reindex --rebuild of the store (1.6 C at 200MB)" },
  { name: "forget", needs: "store", cost: "forget of the longest conversation, once" },
] as const satisfies readonly PartSpec[];

export type Part = typeof PARTS[number]["name"];

/** Every part's name, in run order. */
export const PART_NAMES: readonly Part[] = PARTS.map((p) => p.name);

/** The parts `--only` names (comma-separated), in run order; a RangeError for an unknown one. */
export function parseParts(text: string): Part[] {
  const asked = text.split(",").map((s) => s.trim()).filter(Boolean);
  if (!asked.length) throw new RangeError(`Expected parts after --only: got "${text}"`);
  for (const name of asked) {
    if (!(PART_NAMES as readonly string[]).includes(name)) {
      throw new RangeError(
        `Unknown part "${name}" in --only: expected some of ${PART_NAMES.join(", ")}`,
      );
    }
  }
  return PART_NAMES.filter((name) => asked.includes(name));
}

/** The selected parts that measure something on the slice when it is smaller than the corpus. */
export function slicedParts(parts: readonly Part[]) {
  return PARTS.filter((p): p is Extract<typeof PARTS[number], { slice: unknown }> =>
    parts.includes(p.name) && "slice" in p
  );
}

/**
 * What the selected parts need of the bench's corpus: the store, only the corpus, or neither.
 * The upgrade runs on the bench's corpus when it is of the upgrade's size; the sliced parts need
 * nothing of it when the slice is smaller.
 */
export function needsOf(
  parts: readonly Part[],
  sizes: { size: number; upgradeSize: number; sliceSize: number },
): Needs {
  const sliced = sizes.sliceSize < sizes.size;
  const needs = new Set(
    PARTS.filter((p) => parts.includes(p.name) && !(sliced && "slice" in p && p.slice.all))
      .map((p) => p.needs),
  );
  if (parts.includes("upgrade") && sizes.upgradeSize === sizes.size) needs.add("corpus");
  return needs.has("store") ? "store" : needs.has("corpus") ? "corpus" : "nothing";
}

/** The parts' lines of --help: name, then cost, wrapped within `columns`. */
export function partsHelp(columns = 100): string {
  const width = Math.max(...PART_NAMES.map((n) => n.length));
  const indent = " ".repeat(width + 4);
  return PARTS.map((p) => {
    const lines = [`  ${p.name.padEnd(width)} `];
    for (const word of p.cost.split(" ")) {
      if (lines.at(-1)!.length + 1 + word.length > columns) lines.push(indent.slice(1));
      lines[lines.length - 1] += ` ${word}`;
    }
    return lines.join("\n");
  }).join("\n");
}
