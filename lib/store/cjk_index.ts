// The index that CJK search needs, built for a store that already indexed records: a second
// text index (`fts_next`) filled in bounded batches from the records, each record's text derived
// again from its raw bytes and indexed with CJK bigrams (`cjk.ts`), then verified and switched in
// for `fts`. Until then searches use `fts` (and CJK queries the literal scan).
//
// The index keeps no text to read back, but FTS5 lists what it holds: every term of every
// record at its position (`fts5vocab`, "instance"), in term order. Verification derives each
// batch's text again, indexes it in a scratch table to list its instances the same way, and
// compares both lists as digests (`migration_digest.ts`).
//
// It indexes text as the build that began it did (`bigramText`: invisible characters kept, which
// capture's `indexText` now leaves out), so batches an older build copied still verify; records
// it indexes keep those tokens until capture derives them again (`lib/capture/rederive.ts`: a
// store this migration runs on was captured before derivations were recorded).

import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { Adapter } from "../sources/adapter.ts";
import type { Redactor } from "../gate/secrets.ts";
import type { HistoryStore } from "./db.ts";
import { type BatchedStep, RowHash, type SourceRow } from "./batched_migration.ts";
import type { ItemSink } from "./migration_digest.ts";
import { bigramText, CJK_MIGRATION, INDEX_UPGRADE_KEY } from "./cjk.ts";
import { type RecordRow, TextDeriver } from "./records.ts";
import { FLAG_INDEXED, FTS_HASH_BYTES } from "./schema.ts";

/** A record as the copy reads it: its id and flags, and the whole row when it is indexed. */
interface IndexSource extends SourceRow {
  flags: number;
  /** The stored row (raw as stored), for an indexed record; null for one out of the index. */
  record: RecordRow | null;
}

/** How the index tokenizes; the scratch index of a verification must do the same. */
const TOKENIZE = "unicode61 remove_diacritics 2";

/** Where the SQL function `logbook_index_item` sends the instances it is given, per connection. */
const sinks = new WeakMap<DatabaseSync, { add: ItemSink | null }>();

/** Runs `sql`, whose rows are instances passed to `logbook_index_item`, sending them to `add`. */
function eachInstance(
  store: HistoryStore,
  add: ItemSink,
  sql: string,
  ...params: string[]
): void {
  let slot = sinks.get(store.db);
  if (!slot) {
    const created: { add: ItemSink | null } = { add: null };
    // A function rather than rows read one by one: it costs a third as much per instance.
    store.db.function(
      "logbook_index_item",
      { deterministic: false, directOnly: true },
      (doc, offset, term) => {
        created.add!(Number(doc), Number(offset), term as string);
        return 0;
      },
    );
    sinks.set(store.db, created);
    slot = created;
  }
  slot.add = add;
  try {
    store.stmt(sql).get(...params);
  } finally {
    slot.add = null;
  }
}

/** The batched step that builds `fts_next` with CJK bigrams and switches it in for `fts`. */
export function cjkIndexStep(
  store: HistoryStore,
  adapters: readonly Adapter[],
  redact: Redactor,
): BatchedStep<IndexSource> {
  const deriver = new TextDeriver(store, adapters, redact);
  return {
    name: CJK_MIGRATION,
    prepare(store) {
      store.db.exec(`
        DROP TABLE IF EXISTS fts_next;
        CREATE VIRTUAL TABLE fts_next USING fts5(
          text,
          content = '',
          contentless_delete = 1,
          tokenize = '${TOKENIZE}'
        );
        INSERT INTO fts_next (fts_next, rank) VALUES ('automerge', 16);
        INSERT INTO fts_next (fts_next, rank) VALUES ('hashsize', ${FTS_HASH_BYTES});`);
    },
    count(store) {
      return (store.stmt("SELECT count(*) AS n FROM records").get() as { n: number }).n;
    },
    next(store, after) {
      const row = store.stmt(
        `SELECT id, flags, length(raw) AS size FROM records WHERE id > ? ORDER BY id LIMIT 1`,
      ).get(after) as { id: number; flags: number; size: number } | undefined;
      return row ? readSource(store, row) : null;
    },
    hashSource(row, hash) {
      hash.value(row.id).value(row.flags).value(row.record?.raw ?? null).endRow();
    },
    write(store, rows) {
      indexRows(store.stmt("INSERT INTO fts_next (rowid, text) VALUES (?, ?)"), rows, deriver);
    },
    clear(store, first, last) {
      const ids = store.stmt("SELECT id FROM fts_next_docsize WHERE id BETWEEN ? AND ?")
        .all(first, last) as { id: number }[];
      const remove = store.stmt("DELETE FROM fts_next WHERE rowid = ?");
      for (const { id } of ids) remove.run(id);
    },
    hashTarget(store, first, last, hash: RowHash) {
      // The index keeps no text; per record, its id and token count are what can be read back.
      const rows = store.stmt(
        "SELECT id, sz FROM fts_next_docsize WHERE id BETWEEN ? AND ? ORDER BY id",
      ).all(first, last) as { id: number; sz: Uint8Array }[];
      for (const row of rows) hash.value(row.id).value(row.sz).endRow();
    },
    expectTarget(store, rows, add) {
      expectInstances(store, rows, deriver, add);
    },
    scanTarget: scanInstances,
    range(store, first, last) {
      const rows = store.stmt(
        `SELECT id, flags, length(raw) AS size FROM records WHERE id BETWEEN ? AND ? ORDER BY id`,
      ).all(first, last) as { id: number; flags: number; size: number }[];
      return rows.map((row) => readSource(store, row));
    },
    switchOver(store) {
      dropScratch(store);
      // Renamed, not dropped here: dropping a large index in this transaction costs memory
      // (see dropRetired), renaming costs nothing.
      store.db.exec(`DROP TABLE IF EXISTS fts_retired;
        ALTER TABLE fts RENAME TO fts_retired; ALTER TABLE fts_next RENAME TO fts;`);
      store.deleteMeta(INDEX_UPGRADE_KEY);
      return "fts_retired";
    },
    discard(store) {
      dropScratch(store);
      store.db.exec("DROP TABLE IF EXISTS fts_next");
    },
  };
}

/** The record `row` names as the copy reads it, its stored row only when it is indexed. */
function readSource(
  store: HistoryStore,
  row: { id: number; flags: number; size: number },
): IndexSource {
  if (!(row.flags & FLAG_INDEXED)) {
    return { id: row.id, flags: row.flags, bytes: 0, record: null };
  }
  const record = store.stmt("SELECT * FROM records WHERE id = ?").get(
    row.id,
  ) as unknown as RecordRow;
  return { id: row.id, flags: row.flags, bytes: row.size, record };
}

/** Indexes each indexed record of `rows` with `insert`, as the index holds it (CJK bigrams). */
function indexRows(
  insert: StatementSync,
  rows: readonly IndexSource[],
  deriver: TextDeriver,
): void {
  for (const row of rows) {
    if (!row.record) continue;
    const text = bigramText(deriver.textOf(row.record));
    if (text) insert.run(row.id, text);
  }
}

/** Sends `add` the instances `rows` should have in the index: indexed afresh in a scratch table. */
function expectInstances(
  store: HistoryStore,
  rows: readonly IndexSource[],
  deriver: TextDeriver,
  add: ItemSink,
): void {
  ensureTemp(
    store,
    "fts_verify_instances",
    `CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_verify USING fts5(
      text, content = '', contentless_delete = 1, tokenize = '${TOKENIZE}');
    CREATE VIRTUAL TABLE temp.fts_verify_instances
      USING fts5vocab(temp, fts_verify, instance);`,
  );
  store.stmt("INSERT INTO temp.fts_verify (fts_verify) VALUES ('delete-all')").run();
  // As `write` indexes it.
  indexRows(store.stmt("INSERT INTO temp.fts_verify (rowid, text) VALUES (?, ?)"), rows, deriver);
  eachInstance(
    store,
    add,
    "SELECT count(logbook_index_item(doc, offset, term)) AS n FROM temp.fts_verify_instances",
  );
}

/** Thrown by a scan step's sink to end the step at a term's first instance. */
const ENOUGH = new Error("enough instances for one scan step");

/** The temporary table a scan of `fts_next` reads its instances from. */
const NEXT_INSTANCES =
  "CREATE VIRTUAL TABLE temp.fts_next_instances USING fts5vocab(main, fts_next, instance)";

/**
 * Readies a read-only connection (`PRAGMA query_only`, which keeps it from writing even its
 * temporary tables) to scan `fts_next`: the table it reads from, made before it reads.
 */
export function prepareScan(store: HistoryStore): void {
  store.db.exec("PRAGMA query_only = OFF");
  try {
    ensureTemp(store, "fts_next_instances", NEXT_INSTANCES);
  } finally {
    store.db.exec("PRAGMA query_only = ON");
  }
}

/**
 * Sends `add` the next instances of `fts_next` after the term `cursor`, about `limit` of them;
 * returns the last term sent, or null when none is left.
 */
export function scanInstances(
  store: HistoryStore,
  cursor: string,
  limit: number,
  add: ItemSink,
): string | null {
  ensureTemp(store, "fts_next_instances", NEXT_INSTANCES);
  // One pass from the cursor on, term by term: once `limit` instances are sent, the first
  // instance of the next term ends it, so no term is split between two steps (a single term with
  // more instances is read alone). Where a step ends is not asked first: that is a pass too.
  let sent = 0;
  let last: string | null = null;
  try {
    eachInstance(
      store,
      (id, position, term) => {
        if (term !== last) {
          if (sent >= limit) throw ENOUGH;
          last = term;
        }
        sent++;
        add(id, position, term);
      },
      "SELECT count(logbook_index_item(doc, offset, term)) AS n FROM temp.fts_next_instances " +
        "WHERE term > ?",
      cursor,
    );
  } catch (err) {
    if (err !== ENOUGH) throw err;
    return last;
  }
  return null;
}

/** Creates a temporary table of this connection with `sql` unless `name` is there. */
function ensureTemp(store: HistoryStore, name: string, sql: string): void {
  // Looked up each time: a transaction rolled back takes the table with it.
  if (store.stmt("SELECT 1 AS ok FROM temp.sqlite_schema WHERE name = ?").get(name)) return;
  store.db.exec(sql);
}

/** The verification's tables of this connection (temporary, never in the store file). */
function dropScratch(store: HistoryStore): void {
  store.db.exec(`DROP TABLE IF EXISTS temp.fts_next_instances;
    DROP TABLE IF EXISTS temp.fts_verify_instances;
    DROP TABLE IF EXISTS temp.fts_verify;`);
}
