// A store written by the build before migration 0008, migrated by the real `reindex` command and
// killed (SIGKILL) at random points: every run resumes from the last committed batch, and the
// store it ends with is identical to the one an uninterrupted migration gives (row hashes of the
// index and of the records). Ten trials, each from a copy of the old store killed one to three
// times while its migration was under way, then run to the end and compared; two trials run at
// a time (CI has two cores; a reindex uses one). LOGBOOK_TEST_MIGRATION_RECORDS sets the
// store's size: 200,000 records by default. And a store captured before derivations were
// recorded (migration 0013) is derived again by the command, which says so.

import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join } from "node:path";
import {
  captureWorld,
  childBaseEnv,
  makeWorld,
  removeDir,
  ROOT,
  runCli,
  taskFlags,
  withStore,
} from "../_helpers.ts";
import { indexHash, makeStoreUnversioned, oldStoreWorld, recordsHash } from "../_old_store.ts";
import { addInvisible, INVISIBLE } from "../_invisible.ts";
import { HistoryStore } from "../../lib/store/db.ts";
import { loadContext, openStore, redactorFor } from "../../lib/context.ts";
import { ADAPTERS } from "../../lib/sources/mod.ts";
import {
  type MigrationProgress,
  migrationProgress,
  runBatchedMigration,
} from "../../lib/store/batched_migration.ts";
import { cjkIndexStep } from "../../lib/store/cjk_index.ts";
import { appFor, request } from "../servers/_dashboard.ts";

/** How `deno task reindex` runs it. */
const REINDEX_FLAGS = await taskFlags("reindex");

const RECORDS = Number(Deno.env.get("LOGBOOK_TEST_MIGRATION_RECORDS") ?? 200_000);
const TRIALS = 10;
const PARALLEL = 2;

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
      ...REINDEX_FLAGS,
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

/** The migration under way in the store, read without migrating or writing anything. */
function progressOf(data: string): MigrationProgress | null {
  const store = HistoryStore.open({ path: join(data, "history.db"), root: data, readOnly: true });
  try {
    return migrationProgress(store);
  } finally {
    store.close();
  }
}

/** The migration's progress, or undefined while the store cannot be read (being created, busy). */
function progressNow(data: string): MigrationProgress | null | undefined {
  try {
    return progressOf(data);
  } catch {
    return undefined;
  }
}

/**
 * Kills `child` once its migration has moved past `target` (a share of the whole, 0–1), as the
 * store's committed progress says: the kill lands in the batch after that one, wherever the
 * machine's speed puts it. A migration that ends first, or a child that exits, is left alone.
 */
async function killPast(child: Deno.ChildProcess, data: string, target: number): Promise<void> {
  let exited = false;
  child.status.then(() => (exited = true));
  // No migration is under way until the child starts it (the first run), or after it ended.
  let started = false;
  while (!exited) {
    const progress = progressNow(data);
    if (progress === null && started) return;
    if (progress) started = true;
    if (progress && progress.share >= target) {
      child.kill("SIGKILL");
      return;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The state a kill left, to tell kill points apart. */
function stateOf(data: string): string | null {
  const store = HistoryStore.open({ path: join(data, "history.db"), root: data, readOnly: true });
  try {
    return store.getMeta<unknown>("batched_migration") === undefined
      ? null
      : JSON.stringify(store.getMeta<unknown>("batched_migration"));
  } finally {
    store.close();
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

/** Runs `count` jobs, `width` at a time, in order of their numbers (1…count). */
async function pool<T>(count: number, width: number, job: (n: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 1;
  const lane = async () => {
    while (next <= count) {
      const n = next++;
      results[n - 1] = await job(n);
    }
  };
  await Promise.all(Array.from({ length: width }, lane));
  return results;
}

Deno.test(`a migration of ${RECORDS} records killed at random points ends as an uninterrupted one, ${TRIALS} times`, async () => {
  const world = await oldStoreWorld(RECORDS);
  try {
    const reference = join(world.dir, "data-reference");
    cpSync(world.data, reference, { recursive: true });

    const whole = await runCli("reindex", ["--quiet"], {
      ...world.vars,
      LOGBOOK_DATA_DIR: reference,
    });
    assert.equal(whole.code, 0, whole.stderr);
    assert.equal(stateOf(reference), null);
    const expected = hashes(reference, world.dir);
    assert.deepEqual(expected.tables, ["fts"]);
    await removeDir(reference);

    /**
     * One trial: a copy of the old store, killed `kills` times while its migration moves (a
     * kill counts when the migration is still under way after it and has moved since the run
     * began), then run to the end and compared. A copy whose migration ended before a kill
     * landed is started again.
     */
    const trial = async (n: number): Promise<string[]> => {
      const random = seeded(RECORDS * 31 + n);
      const wanted = 1 + (n % 3);
      for (let attempt = 1; attempt <= 5; attempt++) {
        const data = join(world.dir, `data-${n}-${attempt}`);
        cpSync(world.data, data, { recursive: true });
        const vars = { ...world.vars, LOGBOOK_DATA_DIR: data };
        try {
          const kills: string[] = [];
          for (let runs = 0; kills.length < wanted && runs < 40; runs++) {
            const before = stateOf(data);
            const done = progressOf(data)?.share ?? 0;
            const child = startReindex(vars);
            // A point in what is left of the migration, the same for the same trial and run.
            const target = done + (1 - done) * (0.01 + random() * 0.89);
            const [status, stderr] = await Promise.all([
              child.status,
              new Response(child.stderr).text(),
              killPast(child, data, target),
            ]);
            if (status.signal !== "SIGKILL") {
              assert.equal(status.code, 0, `an unkilled run succeeds: ${stderr}`);
              break;
            }
            const after = stateOf(data);
            // Killed once the migration was over: it ended with the kills it had.
            if (after === null) break;
            if (after !== before) kills.push(after);
          }
          if (!kills.length) continue;
          const last = await runCli("reindex", ["--quiet"], vars);
          assert.equal(last.code, 0, last.stderr);
          assert.equal(stateOf(data), null);
          assert.deepEqual(hashes(data, world.dir), expected, `trial ${n}`);
          return kills;
        } finally {
          await removeDir(data);
        }
      }
      throw new Error(`trial ${n}: the migration kept ending before ${wanted} kills landed`);
    };
    const kills = (await pool(TRIALS, PARALLEL, trial)).flat();
    assert.ok(kills.length >= TRIALS, `${kills.length} kills`);
    assert.equal(
      new Set(kills).size,
      kills.length,
      "each kill stopped a migration at its own point",
    );
    const phases = new Set(kills.map((k) => (JSON.parse(k) as { phase: string }).phase));
    assert.deepEqual(
      [...phases].sort(),
      ["copy", "verify"],
      "kills fell in the copy and in the verification",
    );
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
    // The share and the time left, always: the copy has run, so there is a rate.
    const left = String.raw`(\d+ ms|\d+\.\d s|\d+ min \d\d s) left`;
    const line = new RegExp(
      String.raw`migration: 0008_cjk_bigrams, copying, (\d+\.\d)% done, ${left} ` +
        String.raw`\(searches use the old index until it is verified\)`,
    );
    const json = await runCli("status", ["--json"], world.vars);
    const migration = JSON.parse(json.stdout).store.migration;
    assert.equal(migration.name, "0008_cjk_bigrams");
    assert.equal(migration.phase, "copy");
    assert.ok(migration.share > 0 && migration.share < 2 / 3, `share ${migration.share}`);
    assert.equal(typeof migration.leftMs, "number");
    assert.ok(migration.leftMs > 0);
    const percent = (migration.share * 100).toFixed(1);

    const reindexStatus = await runCli("reindex", ["--status"], world.vars);
    assert.equal(reindexStatus.code, 0, reindexStatus.stderr);
    assert.equal(line.exec(reindexStatus.stdout)?.[1], percent, reindexStatus.stdout);
    const status = await runCli("status", [], world.vars);
    assert.equal(line.exec(status.stdout)?.[1], percent, status.stdout);

    const { app } = appFor(world);
    const api = await (await request(app, "/api/status")).json();
    assert.equal(api.store.migration.phase, "copy");
    assert.equal(api.store.migration.share, migration.share);
    assert.equal(typeof api.store.migration.leftMs, "number");
    const page = await (await request(app, "/status")).text();
    assert.match(page, /Migrating the store \(0008_cjk_bigrams, copying\)/);
    const shown = String(Math.floor(migration.share * 1000) / 10);
    assert.match(page, new RegExp(`<progress id="migration-progress" max="100" value="${shown}">`));
    assert.match(page, new RegExp(`${shown.replace(".", "\\.")}% done, about ${left}`));
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex latches a migration that fails verification, and reindex --retry repairs it", async () => {
  const world = await oldStoreWorld(3000);
  try {
    // Copied whole, then an index entry replaced by as many other tokens.
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      const controller = new AbortController();
      await runBatchedMigration(store, cjkIndexStep(store, ADAPTERS, redactorFor(ctx)), {
        now: ctx.now,
        signal: controller.signal,
        onBatch: (p) => {
          if (p.phase === "verify") controller.abort();
        },
      });
      const row = store.db.prepare(
        "SELECT id FROM fts_next_docsize WHERE sz = ? ORDER BY id LIMIT 1",
      ).get(new Uint8Array([22])) as { id: number };
      store.db.prepare("DELETE FROM fts_next WHERE rowid = ?").run(row.id);
      store.db.prepare("INSERT INTO fts_next (rowid, text) VALUES (?, ?)")
        .run(row.id, Array(22).fill("zzqx").join(" "));
    } finally {
      store.close();
    }

    const failed = await runCli("reindex", ["--quiet"], world.vars);
    assert.equal(failed.code, 1, failed.stderr);
    assert.match(failed.stderr, /failed verification: the copy of rows \d+–\d+ .*differs/);
    assert.match(failed.stderr, /logbook reindex --retry/);

    const status = await runCli("status", [], world.vars);
    assert.match(status.stdout, /migration: 0008_cjk_bigrams, failed/);
    assert.match(status.stdout, /failure: .*failed verification.*run "logbook reindex --retry"/);

    // Latched: capture does not run, and searches answer from the old index meanwhile.
    const latched = await runCli("reindex", ["--quiet"], world.vars);
    assert.equal(latched.code, 1);
    assert.match(latched.stderr, /capture stopped after a failure/i);
    assert.match(latched.stderr, /logbook reindex --retry/);
    const old = await runCli("search", ["walrus", "--json"], world.vars);
    assert.equal(old.code, 0, old.stderr);
    const stillOld = await runCli("search", ["zzqx"], world.vars);
    assert.equal(stillOld.code, 1, "the damaged copy is not searched");
    const literal = await runCli("search", ["缓存策略"], world.vars);
    assert.match(literal.stderr, /note: .*until reindex upgrades it/);

    const retried = await runCli("reindex", ["--retry", "--quiet"], world.vars);
    assert.equal(retried.code, 0, retried.stderr);
    const after = JSON.parse((await runCli("status", ["--json"], world.vars)).stdout);
    assert.equal(after.store.migration, null);
    assert.equal((await runCli("search", ["zzqx"], world.vars)).code, 1);
    const cjk = await runCli("search", ["缓存策略", "--json"], world.vars);
    assert.equal(cjk.code, 0, cjk.stderr);
    assert.doesNotMatch(cjk.stderr, /note:/, "answered by the new index");
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex derives again a store captured before derivations were recorded, and says so", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex"] });
  addInvisible(world);
  try {
    await captureWorld(world);
    const sources = withStore(world, (store, ctx) => {
      makeStoreUnversioned(store, redactorFor(ctx));
      return (store.db.prepare("SELECT count(*) AS n FROM sources").get() as { n: number }).n;
    });
    const before = await runCli("search", ["password", "--json"], world.vars);
    assert.equal(before.code, 1, "no match: the old index holds pass\u200bword as two words");

    const run = await runCli("reindex", [], world.vars);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      new RegExp(
        `^Derived ${sources} stored sources again, as this build's adapters derive them\n`,
      ),
    );
    const after = await runCli("search", ["password", "--json"], world.vars);
    const hits = after.stdout.trim().split("\n").map((line) => JSON.parse(line));
    assert.deepEqual(
      hits.map((h) => h.conversation),
      [INVISIBLE.id],
      "as a fresh capture finds it",
    );

    const again = await runCli("reindex", ["--json"], world.vars);
    assert.equal(JSON.parse(again.stdout).rederived, 0, "nothing left to derive again");
  } finally {
    await world.cleanup();
  }
});
