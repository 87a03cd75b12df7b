// A table's rows read a page a call (`rowsById`): every row once, in id order, whatever the
// table's size against the page, and within a transaction as of its snapshot.

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { rowsById } from "../../../lib/store/array_rows.ts";

/** A table `t` of `count` rows with ids 3, 6, 9, … (gaps, as deletes leave) and a text column. */
function tableOf(count: number): DatabaseSync {
  const db = new DatabaseSync(":memory:");
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, size INTEGER)");
  const insert = db.prepare("INSERT INTO t (id, name, size) VALUES (?, ?, ?)");
  for (let i = 1; i <= count; i++) insert.run(i * 3, `row ${i}`, i % 2 ? i : null);
  return db;
}

Deno.test("rowsById() gives every row once, in id order, as arrays, a page a call", async (t) => {
  // None, fewer than a call holds, one call exactly, one more, one short of three, three exactly.
  for (const count of [0, 1, 4, 5, 6, 14, 15]) {
    await t.step(`${count} rows, 5 a call`, () => {
      const db = tableOf(count);
      let calls = 0;
      const prepare = (sql: string) => {
        const statement = db.prepare(sql);
        const all = statement.all.bind(statement);
        return Object.assign(statement, {
          all: (...params: never[]) => (calls++, all(...params)),
        });
      };
      try {
        const rows = [...rowsById(prepare, "t", "id, name, size", { perCall: 5 })];
        assert.deepEqual(
          rows,
          Array.from(
            { length: count },
            (_, i) => [(i + 1) * 3, `row ${i + 1}`, i % 2 ? null : i + 1],
          ),
        );
        // A call more only when the last one came back full: it could not tell the end.
        assert.equal(calls, Math.floor(count / 5) + 1);
      } finally {
        db.close();
      }
    });
  }
});

Deno.test("rowsById() gives only the rows its condition holds, across calls", () => {
  const db = tableOf(23);
  try {
    const rows = [
      ...rowsById((sql) => db.prepare(sql), "t", "id, size", {
        where: "size IS NOT NULL",
        perCall: 4,
      }),
    ];
    // Rows 1, 3, 5, … have a size: twelve of them, read four a call.
    assert.deepEqual(rows, Array.from({ length: 12 }, (_, i) => [(2 * i + 1) * 3, 2 * i + 1]));
  } finally {
    db.close();
  }
});

Deno.test("rowsById() inside a transaction reads its snapshot, not rows written meanwhile", () => {
  const dir = Deno.makeTempDirSync();
  const path = `${dir}/rows.db`;
  const reader = new DatabaseSync(path);
  const writer = new DatabaseSync(path);
  try {
    writer.exec("PRAGMA journal_mode = WAL");
    writer.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)");
    for (let i = 1; i <= 6; i++) writer.prepare("INSERT INTO t (name) VALUES (?)").run(`r${i}`);
    reader.exec("BEGIN");
    const rows = rowsById((sql) => reader.prepare(sql), "t", "id, name", { perCall: 2 });
    const first = rows.next().value as unknown[];
    // Written between two of the reader's calls: after its snapshot.
    writer.exec("INSERT INTO t (name) VALUES ('late'); DELETE FROM t WHERE id = 5");
    const names = [first, ...rows].map((row) => row[1]);
    reader.exec("COMMIT");
    assert.deepEqual(names, ["r1", "r2", "r3", "r4", "r5", "r6"]);
  } finally {
    reader.close();
    writer.close();
    Deno.removeSync(dir, { recursive: true });
  }
});
