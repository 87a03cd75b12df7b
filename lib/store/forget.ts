// Forgetting conversations: their records, index entries and rows go, a tombstone keeps a later
// capture from bringing them back while their sources exist, or anything under them (what a
// tombstone covers: `tombstones.ts`), and the space is given back.

import { giveSpaceBack, HistoryStore } from "./db.ts";
import { findConversation } from "./conversations.ts";
import { forgetInMirrors, type UnreachedMirror } from "./mirror.ts";
import type { ConversationRow } from "./records.ts";
import { emptiedSources, forgetFromCounts, forgetFromTotals } from "./status.ts";
import { coveringKeys } from "./tombstones.ts";
import { type ForgetPlace, markScrub, scrubIndex, textIndexes, whileForgetting } from "./scrub.ts";

/**
 * The meta key migration 0012 leaves in a store with tombstones: what they cover may have been
 * captured by a build that honoured only a tombstone's own key (`forgetCovered` looks).
 */
export const COVERED_SWEEP_KEY = "tombstone_sweep";

/** Which conversations to forget. Criteria combine: every one given must hold. */
export interface ForgetCriteria {
  /** Conversation ids (full, native, or a unique prefix). */
  ids?: string[];
  /** Canonical project root. */
  project?: string;
  /** Conversations whose last record is older than this instant (epoch ms). */
  before?: number;
}

/** One conversation that goes (or would go). */
export interface ForgetItem {
  conversation: string;
  agent: string;
  /** Its title and project root, as shown: through the gate. */
  title: string | null;
  project: string | null;
  records: number;
  bytes: number;
  /** The conversation this one is a subagent or fork of, when it goes because its parent does. */
  via: string | null;
}

export interface ForgetResult {
  conversations: ForgetItem[];
  records: number;
  bytes: number;
  /** Bytes of the store file before and after (equal for a dry run). */
  storeBytes: { before: number; after: number };
  dryRun: boolean;
  /** Pages returned to the file system. */
  pagesFreed: number;
  /**
   * False when another connection was reading, so the write-ahead log could not be emptied:
   * the old copies of the forgotten pages stay in `history.db-wal` until the next checkpoint.
   */
  walEmptied: boolean;
  /**
   * True when the text index holds nothing of them any more; false when that was left for later
   * (`scrub: "later"`): they are found by no search, but their words stay in the index's segments
   * until `scrubIndex` (`scrub.ts`) has merged it.
   */
  indexScrubbed: boolean;
  /** Conversations removed from project mirrors too (see `mirror.ts`). */
  fromMirrors: number;
  /** Project mirrors that could not be opened: they still hold what was forgotten. */
  mirrorsUnreached: UnreachedMirror[];
}

/**
 * Forgets the conversations the criteria select, with their subagents at every depth. With
 * `dryRun` nothing changes. Deleted pages are zeroed (the store runs with secure_delete on), the
 * text index is merged without them (unless `scrub: "later"`: see `scrub.ts`), and freed pages
 * are returned to the file system. The titles listed pass `redact` (the gate's redaction of
 * anything shown). With `place`, the store's data dir, a scrub running there in another process
 * waits while this forget works (`whileForgetting`).
 */
export function forget(
  store: HistoryStore,
  criteria: ForgetCriteria,
  options: {
    dryRun?: boolean;
    now?: number;
    redact: (text: string) => string;
    scrub?: "now" | "later";
    place?: ForgetPlace;
  },
): ForgetResult {
  if (!criteria.ids?.length && criteria.project === undefined && criteria.before === undefined) {
    throw new RangeError("Nothing chosen to forget: give conversation ids, a project or a time");
  }
  const selected = select(store, criteria);
  const items = withDescendants(store, selected, options.redact);
  const records = items.reduce((n, i) => n + i.records, 0);
  const bytes = items.reduce((n, i) => n + i.bytes, 0);
  const before = fileBytes(store);
  if (options.dryRun || items.length === 0) {
    return {
      conversations: items,
      records,
      bytes,
      storeBytes: { before, after: before },
      dryRun: true,
      pagesFreed: 0,
      walEmptied: true,
      indexScrubbed: true,
      fromMirrors: 0,
      mirrorsUnreached: [],
    };
  }
  const keys = items.map((item) => item.conversation);
  const later = options.scrub === "later";
  const work = () => {
    removeConversations(store, keys, options.now ?? Date.now());
    return later ? giveSpaceBack(store) : scrubIndex(store) ?? giveSpaceBack(store);
  };
  const freed = options.place ? whileForgetting(options.place, work) : work();
  // What was forgotten leaves the project mirrors too.
  const mirrors = forgetInMirrors(store, keys);
  return {
    conversations: items,
    records,
    bytes,
    storeBytes: { before, after: fileBytes(store) },
    dryRun: false,
    pagesFreed: freed.pagesFreed,
    walEmptied: freed.walEmptied,
    indexScrubbed: !later,
    fromMirrors: mirrors.removed,
    mirrorsUnreached: mirrors.unreached,
  };
}

/**
 * Deletes the conversations `keys` names with their records and index entries, and leaves a
 * tombstone for each, and the store marked for the text index's scrub: in one transaction.
 */
function removeConversations(store: HistoryStore, keys: readonly string[], now: number): void {
  // The store runs with secure_delete on (db.ts): the pages these rows held are zeroed.
  store.transaction(() => {
    const ids = store.stmt("SELECT id, agent, subagent, gone FROM conversations WHERE key = ?");
    const unindex = store.stmt(
      `DELETE FROM fts WHERE rowid IN (SELECT id FROM records WHERE conversation_id = ? AND (flags & 1) != 0)`,
    );
    // Its keys, looked up in the sources its records came from (record_keys is keyed by
    // source): a scan of every key for those left without a record took seconds at 10 GB.
    const unkey = store.stmt(
      `DELETE FROM record_keys WHERE source_id IN (
         SELECT DISTINCT source_id FROM records WHERE conversation_id = ?1)
       AND record_id IN (SELECT id FROM records WHERE conversation_id = ?1)`,
    );
    const drop = store.stmt("DELETE FROM records WHERE conversation_id = ?");
    const row = store.stmt("DELETE FROM conversations WHERE id = ?");
    // What its sources told it (titles among it) goes with it.
    const shares = store.stmt("DELETE FROM conversation_shares WHERE conversation_id = ?");
    const unlist = store.stmt("DELETE FROM conversations_to_sum WHERE id = ?");
    const tomb = store.stmt(
      "INSERT INTO tombstones (key, forgotten_at) VALUES (?, ?) ON CONFLICT DO UPDATE SET forgotten_at = excluded.forgotten_at",
    );
    // A batched migration building the next index (`batched_migration.ts`) forgets them too.
    const indexes = textIndexes(store);
    const unindexNext = indexes.includes("fts_next")
      ? store.stmt(
        `DELETE FROM fts_next WHERE rowid IN (SELECT id FROM records WHERE conversation_id = ?)`,
      )
      : null;
    const merging = withoutAutomerge(store, indexes);
    const sources = new Set<number>();
    const forgotten: { agent: string; subagent: number; gone: number }[] = [];
    for (const key of keys) {
      const found = ids.get(key) as { id: number; agent: string; subagent: number; gone: number };
      const { id } = found;
      forgotten.push({ ...found });
      for (const source of forgetFromTotals(store, id)) sources.add(source);
      unindex.run(id);
      unindexNext?.run(id);
      unkey.run(id);
      drop.run(id);
      row.run(id);
      shares.run(id);
      unlist.run(id);
      tomb.run(key, now);
    }
    merging.restore();
    emptiedSources(store, sources);
    forgetFromCounts(store, forgotten);
    // Deleted records linger in the text index's segments until they are merged (`scrub.ts`).
    markScrub(store, now);
  });
}

/**
 * Turns FTS5's automerge off for `tables` until `restore()`, which writes the index's pending
 * changes (a savepoint makes FTS5 write them) and sets automerge back as it was, all inside the
 * caller's transaction: nothing of it outlives a rollback. A write's automerge goes on with any
 * merge begun before it, and a scrub (`scrub.ts`) is one that takes a minute at ten gigabytes:
 * there a forget's deletes took 2 to 6 ms to commit without it, 4.6 to 5.2 s with it.
 */
function withoutAutomerge(store: HistoryStore, tables: readonly string[]): { restore(): void } {
  const was = tables.map((table) => {
    const row = store.db.prepare(`SELECT v FROM ${table}_config WHERE k = 'automerge'`).get() as
      | { v: number }
      | undefined;
    store.db.exec(`INSERT INTO ${table} (${table}, rank) VALUES ('automerge', 0)`);
    // FTS5's own default where the index was never told.
    return { table, automerge: Number(row?.v ?? 4) };
  });
  return {
    restore() {
      store.db.exec("SAVEPOINT forget_flush; RELEASE forget_flush");
      for (const { table, automerge } of was) {
        store.db.exec(`INSERT INTO ${table} (${table}, rank) VALUES ('automerge', ${automerge})`);
      }
    },
  };
}

/**
 * Forgets what the store holds under a tombstone, once, where migration 0012 left the work: the
 * subagents and helper files of a forgotten session (with theirs) that a build before tombstones
 * covered them captured after it was forgotten. Null when there was nothing to look for.
 */
export function forgetCovered(
  store: HistoryStore,
  options: { now?: number; redact: (text: string) => string },
): ForgetResult | null {
  if (store.getMeta(COVERED_SWEEP_KEY) === undefined) return null;
  const tombstoned = new Set(
    (store.stmt("SELECT key FROM tombstones").all() as { key: string }[]).map((t) => t.key),
  );
  const candidates = store.stmt(
    `SELECT key, parent_key AS parentKey, subagent FROM conversations
     WHERE subagent = 1 OR key IN (SELECT key FROM tombstones)`,
  ).all() as { key: string; parentKey: string | null; subagent: number }[];
  const covered = candidates.filter((c) =>
    coveringKeys({ ...c, subagent: c.subagent === 1 }).some((key) => tombstoned.has(key))
  );
  const result = covered.length ? forget(store, { ids: covered.map((c) => c.key) }, options) : null;
  store.deleteMeta(COVERED_SWEEP_KEY);
  return result;
}

function select(store: HistoryStore, criteria: ForgetCriteria): ConversationRow[] {
  let rows: ConversationRow[];
  if (criteria.ids?.length) {
    rows = criteria.ids.map((id) => findConversation(store, id));
  } else {
    rows = store.stmt("SELECT * FROM conversations").all() as unknown as ConversationRow[];
  }
  return rows.filter((row) =>
    (criteria.project === undefined || row.project_root === criteria.project) &&
    (criteria.before === undefined || (row.last_ts ?? 0) < criteria.before)
  );
}

/** The selected conversations and, at every depth, their subagents (forks stay: they are their own). */
function withDescendants(
  store: HistoryStore,
  selected: ConversationRow[],
  redact: (text: string) => string,
): ForgetItem[] {
  const items = new Map<string, ForgetItem>();
  const children = store.stmt("SELECT * FROM conversations WHERE parent_key = ? AND subagent = 1");
  const queue: { row: ConversationRow; via: string | null }[] = selected.map((row) => ({
    row,
    via: null,
  }));
  while (queue.length) {
    const { row, via } = queue.shift()!;
    if (items.has(row.key)) continue;
    items.set(row.key, {
      conversation: row.key,
      agent: row.agent,
      title: row.title === null ? null : redact(row.title),
      project: row.project_root === null ? null : redact(row.project_root),
      records: row.record_count,
      bytes: row.bytes,
      via,
    });
    for (const child of children.all(row.key) as unknown as ConversationRow[]) {
      queue.push({ row: child, via: row.key });
    }
  }
  return [...items.values()];
}

function fileBytes(store: HistoryStore): number {
  let total = 0;
  for (const suffix of ["", "-wal"]) {
    try {
      total += Deno.statSync(store.path + suffix).size;
    } catch {
      // absent
    }
  }
  return total;
}
