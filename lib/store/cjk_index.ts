// The index that CJK search needs, built for a store that already indexed records: a second
// text index (`fts_next`) filled in bounded batches from the records, each record's text derived
// again from its raw bytes and indexed with CJK bigrams (`cjk.ts`), then verified and switched in
// for `fts`. Until then searches use `fts` (and CJK queries the literal scan).

import type { Adapter } from "../sources/adapter.ts";
import type { Redactor } from "../gate.ts";
import type { HistoryStore } from "./db.ts";
import { type BatchedStep, RowHash, type SourceRow } from "./batched_migration.ts";
import { CJK_MIGRATION, INDEX_UPGRADE_KEY, indexText } from "./cjk.ts";
import { type RecordRow, TextDeriver } from "./records.ts";
import { FLAG_INDEXED } from "./schema.ts";

/** A record as the copy reads it: its id and flags, and the whole row when it is indexed. */
interface IndexSource extends SourceRow {
  flags: number;
  /** The stored row (raw as stored), for an indexed record; null for one out of the index. */
  record: RecordRow | null;
}

/** The batched step that builds `fts_next` with CJK bigrams and switches it in for `fts`. */
export function cjkIndexStep(
  store: HistoryStore,
  adapters: readonly Adapter[],
  redact: Redactor,
): BatchedStep<IndexSource> {
  const deriver = new TextDeriver(store, adapters, redact);
  const read = (row: { id: number; flags: number; size: number }): IndexSource => {
    if (!(row.flags & FLAG_INDEXED)) {
      return { id: row.id, flags: row.flags, bytes: 0, record: null };
    }
    const record = store.stmt("SELECT * FROM records WHERE id = ?").get(
      row.id,
    ) as unknown as RecordRow;
    return { id: row.id, flags: row.flags, bytes: row.size, record };
  };
  return {
    name: CJK_MIGRATION,
    prepare(store) {
      store.db.exec(`
        DROP TABLE IF EXISTS fts_next;
        CREATE VIRTUAL TABLE fts_next USING fts5(
          text,
          content = '',
          contentless_delete = 1,
          tokenize = 'unicode61 remove_diacritics 2'
        );
        INSERT INTO fts_next (fts_next, rank) VALUES ('automerge', 16);`);
    },
    count(store) {
      return (store.stmt("SELECT count(*) AS n FROM records").get() as { n: number }).n;
    },
    next(store, after) {
      const row = store.stmt(
        `SELECT id, flags, length(raw) AS size FROM records WHERE id > ? ORDER BY id LIMIT 1`,
      ).get(after) as { id: number; flags: number; size: number } | undefined;
      return row ? read(row) : null;
    },
    hashSource(row, hash) {
      hash.value(row.id).value(row.flags).value(row.record?.raw ?? null).endRow();
    },
    write(store, rows) {
      const insert = store.stmt("INSERT INTO fts_next (rowid, text) VALUES (?, ?)");
      for (const row of rows) {
        if (!row.record) continue;
        const text = indexText(deriver.textOf(row.record));
        if (text) insert.run(row.id, text);
      }
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
    range(store, first, last) {
      const rows = store.stmt(
        `SELECT id, flags, length(raw) AS size FROM records WHERE id BETWEEN ? AND ? ORDER BY id`,
      ).all(first, last) as { id: number; flags: number; size: number }[];
      return rows.map(read);
    },
    switchOver(store) {
      store.db.exec("DROP TABLE fts; ALTER TABLE fts_next RENAME TO fts;");
      store.deleteMeta(INDEX_UPGRADE_KEY);
    },
    discard(store) {
      store.db.exec("DROP TABLE IF EXISTS fts_next");
    },
  };
}
