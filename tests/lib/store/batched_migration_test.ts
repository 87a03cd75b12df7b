// Batched migrations on a store the build before 0008 wrote: bounded batches, a cursor that
// survives a stop, searches that answer from the old index meanwhile, a corrupted batch that is
// detected, latched and kept, and `reindex --retry` that repairs it.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { runCapture } from "../../../lib/capture/run.ts";
import { LATCH_KEY } from "../../../lib/store/latch.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import {
  BATCH_BYTES,
  BATCH_ROWS,
  MIGRATION_STATE_KEY,
  migrationProgress,
  migrationState,
  RowHash,
  runBatchedMigration,
} from "../../../lib/store/batched_migration.ts";
import { INDEX_UPGRADE_KEY } from "../../../lib/store/cjk.ts";
import { cjkIndexStep } from "../../../lib/store/cjk_index.ts";
import { MigrationError } from "../../../lib/store/db.ts";
import { BlockDigests, DIGEST_VERSION } from "../../../lib/store/migration_digest.ts";
import type { HistoryStore } from "../../../lib/store/db.ts";
import { search } from "../../../lib/store/search.ts";
import { storeStatus } from "../../../lib/store/status.ts";
import { oldStoreWorld } from "../../_old_store.ts";
import { withStore, type World } from "../../_helpers.ts";
import { forget } from "../../../lib/store/forget.ts";
import { GarbageRelease } from "../../../lib/garbage.ts";

/**
 * Ranking thousands of matches is no test of the search budget, which a busy machine could
 * spend: these searches check what the index holds, so the budget is set out of the way.
 */
const UNHURRIED = { budgetMs: 600_000 };

const RECORDS = 3000;

function open(world: World) {
  const ctx = loadContext({ env: world.env });
  return { ctx, store: openStore(ctx), redact: redactorFor(ctx) };
}

/** Runs the 0008 migration until `stop` says so after a batch (or to the end). */
async function migrate(
  world: World,
  stop: (store: HistoryStore) => boolean = () => false,
  timer?: () => number,
  asideStepMs?: number,
): Promise<boolean> {
  const { ctx, store, redact } = open(world);
  try {
    const controller = new AbortController();
    return await runBatchedMigration(store, cjkIndexStep(store, ADAPTERS, redact), {
      now: ctx.now,
      ...(timer ? { timer } : {}),
      ...(asideStepMs !== undefined ? { asideStepMs } : {}),
      signal: controller.signal,
      onBatch: () => {
        if (stop(store)) controller.abort();
      },
    });
  } finally {
    store.close();
  }
}

function tables(store: HistoryStore): string[] {
  return (store.db.prepare(
    "SELECT name FROM sqlite_schema WHERE name IN ('fts', 'fts_next') ORDER BY name",
  ).all() as { name: string }[]).map((r) => r.name);
}

/** True while the new index is scanned part-way: its scan has begun and not ended. */
function scanning(store: HistoryStore): boolean {
  const cursor = migrationState(store)?.digests?.cursor;
  return cursor !== undefined && cursor !== null && cursor !== "";
}

/**
 * Migrates until its scan of the new index is part-way, on a clock that jumps a step's time at
 * every look: each scan step reads one piece.
 */
async function stopWhileScanning(world: World): Promise<void> {
  assert.equal(await migrate(world, (store) => migrationState(store)?.phase === "verify"), false);
  let tick = 0;
  assert.equal(await migrate(world, scanning, () => (tick += 60)), false);
}

/** Runs the migration to its end; true when it read the batches again (its verification anew). */
async function verifiesAgain(world: World): Promise<boolean> {
  let again = false;
  const noting = (store: HistoryStore) => {
    const state = migrationState(store);
    if (state && state.verified < state.batches) again = true;
    return false;
  };
  assert.equal(await migrate(world, noting), true);
  return again;
}

/** The migration switched over, nothing latched, and CJK words found in the new index. */
function assertSwitchedOver(world: World): void {
  withStore(world, (store, ctx) => {
    assert.equal(store.getMeta(LATCH_KEY), undefined);
    assert.equal(migrationState(store), null);
    assert.deepEqual(tables(store), ["fts"]);
    const cjk = search(store, ADAPTERS, redactorFor(ctx), { query: "缓存策略", limit: 5 });
    assert.equal(cjk.mode, "fts");
    assert.ok(cjk.hits.length > 0);
  });
}

Deno.test("a batched migration copies in bounded batches, resumes after a stop, and switches over", async (t) => {
  const world = await oldStoreWorld(RECORDS);
  try {
    await t.step("opening the store marks the index for the migration", () => {
      const { store } = open(world);
      try {
        assert.deepEqual(store.getMeta(INDEX_UPGRADE_KEY), { reason: "cjk_bigrams" });
        assert.deepEqual(tables(store), ["fts"]);
      } finally {
        store.close();
      }
    });
    await t.step("stopped after a few batches, its cursor is in the store", async () => {
      let batches = 0;
      assert.equal(await migrate(world, () => ++batches >= 5), false);
      const { store } = open(world);
      try {
        const state = migrationState(store)!;
        assert.equal(state.phase, "copy");
        assert.equal(state.batches, 5);
        assert.ok(state.cursor > 0 && state.cursor < RECORDS);
        assert.deepEqual(tables(store), ["fts", "fts_next"]);
        const sizes = store.db.prepare(
          "SELECT rows, last_id - first_id + 1 AS span FROM migration_batches ORDER BY batch",
        ).all() as { rows: number; span: number }[];
        assert.equal(sizes.length, 5);
        for (const { rows, span } of sizes) {
          assert.ok(rows >= 1 && rows <= BATCH_ROWS, `batch of ${rows} rows`);
          assert.equal(span, rows, "batches cover the ids without gaps");
        }
        const progress = migrationProgress(store)!;
        assert.ok(progress.share > 0 && progress.share < 2 / 3);
      } finally {
        store.close();
      }
    });
    await t.step("meanwhile searches answer from the old index", () => {
      const { store, redact } = open(world);
      try {
        const words = search(store, ADAPTERS, redact, {
          query: "walrus",
          limit: 10_000,
          ...UNHURRIED,
        });
        assert.equal(words.mode, "fts");
        assert.ok(words.hits.length > RECORDS / 4, `${words.hits.length} hits`);
        const cjk = search(store, ADAPTERS, redact, {
          query: "缓存策略",
          limit: 10_000,
          ...UNHURRIED,
        });
        assert.equal(cjk.mode, "literal");
        assert.match(cjk.note ?? "", /until reindex upgrades it/);
        assert.ok(cjk.hits.length > 0);
        const status = storeStatus(store);
        assert.equal(status.migration?.phase, "copy");
      } finally {
        store.close();
      }
    });
    await t.step("resumed, it verifies and switches over", async () => {
      assert.equal(await migrate(world), true);
      const { store, redact } = open(world);
      try {
        assert.equal(migrationState(store), null);
        assert.equal(store.getMeta(INDEX_UPGRADE_KEY), undefined);
        assert.deepEqual(tables(store), ["fts"]);
        assert.equal(
          (store.db.prepare("SELECT count(*) AS n FROM migration_batches").get() as { n: number })
            .n,
          0,
        );
        const cjk = search(store, ADAPTERS, redact, {
          query: "缓存策略",
          limit: 10_000,
          ...UNHURRIED,
        });
        assert.equal(cjk.mode, "fts");
        assert.equal(cjk.hits.length, RECORDS / 5 / 3 + (RECORDS / 5 % 3 > 0 ? 1 : 0));
      } finally {
        store.close();
      }
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a corrupted batch is detected, latched and both copies kept until reindex --retry", async (t) => {
  const world = await oldStoreWorld(RECORDS);
  try {
    // Copied whole, stopped before verifying.
    assert.equal(await migrate(world, (store) => migrationState(store)?.phase === "verify"), false);
    await t.step("a record taken out of the new index fails verification", async () => {
      const { store } = open(world);
      try {
        const victim = store.db.prepare(
          "SELECT id FROM fts_next_docsize ORDER BY id LIMIT 1 OFFSET 700",
        )
          .get() as { id: number };
        store.db.prepare("DELETE FROM fts_next WHERE rowid = ?").run(victim.id);
      } finally {
        store.close();
      }
      await assert.rejects(() => migrate(world), MigrationError);
    });
    await t.step(
      "the failure is latched; both copies are kept; searches use the old one",
      async () => {
        const { ctx, store, redact } = open(world);
        try {
          assert.deepEqual(tables(store), ["fts", "fts_next"]);
          const state = migrationState(store)!;
          assert.equal(state.phase, "failed");
          assert.match(state.failure ?? "", /differs/);
          assert.ok(store.getMeta(LATCH_KEY));
          const result = await runCapture({ ctx, store, redact });
          assert.equal(result.status, "latched");
          assert.equal(search(store, ADAPTERS, redact, { query: "walrus", limit: 5 }).mode, "fts");
          assert.equal(storeStatus(store).migration?.phase, "failed");
        } finally {
          store.close();
        }
        // Nothing goes on while it is latched (a watcher runs the migration this way).
        await assert.rejects(() => migrate(world), MigrationError);
        const again = open(world);
        try {
          assert.equal(migrationState(again.store)?.phase, "failed");
        } finally {
          again.store.close();
        }
      },
    );
    await t.step("reindex --retry copies the failing batch again and switches over", async () => {
      const { ctx, store, redact } = open(world);
      try {
        const result = await runCapture({ ctx, store, redact, retry: true });
        assert.equal(result.status, "captured");
        assert.equal(migrationState(store), null);
        assert.deepEqual(tables(store), ["fts"]);
        const cjk = search(store, ADAPTERS, redact, { query: "キャッシュ OR 読み込み", limit: 5 });
        assert.equal(cjk.mode, "fts");
      } finally {
        store.close();
      }
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("an index entry swapped for as many other tokens fails verification, latched until a retry", async () => {
  const world = await oldStoreWorld(RECORDS);
  try {
    assert.equal(await migrate(world, (store) => migrationState(store)?.phase === "verify"), false);
    // A record with 22 tokens (a Chinese sentence's bigrams and its words), its entry in the new
    // index replaced by 22 copies of "zzqx": the token count, all that the copy's hashes saw,
    // stays the same.
    const victim = withStore(world, (store) => {
      const row = store.db.prepare(
        "SELECT id, sz FROM fts_next_docsize WHERE sz = ? ORDER BY id LIMIT 1 OFFSET 10",
      ).get(new Uint8Array([22])) as { id: number; sz: Uint8Array };
      assert.ok(row, "a record of 22 tokens");
      store.db.prepare("DELETE FROM fts_next WHERE rowid = ?").run(row.id);
      store.db.prepare("INSERT INTO fts_next (rowid, text) VALUES (?, ?)")
        .run(row.id, Array(22).fill("zzqx").join(" "));
      const after = store.db.prepare("SELECT sz FROM fts_next_docsize WHERE id = ?")
        .get(row.id) as { sz: Uint8Array };
      assert.deepEqual(after.sz, row.sz, "the same token count");
      return row.id;
    });
    await assert.rejects(() => migrate(world), MigrationError);
    withStore(world, (store) => {
      const state = migrationState(store)!;
      assert.equal(state.phase, "failed");
      const [, first, last] = /rows (\d+)–(\d+)/.exec(state.failure ?? "")!.map(Number);
      assert.ok(first! <= victim && victim <= last!, `${state.failure} names record ${victim}`);
      assert.match(state.failure ?? "", /differs from its source/);
      assert.ok(store.getMeta(LATCH_KEY));
      assert.deepEqual(tables(store), ["fts", "fts_next"]);
    });
    const { ctx, store, redact } = open(world);
    try {
      assert.equal((await runCapture({ ctx, store, redact })).status, "latched");
      const result = await runCapture({ ctx, store, redact, retry: true });
      assert.equal(result.status, "captured");
      assert.equal(migrationState(store), null);
      assert.deepEqual(tables(store), ["fts"]);
      assert.equal(search(store, ADAPTERS, redact, { query: "zzqx", limit: 5 }).hits.length, 0);
      const found = search(store, ADAPTERS, redact, {
        query: "缓存策略",
        limit: 10_000,
        ...UNHURRIED,
      });
      assert.equal(found.mode, "fts");
      assert.ok(found.hits.some((h) => h.record === victim), "the record is found by its text");
    } finally {
      store.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a batch ends at the first row that brings it to 512 KiB, before its 32 rows", async () => {
  // Messages of about 60 KiB of letters (which compress to about half): a batch holds fewer
  // than 32 of them.
  let seed = 7;
  const next = () => {
    // mulberry32: letters that zstd cannot squeeze much.
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = Math.imul(seed ^ (seed >>> 15), seed | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const text = (i: number) => {
    const words: string[] = [`message${i}`];
    for (let n = 0; n < 60 * 1024;) {
      const word = Array.from(
        { length: 3 + Math.floor(next() * 8) },
        () => String.fromCharCode(97 + Math.floor(next() * 26)),
      ).join("");
      words.push(word);
      n += word.length + 1;
    }
    return words.join(" ");
  };
  const world = await oldStoreWorld(48, text);
  try {
    const { ctx, store, redact } = open(world);
    try {
      const controller = new AbortController();
      // A clock that never moves: only the rows and the bytes end a batch.
      const done = await runBatchedMigration(store, cjkIndexStep(store, ADAPTERS, redact), {
        now: ctx.now,
        timer: () => 0,
        signal: controller.signal,
        onBatch: (p) => {
          if (p.phase === "verify") controller.abort();
        },
      });
      assert.equal(done, false);
      const batches = store.db.prepare(
        `SELECT b.batch, b.rows,
           (SELECT sum(CASE WHEN flags & 1 THEN length(raw) ELSE 0 END) FROM records
            WHERE id BETWEEN b.first_id AND b.last_id) AS bytes,
           (SELECT CASE WHEN flags & 1 THEN length(raw) ELSE 0 END FROM records
            WHERE id = b.last_id) AS lastBytes
         FROM migration_batches b ORDER BY b.batch`,
      ).all() as { batch: number; rows: number; bytes: number; lastBytes: number }[];
      assert.ok(batches.length >= 3, `${batches.length} batches`);
      for (const b of batches.slice(0, -1)) {
        assert.ok(b.rows <= BATCH_ROWS);
        assert.ok(
          b.rows === BATCH_ROWS || b.bytes >= BATCH_BYTES,
          `batch ${b.batch} (${b.rows} rows, ${b.bytes} B) ended before a bound`,
        );
        assert.ok(b.bytes - b.lastBytes < BATCH_BYTES, `batch ${b.batch} went on past 512 KiB`);
      }
      const byBytes = batches.filter((b) => b.rows < BATCH_ROWS && b.bytes >= BATCH_BYTES);
      assert.ok(byBytes.length >= 2, "batches ended by their bytes");
    } finally {
      store.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a migration collects the garbage each batch it copies or reads again leaves", async () => {
  const world = await oldStoreWorld(RECORDS);
  try {
    const { ctx, store, redact } = open(world);
    try {
      const collected = { copy: 0, verify: 0 };
      let batches = 0;
      // Every byte is enough: a collection after each batch copied, and each step reading again
      // (besides the one that gives back as the reading begins).
      const garbage = new GarbageRelease(1, () => {
        const state = migrationState(store)!;
        collected[state.phase === "copy" ? "copy" : "verify"]++;
      }, () => 0);
      const done = await runBatchedMigration(store, cjkIndexStep(store, ADAPTERS, redact), {
        now: ctx.now,
        garbage,
        onBatch: () => batches = migrationState(store)?.batches ?? batches,
      });
      assert.equal(done, true);
      assert.ok(batches > 10, `${batches} batches`);
      assert.equal(collected.copy, batches);
      assert.ok(collected.verify >= 2, `${collected.verify} collections while verifying`);
    } finally {
      store.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("source rows changed after their copy are copied again: a forget meanwhile", async () => {
  const world = await oldStoreWorld(2000);
  try {
    assert.equal(await migrate(world, (store) => migrationState(store)?.phase === "verify"), false);
    const session = "claude:0b5e0000-0000-4000-8000-000000000000";
    const forgotten = withStore(world, (store, ctx) => {
      const ids = (store.db.prepare(
        `SELECT r.id FROM records r JOIN conversations c ON c.id = r.conversation_id
         WHERE c.key = ?`,
      ).all(session) as { id: number }[]).map((r) => r.id);
      forget(store, { ids: [session] }, { redact: redactorFor(ctx) });
      return ids;
    });
    assert.ok(forgotten.length > 100);
    assert.equal(await migrate(world), true);
    withStore(world, (store, ctx) => {
      const left = store.db.prepare(
        `SELECT count(*) AS n FROM fts_docsize WHERE id BETWEEN ? AND ?`,
      ).get(Math.min(...forgotten), Math.max(...forgotten)) as { n: number };
      assert.equal(left.n, 0, "nothing forgotten is in the new index");
      const hits = search(store, ADAPTERS, redactorFor(ctx), { query: "number 0", limit: 5 });
      assert.ok(hits.hits.every((h) => h.conversation !== session));
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a forget while the new index is scanned makes the verification start again, not fail", async () => {
  const world = await oldStoreWorld(RECORDS);
  try {
    await stopWhileScanning(world);
    const session = "claude:0b5e0000-0000-4000-8000-000000000001";
    withStore(world, (store, ctx) => {
      assert.ok(scanning(store), "stopped part-way through the scan");
      forget(store, { ids: [session] }, { redact: redactorFor(ctx) });
    });
    assert.ok(await verifiesAgain(world), "the batches were read again");
    withStore(world, (store, ctx) => {
      assert.equal(store.getMeta(LATCH_KEY), undefined);
      const hits = search(store, ADAPTERS, redactorFor(ctx), {
        query: "number",
        limit: 10_000,
        ...UNHURRIED,
      });
      assert.ok(hits.hits.length > 0);
      assert.ok(hits.hits.every((h) => h.conversation !== session));
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("the scan a worker runs beside the reading is kept step by step and goes on after a stop", async () => {
  const world = await oldStoreWorld(RECORDS);
  try {
    assert.equal(await migrate(world, (store) => migrationState(store)?.phase === "verify"), false);
    // Each of the worker's steps one piece: the run stops once the first is kept.
    assert.equal(await migrate(world, scanning, undefined, 0), false);
    const kept = withStore(world, (store) => {
      const state = migrationState(store)!;
      assert.ok(scanning(store), "stopped part-way through the scan");
      const blocks = state.digests!.actual.length / 24;
      const scanned = new BlockDigests(blocks, state.digests!.actual).total();
      assert.ok(scanned > 0, "what the worker scanned is in the state");
      return { cursor: state.digests!.cursor!, scanned };
    });
    // Each step of the run that goes on is past where the first one stopped.
    const cursors: (string | null)[] = [];
    assert.equal(
      await migrate(
        world,
        (store) => {
          cursors.push(migrationState(store)?.digests?.cursor ?? null);
          return false;
        },
        undefined,
        0,
      ),
      true,
    );
    assert.ok(cursors.length > 1, `${cursors.length} steps`);
    for (const cursor of cursors) {
      assert.ok(cursor === null || cursor >= kept.cursor, `went back to ${JSON.stringify(cursor)}`);
    }
    assertSwitchedOver(world);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a verification an older build began, hashing its items otherwise, starts again", async () => {
  const world = await oldStoreWorld(RECORDS);
  try {
    await stopWhileScanning(world);
    withStore(world, (store) => {
      // Its sums so far as that build kept them: an item of its own in each, and no version.
      const state = migrationState(store)!;
      const { version, ...digests } = state.digests!;
      assert.equal(version, DIGEST_VERSION);
      const blocks = digests.expected.length / 24;
      const older = (hex: string, text: string) => {
        const sums = new BlockDigests(blocks, hex);
        for (let b = 0; b < blocks; b++) sums.add(b, 1, 0, text);
        return sums.toHex();
      };
      store.setMeta(MIGRATION_STATE_KEY, {
        ...state,
        digests: {
          ...digests,
          expected: older(digests.expected, "0:walrus"),
          actual: older(digests.actual, "walrus:0"),
        },
      });
    });
    assert.ok(await verifiesAgain(world), "the batches were read again");
    assertSwitchedOver(world);
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex --rebuild during a migration drops it and derives the index afresh", async () => {
  const world = await oldStoreWorld(1000);
  try {
    let batches = 0;
    assert.equal(await migrate(world, () => ++batches >= 3), false);
    const { ctx, store, redact } = open(world);
    try {
      const result = await runCapture({ ctx, store, redact, rebuild: true });
      assert.equal(result.status, "captured");
      assert.equal(migrationState(store), null);
      assert.equal(store.getMeta(INDEX_UPGRADE_KEY), undefined);
      assert.deepEqual(tables(store), ["fts"]);
      assert.equal(search(store, ADAPTERS, redact, { query: "缓存策略", limit: 5 }).mode, "fts");
    } finally {
      store.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("the old index is retired at the switch-over and dropped after it, its space given back", async () => {
  const world = await oldStoreWorld(RECORDS);
  try {
    assert.equal(await migrate(world), true);
    withStore(world, (store) => {
      const names = (store.db.prepare(
        "SELECT name FROM sqlite_schema WHERE name LIKE 'fts_retired%'",
      ).all() as { name: string }[]).map((r) => r.name);
      assert.deepEqual(names, [], "no retired table left");
      assert.equal(store.getMeta("retired_tables"), undefined);
      const free = store.db.prepare("PRAGMA freelist_count").get() as { freelist_count: number };
      assert.equal(free.freelist_count, 0, "its pages went back to the file system");
    });
    // A run killed between the switch-over and the drop: the next capture drops what is left.
    withStore(world, (store) => {
      store.db.exec("CREATE VIRTUAL TABLE fts_retired USING fts5(text)");
      store.db.exec("INSERT INTO fts_retired (text) SELECT 'left behind ' || id FROM records");
      store.setMeta("retired_tables", ["fts_retired"]);
    });
    const { ctx, store, redact } = open(world);
    try {
      const result = await runCapture({ ctx, store, redact });
      assert.equal(result.status, "captured");
      const left = store.db.prepare(
        "SELECT count(*) AS n FROM sqlite_schema WHERE name LIKE 'fts_retired%'",
      ).get() as { n: number };
      assert.equal(left.n, 0);
      assert.equal(store.getMeta("retired_tables"), undefined);
      const free = store.db.prepare("PRAGMA freelist_count").get() as { freelist_count: number };
      assert.equal(free.freelist_count, 0);
    } finally {
      store.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("RowHash tells typed, length-delimited values apart", () => {
  const hex = (h: RowHash) => Array.from(h.digest()).join(",");
  const a = hex(new RowHash().value("ab").value("c").endRow());
  const b = hex(new RowHash().value("a").value("bc").endRow());
  const c = hex(new RowHash().value(1).endRow());
  const d = hex(new RowHash().value("1").endRow());
  const e = hex(new RowHash().value(null).endRow());
  const f = hex(new RowHash().value(new Uint8Array(0)).endRow());
  const g = hex(new RowHash().value("a").endRow().value("b").endRow());
  const h = hex(new RowHash().value("a").value("b").endRow());
  assert.equal(new Set([a, b]).size, 2);
  assert.equal(new Set([c, d]).size, 2);
  assert.equal(new Set([e, f]).size, 2);
  assert.equal(new Set([g, h]).size, 2);
  assert.equal(
    hex(new RowHash().value(7).value("x").endRow()),
    hex(new RowHash().value(7).value("x").endRow()),
  );
});

Deno.test("RowHash hashes each value as its tag, its length in 8 bytes and its bytes", () => {
  // What the hash must be, built by hand: tag, little-endian 64-bit length or value, bytes.
  const expected = (parts: [number, bigint, Uint8Array][]) => {
    const hash = createHash("sha256");
    for (const [tag, n, bytes] of parts) {
      const head = new DataView(new ArrayBuffer(9));
      head.setUint8(0, tag);
      head.setBigUint64(1, n, true);
      hash.update(new Uint8Array(head.buffer));
      hash.update(bytes);
    }
    return Array.from(new Uint8Array(hash.digest())).join(",");
  };
  const hex = (h: RowHash) => Array.from(h.digest()).join(",");
  const int = (v: bigint): [number, bigint, Uint8Array] => {
    const bytes = new DataView(new ArrayBuffer(8));
    bytes.setBigInt64(0, v, true);
    return [1, 8n, new Uint8Array(bytes.buffer)];
  };
  const text = (v: string): [number, bigint, Uint8Array] => {
    const bytes = new TextEncoder().encode(v);
    return [3, BigInt(bytes.length), bytes];
  };
  const end: [number, bigint, Uint8Array] = [5, 0n, new Uint8Array(0)];
  // Integers as numbers or bigints, small, large and negative.
  for (const v of [0, 7, 2 ** 40 + 5, Number.MAX_SAFE_INTEGER, -3]) {
    assert.equal(hex(new RowHash().value(v).endRow()), expected([int(BigInt(v)), end]));
    assert.equal(hex(new RowHash().value(BigInt(v)).endRow()), expected([int(BigInt(v)), end]));
  }
  // Short text (encoded in place) and text too long for that, with letters of 1 to 4 bytes.
  const many = new RowHash();
  const parts: [number, bigint, Uint8Array][] = [];
  for (const v of ["", "walrus", "缓存策略", "é".repeat(6000), "😀".repeat(3000), "x"]) {
    many.value(v);
    parts.push(text(v));
  }
  // And enough rows to fill the buffer many times over.
  for (let i = 0; i < 3000; i++) {
    many.value(`term${i}`).value(i).endRow();
    parts.push(text(`term${i}`), int(BigInt(i)), end);
  }
  assert.equal(hex(many), expected(parts));
});
