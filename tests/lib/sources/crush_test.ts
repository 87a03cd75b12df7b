// Capture of Crush: each project's `.crush/crush.db` found through Crush's `projects.json`, its
// sessions and messages read from a private snapshot, a message updated in place stored as a
// newer revision (found once, shown once), and rows logbook cannot read kept as drift.

import { conversation, found, readersAgree, said, shown } from "./_shown.ts";
import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { envFrom } from "../../../lib/env.ts";
import { READERS } from "../../../lib/agents.ts";
import { adapterOf } from "../../../lib/sources/adapter.ts";
import { crush } from "../../../lib/sources/crush.ts";
import type { DiscoverContext } from "../../../lib/sources/adapter.ts";
import { IDS } from "../../../fixtures/crush/make_db.ts";
import { loadContext, openStore } from "../../../lib/context.ts";
import {
  captureWorld,
  FIXTURES,
  makeWorld,
  runCli,
  runPass,
  withStore,
  type World,
} from "../../_helpers.ts";

const MAIN = `crush:${IDS.main}`;
const CHILD = `crush:${IDS.child}`;
const TITLE_CHILD = `crush:${IDS.titleChild}`;
const ODD = `crush:${IDS.drift}`;
const ANSWER_ID = "5fa3b1c6-e279-4ad4-bb68-a3c1b2e06495";

interface CrushWorld extends World {
  project: string;
  db: string;
}

/**
 * A world whose Crush global data dir lists one project, a copy of `fixtures/crush/project`
 * (its `.crush/crush.db`), as Crush's `projects.json` does.
 */
async function crushWorld(): Promise<CrushWorld> {
  const world = await makeWorld();
  const project = join(world.dir, "work", "notes-app");
  cpSync(join(FIXTURES, "crush", "project"), project, { recursive: true });
  const global = join(world.dir, "crush-global");
  Deno.mkdirSync(global, { recursive: true });
  Deno.writeTextFileSync(
    join(global, "projects.json"),
    JSON.stringify(
      {
        projects: [{
          path: project,
          data_dir: join(project, ".crush"),
          last_accessed: "2026-09-10T08:12:40Z",
        }, {
          path: join(world.dir, "gone"),
          data_dir: join(world.dir, "gone", ".crush"),
          last_accessed: "2026-09-01T10:00:00Z",
        }],
      },
      null,
      2,
    ),
  );
  world.vars = { ...world.vars, CRUSH_GLOBAL_DATA: global };
  world.env = envFrom(world.vars);
  return { ...world, project, db: join(project, ".crush", "crush.db") };
}

const MAIN_SAID = [
  "message/user: Please list the notes folder, quasarbeet.",
  "tool_call/assistant: The user wants the folder listed, lanternfig.",
  "tool_result/-: - /home/user/project/notes/",
  "message/assistant: The notes folder holds copperwhistle.md and driftmallow.md: marmalith.",
  "message/user: Ask a helper to find glimmerfane in the notes.",
  "tool_call/assistant: agent",
  "tool_result/-: glimmerfane is in driftmallow.md: tessellark.",
  "summary/-: Summary so far: the notes were listed and glimmerfane found, vintrope.",
];

Deno.test("each Crush row is a record of its kind and role, in its session's conversation", async () => {
  const world = await crushWorld();
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(summary.errors, []);
    assert.deepEqual(said(world, MAIN), MAIN_SAID);
    const main = conversation(world, MAIN);
    assert.equal(main.native_id, IDS.main);
    assert.equal(main.title, "List the notes folder");
    assert.equal(main.cwd, world.project);
    assert.equal(main.parent_key, null);
    assert.equal(main.subagent, 0);
    // The agent tool's session is a child of the session whose tool call made it.
    const child = conversation(world, CHILD);
    assert.equal(child.parent_key, MAIN);
    assert.equal(child.subagent, 1);
    assert.equal(child.cwd, world.project);
    assert.equal(child.title, "Find glimmerfane in the notes folder.");
    assert.deepEqual(said(world, CHILD), [
      "message/user: Find glimmerfane in the notes folder.",
      "message/assistant: glimmerfane is in driftmallow.md: tessellark.",
    ]);
    // So is the helper session that generated the title.
    assert.equal(conversation(world, TITLE_CHILD).parent_key, MAIN);
    for (
      const [phrase, key] of [
        ["quasarbeet", MAIN],
        ["lanternfig", MAIN],
        ["copperwhistle", MAIN],
        ["marmalith", MAIN],
        ["vintrope", MAIN],
        ["tessellark", MAIN],
        ["saffronel", ODD],
      ] as const
    ) {
      assert.ok(found(world, phrase).includes(key), `${phrase} in ${key}`);
    }
    // The sub-agent's answer is in its own session and in the tool result that returned it.
    assert.deepEqual(found(world, "tessellark").sort(), [CHILD, MAIN].sort());
  } finally {
    await world.cleanup();
  }
});

Deno.test("rows Crush did not write as logbook knows them are drift, kept raw; the rest is read", async () => {
  const world = await crushWorld();
  try {
    const summary = await captureWorld(world);
    const drift = summary.drift.map((d) => `${d.category}: ${d.detail}`).sort();
    assert.deepEqual(drift, [
      "unknown_type: part/hologram",
      "unparsable: a message whose parts are not JSON",
    ]);
    assert.deepEqual(found(world, "plasma-gazebo"), []);
    assert.deepEqual(found(world, "nebulark"), []);
    const odd = shown(world, ODD);
    assert.deepEqual(odd.map((r) => r.kind), ["meta", "meta", "meta", "message"]);
    assert.ok(new TextDecoder().decode(odd[1]!.raw).includes("plasma-gazebo"));
    assert.ok(new TextDecoder().decode(odd[2]!.raw).includes("nebulark"));
    assert.deepEqual(said(world, ODD), ["message/user: Still read after the odd rows: saffronel."]);
    assert.ok(summary.drift.every((d) => d.version === "schema 20260127000000"));
  } finally {
    await world.cleanup();
  }
});

Deno.test("each record holds its row exactly: every column as Crush's database has it", async () => {
  const world = await crushWorld();
  try {
    await captureWorld(world);
    const db = new DatabaseSync(world.db, { readOnly: true });
    try {
      const rows = new Map<string, Record<string, unknown>>();
      for (const table of ["sessions", "messages"]) {
        const stmt = db.prepare(`SELECT * FROM ${table}`);
        stmt.setReadBigInts(true);
        for (const row of stmt.all()) rows.set(`${table}:${row.id}`, row);
      }
      const records = [MAIN, CHILD, TITLE_CHILD, ODD].flatMap((key) => shown(world, key));
      let compared = 0;
      for (const { raw } of records) {
        const text = new TextDecoder().decode(raw);
        assert.ok(text.endsWith("}\n"));
        const stored = JSON.parse(
          text,
          (_k, v, context?: { source?: string }) =>
            typeof v === "number" && context?.source && /^-?\d+$/.test(context.source)
              ? BigInt(context.source)
              : v,
        );
        const row = rows.get(`${stored.table}:${stored.id}`);
        assert.ok(row, `${stored.table} ${stored.id}`);
        const { table: _, ...columns } = stored;
        assert.deepEqual(Object.keys(columns), Object.keys(row));
        for (const [name, value] of Object.entries(row)) {
          // Integers exactly (as BigInt); a REAL that holds a whole number reads as an integer.
          const got = typeof value === "number" ? Number(columns[name]) : columns[name];
          assert.deepEqual(got, value, `${stored.id}.${name}`);
        }
        compared++;
      }
      // Every message and session, once each (no revisions: nothing changed).
      assert.equal(compared, rows.size);
    } finally {
      db.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("READERS give every Crush record the text its adapter gives", async () => {
  const world = await crushWorld();
  try {
    await captureWorld(world);
    withStore(world, (store, ctx) => {
      assert.ok(readersAgree(store, ctx, "crush").records > 15);
      const source = store.stmt("SELECT locator FROM sources WHERE agent = 'crush'").get() as {
        locator: string;
      };
      assert.equal(source.locator, world.db);
      assert.equal(adapterOf(READERS, "crush", source.locator)?.agent, "crush");
    });
  } finally {
    await world.cleanup();
  }
});

/** Runs `sql` on the world's Crush database, as Crush would write it. */
function write(world: CrushWorld, sql: string, ...params: (string | number | null)[]): void {
  const db = new DatabaseSync(world.db);
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

const PARTS = (text: string) =>
  JSON.stringify([
    { type: "text", data: { text } },
    { type: "finish", data: { reason: "end_turn", time: 1789093700 } },
  ]);

Deno.test("a message Crush updates in place is a newer revision: found once, shown once, in its place", async () => {
  const world = await crushWorld();
  try {
    // The database as it was while the answer streamed: the rows after it not written yet, and
    // the answer's first words only. Stamps as Crush's trigger gives them, fixed here.
    write(world, "DROP TRIGGER update_messages_updated_at");
    const db = new DatabaseSync(world.db);
    const later = db.prepare(
      `SELECT * FROM messages WHERE session_id = ? AND created_at > 1789093632 ORDER BY rowid`,
    ).all(IDS.main);
    db.close();
    write(world, "DELETE FROM messages WHERE session_id = ? AND created_at > 1789093632", IDS.main);
    write(
      world,
      "UPDATE messages SET parts = ?, finished_at = NULL, updated_at = ? WHERE id = ?",
      JSON.stringify([{ type: "text", data: { text: "The notes folder holds copperwh" } }]),
      1789093632,
      ANSWER_ID,
    );
    await captureWorld(world);
    assert.deepEqual(found(world, "copperwh"), [MAIN]);
    assert.deepEqual(found(world, "marmalith"), []);
    // Crush finishes the answer, the session goes on, and is resumed (`crush --session <id>`):
    // each change stamped later than any before, as Crush's clock stamps them.
    const t2 = 1789100000;
    write(
      world,
      "UPDATE messages SET parts = ?, finished_at = ?, updated_at = ? WHERE id = ?",
      PARTS("The notes folder holds copperwhistle.md and driftmallow.md: marmalith."),
      t2,
      t2,
      ANSWER_ID,
    );
    later.forEach((row, i) => {
      const names = Object.keys(row);
      const values = names.map((n) => n === "updated_at" ? t2 + 1 + i : row[n]);
      write(
        world,
        `INSERT INTO messages (${names.join(", ")}) VALUES (${names.map(() => "?").join(", ")})`,
        ...values as (string | number | null)[],
      );
    });
    write(
      world,
      `INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)
       VALUES (?, ?, 'user', ?, ?, ?)`,
      "d32b394e-6af1-4c5c-b3e0-2b49a3681c1d",
      IDS.main,
      JSON.stringify([{ type: "text", data: { text: "Carry on, cobaltwren." } }]),
      t2 + 100,
      t2 + 100,
    );
    // A row another writer inserted with a stamp older than any read: found by its rowid.
    write(
      world,
      `INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)
       VALUES (?, ?, 'user', ?, ?, ?)`,
      "e43c4a5f-7b02-4d6d-84f1-3c5ab4792d2e",
      IDS.drift,
      JSON.stringify([{ type: "text", data: { text: "Stamped in the past: sepiaknot." } }]),
      1789000000,
      1789000000,
    );
    const second = await captureWorld(world);
    assert.deepEqual(second.errors, []);
    assert.deepEqual(found(world, "marmalith"), [MAIN]);
    assert.deepEqual(found(world, "copperwh"), []);
    assert.deepEqual(found(world, "cobaltwren"), [MAIN]);
    assert.deepEqual(found(world, "sepiaknot"), [ODD]);
    // Nothing changed since: a third pass stores nothing.
    assert.equal((await captureWorld(world)).records, 0);
    assert.deepEqual(said(world, MAIN), [...MAIN_SAID, "message/user: Carry on, cobaltwren."]);
    // Three prompts and one answer with words: the revision is not another message.
    assert.equal(conversation(world, MAIN).message_count, 4);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a row changed twice in the same second is read again: its stamp alone does not tell", async () => {
  const world = await crushWorld();
  try {
    // Crush's trigger stamps the second of each change; fix it so both changes share one.
    write(world, "DROP TRIGGER update_messages_updated_at");
    const stamp = 1789099000;
    write(
      world,
      "UPDATE messages SET parts = ?, updated_at = ? WHERE id = ?",
      PARTS("First words: umberquill."),
      stamp,
      ANSWER_ID,
    );
    await captureWorld(world);
    write(
      world,
      "UPDATE messages SET parts = ?, updated_at = ? WHERE id = ?",
      PARTS("First words: umberquill. Then more: ochrefinch."),
      stamp,
      ANSWER_ID,
    );
    await captureWorld(world);
    assert.deepEqual(found(world, "ochrefinch"), [MAIN]);
    assert.deepEqual(found(world, "umberquill"), [MAIN]);
    const texts = said(world, MAIN).filter((s) => s.includes("umberquill"));
    assert.deepEqual(texts, ["message/assistant: First words: umberquill. Then more: ochrefinch."]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("toolOf gives a Crush tool call its input and a tool row its result's id", async () => {
  const world = await crushWorld();
  try {
    await captureWorld(world);
    const records = shown(world, MAIN);
    const source = { agent: "crush", locator: world.db, path: world.db, format: "rows" as const };
    const tools = records.map((r) => crush.toolOf!(r.raw, source)).filter((t) => t !== null);
    assert.deepEqual(tools, [
      {
        calls: [{ id: "chatcmpl-tool-af5cd1a21895b142", name: "ls", input: "notes" }],
        results: [],
        output: null,
      },
      {
        calls: [],
        results: [{ id: "chatcmpl-tool-af5cd1a21895b142", error: false }],
        output: null,
      },
      {
        calls: [{
          id: IDS.agentCall,
          name: "agent",
          input: "Find glimmerfane in the notes folder.",
        }],
        results: [],
        output: null,
      },
      { calls: [], results: [{ id: IDS.agentCall, error: false }], output: null },
    ]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex, search and show read a Crush project end to end; resume prints crush --session", async () => {
  const world = await crushWorld();
  try {
    const reindex = await runCli("reindex", [], world.vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    const hits = await runCli("search", ["marmalith", "--agent", "crush", "--json"], world.vars);
    assert.equal(hits.code, 0, hits.stderr);
    assert.deepEqual(
      hits.stdout.trim().split("\n").map((l) => JSON.parse(l).conversation),
      [MAIN],
    );
    const show = await runCli("show", [MAIN, "--json", "--limit", "100"], world.vars);
    assert.equal(show.code, 0, show.stderr);
    const page = JSON.parse(show.stdout);
    assert.equal(page.conversation.cwd, world.project);
    const messages = page.records.filter((r: { text: string }) => r.text.trim() !== "")
      .map((r: { kind: string; role: string | null; text: string }) =>
        `${r.kind}/${r.role ?? "-"}: ${r.text.split("\n")[0]}`
      );
    assert.deepEqual(messages, MAIN_SAID);
    const resume = await runCli("resume", [MAIN, "--print"], world.vars);
    assert.equal(resume.code, 0, resume.stderr);
    assert.match(resume.stdout, new RegExp(`crush --session '?${IDS.main}'?`));
  } finally {
    await world.cleanup();
  }
});

Deno.test("a root that is a project folder or its .crush folder is read without projects.json", async () => {
  for (const root of ["project", "project/.crush", "project/.crush/crush.db"]) {
    const world = await makeWorld();
    try {
      cpSync(join(FIXTURES, "crush", "project"), join(world.dir, "project"), { recursive: true });
      world.vars = { ...world.vars, CRUSH_GLOBAL_DATA: join(world.dir, root) };
      world.env = envFrom(world.vars);
      await captureWorld(world);
      assert.deepEqual(found(world, "marmalith"), [MAIN], root);
      assert.equal(conversation(world, MAIN).cwd, join(world.dir, "project"));
    } finally {
      await world.cleanup();
    }
  }
});

Deno.test("a project logbook knows is looked in for its .crush/crush.db, listed by Crush or not", async () => {
  const world = await makeWorld();
  try {
    const project = join(world.dir, "elsewhere", "app");
    cpSync(join(FIXTURES, "crush", "project"), project, { recursive: true });
    const ctx: DiscoverContext = {
      env: world.env,
      extraRoots: {},
      skipped: new Map<string, number>(),
      projects: [project, join(world.dir, "no-such-project")],
    };
    const found: string[] = [];
    for await (const source of crush.discover(ctx)) found.push(source.path);
    assert.deepEqual(found, [join(project, ".crush", "crush.db")]);
  } finally {
    await world.cleanup();
  }
});

/** Names, sizes and mtimes of the files in `dir`. */
function filesIn(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of Deno.readDirSync(dir)) {
    const stat = Deno.statSync(join(dir, entry.name));
    out[entry.name] = `${stat.size} ${stat.mtime?.getTime()}`;
  }
  return out;
}

Deno.test("capture reads rows still in Crush's WAL and creates or changes nothing beside its database", async () => {
  const world = await crushWorld();
  try {
    const dataDir = join(world.project, ".crush");
    // Crush running: its database in WAL mode, a new prompt not checkpointed yet.
    const writer = new DatabaseSync(world.db);
    try {
      writer.exec("PRAGMA journal_mode = WAL");
      writer.prepare(
        `INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)
         VALUES (?, ?, 'user', ?, ?, ?)`,
      ).run(
        "f54d6b70-8c13-4e2a-9b46-5d7e8f9a0b1c",
        IDS.main,
        JSON.stringify([{ type: "text", data: { text: "Still in the WAL: saffron-trellis." } }]),
        1789093800,
        1789093800,
      );
      assert.ok(Deno.statSync(`${world.db}-wal`).size > 0, "the writer keeps a WAL");
      const running = filesIn(dataDir);
      const summary = await captureWorld(world);
      assert.deepEqual(summary.errors, []);
      assert.deepEqual(found(world, "saffron-trellis"), [MAIN]);
      assert.deepEqual(filesIn(dataDir), running, "-wal and -shm as they were, nothing new");
    } finally {
      writer.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a crush.db that is not a database is reported by its path; the other projects are read", async () => {
  const world = await crushWorld();
  try {
    const broken = join(world.dir, "work", "broken");
    Deno.mkdirSync(join(broken, ".crush"), { recursive: true });
    const brokenDb = join(broken, ".crush", "crush.db");
    Deno.writeTextFileSync(brokenDb, "this is not a database, only some words\n".repeat(200));
    const list = join(world.vars.CRUSH_GLOBAL_DATA!, "projects.json");
    const projects = JSON.parse(Deno.readTextFileSync(list));
    projects.projects.push({
      path: broken,
      data_dir: join(broken, ".crush"),
      last_accessed: "2026-09-10T09:00:00Z",
    });
    Deno.writeTextFileSync(list, JSON.stringify(projects));
    const summary = await captureWorld(world);
    assert.deepEqual(summary.errors.map((e) => e.locator), [brokenDb]);
    assert.match(summary.errors[0]!.message, new RegExp(`Crush database "${brokenDb}"`));
    assert.deepEqual(found(world, "marmalith"), [MAIN]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("reading in small budgets stores each row once, as one whole read does", async () => {
  const whole = await crushWorld();
  const small = await crushWorld();
  try {
    await captureWorld(whole);
    const ctx = loadContext({ env: small.env });
    const store = openStore(ctx);
    try {
      await runPass(store, ctx, { limits: { rawBudget: 1500, textBudget: 300 } });
      // And again after Crush wrote more, still in small budgets.
      write(
        small,
        `INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)
         VALUES (?, ?, 'user', ?, ?, ?)`,
        "0e6f7a81-9d24-4f3b-8c57-6e8f9a0b1c2d",
        IDS.main,
        JSON.stringify([{ type: "text", data: { text: "One more: tamarindel." } }]),
        1789093900,
        1789093900,
      );
      await runPass(store, ctx, { limits: { rawBudget: 1500, textBudget: 300 } });
    } finally {
      store.close();
    }
    const raws = (world: World) =>
      withStore(world, (store) =>
        (store.db.prepare(
          `SELECT CAST(r.raw AS TEXT) AS raw FROM records r JOIN sources s ON s.id = r.source_id
           WHERE s.agent = 'crush' AND r.seq = 0 ORDER BY raw`,
        ).all() as { raw: string }[]).map((r) => r.raw));
    const got = raws(small);
    assert.equal(new Set(got).size, got.length, "no row stored twice");
    assert.equal(got.length, raws(whole).length + 1);
    assert.deepEqual(found(small, "tamarindel"), [MAIN]);
  } finally {
    await whole.cleanup();
    await small.cleanup();
  }
});
