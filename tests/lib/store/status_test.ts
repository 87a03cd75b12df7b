// storeStatus() on a large store: the counts over sources and conversations as the last run kept
// them (no scan of either table), true after a forget, and counted afresh when a run since kept
// nothing.

import assert from "node:assert/strict";
import { recordRun } from "../../../lib/capture/run.ts";
import type { HistoryStore } from "../../../lib/store/db.ts";
import { forget } from "../../../lib/store/forget.ts";
import { keepCounts, storeStatus } from "../../../lib/store/status.ts";
import { dirname, join } from "../../../lib/path.ts";
import { writeClaudeCorpus } from "../../_corpus.ts";
import { captureWorld, makeWorld, withStore } from "../../_helpers.ts";

/** storeStatus() of `store`, and the statements it prepared that scan a table that grows. */
function statusScans(store: HistoryStore) {
  const scans: string[] = [];
  const prepare = store.stmt.bind(store);
  store.stmt = (sql: string) => {
    if (/FROM (sources|conversations)\b/.test(sql)) scans.push(sql.replace(/\s+/g, " ").trim());
    return prepare(sql);
  };
  try {
    return { status: storeStatus(store), scans };
  } finally {
    store.stmt = prepare;
  }
}

/** What the counts are, counted now. */
function counted(store: HistoryStore) {
  return {
    conversations: store.db.prepare(
      `SELECT agent, count(*) AS count, sum(subagent) AS subagents, sum(gone) AS gone
       FROM conversations GROUP BY agent ORDER BY agent`,
    ).all().map((row) => ({ ...row })),
    sources: (store.db.prepare("SELECT count(*) AS n FROM sources").get() as { n: number }).n,
  };
}

Deno.test("storeStatus() reads the counts a run kept, true after a forget, without scanning", async () => {
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 8, lines: 10 });
    await captureWorld(world);
    withStore(world, (store) => {
      const { status, scans } = statusScans(store);
      assert.deepEqual(scans, [], "no table of sources or conversations is scanned");
      const now = counted(store);
      assert.deepEqual(status.conversations, now.conversations);
      assert.equal(status.sources, now.sources);
      assert.deepEqual(status.errors, []);

      const [key] = store.db.prepare("SELECT key FROM conversations LIMIT 1").all() as {
        key: string;
      }[];
      forget(store, { ids: [key!.key] }, { redact: (text) => text });
      const after = statusScans(store);
      assert.deepEqual(after.scans, []);
      assert.deepEqual(after.status.conversations, counted(store).conversations);

      // A run since that kept nothing (a watcher's between discoveries): counted afresh.
      recordRun(store, { at: Date.now() + 1000, ok: true });
      const stale = statusScans(store);
      assert.ok(stale.scans.length > 0, "counted afresh");
      assert.deepEqual(stale.status.conversations, counted(store).conversations);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a capture looks again at the sources listed empty and those it found so, not at every source", async () => {
  const world = await makeWorld();
  try {
    const [first] = writeClaudeCorpus(world.claude, { sessions: 3, lines: 4 });
    const stray = join(dirname(first!), "stray.jsonl");
    Deno.writeTextFileSync(stray, "not a transcript\n");
    await captureWorld(world);
    withStore(world, (store) => assert.deepEqual(storeStatus(store).empty, [stray]));

    // A source empty by the store's rows that no pass read since (a row made by hand here) is
    // not looked for: a pass looks only at what it read, and what was listed.
    const unread = join(dirname(first!), "unread.jsonl");
    withStore(world, (store) => {
      store.db.prepare(
        `INSERT INTO sources (agent, locator, format, generation, cursor, first_seen)
         VALUES ('claude', ?, 'jsonl', 1, 10, 0)`,
      ).run(unread);
    });
    const other = join(dirname(first!), "other.jsonl");
    Deno.writeTextFileSync(other, "nor is this\n");
    await captureWorld(world);
    withStore(world, (store) => assert.deepEqual(storeStatus(store).empty, [other, stray]));

    // The stray yields a conversation now: it leaves the list.
    Deno.writeTextFileSync(stray, Deno.readTextFileSync(first!), { append: true });
    await captureWorld(world);
    withStore(world, (store) => assert.deepEqual(storeStatus(store).empty, [other]));

    // A listed source no longer under its path (moved): every source is counted again.
    withStore(world, (store) => {
      store.db.prepare("UPDATE sources SET locator = ? WHERE locator = ?").run(
        `${other}.moved`,
        other,
      );
      recordRun(store, { at: Date.now(), ok: true }, { sources: { found: [] } });
      assert.deepEqual(storeStatus(store).empty, [`${other}.moved`, unread]);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("storeStatus() lists the sources' errors by path, as the last run counted them", async () => {
  const world = await makeWorld();
  try {
    const paths = writeClaudeCorpus(world.claude, { sessions: 3, lines: 4 });
    await captureWorld(world);
    withStore(world, (store) => {
      const fail = store.db.prepare("UPDATE sources SET error = ? WHERE locator = ?");
      fail.run('unreadable: "quoted" \u00e9', paths[2]!);
      fail.run("permission denied", paths[0]!);
      keepCounts(store, Date.now(), { unchanged: false, since: 0 });
      assert.deepEqual(
        storeStatus(store).errors,
        [
          { locator: paths[0], message: "permission denied" },
          { locator: paths[2], message: 'unreadable: "quoted" \u00e9' },
        ].sort((a, b) => a.locator! < b.locator! ? -1 : 1),
      );
    });
  } finally {
    await world.cleanup();
  }
});
