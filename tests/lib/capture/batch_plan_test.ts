// BatchPlanner.plan() hands the writer a batch it only has to store: the index text is made on
// the capture's thread (CJK runs as bigrams, invisible characters left out), so a worker that
// writes batches spends its time in SQLite alone.

import assert from "node:assert/strict";
import { Batch, BatchPlanner } from "../../../lib/capture/batch_plan.ts";
import { DEFAULT_LIMITS } from "../../../lib/capture/limits.ts";
import type { SourceCtx } from "../../../lib/capture/source.ts";
import { type Adapter, makeDerived } from "../../../lib/sources/adapter.ts";
import { FLAG_INDEXED } from "../../../lib/store/schema.ts";

Deno.test("BatchPlanner.plan() gives the writer each record's index text, CJK as bigrams", () => {
  const ctx: SourceCtx = {
    adapter: {} as Adapter,
    ref: { agent: "claude", locator: "/x.jsonl", path: "/x.jsonl", format: "jsonl" },
    sourceId: 1,
    generation: 1,
    headHash: null,
    state: null,
    lastTs: null,
    recognised: true,
  };
  const batch = new Batch();
  for (const [offset, text] of [[0, "缓存策略 pass\u200bword"], [10, ""]] as const) {
    batch.records.push({
      ctx,
      offset,
      seq: 0,
      raw: new TextEncoder().encode("{}\n"),
      derived: makeDerived("message", "user", null, { text }),
      text,
      flags: 0,
    });
  }
  const redact = Object.assign((t: string) => t, { between: (_: string, t: string) => t });
  const planner = new BatchPlanner(redact, () => ({ root: "/", key: "root" }) as never);
  const { payload } = planner.plan(batch, null, 0);
  assert.deepEqual(
    payload.records.map((r) => ({ text: r.text, indexed: (r.flags & FLAG_INDEXED) !== 0 })),
    [{ text: " 缓存 存策 策略  password", indexed: true }, { text: "", indexed: false }],
  );
});

Deno.test("a batch is full at its text, its raw bytes or its records, whichever comes first", () => {
  const limits = { ...DEFAULT_LIMITS, textBudget: 100, rawBudget: 1000, recordBudget: 3 };
  const ctx = { sourceId: 1 } as SourceCtx;
  const record = () => ({
    ctx,
    offset: 0,
    seq: 0,
    raw: new Uint8Array(1),
    derived: makeDerived("message", "user", null, {}),
    text: "",
    flags: 0,
  });
  const batch = new Batch();
  batch.records.push(record(), record());
  assert.equal(batch.full(limits), false);
  batch.records.push(record());
  assert.equal(batch.full(limits), true, "three small records");
  batch.reset();
  batch.text = 100;
  assert.equal(batch.full(limits), true, "100 characters of text");
  batch.reset();
  batch.raw = 999;
  assert.equal(batch.full(limits), false);
  batch.raw = 1000;
  assert.equal(batch.full(limits), true, "1000 raw bytes");
});
