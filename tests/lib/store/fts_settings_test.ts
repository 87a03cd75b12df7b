// The text index's FTS5 settings (migrations 0005 and 0017): a store has them whether it was made
// new or written before them, and a batch of capture's text becomes one segment of the index,
// where FTS5's default hash size made two.

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { DEFAULT_LIMITS } from "../../../lib/capture/limits.ts";
import { HistoryStore } from "../../../lib/store/db.ts";
import { FTS_HASH_BYTES } from "../../../lib/store/schema.ts";
import { makeWorld } from "../../_helpers.ts";

/** The index's settings as FTS5 keeps them (its `_config` table). */
function settings(db: DatabaseSync): Record<string, number> {
  const rows = db.prepare("SELECT k, v FROM fts_config WHERE k IN ('automerge', 'hashsize')")
    .all() as { k: string; v: number }[];
  return Object.fromEntries(rows.map((r) => [r.k, r.v]));
}

/**
 * About `bytes` of text with as many words as a batch of the bench's corpus holds (17,000
 * different ones in 512 KiB, where the corpus has 20,000): 600-odd byte records of words from a
 * vocabulary of 20,000, the common ones far more often (the same every run).
 */
function transcriptText(bytes: number): string[] {
  // mulberry32, seeded (bench/_text.ts has one, private to bench/ by the house rules).
  let state = 7;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const letters = "abcdefghijklmnopqrstuvwxyz";
  const vocabulary = Array.from({ length: 20_000 }, () => {
    let word = "";
    for (let n = 3 + Math.floor(next() * 8); n > 0; n--) word += letters[Math.floor(next() * 26)];
    return word;
  });
  const records: string[] = [];
  for (let total = 0; total < bytes;) {
    const words: string[] = [];
    for (let length = 0; length < 600;) {
      const word = vocabulary[Math.floor(vocabulary.length * next() ** 3)]!;
      words.push(word);
      length += word.length + 1;
    }
    const record = words.join(" ");
    records.push(record);
    total += record.length;
  }
  return records;
}

/** Segments of the index (FTS5 numbers its pages by segment: the rowid's bits from 37 on). */
function segments(db: DatabaseSync): number {
  const row = db.prepare(
    "SELECT count(DISTINCT id >> 37) AS n FROM fts_data WHERE (id >> 37) BETWEEN 1 AND 65535",
  ).get() as { n: number };
  return row.n;
}

/** `records` written into `db`'s index in one transaction, as a batch is. */
function writeBatch(db: DatabaseSync, records: string[]): void {
  const insert = db.prepare("INSERT INTO fts (rowid, text) VALUES (?, ?)");
  db.exec("BEGIN");
  records.forEach((text, i) => insert.run(i + 1, text));
  db.exec("COMMIT");
}

/** The index's settings of the store at `path` once logbook opened (and migrated) it. */
function openedSettings(path: string, root: string): Record<string, number> {
  const store = HistoryStore.open({ path, root });
  try {
    return settings(store.db);
  } finally {
    store.close();
  }
}

Deno.test("a new store's index merges 16 segments at a time and holds 2 MiB of terms", async () => {
  const world = await makeWorld();
  try {
    assert.deepEqual(openedSettings(join(world.data, "history.db"), world.data), {
      automerge: 16,
      hashsize: FTS_HASH_BYTES,
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a store written before migration 0017 gets the index's hash size when opened", async () => {
  const world = await makeWorld();
  try {
    const path = join(world.data, "history.db");
    assert.throws(() =>
      HistoryStore.open({
        path,
        root: world.data,
        beforeStep: (step) => {
          if (step === "0017_fts_hash_size") throw new Error("stopped before 0017");
        },
      }), /stopped before 0017/);
    const before = new DatabaseSync(path, { readOnly: true });
    try {
      assert.deepEqual(settings(before), { automerge: 16 });
    } finally {
      before.close();
    }
    assert.deepEqual(openedSettings(path, world.data), {
      automerge: 16,
      hashsize: FTS_HASH_BYTES,
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a batch of capture's text is written as one segment of the index", async () => {
  const world = await makeWorld();
  try {
    const batch = transcriptText(DEFAULT_LIMITS.textBudget);
    const store = HistoryStore.open({ path: join(world.data, "history.db"), root: world.data });
    try {
      writeBatch(store.db, batch);
      assert.equal(segments(store.db), 1);
    } finally {
      store.close();
    }
    // The same batch with FTS5's default hash size (1 MiB): the premise of migration 0017.
    const bare = new DatabaseSync(":memory:");
    try {
      bare.exec("CREATE VIRTUAL TABLE fts USING fts5(text, content = '', contentless_delete = 1)");
      writeBatch(bare, batch);
      assert.ok(segments(bare) > 1, `${segments(bare)} segment`);
    } finally {
      bare.close();
    }
  } finally {
    await world.cleanup();
  }
});
