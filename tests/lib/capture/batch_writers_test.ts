// Batches written by a worker beside the capture: the store ends up exactly as when written
// inline, a batch that cannot be written stops everything after it, stage markers pair up, and
// a worker that cannot start leaves capture writing inline.

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { DatabaseSync } from "node:sqlite";
import { loadContext } from "../../../lib/context.ts";
import { HistoryStore, StoreLockedError } from "../../../lib/store/db.ts";
import type { Limits } from "../../../lib/capture/limits.ts";
import { decodeRaw } from "../../../lib/store/raw.ts";
import { type BatchWriter, WorkerBatchWriter } from "../../../lib/capture/batch_writers.ts";
import type { BatchPayload, BatchRecord } from "../../../lib/capture/batch_transaction.ts";
import { createStageMarkers, type Operation } from "../../../lib/stage_markers.ts";
import { makeWorld, removeDir, runPass, tempDir, type World } from "../../_helpers.ts";

const NOW = 1_767_000_000_000;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Small batches, so every fixture set makes many of them. */
const SMALL: Partial<Limits> = { textBudget: 2048, rawBudget: 16 * 1024, maxLine: 4096 };
const WORKER: Partial<Limits> = { ...SMALL, workerFrom: 0 };
const INLINE: Partial<Limits> = { ...SMALL, workerFrom: Infinity };

/** Everything capture writes, with the world's directory replaced so two worlds compare. */
function dump(world: World): Record<string, unknown[]> {
  const db = new DatabaseSync(join(world.data, "history.db"), { readOnly: true });
  try {
    // FTS5's tombstone pages (of records that left the index) have rowids past 2^53.
    const rows = (sql: string, bigInts = false) => {
      const statement = db.prepare(sql);
      statement.setReadBigInts(bigInts);
      return statement.all().map((row) =>
        Object.fromEntries(
          Object.entries(row).map((
            [k, v],
          ) => [k, typeof v === "string" ? v.replaceAll(world.dir, "<world>") : v]),
        )
      );
    };
    return {
      records: rows("SELECT * FROM records ORDER BY id"),
      conversations: rows("SELECT * FROM conversations ORDER BY id"),
      // dev, ino, mtimes and the OpenCode fingerprint and JSON-storage cursor describe each
      // world's own copy of the files.
      sources: rows(
        `SELECT id, agent, locator, format, generation, cursor, state, head_hash, size,
           error, gone, first_seen, last_read FROM sources ORDER BY id`,
      ),
      recordKeys: rows("SELECT * FROM record_keys ORDER BY source_id, key"),
      drift: rows("SELECT * FROM drift ORDER BY source_id, generation, version, category, detail"),
      // The index itself, segment by segment: the same inserts in the same transactions.
      index: rows("SELECT * FROM fts_data ORDER BY id", true),
    };
  } finally {
    db.close();
  }
}

/** Asserts two tables hold the same rows, naming the first that differs (bytes as digests). */
function sameRows(table: string, actual: unknown[], expected: unknown[]): void {
  const shown = (row: unknown) =>
    JSON.stringify(
      row,
      (_k, v) =>
        v instanceof Uint8Array
          ? `<${v.length} bytes ${createHash("sha256").update(v).digest("hex").slice(0, 12)}>`
          : typeof v === "bigint"
          ? String(v)
          : v,
    );
  assert.equal(actual.length, expected.length, `${table}: row count`);
  for (let i = 0; i < expected.length; i++) {
    if (!isDeepStrictEqual(actual[i], expected[i])) {
      assert.fail(
        `${table} row ${i}:\n  got      ${shown(actual[i])}\n  expected ${shown(expected[i])}`,
      );
    }
  }
}

async function captureWith(
  world: World,
  limits: Partial<Limits>,
  extra: Parameters<typeof runPass>[2] = {},
) {
  const ctx = loadContext({ env: world.env });
  const store = HistoryStore.open({ path: join(world.data, "history.db"), root: world.data });
  try {
    return await runPass(store, ctx, { now: () => NOW, limits, ...extra });
  } finally {
    store.close();
  }
}

function markerEvents(path: string): { step: string; event: string; seq: number }[] {
  return readFileSync(path, "utf8").trim().split("\n").map((line) => JSON.parse(line));
}

function claudeLine(id: string, text: string): string {
  return JSON.stringify({
    type: "user",
    sessionId: "x1",
    uuid: id,
    timestamp: "2026-01-01T00:00:00Z",
    message: { role: "user", content: text },
  }) + "\n";
}

/** Extra transcripts: ordinary lines around one too long to parse in memory, and a short one. */
function writeExtra(world: World): { giant: string; short: string } {
  const dir = join(world.claude, "projects", "-tmp-extra");
  Deno.mkdirSync(dir, { recursive: true });
  const giant = join(dir, "a-giant.jsonl");
  const short = join(dir, "b-short.jsonl");
  let text = "";
  for (let i = 0; i < 3; i++) text += claudeLine(`g${i}`, `before the giant line ${i}`);
  text += claudeLine("g-big", `umberwick ${"shale ".repeat(3_000)} tallowmere`);
  for (let i = 3; i < 6; i++) text += claudeLine(`g${i}`, `after the giant line ${i}`);
  Deno.writeTextFileSync(giant, text);
  let lines = "";
  for (let i = 0; i < 5; i++) lines += claudeLine(`s${i}`, `a short transcript, line ${i}`);
  Deno.writeTextFileSync(short, lines);
  return { giant, short };
}

/**
 * A `captureEnabled` that, at its first call (or `atCall`), has another thread hold the store's write lock
 * for `ms`: the worker's batches wait, so the capture reads on with two in flight, and lookups
 * and writes of its own connection meet batches that are not committed yet.
 */
function holdWhenStarted(world: World, ms: number, atCall = 1): () => boolean {
  let calls = 0;
  return () => {
    if (++calls !== atCall) return true;
    const taken = new Int32Array(new SharedArrayBuffer(4));
    const holder = new Worker(new URL("./_lock_holder.ts", import.meta.url).href, {
      type: "module",
    });
    holder.postMessage({ path: join(world.data, "history.db"), ms, taken });
    // Synchronously, as capture calls this: wait until the other thread has the lock.
    if (Atomics.wait(taken, 0, 0, 10_000) === "timed-out") {
      throw new Error("The lock holder never took the lock");
    }
    return true;
  };
}

Deno.test("a capture written by a worker stores exactly what one written inline stores", async () => {
  const inline = await makeWorld({ fixtures: ["claude", "codex", "opencode"] });
  const worker = await makeWorld({ fixtures: ["claude", "codex", "opencode"] });
  try {
    writeExtra(inline);
    const extra = writeExtra(worker);
    const markersPath = join(worker.dir, "markers.log");
    const markers = createStageMarkers({ path: markersPath, root: worker.dir });
    const a = await captureWith(inline, INLINE);
    const b = await captureWith(worker, WORKER, {
      markers: markers.operation("capture"),
      captureEnabled: holdWhenStarted(worker, 300),
    });
    assert.equal(a.writer, "inline");
    assert.equal(b.writer, "worker");
    assert.ok(a.records > 100, `${a.records} records`);
    for (const key of ["records", "conversations", "bytes", "changed"] as const) {
      assert.equal(b[key], a[key], key);
    }
    assert.deepEqual(b.drift, a.drift);
    assert.deepEqual(
      b.empty.map((p) => p.replace(worker.dir, "")),
      a.empty.map((p) => p.replace(inline.dir, "")),
    );
    const same = () => {
      const expected = dump(inline);
      const actual = dump(worker);
      for (const table of Object.keys(expected)) sameRows(table, actual[table]!, expected[table]!);
    };
    same();

    // Every batch handed to the worker is a capture.batch step with an index.write inside,
    // each closed once the worker reported the commit.
    const events = markerEvents(markersPath);
    const count = (step: string, event: string) =>
      events.filter((e) => e.step === step && e.event === event).length;
    assert.ok(count("capture.batch", "start") > 10, `${count("capture.batch", "start")} batches`);
    for (const step of ["capture.batch", "index.write"]) {
      assert.equal(count(step, "finish"), count(step, "start"), step);
      assert.equal(count(step, "fail"), 0, step);
    }
    assert.equal(count("index.write", "start"), count("capture.batch", "start"));

    // Appends, and a transcript rewritten shorter (a new generation, written by the capture's
    // own connection while batches of the files before it are in flight).
    for (const world of [inline, worker]) {
      const { giant, short } = world === worker ? extra : writeExtraPaths(world);
      let more = "";
      for (let i = 10; i < 250; i++) more += claudeLine(`g${i}`, `appended afterwards ${i}`);
      Deno.writeTextFileSync(giant, more, { append: true });
      Deno.writeTextFileSync(short, claudeLine("s9", "rewritten"));
    }
    const c = await captureWith(inline, INLINE);
    const d = await captureWith(worker, WORKER, { captureEnabled: holdWhenStarted(worker, 300) });
    assert.equal(d.writer, "worker");
    assert.deepEqual(d.generations.map((g) => g.reason), c.generations.map((g) => g.reason));
    assert.equal(d.generations.length, 1);
    same();

    // Captured again, nothing is new: the worker left every cursor where inline capture does.
    const again = await captureWith(worker, WORKER);
    assert.equal(again.records, 0);
    assert.equal(again.changed, 0);
  } finally {
    await inline.cleanup();
    await worker.cleanup();
  }
});

function writeExtraPaths(world: World): { giant: string; short: string } {
  const dir = join(world.claude, "projects", "-tmp-extra");
  return { giant: join(dir, "a-giant.jsonl"), short: join(dir, "b-short.jsonl") };
}

/** The real worker, with every batch held back 15 ms before it is handed over. */
async function slow(store: HistoryStore, op: Operation): Promise<BatchWriter | null> {
  const real = await WorkerBatchWriter.start(store, op);
  if (!real) return null;
  let queue: Promise<unknown> = Promise.resolve();
  return {
    write: (batch) => {
      const written = queue.then(() => delay(15)).then(() => real.write(batch));
      queue = written.catch(() => {});
      return written;
    },
    close: async () => {
      await queue;
      await real.close();
    },
  };
}

Deno.test("with batches in flight, lookups and the capture's own writes wait their turn", async () => {
  // With a slow worker, capture reads on with batches in flight, so OpenCode parts look up
  // messages that are not committed yet, and a giant line (streamed on the capture's own
  // connection) follows ordinary lines of its file that are still in flight.
  const inline = await makeWorld({ fixtures: ["claude", "codex", "opencode"] });
  const worker = await makeWorld({ fixtures: ["claude", "codex", "opencode"] });
  try {
    writeExtra(inline);
    writeExtra(worker);
    const a = await captureWith(inline, INLINE);
    const b = await captureWith(worker, WORKER, { startWriter: slow });
    assert.equal(b.writer, "worker");
    assert.equal(b.records, a.records);
    const expected = dump(inline);
    const actual = dump(worker);
    for (const table of Object.keys(expected)) sameRows(table, actual[table]!, expected[table]!);
    assert.equal((await captureWith(worker, WORKER, { startWriter: slow })).records, 0);
  } finally {
    await inline.cleanup();
    await worker.cleanup();
  }
});

Deno.test("a batch the worker cannot write fails the capture, and no batch after it lands", async () => {
  const reference = await makeWorld({ fixtures: ["claude", "codex"] });
  const world = await makeWorld({ fixtures: ["claude", "codex"] });
  try {
    // Every line parsed in memory: no streamed line writes on the capture's own connection.
    const inMemory = { maxLine: 8 * 1024 * 1024 };
    await captureWith(reference, { ...INLINE, ...inMemory });
    const dbPath = join(world.data, "history.db");
    const markersPath = join(world.dir, "markers.log");
    const markers = createStageMarkers({ path: markersPath, root: world.dir });
    // Another writer takes the store a few batches in and holds it for 150 ms: the worker's
    // next batch gives up on the lock after 100 ms; the one behind it would get the lock at
    // 150 ms, and must be refused instead.
    const hold = holdWhenStarted(world, 150, 6);
    let checks = 0;
    const ctx = loadContext({ env: world.env });
    const store = HistoryStore.open({ path: dbPath, root: world.data, busyTimeoutMs: 100 });
    try {
      await assert.rejects(
        () =>
          runPass(store, ctx, {
            now: () => NOW,
            limits: { ...WORKER, ...inMemory },
            markers: markers.operation("capture"),
            captureEnabled: () => hold() && ++checks > 0,
          }),
        StoreLockedError,
      );
    } finally {
      store.close();
    }
    assert.ok(checks >= 6, `the capture stopped after ${checks} batch checks`);
    const events = markerEvents(markersPath);
    assert.ok(events.some((e) => e.step === "capture.batch" && e.event === "fail"));

    // What landed is whole: every source's records are exactly its file's bytes up to its cursor.
    const db = new DatabaseSync(dbPath, { readOnly: true });
    try {
      const sources = db.prepare("SELECT id, locator, cursor FROM sources").all() as {
        id: number;
        locator: string;
        cursor: number;
      }[];
      const chunks = db.prepare(
        "SELECT offset, raw, flags FROM records WHERE source_id = ? ORDER BY offset",
      );
      let landed = 0;
      for (const source of sources) {
        if (!source.locator.endsWith(".jsonl")) continue; // compressed rollouts: stream offsets
        const rows = chunks.all(source.id) as { offset: number; raw: Uint8Array; flags: number }[];
        const bytes = rows.map((r) => decodeRaw(r));
        const length = bytes.reduce((n, b) => n + b.length, 0);
        assert.equal(length, source.cursor, source.locator);
        const file = readFileSync(source.locator).subarray(0, source.cursor);
        assert.deepEqual(
          new Uint8Array(Buffer.concat(bytes)),
          new Uint8Array(file),
          source.locator,
        );
        landed += rows.length;
      }
      const total = (dump(reference).records as unknown[]).length;
      assert.ok(landed < total, `${landed} of ${total} records landed before the failure`);
    } finally {
      db.close();
    }

    // The next capture takes up exactly where the last committed batch left off.
    await captureWith(world, { ...WORKER, ...inMemory });
    const expected = dump(reference);
    const actual = dump(world);
    for (const table of ["records", "conversations", "recordKeys", "drift"]) {
      assert.equal(actual[table]!.length, expected[table]!.length, table);
    }
    // Compared by digest: a failing deepEqual would try to diff every chunk's bytes.
    const digest = (rows: unknown[]) => {
      const hash = createHash("sha256");
      for (const row of rows as { source_id: number; offset: number; raw: Uint8Array }[]) {
        hash.update(`${row.source_id}:${row.offset}:`).update(row.raw);
      }
      return hash.digest("hex");
    };
    assert.equal(digest(actual.records!), digest(expected.records!));
  } finally {
    await reference.cleanup();
    await world.cleanup();
  }
});

Deno.test("a capture waiting for its worker copies the write-ahead log into the store meanwhile", async () => {
  const world = await makeWorld();
  try {
    const dir = join(world.claude, "projects", "-tmp-wal");
    Deno.mkdirSync(dir, { recursive: true });
    let lines = "";
    for (let i = 0; i < 4000; i++) lines += claudeLine(`w${i}`, `line ${i} of a long session`);
    Deno.writeTextFileSync(join(dir, "x1.jsonl"), lines);
    const path = join(world.data, "history.db");
    // The store's file as each batch is handed over: the worker's own checkpoints come at 256
    // MiB of WAL, so without the capture's the file keeps the size it had at the first batch.
    const sizes: number[] = [];
    const sampled = async (store: HistoryStore, op: Operation): Promise<BatchWriter | null> => {
      const writer = await slow(store, op);
      if (!writer) return null;
      return {
        write: (batch) => {
          sizes.push(Deno.statSync(path).size);
          return writer.write(batch);
        },
        close: () => writer.close(),
      };
    };
    const summary = await captureWith(world, WORKER, { startWriter: sampled });
    assert.equal(summary.writer, "worker");
    assert.equal(summary.records, 4000);
    assert.ok(sizes.length > 40, `${sizes.length} batches`);
    assert.ok(sizes.at(-1)! > sizes[0]!, `the store's file stayed at ${sizes[0]} bytes`);
    // What the WAL held is in the store, and nothing twice.
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      const n = db.prepare("SELECT count(*) AS n FROM records").get() as { n: number };
      assert.equal(n.n, 4000);
    } finally {
      db.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a worker starts only when a batch is due with enough left to read", async () => {
  const world = await makeWorld();
  try {
    const dir = join(world.claude, "projects", "-tmp-p");
    Deno.mkdirSync(dir, { recursive: true });
    const line = (id: string, text: string) =>
      JSON.stringify({
        type: "user",
        sessionId: "s1",
        uuid: id,
        timestamp: "2026-01-01T00:00:00Z",
        message: { role: "user", content: text },
      }) + "\n";
    // One line too long to parse in memory, streamed on the capture's own connection: however
    // many bytes it has, no batch is left for a worker.
    Deno.writeTextFileSync(join(dir, "s1.jsonl"), line("u0", "giant ".repeat(8000)));
    const limits = { ...SMALL, maxLine: 4096, workerFrom: 16 * 1024 };
    const streamed = await captureWith(world, limits);
    assert.equal(streamed.records, 1); // one streamed line, in one chunk
    assert.equal(streamed.writer, "inline");
    // Many ordinary lines, more than workerFrom of them: a worker writes.
    let many = "";
    for (let i = 1; many.length < 64 * 1024; i++) many += line(`u${i}`, `ordinary line ${i}`);
    Deno.writeTextFileSync(join(dir, "s1.jsonl"), many, { append: true });
    const appended = await captureWith(world, limits);
    assert.equal(appended.writer, "worker");
    assert.ok(appended.records > 100);
  } finally {
    await world.cleanup();
  }
});

Deno.test("after one batch fails, the worker refuses the batches handed over behind it", async () => {
  const dir = await tempDir();
  try {
    const store = HistoryStore.open({ path: join(dir, "history.db"), root: dir });
    try {
      const { id: sourceId } = store.db.prepare(
        `INSERT INTO sources (agent, locator, format, generation, cursor, first_seen)
         VALUES ('claude', '/x.jsonl', 'jsonl', 1, 0, 0) RETURNING id`,
      ).get() as { id: number };
      const record = (offset: number): BatchRecord => ({
        existingId: null,
        sourceId,
        generation: 1,
        offset,
        seq: 0,
        rawAt: 0,
        rawLength: 3,
        length: null,
        conversationKey: null,
        ts: null,
        kind: "meta",
        role: null,
        messageId: null,
        partId: null,
        flags: 0,
        completes: false,
        text: "",
        drift: null,
        usage: null,
      });
      const batch = (records: BatchRecord[], cursor: number): BatchPayload => ({
        records,
        raw: new TextEncoder().encode("{}\n"),
        conversations: [],
        supersede: [],
        keys: [],
        mode: "add",
        tombstones: [],
        drop: [],
        sources: [{
          sourceId,
          cursor,
          state: null,
          cursorKey: null,
          seen: null,
          fingerprint: null,
          headHash: null,
        }],
        progress: null,
        now: NOW,
      });
      const op = createStageMarkers({ enabled: false }).operation("capture");
      const writer = await WorkerBatchWriter.start(store, op);
      assert.ok(writer);
      // Both are handed over before either settles, as capture does. The first breaks the
      // records' identity (the same offset twice); the second alone would be valid.
      const first = writer.write(batch([record(0), record(0)], 6));
      const second = writer.write(batch([record(6)], 9));
      second.catch(() => {});
      await assert.rejects(first, /UNIQUE constraint failed/);
      await assert.rejects(second, /UNIQUE constraint failed/);
      await writer.close();
      const count = store.db.prepare("SELECT count(*) AS n FROM records").get() as { n: number };
      assert.equal(count.n, 0);
      const source = store.db.prepare("SELECT cursor FROM sources WHERE id = ?").get(sourceId) as {
        cursor: number;
      };
      assert.equal(source.cursor, 0);
    } finally {
      store.close();
    }
  } finally {
    await removeDir(dir);
  }
});

Deno.test("WorkerBatchWriter.start() gives null when the worker cannot open the store", async () => {
  const dir = await tempDir();
  try {
    const store = HistoryStore.open({ path: join(dir, "history.db"), root: dir });
    try {
      // A store whose path lies under a regular file: the worker's connection cannot open it.
      Deno.writeTextFileSync(join(dir, "file"), "");
      const elsewhere = Object.create(store, { path: { value: join(dir, "file", "history.db") } });
      const op = createStageMarkers({ enabled: false }).operation("capture");
      assert.equal(await WorkerBatchWriter.start(elsewhere, op), null);
      const writer = await WorkerBatchWriter.start(store, op);
      assert.ok(writer, "a worker starts for the real store");
      await writer.close();
    } finally {
      store.close();
    }
  } finally {
    await removeDir(dir);
  }
});
