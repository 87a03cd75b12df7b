// What the history store holds and how capture is doing: counts, sizes, the share captured,
// sources gone upstream, format drift, and the last run. Shared by `reindex --status`,
// `status` and the dashboard.

import { scrubPendingSince } from "./scrub.ts";
import { listMirrors, type MirrorState } from "./mirror.ts";
import { HistoryStore } from "./db.ts";
import { AGENT_SPECS } from "../agents.ts";
import type { Progress } from "../capture/progress.ts";
import type { DriftCount } from "../capture/summary.ts";
import { type MigrationProgress, migrationProgress } from "./batched_migration.ts";
import {
  byCodeUnits,
  type CapturedShare,
  keptPresentSources,
  presentSources,
  type UnfinishedLine,
} from "./present_sources.ts";
import { keepWithRun, type KeptAt, keptSinceLastRun } from "./kept.ts";
import { type Totals, TOTALS_KEY } from "./totals.ts";
import { plural } from "../format.ts";

export interface StoreStatus {
  path: string;
  /** Size on disk of the database with its WAL. */
  storeBytes: number;
  rawBytes: number;
  records: number;
  sources: number;
  sourcesGone: number;
  /**
   * Bytes captured over the bytes on disk now of every source still present, those never read
   * to the end included (1 when there are none).
   */
  captured: CapturedShare;
  /** Sources that end in a line without its newline, with how long ago they were written. */
  unfinished: UnfinishedLine[];
  /**
   * When the files behind `captured` and `unfinished` were looked at: by the last capture (a
   * status reads what it kept rather than look at every file again), or null when this status
   * looked at them itself (no capture kept them yet).
   */
  presentAt: number | null;
  /** Conversations per agent: `count` of all, `subagents` of them subagents. */
  conversations: { agent: string; count: number; subagents: number; gone: number }[];
  /** Sources that have started more than one generation. */
  multiGeneration: number;
  drift: DriftCount[];
  /** Sources with records but none recognised: non-empty files that yielded no conversation. */
  empty: string[];
  errors: { locator: string; message: string }[];
  progress: Progress | null;
  /** A batched migration under way (or failed): its phase, share done and time left. */
  migration: MigrationProgress | null;
  lastRun: unknown;
  /** Project mirrors and where each stands. */
  mirrors: MirrorState[];
  /**
   * Since when (epoch ms) the text index holds words of forgotten conversations, marked deleted,
   * until its scrub (`scrub.ts`) has merged it; null when it holds none.
   */
  forgottenInIndexSince: number | null;
}

/**
 * Reads the status of the store: aggregate queries over small tables, and the share captured as
 * the last capture saw the files (one `lstat` per source when none kept it).
 */
export function storeStatus(store: HistoryStore, now: number = Date.now()): StoreStatus {
  const totals = storeTotals(store);
  // What the last run kept, unless a run since (a watcher's, between its discoveries) did not.
  const kept = keptPresentSources(store, now);
  const present = kept ?? presentSources(store, now);
  const { sources, conversations, errors } = keptSinceLastRun<Counts>(store, COUNTS_KEY) ??
    countsOf(store);
  const drift = store.stmt(
    `SELECT agent, version, category, detail, sum(count) AS count FROM drift
     GROUP BY agent, version, category, detail ORDER BY agent, version, category, detail`,
  ).all() as unknown as DriftCount[];
  const empty = emptySources(store);
  return {
    path: store.path,
    storeBytes: fileSize(store.path) + fileSize(`${store.path}-wal`),
    rawBytes: totals.raw,
    records: totals.records,
    sources: sources.n,
    sourcesGone: sources.gone,
    captured: present.captured,
    unfinished: present.unfinished,
    presentAt: kept?.at ?? null,
    conversations,
    multiGeneration: sources.multi,
    mirrors: listMirrors(store),
    drift,
    empty,
    errors,
    progress: store.getMeta<Progress>("progress") ?? null,
    migration: migrationProgress(store),
    lastRun: store.getMeta("last_run") ?? null,
    forgottenInIndexSince: scrubPendingSince(store),
  };
}

/** What `storeStatus` counts over the sources and conversations: one scan of each table. */
interface Counts {
  sources: { n: number; gone: number; multi: number };
  conversations: StoreStatus["conversations"];
  errors: StoreStatus["errors"];
}

const COUNTS_KEY = "status_counts";

function countsOf(store: HistoryStore): Counts {
  // One scan of the sources for their counts and their errors (the errors' own statement read
  // every row again, through the locators' index: together 120 to 270 ms at 10 GB, this one 50 to
  // 95 ms).
  const { errors, ...sources } = store.stmt(`
    SELECT count(*) AS n, coalesce(sum(gone), 0) AS gone, coalesce(sum(generation > 1), 0) AS multi,
      json_group_array(json_array(locator, error)) FILTER (WHERE error IS NOT NULL) AS errors
    FROM sources`).get() as Counts["sources"] & { errors: string };
  const conversations = store.stmt(
    `SELECT agent, count(*) AS count, coalesce(sum(subagent), 0) AS subagents,
       coalesce(sum(gone), 0) AS gone
     FROM conversations GROUP BY agent ORDER BY agent`,
  ).all() as Counts["conversations"];
  return {
    sources: { ...sources },
    conversations: conversations.map((c) => ({ ...c })),
    errors: (JSON.parse(errors) as [string, string][])
      .sort(([a], [b]) => byCodeUnits(a, b))
      .map(([locator, message]) => ({ locator, message })),
  };
}

/**
 * Keeps what `storeStatus` counts over the sources and conversations with a run's result (at
 * `now`), so a status on a store of ten gigabytes scans neither table (100,000 rows each, some
 * 100 ms): counted again, or only its time moved when the run changed nothing (`unchanged`) and
 * they were kept since `since` (the run before). `forgetFromCounts` keeps them true after a
 * forget; a run that keeps nothing (a watcher's) leaves them stale, and status counts then.
 */
export function keepCounts(
  store: HistoryStore,
  now: number,
  options: { unchanged: boolean; since: number },
): void {
  keepWithRun(store, COUNTS_KEY, now, options, () => countsOf(store));
}

/** Takes forgotten conversations out of the kept counts (see `keepCounts`). */
export function forgetFromCounts(
  store: HistoryStore,
  forgotten: readonly { agent: string; subagent: number; gone: number }[],
): void {
  const kept = store.getMeta<Counts & KeptAt>(COUNTS_KEY);
  if (!kept) return;
  const conversations = kept.conversations.map((c) => {
    const of = forgotten.filter((f) => f.agent === c.agent);
    return {
      ...c,
      count: c.count - of.length,
      subagents: c.subagents - of.filter((f) => f.subagent).length,
      gone: c.gone - of.filter((f) => f.gone).length,
    };
  }).filter((c) => c.count > 0);
  store.setMeta(COUNTS_KEY, { ...kept, conversations });
}

/**
 * How many records the store holds and their raw bytes. Summing a large records table takes
 * longer than a dashboard request may, so capture keeps the sums in `meta` up to a record id, and
 * only rows added since are read here. Rows are deleted only by `forget`, which recounts.
 */
export function storeTotals(store: HistoryStore): Totals {
  const kept = store.getMeta<Totals>(TOTALS_KEY) ?? { upTo: 0, records: 0, raw: 0 };
  const added = store.stmt(
    `SELECT count(*) AS records, coalesce(sum(coalesce(length, length(raw))), 0) AS raw,
            coalesce(max(id), 0) AS upTo
     FROM records WHERE id > ?`,
  ).get(kept.upTo) as unknown as Totals;
  return {
    upTo: Math.max(kept.upTo, added.upTo),
    records: kept.records + added.records,
    raw: kept.raw + added.raw,
  };
}

/**
 * Brings what a status reads from `meta` up to date: the sums of `storeTotals` (`recount`: from
 * scratch, after deletes), and the list of `emptySources`. That list is counted from scratch when
 * none is kept or `sources` is "recount" (a look at a record of every source: half a second to a
 * second at 10 GB); with `found`, the sources a capture pass read to the end and found empty (its
 * summary's `empty`), only those and the sources listed are looked at again. A pass changes no
 * other source's records, and it looks at each source it finishes (see batch_pipeline.ts).
 */
export function refreshTotals(
  store: HistoryStore,
  options: { recount?: boolean; sources?: "recount" | { found: readonly string[] } } = {},
): void {
  if (options.recount) store.deleteMeta(TOTALS_KEY);
  store.setMeta(TOTALS_KEY, storeTotals(store));
  const kept = store.getMeta<string[]>(EMPTY_KEY);
  if (options.sources === "recount" || kept === undefined) {
    store.setMeta(EMPTY_KEY, countEmptySources(store));
  } else if (options.sources) {
    store.setMeta(EMPTY_KEY, lookAgain(store, [...kept, ...options.sources.found]));
  }
}

/**
 * Those of `locators` that are empty sources now, in order; all of them counted from scratch
 * when one is no longer a source's (moved since: its new path may be empty too).
 */
function lookAgain(store: HistoryStore, locators: readonly string[]): string[] {
  const empty = store.stmt(`${EMPTY_SQL} AND s.locator = ?`);
  const known = store.stmt("SELECT 1 FROM sources WHERE locator = ?");
  const still: string[] = [];
  for (const locator of new Set(locators)) {
    if (empty.get(locator)) still.push(locator);
    else if (!known.get(locator)) return countEmptySources(store);
  }
  return still.sort(byCodeUnits);
}

/**
 * Takes the records of conversation `conversationId` out of the kept totals, and names the
 * sources they leave empty: what `refreshTotals` with a recount would find after a forget, read
 * through the conversation's own rows rather than the whole records table and every source
 * (seconds on a store of ten gigabytes). Call in the transaction that deletes them, before it
 * does; then `emptiedSources` with the source ids this returns.
 */
export function forgetFromTotals(store: HistoryStore, conversationId: number): number[] {
  const kept = store.getMeta<Totals>(TOTALS_KEY);
  if (kept) {
    const gone = store.stmt(
      `SELECT count(*) AS records, coalesce(sum(coalesce(length, length(raw))), 0) AS raw
       FROM records WHERE conversation_id = ? AND id <= ?`,
    ).get(conversationId, kept.upTo) as { records: number; raw: number };
    store.setMeta(TOTALS_KEY, {
      upTo: kept.upTo,
      records: kept.records - gone.records,
      raw: kept.raw - gone.raw,
    });
  }
  return (store.stmt("SELECT DISTINCT source_id AS id FROM records WHERE conversation_id = ?")
    .all(conversationId) as { id: number }[]).map((row) => row.id);
}

/**
 * Adds to the kept list of `emptySources` those of `sourceIds` that records deleted since left
 * empty (a delete can only empty a source, never fill one).
 */
export function emptiedSources(store: HistoryStore, sourceIds: Iterable<number>): void {
  const kept = store.getMeta<string[]>(EMPTY_KEY);
  if (kept === undefined) {
    store.setMeta(EMPTY_KEY, countEmptySources(store));
    return;
  }
  const empty = new Set(kept);
  for (const id of sourceIds) {
    const locator = emptySourceAt(store, id);
    if (locator !== null) empty.add(locator);
  }
  store.setMeta(EMPTY_KEY, [...empty].sort(byCodeUnits));
}

const EMPTY_KEY = "empty_sources";

/** Sources read to some length whose current generation holds no recognised record. */
const EMPTY_SQL = `
    SELECT s.locator FROM sources s
    WHERE s.cursor > 0 AND NOT EXISTS (
      SELECT 1 FROM records r WHERE r.source_id = s.id AND r.generation = s.generation
        AND r.conversation_id IS NOT NULL AND (r.flags & 4) = 0)`;

/**
 * Sources read to some length whose current generation holds no recognised record: non-empty
 * files that yielded no conversation. Finding them looks up a record of every source (about
 * 100 ms on a cold connection to the 200 MB bench store), so capture keeps the list in `meta`.
 */
export function emptySources(store: HistoryStore): string[] {
  return store.getMeta<string[]>(EMPTY_KEY) ?? countEmptySources(store);
}

/** The locator of source `id` when it is one of `emptySources`, else null. */
export function emptySourceAt(store: HistoryStore, id: number): string | null {
  const row = store.stmt(`${EMPTY_SQL} AND s.id = ?`).get(id) as { locator: string } | undefined;
  return row?.locator ?? null;
}

function countEmptySources(store: HistoryStore): string[] {
  return (store.stmt(`${EMPTY_SQL} ORDER BY s.locator`).all() as { locator: string }[])
    .map((r) => r.locator);
}

function fileSize(path: string): number {
  try {
    return Deno.statSync(path).size;
  } catch {
    return 0;
  }
}

/** What one stored record of an agent is in drift counts (lib/agents.ts `unit`): a line, a record. */
function unitOf(agent: string): string {
  return AGENT_SPECS.find((spec) => spec.name === agent)?.unit ?? "record";
}

/** One human line for a drift count: "codex 0.160.0: 212 lines of unknown type `foo` kept raw". */
export function describeDrift(d: DriftCount): string {
  const unit = unitOf(d.agent);
  const lines = d.count === 1 ? `1 ${unit}` : `${d.count} ${unit}s`;
  switch (d.category) {
    case "unknown_type":
      return `${d.agent} ${d.version}: ${lines} of unknown type "${d.detail}" kept raw, not indexed`;
    case "unparsable":
      return `${d.agent} ${d.version}: ${lines} that could not be parsed (${d.detail}) kept raw, not indexed`;
    default:
      return `${d.agent} ${d.version}: ${lines} without the fields their type needs (${d.detail}) kept raw, not indexed`;
  }
}

/**
 * Drift as one line per agent version, with what to do: `codex 0.160.0: 215 lines kept raw, not
 * indexed (212 of unknown types "foo", "bar"; 3 unparsable). …`.
 */
export function driftByVersion(counts: readonly DriftCount[]): string[] {
  const groups = new Map<string, DriftCount[]>();
  for (const d of counts) {
    const key = `${d.agent} ${d.version}`;
    groups.set(key, [...(groups.get(key) ?? []), d]);
  }
  return [...groups].map(([key, list]) => {
    const unit = unitOf(list[0]!.agent);
    const n = (count: number) => plural(count, unit);
    const total = list.reduce((sum, d) => sum + d.count, 0);
    const parts: string[] = [];
    const unknown = list.filter((d) => d.category === "unknown_type");
    if (unknown.length) {
      const names = unknown.slice(0, 3).map((d) => `"${d.detail}"`).join(", ");
      parts.push(
        `${n(unknown.reduce((s, d) => s + d.count, 0))} of unknown type${
          unknown.length === 1 ? "" : "s"
        } ${names}${unknown.length > 3 ? ` and ${unknown.length - 3} more` : ""}`,
      );
    }
    const unparsable = list.filter((d) => d.category === "unparsable");
    if (unparsable.length) {
      parts.push(`${n(unparsable.reduce((s, d) => s + d.count, 0))} unparsable`);
    }
    const missing = list.filter((d) =>
      d.category !== "unknown_type" && d.category !== "unparsable"
    );
    if (missing.length) {
      parts.push(`${n(missing.reduce((s, d) => s + d.count, 0))} missing fields`);
    }
    return `${key}: ${n(total)} kept raw, not indexed (${parts.join("; ")}). Nothing is lost: ` +
      `once a logbook that reads this version is installed, "logbook reindex --rebuild" indexes them`;
  });
}
