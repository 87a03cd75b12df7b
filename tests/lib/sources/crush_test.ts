// Capture of Crush: each project's `.crush/crush.db` found through Crush's `projects.json`, its
// sessions and messages read from a private snapshot, a message updated in place stored as a
// newer revision (found once, shown once), and rows logbook cannot read kept as drift. The
// databases are real ones Crush wrote (fixtures/crush/MANIFEST.json), of two schemas.

import {
  conversation,
  found,
  readersAgree,
  rowsStoredExactly,
  said,
  shown,
  usageBySession,
} from "./_shown.ts";
import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { envFrom } from "../../../lib/env.ts";
import { READERS } from "../../../lib/agents.ts";
import { adapterOf } from "../../../lib/sources/adapter.ts";
import { crush } from "../../../lib/sources/crush.ts";
import type { DiscoverContext } from "../../../lib/sources/adapter.ts";
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

/** mcpfier's database (Crush of August 2025): a turn that failed, and a session with tools. */
const FAILED_ID = "87c36ae3-2d64-4abb-9815-621854431aa5";
const LSP_ID = "536e738f-87d4-402f-9934-0d9ece3156a9";
/** cisco-auto's database (Crush of April 2026): a session whose prompt is a paste. */
const PLAN_ID = "05193330-a419-4f38-a955-8ea6c72cccc2";
const FAILED = `crush:${FAILED_ID}`;
const LSP = `crush:${LSP_ID}`;
const PLAN = `crush:${PLAN_ID}`;
/** The LSP session's first answer with words, and when it was made. */
const ANSWER_ID = "90f114a0-98ad-43a7-b9f4-30cd14c77b73";
const ANSWER_AT = 1754568974;
const ANSWER = 'The unused import issue with "fmt" has been resolved now, as it appears the ' +
  "import actually wasn't necessary based on its absence in the file. Here is what I did to clean " +
  "up the project:";

interface CrushWorld extends World {
  /** The two projects, copies of fixtures/crush/mcpfier and fixtures/crush/cisco-auto. */
  project: string;
  planProject: string;
  db: string;
  planDb: string;
}

/**
 * A world whose Crush global data dir lists both projects (and one that is gone), as Crush's
 * `projects.json` does.
 */
async function crushWorld(): Promise<CrushWorld> {
  const world = await makeWorld();
  const project = join(world.dir, "work", "mcpfier");
  const planProject = join(world.dir, "work", "cisco-auto");
  cpSync(join(FIXTURES, "crush", "mcpfier"), project, { recursive: true });
  cpSync(join(FIXTURES, "crush", "cisco-auto"), planProject, { recursive: true });
  const global = join(world.dir, "crush-global");
  Deno.mkdirSync(global, { recursive: true });
  const entry = (path: string, at: string) => ({
    path,
    data_dir: join(path, ".crush"),
    last_accessed: at,
  });
  Deno.writeTextFileSync(
    join(global, "projects.json"),
    JSON.stringify(
      {
        projects: [
          entry(project, "2025-08-07T12:17:00Z"),
          entry(planProject, "2026-04-01T22:52:00Z"),
          entry(join(world.dir, "gone"), "2025-07-01T10:00:00Z"),
        ],
      },
      null,
      2,
    ),
  );
  world.vars = { ...world.vars, CRUSH_GLOBAL_DATA: global };
  world.env = envFrom(world.vars);
  return {
    ...world,
    project,
    planProject,
    db: join(project, ".crush", "crush.db"),
    planDb: join(planProject, ".crush", "crush.db"),
  };
}

const LSP_SAID = [
  "message/user: review this project using the go lsp and fix imports",
  "tool_call/assistant: bash",
  "tool_result/-: no output",
  "tool_call/assistant: view",
  "tool_result/-: <file>",
  "tool_call/assistant: multiedit",
  "tool_result/-: <result>",
  "tool_call/assistant: edit",
  "tool_result/-: old_string not found in file. Make sure it matches exactly, including " +
  "whitespace and line breaks",
  `message/assistant: ${ANSWER}`,
  "message/user: yes",
  "tool_call/assistant: multiedit",
  "tool_result/-: <result>",
  "message/assistant: Here are the updates made to the `mcpfier_test.go`:",
];

const PLAN_SAID = [
  // The prompt is a pasted file: its words are the prompt's.
  "message/user: Perfecto. Aquí tienes el checklist técnico, ya aterrizado para implementación " +
  "real.",
  "message/assistant: He revisado el checklist técnico. Este es un plan muy completo y realista. " +
  "Voy a empezar por **Fase 1** (la fuente de verdad de topología), que es la base para todo lo " +
  "demás.",
  // Each result after the calls that made it, though Crush finished the calls' row after them.
  "tool_result/-: <file>",
  "tool_result/-: <file>",
  "tool_result/-: <file>",
  "message/assistant: Creo un plan de trabajo. El problema es que `main.ts` está bien (la función " +
  "`collectLinks()` funciona), pero hay inconsistencias en cómo se aplican snapshots y en los " +
  "tipos. Voy a empezar:",
  "tool_result/-: Todo list updated successfully.",
  "message/assistant: Problema 1: En `TopologyCache.handleEvent()` línea 103, espera " +
  "`Array.isArray(parsed.links)`, pero los tipos dicen que `links` debe ser " +
  "`Record<string, LinkState>`. Debo arreglar esto:",
];

Deno.test("each row of a real Crush database is a record of its kind and role, in its session's conversation, in the order Crush made them", async () => {
  const world = await crushWorld();
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(summary.errors, []);
    assert.deepEqual(summary.drift, []);
    // A turn that failed at the provider: the prompt, then Crush's error as an event.
    assert.deepEqual(said(world, FAILED), [
      "message/user: `Please analyze this codebase and create a **CRUSH.md** file containing:",
      "event/assistant: API Error",
    ]);
    const error = shown(world, FAILED).at(-1)!;
    assert.match(error.text, /Your credit balance is too low to access the Anthropic API/);
    assert.deepEqual(said(world, LSP), LSP_SAID);
    assert.deepEqual(
      shown(world, LSP).map((r) => `${r.kind} ${r.ts}`),
      [
        "meta 2025-08-07T12:15:53.000Z",
        "message 2025-08-07T12:15:53.000Z",
        "tool_call 2025-08-07T12:15:53.000Z",
        "tool_result 2025-08-07T12:15:56.000Z",
        "tool_call 2025-08-07T12:15:56.000Z",
        "tool_result 2025-08-07T12:15:59.000Z",
        "tool_call 2025-08-07T12:15:59.000Z",
        "tool_result 2025-08-07T12:16:03.000Z",
        "tool_call 2025-08-07T12:16:03.000Z",
        "tool_result 2025-08-07T12:16:14.000Z",
        "message 2025-08-07T12:16:14.000Z",
        "message 2025-08-07T12:16:23.000Z",
        "tool_call 2025-08-07T12:16:23.000Z",
        "tool_result 2025-08-07T12:16:28.000Z",
        "message 2025-08-07T12:16:28.000Z",
      ],
    );
    assert.deepEqual(said(world, PLAN), PLAN_SAID);
    // Crush left every title at its placeholder "New Session": the first prompt titles them.
    const titles = [FAILED, LSP, PLAN].map((key) => conversation(world, key).title);
    assert.deepEqual(titles, [
      "`Please analyze this codebase and create a **CRUSH.md** file containing:",
      "review this project using the go lsp and fix imports",
      "Perfecto. Aquí tienes el checklist técnico, ya aterrizado para implementación…",
    ]);
    for (
      const [key, cwd, schema] of [
        [FAILED, world.project, "schema 20250627000000"],
        [LSP, world.project, "schema 20250627000000"],
        [PLAN, world.planProject, "schema 20260127000000"],
      ] as const
    ) {
      const c = conversation(world, key);
      assert.equal(c.cwd, cwd, key);
      assert.equal(c.agent_version, schema, key);
      assert.equal(c.parent_key, null, key);
    }
    assert.equal(conversation(world, LSP).first_ts, 1754568953000);
    assert.equal(conversation(world, PLAN).first_ts, 1775083244000);
    // The words of each: once each, in its conversation.
    for (
      const [phrase, key] of [
        ["CRUSH.md", FAILED],
        ["credit balance", FAILED],
        ["fix imports", LSP],
        ["old_string not found", LSP],
        ["aterrizado", PLAN],
        ["collectLinks", PLAN],
      ] as const
    ) {
      assert.deepEqual(found(world, phrase), [key], phrase);
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("usage: each Crush session's tokens and cost, one call a session, a newer revision replacing it", async () => {
  const world = await crushWorld();
  try {
    await captureWorld(world);
    // The failed session used nothing; the plan's cost is 0 as Crush recorded it (a Copilot
    // model): its tokens are not priced (no model is named).
    assert.deepEqual(await usageBySession(world), [
      [LSP, 19235, 296, 0.47697, 1],
      [PLAN, 75188, 72, null, 1],
    ]);
    // Crush goes on in the session: the row's new totals replace the old, not add to them.
    write(
      world,
      "UPDATE sessions SET prompt_tokens = 21000, completion_tokens = 400, cost = 0.53 WHERE id = ?",
      LSP_ID,
    );
    await captureWorld(world);
    assert.deepEqual(await usageBySession(world), [
      [LSP, 21000, 400, 0.53, 1],
      [PLAN, 75188, 72, null, 1],
    ]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("rows Crush did not write as logbook knows them are drift, kept raw; the rest is read", async () => {
  const world = await crushWorld();
  try {
    // Constructed rows, in the newer schema: a part type Crush does not write, parts cut short
    // so they are not JSON, then a plain prompt.
    const insert = (id: string, parts: string, at: number) =>
      writeDb(
        world.planDb,
        `INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)
         VALUES (?, ?, 'user', ?, ?, ?)`,
        id,
        PLAN_ID,
        parts,
        at,
        at,
      );
    insert(
      "a1b2c3d4-0000-4000-8000-000000000001",
      JSON.stringify([{ type: "hologram", data: { text: "plasma-gazebo" } }]),
      1775083300,
    );
    insert(
      "a1b2c3d4-0000-4000-8000-000000000002",
      '[{"type":"text","data":{"text":"nebulark',
      1775083301,
    );
    insert(
      "a1b2c3d4-0000-4000-8000-000000000003",
      JSON.stringify([{
        type: "text",
        data: { text: "Still read after the odd rows: saffronel." },
      }]),
      1775083302,
    );
    const summary = await captureWorld(world);
    const drift = summary.drift.map((d) => `${d.category}: ${d.detail}`).sort();
    assert.deepEqual(drift, [
      "unknown_type: part/hologram",
      "unparsable: a message whose parts are not JSON",
    ]);
    assert.deepEqual(found(world, "plasma-gazebo"), []);
    assert.deepEqual(found(world, "nebulark"), []);
    const odd = shown(world, PLAN).slice(-3);
    assert.deepEqual(odd.map((r) => r.kind), ["meta", "meta", "message"]);
    assert.ok(new TextDecoder().decode(odd[0]!.raw).includes("plasma-gazebo"));
    assert.ok(new TextDecoder().decode(odd[1]!.raw).includes("nebulark"));
    assert.deepEqual(said(world, PLAN), [
      ...PLAN_SAID,
      "message/user: Still read after the odd rows: saffronel.",
    ]);
    assert.ok(summary.drift.every((d) => d.version === "schema 20260127000000"));
  } finally {
    await world.cleanup();
  }
});

Deno.test("a sub-agent's session and the title generator's are children of the session that made them", async () => {
  const world = await crushWorld();
  try {
    // Constructed: none of the real databases holds one. Ids as Crush makes them.
    const child = `${ANSWER_ID}$$call_7Bog1bKnEOsdYilPSzxwazIE`;
    for (
      const [id, title] of [
        [child, "New Agent Session"],
        [`title-${LSP_ID}`, "Generate a title"],
      ] as const
    ) {
      write(
        world,
        `INSERT INTO sessions (id, parent_session_id, title, updated_at, created_at)
         VALUES (?, ?, ?, 1754569100, 1754569100)`,
        id,
        LSP_ID,
        title,
      );
    }
    write(
      world,
      `INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)
       VALUES ('c0ffee00-0000-4000-8000-000000000001', ?, 'user', ?, 1754569100, 1754569100)`,
      child,
      JSON.stringify([{ type: "text", data: { text: "Find glimmerfane in the tests." } }]),
    );
    await captureWorld(world);
    const helper = conversation(world, `crush:${child}`);
    assert.equal(helper.parent_key, LSP);
    assert.equal(helper.subagent, 1);
    assert.equal(helper.agent_type, "agent");
    assert.equal(helper.cwd, world.project);
    assert.equal(helper.title, "Find glimmerfane in the tests.");
    const titler = conversation(world, `crush:title-${LSP_ID}`);
    assert.equal(titler.parent_key, LSP);
    assert.equal(titler.agent_type, "title");
  } finally {
    await world.cleanup();
  }
});

Deno.test("each record holds its row exactly: every column as Crush's database has it", async () => {
  const world = await crushWorld();
  try {
    await captureWorld(world);
    // No revisions: nothing changed.
    assert.equal(rowsStoredExactly(world, world.db, [FAILED, LSP]), 18);
    assert.equal(rowsStoredExactly(world, world.planDb, [PLAN]), 9);
  } finally {
    await world.cleanup();
  }
});

Deno.test("READERS give every Crush record the text its adapter gives", async () => {
  const world = await crushWorld();
  try {
    await captureWorld(world);
    withStore(world, (store, ctx) => {
      assert.ok(readersAgree(store, ctx, "crush").records > 25);
      const sources = store.stmt("SELECT locator FROM sources WHERE agent = 'crush' ORDER BY id")
        .all() as { locator: string }[];
      assert.deepEqual(sources.map((s) => s.locator), [world.db, world.planDb]);
      assert.equal(adapterOf(READERS, "crush", world.db)?.agent, "crush");
    });
  } finally {
    await world.cleanup();
  }
});

/** Runs `sql` on the Crush database at `path`, as Crush would write it. */
function writeDb(path: string, sql: string, ...params: (string | number | null)[]): void {
  const db = new DatabaseSync(path);
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

/** Runs `sql` on the world's mcpfier database. */
function write(world: CrushWorld, sql: string, ...params: (string | number | null)[]): void {
  writeDb(world.db, sql, ...params);
}

const PARTS = (text: string) =>
  JSON.stringify([
    { type: "text", data: { text } },
    { type: "finish", data: { reason: "stop", time: ANSWER_AT + 4 } },
  ]);

Deno.test("a message Crush updates in place is a newer revision: found once, shown once, in its place", async () => {
  const world = await crushWorld();
  try {
    // The database as it was while the answer streamed: the rows after it not written yet, and
    // the answer's first words only. Stamps as Crush's triggers give them, fixed here (they would
    // stamp the cut with today's time).
    write(world, "DROP TRIGGER update_messages_updated_at");
    write(world, "DROP TRIGGER update_sessions_updated_at");
    const db = new DatabaseSync(world.db);
    const later = db.prepare(
      `SELECT * FROM messages WHERE session_id = ? AND created_at > ? ORDER BY rowid`,
    ).all(LSP_ID, ANSWER_AT);
    db.close();
    write(world, "DELETE FROM messages WHERE session_id = ? AND created_at > ?", LSP_ID, ANSWER_AT);
    write(
      world,
      "UPDATE messages SET parts = ?, finished_at = NULL, updated_at = ? WHERE id = ?",
      JSON.stringify([{ type: "text", data: { text: "The unused import issue with copperwh" } }]),
      ANSWER_AT,
      ANSWER_ID,
    );
    await captureWorld(world);
    assert.deepEqual(found(world, "copperwh"), [LSP]);
    assert.deepEqual(found(world, "marmalith"), []);
    // Crush finishes the answer, the session goes on, and is resumed (`crush --session <id>`):
    // each change stamped later than any before, as Crush's clock stamps them.
    const t2 = 1754600000;
    write(
      world,
      "UPDATE messages SET parts = ?, finished_at = ?, updated_at = ? WHERE id = ?",
      PARTS(`${ANSWER} marmalith.`),
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
      LSP_ID,
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
      FAILED_ID,
      JSON.stringify([{ type: "text", data: { text: "Stamped in the past: sepiaknot." } }]),
      1754500000,
      1754500000,
    );
    const second = await captureWorld(world);
    assert.deepEqual(second.errors, []);
    assert.deepEqual(found(world, "marmalith"), [LSP]);
    assert.deepEqual(found(world, "copperwh"), []);
    assert.deepEqual(found(world, "cobaltwren"), [LSP]);
    assert.deepEqual(found(world, "sepiaknot"), [FAILED]);
    // Nothing changed since: a third pass stores nothing.
    assert.equal((await captureWorld(world)).records, 0);
    assert.deepEqual(said(world, LSP), [
      ...LSP_SAID.slice(0, 9),
      `message/assistant: ${ANSWER} marmalith.`,
      ...LSP_SAID.slice(10),
      "message/user: Carry on, cobaltwren.",
    ]);
    // Three prompts and two answers with words: the revision is not another message.
    assert.equal(conversation(world, LSP).message_count, 5);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a row changed twice in the same second is read again: its stamp alone does not tell", async () => {
  const world = await crushWorld();
  try {
    // Crush's trigger stamps the second of each change; fix it so both changes share one.
    write(world, "DROP TRIGGER update_messages_updated_at");
    const stamp = 1754599000;
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
    assert.deepEqual(found(world, "ochrefinch"), [LSP]);
    assert.deepEqual(found(world, "umberquill"), [LSP]);
    const texts = said(world, LSP).filter((s) => s.includes("umberquill"));
    assert.deepEqual(texts, ["message/assistant: First words: umberquill. Then more: ochrefinch."]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("toolOf gives a Crush tool call its input and a tool row its results' ids and errors", async () => {
  const world = await crushWorld();
  try {
    await captureWorld(world);
    const source = { agent: "crush", locator: world.db, path: world.db, format: "rows" as const };
    const tools = shown(world, LSP).map((r) => crush.toolOf!(r.raw, source)).filter((t) =>
      t !== null
    );
    const root = "/Users/example/code/go/src/github.com/example/mcpfier";
    const call = (id: string, name: string, input: string) => ({ id, name, input });
    const calls = (...list: ReturnType<typeof call>[]) => ({
      calls: list,
      results: [],
      output: null,
    });
    const results = (...list: [string, boolean][]) => ({
      calls: [],
      results: list.map(([id, error]) => ({ id, error })),
      output: null,
    });
    assert.deepEqual(tools.slice(0, 8), [
      calls(
        call("call_YXMZXHckJE0vgomPS02lQmic", "bash", "go mod tidy"),
        call("call_7Bog1bKnEOsdYilPSzxwazIE", "ls", root),
      ),
      results(["call_YXMZXHckJE0vgomPS02lQmic", false], ["call_7Bog1bKnEOsdYilPSzxwazIE", false]),
      calls(
        call("call_oMYQTONZKAUkrdCHAmi30nFL", "view", `${root}/mcpfier.go`),
        call("call_xLiYxnbISqOqOvl0ceOCEn5J", "view", `${root}/mcpfier_test.go`),
      ),
      results(["call_oMYQTONZKAUkrdCHAmi30nFL", false], ["call_xLiYxnbISqOqOvl0ceOCEn5J", false]),
      tools[4],
      results(["call_rXelyzW8KLit4wwJoc900qhh", false]),
      calls(call("call_7fmbqrgXGxf8FGHVC7YtuqJZ", "edit", `${root}/mcpfier.go\n\t"fmt"\n\n`)),
      // The edit that failed: Crush marks its result an error.
      results(["call_7fmbqrgXGxf8FGHVC7YtuqJZ", true]),
    ]);
    assert.equal(tools[4]!.calls[0]!.name, "multiedit");
    assert.equal(tools.length, 10);
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex, search and show read a Crush project end to end; resume prints crush --session", async () => {
  const world = await crushWorld();
  try {
    const reindex = await runCli("reindex", [], world.vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    const hits = await runCli(
      "search",
      ["fix imports", "--agent", "crush", "--json"],
      world.vars,
    );
    assert.equal(hits.code, 0, hits.stderr);
    assert.deepEqual(
      hits.stdout.trim().split("\n").map((l) => JSON.parse(l).conversation),
      [LSP],
    );
    const show = await runCli("show", [LSP, "--json", "--limit", "100"], world.vars);
    assert.equal(show.code, 0, show.stderr);
    const page = JSON.parse(show.stdout);
    assert.equal(page.conversation.cwd, world.project);
    const messages = page.records.filter((r: { text: string }) => r.text.trim() !== "")
      .map((r: { kind: string; role: string | null; text: string }) =>
        `${r.kind}/${r.role ?? "-"}: ${r.text.split("\n")[0]}`
      );
    assert.deepEqual(messages, LSP_SAID);
    const resume = await runCli("resume", [LSP, "--print"], world.vars);
    assert.equal(resume.code, 0, resume.stderr);
    assert.match(resume.stdout, new RegExp(`crush --session '?${LSP_ID}'?`));
  } finally {
    await world.cleanup();
  }
});

Deno.test("a root that is a project folder or its .crush folder is read without projects.json", async () => {
  for (const root of ["project", "project/.crush", "project/.crush/crush.db"]) {
    const world = await makeWorld();
    try {
      cpSync(join(FIXTURES, "crush", "mcpfier"), join(world.dir, "project"), { recursive: true });
      world.vars = { ...world.vars, CRUSH_GLOBAL_DATA: join(world.dir, root) };
      world.env = envFrom(world.vars);
      await captureWorld(world);
      assert.deepEqual(found(world, "fix imports"), [LSP], root);
      assert.equal(conversation(world, LSP).cwd, join(world.dir, "project"));
    } finally {
      await world.cleanup();
    }
  }
});

Deno.test("a project logbook knows is looked in for its .crush/crush.db, listed by Crush or not", async () => {
  const world = await makeWorld();
  try {
    const project = join(world.dir, "elsewhere", "app");
    cpSync(join(FIXTURES, "crush", "mcpfier"), project, { recursive: true });
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
    // Crush running: its database in WAL mode (as Crush keeps it), a new prompt not checkpointed.
    const writer = new DatabaseSync(world.db);
    try {
      writer.exec("PRAGMA journal_mode = WAL");
      writer.prepare(
        `INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)
         VALUES (?, ?, 'user', ?, ?, ?)`,
      ).run(
        "f54d6b70-8c13-4e2a-9b46-5d7e8f9a0b1c",
        LSP_ID,
        JSON.stringify([{ type: "text", data: { text: "Still in the WAL: saffron-trellis." } }]),
        1754570100,
        1754570100,
      );
      assert.ok(Deno.statSync(`${world.db}-wal`).size > 0, "the writer keeps a WAL");
      const running = filesIn(dataDir);
      const summary = await captureWorld(world);
      assert.deepEqual(summary.errors, []);
      assert.deepEqual(found(world, "saffron-trellis"), [LSP]);
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
    assert.deepEqual(found(world, "fix imports"), [LSP]);
    assert.deepEqual(found(world, "aterrizado"), [PLAN]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("reading in small budgets stores each row once, as one whole read does, in the same order", async () => {
  const whole = await crushWorld();
  const small = await crushWorld();
  try {
    await captureWorld(whole);
    const ctx = loadContext({ env: small.env });
    const store = openStore(ctx);
    try {
      await runPass(store, ctx, { limits: { rawBudget: 1500, textBudget: 300 } });
      // And again after Crush wrote more, still in small budgets.
      writeDb(
        small.db,
        `INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)
         VALUES (?, ?, 'user', ?, ?, ?)`,
        "0e6f7a81-9d24-4f3b-8c57-6e8f9a0b1c2d",
        LSP_ID,
        JSON.stringify([{ type: "text", data: { text: "One more: tamarindel." } }]),
        1754570200,
        1754570200,
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
    // The new message, and its session's row (Crush's trigger counted the message and stamped it).
    assert.equal(got.length, raws(whole).length + 2);
    assert.deepEqual(found(small, "tamarindel"), [LSP]);
    assert.deepEqual(said(small, PLAN), said(whole, PLAN));
    assert.deepEqual(said(small, LSP), [
      ...said(whole, LSP),
      "message/user: One more: tamarindel.",
    ]);
  } finally {
    await whole.cleanup();
    await small.cleanup();
  }
});
