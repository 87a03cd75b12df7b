// Capture into the history store: byte-exact raw records, idempotent cursors, generations,
// drift, bounded handling of long lines, and what happens with a full disk or a locked store.

import assert from "node:assert/strict";
import { appendFileSync, readFileSync, renameSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Buffer } from "node:buffer";
import { DatabaseSync } from "node:sqlite";
import { runCapture } from "../../../lib/capture/run.ts";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import {
  type Adapter,
  makeDerived,
  type RowAdapter,
  SourceError,
} from "../../../lib/sources/adapter.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { findConversation, pageConversation } from "../../../lib/store/conversations.ts";
import { TextDeriver } from "../../../lib/store/records.ts";
import { search } from "../../../lib/store/search.ts";
import { storeStatus } from "../../../lib/store/status.ts";
import { StoreFullError } from "../../../lib/store/db.ts";
import {
  captureWorld,
  makeWorld,
  manifest,
  ROOT,
  runPass,
  withStore,
  type World,
} from "../../_helpers.ts";
import { childBaseEnv } from "../../command_env.ts";

interface ClaudeEntry {
  path: string;
  case: string;
  conversation: string;
  parent: string | null;
  phrases: string[];
  lines: number;
}

/** Every record of every conversation, paged as `show --json` pages them, grouped by source. */
function rawBySource(
  world: World,
): Map<string, Map<number, { offset: number; raw: Uint8Array }[]>> {
  return withStore(world, (store, ctx) => {
    const deriver = new TextDeriver(store, ADAPTERS, redactorFor(ctx));
    const keys = store.db.prepare("SELECT key FROM conversations").all() as { key: string }[];
    const out = new Map<string, Map<number, { offset: number; raw: Uint8Array }[]>>();
    for (const { key } of keys) {
      const conversation = findConversation(store, key);
      let after: number | undefined;
      do {
        const page = pageConversation(
          store,
          deriver,
          conversation,
          after === undefined ? {} : { after },
        );
        for (const r of page.records) {
          const gens = out.get(r.source) ?? new Map();
          out.set(r.source, gens);
          const list = gens.get(r.generation) ?? [];
          gens.set(r.generation, list);
          list.push({ offset: r.offset, raw: new Uint8Array(Buffer.from(r.raw, "base64")) });
        }
        after = page.next ?? undefined;
      } while (after !== undefined);
    }
    return out;
  });
}

function joinRaw(list: { offset: number; raw: Uint8Array }[]): Uint8Array {
  const sorted = [...list].sort((a, b) => a.offset - b.offset);
  let expected = 0;
  for (const r of sorted) {
    assert.equal(r.offset, expected, "records are contiguous");
    expected += r.raw.length;
  }
  return Buffer.concat(sorted.map((r) => r.raw));
}

function capturedBytes(file: string): Uint8Array {
  const bytes = readFileSync(file);
  const last = bytes.lastIndexOf(0x0a);
  return bytes.subarray(0, last + 1);
}

Deno.test("capture keeps every fixture's bytes exactly, across all pages of every conversation", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await captureWorld(world);
    const bySource = rawBySource(world);
    const entries = manifest<ClaudeEntry>("claude");
    for (const entry of entries) {
      const file = join(world.claude, entry.path);
      const gens = bySource.get(file);
      assert.ok(gens, `records for ${entry.case} ${entry.path}`);
      assert.deepEqual([...gens.keys()], [1]);
      const rebuilt = joinRaw(gens.get(1)!);
      assert.ok(
        Buffer.from(rebuilt).equals(Buffer.from(capturedBytes(file))),
        `bytes of ${entry.path}`,
      );
    }
    // The two ugly ones the issue names, checked explicitly.
    const crlf = entries.find((e) => e.case === "crlf")!;
    assert.ok(readFileSync(join(world.claude, crlf.path)).includes("\r\n"));
    const utf8 = entries.find((e) => e.case === "invalid-utf8")!;
    assert.throws(() =>
      new TextDecoder("utf-8", { fatal: true }).decode(readFileSync(join(world.claude, utf8.path)))
    );
  } finally {
    await world.cleanup();
  }
});

Deno.test("a second capture finds nothing new; appended lines are captured exactly once", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    const first = await captureWorld(world);
    assert.ok(first.records > 0);
    const second = await captureWorld(world);
    assert.equal(second.records, 0);
    assert.equal(second.changed, 0);

    const entry = manifest<ClaudeEntry>("claude").find((e) => e.case === "dates")!;
    const file = join(world.claude, entry.path);
    const line = JSON.stringify({
      type: "user",
      sessionId: entry.conversation.slice("claude:".length),
      cwd: "/home/dev/src/delta",
      timestamp: "2026-06-21T10:00:00.000Z",
      uuid: crypto.randomUUID(),
      message: { role: "user", content: "appended narwhal-bicycle question" },
    });
    appendFileSync(file, line + "\n" + line + "\n");
    const third = await captureWorld(world);
    assert.equal(third.records, 2);
    withStore(world, (store, ctx) => {
      const hits = search(store, ADAPTERS, redactorFor(ctx), { query: "narwhal-bicycle" }).hits;
      assert.equal(hits.length, 2);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("an incomplete last line is captured once it is complete, not before", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await captureWorld(world);
    const entry = manifest<ClaudeEntry & { completeWith: string }>("claude").find((e) =>
      e.case === "truncated"
    )!;
    const find = (q: string) =>
      withStore(
        world,
        (store, ctx) => search(store, ADAPTERS, redactorFor(ctx), { query: q }).hits.length,
      );
    assert.equal(find("cinder-pagoda"), 0);
    assert.equal(find("sorrel-dynamo"), 1);
    appendFileSync(join(world.claude, entry.path), entry.completeWith);
    const summary = await captureWorld(world);
    assert.equal(summary.records, 1);
    assert.equal(find("cinder-pagoda"), 1);
    assert.equal((await captureWorld(world)).records, 0);
  } finally {
    await world.cleanup();
  }
});

Deno.test("replacing or truncating a captured file starts a new generation and keeps the old one", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await captureWorld(world);
    const entries = manifest<ClaudeEntry>("claude");
    const dates = entries.filter((e) => e.case === "dates");
    const [a, b] = [join(world.claude, dates[0]!.path), join(world.claude, dates[1]!.path)];
    const sid = dates[0]!.conversation.slice("claude:".length);

    // Replaced by a different file (another inode, different content).
    const replacement = a + ".new";
    writeFileSync(
      replacement,
      JSON.stringify({
        type: "user",
        sessionId: sid,
        cwd: "/home/dev/src/delta",
        timestamp: "2026-01-06T09:00:00.000Z",
        message: { role: "user", content: "replacement gannet-quarry text" },
      }) + "\n",
    );
    renameSync(replacement, a);
    // Shortened below its cursor.
    truncateSync(b, 10);
    appendFileSync(b, "\n");

    const summary = await captureWorld(world);
    const reasons = summary.generations.map((g) => [g.locator, g.generation]);
    assert.deepEqual(reasons.sort(), [[a, 2], [b, 2]].sort());
    withStore(world, (store, ctx) => {
      const redact = redactorFor(ctx);
      const find = (q: string) => search(store, ADAPTERS, redact, { query: q }).hits.length;
      assert.equal(find("gannet-quarry"), 1, "the new generation is searchable");
      for (const phrase of [...dates[0]!.phrases, ...dates[1]!.phrases]) {
        assert.equal(find(`"${phrase}"`), 1, `old generation still finds ${phrase}`);
      }
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a copied file with the same bytes continues its generation instead of duplicating it", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await captureWorld(world);
    const entry = manifest<ClaudeEntry>("claude").find((e) => e.case === "main")!;
    const file = join(world.claude, entry.path);
    const copy = file + ".copy";
    writeFileSync(copy, readFileSync(file));
    renameSync(copy, file); // new inode, same bytes
    const summary = await captureWorld(world);
    assert.deepEqual(summary.generations, []);
    assert.equal(summary.records, 0);
  } finally {
    await world.cleanup();
  }
});

Deno.test("deleting a source keeps its records and counts its conversation as gone", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await captureWorld(world);
    const entry = manifest<ClaudeEntry>("claude").find((e) => e.case === "crlf")!;
    await Deno.remove(join(world.claude, entry.path));
    const summary = await captureWorld(world);
    assert.equal(summary.gone, 1);
    withStore(world, (store, ctx) => {
      const status = storeStatus(store);
      assert.equal(status.sourcesGone, 1);
      assert.equal(status.conversations.find((c) => c.agent === "claude")?.gone, 1);
      const hits =
        search(store, ADAPTERS, redactorFor(ctx), { query: `"${entry.phrases[0]}"` }).hits;
      assert.equal(hits.length, 1);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("format drift is counted per agent version and reported, without failing", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    const summary = await captureWorld(world);
    const unknown = summary.drift.find((d) =>
      d.category === "unknown_type" && d.detail === "hologram-sync"
    );
    assert.deepEqual(
      unknown && { agent: unknown.agent, version: unknown.version, count: unknown.count },
      {
        agent: "claude",
        version: "2.9.99",
        count: 3,
      },
    );
    const malformedOnly = manifest<ClaudeEntry>("claude").find((e) => e.case === "malformed-only")!;
    assert.ok(summary.empty.includes(join(world.claude, malformedOnly.path)));
    assert.ok(summary.drift.some((d) => d.category === "unparsable" && d.count > 0));
    // The drift line's phrase is kept raw but not indexed.
    withStore(world, (store, ctx) => {
      assert.equal(
        search(store, ADAPTERS, redactorFor(ctx), { query: "ember-trellis" }).hits.length,
        0,
      );
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("an oversized line is streamed in chunks, stored whole and searchable to its tail", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      // A 256 KiB in-memory limit makes the 300 KB fixture line take the streaming path.
      const summary = await runPass(store, ctx, { limits: { maxLine: 256 * 1024 } });
      assert.ok(summary.records > 0);
      const redact = redactorFor(ctx);
      for (const phrase of ["kestrel-bramble", "obsidian-tambourine"]) {
        const hits = search(store, ADAPTERS, redact, { query: phrase }).hits;
        assert.equal(hits.length, 1, phrase);
        assert.equal(hits[0]!.kind, "tool_result");
        assert.match(hits[0]!.snippet, new RegExp(phrase));
      }
    } finally {
      store.close();
    }
    const entry = manifest<ClaudeEntry>("claude").find((e) => e.case === "long-line")!;
    const file = join(world.claude, entry.path);
    const gens = rawBySource(world).get(file)!;
    assert.ok(Buffer.from(joinRaw(gens.get(1)!)).equals(Buffer.from(capturedBytes(file))));
  } finally {
    await world.cleanup();
  }
});

Deno.test("an oversized line still being written is streamed once whole, from its start", async () => {
  const world = await makeWorld();
  try {
    const dir = join(world.claude, "projects", "-tmp-p");
    Deno.mkdirSync(dir, { recursive: true });
    const file = join(dir, "s1.jsonl");
    const line = (id: string, text: string) =>
      JSON.stringify({
        type: "user",
        sessionId: "s1",
        uuid: id,
        timestamp: "2026-01-01T00:00:00Z",
        message: { role: "user", content: text },
      }) + "\n";
    const first = line("u1", "a first short question");
    const giant = line("u2", `larkspur ${"gravel ".repeat(5_000)} quarrystone`);
    // The giant line is half written: no newline yet.
    writeFileSync(file, first + giant.slice(0, 20_000));
    const limits = { maxLine: 4096 };
    const ctx = loadContext({ env: world.env });
    const run = async () => {
      const store = openStore(ctx);
      try {
        return await runPass(store, ctx, { limits });
      } finally {
        store.close();
      }
    };
    const before = await run();
    assert.equal(before.records, 1);
    const cursor = withStore(
      world,
      (store) =>
        (store.db.prepare("SELECT cursor FROM sources WHERE locator = ?").get(file) as {
          cursor: number;
        }).cursor,
    );
    assert.equal(cursor, Buffer.byteLength(first), "the cursor waits at the unfinished line");

    appendFileSync(file, giant.slice(20_000));
    const after = await run();
    assert.ok(after.records >= 1);
    const gens = rawBySource(world).get(file)!;
    assert.ok(Buffer.from(joinRaw(gens.get(1)!)).equals(readFileSync(file)));
    const hits = withStore(
      world,
      (store, ctx) => search(store, ADAPTERS, redactorFor(ctx), { query: "quarrystone" }).hits,
    );
    assert.equal(hits.length, 1);
    assert.equal((await run()).records, 0);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a full disk fails the batch cleanly and the next run captures everything once", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      const pages =
        (store.db.prepare("PRAGMA page_count").get() as { page_count: number }).page_count;
      store.db.exec(`PRAGMA max_page_count = ${pages + 40}`);
      await assert.rejects(() => runPass(store, ctx), StoreFullError);
      store.db.exec("PRAGMA max_page_count = 1000000");
      await runPass(store, ctx);
    } finally {
      store.close();
    }
    const bySource = rawBySource(world);
    for (const entry of manifest<ClaudeEntry>("claude")) {
      const file = join(world.claude, entry.path);
      assert.ok(
        Buffer.from(joinRaw(bySource.get(file)!.get(1)!)).equals(Buffer.from(capturedBytes(file))),
      );
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("rebuild derives the same index and conversations again from the raw records", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await captureWorld(world);
    const snapshot = () =>
      withStore(world, (store) => ({
        conversations: store.db.prepare(
          "SELECT key, title, message_count, record_count, first_ts, last_ts, project_root FROM conversations ORDER BY key",
        ).all(),
        records: store.db.prepare(
          "SELECT id, kind, role, ts, flags, conversation_id IS NOT NULL AS c FROM records ORDER BY id",
        ).all(),
        drift: store.db.prepare("SELECT * FROM drift ORDER BY source_id, detail").all(),
        hits: store.db.prepare(
          "SELECT rowid FROM fts WHERE fts MATCH 'marmot OR kestrel' ORDER BY rowid",
        ).all(),
      }));
    const before = snapshot();
    const summary = await captureWorld(world, { rebuild: true });
    assert.equal(summary.records, 0);
    assert.deepEqual(snapshot(), before);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a history store locked by another writer fails clearly and loses nothing", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await captureWorld(world);
    const holder = new DatabaseSync(join(world.data, "history.db"));
    holder.exec("BEGIN IMMEDIATE");
    try {
      const entry = manifest<ClaudeEntry>("claude").find((e) => e.case === "dates")!;
      appendFileSync(join(world.claude, entry.path), "\n");
      const ctx = loadContext({
        env: { get: (k) => k === "LOGBOOK_BUSY_TIMEOUT_MS" ? "50" : world.env.get(k) },
      });
      const store = openStore(ctx);
      try {
        await assert.rejects(
          () => runCapture({ ctx, store, redact: redactorFor(ctx) }),
          /locked by another process/,
        );
      } finally {
        store.close();
      }
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
    const summary = await captureWorld(world);
    assert.equal(summary.records, 1);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a SourceError fails its source alone; another error of that name fails the run", async (t) => {
  const world = await makeWorld();
  try {
    const path = join(world.dir, "rows.db");
    writeFileSync(path, "");
    // A row source whose every read fails with `error`, captured in a pass of its own.
    const capture = async (error: Error) => {
      const adapter: RowAdapter<null> = {
        agent: "opencode",
        mode: "rows",
        derivation: 1,
        skipKeys: new Set(),
        roots: () => [],
        async *discover() {
          yield { agent: "opencode", locator: `${path}#rows`, path, format: "rows" };
        },
        fingerprint: () => crypto.randomUUID(),
        initialState: () => null,
        readRows: () => Promise.reject(error),
        parseRow: () => makeDerived("meta", null, null),
        textOf: () => "",
      };
      const ctx = loadContext({ env: world.env });
      const store = openStore(ctx);
      try {
        return await runPass(store, ctx, { adapters: [adapter as Adapter] });
      } finally {
        store.close();
      }
    };
    await t.step("a SourceError is reported for its source", async () => {
      const summary = await capture(new SourceError("The rows stayed busy"));
      assert.deepEqual(summary.errors, [
        { locator: `${path}#rows`, message: "The rows stayed busy" },
      ]);
    });
    await t.step("an Error merely named SourceError is not taken for one", async () => {
      const impostor = Object.assign(new Error("The rows stayed busy"), { name: "SourceError" });
      await assert.rejects(() => capture(impostor), (err) => err === impostor);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a pass holds the ids of the sources it has left to read, not their rows", async () => {
  const world = await makeWorld();
  try {
    // Many small sessions under a long project folder, as a year of history makes them: each
    // source's row, held for the whole pass, took more than its file's path and stat.
    const SOURCES = 3000;
    const dir = join(world.claude, "projects", `-home-u-${"long-project-name-".repeat(6)}app`);
    Deno.mkdirSync(dir, { recursive: true });
    for (let i = 0; i < SOURCES; i++) {
      const session = `5b7d0c4e-2f1a-4e3b-9c8d-${String(i).padStart(12, "0")}`;
      writeFileSync(
        join(dir, `${session}.jsonl`),
        JSON.stringify({
          type: "user",
          uuid: `u-${i}`,
          sessionId: session,
          cwd: "/home/u/app",
          timestamp: "2026-01-01T00:00:00.000Z",
          message: { role: "user", content: `question ${i}` },
        }) + "\n",
      );
    }
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--v8-flags=--expose-gc",
        join(ROOT, "tests", "lib", "capture", "_pass_heap.ts"),
      ],
      cwd: ROOT,
      env: { ...childBaseEnv(), ...world.vars },
      clearEnv: true,
      stdin: "null",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const { perSource, presentPerSource } = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      perSource: number;
      presentPerSource: number;
    };
    // Its file, path and stat, and what the run keeps of them for status and the next pass:
    // about 650 bytes here; with an object per source and its stat in the list (four numbers
    // held as four more objects), 830; with the folder's names held as strings beside its
    // listing's text, 895; with every row held too, 1,100 and more.
    assert.ok(perSource < 720, `${Math.round(perSource)} bytes of heap a source`);
    // Status's figures of the files read the sources' rows one at a time: with all of them read
    // at once, 600 bytes a source here (138 MiB at the end of a 10 GB capture).
    assert.ok(presentPerSource < 100, `${Math.round(presentPerSource)} bytes a source`);
  } finally {
    await world.cleanup();
  }
});
