// Rows of a table as arrays rather than objects, a page a call, for scans of a table that grows
// with the store (its sources: 100,000 rows at ten gigabytes).

import type { StatementSync } from "node:sqlite";

/** Rows `rowsById` reads in one call to SQLite. */
const ROWS_PER_CALL = 1024;

/**
 * Every row of `table` (those `where` holds, SQL, when given) as an array of `columns`, the first
 * of which is its `id` (an integer primary key), in id order: `perCall` rows a call to SQLite, each
 * call from where the last ended. The 105,609 sources of ten gigabytes in 113 to 240 ms, where a
 * row a call (`iterate`) took 242 to 508, and no more rows are held at once than one call's. One
 * statement of `prepare` is made for this use (it keeps returning arrays). The calls read one
 * snapshot only inside a transaction.
 */
export function* rowsById(
  prepare: (sql: string) => StatementSync,
  table: string,
  columns: string,
  options: { where?: string; perCall?: number } = {},
): Generator<unknown[]> {
  const perCall = options.perCall ?? ROWS_PER_CALL;
  const where = options.where ? ` AND (${options.where})` : "";
  const statement = prepare(
    `SELECT ${columns} FROM ${table} WHERE id > ?${where} ORDER BY id LIMIT ${perCall}`,
  ) as unknown as {
    setReturnArrays(on: boolean): void;
    all(after: number): unknown[][];
  };
  statement.setReturnArrays(true);
  let after = Number.MIN_SAFE_INTEGER;
  while (true) {
    const rows = statement.all(after);
    yield* rows;
    if (rows.length < perCall) return;
    after = rows.at(-1)![0] as number;
  }
}
