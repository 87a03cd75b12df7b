// Capture of GitHub Copilot CLI: session-state/<id>/events.jsonl under $COPILOT_HOME, its inline
// subagents, workspace.yaml titles, drift, a truncated line, and a rewind that rewrites the file.

import { readersAgree } from "./_shown.ts";
import { pageRecords, printed } from "./_shown.ts";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { envFrom } from "../../../lib/env.ts";
import { decodeLine } from "../../../lib/capture/derive.ts";
import type { Derived, SourceRef } from "../../../lib/sources/adapter.ts";
import { copilot, parseWorkspace } from "../../../lib/sources/copilot.ts";
import { copilotText } from "../../../lib/sources/copilot_text.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { type RecordJson } from "../../../lib/store/conversations.ts";
import { FLAG_INDEXED, FLAG_STREAMED } from "../../../lib/store/schema.ts";
import { search } from "../../../lib/store/search.ts";
import {
  captureWorld,
  FIXTURES,
  makeWorld,
  manifest,
  runCli,
  runPass,
  withStore,
  type World,
} from "../../_helpers.ts";

const MAIN = "0ecdd7af-2ddd-4722-8c03-ff593e172b85";
const REWOUND = "dbf50ced-842f-40a0-9e11-514dd7faf040";
const DELEGATING = "6ab9812d-88d3-4827-b90a-99eec28ee104";
const AGENT = "c29598fe-2428-46fe-9127-f8bc91f85970";
const DRIFTING = "7d3c51e2-94b0-4f7e-8a1d-2c6e0b9f4a17";
const PROJECT = "/home/user/project";

interface Manifest {
  phrases: Record<string, string[]>;
  files: { path: string; case: string; conversation?: string }[];
}
const MANIFEST = manifest("copilot") as unknown as Manifest;

/** `fixtures/copilot/<folder>/session-state/<session>`. */
const fixture = (folder: string, session: string) =>
  join(FIXTURES, "copilot", folder, "session-state", session);

/** A world whose `$COPILOT_HOME` holds copies of the given fixture sessions. */
async function copilotWorld(sessions: [folder: string, session: string][]): Promise<World> {
  const world = await makeWorld();
  world.vars.COPILOT_HOME = join(world.dir, "copilot");
  world.env = envFrom(world.vars);
  mkdirSync(states(world), { recursive: true });
  for (const [folder, session] of sessions) place(world, folder, session);
  return world;
}

function states(world: World): string {
  return join(world.vars.COPILOT_HOME!, "session-state");
}

function eventsOf(world: World, session: string): string {
  return join(states(world), session, "events.jsonl");
}

/** Puts a fixture session in the world as Copilot would leave it (overwriting the file in place). */
function place(world: World, folder: string, session: string): void {
  const to = join(states(world), session);
  mkdirSync(to, { recursive: true });
  cpSync(join(fixture(folder, session), "workspace.yaml"), join(to, "workspace.yaml"));
  writeFileSync(
    join(to, "events.jsonl"),
    Deno.readFileSync(join(fixture(folder, session), "events.jsonl")),
  );
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
      `SELECT key, title, title_rank, parent_key, subagent, cwd, project_root, branch,
         agent_version, message_count FROM conversations WHERE key = ?`,
    ).get(key),
  }));
}

function sourceRef(path: string): SourceRef {
  return { agent: "copilot", locator: path, path, format: "jsonl" };
}

/** Every line of a file derived by the adapter, with its bytes. */
function derive(path: string): { bytes: Uint8Array; record: unknown; derived: Derived }[] {
  const source = sourceRef(path);
  const state = copilot.initialState(source);
  const bytes = Deno.readFileSync(path);
  const out = [];
  let start = 0;
  while (start < bytes.length) {
    const end = bytes.indexOf(0x0a, start);
    const line = bytes.subarray(start, end < 0 ? bytes.length : end + 1);
    start += line.length;
    const input = decodeLine(line);
    out.push({
      bytes: line,
      record: input.value,
      derived: copilot.parseLine(input, state, source),
    });
  }
  return out;
}

/** The main session's messages, as show prints them. */
const FIRST_TURN = [
  "message/user: Read the notes for me, quasarbeet lanternfig.",
  "message/system: (Copilot's system prompt, about 20 KB, replaced by this sentence in the fixture.)",
  "tool_call/assistant: view | /home/user/project/notes.txt",
  "tool_result: Field notes: copperwhistle and driftmallow.",
  "message/assistant: The notes mention marmalith and vintrope.",
];
const RESUMED_TURN = [
  "message/user: Carry on, cobaltwren.",
  "message/assistant: Resumed fine: plumquartz.",
];

Deno.test("every record of every Copilot fixture has the kind, role and conversation its type means", () => {
  const expected: Record<string, [string, string | null]> = {
    "session.start": ["meta", null],
    "session.resume": ["meta", null],
    "session.shutdown": ["meta", null],
    "session.usage_record": ["meta", null],
    "session.model_change": ["meta", null],
    "session.info": ["event", null],
    "assistant.turn_start": ["meta", null],
    "assistant.turn_end": ["meta", null],
    "subagent.started": ["event", null],
    "subagent.configured": ["meta", null],
    "subagent.completed": ["event", null],
    "user.message": ["message", "user"],
    "system.message": ["message", "system"],
    "tool.execution_start": ["event", null],
    "tool.execution_complete": ["tool_result", null],
  };
  const seen = new Set<string>();
  for (const file of MANIFEST.files.filter((f) => f.path.endsWith(".jsonl"))) {
    const path = join(FIXTURES, "copilot", file.path);
    const session = dirname(file.path).split("/").at(-1)!;
    for (const { bytes, record, derived } of derive(path)) {
      const r = record as Record<string, unknown> | undefined;
      const what = `${file.case}: ${r?.type ?? "?"} ${r?.id ?? ""}`;
      assert.equal(derived.text, copilotText.textOf(bytes, sourceRef(path)), `reader: ${what}`);
      assert.equal(derived.version, "1.0.102", what);
      const agentId = typeof r?.agentId === "string" ? r.agentId : null;
      assert.equal(
        derived.conversation?.key,
        agentId ? `copilot:${session}/agent-${agentId}` : `copilot:${session}`,
        what,
      );
      assert.equal(derived.conversation?.parentKey ?? null, agentId ? `copilot:${session}` : null);
      assert.equal(derived.conversation?.cwd, PROJECT, what);
      const type = typeof r?.type === "string" ? r.type : "";
      if (!r || !(type in expected || type === "assistant.message")) {
        assert.ok(derived.drift, `drift: ${what}`);
        assert.equal(derived.kind, "meta");
        continue;
      }
      seen.add(type);
      assert.equal(derived.drift ?? null, null, what);
      assert.equal(derived.key, `event:${r.id}`, what);
      assert.equal(derived.supersedes, true, what);
      if (type === "assistant.message") {
        const data = r.data as { content: string; toolRequests: unknown[] };
        assert.equal(derived.kind, data.content ? "message" : "tool_call", what);
        assert.equal(derived.role, "assistant");
        assert.equal(derived.newMessage, data.content !== "");
        continue;
      }
      assert.deepEqual([derived.kind, derived.role], expected[type], what);
      assert.equal(derived.newMessage, type === "user.message", what);
    }
  }
  assert.deepEqual([...seen].sort(), [...Object.keys(expected), "assistant.message"].sort());
});

Deno.test("the subagent's records are its own child conversation, titled by its task", () => {
  const path = join(fixture("subagent", DELEGATING), "events.jsonl");
  const child = `copilot:${DELEGATING}/agent-${AGENT}`;
  const lines = derive(path);
  const of = (key: string) =>
    lines.filter((l) => l.derived.conversation?.key === key && l.derived.text).map((l) =>
      `${l.derived.kind}: ${l.derived.text.split("\n")[0]}`
    );
  assert.deepEqual(of(child), [
    "message: Subtask glimmerfane: read the notes and report.",
    "message: (Copilot's system prompt, about 20 KB, replaced by this sentence in the fixture.)",
    "tool_call: view",
    "tool_result: Field notes: copperwhistle and driftmallow.",
    "message: Subagent result: tessellark.",
  ]);
  const childInfo = lines.find((l) => l.derived.conversation?.key === child)!.derived.conversation!;
  assert.deepEqual(
    {
      nativeId: childInfo.nativeId,
      subagent: childInfo.subagent,
      agentType: childInfo.agentType,
    },
    { nativeId: `${DELEGATING}/agent-${AGENT}`, subagent: true, agentType: "general-purpose" },
  );
  // The parent keeps its task call and the result the subagent handed back.
  assert.ok(of(`copilot:${DELEGATING}`).includes("tool_call: task"));
  assert.ok(of(`copilot:${DELEGATING}`).includes("tool_result: Subagent result: tessellark."));
  const titles = lines.filter((l) => l.derived.conversation?.key === child && l.derived.title)
    .map((l) => l.derived.title);
  assert.deepEqual(titles, [
    { text: "Inspect the notes", rank: 2 },
    { text: "Subtask glimmerfane: read the notes and report.", rank: 1 },
  ]);
});

Deno.test("capture finds every phrase in its conversation, with titles, parents, cwd, project and exact bytes", async () => {
  const world = await copilotWorld([["home", MAIN], ["home", REWOUND], ["subagent", DELEGATING]]);
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(summary.drift, []);
    const main = `copilot:${DELEGATING}`;
    const child = `${main}/agent-${AGENT}`;
    const where: Record<string, string> = {
      quasarbeet: main,
      marmalith: main,
      cobaltwren: main,
      plumquartz: main,
      zephyrkiln: main,
      orchidvault: main,
      glimmerfane: child,
      tessellark: child,
      driftmallow: child,
    };
    for (const [word, key] of Object.entries(where)) {
      const found = hits(world, word).map((h) => h.conversation);
      assert.ok(found.includes(key), `${word}: ${found.join(", ")}`);
      assert.ok(found.every((k) => k.startsWith("copilot:")), word);
    }
    // Each session's own words once in it: a prompt, the tool's output, the answer.
    for (const session of [MAIN, DELEGATING]) {
      for (const word of ["quasarbeet", "marmalith", "plumquartz"]) {
        assert.equal(
          hits(world, word).filter((h) => h.conversation === `copilot:${session}`).length,
          1,
          `${word} in ${session}`,
        );
      }
    }
    assert.deepEqual(conversation(world, main), {
      key: main,
      title: "Read the notes for me, quasarbeet lanternfig.",
      title_rank: 2,
      parent_key: null,
      subagent: 0,
      cwd: PROJECT,
      project_root: PROJECT,
      branch: "main",
      agent_version: "1.0.102",
      // Three prompts, three answers (the tool calls have no words of their own).
      message_count: 6,
    });
    assert.deepEqual(conversation(world, child), {
      key: child,
      title: "Inspect the notes",
      title_rank: 2,
      parent_key: main,
      subagent: 1,
      cwd: PROJECT,
      project_root: PROJECT,
      branch: "main",
      agent_version: "1.0.102",
      message_count: 2,
    });
    assert.deepEqual(printed(world, `copilot:${MAIN}`), [...FIRST_TURN, ...RESUMED_TURN]);
    // Byte for byte: every source's records, in offset order, are its file.
    for (const session of [MAIN, REWOUND, DELEGATING]) {
      const path = eventsOf(world, session);
      const raw = withStore(world, (store) =>
        store.db.prepare(
          `SELECT r.raw, r.offset FROM records r JOIN sources s ON s.id = r.source_id
           WHERE s.locator = ? ORDER BY r.generation, r.offset, r.seq`,
        ).all(path) as { raw: Uint8Array; offset: number }[]);
      assert.ok(
        Buffer.concat(raw.map((r) => Buffer.from(r.raw))).equals(Deno.readFileSync(path)),
        session,
      );
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("READERS read every stored Copilot record as the adapter does", async () => {
  const world = await copilotWorld([["home", MAIN], ["subagent", DELEGATING], ["drift", DRIFTING]]);
  try {
    await captureWorld(world);
    withStore(world, (store, ctx) => {
      const { withText } = readersAgree(store, ctx, "copilot");
      assert.ok(withText >= 25, `${withText} records have text`);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("an unknown record type and a line that is not JSON are drift, kept raw, and lose nothing around them", async () => {
  const world = await copilotWorld([["drift", DRIFTING]]);
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(
      summary.drift.map((d) => `${d.agent} ${d.version} ${d.category} ${d.detail} ${d.count}`)
        .sort(),
      [
        "copilot 1.0.102 unknown_type session.compaction_start 1",
        "copilot 1.0.102 unparsable invalid JSON 1",
      ],
    );
    const key = `copilot:${DRIFTING}`;
    const all = pageRecords(world, key);
    assert.equal(all.length, 15, "every line is a record");
    assert.deepEqual(printed(world, key), FIRST_TURN);
    const flags = withStore(world, (store) =>
      store.db.prepare(
        `SELECT flags FROM records r JOIN sources s ON s.id = r.source_id
         WHERE s.locator = ? ORDER BY offset`,
      ).all(eventsOf(world, DRIFTING)) as { flags: number }[]);
    assert.equal(flags[10]!.flags & FLAG_INDEXED, 0, "the unparsable line is not indexed");
  } finally {
    await world.cleanup();
  }
});

Deno.test("a truncated last line waits for its newline, then is captured once", async () => {
  const world = await copilotWorld([["truncated", MAIN]]);
  try {
    const first = await captureWorld(world);
    assert.deepEqual(first.drift, []);
    const key = `copilot:${MAIN}`;
    assert.equal(pageRecords(world, key).length, 20, "the 20 whole lines");
    assert.deepEqual(printed(world, key), [...FIRST_TURN, ...RESUMED_TURN]);
    // Copilot finishes writing the line: the whole file is home/'s.
    place(world, "home", MAIN);
    const second = await captureWorld(world);
    assert.equal(second.records, 1);
    assert.deepEqual(second.drift, []);
    assert.equal(pageRecords(world, key).length, 21);
    assert.ok(pageRecords(world, key).every((r) => r.generation === 1), "one generation");
    assert.deepEqual(printed(world, key), [...FIRST_TURN, ...RESUMED_TURN]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a rewind rewrites the file: a new generation whose repeats replace the old records, each message found and shown once", async (t) => {
  const world = await copilotWorld([["rewind/1-before", REWOUND]]);
  const key = `copilot:${REWOUND}`;
  const count = (word: string) => hits(world, word).length;
  try {
    await t.step("before: a tool call and a resumed turn", async () => {
      await captureWorld(world);
      assert.deepEqual(printed(world, key), [...FIRST_TURN, ...RESUMED_TURN]);
      assert.equal(count("cobaltwren"), 1);
    });
    await t.step("the rewind's rewrite: shorter, re-serialised, a new generation", async () => {
      place(world, "rewind/2-after-rewind", REWOUND);
      const summary = await captureWorld(world);
      assert.deepEqual(summary.drift, []);
      assert.equal(summary.records, 17, "the rewritten file read from its start");
      const all = pageRecords(world, key);
      assert.deepEqual([...new Set(all.map((r) => r.generation))], [1, 2]);
      // Every kept message is found once; the removed turn is still stored and found.
      for (const word of ["quasarbeet", "copperwhistle", "marmalith", "cobaltwren", "plumquartz"]) {
        assert.equal(count(word), 1, word);
      }
      // Shown once each: the removed turn where it was captured (generation 1, before the
      // rewritten file's records), the kept ones at their place in the rewrite.
      assert.deepEqual(printed(world, key), [
        ...RESUMED_TURN,
        ...FIRST_TURN,
        "event: Rewound the conversation. Your files were left unchanged.",
      ]);
    });
    await t.step("the next turn is appended to the rewritten file", async () => {
      place(world, "home", REWOUND);
      const summary = await captureWorld(world);
      assert.equal(summary.records, 7, "the appended records only");
      assert.deepEqual([...new Set(pageRecords(world, key).map((r) => r.generation))], [1, 2]);
      assert.deepEqual(printed(world, key), [
        ...RESUMED_TURN,
        ...FIRST_TURN,
        "event: Rewound the conversation. Your files were left unchanged.",
        "message/user: After the rewind, cobaltwren.",
        "message/system: (Copilot's system prompt, about 20 KB, replaced by this sentence in the fixture.)",
        "message/assistant: Resumed fine: plumquartz.",
      ]);
      assert.equal(count("quasarbeet"), 1);
      assert.equal(count("marmalith"), 1);
      assert.equal(count("cobaltwren"), 2, "the removed prompt and the new one");
    });
    await t.step("a store that read only the final file holds each message once", async () => {
      const fresh = await copilotWorld([["home", REWOUND]]);
      try {
        await captureWorld(fresh);
        assert.deepEqual(printed(fresh, key), [
          ...FIRST_TURN,
          "event: Rewound the conversation. Your files were left unchanged.",
          "message/user: After the rewind, cobaltwren.",
          "message/system: (Copilot's system prompt, about 20 KB, replaced by this sentence in the fixture.)",
          "message/assistant: Resumed fine: plumquartz.",
        ]);
      } finally {
        await fresh.cleanup();
      }
    });
    await t.step("a rebuild from the raw records derives the same", async () => {
      const before = printed(world, key);
      const summary = await captureWorld(world, { rebuild: true });
      assert.equal(summary.records, 0);
      assert.deepEqual(printed(world, key), before);
      assert.equal(count("marmalith"), 1);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex, search and show as a user runs them read $COPILOT_HOME", async () => {
  const world = await copilotWorld([["home", MAIN], ["subagent", DELEGATING]]);
  try {
    const reindex = await runCli("reindex", [], world.vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    assert.doesNotMatch(reindex.stderr, /error/i);
    const found = await runCli(
      "search",
      ["tessellark", "--agent", "copilot", "--json"],
      world.vars,
    );
    assert.equal(found.code, 0, found.stderr);
    const lines = found.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => `${l.conversation} ${l.kind}`).sort(),
      [
        `copilot:${DELEGATING} tool_result`,
        `copilot:${DELEGATING}/agent-${AGENT} message`,
      ],
    );
    const show = await runCli("show", [`copilot:${MAIN}`, "--json"], world.vars);
    assert.equal(show.code, 0, show.stderr);
    const page = JSON.parse(show.stdout);
    assert.equal(page.conversation.title, "Read the notes for me, quasarbeet lanternfig.");
    assert.equal(page.conversation.cwd, PROJECT);
    const said = (page.records as RecordJson[]).filter((r) => r.kind === "message")
      .map((r) => `${r.role}: ${r.text}`);
    assert.deepEqual(said, [
      "user: Read the notes for me, quasarbeet lanternfig.",
      "system: (Copilot's system prompt, about 20 KB, replaced by this sentence in the fixture.)",
      "assistant: The notes mention marmalith and vintrope.",
      "user: Carry on, cobaltwren.",
      "assistant: Resumed fine: plumquartz.",
    ]);
    const printed = await runCli("resume", [`copilot:${MAIN}`, "--print"], world.vars);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, new RegExp(`copilot --resume ${MAIN}`));
  } finally {
    await world.cleanup();
  }
});

Deno.test("Copilot's roots are $COPILOT_HOME and ~/.copilot; only <root>/<session>/events.jsonl is a source", async () => {
  const world = await makeWorld();
  try {
    const moved = join(world.dir, "moved");
    const env = envFrom({ HOME: world.home, COPILOT_HOME: moved });
    const ctx = { env, extraRoots: { copilot: [join(world.dir, "extra")] }, skipped: new Map() };
    assert.deepEqual(copilot.roots(ctx), [
      join(moved, "session-state"),
      join(world.home, ".copilot", "session-state"),
      join(world.dir, "extra"),
    ]);
    const session = join(moved, "session-state", MAIN);
    mkdirSync(join(session, "files", "nested"), { recursive: true });
    writeFileSync(join(session, "events.jsonl"), "");
    // A user's file that happens to have the name, inside the session's own folders.
    writeFileSync(join(session, "files", "nested", "events.jsonl"), "");
    mkdirSync(join(world.home, ".copilot", "session-state", REWOUND), { recursive: true });
    writeFileSync(join(world.home, ".copilot", "session-state", REWOUND, "events.jsonl"), "");
    const found = [];
    for await (const source of copilot.discover(ctx)) found.push(source.path);
    assert.deepEqual(found, [
      join(session, "events.jsonl"),
      join(world.home, ".copilot", "session-state", REWOUND, "events.jsonl"),
    ]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("workspace.yaml: its name, plain, quoted or a block, and whether a person gave it", () => {
  assert.deepEqual(parseWorkspace("id: x\ncwd: /p\nname: Fix the build\nuser_named: false\n"), {
    name: "Fix the build",
    userNamed: false,
    cwd: "/p",
  });
  assert.deepEqual(parseWorkspace(`name: "Say \\"hi\\": now"\nuser_named: true\n`), {
    name: 'Say "hi": now',
    userNamed: true,
    cwd: null,
  });
  assert.equal(parseWorkspace("name: 'It''s done'\n").name, "It's done");
  assert.equal(
    parseWorkspace("name: |-\n  First line\n  second\nuser_named: false\n").name,
    "First line",
  );
  assert.equal(parseWorkspace("summary_count: 0\n").name, null);
});

Deno.test("toolOf gives a request its call and input, and a run's completion its result", () => {
  const path = join(fixture("subagent", DELEGATING), "events.jsonl");
  const tools = derive(path).map((l) => copilot.toolOf!(l.bytes, sourceRef(path))).filter((t) =>
    t !== null
  );
  assert.deepEqual(tools.slice(0, 2), [
    {
      calls: [{
        id: "call_conformance000002",
        name: "view",
        input: "/home/user/project/notes.txt",
      }],
      results: [],
      output: null,
    },
    { calls: [], results: [{ id: "call_conformance000002", error: false }], output: null },
  ]);
  const task = tools.find((t) => t.calls[0]?.name === "task")!;
  assert.equal(
    task.calls[0]!.input,
    "Subtask glimmerfane: read the notes and report.\nInspect the notes\nhelper\ngeneral-purpose\nsync",
  );
  // One call per request, one result per completion: the run's start repeats neither.
  assert.equal(tools.flatMap((t) => t.calls).length, 3);
  assert.equal(tools.flatMap((t) => t.results).length, 3);
});

Deno.test("lines too long to hold in memory keep their kind, conversation, parent and words", async () => {
  const sessions: [string, string][] = [["home", MAIN], ["subagent", DELEGATING]];
  const normal = await copilotWorld(sessions);
  const streamed = await copilotWorld(sessions);
  try {
    await captureWorld(normal);
    // A 600-byte limit streams the system prompts, tool runs, usage records and more.
    const ctx = loadContext({ env: streamed.env });
    const store = openStore(ctx);
    try {
      await runPass(store, ctx, { limits: { maxLine: 600 } });
      const lines = store.db.prepare(
        `SELECT count(*) AS n FROM records WHERE flags & ${FLAG_STREAMED}`,
      ).get() as { n: number };
      assert.ok(lines.n > 20, `${lines.n} streamed`);
    } finally {
      store.close();
    }
    const tree = (world: World) =>
      withStore(world, (s) =>
        s.db.prepare(
          `SELECT key, parent_key, subagent, cwd, branch, agent_version FROM conversations
           ORDER BY key`,
        ).all());
    assert.deepEqual(tree(streamed), tree(normal));
    const kinds = (world: World) =>
      withStore(world, (s) => s.db.prepare("SELECT kind, role FROM records ORDER BY id").all());
    assert.deepEqual(kinds(streamed), kinds(normal));
    for (const word of ["quasarbeet", "copperwhistle", "marmalith", "glimmerfane", "tessellark"]) {
      const found = (world: World) => hits(world, word).map((h) => h.conversation).sort();
      assert.deepEqual(found(streamed), found(normal), word);
    }
  } finally {
    await normal.cleanup();
    await streamed.cleanup();
  }
});

Deno.test("a session's title is the name a person gave it, else Copilot's, else its first prompt", async () => {
  const world = await copilotWorld([["home", MAIN], ["home", REWOUND]]);
  try {
    const yaml = (session: string) => join(states(world), session, "workspace.yaml");
    // Named with /rename: explicit. Without workspace.yaml: the first prompt.
    writeFileSync(
      yaml(MAIN),
      Deno.readTextFileSync(yaml(MAIN)).replace(/^name: .*$/m, 'name: "Notes: the first look"')
        .replace("user_named: false", "user_named: true"),
    );
    Deno.removeSync(yaml(REWOUND));
    await captureWorld(world);
    const titled = (session: string) => {
      const { title, title_rank, cwd } = conversation(world, `copilot:${session}`);
      return { title, title_rank, cwd };
    };
    assert.deepEqual(titled(MAIN), { title: "Notes: the first look", title_rank: 3, cwd: PROJECT });
    assert.deepEqual(titled(REWOUND), {
      title: "Read the notes for me, quasarbeet lanternfig.",
      title_rank: 1,
      cwd: PROJECT,
    });
  } finally {
    await world.cleanup();
  }
});
