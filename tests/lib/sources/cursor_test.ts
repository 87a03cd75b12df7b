// Capture of Cursor CLI: agent transcripts under ~/.cursor/projects, a conversation's sub-agents
// as its children, lines Cursor writes again (a transcript rewritten whole, or pruned) found once
// and shown once, and lines logbook cannot read kept as drift.

import { conversation, found, readersAgree, said, shown } from "./_shown.ts";
import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { cursor } from "../../../lib/sources/cursor.ts";
import {
  captureWorld,
  FIXTURES,
  makeWorld,
  runCli,
  withStore,
  type World,
} from "../../_helpers.ts";

const MAIN_ID = "3f1c9a52-7d4e-4b8a-9e21-6c5d8f0a1b34";
const SUB_ID = "a8e2d4f6-1b3c-4d5e-8f70-9a1b2c3d4e5f";
const OLD_ID = "5b7d9f1e-2c4a-4e6b-8d0f-1a3c5e7b9d20";
const MAIN = `cursor:${MAIN_ID}`;
const SUB = `cursor:${SUB_ID}`;
const OLD = `cursor:${OLD_ID}`;
const TRANSCRIPTS = join(".cursor", "projects", "home-user-project", "agent-transcripts");

/** A world whose home holds a copy of `fixtures/cursor/home/.cursor`. */
async function cursorWorld(): Promise<World> {
  const world = await makeWorld();
  cpSync(join(FIXTURES, "cursor", "home", ".cursor"), join(world.home, ".cursor"), {
    recursive: true,
  });
  return world;
}

function mainFile(world: World): string {
  return join(world.home, TRANSCRIPTS, MAIN_ID, `${MAIN_ID}.jsonl`);
}

/** Puts stage `<name>` of `fixtures/cursor/rewrite/` in place of the main transcript. */
function rewrite(world: World, name: string): void {
  Deno.writeFileSync(mainFile(world), Deno.readFileSync(join(FIXTURES, "cursor", "rewrite", name)));
}

const FIRST_TURN = [
  "message/user: <timestamp>Thursday, Sep 10, 2026, 8:27 AM (UTC+0)</timestamp>",
  "message/assistant: Listing the notes folder, lanternfig.",
  "message/assistant: The notes folder holds copperwhistle.md and driftmallow.md: marmalith.",
];
const MAIN_SAID = [
  ...FIRST_TURN,
  "message/user: <timestamp>Thursday, Sep 10, 2026, 8:28 AM (UTC+0)</timestamp>",
  "tool_call/assistant: Task",
  "message/assistant: The helper found it in driftmallow.md: tessellark.",
];
const RESUMED = [
  "message/user: <timestamp>Thursday, Sep 10, 2026, 9:02 AM (UTC+0)</timestamp>",
  "message/assistant: Resumed fine: plumquartz.",
];

Deno.test("each Cursor transcript line is a record of its kind and role; a sub-agent is a child", async () => {
  const world = await cursorWorld();
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(summary.errors, []);
    assert.deepEqual(said(world, MAIN), MAIN_SAID);
    const main = conversation(world, MAIN);
    assert.equal(main.title, "Please list the notes folder, quasarbeet.");
    assert.equal(main.parent_key, null);
    const sub = conversation(world, SUB);
    assert.equal(sub.parent_key, MAIN);
    assert.equal(sub.subagent, 1);
    assert.equal(sub.title, "Find glimmerfane in the notes folder.");
    assert.deepEqual(said(world, SUB), [
      "message/user: <user_query>",
      "message/assistant: Searching the notes.",
      "message/assistant: glimmerfane is in driftmallow.md.",
    ]);
    for (const [phrase, key] of [["quasarbeet", MAIN], ["lanternfig", MAIN], ["ls notes", MAIN]]) {
      assert.deepEqual(found(world, phrase!), [key], phrase);
    }
    // Cursor's `[REDACTED]` stub is not text.
    assert.deepEqual(found(world, "REDACTED"), []);
  } finally {
    await world.cleanup();
  }
});

Deno.test("odd lines are drift, kept raw; a truncated last line waits; the rest is read", async () => {
  const world = await cursorWorld();
  try {
    const summary = await captureWorld(world);
    const drift = summary.drift.map((d) => `${d.category}: ${d.detail}`).sort();
    assert.deepEqual(drift, ["unknown_type: type/hologram", "unparsable: invalid JSON"]);
    assert.deepEqual(said(world, OLD), [
      "message/user: <user_query>",
      "message/assistant: Answered after the odd lines: vintrope.",
      "event/-: You've hit your usage limit, umberquill.",
    ]);
    assert.equal(conversation(world, OLD).title, "Odd lines in an older transcript");
    assert.deepEqual(found(world, "plasma-gazebo"), []);
    assert.deepEqual(found(world, "nebulark"), []);
    // The last line has no end yet: not stored until Cursor finishes it.
    assert.deepEqual(found(world, "ochrefinch"), []);
    const path = join(world.home, TRANSCRIPTS, `${OLD_ID}.jsonl`);
    Deno.writeTextFileSync(path, `${Deno.readTextFileSync(path)}."}]}}\n`);
    await captureWorld(world);
    assert.deepEqual(found(world, "ochrefinch"), [OLD]);
    const raws = shown(world, OLD).map((r) => new TextDecoder().decode(r.raw));
    assert.equal(raws.join(""), Deno.readTextFileSync(path), "every byte, once, in order");
  } finally {
    await world.cleanup();
  }
});

Deno.test("a transcript Cursor writes again whole or prunes: each message found once, shown once", async () => {
  const world = await cursorWorld();
  try {
    rewrite(world, "1-first-turn.jsonl");
    await captureWorld(world);
    assert.deepEqual(said(world, MAIN), FIRST_TURN);
    // The rest of the session and a resumed turn: the file grew.
    rewrite(world, "2-resumed.jsonl");
    await captureWorld(world);
    assert.deepEqual(said(world, MAIN), [...MAIN_SAID, ...RESUMED]);
    for (const phrase of ["quasarbeet", "lanternfig", "marmalith", "cobaltwren", "plumquartz"]) {
      assert.deepEqual(found(world, phrase), [MAIN], phrase);
    }
    // Pruned: the first turn dropped. What was said stays, once.
    rewrite(world, "3-pruned.jsonl");
    await captureWorld(world);
    assert.deepEqual(said(world, MAIN), [...MAIN_SAID, ...RESUMED]);
    for (const phrase of ["quasarbeet", "tessellark", "cobaltwren", "plumquartz"]) {
      assert.deepEqual(found(world, phrase), [MAIN], phrase);
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("READERS give every Cursor record the text its adapter gives; toolOf names each call", async () => {
  const world = await cursorWorld();
  try {
    await captureWorld(world);
    withStore(world, (store, ctx) => {
      assert.ok(readersAgree(store, ctx, "cursor").records > 12);
    });
    const source = {
      agent: "cursor",
      locator: mainFile(world),
      path: mainFile(world),
      format: "jsonl" as const,
    };
    const calls = shown(world, MAIN).map((r) => cursor.toolOf!(r.raw, source)?.calls)
      .filter((c) => c !== undefined).flat().map((c) => `${c.name}: ${c.input.split("\n")[0]}`);
    assert.deepEqual(calls, ["Shell: ls notes", "Task: Find glimmerfane"]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex, search and show read a Cursor home end to end; resume prints cursor-agent --resume", async () => {
  const world = await cursorWorld();
  try {
    const reindex = await runCli("reindex", [], world.vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    const hits = await runCli("search", ["marmalith", "--agent", "cursor", "--json"], world.vars);
    assert.equal(hits.code, 0, hits.stderr);
    assert.deepEqual(
      hits.stdout.trim().split("\n").map((l) => JSON.parse(l).conversation),
      [MAIN],
    );
    const show = await runCli("show", [MAIN, "--json", "--limit", "100"], world.vars);
    assert.equal(show.code, 0, show.stderr);
    const messages = JSON.parse(show.stdout).records
      .filter((r: { text: string }) => r.text.trim() !== "")
      .map((r: { kind: string; role: string | null; text: string }) =>
        `${r.kind}/${r.role ?? "-"}: ${r.text.split("\n")[0]}`
      );
    assert.deepEqual(messages, MAIN_SAID);
    const resume = await runCli("resume", [MAIN, "--print"], world.vars);
    assert.equal(resume.code, 0, resume.stderr);
    assert.match(resume.stdout, new RegExp(`cursor-agent --resume '?${MAIN_ID}'?`));
  } finally {
    await world.cleanup();
  }
});
