// A capture run: a latched failure stops capture until a retry clears it, for `reindex` and
// `reindex --watch` alike, and a pass's options come from the context in one place.

import assert from "node:assert/strict";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { passOptions, runCapture, whyNotCaptured } from "../../../lib/capture/run.ts";
import { LATCH_KEY, type LatchedFailure } from "../../../lib/store/latch.ts";
import { watch } from "../../../lib/capture/watch.ts";
import { envFrom } from "../../../lib/env.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { makeWorld, withStore } from "../../_helpers.ts";
import { tryLock } from "../../../lib/lock.ts";
import { writeClaudeCorpus } from "../../_corpus.ts";

const FAILURE: LatchedFailure = { at: 1_700_000_000_000, message: "The rebuild failed" };

Deno.test("a latched failure stops every run until one with retry clears it", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      store.setMeta(LATCH_KEY, FAILURE);
      const redact = redactorFor(ctx);
      assert.deepEqual(await runCapture({ ctx, store, redact }), {
        status: "latched",
        failure: FAILURE,
      });
      const retried = await runCapture({ ctx, store, redact, retry: true });
      assert.equal(retried.status, "captured");
      assert.equal(store.getMeta(LATCH_KEY), undefined);
      assert.ok(retried.status === "captured" && retried.summary.records > 0);
    } finally {
      store.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("watch() clears a latched failure only when asked to retry", async (t) => {
  const world = await makeWorld();
  try {
    // An aborted signal: the watcher takes the lock and stops before its first pass.
    const signal = AbortSignal.abort();
    for (const retry of [false, true]) {
      await t.step(`retry: ${retry}`, async () => {
        const ctx = loadContext({ env: world.env });
        const store = openStore(ctx);
        try {
          store.setMeta(LATCH_KEY, FAILURE);
          await watch({ ctx, store, redact: redactorFor(ctx), signal, retry });
          assert.deepEqual(store.getMeta(LATCH_KEY), retry ? undefined : FAILURE);
        } finally {
          store.close();
        }
      });
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a watcher with a latched failure captures nothing and says why", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      store.setMeta(LATCH_KEY, FAILURE);
      const controller = new AbortController();
      const notes: string[] = [];
      const watching = watch({
        ctx,
        store,
        redact: redactorFor(ctx),
        signal: controller.signal,
        timings: { idleMs: 20 },
        onNote: (note) => {
          notes.push(note);
          controller.abort();
        },
      });
      await watching;
      assert.deepEqual(notes, [`capture is stopped after a failure: ${FAILURE.message}`]);
      const records = store.stmt("SELECT count(*) AS n FROM records").get() as { n: number };
      assert.equal(records.n, 0);
    } finally {
      store.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("passOptions() gives a pass the context's adapters, clock and capture switch", async () => {
  const world = await makeWorld();
  try {
    withStore(world, (store, ctx) => {
      const options = passOptions(ctx, store, redactorFor(ctx));
      assert.equal(options.adapters, ADAPTERS);
      assert.equal(options.now, ctx.now);
      assert.equal(options.store, store);
      assert.equal(options.captureEnabled?.(), true);
    });
    const off = loadContext({ env: envFrom({ ...world.vars, LOGBOOK_INGEST: "0" }) });
    withStore(world, (store) => {
      assert.equal(passOptions(off, store, redactorFor(off)).captureEnabled?.(), false);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("passOptions() knows the projects of the conversations the last run captured, without scanning them", async () => {
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 3, lines: 5 });
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      const redact = redactorFor(ctx);
      assert.equal((await runCapture({ ctx, store, redact })).status, "captured");
      const prepared: string[] = [];
      const prepare = store.stmt.bind(store);
      store.stmt = (sql: string) => {
        prepared.push(sql);
        return prepare(sql);
      };
      const projects = passOptions(ctx, store, redact).discover.projects;
      store.stmt = prepare;
      assert.deepEqual(
        [...projects!].sort(),
        ["/home/dev/src/project0", "/home/dev/src/project1", "/home/dev/src/project2"],
      );
      assert.ok(!prepared.some((sql) => sql.includes("FROM conversations")), "kept by the run");

      // A run since that kept nothing (a watcher's between discoveries): read from the store.
      store.setMeta("last_run", { at: Date.now() + 1000, ok: true });
      store.db.exec("UPDATE conversations SET cwd = '/home/dev/elsewhere' WHERE rowid = 1");
      assert.ok(passOptions(ctx, store, redact).discover.projects!.includes("/home/dev/elsewhere"));
    } finally {
      store.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("whyNotCaptured names a forget's scrub of the text index, which holds the capture lock", () => {
  const holder = (command: string) => ({ pid: 4242, startedAt: 0, command });
  assert.equal(
    whyNotCaptured({ status: "busy", holder: holder("forget --finish") }),
    "A forget is taking words out of the text index (pid 4242)",
  );
  assert.equal(
    whyNotCaptured({ status: "busy", holder: holder("reindex") }),
    "Another capture is running (pid 4242)",
  );
  assert.equal(
    whyNotCaptured({ status: "busy", holder: null }),
    "Another capture is running (another process)",
  );
});

Deno.test("a capture waits for a forget's scrub holding the capture lock, and is busy for another capture", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    const redact = redactorFor(ctx);
    try {
      const other = tryLock(ctx.paths.run, ctx.paths.root, "capture", "reindex");
      assert.ok("held" in other);
      const busy = await runCapture({ ctx, store, redact });
      assert.equal(busy.status, "busy");
      other.held.release();

      const scrub = tryLock(ctx.paths.run, ctx.paths.root, "capture", "forget --finish");
      assert.ok("held" in scrub);
      let ended = false;
      const running = runCapture({ ctx, store, redact }).finally(() => ended = true);
      // A busy answer would have come by now: the run waits for the lock instead.
      await new Promise((resolve) => setTimeout(resolve, 0));
      assert.equal(ended, false, "still waiting for the lock");
      scrub.held.release();
      const result = await running;
      assert.equal(result.status, "captured");
      assert.ok(result.status === "captured" && result.summary.records > 0);
    } finally {
      store.close();
    }
  } finally {
    await world.cleanup();
  }
});
