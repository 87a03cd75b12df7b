// Capture of Goose: its `sessions/sessions.db` read from a private snapshot, sessions read again
// when they change, each new message row once, a conversation Goose rewrites whole (deleted and
// inserted again) stored as newer revisions (found once, shown once), and rows logbook cannot
// read kept as drift.

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
import { goose } from "../../../lib/sources/goose.ts";
import { IDS } from "../../../fixtures/goose/make_db.ts";
import {
  captureWorld,
  FIXTURES,
  makeWorld,
  runCli,
  withStore,
  type World,
} from "../../_helpers.ts";

const MAIN = `goose:${IDS.main}`;
const CHILD = `goose:${IDS.child}`;
const ODD = `goose:${IDS.drift}`;

interface GooseWorld extends World {
  db: string;
}

/** A world whose `$GOOSE_PATH_ROOT` is a copy of `fixtures/goose/root`. */
async function gooseWorld(): Promise<GooseWorld> {
  const world = await makeWorld();
  const root = join(world.dir, "goose-root");
  cpSync(join(FIXTURES, "goose", "root"), root, { recursive: true });
  world.vars = { ...world.vars, GOOSE_PATH_ROOT: root };
  world.env = envFrom(world.vars);
  return { ...world, db: join(root, "data", "sessions", "sessions.db") };
}

const MAIN_SAID = [
  "message/user: Please list the notes folder, quasarbeet.",
  "tool_call/assistant: The user wants the folder listed, lanternfig.",
  "tool_result/-: copperwhistle.md",
  "message/assistant: The notes folder holds copperwhistle.md and driftmallow.md: marmalith.",
  "message/user: Ask a helper to find glimmerfane in the notes.",
  "tool_call/assistant: delegate",
  "tool_result/-: glimmerfane is in driftmallow.md: tessellark.",
];

Deno.test("a real sessions.db of Goose's schema 5 is read: its session in its folder, the CLI's placeholder name no title", async () => {
  // fixtures/goose/home-2025: the one sessions.db Goose wrote found public (Goose of December
  // 2025, schema 5: no message_id, parent_session_id, archived_at or cost), one session the CLI
  // made, no message in it yet.
  const world = await makeWorld();
  try {
    const home = join(world.dir, "home-2025");
    cpSync(join(FIXTURES, "goose", "home-2025"), home, { recursive: true });
    world.vars = { ...world.vars, XDG_DATA_HOME: join(home, ".local", "share") };
    world.env = envFrom(world.vars);
    const summary = await captureWorld(world);
    assert.deepEqual(summary.errors, []);
    assert.deepEqual(summary.drift, []);
    const session = conversation(world, "goose:20251202_1");
    assert.equal(session.cwd, "/Users/example/workspace/tmp/vsl");
    assert.equal(session.title, null);
    assert.equal(session.parent_key, null);
    assert.equal(session.subagent, 0);
    assert.equal(session.archived, 0);
    assert.equal(session.agent_version, "schema 5");
    assert.equal(session.first_ts, Date.parse("2025-12-02T16:58:55Z"));
    assert.deepEqual(shown(world, "goose:20251202_1").map((r) => r.kind), ["meta"]);
    // No tokens recorded yet: no usage.
    assert.deepEqual(await usageBySession(world), []);
  } finally {
    await world.cleanup();
  }
});

Deno.test("usage: each Goose session's accumulated tokens and cost, one call a session, a newer revision replacing it", async () => {
  const world = await gooseWorld();
  try {
    await captureWorld(world);
    // The sub-agent's session (250 and 50 tokens, $0.001) counts in its parent's line.
    assert.deepEqual(await usageBySession(world), [[MAIN, 72872 + 250, 2408 + 50, 0.0136, 2]]);
    const db = new DatabaseSync(world.db);
    try {
      db.prepare(
        `UPDATE sessions SET accumulated_input_tokens = 80000, accumulated_output_tokens = 3000,
         accumulated_cost = 0.02, updated_at = '2026-09-10 09:00:00' WHERE id = ?`,
      ).run(IDS.main);
    } finally {
      db.close();
    }
    await captureWorld(world);
    assert.deepEqual(await usageBySession(world), [[MAIN, 80000 + 250, 3000 + 50, 0.021, 2]]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("each Goose message is a record of its kind and role, in its session's conversation", async () => {
  const world = await gooseWorld();
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(summary.errors, []);
    assert.deepEqual(said(world, MAIN), MAIN_SAID);
    const main = conversation(world, MAIN);
    assert.equal(main.native_id, IDS.main);
    assert.equal(main.title, "List the notes folder");
    assert.equal(main.cwd, "/home/user/project");
    assert.equal(main.parent_key, null);
    assert.equal(main.subagent, 0);
    const child = conversation(world, CHILD);
    assert.equal(child.parent_key, MAIN);
    assert.equal(child.subagent, 1);
    assert.equal(child.cwd, "/home/user/project");
    assert.deepEqual(said(world, CHILD), [
      "message/user: Find glimmerfane in the notes folder.",
      "message/assistant: glimmerfane is in driftmallow.md: tessellark.",
    ]);
    // A session Goose has not named takes its first prompt.
    assert.equal(conversation(world, ODD).title, "Still read after the odd rows: saffronel.");
    for (const phrase of ["quasarbeet", "lanternfig", "marmalith", "ls notes"]) {
      assert.deepEqual(found(world, phrase), [MAIN], phrase);
    }
    assert.deepEqual(found(world, "tessellark").sort(), [CHILD, MAIN].sort());
    assert.deepEqual(found(world, "saffronel"), [ODD]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("rows Goose did not write as logbook knows them are drift, kept raw; the rest is read", async () => {
  const world = await gooseWorld();
  try {
    const summary = await captureWorld(world);
    const drift = summary.drift.map((d) => `${d.category}: ${d.detail}`).sort();
    assert.deepEqual(drift, [
      "unknown_type: content/hologram",
      "unparsable: a message whose content is not JSON",
    ]);
    assert.deepEqual(found(world, "plasma-gazebo"), []);
    assert.deepEqual(found(world, "nebulark"), []);
    const odd = shown(world, ODD);
    assert.deepEqual(odd.map((r) => r.kind), ["meta", "meta", "meta", "message"]);
    assert.ok(new TextDecoder().decode(odd[1]!.raw).includes("plasma-gazebo"));
    assert.ok(new TextDecoder().decode(odd[2]!.raw).includes("nebulark"));
    assert.ok(summary.drift.every((d) => d.version === "schema 17"));
  } finally {
    await world.cleanup();
  }
});

Deno.test("each Goose record holds its row exactly: every column as the database has it", async () => {
  const world = await gooseWorld();
  try {
    await captureWorld(world);
    assert.ok(rowsStoredExactly(world, world.db, [MAIN, CHILD, ODD]) > 10);
  } finally {
    await world.cleanup();
  }
});

Deno.test("READERS give every Goose record the text its adapter gives", async () => {
  const world = await gooseWorld();
  try {
    await captureWorld(world);
    withStore(world, (store, ctx) => {
      assert.ok(readersAgree(store, ctx, "goose").records > 12);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a conversation Goose rewrites whole is stored again as revisions: each message found once, shown once, in order", async () => {
  const world = await gooseWorld();
  try {
    await captureWorld(world);
    // What Goose's replace_conversation does (an edit, a compaction): delete the session's
    // messages and insert them again, each with its message_id, in new rows. Here the last
    // answer is edited on the way.
    const db = new DatabaseSync(world.db);
    const before = db.prepare(
      "SELECT message_id, role, content_json, created_timestamp, metadata_json FROM messages WHERE session_id = ? ORDER BY created_timestamp, id",
    ).all(IDS.main) as Record<string, string | number>[];
    db.prepare("DELETE FROM messages WHERE session_id = ?").run(IDS.main);
    const insert = db.prepare(
      `INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp,
         metadata_json) VALUES (?, ?, ?, ?, ?, ?)`,
    );
    for (const m of before) {
      const content = String(m.content_json).replace("marmalith", "marmalith, then umberquill");
      insert.run(m.message_id!, IDS.main, m.role!, content, m.created_timestamp!, m.metadata_json!);
    }
    // Then the session goes on (a resume: `goose session --resume --session-id <id>`).
    insert.run(
      "msg_20260910_1_c927f5e6-28da-4b13-b6c4-f7e0d9a816dc",
      IDS.main,
      "user",
      JSON.stringify([{ type: "text", text: "Carry on, cobaltwren." }]),
      1789093700,
      JSON.stringify({ userVisible: true, agentVisible: true }),
    );
    db.close();
    const second = await captureWorld(world);
    assert.deepEqual(second.errors, []);
    for (const phrase of ["quasarbeet", "lanternfig", "umberquill", "cobaltwren"]) {
      assert.deepEqual(found(world, phrase), [MAIN], phrase);
    }
    assert.deepEqual(said(world, MAIN), [
      ...MAIN_SAID.slice(0, 3),
      "message/assistant: The notes folder holds copperwhistle.md and driftmallow.md: marmalith, then umberquill.",
      ...MAIN_SAID.slice(4),
      "message/user: Carry on, cobaltwren.",
    ]);
    assert.equal(conversation(world, MAIN).message_count, 4, "revisions are not new messages");
    assert.equal((await captureWorld(world)).records, 0, "nothing new: nothing stored");
  } finally {
    await world.cleanup();
  }
});

Deno.test("toolOf gives a Goose tool request its input and a tool response its id", async () => {
  const world = await gooseWorld();
  try {
    await captureWorld(world);
    const source = { agent: "goose", locator: world.db, path: world.db, format: "rows" as const };
    const tools = shown(world, MAIN).map((r) => goose.toolOf!(r.raw, source))
      .filter((t) => t !== null);
    assert.deepEqual(tools, [
      {
        calls: [{ id: IDS.call, name: "developer__shell", input: "ls notes" }],
        results: [],
        output: null,
      },
      { calls: [], results: [{ id: IDS.call, error: false }], output: null },
      {
        calls: [{
          id: IDS.delegate,
          name: "delegate",
          input: "Find glimmerfane in the notes folder.",
        }],
        results: [],
        output: null,
      },
      { calls: [], results: [{ id: IDS.delegate, error: false }], output: null },
    ]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex, search and show read a Goose store end to end; resume prints goose session --resume", async () => {
  const world = await gooseWorld();
  try {
    const reindex = await runCli("reindex", [], world.vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    const hits = await runCli("search", ["marmalith", "--agent", "goose", "--json"], world.vars);
    assert.equal(hits.code, 0, hits.stderr);
    assert.deepEqual(
      hits.stdout.trim().split("\n").map((l) => JSON.parse(l).conversation),
      [MAIN],
    );
    const show = await runCli("show", [MAIN, "--json", "--limit", "100"], world.vars);
    assert.equal(show.code, 0, show.stderr);
    const page = JSON.parse(show.stdout);
    assert.equal(page.conversation.cwd, "/home/user/project");
    const messages = page.records.filter((r: { text: string }) => r.text.trim() !== "")
      .map((r: { kind: string; role: string | null; text: string }) =>
        `${r.kind}/${r.role ?? "-"}: ${r.text.split("\n")[0]}`
      );
    assert.deepEqual(messages, MAIN_SAID);
    const resume = await runCli("resume", [MAIN, "--print"], world.vars);
    assert.equal(resume.code, 0, resume.stderr);
    assert.match(resume.stdout, new RegExp(`goose session --resume --session-id '?${IDS.main}'?`));
  } finally {
    await world.cleanup();
  }
});

Deno.test("a sessions.db that is not a database is reported by its path; other agents' files are read", async () => {
  const world = await gooseWorld();
  try {
    Deno.writeTextFileSync(world.db, "this is not a database, only some words\n".repeat(200));
    const other = join(world.home, ".cursor", "projects", "p", "agent-transcripts");
    Deno.mkdirSync(other, { recursive: true });
    Deno.writeTextFileSync(
      join(other, "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d.jsonl"),
      `${
        JSON.stringify({
          role: "user",
          message: {
            content: [{ type: "text", text: "<user_query>\nhello, tamarindel\n</user_query>" }],
          },
        })
      }\n`,
    );
    const summary = await captureWorld(world);
    assert.deepEqual(summary.errors.map((e) => e.locator), [world.db]);
    assert.match(summary.errors[0]!.message, /Goose database/);
    assert.deepEqual(found(world, "tamarindel"), ["cursor:0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"]);
  } finally {
    await world.cleanup();
  }
});
