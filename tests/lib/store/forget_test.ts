// forget()'s return of space: every free page goes back to the file system, and a reader that
// keeps the write-ahead log from being emptied is reported rather than ignored. And what an
// older build captured under a tombstone, forgotten once by the next capture.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { main as search } from "../../../commands/search.ts";
import { COVERED_SWEEP_KEY, forget, forgetCovered } from "../../../lib/store/forget.ts";
import { HistoryStore } from "../../../lib/store/db.ts";
import { refreshTotals, storeStatus } from "../../../lib/store/status.ts";
import { writeClaudeCorpus } from "../../_corpus.ts";
import { loadContext } from "../../../lib/context.ts";
import { captureIo, captureWorld, makeWorld, withStore, type World } from "../../_helpers.ts";
import { forgetLeavingChildren } from "../../_leaked_children.ts";

const redact = (text: string) => text;

Deno.test("forget() frees every free page, and says when a reader kept the WAL from emptying", async () => {
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 20, lines: 30 });
    await captureWorld(world);
    const ctx = loadContext({ env: world.env });
    // The checkpoint waits for readers up to the busy timeout: a short one keeps this quick.
    const open = () =>
      HistoryStore.open({ path: ctx.paths.historyDb, root: ctx.paths.root, busyTimeoutMs: 100 });
    const store = open();
    const reader = open();
    try {
      reader.db.exec("BEGIN");
      reader.db.prepare("SELECT count(*) FROM records").get();
      const first = forget(store, { before: Date.parse("2026-05-01T19:00:00Z") }, { redact });
      assert.equal(first.conversations.length, 10);
      assert.ok(first.pagesFreed > 10, `${first.pagesFreed} pages freed`);
      const free = store.db.prepare("PRAGMA freelist_count").get() as { freelist_count: number };
      assert.equal(free.freelist_count, 0, "no free page is left in the file");
      assert.equal(first.walEmptied, false, "the reader holds the log");
      reader.db.exec("COMMIT");
      const second = forget(store, { before: Date.parse("2026-05-02T09:00:00Z") }, { redact });
      assert.equal(second.walEmptied, true);
    } finally {
      reader.close();
      store.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("forget() leaves the text index's automerge as it was, and the index whole", async () => {
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 20, lines: 30 });
    await captureWorld(world);
    withStore(world, (store) => {
      const automerge = () =>
        (store.db.prepare("SELECT v FROM fts_config WHERE k = 'automerge'").get() as { v: number })
          .v;
      assert.equal(automerge(), 16, "the store's setting");
      for (const day of ["2026-05-01T10:00:00Z", "2026-05-01T13:00:00Z", "2026-05-01T16:00:00Z"]) {
        const result = forget(store, { before: Date.parse(day) }, { redact, scrub: "later" });
        assert.ok(result.conversations.length > 0, day);
        assert.equal(automerge(), 16, "as it was");
      }
      store.db.exec("INSERT INTO fts (fts) VALUES ('integrity-check')");
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("forgetCovered() forgets, once, what a store holds under its tombstones", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  const session = "claude:e6b87366-6fa9-42f4-8674-9b1edd6ba8df";
  const children = [`${session}/agent-a7d93e1`, `${session}/agent-acompact-4bae15`];
  try {
    await captureWorld(world);
    withStore(world, (store) => {
      forgetLeavingChildren(store, session);
      // Opened by this build, the store is upgraded: migration 0012 leaves the work.
      store.stmt("DELETE FROM migrations WHERE name = '0012_tombstones_cover_children'").run();
    });
    assert.equal(await hits(world, "lichen-semaphore"), 1, "a subagent an older build captured");
    await captureWorld(world);
    for (const phrase of ["lichen-semaphore", "hazel-turnstile"]) {
      assert.equal(await hits(world, phrase), 0, phrase);
      assert.equal(storeHolds(world, phrase), false, `no page holds ${phrase}`);
    }
    assert.equal(await hits(world, "quokka-lantern"), 1, "other conversations stay");
    withStore(world, (store) => {
      const tombstones = (store.stmt("SELECT key FROM tombstones ORDER BY key").all() as {
        key: string;
      }[]).map((t) => t.key);
      assert.deepEqual(tombstones, [session, ...children]);
      assert.equal(store.getMeta(COVERED_SWEEP_KEY), undefined, "done once");
      assert.equal(forgetCovered(store, { redact }), null);
    });
  } finally {
    await world.cleanup();
  }
});

async function hits(world: World, query: string): Promise<number> {
  const io = captureIo();
  return (await search([query, "--json"], io, world.env)) === 0
    ? io.stdout().trim().split("\n").length
    : 0;
}

/** True when the store's file or its log holds `text`. */
function storeHolds(world: World, text: string): boolean {
  return ["history.db", "history.db-wal"].some((name) => {
    try {
      return readFileSync(join(world.data, name)).toString("latin1").includes(text);
    } catch {
      return false;
    }
  });
}

Deno.test("forget() reads what it forgets through indexes: no scan of every record, key or source", async () => {
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 12, lines: 30 });
    await captureWorld(world);
    const ctx = loadContext({ env: world.env });
    const store = HistoryStore.open({ path: ctx.paths.historyDb, root: ctx.paths.root });
    try {
      const kept = storeStatus(store);
      const [one, two] = store.db.prepare("SELECT key FROM conversations ORDER BY id LIMIT 2")
        .all() as { key: string }[];
      // Every statement forget() prepares, to read its plan after.
      const statements = new Set<string>();
      const prepare = store.stmt.bind(store);
      store.stmt = (sql: string) => {
        statements.add(sql);
        return prepare(sql);
      };
      const result = forget(store, { ids: [one!.key, two!.key] }, { redact });
      store.stmt = prepare;

      const scans = [...statements].flatMap((sql) =>
        (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[])
          .map((row) => row.detail)
          // A scan of a table (or of `s`, `r`: the sources and records aliased), or a read
          // of every record from the first id on (a recount of the totals).
          .filter((detail) =>
            /^SCAN (records|record_keys|sources|s|r)\b/.test(detail) ||
            detail.startsWith("SEARCH records USING INTEGER PRIMARY KEY (rowid>?)")
          )
          .map((detail) => `${detail}: ${sql.replace(/\s+/g, " ")}`)
      );
      assert.deepEqual(scans, [], "what grows with the store is not read whole");

      // The totals and the empty sources kept as a recount from scratch finds them.
      const after = storeStatus(store);
      assert.equal(after.records, kept.records - result.records);
      const recount = store.db.prepare(
        "SELECT count(*) AS n, sum(coalesce(length, length(raw))) AS raw FROM records",
      ).get() as { n: number; raw: number };
      assert.deepEqual([after.records, after.rawBytes], [recount.n, recount.raw]);
      const orphans = store.db.prepare(
        "SELECT count(*) AS n FROM record_keys WHERE record_id NOT IN (SELECT id FROM records)",
      ).get() as { n: number };
      assert.equal(orphans.n, 0, "no key is left without its record");
      const emptied = after.empty;
      refreshTotals(store, { recount: true, sources: "recount" });
      assert.deepEqual(emptied, storeStatus(store).empty);
      assert.equal(emptied.length, 2, "the forgotten sessions' files hold nothing now");
    } finally {
      store.close();
    }
  } finally {
    await world.cleanup();
  }
});
