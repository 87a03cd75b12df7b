// `status`: everything in one place — and it reads without creating anything.

import assert from "node:assert/strict";
import { join } from "node:path";
import { main as reindex } from "../../commands/reindex.ts";
import { runCapture } from "../../lib/capture/run.ts";
import { loadContext, openStore, redactorFor } from "../../lib/context.ts";
import { sharePercent } from "../../lib/store/present_sources.ts";
import { writeClaudeCorpus } from "../_corpus.ts";
import { misplacedIndexWorld, zeroLeafPage } from "../_damage.ts";
import { captureIo, makeWorld, runCli, withStore, type World } from "../_helpers.ts";
import { appFor, request } from "../servers/_dashboard.ts";

Deno.test("status on a fresh machine says there is no store yet and creates nothing", async () => {
  const world = await makeWorld();
  try {
    const result = await runCli("status", [], world.vars);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^store: none yet/m);
    assert.match(result.stdout, /^phase: never run$/m);
    assert.match(result.stdout, /^capture: on$/m);
    assert.equal(await Deno.stat(world.data).catch(() => null), null);
  } finally {
    await world.cleanup();
  }
});

Deno.test("status reports the store, drift, snapshots, unclosed markers and corrupt records", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    await Deno.mkdir(join(world.data, "prune-archives"), { recursive: true });
    Deno.writeTextFileSync(
      join(world.data, "prune-archives", "2026-11-01T00-00-00-000Z-x.txt"),
      "snapshot",
    );
    const key = "project-0123456789ab";
    await Deno.mkdir(join(world.data, "sessions", key), { recursive: true });
    Deno.writeTextFileSync(
      join(world.data, "sessions", key, `${crypto.randomUUID()}.json`),
      "{ not json",
    );
    const dead = new Deno.Command("true").spawn();
    await dead.status;
    Deno.writeTextFileSync(
      join(world.data, "logs", "stage-markers.log"),
      JSON.stringify({
        time: new Date(Date.now() - 600_000).toISOString(),
        pid: dead.pid,
        op: "capture:0badf00d",
        seq: 1,
        step: "capture.batch",
        event: "start",
      }) + "\n",
      { append: true },
    );
    const json = await runCli("status", ["--json"], { ...world.vars, LOGBOOK_INGEST: "0" });
    assert.equal(json.code, 0, json.stderr);
    const status = JSON.parse(json.stdout);
    assert.equal(status.capture.on, false);
    assert.equal(status.capture.offReason, "LOGBOOK_INGEST=0");
    assert.equal(status.capture.lastRun.ok, true);
    assert.deepEqual(status.store.conversations, [
      { agent: "claude", count: 29, subagents: 8, gone: 0 },
    ]);
    assert.ok(
      status.drift.some((d: string) =>
        d.startsWith('claude 2.9.99: 3 lines of unknown type "hologram-sync"')
      ),
    );
    assert.deepEqual(status.snapshots, { count: 1, bytes: 8 });
    assert.equal(status.sessions.corrupt.length, 1);
    const open = status.stageMarkers.unclosed.find((u: { op: string }) =>
      u.op === "capture:0badf00d"
    );
    assert.equal(open.alive, false);

    const human = await runCli("status", [], world.vars);
    // Subagents are conversations too, and the total says how many of them there are.
    assert.match(human.stdout, /^conversations: 29, 8 of them subagents \(claude 29\)$/m);
    // What the store holds as captured, and what the sources hold now: two different measures.
    assert.match(
      human.stdout,
      /^store: \S+ \S+ on disk, holding \S+ \S+ of transcripts as captured \(219 records\) and their index$/m,
    );
    assert.match(
      human.stdout,
      /^sources: 27 \(0 gone upstream\); the files still there hold \S+ \S+, \d+\.\d% of it captured$/m,
    );
    assert.match(human.stdout, /^snapshots: 1 \(8 B\) in prune-archives\/$/m);
    assert.match(human.stdout, /^corrupt session record: ".*\.json": /m);
    assert.match(human.stdout, /^ {2}capture\.batch \(pid \d+, dead\) open /m);
    assert.match(human.stdout, /^drift: claude 2\.9\.99: 3 lines of unknown type "hologram-sync"/m);
  } finally {
    await world.cleanup();
  }
});

/** A capture stopped by its time limit after a few batches (a clock that leaps forward). */
async function partialCapture(world: World): Promise<void> {
  let calls = 0;
  const now = () => (++calls < 40 ? 1_000_000 : 9_000_000);
  const ctx = loadContext({ env: world.env, now });
  const store = openStore(ctx);
  try {
    const result = await runCapture({ ctx, store, redact: redactorFor(ctx), maxSeconds: 5 });
    assert.ok(result.status === "captured" && result.summary.stoppedBy === "deadline");
  } finally {
    store.close();
  }
}

Deno.test("after a partial capture the share counts every present source whole, everywhere", async () => {
  const world = await makeWorld();
  try {
    const paths = writeClaudeCorpus(world.claude, { sessions: 40, lines: 100 });
    await partialCapture(world);
    const onDisk = paths.reduce((n, p) => n + Deno.statSync(p).size, 0);
    const cursors = withStore(
      world,
      (store) =>
        (store.db.prepare("SELECT sum(cursor) AS n FROM sources").get() as { n: number }).n,
    );
    assert.ok(
      cursors > 0 && cursors < onDisk,
      `the capture stopped early (${cursors} of ${onDisk})`,
    );
    const expected = { bytes: cursors, of: onDisk, ratio: cursors / onDisk };

    const status = await runCli("status", ["--json"], world.vars);
    assert.equal(status.code, 0, status.stderr);
    assert.deepEqual(JSON.parse(status.stdout).store.captured, expected);
    const reindexStatus = await runCli("reindex", ["--status", "--json"], world.vars);
    assert.deepEqual(JSON.parse(reindexStatus.stdout).captured, expected);

    const percent = sharePercent(expected.ratio);
    assert.notEqual(percent, "100.0%");
    const human = await runCli("status", [], world.vars);
    assert.match(human.stdout, new RegExp(` ${percent.replace(".", "\\.")} of it captured`));
    const reindexHuman = await runCli("reindex", ["--status"], world.vars);
    assert.match(
      reindexHuman.stdout,
      new RegExp(` ${percent.replace(".", "\\.")} of it captured`),
    );

    const { app } = appFor(world);
    const api = await (await request(app, "/api/status")).json();
    assert.deepEqual(api.store.captured, expected);
    const page = await (await request(app, "/status")).text();
    assert.match(page, new RegExp(`<td id="captured-share">${percent.replace(".", "\\.")} \\(`));
  } finally {
    await world.cleanup();
  }
});

Deno.test("status names a source that ends in an unfinished line, with its age", async () => {
  const world = await makeWorld();
  try {
    const [done, unfinished] = writeClaudeCorpus(world.claude, { sessions: 2, lines: 4 });
    const tail = '{"type":"user","message":{"role":"user","content":"half a li';
    Deno.writeTextFileSync(unfinished!, tail, { append: true });
    const threeDaysAgo = new Date(Date.now() - 3 * 86_400_000 - 60_000);
    Deno.utimeSync(unfinished!, threeDaysAgo, threeDaysAgo);
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);

    const json = JSON.parse((await runCli("status", ["--json"], world.vars)).stdout);
    assert.equal(json.store.unfinished.length, 1);
    const [entry] = json.store.unfinished;
    assert.equal(entry.locator, unfinished);
    assert.equal(entry.bytes, tail.length);
    assert.equal(entry.writtenAt, threeDaysAgo.getTime());
    const human = await runCli("status", [], world.vars);
    assert.ok(
      human.stdout.includes(
        `warning: "${unfinished}" ends in an unfinished line (${tail.length} B without a newline, last written 3 d ago)`,
      ),
      human.stdout,
    );
    assert.ok(!human.stdout.includes(done!), "a source that ends in a newline is not named");
    const reindexHuman = await runCli("reindex", ["--status"], world.vars);
    assert.match(reindexHuman.stdout, /ends in an unfinished line/);

    // Once the line is finished and captured, nothing is named.
    Deno.writeTextFileSync(unfinished!, 'ne"}}\n', { append: true });
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    const after = JSON.parse((await runCli("status", ["--json"], world.vars)).stdout);
    assert.deepEqual(after.store.unfinished, []);
    assert.equal(after.store.captured.ratio, 1);
  } finally {
    await world.cleanup();
  }
});

/** A world with a captured synthetic corpus; its store is closed and checkpointed. */
async function storedWorld(): Promise<World> {
  const world = await makeWorld();
  writeClaudeCorpus(world.claude, { sessions: 12, lines: 40 });
  assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
  return world;
}

Deno.test("status --check finds a zeroed page of raw records, names it, says data may be lost, exits 1", async () => {
  const world = await storedWorld();
  try {
    const healthy = await runCli("status", ["--check"], world.vars);
    assert.equal(healthy.code, 0, healthy.stderr);
    assert.match(healthy.stdout, /^check: ok \(PRAGMA quick_check/m);
    const healthyJson = JSON.parse(
      (await runCli("status", ["--check", "--json"], world.vars)).stdout,
    );
    assert.equal(healthyJson.check.ok, true);
    const unchecked = JSON.parse((await runCli("status", ["--json"], world.vars)).stdout);
    assert.equal(unchecked.check, null, "no check unless asked");

    zeroLeafPage(join(world.data, "history.db"), "records", 2);
    const damaged = await runCli("status", ["--check"], world.vars);
    assert.equal(damaged.code, 1);
    assert.match(damaged.stdout, /^check: the store is damaged/m);
    assert.match(damaged.stdout, /^ {2}damaged: table "records" \(raw: captured data\)$/m);
    assert.match(
      damaged.stdout,
      /^recovery: Raw data is damaged: some captured records may be lost/m,
    );
    assert.match(damaged.stdout, /run "logbook reindex" to capture again from the sources/);
    assert.match(damaged.stderr, /^error: the history store is damaged/m);
    const json = await runCli("status", ["--check", "--json"], world.vars);
    assert.equal(json.code, 1);
    const check = JSON.parse(json.stdout).check;
    assert.equal(check.ok, false);
    assert.ok(
      check.damaged.some((d: { object: string; kind: string }) =>
        d.object === "records" && d.kind === "raw"
      ),
    );

    // A rebuild cannot bring raw records back: it refuses and says what to do.
    const rebuild = await runCli("reindex", ["--rebuild"], world.vars);
    assert.equal(rebuild.code, 1);
    assert.match(rebuild.stderr, /damaged in table "records" \(raw: captured data\)/);
    assert.match(rebuild.stderr, /move "history\.db" \(with its -wal and -shm files\) aside/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("status --check names a damaged text index and index; reindex --rebuild repairs them", async () => {
  const world = await storedWorld();
  try {
    const before = JSON.parse((await runCli("status", ["--json"], world.vars)).stdout).store;
    const db = join(world.data, "history.db");
    zeroLeafPage(db, "fts_data", 1);
    zeroLeafPage(db, "records_identity", 0);
    const damaged = await runCli("status", ["--check"], world.vars);
    assert.equal(damaged.code, 1);
    assert.match(damaged.stdout, /^ {2}damaged: the text index \(table "fts"\)$/m);
    assert.match(damaged.stdout, /^ {2}damaged: index "records_identity" of table "records"$/m);
    assert.doesNotMatch(damaged.stdout, /raw: captured data/);
    assert.match(
      damaged.stdout,
      /^recovery: Only data derived from the raw records is damaged: run "logbook reindex --rebuild"/m,
    );

    const rebuild = await runCli("reindex", ["--rebuild"], world.vars);
    assert.equal(rebuild.code, 0, rebuild.stderr);
    assert.match(rebuild.stdout, new RegExp(`from ${before.records} raw records`));
    const healed = await runCli("status", ["--check", "--json"], world.vars);
    assert.equal(healed.code, 0, healed.stdout);
    const after = JSON.parse(healed.stdout);
    assert.equal(after.check.ok, true);
    assert.equal(after.store.records, before.records);
    assert.deepEqual(after.store.conversations, before.conversations);
    const found = await runCli("search", ["marker7", "--json"], world.vars);
    assert.equal(found.code, 0);
    assert.equal(found.stdout.trim().split("\n").length, 1);
    assert.deepEqual(
      [...Deno.readDirSync(world.data)].map((e) => e.name).filter((n) => n.includes("rebuild")),
      [],
      "the rebuild's working file is gone",
    );
  } finally {
    await world.cleanup();
  }
});

Deno.test("status opens with exactly the lines of reindex --status: one rendering of capture's state", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    for (const stage of ["before any capture", "after a capture"]) {
      if (stage === "after a capture") {
        assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
      }
      const reindexed = await runCli("reindex", ["--status"], world.vars);
      const status = await runCli("status", [], world.vars);
      assert.equal(reindexed.code, 0, reindexed.stderr);
      assert.equal(status.code, 0, status.stderr);
      // The two commands run a moment apart: an age ("last written 0 s ago", the last capture's
      // "(0 s ago, by reindex)") may tick between them.
      const steady = (line: string) => line.replace(/\b\d+ \w+ ago\b/, "… ago");
      const capture = reindexed.stdout.trimEnd().split("\n").map(steady);
      assert.ok(capture.length >= 4, `${stage}: ${reindexed.stdout}`);
      assert.deepEqual(
        status.stdout.split("\n").slice(0, capture.length).map(steady),
        capture,
        `${stage}: status shows what reindex --status shows`,
      );
      assert.match(status.stdout, /^snapshots: /m);
      assert.doesNotMatch(reindexed.stdout, /^snapshots: /m);
      if (stage === "after a capture") {
        // The run, how long ago, and the command that ran it.
        assert.match(
          status.stdout,
          /^last capture: \S+Z \(\d+ s ago, by reindex\) ok — Captured /m,
        );
      }
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("plain status finds text index damage no read reports, names it and exits 1", async () => {
  const { world } = await misplacedIndexWorld();
  try {
    const damaged = await runCli("status", [], world.vars);
    assert.equal(damaged.code, 1);
    assert.match(
      damaged.stdout,
      /^check: the store is damaged \(a quick check of the text index, /m,
    );
    assert.match(damaged.stdout, /^ {2}damaged: the text index \(table "fts"\)$/m);
    assert.match(damaged.stdout, /^ {4}row not in PRIMARY KEY order for fts_idx$/m);
    assert.match(
      damaged.stdout,
      /^recovery: run "logbook reindex --rebuild" to derive the text index again from the raw records/m,
    );
    assert.match(damaged.stderr, /^error: the history store is damaged/m);
    const json = await runCli("status", ["--json"], world.vars);
    assert.equal(json.code, 1);
    const { check } = JSON.parse(json.stdout);
    assert.equal(check.ok, false);
    assert.equal(check.ran, "a quick check of the text index");
    assert.deepEqual(check.damaged.map((d: { object: string }) => d.object), ["fts"]);

    assert.equal((await runCli("reindex", ["--rebuild"], world.vars)).code, 0);
    const healed = await runCli("status", ["--json"], world.vars);
    assert.equal(healed.code, 0, healed.stderr);
    assert.equal(JSON.parse(healed.stdout).check, null, "a sound store shows no check");
  } finally {
    await world.cleanup();
  }
});
