// A store written by the build before migration 0008, migrated by the real `reindex` command and
// killed (SIGKILL) at random points: every run resumes from the last committed batch, and the
// store it ends with is identical to the one an uninterrupted migration gives (row hashes of the
// index and of the records). Each trial migrates a copy of the old store, killed until a run
// finishes; trials go on until there have been ten kills. LOGBOOK_TEST_MIGRATION_RECORDS sets the
// store's size: 200,000 records by default (about a minute on two shared cores).

import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { childBaseEnv, ROOT, runCli, taskFlags } from "../_helpers.ts";
import { indexHash, oldStoreWorld, recordsHash } from "../_old_store.ts";
import { HistoryStore } from "../../lib/store/db.ts";
import { loadContext, openStore, redactorFor } from "../../lib/context.ts";
import { ADAPTERS } from "../../lib/sources/mod.ts";
import { runBatchedMigration } from "../../lib/store/batched_migration.ts";
import { cjkIndexStep } from "../../lib/store/cjk_index.ts";
import { appFor, request } from "../servers/_dashboard.ts";

const RECORDS = Number(Deno.env.get("LOGBOOK_TEST_MIGRATION_RECORDS") ?? 200_000);
const KILLS = 10;

/** A seeded source of numbers in [0, 1) (mulberry32), so a failing run repeats. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Starts the reindex command with the world's variables `vars`. */
function startReindex(vars: Record<string, string>): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...taskFlags("reindex"),
      "--quiet",
      join(ROOT, "commands", "reindex.ts"),
      "--quiet",
    ],
    env: { ...childBaseEnv(), NO_COLOR: "1", ...vars },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
}

/** The migration state in the store (read without migrating or writing anything). */
function stateOf(data: string): { phase: string; batches: number; verified: number } | null {
  const db = new DatabaseSync(join(data, "history.db"), { readOnly: true });
  try {
    const row = db.prepare("SELECT value FROM meta WHERE key = 'batched_migration'").get() as
      | { value: string }
      | undefined;
    return row ? JSON.parse(row.value) : null;
  } finally {
    db.close();
  }
}

function hashes(data: string, root: string) {
  const store = HistoryStore.open({ path: join(data, "history.db"), root });
  try {
    const tables = (store.db.prepare(
      "SELECT name FROM sqlite_schema WHERE name IN ('fts', 'fts_next') ORDER BY name",
    ).all() as { name: string }[]).map((r) => r.name);
    return { tables, index: indexHash(store), records: recordsHash(store) };
  } finally {
    store.close();
  }
}

Deno.test(`a migration of ${RECORDS} records killed ${KILLS} times ends as an uninterrupted one`, async () => {
  const world = await oldStoreWorld(RECORDS);
  try {
    const reference = join(world.dir, "data-reference");
    cpSync(world.data, reference, { recursive: true });

    const started = performance.now();
    const whole = await runCli("reindex", ["--quiet"], {
      ...world.vars,
      LOGBOOK_DATA_DIR: reference,
    });
    const wholeMs = performance.now() - started;
    assert.equal(whole.code, 0, whole.stderr);
    assert.equal(stateOf(reference), null);

    // What a run costs without a migration (start, open, a capture with nothing new): the kill
    // points fall after about that much, spread over the migration's own time.
    const idleStarted = performance.now();
    assert.equal(
      (await runCli("reindex", ["--quiet"], { ...world.vars, LOGBOOK_DATA_DIR: reference })).code,
      0,
    );
    const idleMs = performance.now() - idleStarted;
    const migrationMs = Math.max(200, wholeMs - idleMs);

    // Migrations from copies of the old store, each killed at random points until a run
    // finishes it (seeded, so a failure repeats), until there have been KILLS kills. A kill
    // counts when it stopped a run that had moved the migration on (its state changed and the
    // migration is still under way, or it had switched over).
    const random = seeded(RECORDS);
    const expected = hashes(reference, world.dir);
    assert.deepEqual(expected.tables, ["fts"]);
    let kills = 0;
    let runs = 0;
    const seen = new Set<string>();
    for (let trial = 1; kills < KILLS && trial <= KILLS; trial++) {
      const data = join(world.dir, `data-${trial}`);
      cpSync(world.data, data, { recursive: true });
      const vars = { ...world.vars, LOGBOOK_DATA_DIR: data };
      while (runs < KILLS * 8) {
        runs++;
        const before = JSON.stringify(stateOf(data));
        const child = startReindex(vars);
        const delay = idleMs * 0.6 + random() * migrationMs * 0.6;
        const timer = setTimeout(() => child.kill("SIGKILL"), delay);
        const status = await child.status;
        clearTimeout(timer);
        await child.stderr.cancel();
        const state = stateOf(data);
        if (status.signal !== "SIGKILL") {
          assert.equal(status.code, 0, "an unkilled run succeeds");
          break;
        }
        if (JSON.stringify(state) !== before) {
          kills++;
          seen.add(
            state
              ? `${state.phase}:${state.batches}:${state.verified}:${trial}`
              : `switched:${trial}`,
          );
        }
      }
      const last = await runCli("reindex", ["--quiet"], vars);
      assert.equal(last.code, 0, last.stderr);
      assert.equal(stateOf(data), null);
      assert.deepEqual(hashes(data, world.dir), expected, `trial ${trial}`);
    }
    assert.ok(kills >= KILLS, `${kills} kills during the migration in ${runs} runs`);
    assert.equal(seen.size, kills, "each kill stopped the migration at a different point");
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex --status, status and the dashboard show a migration's phase, share and time left", async () => {
  const world = await oldStoreWorld(3000);
  try {
    // Stopped part-way through its copy.
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      const controller = new AbortController();
      let batches = 0;
      const done = await runBatchedMigration(
        store,
        cjkIndexStep(store, ADAPTERS, redactorFor(ctx)),
        {
          now: ctx.now,
          signal: controller.signal,
          onBatch: () => {
            if (++batches === 20) controller.abort();
          },
        },
      );
      assert.equal(done, false);
    } finally {
      store.close();
    }
    const line =
      /migration: 0008_cjk_bigrams, copying, \d+\.\d% done(, [\d.]+ m?s left)? \(searches use the old index until it is verified\)/;
    const reindexStatus = await runCli("reindex", ["--status"], world.vars);
    assert.equal(reindexStatus.code, 0, reindexStatus.stderr);
    assert.match(reindexStatus.stdout, line);
    const status = await runCli("status", [], world.vars);
    assert.match(status.stdout, line);
    const json = await runCli("status", ["--json"], world.vars);
    const migration = JSON.parse(json.stdout).store.migration;
    assert.equal(migration.name, "0008_cjk_bigrams");
    assert.equal(migration.phase, "copy");
    assert.ok(migration.share > 0 && migration.share < 1);
    assert.ok(migration.leftMs === null || migration.leftMs >= 0);

    const { app } = appFor(world);
    const api = await (await request(app, "/api/status")).json();
    assert.equal(api.store.migration.phase, "copy");
    const page = await (await request(app, "/status")).text();
    assert.match(page, /Migrating the store \(0008_cjk_bigrams, copying\)/);
  } finally {
    await world.cleanup();
  }
});
