// storeStatus() on a large store: the counts over sources and conversations as the last run kept
// them (no scan of either table), true after a forget, and counted afresh when a run since kept
// nothing.

import assert from "node:assert/strict";
import { recordRun } from "../../../lib/capture/run.ts";
import type { HistoryStore } from "../../../lib/store/db.ts";
import { forget } from "../../../lib/store/forget.ts";
import { storeStatus } from "../../../lib/store/status.ts";
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
