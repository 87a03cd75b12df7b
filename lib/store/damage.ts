// What a read of the history store says when it meets damage: the error that names the store,
// the damage and how to recover, and the quick check of the text index, for `status` and for a
// search that found nothing. (`check.ts` reads every page: seconds, where this takes ms.)
//
// SQLite and FTS5 report the damage they meet as they read, except in the text index's term
// index (`fts_idx`), whose pages are trusted to be in order. A page written where another
// belongs sends a search to the wrong leaf of the index, which holds no match: no error, only
// fewer hits or none. The term index is small (a row per leaf of the index), so the quick check
// reads it whole, with one search, which reads the index's structure and configuration.

import { type HistoryStore, isCorruption, StoreDamagedError } from "./db.ts";
import type { DamagedPart, StoreCheck } from "./check.ts";
import { messageOf } from "../format.ts";

/** The FTS5 table; its shadow tables (`fts_data`, `fts_idx`, …) count as it. */
export const TEXT_INDEX = "fts";

/** The text index as a damaged part names it (its messages aside). */
export const TEXT_INDEX_PART: Omit<DamagedPart, "messages"> = {
  object: TEXT_INDEX,
  table: TEXT_INDEX,
  kind: "derived",
  label: `the text index (table "${TEXT_INDEX}")`,
};

/**
 * How to recover from damage to the text index found by a look that did not read every page: a
 * rebuild, which does read every page first, says what to do if more is damaged.
 */
const REBUILD_INDEX = 'run "logbook reindex --rebuild" to derive the text index again from the ' +
  "raw records (nothing captured is lost; the rebuild first checks every page, and says what to " +
  "do if more is damaged)";

/** A word no index holds: searching it reads the index's structure, and a leaf per segment. */
const PROBE = '"logbookquickcheckprobe"';

/** What FTS5 says of its own table when it cannot read it. */
const FTS5_WORDS = new RegExp(`^fts5: |vtable constructor failed: ${TEXT_INDEX}$`);

/**
 * Looks at the text index for the damage its reads do not report (see the file comment), in
 * milliseconds: `PRAGMA integrity_check` of its term index, and one search. Finds nothing wrong
 * elsewhere: `checkStore` reads every page.
 */
export function quickCheck(store: HistoryStore): StoreCheck {
  const started = performance.now();
  const messages: string[] = [];
  try {
    // all(), not iterate(): node:sqlite's iterate() ends quietly when a step fails.
    for (const row of store.db.prepare(`PRAGMA integrity_check(${TEXT_INDEX}_idx)`).all()) {
      const line = String(Object.values(row)[0]);
      if (line !== "ok") messages.push(line);
    }
    store.db.prepare(`SELECT rowid FROM ${TEXT_INDEX} WHERE ${TEXT_INDEX} MATCH ? LIMIT 1`)
      .get(PROBE);
  } catch (err) {
    if (!isCorruption(err)) throw err;
    messages.push(messageOf(err));
  }
  return {
    ok: messages.length === 0,
    ran: "a quick check of the text index",
    ms: Math.round(performance.now() - started),
    damaged: messages.length ? [{ ...TEXT_INDEX_PART, messages }] : [],
    recovery: messages.length ? REBUILD_INDEX : null,
  };
}

/**
 * The error a read of `store` that met `err` throws instead, when `err` is SQLite's word that the
 * store is damaged: it names the store, the damage (the text index when FTS5 said so or the quick
 * check finds it there) and how to recover. Null for any other error.
 */
export function damageError(store: HistoryStore, err: unknown): StoreDamagedError | null {
  if (err instanceof StoreDamagedError) return err;
  if (!isCorruption(err)) return null;
  const message = messageOf(err);
  if (FTS5_WORDS.test(message)) return indexDamaged(store, message, err);
  const found = quickCheck(store);
  const detail = found.damaged[0]?.messages[0];
  if (detail !== undefined) return indexDamaged(store, detail, err);
  return new StoreDamagedError(
    `The history store "${store.path}" is damaged: ${message}; run "logbook status --check" ` +
      "to see what is damaged and how to recover",
    { cause: err },
  );
}

/** The error for damage to the text index of `store`, `detail` saying what (`cause` showed it). */
export function indexDamaged(
  store: HistoryStore,
  detail: string,
  cause?: unknown,
): StoreDamagedError {
  return new StoreDamagedError(
    `The history store "${store.path}" is damaged in ${TEXT_INDEX_PART.label}: ${detail}; ` +
      REBUILD_INDEX,
    cause === undefined ? undefined : { cause },
  );
}
