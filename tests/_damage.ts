// Damages a SQLite file the way a failing disk or a torn write does: one page of a chosen
// b-tree overwritten with zeros, found through the DBSTAT virtual table.

import { DatabaseSync } from "node:sqlite";

/**
 * Zeroes the `nth` leaf page of the b-tree of `object` (a table or index) in the database at
 * `path`, which must not be open in WAL mode with unflushed pages. Returns the page number.
 */
export function zeroLeafPage(path: string, object: string, nth = 0): number {
  const db = new DatabaseSync(path, { readOnly: true });
  let size: number;
  let page: number;
  try {
    size = (db.prepare("PRAGMA page_size").get() as { page_size: number }).page_size;
    const row = db.prepare(
      "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno LIMIT 1 OFFSET ?",
    ).get(object, nth) as { pageno: number } | undefined;
    if (!row) throw new Error(`No leaf page ${nth} in "${object}"`);
    page = row.pageno;
  } finally {
    db.close();
  }
  const file = Deno.openSync(path, { read: true, write: true });
  try {
    file.seekSync((page - 1) * size, Deno.SeekMode.Start);
    file.writeSync(new Uint8Array(size));
  } finally {
    file.close();
  }
  return page;
}
