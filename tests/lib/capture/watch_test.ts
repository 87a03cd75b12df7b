// The watcher's cadence with a backlog: sources found unread, or grown past their cursors, are
// read in full-speed runs until drained, not left to wait for the next rediscovery.

import assert from "node:assert/strict";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import type { CaptureSummary } from "../../../lib/capture/summary.ts";
import { watch } from "../../../lib/capture/watch.ts";
import { writeClaudeCorpus } from "../../_corpus.ts";
import { captureWorld, makeWorld, withStore, type World } from "../../_helpers.ts";
import { oldStoreWorld } from "../../_old_store.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { INDEX_UPGRADE_KEY } from "../../../lib/store/cjk.ts";
import { migrationState } from "../../../lib/store/batched_migration.ts";
import { search } from "../../../lib/store/search.ts";
import { captureState } from "../../../lib/status.ts";
import { eventually } from "../../_wait.ts";

/** True when every file's bytes are captured: its source's cursor is at its end. */
function allCaptured(world: World, paths: string[]): boolean {
  return withStore(world, (store) => {
    const cursor = store.db.prepare("SELECT cursor FROM sources WHERE locator = ?");
    return paths.every((path) =>
      (cursor.get(path) as { cursor: number } | undefined)?.cursor === Deno.statSync(path).size
    );
  });
}

function records(world: World): number {
  return withStore(
    world,
    (store) => (store.db.prepare("SELECT count(*) AS n FROM records").get() as { n: number }).n,
  );
}

Deno.test("watch() drains a backlog of many sources without waiting for a rediscovery", async (t) => {
  const world = await makeWorld();
  const sessions = 40;
  const lines = 30;
  const paths = writeClaudeCorpus(world.claude, { sessions, lines });
  const ctx = loadContext({ env: world.env });
  const store = openStore(ctx);
  const controller = new AbortController();
  const summaries: CaptureSummary[] = [];
  const watching = watch({
    ctx,
    store,
    redact: redactorFor(ctx),
    signal: controller.signal,
    // No rediscovery within the test, and captures of changes cut short at once: whatever is
    // read is read by draining a backlog.
    timings: { rediscoverMs: 3_600_000, sliceMs: 0 },
    onCapture: (summary) => summaries.push(summary),
  });
  try {
    await t.step("the sources found at start are all read", async () => {
      await eventually("every source found at start", () => allCaptured(world, paths));
      assert.equal(records(world), sessions * lines);
    });

    await t.step("sources grown past their cursors are read to the end", async () => {
      const grown = writeClaudeCorpus(world.dir, { sessions: 5, lines: 20, seed: 9 });
      grown.forEach((from, i) => appendFileSync(paths[i]!, Deno.readFileSync(from)));
      await eventually("every grown source", () => allCaptured(world, paths));
      assert.equal(records(world), sessions * lines + 5 * 20);
    });
    assert.deepEqual(summaries.flatMap((s) => s.errors), []);
  } finally {
    controller.abort();
    await watching;
    store.close();
    await world.cleanup();
  }
});

Deno.test("watch() migrates a store written before 0008 in slices, then captures", async () => {
  const world = await oldStoreWorld(2000);
  const ctx = loadContext({ env: world.env });
  const store = openStore(ctx);
  const controller = new AbortController();
  const watching = watch({
    ctx,
    store,
    redact: redactorFor(ctx),
    signal: controller.signal,
    timings: { sliceMs: 20 },
  });
  try {
    await eventually(
      "the migration's switch-over",
      () =>
        withStore(world, (s) => s.getMeta(INDEX_UPGRADE_KEY) === undefined && !migrationState(s)),
    );
    const hits = withStore(
      world,
      (s, c) => search(s, ADAPTERS, redactorFor(c), { query: "缓存策略", limit: 1000 }),
    );
    assert.equal(hits.mode, "fts");
    assert.ok(hits.hits.length > 0);
  } finally {
    controller.abort();
    await watching;
    store.close();
    await world.cleanup();
  }
});

Deno.test("watch() records its passes for status as runs of reindex --watch, as reindex records its runs", async (t) => {
  const world = await makeWorld();
  const paths = writeClaudeCorpus(world.claude, { sessions: 3, lines: 4 });
  // A run from cron before the watcher starts.
  await captureWorld(world);
  const status = () => captureState(loadContext({ env: world.env }));
  assert.equal(status().capture.lastRun?.by, "reindex");
  const ctx = loadContext({ env: world.env });
  const store = openStore(ctx);
  // The passes that stored something or warned, as the watcher reports each once recorded.
  const captured: CaptureSummary[] = [];
  let reported = () => {};
  /** The summaries reported from now until `done` holds for them (30 s at most). */
  const capturesUntil = async (done: (since: CaptureSummary[]) => boolean) => {
    const from = captured.length;
    const until = Date.now() + 30_000;
    while (!done(captured.slice(from))) {
      if (Date.now() > until) throw new Error("timed out waiting for the watcher's captures");
      await Promise.race([
        new Promise<void>((resolve) => (reported = resolve)),
        new Promise<void>((resolve) => setTimeout(resolve, 1000)),
      ]);
    }
    return captured.slice(from);
  };
  const controller = new AbortController();
  const watching = watch({
    ctx,
    store,
    redact: redactorFor(ctx),
    signal: controller.signal,
    onCapture: (summary) => {
      captured.push(summary);
      reported();
    },
  });
  try {
    await t.step("its first pass takes over, though it finds nothing new", async () => {
      await eventually(
        "the first pass recorded",
        () => status().capture.lastRun?.by === "reindex --watch",
      );
      const { lastRun } = status().capture;
      assert.equal(lastRun?.ok, true);
      assert.equal(lastRun?.summary?.records, 0);
      assert.deepEqual(captured, [], "nothing to report");
    });

    await t.step("a pass that stores something replaces it, with what status counts", async () => {
      const before = status().capture.lastRun!.at;
      const more = writeClaudeCorpus(world.dir, { sessions: 1, lines: 2, seed: 9 });
      appendFileSync(paths[0]!, Deno.readFileSync(more[0]!));
      // A transcript that yields no conversation (one unparsable line): status warns of it.
      const stray = join(world.claude, "projects", "-home-dev-src-project0", "stray.jsonl");
      Deno.writeTextFileSync(stray, "not a transcript\n");
      const summaries = await capturesUntil((since) =>
        since.reduce((n, s) => n + s.records, 0) >= 3 && since.some((s) => s.empty.length > 0)
      );
      const { capture, store: kept } = status();
      assert.equal(capture.lastRun?.by, "reindex --watch");
      assert.ok(capture.lastRun!.at >= before);
      assert.deepEqual(capture.lastRun?.summary, summaries.at(-1));
      assert.equal(kept?.records, 15);
      assert.deepEqual(kept?.empty, [stray]);
    });

    await t.step("a listed source that yields a conversation leaves the list", async () => {
      const stray = status().store!.empty[0]!;
      const line = Deno.readTextFileSync(paths[1]!).split("\n")[0]!;
      appendFileSync(stray, line + "\n");
      await capturesUntil((since) => since.some((s) => s.records > 0));
      assert.deepEqual(status().store?.empty, []);
    });
  } finally {
    controller.abort();
    await watching;
    store.close();
    await world.cleanup();
  }
});

Deno.test("watch() captures a prompt typed into Codex's history file between discoveries", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  const history = join(world.codex, "history.jsonl");
  const ctx = loadContext({ env: world.env });
  const store = openStore(ctx);
  const controller = new AbortController();
  const watching = watch({
    ctx,
    store,
    redact: redactorFor(ctx),
    signal: controller.signal,
    // No rediscovery within the test: only watching the file (or polling it) can see the prompt.
    timings: { rediscoverMs: 3_600_000 },
  });
  const found = (query: string) =>
    withStore(world, (s, c) => search(s, ADAPTERS, redactorFor(c), { query }).hits.length);
  try {
    await eventually(
      "the first pass to read the history file",
      () => allCaptured(world, [history]),
    );
    appendFileSync(
      history,
      JSON.stringify({
        session_id: "019f1c2d-3e4f-7a5b-8c6d-7e8f9a0b1c2d",
        ts: Math.floor(Date.now() / 1000),
        text: "what became of the heron-spinnaker build",
      }) + "\n",
    );
    await eventually("the typed prompt", () => found("heron-spinnaker") === 1);
  } finally {
    controller.abort();
    await watching;
    store.close();
    await world.cleanup();
  }
});

Deno.test("watch() waits while capture is switched off, says so once each way, then captures", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  const file = join(world.config, "config.json");
  Deno.mkdirSync(world.config, { recursive: true });
  Deno.writeTextFileSync(file, JSON.stringify({ history: { ingest: false } }));
  const ctx = loadContext({ env: world.env });
  const store = openStore(ctx);
  const controller = new AbortController();
  const notes: string[] = [];
  const watching = watch({
    ctx,
    store,
    redact: redactorFor(ctx),
    signal: controller.signal,
    timings: { idleMs: 20 },
    onNote: (note) => notes.push(note),
  });
  try {
    await eventually("the watcher to say capture is off", () => notes.length > 0);
    assert.equal(records(world), 0);
    Deno.writeTextFileSync(file, JSON.stringify({ history: { ingest: true } }));
    await eventually("a capture once switched on", () => records(world) > 0);
    assert.deepEqual(notes, [
      `capture switched off (config "history.ingest" is false); waiting, cursors kept`,
      "capture switched on again",
    ]);
  } finally {
    controller.abort();
    await watching;
    store.close();
    await world.cleanup();
  }
});
