// Rebuilding a store whose derived data is damaged. SQLite cannot delete from a b-tree with a
// zeroed page ("database disk image is malformed"), so the rebuild cannot clear the damaged
// tables in place. Instead the raw tables are copied into a new file beside the store, the
// rest is derived there, and the new file's pages are copied over the store through SQLite's
// backup, which is safe while other connections have the store open (a rename would not be).

import { backup } from "node:sqlite";
import { HistoryStore } from "../store/db.ts";
import { FLAG_ZSTD } from "../store/schema.ts";
import { messageOf } from "../format.ts";

/** The raw tables in copy order, with what is copied of each (records: its raw columns only). */
const RAW_COPIES: readonly { table: string; columns: readonly string[] | null }[] = [
  { table: "meta", columns: null },
  { table: "sources", columns: null },
  { table: "generations", columns: null },
  { table: "tombstones", columns: null },
  {
    table: "records",
    columns: ["id", "source_id", "generation", "offset", "seq", "flags", "length", "raw"],
  },
];

/** A transaction of the copy ends after about this many bytes of raw records. */
const COPY_BATCH_BYTES = 8 * 1024 * 1024;

/**
 * Copies the raw tables of `store` into a new file in `root`, derives everything else there
 * with `derive`, and writes the result over the store. Returns the number of records derived
 * again. Throws (leaving the store as it was) when a raw table cannot be read whole.
 */
export async function rebuildByCopy(
  store: HistoryStore,
  root: string,
  derive: (fresh: HistoryStore) => Promise<number>,
): Promise<number> {
  const path = `${store.path}.rebuild`;
  removeStore(path);
  const fresh = HistoryStore.open({ path, root });
  try {
    for (const { table, columns } of RAW_COPIES) copyTable(store, fresh, table, columns);
    const count = await derive(fresh);
    fresh.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    await backup(fresh.db, store.path);
    return count;
  } finally {
    fresh.close();
    removeStore(path);
  }
}

function copyTable(
  from: HistoryStore,
  to: HistoryStore,
  table: string,
  only: readonly string[] | null,
): void {
  const columns = only ??
    (to.db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all() as { name: string }[])
      .map((c) => c.name);
  const list = columns.map((c) => `"${c}"`).join(", ");
  // Derived flags go: the rebuild sets them again. NOT INDEXED reads the table's own b-tree,
  // never an index, which may be the damaged part.
  const select = list.replace('"flags"', `"flags" & ${FLAG_ZSTD}`);
  const read = from.db.prepare(`SELECT ${select} FROM "${table}" NOT INDEXED`);
  const write = to.db.prepare(
    `INSERT OR REPLACE INTO "${table}" (${list}) VALUES (${columns.map(() => "?").join(", ")})`,
  );
  let bytes = 0;
  to.db.exec("BEGIN");
  try {
    for (const row of read.iterate()) {
      // Values in the order of the select list (the flags column is named by its expression).
      const values = Object.values(row);
      write.run(...values);
      for (const value of values) if (value instanceof Uint8Array) bytes += value.length;
      if (bytes >= COPY_BATCH_BYTES) {
        to.db.exec("COMMIT; BEGIN");
        bytes = 0;
      }
    }
    to.db.exec("COMMIT");
  } catch (err) {
    if (to.db.isTransaction) to.db.exec("ROLLBACK");
    throw new Error(
      `Cannot copy table "${table}" of the history store: ${messageOf(err)}`,
      { cause: err },
    );
  }
}

function removeStore(path: string): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) {
    try {
      Deno.removeSync(path + suffix);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
}
