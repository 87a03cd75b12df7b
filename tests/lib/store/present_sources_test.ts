// The share captured as `status` shows it: what the last capture saw of the files, kept with its
// result, so a status on a store of 100,000 files looks at none of them; looked at afresh when a
// run since kept nothing (a watcher between its discoveries) or no run kept it yet.

import assert from "node:assert/strict";
import { recordRun, runCapture } from "../../../lib/capture/run.ts";
import { type Context, loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import type { HistoryStore } from "../../../lib/store/db.ts";
import { storeStatus } from "../../../lib/store/status.ts";
import { writeClaudeCorpus } from "../../_corpus.ts";
import { captureWorld, makeWorld, withStore, type World } from "../../_helpers.ts";
import { dirname, join } from "../../../lib/path.ts";

Deno.test("storeStatus() shows the files as the last capture saw them, without looking again", async () => {
  const world = await makeWorld();
  try {
    const paths = writeClaudeCorpus(world.claude, { sessions: 6, lines: 10 });
    await captureWorld(world);
    const onDisk = paths.reduce((n, p) => n + Deno.statSync(p).size, 0);
    const seen = withStore(world, (store) => storeStatus(store));
    const lastRun = seen.lastRun as { at: number };
    assert.deepEqual(seen.captured, { bytes: onDisk, of: onDisk, ratio: 1 });
    assert.equal(seen.presentAt, lastRun.at, "seen by the last capture");

    // Half a line more in one file: a status does not look, so it shows what the capture saw.
    Deno.writeTextFileSync(paths[0]!, '{"type":"user","mess', { append: true });
    const unlooked = withStore(world, (store) => storeStatus(store));
    assert.deepEqual(unlooked.captured, seen.captured);
    assert.deepEqual(unlooked.unfinished, []);

    // The next capture sees it, and keeps that.
    await captureWorld(world);
    const next = withStore(world, (store) => storeStatus(store));
    assert.deepEqual(next.captured, {
      bytes: onDisk,
      of: onDisk + 20,
      ratio: onDisk / (onDisk + 20),
    });
    assert.deepEqual(next.unfinished.map((u) => [u.locator, u.bytes]), [[paths[0], 20]]);
    assert.ok(next.unfinished[0]!.ageMs >= 0);

    // A run that found every file as it was read keeps the figures without reading the
    // sources' rows again: only when they were seen moves.
    const prepared: string[] = [];
    await withStoreAsync(world, async (store, ctx) => {
      const prepare = store.stmt.bind(store);
      store.stmt = (sql: string) => {
        prepared.push(sql);
        return prepare(sql);
      };
      const run = await runCapture({ ctx, store, redact: redactorFor(ctx) });
      assert.ok(run.status === "captured" && run.summary.changed === 0);
    });
    assert.ok(prepared.length > 0, "the run's statements were seen");
    assert.ok(!prepared.some((sql) => /FROM sources\b[^;]*\bgone = 0/.test(sql)), "rows not read");
    const idle = withStore(world, (store) => storeStatus(store));
    const lines = (s: typeof idle) => s.unfinished.map(({ ageMs: _, ...line }) => line);
    assert.deepEqual([idle.captured, lines(idle)], [next.captured, lines(next)]);
    assert.equal(idle.presentAt, (idle.lastRun as { at: number }).at);
    assert.ok(idle.presentAt! >= next.presentAt!);

    // A run since that kept nothing (a watcher's pass between its discoveries): looked at now.
    Deno.writeTextFileSync(paths[1]!, '{"type":"user","mess', { append: true });
    withStore(world, (store) => recordRun(store, { at: Date.now() + 1000, ok: true }));
    const looked = withStore(world, (store) => storeStatus(store));
    assert.equal(looked.presentAt, null, "looked at by this status");
    assert.equal(looked.captured.of, onDisk + 40);
    assert.equal(looked.captured.bytes, onDisk, "the new half line is not captured yet");
  } finally {
    await world.cleanup();
  }
});

Deno.test("storeStatus() lists the unfinished lines by path, whatever order the sources came in", async () => {
  const world = await makeWorld();
  try {
    // The second file's path sorts first, and its source row comes after the first's.
    const [later] = writeClaudeCorpus(world.claude, { sessions: 1, lines: 4, seed: 3 });
    await captureWorld(world);
    const earlier = join(dirname(later!), "0-first.jsonl");
    Deno.writeTextFileSync(earlier, Deno.readTextFileSync(later!));
    await captureWorld(world);
    assert.ok(earlier < later!);
    for (const path of [later!, earlier]) {
      Deno.writeTextFileSync(path, '{"type":"user","mess', { append: true });
    }
    await captureWorld(world);
    const status = withStore(world, (store) => storeStatus(store));
    assert.deepEqual(status.unfinished.map((u) => u.locator), [earlier, later]);
  } finally {
    await world.cleanup();
  }
});

async function withStoreAsync(
  world: World,
  fn: (store: HistoryStore, ctx: Context) => Promise<void>,
): Promise<void> {
  const ctx = loadContext({ env: world.env });
  const store = openStore(ctx);
  try {
    await fn(store, ctx);
  } finally {
    store.close();
  }
}
