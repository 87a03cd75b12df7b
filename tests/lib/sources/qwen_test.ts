// The Qwen Code adapter against its fixtures (written by the real CLI, and the rewind, fork and
// drift cases made from its shapes): every record derived as expected and read the same by its
// reader, every chat captured byte for byte, each word found once, and what a truncated line,
// a rewind, a fork and a rewritten chat do to what `search` and `show` give.

import assert from "node:assert/strict";
import { appendFileSync, cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Buffer } from "node:buffer";
import { envFrom } from "../../../lib/env.ts";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { FLAG_STREAMED } from "../../../lib/store/schema.ts";
import { READERS } from "../../../lib/agents.ts";
import type { Derived, SourceRef } from "../../../lib/sources/adapter.ts";
import { adapterOf } from "../../../lib/sources/adapter.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { qwen, STATE_SUBTYPES } from "../../../lib/sources/qwen.ts";
import { qwenChatText } from "../../../lib/sources/qwen_text.ts";
import { decodeLine } from "../../../lib/capture/derive.ts";
import {
  findConversation,
  pageConversation,
  type RecordJson,
} from "../../../lib/store/conversations.ts";
import { type RecordRow, TextDeriver } from "../../../lib/store/records.ts";
import { search } from "../../../lib/store/search.ts";
import {
  captureWorld,
  FIXTURES,
  makeWorld,
  runCli,
  runPass,
  withStore,
  type World,
} from "../../_helpers.ts";

const QWEN = join(FIXTURES, "qwen");
const CHATS = "projects/-home-user-project/chats";
const SUBAGENTS = "projects/-home-user-project/subagents";

const START = "de16a6ec-44a6-40c7-b6bd-bdd2604c947a";
const FAILED = "c0fc1416-b62c-454c-a8ef-9b7c6fb7b7b7";
const DELEGATING = "cf67957e-c7d6-4a3f-b134-8325b8469828";
const CHILD = `${DELEGATING}/agent-general-purpose-call_conformance000007`;
const REWOUND = "7d3b2c1e-5a4f-4e8b-9c6d-0f1e2d3c4b5a";
const FORK = "9e8d7c6b-5a4f-4321-8fed-cba987654321";
const DRIFTING = "4c5d6e7f-8091-4a2b-b3c4-d5e6f7a8b9c0";

/** A world whose `$QWEN_HOME` holds a copy of the `fixtures/qwen/<home>` of each of `homes`. */
async function qwenWorld(...homes: string[]): Promise<World & { qwen: string }> {
  const world = await makeWorld();
  const home = join(world.dir, "qwen");
  for (const fixture of homes) cpSync(join(QWEN, fixture), home, { recursive: true });
  world.vars = { ...world.vars, QWEN_HOME: home };
  world.env = envFrom(world.vars);
  return Object.assign(world, { qwen: home });
}

const ALL = ["home", "subagent", "edits"];

/** The path of a chat (or a subagent's transcript: `<session>/agent-<id>`) under a Qwen home. */
function transcript(home: string, id: string): string {
  const [session, agent] = id.split("/");
  return agent
    ? join(home, SUBAGENTS, session!, `${agent}.jsonl`)
    : join(home, CHATS, `${session}.jsonl`);
}

/** Every record of a fixture file as parseLine derives it, one source generation. */
function derived(home: string, id: string): { derived: Derived; bytes: Uint8Array }[] {
  const path = transcript(join(QWEN, home), id);
  const source: SourceRef = { agent: "qwen", locator: path, path, format: "jsonl" };
  const state = qwen.initialState(source);
  const bytes = readFileSync(path);
  const out = [];
  let at = 0;
  for (let nl = bytes.indexOf(0x0a); nl >= 0; nl = bytes.indexOf(0x0a, at)) {
    const line = bytes.subarray(at, nl + 1);
    out.push({ derived: qwen.parseLine(decodeLine(line), state, source), bytes: line });
    at = nl + 1;
  }
  return out;
}

/** `kind role` of each record, with its text's first line when it has any. */
function shape(records: { derived: Derived }[]): string[] {
  return records.map(({ derived: d }) =>
    [d.kind, d.role ?? "-", d.text ? JSON.stringify(d.text.split("\n")[0]) : ""].join(" ").trim()
  );
}

Deno.test("parseLine derives every record Qwen Code wrote as expected, and the reader reads it the same", () => {
  const start = derived("home", START);
  assert.deepEqual(shape(start), [
    'message user "Read the notes for me, quasarbeet lanternfig."',
    "meta -",
    "meta -",
    'tool_call assistant "read_file"',
    "meta -",
    'tool_result - "Field notes: copperwhistle and driftmallow."',
    "meta -",
    'message assistant "The notes mention marmalith and vintrope."',
    'message user "Carry on, cobaltwren."',
    "meta -",
    "meta -",
    'message assistant "Resumed fine: plumquartz."',
    "meta -",
  ]);
  for (const { derived: d } of start) {
    assert.equal(d.conversation?.key, `qwen:${START}`);
    assert.equal(d.conversation?.cwd, "/home/user/project");
    assert.equal(d.conversation?.branch, "main");
    assert.equal(d.conversation?.parentKey, undefined);
    assert.equal(d.version, "0.24.4");
    assert.equal(d.drift, undefined);
    assert.match(d.key ?? "", /^uuid:[0-9a-f-]{36}$/);
  }
  assert.deepEqual(start.filter(({ derived: d }) => d.title).map(({ derived: d }) => d.title), [
    { text: "Read the notes for me, quasarbeet lanternfig.", rank: 1 },
    { text: "Carry on, cobaltwren.", rank: 1 },
  ]);
  // The call and its result share the call's id.
  assert.deepEqual([start[3]!.derived.partId, start[5]!.derived.partId], [
    "call_conformance000002",
    "call_conformance000002",
  ]);
  assert.deepEqual(start.filter(({ derived: d }) => d.newMessage).length, 4);

  // The failed call, the interactive resume and its /rewind typed (no picker opened).
  const failed = shape(derived("home", FAILED));
  assert.match(failed[5]!, /^tool_result - "Tool \\"bash\\" not found in registry/);
  assert.deepEqual(failed.slice(-2), ['event system "/rewind"', "event system"]);

  // A subagent: its own conversation under its parent's session, titled from its meta.
  const child = derived("subagent", CHILD);
  assert.deepEqual(shape(child), [
    'message user "Subtask glimmerfane: read the notes and report."',
    // Its first turn's empty answer (no parts).
    "message assistant",
    'tool_call assistant "read_file"',
    'tool_result - "Field notes: copperwhistle and driftmallow."',
    'message assistant "Subagent result: tessellark."',
  ]);
  for (const { derived: d } of child) {
    assert.equal(d.conversation?.key, `qwen:${CHILD}`);
    assert.equal(d.conversation?.parentKey, `qwen:${DELEGATING}`);
    assert.equal(d.conversation?.subagent, true);
    assert.equal(d.conversation?.agentType, "general-purpose");
  }
  assert.deepEqual(child[0]!.derived.title, {
    text: "general-purpose: Inspect the notes",
    rank: 2,
  });
  assert.equal(child[1]!.derived.newMessage, false, "an empty answer is not a message");

  // The made-up cases: a rewind, drift, a title the person gave.
  assert.deepEqual(shape(derived("edits", REWOUND)).filter((s) => !s.startsWith("meta")), [
    'message user "Read the notes for me, quasarbeet lanternfig."',
    'tool_call assistant "read_file"',
    'tool_result - "Field notes: copperwhistle and driftmallow."',
    'message assistant "The notes mention marmalith and vintrope."',
    'message user "Carry on, cobaltwren."',
    'message assistant "An answer to rewind: brackenmoss."',
    'event system "/rewind"',
    "event system",
    "event system",
    'message user "Carry on instead, emberquill."',
    'message assistant "After the rewind: saltpetal."',
  ]);
  const drifting = derived("edits", DRIFTING);
  assert.deepEqual(
    drifting.map(({ derived: d }) => d.drift && `${d.drift.category} ${d.drift.detail}`),
    [
      undefined,
      undefined,
      "unknown_type hologram",
      "unknown_type system/weather_report",
      "unparsable invalid JSON",
      undefined,
      undefined,
      undefined,
    ],
  );
  assert.ok(drifting.every(({ derived: d }) => d.version === "0.24.4"));
  assert.deepEqual(drifting[5]!.derived.title, { text: "Notes and the weather", rank: 3 });
  assert.equal(drifting[5]!.derived.text, "", "a title is the conversation's, not indexed");

  for (
    const [home, id] of [
      ["home", START],
      ["home", FAILED],
      ["subagent", DELEGATING],
      ["subagent", CHILD],
      ["edits", REWOUND],
      ["edits", DRIFTING],
    ] as const
  ) {
    const path = transcript(join(QWEN, home), id);
    const ref: SourceRef = { agent: "qwen", locator: path, path, format: "jsonl" };
    for (const { derived: d, bytes } of derived(home, id)) {
      assert.equal(qwenChatText.textOf(bytes, ref), d.text, `${id}: ${d.text}`);
    }
  }
});

Deno.test("every record subtype Qwen Code 0.24.4's code writes is recognised, none is drift", () => {
  const path = transcript(join(QWEN, "home"), START);
  const source: SourceRef = { agent: "qwen", locator: path, path, format: "jsonl" };
  const [first] = readFileSync(path, "utf8").split("\n");
  const envelope = JSON.parse(first!);
  const parse = (fields: Record<string, unknown>) => {
    const bytes = new TextEncoder().encode(JSON.stringify({ ...envelope, ...fields }) + "\n");
    return qwen.parseLine(decodeLine(bytes), qwen.initialState(source), source);
  };
  const system = [
    ...STATE_SUBTYPES,
    "custom_title",
    "chat_compression",
    "rewind",
    "slash_command",
  ];
  for (const subtype of system) {
    const d = parse({ type: "system", subtype, systemPayload: {}, message: undefined });
    assert.equal(d.drift, undefined, subtype);
  }
  for (const subtype of ["mid_turn_user_message", "cron", "notification", "goal_runtime"]) {
    const d = parse({ subtype });
    assert.equal(d.drift, undefined, subtype);
    assert.equal(d.text, "Read the notes for me, quasarbeet lanternfig.", subtype);
  }
  // What Qwen Code sends in the person's place is context; what they typed mid-turn is theirs.
  assert.equal(parse({ subtype: "notification" }).role, "system");
  assert.equal(parse({ subtype: "mid_turn_user_message" }).role, "user");
  const compression = parse({
    type: "system",
    subtype: "chat_compression",
    message: undefined,
    systemPayload: {
      info: { compressionStatus: 1 },
      compressedHistory: [
        { role: "user", parts: [{ text: "<state_snapshot>kept: quillmarsh</state_snapshot>" }] },
        { role: "model", parts: [{ text: "Got it." }] },
        { role: "user", parts: [{ text: "Carry on, cobaltwren." }] },
      ],
    },
  });
  assert.deepEqual([compression.kind, compression.text], [
    "summary",
    "<state_snapshot>kept: quillmarsh</state_snapshot>",
  ]);
  assert.deepEqual(parse({ type: "system", subtype: "teleport" }).drift, {
    category: "unknown_type",
    detail: "system/teleport",
  });
  assert.deepEqual(parse({ subtype: "dream" }).drift, {
    category: "unknown_type",
    detail: "user/dream",
  });
});

Deno.test("toolOf pairs a Qwen call with its result, and says when the call failed", () => {
  const ref = { agent: "qwen", locator: "x", path: "x", format: "jsonl" } as const;
  const [, , , call, , result] = derived("home", START);
  assert.deepEqual(qwen.toolOf!(call!.bytes, ref), {
    calls: [{
      id: "call_conformance000002",
      name: "read_file",
      input: "/home/user/project/notes.txt",
    }],
    results: [],
    output: null,
  });
  assert.deepEqual(qwen.toolOf!(result!.bytes, ref)?.results, [
    { id: "call_conformance000002", error: false },
  ]);
  const failed = derived("home", FAILED)[5]!;
  assert.deepEqual(qwen.toolOf!(failed.bytes, ref)?.results, [
    { id: "call_conformance000006", error: true },
  ]);
  assert.equal(qwen.toolOf!(derived("home", START)[0]!.bytes, ref), null);
});

function find(world: World, query: string) {
  return withStore(
    world,
    (store, ctx) => search(store, ADAPTERS, redactorFor(ctx), { query }).hits,
  );
}

/** The conversations a word is found in, one entry per hit, sorted. */
function foundIn(world: World, word: string): string[] {
  return find(world, `"${word}"`).map((h) => h.conversation).sort();
}

/** Every record of a conversation, paged as `show --json` pages it. */
function records(world: World, key: string): RecordJson[] {
  return withStore(world, (store, ctx) => {
    const deriver = new TextDeriver(store, ADAPTERS, redactorFor(ctx));
    const conversation = findConversation(store, key);
    const out: RecordJson[] = [];
    let after: number | undefined;
    do {
      const page = pageConversation(
        store,
        deriver,
        conversation,
        after === undefined ? { limit: 5 } : { after, limit: 5 },
      );
      out.push(...page.records);
      after = page.next ?? undefined;
    } while (after !== undefined);
    return out;
  });
}

/** The records a reader is shown: not `meta`, with text. */
function said(world: World, key: string): string[] {
  return records(world, key).filter((r) => r.kind !== "meta" && r.text)
    .map((r) => `${r.role ?? r.kind}: ${r.text.split("\n")[0]}`);
}

function conversationRow(world: World, key: string) {
  return withStore(world, (store) =>
    store.db.prepare(
      `SELECT parent_key, subagent, archived, cwd, branch, title, agent_version, project_root
       FROM conversations WHERE key = ?`,
    ).get(key) as Record<string, unknown> | undefined);
}

Deno.test("every Qwen chat is captured byte for byte, linked and titled, each word found once", async () => {
  const world = await qwenWorld(...ALL);
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(summary.errors, []);
    assert.deepEqual(summary.empty, []);
    assert.equal(summary.conversations, 7);
    assert.deepEqual(
      summary.drift.map((d) => `${d.agent} ${d.version} ${d.category} ${d.detail} ${d.count}`)
        .sort(),
      [
        "qwen 0.24.4 unknown_type hologram 1",
        "qwen 0.24.4 unknown_type system/weather_report 1",
        "qwen 0.24.4 unparsable invalid JSON 1",
      ],
    );
    const ids = [START, FAILED, DELEGATING, CHILD, REWOUND, FORK, DRIFTING];
    for (const id of ids) {
      const shown = records(world, `qwen:${id}`);
      const bytes = Buffer.concat(shown.map((r) => Buffer.from(r.raw, "base64")));
      assert.ok(bytes.equals(readFileSync(transcript(world.qwen, id))), `bytes of ${id}`);
      assert.ok(shown.every((r) => r.generation === 1), id);
    }
    const expected: Record<string, Record<string, unknown>> = {
      [START]: { title: "Read the notes for me, quasarbeet lanternfig.", parent_key: null },
      [DELEGATING]: { parent_key: null, subagent: 0 },
      [CHILD]: {
        title: "general-purpose: Inspect the notes",
        parent_key: `qwen:${DELEGATING}`,
        subagent: 1,
      },
      [FORK]: { parent_key: `qwen:${REWOUND}`, subagent: 0 },
      [DRIFTING]: { title: "Notes and the weather" },
    };
    for (const id of ids) {
      const row = conversationRow(world, `qwen:${id}`)!;
      assert.equal(row.cwd, "/home/user/project", id);
      assert.equal(row.branch, "main", id);
      assert.equal(row.agent_version, "0.24.4", id);
      for (const [field, value] of Object.entries(expected[id] ?? {})) {
        assert.equal(row[field], value, `${id}: ${field}`);
      }
    }
    const words: Record<string, string[]> = {
      zephyrkiln: [DELEGATING],
      orchidvault: [DELEGATING],
      // The agent call's prompt, and the subagent's own.
      glimmerfane: [DELEGATING, CHILD],
      // The subagent's answer, and the agent call's result in the parent.
      tessellark: [DELEGATING, CHILD],
      // The rewound turn stays, the turn after the rewind is there once; the fork's copies are not
      // indexed again, its own turn is.
      brackenmoss: [REWOUND],
      emberquill: [REWOUND],
      saltpetal: [REWOUND],
      velvetcrag: [FORK],
      amberloch: [FORK],
      larchwhisper: [DRIFTING],
      thistledown: [DRIFTING],
      // Kept raw, never indexed: the telemetry's copy of an answer, drift.
      vintrope: [START, FAILED, DELEGATING, REWOUND, DRIFTING],
      sorrelglint: [],
      mistwarden: [],
    };
    for (const [word, holders] of Object.entries(words)) {
      assert.deepEqual(foundIn(world, word), holders.map((id) => `qwen:${id}`).sort(), word);
    }
    for (const hit of find(world, "tessellark")) {
      assert.equal(hit.agent, "qwen");
      assert.equal(hit.cwd, "/home/user/project");
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("Qwen records too long to hold are streamed and classified as when parsed whole", async () => {
  const world = await qwenWorld(...ALL);
  try {
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    let summary;
    try {
      // Every line longer than 400 bytes takes the streaming path.
      summary = await runPass(store, ctx, { limits: { maxLine: 400 } });
    } finally {
      store.close();
    }
    assert.deepEqual(summary.errors, []);
    const streamed = withStore(
      world,
      (store) =>
        store.db.prepare(`SELECT count(*) AS n FROM records WHERE (flags & ${FLAG_STREAMED}) != 0`)
          .get() as { n: number },
    );
    assert.ok(streamed.n > 40, `${streamed.n} lines were streamed`);
    // A fork's copies stay out of the index when streamed too.
    assert.deepEqual(foundIn(world, "saltpetal"), [`qwen:${REWOUND}`]);
    assert.deepEqual(foundIn(world, "tessellark").length, 2);
    assert.deepEqual(foundIn(world, "mistwarden"), []);
    assert.deepEqual(said(world, `qwen:${START}`), START_SAID);
    assert.equal(conversationRow(world, `qwen:${FORK}`)!.parent_key, `qwen:${REWOUND}`);
  } finally {
    await world.cleanup();
  }
});

Deno.test("READERS read every stored Qwen record as the adapter does", async () => {
  const world = await qwenWorld(...ALL);
  try {
    await captureWorld(world);
    withStore(world, (store, ctx) => {
      const redact = redactorFor(ctx);
      const byAdapters = new TextDeriver(store, ADAPTERS, redact);
      const byReaders = new TextDeriver(store, READERS, redact);
      const rows = store.stmt(
        "SELECT r.* FROM records r JOIN sources s ON s.id = r.source_id WHERE s.agent = 'qwen'",
      ).all() as unknown as RecordRow[];
      assert.ok(rows.length > 80, `${rows.length} records`);
      for (const row of rows) {
        assert.equal(byReaders.textOf(row), byAdapters.textOf(row), `record ${row.id}`);
      }
      const sources = store.stmt("SELECT locator FROM sources WHERE agent = 'qwen'").all() as {
        locator: string;
      }[];
      for (const { locator } of sources) {
        assert.equal(adapterOf(READERS, "qwen", locator), qwenChatText);
        assert.equal(adapterOf(ADAPTERS, "qwen", locator), qwen);
      }
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a Qwen chat's truncated last line waits for its newline, then is captured once", async () => {
  const world = await qwenWorld("truncated");
  try {
    const path = transcript(world.qwen, START);
    const whole = readFileSync(transcript(join(QWEN, "home"), START));
    const cut = readFileSync(path);
    assert.ok(whole.subarray(0, cut.length).equals(cut), "the fixture is a cut copy");
    let summary = await captureWorld(world);
    assert.deepEqual(summary.drift, []);
    assert.equal(records(world, `qwen:${START}`).length, 12, "every complete line, no more");
    appendFileSync(path, whole.subarray(cut.length));
    summary = await captureWorld(world);
    assert.deepEqual(summary.drift, []);
    const shown = records(world, `qwen:${START}`);
    assert.equal(shown.length, 13);
    assert.ok(Buffer.concat(shown.map((r) => Buffer.from(r.raw, "base64"))).equals(whole));
    assert.deepEqual(foundIn(world, "plumquartz"), [`qwen:${START}`]);
  } finally {
    await world.cleanup();
  }
});

const START_SAID = [
  "user: Read the notes for me, quasarbeet lanternfig.",
  "assistant: read_file",
  "tool_result: Field notes: copperwhistle and driftmallow.",
  "assistant: The notes mention marmalith and vintrope.",
  "user: Carry on, cobaltwren.",
  "assistant: Resumed fine: plumquartz.",
];

Deno.test("a Qwen chat rewritten under logbook is a new generation whose records replace their earlier copies", async () => {
  const world = await qwenWorld("home");
  try {
    rmSync(transcript(world.qwen, FAILED));
    await captureWorld(world);
    const path = transcript(world.qwen, START);
    const lines = readFileSync(path, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
    // Written again by another program: spaced differently, the telemetry left out, and a turn
    // that was not there before appended.
    const kept = lines.filter((r) => r.subtype !== "ui_telemetry");
    const added = {
      ...kept.at(-1),
      uuid: "44444444-0000-4000-8000-000000000001",
      parentUuid: kept.at(-1).uuid,
      message: { role: "model", parts: [{ text: "Written again: gossamerfen." }] },
    };
    writeFileSync(path, [...kept, added].map((r) => JSON.stringify(r, null, 0) + "\n").join(""));
    const rewritten = readFileSync(path);
    assert.ok(rewritten.length < lines.length * 600, "a file of other bytes");
    await captureWorld(world);
    const shown = records(world, `qwen:${START}`);
    assert.deepEqual(new Set(shown.map((r) => r.generation)), new Set([1, 2]));
    // Each record once in the index, and once among what show shows.
    for (const word of ["quasarbeet", "copperwhistle", "marmalith", "cobaltwren", "plumquartz"]) {
      assert.deepEqual(foundIn(world, word), [`qwen:${START}`], word);
    }
    assert.deepEqual(foundIn(world, "gossamerfen"), [`qwen:${START}`]);
    assert.deepEqual(said(world, `qwen:${START}`), [
      ...START_SAID,
      "assistant: Written again: gossamerfen.",
    ]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a Qwen chat moved to chats/archive/ keeps its records and is marked archived", async () => {
  const world = await qwenWorld("home");
  try {
    rmSync(transcript(world.qwen, FAILED));
    await captureWorld(world);
    const archive = join(world.qwen, CHATS, "archive");
    Deno.mkdirSync(archive);
    Deno.renameSync(transcript(world.qwen, START), join(archive, `${START}.jsonl`));
    const summary = await captureWorld(world);
    assert.deepEqual(summary.errors, []);
    assert.equal(conversationRow(world, `qwen:${START}`)!.archived, 1);
    const shown = records(world, `qwen:${START}`);
    assert.ok(
      shown.every((r) => r.generation === 1 && r.source.endsWith(`archive/${START}.jsonl`)),
    );
    assert.deepEqual(said(world, `qwen:${START}`), START_SAID);
    assert.deepEqual(foundIn(world, "plumquartz"), [`qwen:${START}`]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a rewind Qwen Code wrote: the rewound turn stays where it was said, each turn found once", async () => {
  const chat = "qwen:e521fc58-e771-4d40-a5f0-d81e81b1286d";
  const world = await qwenWorld("rewind");
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(summary.drift, []);
    for (const word of ["quasarbeet", "marmalith", "cobaltwren", "plumquartz", "saltpetal"]) {
      assert.deepEqual(foundIn(world, word), [chat], word);
    }
    assert.deepEqual(said(world, chat), [
      ...START_SAID.slice(0, 4),
      "user: Carry on, cobaltwren.",
      "assistant: Resumed fine: plumquartz.",
      "user: Carry on instead, emberquill.",
      "assistant: After the rewind: saltpetal.",
    ]);
    const events = records(world, chat).filter((r) => r.kind === "event");
    assert.equal(events.length, 1, "the rewind, an event");
  } finally {
    await world.cleanup();
  }
});

Deno.test("a fork Qwen Code wrote: its copies are found once, in the original; its own turn in it", async () => {
  const original = "qwen:c7123ea2-f800-4741-943c-aaffcc1aa6c0";
  const fork = "qwen:cf90fc00-08c8-40a1-a4bf-7469e02e1201";
  const world = await qwenWorld("fork");
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(summary.drift, []);
    for (const word of ["quasarbeet", "copperwhistle", "marmalith"]) {
      assert.deepEqual(foundIn(world, word), [original], word);
    }
    for (const word of ["velvetcrag", "amberloch"]) {
      assert.deepEqual(foundIn(world, word), [fork], word);
    }
    assert.equal(conversationRow(world, fork)!.parent_key, original);
    assert.equal(conversationRow(world, fork)!.title, "On the fork, velvetcrag.");
    // Shown whole: the copies, then its own turn.
    assert.deepEqual(said(world, fork), [
      "user: Read the notes for me, quasarbeet lanternfig.",
      "assistant: read_file",
      "tool_result: Field notes: copperwhistle and driftmallow.",
      "assistant: The notes mention marmalith and vintrope.",
      "user: On the fork, velvetcrag.",
      "assistant: The fork's answer: amberloch.",
    ]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a fork's copies are found in the original, or in the fork when the store lacks the original", async () => {
  const world = await qwenWorld("edits");
  try {
    rmSync(transcript(world.qwen, REWOUND));
    await captureWorld(world);
    assert.deepEqual(foundIn(world, "saltpetal"), [`qwen:${FORK}`]);
    assert.deepEqual(said(world, `qwen:${FORK}`), [
      "user: Read the notes for me, quasarbeet lanternfig.",
      "assistant: read_file",
      "tool_result: Field notes: copperwhistle and driftmallow.",
      "assistant: The notes mention marmalith and vintrope.",
      "user: Carry on instead, emberquill.",
      "assistant: After the rewind: saltpetal.",
      "user: On the fork, velvetcrag.",
      "assistant: The fork's answer: amberloch.",
    ]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex, search and show read Qwen Code's chats from $QWEN_HOME", async () => {
  const world = await qwenWorld(...ALL);
  try {
    const reindex = await runCli("reindex", [], world.vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    const found = await runCli("search", ["saltpetal", "--json"], world.vars);
    assert.equal(found.code, 0, found.stderr);
    const hits = found.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(hits.map((h) => [h.conversation, h.agent]), [[`qwen:${REWOUND}`, "qwen"]]);
    const shown = await runCli("show", [`qwen:${REWOUND}`, "--json"], world.vars);
    assert.equal(shown.code, 0, shown.stderr);
    const page = JSON.parse(shown.stdout);
    assert.equal(page.conversation.title, "Read the notes for me, quasarbeet lanternfig.");
    // The rewound turn where it was said, the rewind, then the turn that replaced it: each once.
    assert.deepEqual(
      page.records.filter((r: RecordJson) => r.text)
        .map((r: RecordJson) => `${r.role ?? r.kind}: ${r.text.split("\n")[0]}`),
      [
        "user: Read the notes for me, quasarbeet lanternfig.",
        "assistant: read_file",
        "tool_result: Field notes: copperwhistle and driftmallow.",
        "assistant: The notes mention marmalith and vintrope.",
        "user: Carry on, cobaltwren.",
        "assistant: An answer to rewind: brackenmoss.",
        "system: /rewind",
        "user: Carry on instead, emberquill.",
        "assistant: After the rewind: saltpetal.",
      ],
    );
    const child = await runCli("show", [`qwen:${CHILD}`, "--json"], world.vars);
    assert.equal(child.code, 0, child.stderr);
    const sub = JSON.parse(child.stdout).conversation;
    assert.equal(sub.parent, `qwen:${DELEGATING}`);
    assert.equal(sub.subagent, true);
    assert.equal(sub.title, "general-purpose: Inspect the notes");
  } finally {
    await world.cleanup();
  }
});

Deno.test("the Qwen adapter reads $QWEN_HOME/projects and ~/.qwen/projects, chats and subagents only", async () => {
  const world = await qwenWorld("subagent");
  try {
    const ctx = { env: world.env, extraRoots: {}, skipped: new Map() };
    assert.deepEqual(qwen.roots(ctx), [
      join(world.qwen, "projects"),
      join(world.home, ".qwen", "projects"),
    ]);
    // Not a chat: another JSONL file beside them.
    writeFileSync(join(world.qwen, "projects", "-home-user-project", "notes.jsonl"), "{}\n");
    const found = [];
    for await (const source of qwen.discover(ctx)) found.push(source.locator);
    assert.deepEqual(
      found.sort(),
      [
        transcript(world.qwen, DELEGATING),
        transcript(world.qwen, CHILD),
      ].sort(),
    );
  } finally {
    await world.cleanup();
  }
});
