// `status`: everything in one place — and it reads without creating anything.

import assert from "node:assert/strict";
import { join } from "node:path";
import { main as reindex } from "../../commands/reindex.ts";
import { captureIo, makeWorld, runCli } from "../_helpers.ts";

Deno.test("status on a fresh machine says there is no store yet and creates nothing", async () => {
  const world = await makeWorld();
  try {
    const result = await runCli("status", [], world.vars);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^store: none yet/m);
    assert.match(result.stdout, /^capture: on, never run$/m);
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
    assert.deepEqual(status.store.conversations, [{ agent: "claude", count: 16, gone: 0 }]);
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
    assert.match(human.stdout, /^conversations: claude 16$/m);
    assert.match(human.stdout, /^snapshots: 1 \(8 B\) in prune-archives\/$/m);
    assert.match(human.stdout, /^corrupt session record: ".*\.json": /m);
    assert.match(human.stdout, /^ {2}capture\.batch \(pid \d+, dead\) open /m);
    assert.match(human.stdout, /^drift: claude 2\.9\.99: 3 lines of unknown type "hologram-sync"/m);
  } finally {
    await world.cleanup();
  }
});
