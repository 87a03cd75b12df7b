// `reindex --rebuild` over a line too long to hold in memory: it derives exactly what capture
// derived, reading the line's chunks as it indexes them, and SQLite keeps no copy of the table.

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { StatementSync } from "node:sqlite";
import { discoverContext } from "../../../lib/capture/run.ts";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { projectOf } from "../../../lib/paths.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import type { HistoryStore } from "../../../lib/store/db.ts";
import { FLAG_INDEXED, FLAG_STREAMED } from "../../../lib/store/schema.ts";
import type { Limits } from "../../../lib/capture/limits.ts";
import { rebuildDerived } from "../../../lib/capture/rebuild.ts";
import { rng, writeClaudeCorpus } from "../../_corpus.ts";
import { corpusEnv, generateCorpus } from "../../../bench/corpus.ts";
import { envFrom } from "../../../lib/env.ts";
import { storeTotals } from "../../../lib/store/status.ts";
import {
  captureIo,
  captureWorld,
  childBaseEnv,
  makeWorld,
  ROOT,
  runPass,
  withStore,
} from "../../_helpers.ts";
import { forgetLeavingChildren } from "../../_leaked_children.ts";
import { forget } from "../../../lib/store/forget.ts";
import { main as reindex } from "../../../commands/reindex.ts";

/** Small chunks and a 1 MiB in-memory limit: a line of a few MiB already spans many pages. */
const LIMITS: Partial<Limits> = { chunkSize: 16 * 1024, maxLine: 1024 * 1024 };
const PAYLOAD = 24 * 1024 * 1024;

function line(sessionId: string, uuid: string, content: unknown): string {
  return JSON.stringify({
    type: "user",
    sessionId,
    uuid,
    cwd: "/home/dev/src/huge",
    timestamp: "2026-03-01T10:00:00.000Z",
    message: { role: "user", content },
  }) + "\n";
}

/**
 * A transcript whose middle line is a tool result of about 512 KiB of words followed by a
 * screenshot of `payload` base64 bytes, between two ordinary lines.
 */
function giantTranscript(sessionId: string, payload: number): string {
  const random = rng(5);
  const words = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}x`);
  const text: string[] = [];
  for (let n = 0; n < 512 * 1024; n += 8) {
    text.push(words[Math.floor(random() * words.length)]!);
  }
  text.push("tailmark-quokka");
  const bytes = new Uint8Array(Math.ceil(payload * 3 / 4));
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
  return line(sessionId, "u1", "a first question about larkspur") +
    line(sessionId, "u2", [{
      type: "tool_result",
      tool_use_id: "toolu_01",
      content: [
        { type: "text", text: text.join(" ") },
        {
          type: "image",
          source: {
            type: "base64",
            media_type: "image/png",
            data: Buffer.from(bytes).toString("base64"),
          },
        },
      ],
    }]) +
    line(sessionId, "u3", "and a last one about quarrystone");
}

/** The derived data of a store: conversations, records' derived columns, drift, the index. */
function derived(store: HistoryStore): Record<string, unknown> {
  const all = (sql: string) => store.db.prepare(sql).all();
  store.db.exec(
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_instances USING fts5vocab(main, fts, 'instance')",
  );
  const index = createHash("sha256");
  for (
    const row of store.db.prepare(
      "SELECT doc, term, offset FROM temp.fts_instances ORDER BY doc, offset, term",
    ).iterate()
  ) {
    index.update(JSON.stringify(row));
  }
  return {
    conversations: all(
      `SELECT key, agent, source_id, project_root, title, first_ts, last_ts, message_count,
              record_count FROM conversations ORDER BY key`,
    ),
    records: all(
      `SELECT r.id, c.key, r.ts, r.kind, r.role, r.message_id, r.part_id, r.flags
       FROM records r LEFT JOIN conversations c ON c.id = r.conversation_id ORDER BY r.id`,
    ),
    drift: all("SELECT * FROM drift ORDER BY source_id, generation, detail"),
    instances: (all("SELECT count(*) AS n FROM temp.fts_instances")[0] as { n: number }).n,
    index: index.digest("hex"),
  };
}

/**
 * Every statement `store` prepares that reads raw chunks counts the rows it returns, and the
 * statement that flags a streamed chunk once it is derived counts its runs; `ahead` is the most
 * rows ever read and not yet derived.
 */
function countingReads(
  store: HistoryStore,
  counter: { rows: number; derived: number; ahead: number },
): HistoryStore {
  const counting = (statement: StatementSync, what: "all" | "run"): StatementSync =>
    new Proxy(statement, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (prop !== what || typeof value !== "function") {
          return typeof value === "function" ? value.bind(target) : value;
        }
        if (what === "run") {
          return (...args: Parameters<StatementSync["run"]>) => {
            counter.derived++;
            return target.run(...args);
          };
        }
        return (...args: Parameters<StatementSync["all"]>) => {
          const rows = target.all(...args);
          counter.rows += rows.length;
          counter.ahead = Math.max(counter.ahead, counter.rows - counter.derived);
          return rows;
        };
      },
    });
  return new Proxy(store, {
    get(target, prop) {
      if (prop === "stmt") {
        return (sql: string) => {
          const statement = target.stmt(sql);
          if (/\braw\b/.test(sql) && /FROM records/.test(sql)) return counting(statement, "all");
          if (/^\s*UPDATE records SET flags/.test(sql)) return counting(statement, "run");
          return statement;
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

Deno.test("rebuild derives a giant line again exactly, without holding it whole", async (t) => {
  const world = await makeWorld();
  const ctx = loadContext({ env: world.env });
  const store = openStore(ctx);
  try {
    const dir = join(world.claude, "projects", "-home-dev-src-huge");
    Deno.mkdirSync(dir, { recursive: true });
    const sessionId = "6d1e0c52-8a8e-4f0e-9a55-1f3f4b1a2c3d";
    Deno.writeTextFileSync(join(dir, `${sessionId}.jsonl`), giantTranscript(sessionId, PAYLOAD));
    const summary = await runPass(store, ctx, { limits: LIMITS });
    assert.deepEqual(summary.errors, []);
    const chunks = (store.db.prepare(
      `SELECT count(*) AS n FROM records WHERE (flags & ${FLAG_STREAMED}) != 0`,
    ).get() as { n: number }).n;
    assert.ok(chunks * LIMITS.chunkSize! > PAYLOAD, "the giant line is stored in chunks");
    const captured = derived(store);
    assert.ok((captured.instances as number) > 50_000, "its words are indexed");

    await t.step(
      "its chunks are read as they are indexed, never the whole line first",
      async () => {
        const read = { rows: 0, derived: 0, ahead: 0 };
        await rebuildWith(countingReads(store, read), ctx, ADAPTERS, LIMITS);
        const { derived: indexed, ahead } = read;
        assert.ok(indexed >= chunks, "every chunk went through the stream");
        assert.ok(
          ahead * LIMITS.chunkSize! <= PAYLOAD / 4,
          `read ${ahead} chunks ahead of the index (the line is ${chunks} chunks)`,
        );
        assert.deepEqual(derived(store), captured);
      },
    );

    await t.step("SQLite needs far less memory than the line's size", async () => {
      // SQLite fails an allocation past the cap with "out of memory": a statement journal of
      // the records table (the rebuild rewrites every row) would need about the line's size.
      const out = await rebuildInHeap(world.vars, PAYLOAD / 3, LIMITS);
      assert.equal(out.code, 0, out.stderr);
      assert.deepEqual(derived(store), captured);
    });
  } finally {
    store.close();
    await world.cleanup();
  }
});

/** Rebuilds the store of `vars`' data dir in a process of its own, SQLite's heap capped at `heap`. */
async function rebuildInHeap(
  vars: Record<string, string>,
  heap: number,
  limits: Partial<Limits> = {},
): Promise<{ code: number; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      join(ROOT, "tests", "lib", "capture", "_rebuild_in_heap.ts"),
      String(heap),
      JSON.stringify(limits),
    ],
    cwd: ROOT,
    env: { ...childBaseEnv(), ...vars },
    clearEnv: true,
    stdin: "null",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("a rebuild's batches keep no copy of the text index's pages they merge", async () => {
  // The rebuild is one transaction; a batch inside it that opened a savepoint of its own kept in
  // memory every page its index inserts changed, and those inserts merge the index's segments:
  // 12 MiB here, 1.9 GB at ten gigabytes of history. Without the savepoints, 7 MiB do, 8 with
  // the 2 MiB of new terms FTS5 holds since migration 0017 (`FTS_HASH_BYTES`).
  const world = await makeWorld();
  try {
    const corpus = join(world.home, "..", "corpus");
    generateCorpus({ out: corpus, size: 30_000_000 });
    world.vars = { ...world.vars, ...corpusEnv(corpus, world.home) };
    world.env = envFrom(world.vars);
    const summary = await captureWorld(world);
    assert.ok(summary.records > 10_000, `captured ${summary.records} records`);
    const captured = withStore(world, derived);
    const out = await rebuildInHeap(world.vars, 9 * 1024 * 1024);
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(withStore(world, derived), captured);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a rebuild ends with no free page in the store, for a forget after it to move", async () => {
  // At 1 GB a rebuild left 12,371 pages free (its index's merges outgrow the index it ends
  // with), and the first forget after it gave them back: at ten gigabytes, 17 s of a forget of
  // one conversation. Here the free pages are a dropped table's, left by whatever ran before.
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 40, lines: 20 });
    await captureWorld(world);
    const free = () =>
      withStore(
        world,
        (store) =>
          (store.db.prepare("PRAGMA freelist_count").get() as { freelist_count: number })
            .freelist_count,
      );
    withStore(world, (store) => {
      store.db.exec(`CREATE TABLE filler (x);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
        INSERT INTO filler SELECT randomblob(4000) FROM n;
        DROP TABLE filler;`);
    });
    assert.ok(free() > 1000, `${free()} pages free before`);
    const before = withStore(world, derived);
    const io = captureIo();
    assert.equal(await reindex(["--rebuild", "--quiet"], io, world.env), 0, io.stderr());
    assert.deepEqual(withStore(world, derived), before);
    assert.equal(free(), 0);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a rebuild drops what a tombstone covers, raw bytes too, and counts what is left", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  const session = "claude:e6b87366-6fa9-42f4-8674-9b1edd6ba8df";
  try {
    await captureWorld(world);
    // An older build's store: the session forgotten, its subagents captured after.
    withStore(world, (store) => forgetLeavingChildren(store, session));
    await captureWorld(world, { rebuild: true });
    withStore(world, (store) => {
      const under = store.stmt(
        `SELECT count(*) AS n FROM records r JOIN sources s ON s.id = r.source_id
         WHERE s.locator LIKE '%/e6b87366-6fa9-42f4-8674-9b1edd6ba8df/subagents/%'`,
      ).get() as { n: number };
      assert.equal(under.n, 0, "no record of the subagents is left");
      const children = store.stmt("SELECT count(*) AS n FROM conversations WHERE key LIKE ?")
        .get(`${session}/%`) as { n: number };
      assert.equal(children.n, 0);
      const tombstones = store.stmt("SELECT count(*) AS n FROM tombstones").get() as { n: number };
      assert.equal(tombstones.n, 3, "the session and its two subagents");
      const counted = store.stmt("SELECT count(*) AS n FROM records").get() as { n: number };
      assert.equal(storeTotals(store).records, counted.n, "status counts what is left");
      assert.ok(
        store.stmt("SELECT 1 FROM conversations WHERE key LIKE 'claude:%'").get(),
        "other conversations stay",
      );
    });
  } finally {
    await world.cleanup();
  }
});

/** A transcript of `lines` prompts, each a few words and a screenshot of `image` random bytes. */
function screenshots(sessionId: string, lines: number, image: number): string {
  const random = rng(11);
  let out = "";
  for (let i = 0; i < lines; i++) {
    const bytes = new Uint8Array(image);
    for (let j = 0; j < bytes.length; j++) bytes[j] = Math.floor(random() * 256);
    out += line(sessionId, `s${i}`, [
      { type: "text", text: `screen ${i} of the marigold dialog` },
      {
        type: "image",
        source: {
          type: "base64",
          media_type: "image/png",
          data: Buffer.from(bytes).toString("base64"),
        },
      },
    ]);
  }
  return out;
}

/** Rebuilds `store` in-process with `adapters` (and `limits`, the defaults' when absent). */
function rebuildWith(
  store: HistoryStore,
  ctx: ReturnType<typeof loadContext>,
  adapters = ADAPTERS,
  limits: Partial<Limits> = {},
) {
  return rebuildDerived({
    store,
    adapters,
    discover: discoverContext(ctx),
    redact: redactorFor(ctx),
    projectOf,
    limits,
  });
}

/** Each conversation's id, by key. */
function conversationIds(store: HistoryStore): Record<string, number> {
  const rows = store.db.prepare("SELECT key, id FROM conversations").all() as {
    key: string;
    id: number;
  }[];
  return Object.fromEntries(rows.map((r) => [r.key, r.id]));
}

Deno.test("a rebuild keeps each conversation's id and writes no record derived as before", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex"] });
  const ctx = loadContext({ env: world.env });
  const store = openStore(ctx);
  try {
    const dir = join(world.claude, "projects", "-home-dev-src-screens");
    Deno.mkdirSync(dir, { recursive: true });
    const sessionId = "0b7c2f4e-3d1a-4c8b-9e6f-5a2d1c3b4e5f";
    Deno.writeTextFileSync(join(dir, `${sessionId}.jsonl`), screenshots(sessionId, 48, 48 * 1024));
    const summary = await runPass(store, ctx);
    assert.deepEqual(summary.errors, []);
    // A conversation forgotten leaves a gap in the ids, which a rebuild that numbered its
    // conversations afresh closed, giving every later one another id.
    const first = store.db.prepare(
      `SELECT key FROM conversations c WHERE NOT EXISTS
         (SELECT 1 FROM conversations s WHERE s.parent_key = c.key) ORDER BY id LIMIT 1`,
    ).get() as { key: string };
    forget(store, { ids: [first.key] }, { redact: (text) => text });
    const ids = conversationIds(store);
    const captured = derived(store);
    const stored = (store.db.prepare("SELECT sum(length(raw)) AS n FROM records").get() as {
      n: number;
    }).n;
    assert.ok(stored > 2_000_000, `the records hold ${stored} bytes`);
    store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");

    const records =
      (store.db.prepare("SELECT count(*) AS n FROM records").get() as { n: number }).n;
    assert.equal(await rebuildWith(store, ctx), records, "every record is derived again");

    // The write-ahead log holds every page the rebuild's transaction wrote: the text index, the
    // conversations, the keys; emptying every record first put the records table in it twice.
    const wal = Deno.statSync(`${store.path}-wal`).size;
    assert.ok(wal < stored / 2, `the rebuild wrote ${wal} bytes for ${stored} bytes of records`);
    assert.deepEqual(conversationIds(store), ids);
    assert.deepEqual(derived(store), captured);
  } finally {
    store.close();
    await world.cleanup();
  }
});

Deno.test("a rebuild empties what was derived of a source no adapter of the build reads", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex"] });
  const ctx = loadContext({ env: world.env });
  const store = openStore(ctx);
  try {
    await runPass(store, ctx);
    const captured = derived(store);
    const codex = `SELECT count(*) AS n FROM records r JOIN sources s ON s.id = r.source_id
      WHERE s.agent = 'codex'`;
    const count = (sql: string) => (store.db.prepare(sql).get() as { n: number }).n;
    assert.ok(count(codex) > 0, "the codex fixtures are captured");

    await rebuildWith(store, ctx, ADAPTERS.filter((a) => a.agent !== "codex"));
    assert.equal(
      count(`${codex} AND (r.conversation_id IS NOT NULL OR r.kind != 'meta' OR r.ts IS NOT NULL
        OR (r.flags & ${FLAG_INDEXED}) != 0)`),
      0,
      "no codex record keeps a conversation, a kind, a time or a place in the index",
    );
    assert.equal(count("SELECT count(*) AS n FROM conversations WHERE agent = 'codex'"), 0);
    assert.ok(count("SELECT count(*) AS n FROM conversations WHERE agent = 'claude'") > 0);

    await rebuildWith(store, ctx);
    assert.deepEqual(derived(store), captured);
  } finally {
    store.close();
    await world.cleanup();
  }
});
