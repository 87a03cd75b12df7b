// Writes one capture batch — records, index entries, conversations, drift, record keys and the
// cursors they cover — in one transaction. A batch is plain data, so the same function runs on
// the capture's own connection or in a worker with a connection of its own (`batch_worker.ts`),
// where it overlaps with reading and parsing the next batch.

import type { SQLInputValue } from "node:sqlite";
import type { HistoryStore } from "../store/db.ts";
import { decodeRaw } from "../store/raw.ts";
import { FLAG_INDEXED, FLAG_JOINED, FLAG_SUPERSEDED, FLAG_ZSTD } from "../store/schema.ts";
import { addTombstone, coveredInStore } from "../store/tombstones.ts";
import { addToTotals } from "../store/totals.ts";
import {
  type ConversationMode,
  type ConversationWrite,
  writeConversations,
} from "./conversation_rows.ts";
import type { FileSeen } from "./source.ts";
import type { Usage } from "../sources/adapter.ts";

/** One record row of a batch. */
export interface BatchRecord {
  /** Set when re-deriving a stored record (rebuild): it is updated, not inserted. */
  existingId: number | null;
  sourceId: number;
  generation: number;
  offset: number;
  seq: number;
  /** Where the bytes to store are in the batch's `raw` (compressed when flags has FLAG_ZSTD). */
  rawAt: number;
  rawLength: number;
  /** The captured length of a compressed chunk (null when stored as captured). */
  length: number | null;
  conversationKey: string | null;
  ts: number | null;
  kind: string;
  role: string | null;
  messageId: string | null;
  partId: string | null;
  /** All flags to store, FLAG_ZSTD and FLAG_INDEXED included. */
  flags: number;
  /** The head row of a record that completes earlier ones (`Derived.completes`). */
  completes: boolean;
  /** The index text of this row, as FTS5 takes it (`indexText`), "" for none. */
  text: string;
  /** Counted as drift once the row is stored (head rows of drift records only). */
  drift: DriftRow | null;
  /** The model call the record reports (head rows only; never a copy's or drift's). */
  usage: UsageRow | null;
}

/** A model call's usage, as the `usage` table stores it. */
export interface UsageRow extends Usage {
  agent: string;
}

/** A drift count to add, by source generation, agent version, category and detail. */
export interface DriftRow {
  sourceId: number;
  generation: number;
  agent: string;
  version: string;
  category: string;
  detail: string;
}

/** Where a batch moves one source. */
export interface SourceWrite {
  sourceId: number;
  /** The stream position after the last record read (null: unchanged, as in rebuild). */
  cursor: number | null;
  /** The adapter's state saved with the cursor, as JSON. */
  state: string | null;
  cursorKey: string | null;
  /** The file as it was when read to the end (null while it is still being read). */
  seen: FileSeen | null;
  fingerprint: string | null;
  /** A hash of the file's first bytes to remember (null: keep the one remembered). */
  headHash: string | null;
}

/** One batch, as plain data (it crosses to a worker by structured clone). */
export interface BatchPayload {
  records: BatchRecord[];
  /** Every record's stored bytes, one after another. */
  raw: Uint8Array;
  conversations: ConversationWrite[];
  /** Stored records that records of this batch supersede, by source and key. */
  supersede: { sourceId: number; key: string }[];
  /** Keys to remember, each with the index in `records` of its head row. */
  keys: { sourceId: number; key: string; record: number }[];
  /**
   * How its conversations are written (`ConversationMode`): added to (capture), their shares
   * replaced and the rows summed again later (`rederive.ts`), or created again (rebuild).
   */
  mode: ConversationMode;
  /** Conversations to tombstone: met under a tombstone, their records were not kept. */
  tombstones: string[];
  /** Stored rows to delete: records a tombstone covers, derived again (rebuild; not indexed). */
  drop: number[];
  sources: SourceWrite[];
  /** The progress to store with the batch (null: not this time). */
  progress: unknown;
  /** The time to record as each source's last read. */
  now: number;
}

/** What writing a batch did. */
export interface BatchResult {
  /** Record rows inserted. */
  inserted: number;
  /** Conversations that did not exist before. */
  newConversations: number;
  /** Conversations `forget` tombstoned while the batch was read: their records were dropped. */
  tombstoned: string[];
}

/** Called around the index inserts (the worker reports them; inline, a stage marker wraps them). */
export type IndexHook = (write: () => void) => void;

/** Rows per multi-row INSERT (13 values each, well under SQLite's 32,766 variables). */
const ROWS_PER_INSERT = 32;

/** Writes `batch` in one transaction (a savepoint inside an open one) and says what it did. */
export function writeBatch(
  store: HistoryStore,
  batch: BatchPayload,
  onIndex: IndexHook = (write) => write(),
): BatchResult {
  return store.transaction(() => {
    for (const key of batch.tombstones) addTombstone(store, key, batch.now);
    const { conversations, records, tombstoned } = dropForgotten(store, batch);
    dropRows(store, batch.drop);
    for (const { sourceId, key } of batch.supersede) supersede(store, sourceId, key);
    const written = writeConversations(store, conversations, batch.mode);
    const conversationId = (r: BatchRecord) =>
      r.conversationKey === null ? null : written.ids.get(r.conversationKey) ?? null;
    const { ids, indexed, inserted, added } = writeRecords(
      store,
      records,
      batch.raw,
      conversationId,
    );
    if (added) addToTotals(store, added.first, added.last, added.raw);
    onIndex(() => {
      const index = store.stmt("INSERT INTO fts (rowid, text) VALUES (?, ?)");
      for (const [id, text] of indexed) index.run(id, text);
    });
    for (const r of records) {
      const id = ids.get(r);
      if (r.completes && id !== undefined) joinCompleted(store, id);
    }
    writeUsage(store, records, ids, conversationId);
    const remember = store.stmt(
      `INSERT INTO record_keys (source_id, key, record_id) VALUES (?, ?, ?)
       ON CONFLICT DO UPDATE SET record_id = excluded.record_id`,
    );
    for (const { sourceId, key, record } of batch.keys) {
      const id = ids.get(batch.records[record]!);
      if (id !== undefined) remember.run(sourceId, key, id);
    }
    for (const source of batch.sources) writeSource(store, source, batch.now);
    if (batch.progress !== null) store.setMeta("progress", batch.progress);
    return { inserted, newConversations: written.created, tombstoned };
  });
}

/**
 * The batch's conversations and records without those of conversations forgotten while it was
 * read (forget runs without the capture lock): checked again inside the transaction, each is
 * tombstoned and what of it is stored dropped, so neither it nor what is under it comes back.
 */
function dropForgotten(
  store: HistoryStore,
  batch: BatchPayload,
): { conversations: ConversationWrite[]; records: BatchRecord[]; tombstoned: string[] } {
  const dropped = new Set<string>();
  for (const c of batch.conversations) {
    if (!coveredInStore(store, c)) continue;
    dropped.add(c.key);
    addTombstone(store, c.key, batch.now);
  }
  if (!dropped.size) {
    return { conversations: batch.conversations, records: batch.records, tombstoned: [] };
  }
  const covered = (r: BatchRecord) => r.conversationKey !== null && dropped.has(r.conversationKey);
  dropRows(store, batch.records.filter(covered).flatMap((r) => r.existingId ?? []));
  return {
    conversations: batch.conversations.filter((c) => !dropped.has(c.key)),
    records: batch.records.filter((r) => !covered(r)),
    tombstoned: [...dropped],
  };
}

/**
 * Writes the batch's records: those stored before (derived again) updated in place, new ones
 * inserted many rows per statement (rowids follow one another), which halves SQLite's per-call
 * overhead at capture's rate of tens of thousands of rows. Returns each record's id, the texts
 * to index, and how many were inserted.
 */
function writeRecords(
  store: HistoryStore,
  records: readonly BatchRecord[],
  raw: Uint8Array,
  conversationId: (r: BatchRecord) => number | null,
): {
  ids: Map<BatchRecord, number>;
  indexed: [number, string][];
  inserted: number;
  /** The ids the inserted rows took (one after another) and their captured bytes. */
  added: { first: number; last: number; raw: number } | null;
} {
  const ids = new Map<BatchRecord, number>();
  const indexed: [number, string][] = [];
  const update = store.stmt(
    `UPDATE records SET conversation_id = ?, ts = ?, kind = ?, role = ?, message_id = ?,
     part_id = ?, flags = (flags & ${FLAG_ZSTD}) | ? WHERE id = ?`,
  );
  const placed = (r: BatchRecord, id: number) => {
    ids.set(r, id);
    if (r.flags & FLAG_INDEXED) indexed.push([id, r.text]);
    if (r.drift) countDrift(store, r.drift);
  };
  const fresh: BatchRecord[] = [];
  for (const r of records) {
    if (r.existingId === null) {
      fresh.push(r);
      continue;
    }
    update.run(
      conversationId(r),
      r.ts,
      r.kind,
      r.role,
      r.messageId,
      r.partId,
      r.flags,
      r.existingId,
    );
    placed(r, r.existingId);
  }
  for (let at = 0; at < fresh.length; at += ROWS_PER_INSERT) {
    const group = fresh.slice(at, at + ROWS_PER_INSERT);
    const values: SQLInputValue[] = [];
    for (const r of group) {
      values.push(
        r.sourceId,
        r.generation,
        r.offset,
        r.seq,
        raw.subarray(r.rawAt, r.rawAt + r.rawLength),
        r.length,
        conversationId(r),
        r.ts,
        r.kind,
        r.role,
        r.messageId,
        r.partId,
        r.flags,
      );
    }
    const last = Number(insertRecords(store, group.length).run(...values).lastInsertRowid);
    group.forEach((r, i) => placed(r, last - group.length + 1 + i));
  }
  let added = null;
  if (fresh.length) {
    const last = ids.get(fresh.at(-1)!)!;
    const raw = fresh.reduce((n, r) => n + (r.length ?? r.rawLength), 0);
    added = { first: last - fresh.length + 1, last, raw };
  }
  return { ids, indexed, inserted: fresh.length, added };
}

/**
 * Stores the model calls the batch's records report: a record derived again drops what it said
 * before; a call stored already stays as it is (a repeat of it counts once) unless the new
 * record revises it (`Usage.revised`), which then takes its place.
 */
function writeUsage(
  store: HistoryStore,
  records: readonly BatchRecord[],
  ids: Map<BatchRecord, number>,
  conversationId: (r: BatchRecord) => number | null,
): void {
  const forget = store.stmt("DELETE FROM usage WHERE record_id = ?");
  const columns = `(record_id, conversation_id, agent, call, ts, model, input, output,
    cache_write, cache_read, cost) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
  const keep = store.stmt(`INSERT INTO usage ${columns} ON CONFLICT DO NOTHING`);
  const revise = store.stmt(
    `INSERT INTO usage ${columns} ON CONFLICT (agent, call) DO UPDATE SET
       record_id = excluded.record_id, conversation_id = excluded.conversation_id,
       ts = excluded.ts, model = excluded.model, input = excluded.input,
       output = excluded.output, cache_write = excluded.cache_write,
       cache_read = excluded.cache_read, cost = excluded.cost`,
  );
  for (const r of records) {
    const id = ids.get(r);
    if (id === undefined) continue;
    if (r.existingId !== null) forget.run(id);
    const u = r.usage;
    if (!u) continue;
    (u.revised ? revise : keep).run(
      id,
      conversationId(r),
      u.agent,
      u.call,
      r.ts,
      u.model,
      u.input,
      u.output,
      u.cacheWrite,
      u.cacheRead,
      u.cost,
    );
  }
}

/**
 * Deletes stored rows of records a tombstone covers, met again by a rebuild (which emptied the
 * index and the record keys first, so none of them is indexed or keyed).
 */
function dropRows(store: HistoryStore, ids: readonly number[]): void {
  const drop = store.stmt("DELETE FROM records WHERE id = ?");
  for (const id of ids) drop.run(id);
}

/** Adds one to a drift count. */
export function countDrift(store: HistoryStore, d: DriftRow): void {
  store.stmt(`
    INSERT INTO drift (source_id, generation, agent, version, category, detail, count)
    VALUES (?, ?, ?, ?, ?, ?, 1)
    ON CONFLICT DO UPDATE SET count = count + 1`)
    .run(d.sourceId, d.generation, d.agent, d.version, d.category, d.detail);
}

/** The rows of the record whose first chunk is `headId`: the head and its continuations. */
export function lineRows(
  store: HistoryStore,
  headId: number,
): { id: number; raw: Uint8Array; flags: number }[] {
  const head = store.stmt(
    "SELECT id, source_id, generation, offset, raw, flags FROM records WHERE id = ?",
  ).get(headId) as
    | {
      id: number;
      source_id: number;
      generation: number;
      offset: number;
      raw: Uint8Array;
      flags: number;
    }
    | undefined;
  if (!head) return [];
  // Raw bytes decoded; flags as stored (a supersede keeps the storage flag).
  const rows: { id: number; raw: Uint8Array; flags: number }[] = [
    { id: head.id, raw: decodeRaw(head), flags: head.flags },
  ];
  // Continuations follow at contiguous offsets with seq > 0; look at ids and seq first, and
  // read raw bytes only of the rows that belong.
  const next = store.stmt(
    "SELECT id, seq, offset FROM records WHERE source_id = ? AND generation = ? AND offset > ? ORDER BY offset LIMIT 1",
  );
  const raw = store.stmt("SELECT raw, flags FROM records WHERE id = ?");
  let offset = head.offset;
  while (true) {
    const row = next.get(head.source_id, head.generation, offset) as
      | { id: number; seq: number; offset: number }
      | undefined;
    if (!row || row.seq === 0) return rows;
    const body = raw.get(row.id) as { raw: Uint8Array; flags: number };
    rows.push({ id: row.id, raw: decodeRaw(body), flags: body.flags });
    offset = row.offset;
  }
}

/**
 * Joins the records that record `id` completes: earlier records of its conversation with its
 * message id from other sources leave the index and are marked joined (`show` places them with
 * it), each change noted in `record_changes`. Run again for a record derived again, it finds
 * them joined already.
 */
function joinCompleted(store: HistoryStore, id: number): void {
  const partners = store.stmt(
    `SELECT p.id, p.flags FROM records r JOIN records p
       ON p.conversation_id = r.conversation_id AND p.id < r.id AND p.message_id = r.message_id
       AND p.source_id != r.source_id AND p.seq = 0
     WHERE r.id = ? AND r.message_id IS NOT NULL`,
  ).all(id) as { id: number; flags: number }[];
  for (const p of partners) unindexLine(store, p.id, FLAG_JOINED);
}

/**
 * Takes the record stored under `key` out of the index: a newer revision replaces it. The change
 * is noted in `record_changes`, for the project mirrors that copied the record as it was.
 */
function supersede(store: HistoryStore, sourceId: number, key: string): void {
  const row = store.stmt("SELECT record_id FROM record_keys WHERE source_id = ? AND key = ?")
    .get(sourceId, key) as { record_id: number } | undefined;
  if (row) unindexLine(store, row.record_id, FLAG_SUPERSEDED);
}

/**
 * Takes every row of the line record `headId` heads out of the index, marked with `flag`, and
 * notes each change in `record_changes`: a project mirror that copied a row as it was brings
 * its copy up to date. Rows marked so already are left as they are.
 */
function unindexLine(store: HistoryStore, headId: number, flag: number): void {
  for (const r of lineRows(store, headId)) {
    const flags = (r.flags & ~FLAG_INDEXED) | flag;
    if (flags === r.flags) continue;
    if (r.flags & FLAG_INDEXED) store.stmt("DELETE FROM fts WHERE rowid = ?").run(r.id);
    store.stmt("UPDATE records SET flags = ? WHERE id = ?").run(flags, r.id);
    store.stmt("INSERT INTO record_changes (record_id) VALUES (?)").run(r.id);
  }
}

/** A source's cursor and state, and once it was read to the end, the file as seen. */
function writeSource(store: HistoryStore, u: SourceWrite, now: number): void {
  if (u.cursor !== null) {
    store.stmt(
      `UPDATE sources SET cursor = ?, state = ?, cursor_key = coalesce(?, cursor_key),
         last_read = ? WHERE id = ?`,
    ).run(u.cursor, u.state, u.cursorKey, now, u.sourceId);
  }
  if (u.seen) {
    const seen = u.seen;
    store.stmt(
      `UPDATE sources SET size = ?, mtime_ms = ?, dev = ?, ino = ?,
         fingerprint = coalesce(?, fingerprint), error = NULL WHERE id = ?`,
    ).run(seen.size, seen.mtimeMs, seen.dev, seen.ino, u.fingerprint, u.sourceId);
  }
  if (u.headHash !== null) {
    store.stmt("UPDATE sources SET head_hash = ? WHERE id = ?").run(u.headHash, u.sourceId);
  }
}

/** The statement inserting `n` records at once (prepared once per size). */
function insertRecords(store: HistoryStore, n: number) {
  return store.stmt(
    `INSERT INTO records (source_id, generation, offset, seq, raw, length, conversation_id, ts,
       kind, role, message_id, part_id, flags) VALUES ${
      Array(n).fill("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")
    }`,
  );
}
