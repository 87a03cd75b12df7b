// Mirror sync in small batches: a pass out of time leaves the mirror "copying" at a batch
// boundary, the next one goes on from its cursor, and a rebuilt main store is copied afresh.

import assert from "node:assert/strict";
import { join } from "node:path";
import { redactorFor } from "../../../lib/context.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { HistoryStore } from "../../../lib/store/db.ts";
import { syncMirrors } from "../../../lib/capture/mirrors.ts";
import { listMirrors, RECORDS_PER_BATCH } from "../../../lib/store/mirror.ts";
import { claudeTranscript } from "../../_claude_transcript.ts";
import { captureWorld, makeWorld, withStore } from "../../_helpers.ts";

const SESSION = "3a6f1c84-9e2d-4b57-a0c3-5d8e1f7b2a96";

function lines(cwd: string, turns: number): string {
  return claudeTranscript(
    SESSION,
    cwd,
    Array.from({ length: turns / 2 }, (_, i) => [
      `note ${2 * i} about the plover ledger`,
      `note ${2 * i + 1} about the plover ledger`,
    ]),
  );
}

function mirrored(path: string): { records: number; cursor: number } {
  const mirror = HistoryStore.open({ path, root: join(path, "..") });
  try {
    const records = (mirror.db.prepare("SELECT count(*) AS n FROM records").get() as { n: number })
      .n;
    return { records, cursor: mirror.getMeta<{ cursor: number }>("mirror")?.cursor ?? 0 };
  } finally {
    mirror.close();
  }
}

Deno.test("a mirror is copied in batches of at most 8 records and resumes from its cursor", async () => {
  const world = await makeWorld();
  const project = join(world.dir, "proj");
  await Deno.mkdir(join(project, ".logbook"), { recursive: true });
  await Deno.writeTextFile(join(project, ".logbook", "config.json"), '{"mirror": true}');
  const folder = join(world.claude, "projects", project.replaceAll("/", "-"));
  await Deno.mkdir(folder, { recursive: true });
  await Deno.writeTextFile(join(folder, `${SESSION}.jsonl`), lines(project, 30));
  try {
    await captureWorld(world); // the capture's own sync fills the mirror
    withStore(world, (store, ctx) => {
      const [state] = listMirrors(store);
      assert.equal(state?.state, "current");
      assert.equal(state?.records, 30);
      const total = mirrored(state!.path);
      assert.equal(total.records, 30);
      // Start over with a clock that allows two batches.
      Deno.removeSync(state!.path);
      let tick = 0;
      const options = { adapters: ADAPTERS, redact: redactorFor(ctx), now: () => tick++ };
      const first = syncMirrors(store, { ...options, budgetMs: 2 })[0]!;
      assert.equal(first.state, "copying");
      const partial = mirrored(first.path);
      assert.ok(
        partial.records > 0 && partial.records <= 2 * RECORDS_PER_BATCH,
        `${partial.records}`,
      );
      assert.equal(partial.records % RECORDS_PER_BATCH, 0, "stopped at a batch boundary");
      const second = syncMirrors(store, { ...options, budgetMs: 1_000 })[0]!;
      assert.equal(second.state, "current");
      const done = mirrored(second.path);
      assert.equal(done.records, 30);
      const maxId = (store.db.prepare("SELECT max(id) AS id FROM records").get() as { id: number })
        .id;
      assert.equal(done.cursor, maxId, "the cursor says everything was read");

      // A rebuilt store is copied again from the start, to the same rows.
      store.setMeta("last_rebuild", { at: 42 });
      const again = syncMirrors(store, { ...options, budgetMs: 1_000 })[0]!;
      assert.equal(again.state, "current");
      assert.equal(mirrored(again.path).records, 30);
    });
  } finally {
    await world.cleanup();
  }
});
