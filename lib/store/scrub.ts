// What a forget leaves in the text index, and taking it out. FTS5 marks a forgotten record deleted
// at once (no search finds it from then on) but keeps its entries, its words with their places,
// in the index's segments until a merge writes those segments again. `forget` marks the store in
// its own transaction (`SCRUB_KEY`); `scrubIndex` then merges the index whole, a step of a
// bounded size per transaction, and unmarks the store in the step that finds nothing left to
// merge. The mark survives anything that stops the work half-way (a kill, a full disk): the next
// `forget --finish` or capture finishes it, and `status` says it is pending.
//
// At ten gigabytes of history the whole merge takes about a minute; a `forget` from the command
// line leaves it to a process of its own (commands/forget.ts) and returns in about a second.

import { giveSpaceBack, type HistoryStore } from "./db.ts";
import { type LockInfo, tryShared, waitUnheld } from "../lock.ts";
import { yieldToEventLoop } from "../event_loop.ts";
import type { DataPaths } from "../paths.ts";

/**
 * The command a scrub writes into the capture lock it holds (the dashboard's adds to it): a
 * capture waits for such a holder, and `status` tells it from a capture.
 */
export const SCRUB_HOLDER = "forget --finish";

/** True when the capture lock's `holder` is a scrub (see `SCRUB_HOLDER`). */
export function isScrubHolder(holder: LockInfo | null): boolean {
  return holder?.command.startsWith(SCRUB_HOLDER) ?? false;
}

/**
 * The lock (`run/forget.lock`) every forget holds shared while it works: a scrub elsewhere waits,
 * between two of its steps (about 750 ms each at ten gigabytes), until none holds it: at that size
 * forgets beside a running scrub took 13 to 17 s without the wait and 7 to 9 s with it (before a
 * forget's own write stopped going on with the scrub's merge: `withoutAutomerge` in forget.ts).
 */
export const FORGET_LOCK = "forget";

/** The data dir's folders a scrub and a forget meet in. */
export type ForgetPlace = Pick<DataPaths, "run" | "root">;

/** Runs `work`, a forget, holding `FORGET_LOCK` shared when it can (it goes on without). */
export function whileForgetting<T>(place: ForgetPlace, work: () => T): T {
  const held = tryShared(place.run, place.root, FORGET_LOCK);
  try {
    return work();
  } finally {
    held?.release();
  }
}

/** The meta key a forget sets while the text index still holds what it forgot. */
export const SCRUB_KEY = "index_scrub";

/**
 * Leaf pages a step merges: about 16 MB written per transaction, so a stopped scrub loses at most
 * that, the write-ahead log is emptied between steps, and a forget can come in between.
 */
export const SCRUB_STEP_PAGES = 4000;

/** The text indexes: `fts`, and the next one while a batched migration builds it. */
export function textIndexes(store: HistoryStore): string[] {
  const next = store.stmt(
    "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'fts_next'",
  ).get();
  return next ? ["fts", "fts_next"] : ["fts"];
}

/** Marks the store as holding forgotten words in its text index: inside the forget's transaction. */
export function markScrub(store: HistoryStore, now: number): void {
  store.setMeta(SCRUB_KEY, now);
}

/** When the text index still holds what a forget took out (epoch ms of that forget), or null. */
export function scrubPendingSince(store: HistoryStore): number | null {
  const since = store.getMeta<number>(SCRUB_KEY);
  return typeof since === "number" ? since : null;
}

/** What a scrub did. */
export interface ScrubResult {
  /** Merge steps run (each its own transaction). */
  steps: number;
  /** Pages returned to the file system once the index was whole. */
  pagesFreed: number;
  /** False when a reader kept the write-ahead log (and its old pages) from being emptied. */
  walEmptied: boolean;
}

/** How a scrub runs: its steps' size, who hears of each, and what stops it between two. */
export interface ScrubOptions {
  pages?: number;
  onStep?: (steps: number) => void;
  signal?: AbortSignal | undefined;
  /**
   * Where forgets hold `FORGET_LOCK`: before each step `scrubIndexYielding` waits while one
   * does (`onWait` hears when it starts waiting). `scrubIndex`, which runs in a forget, does not.
   */
  forgets?: ForgetPlace;
  onWait?: () => void;
}

/**
 * Merges the text index until nothing forgotten is left in it, then gives the freed pages back.
 * Returns null when no forget was pending, or when `signal` stopped it between two steps (the
 * store stays marked; what was merged stays merged). `onStep` hears after each step. FTS5's
 * `merge` with a negative page count merges every segment into one, incrementally.
 */
export function scrubIndex(store: HistoryStore, options: ScrubOptions = {}): ScrubResult | null {
  const run = scrubbing(store, options);
  for (;;) {
    const next = run.next();
    if (next.done) return next.value;
  }
}

/**
 * `scrubIndex` for a process that must go on answering meanwhile (`forget --finish`, the
 * dashboard, a capture): the event loop runs between two steps (each a transaction of up to about
 * 750 ms at ten gigabytes), and a step waits while a forget runs (`forgets`).
 */
export async function scrubIndexYielding(
  store: HistoryStore,
  options: ScrubOptions = {},
): Promise<ScrubResult | null> {
  const run = scrubbing(store, options);
  for (let first = true;; first = false) {
    const next = run.next();
    if (next.done) return next.value;
    if (!first) await yieldToEventLoop(0);
    const place = options.forgets;
    if (place) await waitUnheld(place.run, place.root, FORGET_LOCK, options.onWait);
  }
}

/** The scrub of `scrubIndex`, pausing for its caller before each step and before the end. */
function* scrubbing(
  store: HistoryStore,
  options: ScrubOptions,
): Generator<void, ScrubResult | null> {
  if (scrubPendingSince(store) === null) return null;
  let steps = 0;
  for (let whole = false; !whole;) {
    yield;
    if (options.signal?.aborted) return null;
    whole = scrubStep(store, options.pages ?? SCRUB_STEP_PAGES);
    steps++;
    options.onStep?.(steps);
  }
  yield; // and before the space is given back, a write of its own
  return { steps, ...giveSpaceBack(store) };
}

/**
 * One step: a merge of up to `pages` leaf pages of each text index, in a transaction. A step that
 * changes nothing (fewer than two changes: the command itself counts one) means the index is one
 * segment with nothing marked deleted: the store is unmarked in that same transaction, under the
 * write lock, so a forget committed before it had its records in the segments it looked at.
 * True once the index is whole.
 */
function scrubStep(store: HistoryStore, pages: number): boolean {
  const changes = store.stmt("SELECT total_changes() AS n");
  const count = () => (changes.get() as { n: number }).n;
  return store.transaction(() => {
    let merged = false;
    for (const table of textIndexes(store)) {
      const before = count();
      store.db.exec(`INSERT INTO ${table} (${table}, rank) VALUES ('merge', ${-pages})`);
      if (count() - before >= 2) merged = true;
    }
    if (!merged) store.deleteMeta(SCRUB_KEY);
    return !merged;
  });
}
