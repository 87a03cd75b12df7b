// forget()'s return of space: every free page goes back to the file system, and a reader that
// keeps the write-ahead log from being emptied is reported rather than ignored.

import assert from "node:assert/strict";
import { forget } from "../../../lib/store/forget.ts";
import { HistoryStore } from "../../../lib/store/db.ts";
import { writeClaudeCorpus } from "../../_corpus.ts";
import { loadContext } from "../../../lib/context.ts";
import { captureWorld, makeWorld } from "../../_helpers.ts";

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
