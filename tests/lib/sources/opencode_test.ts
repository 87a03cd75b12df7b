// Capture of OpenCode: sessions, messages and parts from its SQLite database (read-only, with
// revisions, late inserts and a busy database) and its older JSON storage beside it.

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { cpSync } from "node:fs";
import { join, relative } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import type { SourceRef } from "../../../lib/sources/adapter.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { opencode } from "../../../lib/sources/opencode.ts";
import { findConversation, pageConversation } from "../../../lib/store/conversations.ts";
import { TextDeriver } from "../../../lib/store/records.ts";
import { search } from "../../../lib/store/search.ts";
import { envFrom } from "../../../lib/env.ts";
import { isPresent } from "../../../lib/present.ts";
import {
  fixtureIds,
  insertPart,
  makeOpencodeDb,
  openWriter,
  updatePart,
} from "../../../fixtures/opencode/make_db.ts";
import {
  captureWorld,
  FIXTURES,
  makeWorld,
  manifest,
  runCli,
  runPass,
  tempDir,
  withStore,
  type World,
} from "../../_helpers.ts";

interface SessionEntry {
  id: string;
  conversation: string;
  parent: string | null;
  archived: boolean;
  directory: string;
  title: string;
  phrases: string[];
  in: ("db" | "json")[];
  stalePhrases?: string[];
  unindexedPhrases?: string[];
}

const SESSIONS = (manifest("opencode") as unknown as { sessions: SessionEntry[] }).sessions;
const IDS = fixtureIds();

function dbPath(world: World): string {
  return join(world.xdgData, "opencode", "opencode.db");
}

function hits(world: World, query: string) {
  return withStore(
    world,
    (store, ctx) => search(store, ADAPTERS, redactorFor(ctx), { query, limit: 50 }).hits,
  );
}

/** Whole records of one source (chunks joined), in offset order. */
function recordsOf(world: World, locator: string): { raw: Uint8Array; flags: number }[] {
  return withStore(world, (store) => {
    const rows = store.db.prepare(
      `SELECT r.seq, r.raw, r.flags FROM records r JOIN sources s ON s.id = r.source_id
       WHERE s.locator = ? ORDER BY r.generation, r.offset`,
    ).all(locator) as { seq: number; raw: Uint8Array; flags: number }[];
    const out: { raw: Uint8Array; flags: number }[] = [];
    for (const row of rows) {
      const last = out.at(-1);
      if (row.seq > 0 && last) last.raw = new Uint8Array([...last.raw, ...row.raw]);
      else out.push({ raw: new Uint8Array(row.raw), flags: row.flags });
    }
    return out;
  });
}

function parseRaw(raw: Uint8Array): Record<string, unknown> {
  return JSON.parse(new TextDecoder().decode(raw));
}

/** Every file under `dir` (but those matching `except`) with the sha256 of its bytes and its mtime. */
function treeState(dir: string, except?: RegExp): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (path: string) => {
    for (const entry of Deno.readDirSync(path)) {
      const full = join(path, entry.name);
      if (entry.isDirectory) walk(full);
      else if (!except?.test(entry.name)) {
        const bytes = Deno.readFileSync(full);
        const mtime = Deno.statSync(full).mtime?.getTime();
        out[relative(dir, full)] = `${createHash("sha256").update(bytes).digest("hex")} ${mtime}`;
      }
    }
  };
  walk(dir);
  return out;
}

/** A new text part in the main session's last message. */
function newPart(text: string, time: number) {
  return {
    messageId: IDS.mainLastMessage,
    sessionId: IDS.sessions.main,
    timeCreated: time,
    timeUpdated: time,
    data: { type: "text", text, time: { start: time, end: time } },
  };
}

Deno.test("capture finds each OpenCode session by its own phrase, with its tree, title and archived flag", async () => {
  const world = await makeWorld({ fixtures: ["opencode"] });
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(summary.errors, []);
    assert.deepEqual(summary.empty, []);
    for (const session of SESSIONS) {
      for (const phrase of session.phrases) {
        const found = hits(world, phrase);
        assert.equal(found.length, 1, `one hit for ${phrase}`);
        assert.equal(found[0]!.conversation, session.conversation, phrase);
        assert.equal(found[0]!.agent, "opencode");
      }
      for (const phrase of [...session.stalePhrases ?? [], ...session.unindexedPhrases ?? []]) {
        assert.equal(hits(world, phrase).length, 0, `no hit for ${phrase}`);
      }
      withStore(world, (store) => {
        const row = findConversation(store, session.conversation);
        assert.equal(row.key, session.conversation);
        assert.equal(row.native_id, session.id);
        assert.equal(row.parent_key, session.parent, `parent of ${session.id}`);
        assert.equal(row.subagent, session.parent ? 1 : 0);
        assert.equal(row.archived, session.archived ? 1 : 0, `archived flag of ${session.id}`);
        assert.equal(row.title, session.title);
        assert.equal(row.cwd, session.directory);
        assert.equal(row.agent, "opencode");
        assert.ok(row.message_count >= 2, `messages of ${session.id}`);
      });
    }
    // The tree: main → child → grandchild, each a conversation of its own.
    const { main, child, grandchild } = IDS.sessions;
    withStore(world, (store) => {
      assert.equal(
        findConversation(store, `opencode:${grandchild}`).parent_key,
        `opencode:${child}`,
      );
      assert.equal(findConversation(store, `opencode:${child}`).parent_key, `opencode:${main}`);
      assert.equal(findConversation(store, `opencode:${main}`).parent_key, null);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("parts get their message's role and a kind; payloads and unknown part types are not indexed", async () => {
  const world = await makeWorld({ fixtures: ["opencode"] });
  try {
    const summary = await captureWorld(world);
    const kindOf = (phrase: string) => {
      const [hit] = hits(world, phrase);
      return `${hit?.kind}/${hit?.role}`;
    };
    assert.equal(kindOf("copper-narwhal"), "message/user");
    assert.equal(kindOf("sable-metronome"), "message/assistant");
    assert.equal(kindOf("indigo-ratchet"), "tool_call/assistant");
    assert.equal(kindOf("thistle-carousel"), "reasoning/assistant");
    // The compaction summary is the text of the summary message.
    assert.equal(kindOf('"was still running"'), "summary/null");
    // Base64: the pasted PNG's data URL, the Anthropic signature, OpenAI's encrypted reasoning.
    for (const payload of ["iVBORw0KGgoAAAANSUhEUgAAAAQAAAAE", "gAAAAABnpIH", "q4fXI5Z80"]) {
      assert.equal(hits(world, payload).length, 0, payload);
    }
    assert.deepEqual(summary.drift, [{
      agent: "opencode",
      version: "1.17.4",
      category: "unknown_type",
      detail: "part/hologram",
      count: 1,
    }]);
    withStore(world, (store) => {
      const kinds = Object.fromEntries(
        (store.db.prepare(
          `SELECT json_extract(CAST(raw AS TEXT), '$.data') AS data, kind, role FROM records
           WHERE json_extract(CAST(raw AS TEXT), '$.table') = 'part'`,
        ).all() as { data: string; kind: string; role: string | null }[])
          .map((r) => [JSON.parse(r.data).type, `${r.kind}/${r.role}`]),
      );
      assert.equal(kinds["step-start"], "event/null");
      assert.equal(kinds["step-finish"], "event/null");
      assert.equal(kinds["retry"], "event/null");
      assert.equal(kinds["file"], "meta/null");
      assert.equal(kinds["patch"], "meta/null");
      assert.equal(kinds["snapshot"], "meta/null");
      assert.equal(kinds["agent"], "meta/null");
      assert.equal(kinds["compaction"], "summary/null");
      assert.equal(kinds["subtask"], "tool_call/user");
      assert.equal(kinds["hologram"], "meta/null");
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("the database wins over the JSON storage beside it: overlapping ids are indexed once", async () => {
  const world = await makeWorld({ fixtures: ["opencode"] });
  try {
    await captureWorld(world);
    const overlap = hits(world, "heron-tapestry");
    assert.equal(overlap.length, 1);
    assert.equal(overlap[0]!.conversation, `opencode:${IDS.sessions.overlap}`);
    // stale-periscope is only in the JSON copy of a part the database holds a newer revision of.
    assert.equal(hits(world, "stale-periscope").length, 0);
    const jsonOnly = hits(world, "cobble-marzipan");
    assert.equal(jsonOnly.length, 1);
    assert.equal(jsonOnly[0]!.conversation, `opencode:${IDS.sessions.jsonOnly}`);

    const storage = join(world.xdgData, "opencode", "storage");
    const overlapFile = join(
      storage,
      "session",
      IDS.projects.harbor,
      `${IDS.sessions.overlap}.json`,
    );
    assert.deepEqual(recordsOf(world, overlapFile), [], "no record from the overlapping JSON copy");
    withStore(world, (store) => {
      const row = store.db.prepare(
        `SELECT s.locator FROM records r JOIN sources s ON s.id = r.source_id WHERE r.id = ?`,
      ).get(overlap[0]!.record) as { locator: string };
      assert.equal(row.locator, dbPath(world));
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("each database record is one row as JSON, exactly the row in the database; JSON storage records are the files' bytes", async () => {
  const world = await makeWorld({ fixtures: ["opencode"] });
  try {
    await captureWorld(world);
    const records = recordsOf(world, dbPath(world)).map((r) => r.raw);
    const decoder = new TextDecoder();
    for (const raw of records) assert.ok(decoder.decode(raw).endsWith("}\n"));
    const parsed = records.map(parseRaw);
    const db = new DatabaseSync(dbPath(world), { readOnly: true });
    try {
      for (const table of ["session", "message", "part"]) {
        const rows = (db.prepare(`SELECT * FROM ${table} ORDER BY id`).all() as Record<
          string,
          unknown
        >[]).map((row) => ({ table, ...row }));
        const captured = parsed.filter((p) => p.table === table)
          .sort((a, b) => String(a.id) < String(b.id) ? -1 : 1);
        // `data` is the column's string, not a parsed object.
        if (table !== "session") assert.ok(captured.every((c) => typeof c.data === "string"));
        assert.deepEqual(captured, rows, `rows of ${table}`);
        for (const [i, row] of rows.entries()) {
          assert.deepEqual(Object.keys(captured[i]!), Object.keys(row), "columns in table order");
        }
      }
    } finally {
      db.close();
    }

    const storage = join(world.xdgData, "opencode", "storage");
    const { jsonOnly } = IDS.sessions;
    const sessionFile = join(storage, "session", "global", `${jsonOnly}.json`);
    const messages = [...Deno.readDirSync(join(storage, "message", jsonOnly))]
      .map((e) => e.name).sort();
    const files = [
      sessionFile,
      ...messages.map((m) => join(storage, "message", jsonOnly, m)),
      ...messages.flatMap((m) => {
        const dir = join(storage, "part", m.replace(/\.json$/, ""));
        return [...Deno.readDirSync(dir)].map((e) => join(dir, e.name)).sort();
      }),
    ];
    const stored = recordsOf(world, sessionFile).map((r) => decoder.decode(r.raw));
    assert.deepEqual(stored, files.map((f) => Deno.readTextFileSync(f)));
  } finally {
    await world.cleanup();
  }
});

Deno.test("a second capture stores nothing; an inserted part is captured exactly once", async () => {
  const world = await makeWorld({ fixtures: ["opencode"] });
  try {
    const first = await captureWorld(world);
    assert.ok(first.records > 0);
    const second = await captureWorld(world);
    assert.equal(second.records, 0);
    assert.equal(second.changed, 0, "an unchanged database is not even opened");

    insertPart(dbPath(world), newPart("Follow-up: ochre-bellwether noted.", Date.now()));
    const third = await captureWorld(world);
    assert.equal(third.records, 1);
    assert.equal(hits(world, "ochre-bellwether").length, 1);
    assert.equal((await captureWorld(world)).records, 0);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a part updated after capture is a new revision: the old one stays in show, search finds only the new text", async () => {
  const world = await makeWorld({ fixtures: ["opencode"] });
  try {
    await captureWorld(world);
    // OpenCode stamps an update with the current time: after every row already read.
    const newTime = IDS.maxPartTimeUpdated + 60_000;
    updatePart(
      dbPath(world),
      IDS.revisablePart,
      "Done: the amber-quiver buckets now live in Redis (juniper-osprey), shared by every instance.",
      newTime,
    );
    const summary = await captureWorld(world);
    assert.equal(summary.records, 1);

    assert.equal(hits(world, "juniper-osprey").length, 1, "the new text");
    assert.equal(hits(world, "replicas").length, 0, "a word only the old revision had");
    const shared = hits(world, "amber-quiver");
    assert.equal(shared.length, 1, "a word of both revisions, found once");

    withStore(world, (store, ctx) => {
      const deriver = new TextDeriver(store, ADAPTERS, redactorFor(ctx));
      const conversation = findConversation(store, `opencode:${IDS.sessions.main}`);
      const revisions = [];
      let after: number | undefined;
      do {
        const page = pageConversation(store, deriver, conversation, {
          limit: 7,
          ...(after === undefined ? {} : { after }),
        });
        revisions.push(...page.records.filter((r) => r.partId === IDS.revisablePart));
        after = page.next ?? undefined;
      } while (after !== undefined);
      assert.equal(revisions.length, 2);
      const [old, current] = revisions.map((r) => parseRaw(Buffer.from(r.raw, "base64")));
      assert.equal(old!.time_updated, IDS.revisablePartTimeUpdated);
      assert.match(String(old!.data), /two replicas allow twice the rate/);
      assert.equal(current!.time_updated, newTime);
      assert.match(String(current!.data), /juniper-osprey/);
      assert.equal(shared[0]!.record, revisions[1]!.id);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a row inserted with a time behind the cursor (an imported session) is still captured", async () => {
  const world = await makeWorld({ fixtures: ["opencode"] });
  try {
    await captureWorld(world);
    const old = IDS.revisablePartTimeUpdated - 3_600_000;
    insertPart(dbPath(world), newPart("Imported: pewter-gondola from an older export.", old));
    const summary = await captureWorld(world);
    assert.equal(summary.records, 1);
    assert.equal(hits(world, "pewter-gondola").length, 1);
    assert.equal((await captureWorld(world)).records, 0);
  } finally {
    await world.cleanup();
  }
});

Deno.test("capture never creates or changes a file beside OpenCode's database, and reads rows only in its WAL", async () => {
  const world = await makeWorld({ fixtures: ["opencode"] });
  try {
    // OpenCode not running: a checkpointed database alone. Nothing appears beside it.
    const before = treeState(world.xdgData);
    await captureWorld(world);
    await captureWorld(world);
    assert.deepEqual(treeState(world.xdgData), before, "names, bytes and mtimes");

    // OpenCode running: its rows are still in the WAL and it keeps -wal and -shm open.
    const writer = openWriter(dbPath(world));
    try {
      insertPart(writer, newPart("Still in the WAL: saffron-trellis.", Date.now()));
      const running = treeState(world.xdgData);
      assert.ok(Deno.statSync(`${dbPath(world)}-wal`).size > 0, "the writer keeps a WAL");
      assert.ok("opencode/opencode.db-shm" in running);
      const summary = await captureWorld(world);
      assert.deepEqual(summary.errors, []);
      assert.equal(summary.records, 1);
      assert.equal(hits(world, "saffron-trellis").length, 1);
      assert.deepEqual(treeState(world.xdgData), running, "-shm included");
    } finally {
      writer.close();
    }
  } finally {
    await world.cleanup();
  }
});

/**
 * Puts the fixture's database in `folder` as a copied or synced data folder holds it:
 * `opencode.db` and `opencode.db-wal`, the WAL holding a part with `text` that the database file
 * does not (OpenCode stopped before checkpointing).
 */
function databaseWithWal(world: World, folder: string, text: string): void {
  const live = Deno.makeTempDirSync({ dir: world.dir });
  cpSync(
    join(FIXTURES, "opencode", "xdg-data", "opencode", "opencode.db"),
    join(live, "opencode.db"),
  );
  const writer = openWriter(join(live, "opencode.db"));
  Deno.mkdirSync(folder, { recursive: true });
  try {
    insertPart(writer, newPart(text, Date.now()));
    for (const name of ["opencode.db", "opencode.db-wal"]) {
      Deno.copyFileSync(join(live, name), join(folder, name));
    }
  } finally {
    writer.close();
  }
}

Deno.test("a database whose rows are only in its WAL, with no -shm and no OpenCode running, is read and left as found", async () => {
  const world = await makeWorld();
  try {
    const folder = join(world.xdgData, "opencode");
    databaseWithWal(world, folder, "Only in the WAL: lichen-gazebo.");
    const walOnly = new DatabaseSync(`file:${join(folder, "opencode.db")}?immutable=1`, {
      readOnly: true,
    });
    try {
      const inFile = walOnly.prepare("SELECT count(*) AS n FROM part WHERE data LIKE ?")
        .get("%lichen-gazebo%") as { n: number };
      assert.equal(inFile.n, 0, "the row is not in the database file itself");
    } finally {
      walOnly.close();
    }

    const before = treeState(world.xdgData);
    assert.deepEqual(Object.keys(before).sort(), [
      "opencode/opencode.db",
      "opencode/opencode.db-wal",
    ]);
    const summary = await captureWorld(world);
    assert.deepEqual(summary.errors, []);
    assert.equal(hits(world, "lichen-gazebo").length, 1, "the WAL-only row");
    assert.equal(hits(world, "copper-narwhal").length, 1, "a row of the database file");
    assert.deepEqual(treeState(world.xdgData), before, "no -shm created, nothing changed");
    // The private copy is gone once the database was read to its end.
    const left = [...Deno.readDirSync(join(world.data, "run"))].filter((e) =>
      e.name.startsWith("logbook-snapshot-")
    ).flatMap((e) => [...Deno.readDirSync(join(world.data, "run", e.name))]);
    assert.deepEqual(left, []);
  } finally {
    await world.cleanup();
  }
});

Deno.test("the first reindex reads each of several databases from its own copy, with and without a WAL", async () => {
  const world = await makeWorld({ fixtures: ["opencode"] });
  try {
    // OpenCode's own folder: its database with rows only in the WAL, and JSON storage beside
    // it (reading that keeps the database's copy for the next session file).
    databaseWithWal(world, join(world.xdgData, "opencode"), "Only in the WAL: lichen-gazebo.");
    // An extra root holding another database of the same name, without a WAL.
    const synced = join(world.dir, "synced");
    const { path } = makeOpencodeDb(synced);
    insertPart(path, newPart("Only in the synced database: garnet-tollbooth.", Date.now()));
    assert.ok(!isPresent(`${path}-wal`), "the second database has no WAL");
    Deno.mkdirSync(world.config, { recursive: true });
    Deno.writeTextFileSync(
      join(world.config, "config.json"),
      JSON.stringify({ history: { roots: { opencode: [synced] } } }),
    );

    const reindex = await runCli("reindex", [], world.vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    assert.doesNotMatch(reindex.stderr, /malformed|Cannot read|error/i);
    assert.equal(hits(world, "lichen-gazebo").length, 1, "the WAL's row, from its own copy");
    assert.equal(hits(world, "garnet-tollbooth").length, 1, "the second database's own row");
  } finally {
    await world.cleanup();
  }
});

Deno.test("while OpenCode holds a write transaction, capture reads what is committed and leaves the database as it was", async () => {
  const world = await makeWorld({ fixtures: ["opencode"] });
  try {
    await captureWorld(world);
    const writer = openWriter(dbPath(world));
    try {
      writer.exec("BEGIN IMMEDIATE");
      insertPart(writer, newPart("Not yet committed: cobalt-wicket.", Date.now()));
      const hash = () => treeState(world.xdgData)["opencode/opencode.db"];
      const before = hash();
      const during = await captureWorld(world);
      assert.deepEqual(during.errors, []);
      assert.equal(during.records, 0);
      assert.equal(hits(world, "cobalt-wicket").length, 0);
      assert.equal(hash(), before, "the database file's bytes and mtime");

      writer.exec("COMMIT");
      const after = await captureWorld(world);
      assert.equal(after.records, 1);
      assert.equal(hits(world, "cobalt-wicket").length, 1);
      assert.equal(hash(), before);
    } finally {
      if (writer.isTransaction) writer.exec("ROLLBACK");
      writer.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a rollback-journal database mid-write is read at its last commit and left as found", async () => {
  const world = await makeWorld({ fixtures: ["opencode"] });
  try {
    const setup = new DatabaseSync(dbPath(world));
    setup.exec("PRAGMA journal_mode = DELETE");
    setup.close();
    const holder = new DatabaseSync(dbPath(world));
    try {
      // A small cache makes the writer spill changed pages into the database file, its
      // journal holding the originals: a copy taken now is rolled back to the last commit.
      holder.exec("PRAGMA cache_size = 1");
      holder.exec("BEGIN EXCLUSIVE");
      for (let i = 0; i < 40; i++) {
        insertPart(
          holder,
          newPart(`Uncommitted ${i}: marble-kestrel ${"x".repeat(2000)}`, Date.now()),
        );
      }
      const during = treeState(world.xdgData);
      assert.ok(Deno.statSync(`${dbPath(world)}-journal`).size > 0, "a write is in progress");
      const summary = await captureWorld(world);
      assert.deepEqual(summary.errors, []);
      for (const phrase of ["copper-narwhal", "heron-tapestry", "cobble-marzipan"]) {
        assert.equal(hits(world, phrase).length, 1, phrase);
      }
      assert.equal(hits(world, "marble-kestrel").length, 0, "nothing uncommitted");
      assert.deepEqual(treeState(world.xdgData), during, "the journal and database untouched");
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("reading in small budgets captures the same records, each part after its message", async () => {
  const whole = await makeWorld({ fixtures: ["opencode"] });
  try {
    await captureWorld(whole);
    const rows = (world: World) =>
      withStore(world, (store) => (store.db.prepare(
        "SELECT CAST(raw AS TEXT) AS raw, kind, role FROM records ORDER BY raw",
      ).all() as { raw: string; kind: string; role: string | null }[]));
    const expected = rows(whole);
    for (const limits of [{ textBudget: 700 }, { recordBudget: 1 }]) {
      const small = await makeWorld({ fixtures: ["opencode"] });
      try {
        const ctx = loadContext({ env: small.env });
        const store = openStore(ctx);
        try {
          await runPass(store, ctx, { limits });
        } finally {
          store.close();
        }
        const got = rows(small);
        assert.deepEqual(got, expected, JSON.stringify(limits));
        // A part read before its message would have no role.
        assert.equal(got.filter((r) => r.kind === "message" && r.role === null).length, 0);
      } finally {
        await small.cleanup();
      }
    }
  } finally {
    await whole.cleanup();
  }
});

Deno.test("rebuild derives the same index and conversations again, revisions included", async () => {
  const world = await makeWorld({ fixtures: ["opencode"] });
  try {
    await captureWorld(world);
    updatePart(
      dbPath(world),
      IDS.revisablePart,
      "amber-quiver, revised: juniper-osprey",
      IDS.maxPartTimeUpdated + 1,
    );
    await captureWorld(world);
    const snapshot = () =>
      withStore(world, (store) => ({
        conversations: store.db.prepare(
          `SELECT key, title, message_count, record_count, first_ts, last_ts, parent_key, subagent,
             archived, cwd, agent_version FROM conversations ORDER BY key`,
        ).all(),
        records: store.db.prepare(
          "SELECT id, kind, role, ts, flags, message_id, part_id, conversation_id IS NOT NULL AS c FROM records ORDER BY id",
        ).all(),
        drift: store.db.prepare("SELECT * FROM drift ORDER BY source_id, detail").all(),
        keys: store.db.prepare("SELECT * FROM record_keys ORDER BY source_id, key").all(),
        hits: store.db.prepare(
          `SELECT rowid FROM fts WHERE fts MATCH '"amber-quiver" OR "copper-narwhal" OR "heron-tapestry" OR "cobble-marzipan" OR replicas' ORDER BY rowid`,
        ).all(),
      }));
    const before = snapshot();
    assert.equal(before.hits.length, 4);
    const summary = await captureWorld(world, { rebuild: true });
    assert.equal(summary.records, 0);
    assert.deepEqual(snapshot(), before);
  } finally {
    await world.cleanup();
  }
});

Deno.test("discovery finds opencode.db, channel databases and JSON sessions under every root", async () => {
  const dir = await tempDir();
  try {
    const data = join(dir, "xdg", "opencode");
    const extra = join(dir, "extra");
    Deno.mkdirSync(join(data, "storage", "session", "global"), { recursive: true });
    Deno.mkdirSync(extra, { recursive: true });
    for (const name of ["opencode.db", "opencode-beta.db", "opencode.db-wal", "other.db"]) {
      Deno.writeTextFileSync(join(data, name), "");
    }
    Deno.writeTextFileSync(join(data, "storage", "session", "global", "ses_a.json"), "{}");
    Deno.symlinkSync(join(data, "opencode.db"), join(extra, "opencode-link.db"));
    Deno.writeTextFileSync(join(dir, "opencode-solo.db"), "");
    const ctx = {
      env: envFrom({ XDG_DATA_HOME: join(dir, "xdg"), HOME: join(dir, "home") }),
      extraRoots: { opencode: [extra, join(dir, "opencode-solo.db")] },
      skipped: new Map<string, number>(),
    };
    const found: SourceRef[] = [];
    for await (const ref of opencode.discover(ctx)) found.push(ref);
    assert.deepEqual(found.map((r) => relative(dir, r.locator)), [
      "xdg/opencode/opencode.db",
      "xdg/opencode/opencode-beta.db",
      "xdg/opencode/storage/session/global/ses_a.json",
      "opencode-solo.db",
    ]);
    assert.ok(found.every((r) => r.format === "rows" && r.path === r.locator));
    assert.equal(ctx.skipped.get("symlink"), 1);
    // A relative XDG_DATA_HOME is not a valid one (XDG base directory spec).
    const fallback = opencode.roots({ ...ctx, env: envFrom({ XDG_DATA_HOME: "rel", HOME: "/h" }) });
    assert.equal(fallback[0], "/h/.local/share/opencode");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("reindex and search capture OpenCode with the permissions the tasks grant", async () => {
  const world = await makeWorld({ fixtures: ["opencode"] });
  try {
    const reindex = await runCli("reindex", [], world.vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    assert.doesNotMatch(reindex.stderr, /error/);
    const found = await runCli("search", ["opal-dirigible", "--json"], world.vars);
    assert.equal(found.code, 0, found.stderr);
    const lines = found.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines.length, 1);
    assert.equal(lines[0].conversation, `opencode:${IDS.sessions.grandchild}`);
    assert.equal(lines[0].agent, "opencode");
  } finally {
    await world.cleanup();
  }
});

Deno.test("toolOf gives an OpenCode tool part its call, input and output at once", async () => {
  // A copy: even a read-only open of a WAL database leaves -shm and -wal files beside it.
  const world = await makeWorld({ fixtures: ["opencode"] });
  const path = dbPath(world);
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const row = db.prepare(
      `SELECT * FROM part WHERE data LIKE '%"tool":"bash"%' ORDER BY id LIMIT 1`,
    ).get() as Record<string, unknown>;
    const ref = { agent: "opencode", locator: `${path}#part`, path, format: "rows" } as const;
    const bytes = new TextEncoder().encode(JSON.stringify({ table: "part", ...row }) + "\n");
    const parts = opencode.toolOf!(bytes, ref);
    assert.deepEqual(parts?.calls, [{
      id: "toolu_01Vb3wqE5tXg2LmN8cYhJ6uD",
      name: "bash",
      input: "bun test test/upload.test.ts\nRun the upload tests",
    }]);
    assert.match(parts?.output ?? "", /^bun test v1\.3\.2\n[\s\S]*2 pass/);
    const text = db.prepare(`SELECT * FROM part WHERE data LIKE '%"type":"text"%' LIMIT 1`)
      .get() as Record<string, unknown>;
    const plain = new TextEncoder().encode(JSON.stringify({ table: "part", ...text }) + "\n");
    assert.equal(opencode.toolOf!(plain, ref), null);
  } finally {
    db.close();
    await world.cleanup();
  }
});
