// The store's record count and raw bytes, kept in `meta` so a status need not sum the whole
// records table: always equal to a full count, through captures, appends and forget.

import assert from "node:assert/strict";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import {
  type BatchPayload,
  type BatchRecord,
  writeBatch,
} from "../../../lib/capture/batch_transaction.ts";
import { createSource } from "../../../lib/capture/identity.ts";
import { HistoryStore } from "../../../lib/store/db.ts";
import { forget } from "../../../lib/store/forget.ts";
import { storeStatus, storeTotals } from "../../../lib/store/status.ts";
import { writeClaudeCorpus } from "../../_corpus.ts";
import { captureWorld, makeWorld, removeDir, tempDir, withStore } from "../../_helpers.ts";

function counted(store: HistoryStore): { records: number; raw: number } {
  const row = store.stmt(
    "SELECT count(*) AS records, coalesce(sum(coalesce(length, length(raw))), 0) AS raw FROM records",
  ).get() as { records: number; raw: number };
  return { records: row.records, raw: row.raw };
}

function kept(store: HistoryStore): unknown {
  return store.getMeta("totals");
}

Deno.test("storeTotals() equals a full count after captures, appends and forget", async () => {
  const world = await makeWorld();
  try {
    const paths = writeClaudeCorpus(world.claude, { sessions: 8, lines: 20 });
    await captureWorld(world);
    withStore(world, (store) => {
      assert.ok(kept(store), "capture keeps the sums");
      const { records, raw } = storeTotals(store);
      assert.deepEqual({ records, raw }, counted(store));
      const status = storeStatus(store);
      assert.equal(status.records, records);
      assert.equal(status.rawBytes, raw);
    });

    // Rows written after the sums were kept are counted from the table.
    const line = JSON.stringify({ type: "summary", summary: "appended", leafUuid: "x" }) + "\n";
    appendFileSync(paths[0]!, line);
    await captureWorld(world);
    withStore(world, (store) => {
      const { records, raw } = storeTotals(store);
      assert.deepEqual({ records, raw }, counted(store));
      store.transaction(() => store.deleteMeta("totals"));
      const again = storeTotals(store);
      assert.deepEqual({ records: again.records, raw: again.raw }, counted(store));
    });
    await captureWorld(world);

    withStore(world, (store) => {
      const before = counted(store);
      forget(store, { before: Date.parse("2100-01-01") }, { redact: (t) => t });
      const { records, raw } = storeTotals(store);
      assert.deepEqual({ records, raw }, counted(store));
      assert.ok(records < before.records, "forget removed records");
    });
  } finally {
    await world.cleanup();
  }
});

/** A batch of `n` fresh rows of `sourceId`, the first at `offset`, 3 bytes each. */
function rows(sourceId: number, offset: number, n: number): BatchPayload {
  const records: BatchRecord[] = [];
  for (let i = 0; i < n; i++) {
    records.push({
      existingId: null,
      sourceId,
      generation: 1,
      offset: offset + 3 * i,
      seq: 0,
      rawAt: 3 * i,
      rawLength: 3,
      length: null,
      conversationKey: null,
      ts: null,
      kind: "meta",
      role: null,
      messageId: null,
      partId: null,
      flags: 0,
      completes: false,
      text: "",
      drift: null,
      usage: null,
    });
  }
  return {
    records,
    raw: new TextEncoder().encode("{}\n".repeat(n)),
    conversations: [],
    supersede: [],
    keys: [],
    mode: "add",
    tombstones: [],
    drop: [],
    sources: [],
    progress: null,
    now: 0,
  };
}

Deno.test("writeBatch() counts its rows into the kept totals, so a capture's end sums none again", async () => {
  const dir = await tempDir();
  const store = HistoryStore.open({ path: join(dir, "history.db"), root: dir });
  try {
    const ref = {
      agent: "claude",
      locator: "/x.jsonl",
      path: "/x.jsonl",
      format: "jsonl",
    } as const;
    const sourceId = store.transaction(() =>
      createSource(store, { adapter: { derivation: 1 }, ref }, 0)
    ).id;
    writeBatch(store, rows(sourceId, 0, 40));
    assert.deepEqual(kept(store), { upTo: 40, records: 40, raw: 120 });
    writeBatch(store, rows(sourceId, 120, 5));
    assert.deepEqual(kept(store), { upTo: 45, records: 45, raw: 135 });
    assert.deepEqual(counted(store), { records: 45, raw: 135 });

    // Rows the totals have not counted come before: they are left to `refreshTotals`.
    store.transaction(() => store.deleteMeta("totals"));
    writeBatch(store, rows(sourceId, 135, 2));
    assert.equal(kept(store), undefined);
    const { records, raw } = storeTotals(store);
    assert.deepEqual({ records, raw }, counted(store));
  } finally {
    store.close();
    await removeDir(dir);
  }
});
