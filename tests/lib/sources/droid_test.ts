// Capture of Factory Droid: sessions/<cwd slug>/<uuid>.jsonl under $FACTORY_HOME_OVERRIDE/.factory
// (or ~/.factory), from files the real `droid exec` 0.215.0 wrote; drift, a truncated last line,
// a rewritten file, and reindex/search/show/resume as a user runs them.

import { readersAgree } from "./_shown.ts";
import { pageRecords, printed } from "./_shown.ts";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { redactorFor } from "../../../lib/context.ts";
import { envFrom } from "../../../lib/env.ts";
import { decodeLine } from "../../../lib/capture/derive.ts";
import type { Derived, SourceRef } from "../../../lib/sources/adapter.ts";
import { droid } from "../../../lib/sources/droid.ts";
import { droidText } from "../../../lib/sources/droid_text.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { type RecordJson } from "../../../lib/store/conversations.ts";
import { search } from "../../../lib/store/search.ts";
import { decodedRows } from "../../../lib/store/raw.ts";
import {
  captureWorld,
  FIXTURES,
  makeWorld,
  runCli,
  withStore,
  type World,
} from "../../_helpers.ts";

const MAIN = "c2c36cf4-cc57-4a46-b1af-1bb79cacc73e";
const UGLY = "dcecd198-b235-4f21-ac1a-4326b2986b07";
const SLUG = "-home-user-project";
const PROJECT = "/home/user/project";

/** `fixtures/droid/<folder>/.factory/sessions/<slug>/<session>.jsonl`. */
const fixture = (folder: string, session: string) =>
  join(FIXTURES, "droid", folder, ".factory", "sessions", SLUG, `${session}.jsonl`);

/** A world whose `$FACTORY_HOME_OVERRIDE` holds copies of the given fixture sessions. */
async function droidWorld(sessions: [folder: string, session: string][]): Promise<World> {
  const world = await makeWorld();
  world.vars.FACTORY_HOME_OVERRIDE = join(world.dir, "factory-home");
  world.env = envFrom(world.vars);
  for (const [folder, session] of sessions) {
    place(world, session, Deno.readFileSync(fixture(folder, session)));
  }
  return world;
}

function sessionPath(world: World, session: string): string {
  return join(world.vars.FACTORY_HOME_OVERRIDE!, ".factory", "sessions", SLUG, `${session}.jsonl`);
}

/** Writes a session file in place, as Droid does. */
function place(world: World, session: string, bytes: Uint8Array): void {
  const path = sessionPath(world, session);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, bytes);
}

function hits(world: World, query: string) {
  return withStore(
    world,
    (store, ctx) => search(store, ADAPTERS, redactorFor(ctx), { query, limit: 50 }).hits,
  );
}

function conversation(world: World, key: string): Record<string, unknown> {
  return withStore(world, (store) => ({
    ...store.db.prepare(
      `SELECT key, title, parent_key, subagent, cwd, project_root, agent_version, message_count
       FROM conversations WHERE key = ?`,
    ).get(key),
  }));
}

function derive(path: string): { bytes: Uint8Array; derived: Derived }[] {
  const source: SourceRef = { agent: "droid", locator: path, path, format: "jsonl" };
  const state = droid.initialState(source);
  const bytes = Deno.readFileSync(path);
  const out = [];
  let start = 0;
  while (start < bytes.length) {
    const end = bytes.indexOf(0x0a, start);
    const line = bytes.subarray(start, end < 0 ? bytes.length : end + 1);
    start += line.length;
    out.push({ bytes: line, derived: droid.parseLine(decodeLine(line), state, source) });
  }
  return out;
}

/** The first session, as show prints it (the context message is Droid's tool and skill list). */
function turn(context: string): string[] {
  return [
    `message/system: ${context}`,
    "message/user: Read the notes for me, quasarbeet lanternfig.",
    "tool_call/assistant: Read | /home/user/project/notes.txt",
    "tool_result: Field notes: copperwhistle and driftmallow.",
    "message/assistant: The notes mention marmalith and vintrope.",
  ];
}

Deno.test("every line of the Droid fixture has the kind, role, conversation and text its type means", () => {
  const lines = derive(fixture("home", MAIN));
  const summary = lines.map(({ derived: d }) =>
    `${d.kind} ${d.role ?? "-"} ${d.conversation?.key} ${d.conversation?.cwd} ${d.version}`
  );
  const key = `droid:${MAIN}`;
  assert.deepEqual(summary, [
    `meta - ${key} ${PROJECT} session-v2`,
    `message system ${key} ${PROJECT} session-v2`,
    `message user ${key} ${PROJECT} session-v2`,
    `tool_call assistant ${key} ${PROJECT} session-v2`,
    `tool_result - ${key} ${PROJECT} session-v2`,
    `message assistant ${key} ${PROJECT} session-v2`,
    `event - ${key} ${PROJECT} session-v2`,
  ]);
  assert.ok(lines.every(({ derived }) => !derived.drift));
  assert.deepEqual(lines[0]!.derived.title, {
    text: "Read the notes for me, quasarbeet lanternfig.",
    rank: 2,
  });
  assert.equal(lines[2]!.derived.text, "Read the notes for me, quasarbeet lanternfig.");
  assert.equal(lines[4]!.derived.text, "Field notes: copperwhistle and driftmallow.\n");
  for (const { bytes, derived } of lines) {
    const source: SourceRef = { agent: "droid", locator: "x", path: "x", format: "jsonl" };
    assert.equal(droidText.textOf(bytes, source), derived.text);
  }
  const call = droid.toolOf!(lines[3]!.bytes, {} as SourceRef);
  assert.deepEqual(call, {
    calls: [{ id: "call_conformance000002", name: "Read", input: "/home/user/project/notes.txt" }],
    results: [],
    output: null,
  });
  assert.deepEqual(droid.toolOf!(lines[4]!.bytes, {} as SourceRef)?.results, [
    { id: "call_conformance000002", error: false },
  ]);
});

Deno.test("capture finds every phrase once in its conversation, with its title, cwd, project and exact bytes", async () => {
  const world = await droidWorld([["home", MAIN]]);
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(summary.drift, []);
    const key = `droid:${MAIN}`;
    for (const word of ["quasarbeet", "copperwhistle", "marmalith"]) {
      assert.deepEqual(hits(world, word).map((h) => h.conversation), [key], word);
    }
    assert.deepEqual(conversation(world, key), {
      key,
      title: "Read the notes for me, quasarbeet lanternfig.",
      parent_key: null,
      subagent: 0,
      cwd: PROJECT,
      project_root: PROJECT,
      agent_version: "session-v2",
      message_count: 5,
    });
    const path = sessionPath(world, MAIN);
    const raw = withStore(world, (store) =>
      store.db.prepare(
        `SELECT r.raw, r.flags FROM records r JOIN sources s ON s.id = r.source_id
         WHERE s.locator = ? ORDER BY r.generation, r.offset, r.seq`,
      ).all(path) as { raw: Uint8Array; flags: number }[]);
    const bytes = decodedRows(raw).map((r) => Buffer.from(r.raw));
    assert.ok(Buffer.concat(bytes).equals(Deno.readFileSync(path)));
    const context = pageRecords(world, key)[1]!.text.trim().split("\n").join(" | ");
    assert.deepEqual(printed(world, key), turn(context));
  } finally {
    await world.cleanup();
  }
});

Deno.test("READERS read every stored Droid record as the adapter does", async () => {
  const world = await droidWorld([["home", MAIN], ["ugly", UGLY]]);
  try {
    await captureWorld(world);
    withStore(world, (store, ctx) => {
      const { withText } = readersAgree(store, ctx, "droid");
      assert.ok(withText >= 8, `${withText} records have text`);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("an unknown record type and a line that is not JSON are drift; a truncated last line waits for its newline", async () => {
  const world = await droidWorld([["ugly", UGLY]]);
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(
      summary.drift.map((d) => `${d.agent} ${d.version} ${d.category} ${d.detail} ${d.count}`)
        .sort(),
      [
        "droid session-v2 unknown_type todo_state 1",
        "droid session-v2 unparsable invalid JSON 1",
      ],
    );
    const key = `droid:${UGLY}`;
    assert.equal(pageRecords(world, key).length, 9, "every whole line is a record");
    const context = pageRecords(world, key)[1]!.text.trim().split("\n").join(" | ");
    assert.deepEqual(printed(world, key), turn(context));
    // The last line is finished: one more record. It is the answer written again (the same
    // id), which replaces the first in the index: shown and found once.
    const bytes = Deno.readFileSync(fixture("ugly", UGLY));
    const lines = new TextDecoder().decode(bytes).split("\n");
    const finished = [...lines.slice(0, -1), lines[5]!, ""].join("\n");
    place(world, UGLY, new TextEncoder().encode(finished));
    const second = await captureWorld(world);
    assert.equal(second.records, 1);
    assert.equal(pageRecords(world, key).length, 10);
    assert.deepEqual(printed(world, key), turn(context));
    assert.equal(hits(world, "marmalith").length, 1, "the answer written twice is found once");
  } finally {
    await world.cleanup();
  }
});

Deno.test("a session file written again from its start is a new generation whose repeats replace the old records", async () => {
  const world = await droidWorld([["home", MAIN]]);
  const key = `droid:${MAIN}`;
  try {
    await captureWorld(world);
    const context = pageRecords(world, key)[1]!.text.trim().split("\n").join(" | ");
    // The same records, written again shorter (the outcome line gone) and then a new turn.
    const lines = new TextDecoder().decode(Deno.readFileSync(fixture("home", MAIN))).split("\n");
    const prompt = JSON.parse(lines[2]!);
    prompt.id = "5b0e4c1a-7d2f-4e8b-9c61-0a3f2e7d9b14";
    prompt.message.content[0].text = "Carry on, cobaltwren.";
    const answer = JSON.parse(lines[5]!);
    answer.id = "9e2d6f0b-1c3a-4b7e-8d52-6f4a0c9e1b27";
    answer.message.content[0].text = "Resumed fine: plumquartz.";
    const rewritten = [...lines.slice(0, 6), JSON.stringify(prompt), JSON.stringify(answer), ""];
    place(world, MAIN, new TextEncoder().encode(rewritten.join("\n")));
    const summary = await captureWorld(world);
    assert.deepEqual(summary.drift, []);
    assert.deepEqual([...new Set(pageRecords(world, key).map((r) => r.generation))], [1, 2]);
    for (const word of ["quasarbeet", "copperwhistle", "marmalith", "cobaltwren", "plumquartz"]) {
      assert.equal(hits(world, word).length, 1, word);
    }
    assert.deepEqual(printed(world, key), [
      ...turn(context),
      "message/user: Carry on, cobaltwren.",
      "message/assistant: Resumed fine: plumquartz.",
    ]);
    const rebuilt = printed(world, key);
    await captureWorld(world, { rebuild: true });
    assert.deepEqual(printed(world, key), rebuilt);
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex, search, show and resume --print as a user runs them read $FACTORY_HOME_OVERRIDE", async () => {
  const world = await droidWorld([["home", MAIN]]);
  try {
    const reindex = await runCli("reindex", [], world.vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    const found = await runCli("search", ["driftmallow", "--agent", "droid", "--json"], world.vars);
    assert.equal(found.code, 0, found.stderr);
    const lines = found.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => `${l.conversation} ${l.kind}`), [
      `droid:${MAIN} tool_result`,
    ]);
    const show = await runCli("show", [`droid:${MAIN}`, "--json"], world.vars);
    assert.equal(show.code, 0, show.stderr);
    const page = JSON.parse(show.stdout);
    assert.equal(page.conversation.title, "Read the notes for me, quasarbeet lanternfig.");
    assert.equal(page.conversation.cwd, PROJECT);
    const said = (page.records as RecordJson[]).filter((r) =>
      r.kind === "message" && r.role !== "system"
    )
      .map((r) => `${r.role}: ${r.text}`);
    assert.deepEqual(said, [
      "user: Read the notes for me, quasarbeet lanternfig.",
      "assistant: The notes mention marmalith and vintrope.",
    ]);
    const printed = await runCli("resume", [`droid:${MAIN}`, "--print"], world.vars);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, new RegExp(`droid --resume ${MAIN}`));
  } finally {
    await world.cleanup();
  }
});

Deno.test("Droid's roots are $FACTORY_HOME_OVERRIDE/.factory/sessions and ~/.factory/sessions; only <slug>/<uuid>.jsonl is a source", async () => {
  const world = await makeWorld();
  try {
    world.vars.FACTORY_HOME_OVERRIDE = join(world.dir, "elsewhere");
    world.env = envFrom(world.vars);
    const root = join(world.dir, "elsewhere", ".factory", "sessions");
    cpSync(join(FIXTURES, "droid", "home", ".factory", "sessions"), root, { recursive: true });
    writeFileSync(join(root, SLUG, "notes.jsonl"), "{}\n");
    const ctx = { env: world.env, extraRoots: {}, skipped: new Map() };
    assert.deepEqual(droid.roots(ctx), [root, join(world.home, ".factory", "sessions")]);
    const found = [];
    for await (const source of droid.discover(ctx)) found.push(source.locator);
    assert.deepEqual(found, [join(root, SLUG, `${MAIN}.jsonl`)]);
  } finally {
    await world.cleanup();
  }
});
