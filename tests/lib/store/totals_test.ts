// The store's record count and raw bytes, kept in `meta` so a status need not sum the whole
// records table: always equal to a full count, through captures, appends and forget.

import assert from "node:assert/strict";
import { appendFileSync } from "node:fs";
import { forget } from "../../../lib/store/forget.ts";
import type { HistoryStore } from "../../../lib/store/db.ts";
import { storeStatus, storeTotals } from "../../../lib/store/status.ts";
import { writeClaudeCorpus } from "../../_corpus.ts";
import { captureWorld, makeWorld, withStore } from "../../_helpers.ts";

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
