// The share captured as `status` shows it: what the last capture saw of the files, kept with its
// result, so a status on a store of 100,000 files looks at none of them; looked at afresh when a
// run since kept nothing (a watcher between its discoveries) or no run kept it yet.

import assert from "node:assert/strict";
import { recordRun } from "../../../lib/capture/run.ts";
import { storeStatus } from "../../../lib/store/status.ts";
import { writeClaudeCorpus } from "../../_corpus.ts";
import { captureWorld, makeWorld, withStore } from "../../_helpers.ts";

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
