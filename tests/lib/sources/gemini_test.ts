// The Gemini CLI adapter against the real logs in fixtures/gemini/: every record derived as
// replaying the log means it, captured byte for byte, read the same by the reader, and each
// message shown and found once across appends, resumes, a rewind, a rewrite and a torn line.

import assert from "node:assert/strict";
import { appendFileSync, cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Buffer } from "node:buffer";
import { envFrom } from "../../../lib/env.ts";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { agentSpec, READERS } from "../../../lib/agents.ts";
import { decodeLine } from "../../../lib/capture/derive.ts";
import { adapterOf, type Derived, type SourceRef } from "../../../lib/sources/adapter.ts";
import { gemini } from "../../../lib/sources/gemini.ts";
import { geminiLineText } from "../../../lib/sources/gemini_text.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { findConversation, pageConversation } from "../../../lib/store/conversations.ts";
import { decodedRow } from "../../../lib/store/raw.ts";
import { type RecordRow, TextDeriver } from "../../../lib/store/records.ts";
import { FLAG_STREAMED } from "../../../lib/store/schema.ts";
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

const MAIN = "gemini:b591831a-93bd-4b4d-87da-6dc011a30f2a";
const REWOUND = "gemini:6696795e-3153-490c-8853-2751af6d6d25";
const PARENT = "gemini:eb76cfa5-e544-4283-8fe8-7511074317a2";
const CHILD = "gemini:366ad0a2-5783-4395-9221-8a557fe900d6";
const UGLY = "gemini:0f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b";
const CHATS = join("tmp", "project", "chats");
const MAIN_FILE = join(CHATS, "session-2026-12-03T18-24-b591831a.jsonl");

/** What `show` prints of the resume fixture's conversation: each message once, in order. */
const MAIN_SHOWN = [
  "message user: Read the notes for me, quasarbeet lanternfig.",
  "tool_call assistant: read_file\n/home/user/project/notes.txt",
  "tool_result -: Field notes: copperwhistle and driftmallow.\n",
  "message assistant: The notes mention marmalith and vintrope.",
  "message user: Carry on, cobaltwren.",
  "message assistant: Resumed fine: plumquartz.",
];

/** A world whose `GEMINI_CLI_HOME` holds the fixture folders given, merged, as its `.gemini`. */
async function geminiWorld(...folders: string[]): Promise<World & { gemini: string }> {
  const world = await makeWorld();
  const home = join(world.dir, "gemini-home");
  for (const folder of folders) {
    cpSync(join(FIXTURES, "gemini", folder), join(home, ".gemini"), { recursive: true });
  }
  world.vars = { ...world.vars, GEMINI_CLI_HOME: home, TZ: "UTC" };
  world.env = envFrom(world.vars);
  return Object.assign(world, { gemini: join(home, ".gemini") });
}

/** Each complete line of a log derived in order, as capture derives them, with its bytes. */
function deriveFile(path: string): { derived: Derived; bytes: Uint8Array }[] {
  const bytes = Deno.readFileSync(path);
  const ref: SourceRef = { agent: "gemini", locator: path, path, format: "jsonl" };
  const state = gemini.initialState(ref);
  const out = [];
  let start = 0;
  for (let end = bytes.indexOf(10); end >= 0; end = bytes.indexOf(10, start)) {
    const line = bytes.subarray(start, end + 1);
    out.push({ derived: gemini.parseLine(decodeLine(line), state, ref), bytes: line });
    start = end + 1;
  }
  return out;
}

/** A derived record in one line: kind, role, what is set of copied/drift, and its text. */
function sign(d: Derived): string {
  const flags = [d.copied ? "copied" : "", d.drift ? `drift ${d.drift.detail}` : ""]
    .filter(Boolean).join(" ");
  return `${d.kind} ${d.role ?? "-"}${flags ? ` (${flags})` : ""}: ${d.text}`;
}

/** The records `show` prints of a conversation (not `meta`, with text), as `sign` writes them. */
function shown(world: World, id: string): string[] {
  return withStore(world, (store, ctx) => {
    const deriver = new TextDeriver(store, ADAPTERS, redactorFor(ctx));
    const conversation = findConversation(store, id);
    const lines: string[] = [];
    let after: number | undefined;
    do {
      const page = pageConversation(store, deriver, conversation, {
        limit: 200,
        ...(after === undefined ? {} : { after }),
      });
      for (const r of page.records) {
        if (r.kind !== "meta" && r.text.trim()) lines.push(`${r.kind} ${r.role ?? "-"}: ${r.text}`);
      }
      after = page.next ?? undefined;
    } while (after !== undefined);
    return lines;
  });
}

/** The conversations search finds `word` in, one entry per hit. */
function found(world: World, word: string): string[] {
  return withStore(
    world,
    (store, ctx) =>
      search(store, ADAPTERS, redactorFor(ctx), { query: word }).hits.map((h) => h.conversation)
        .sort(),
  );
}

/** The gemini conversations the store holds, by id. */
function conversations(world: World) {
  return withStore(world, (store) =>
    store.stmt(
      `SELECT key, title, cwd, project_root AS project, parent_key AS parent, subagent,
         message_count AS messages FROM conversations WHERE agent = 'gemini' ORDER BY key`,
    ).all().map((row) => ({ ...row })));
}

Deno.test("every line of the resume fixture derives as the replayed log means it", () => {
  const lines = deriveFile(join(FIXTURES, "gemini", "home", MAIN_FILE));
  const tool = [
    "tool_call assistant: read_file\n/home/user/project/notes.txt",
    "tool_result -: Field notes: copperwhistle and driftmallow.\n",
  ];
  const history = lines[12]!.derived.text;
  assert.deepEqual(lines.map((l) => sign(l.derived)), [
    "meta -: ", // the header
    "meta - (copied): ", // $set of the session context: context, no text
    "message user: Read the notes for me, quasarbeet lanternfig.",
    "meta -: ", // $set lastUpdated
    "message assistant: ", // the reply, first written without its tool calls
    "meta -: ",
    tool[0], // the same id again, with toolCalls: a newer revision
    tool[1],
    "meta -: ",
    "message assistant: The notes mention marmalith and vintrope.",
    "meta -: ",
    "meta -: ", // the resume's $set sessionId
    `meta - (copied): ${history}`, // the resume's $set messages: the history again
    "message user: Carry on, cobaltwren.",
    "meta -: ",
    "message assistant: Resumed fine: plumquartz.",
    "meta -: ",
  ]);
  assert.match(history, /quasarbeet[\s\S]*copperwhistle[\s\S]*marmalith/);
  assert.doesNotMatch(history, /session_context/);
  for (const { derived } of lines) {
    assert.equal(derived.conversation?.key, MAIN);
    assert.equal(derived.conversation?.cwd, "/home/user/project");
    assert.equal(derived.conversation?.parentKey ?? null, null);
  }
  // Messages are keyed by their id: a revision supersedes the one before; each counts once.
  const messages = lines.filter((l) => l.derived.messageId !== null).map((l) => l.derived);
  assert.ok(messages.every((d) => d.key === `message:${d.messageId}` && d.supersedes));
  assert.equal(lines.filter((l) => l.derived.newMessage).length, 5);
  assert.deepEqual(lines.flatMap((l) => l.derived.title ? [l.derived.title] : []), [
    { text: "Read the notes for me, quasarbeet lanternfig.", rank: 1 },
    { text: "Carry on, cobaltwren.", rank: 1 },
  ]);
  assert.equal(lines[6]!.derived.partId, "read_file__call_conformance000002");
  assert.equal(lines[7]!.derived.partId, "read_file__call_conformance000002");
});

Deno.test("the reader gives every fixture record the adapter's text, and toolOf pairs call and result", async () => {
  const world = await geminiWorld("home", "subagent", "ugly", "truncated");
  try {
    await captureWorld(world);
    withStore(world, (store, ctx) => {
      const redact = redactorFor(ctx);
      const byAdapters = new TextDeriver(store, ADAPTERS, redact);
      const byReaders = new TextDeriver(store, READERS, redact);
      const rows = store.stmt(
        `SELECT r.* FROM records r JOIN sources s ON s.id = r.source_id
         WHERE s.agent = 'gemini' ORDER BY r.id`,
      ).all() as unknown as RecordRow[];
      assert.ok(rows.length > 60, `${rows.length} records`);
      for (const row of rows) {
        assert.equal(byReaders.textOf(row), byAdapters.textOf(row), `record ${row.id}`);
        assert.equal(byReaders.hasText(row), byAdapters.hasText(row), `record ${row.id}`);
        const raw = decodedRow(row).raw;
        assert.equal(geminiLineText(raw), gemini.textOf(raw, {} as SourceRef));
      }
      assert.equal(adapterOf(READERS, "gemini", "/x/session-a.jsonl")?.agent, "gemini");
    });
  } finally {
    await world.cleanup();
  }
  const lines = deriveFile(join(FIXTURES, "gemini", "home", MAIN_FILE));
  const ref = {} as SourceRef;
  assert.deepEqual(gemini.toolOf!(lines[6]!.bytes, ref), {
    calls: [{
      id: "read_file__call_conformance000002",
      name: "read_file",
      input: "/home/user/project/notes.txt",
    }],
    results: [],
    output: null,
  });
  assert.deepEqual(gemini.toolOf!(lines[7]!.bytes, ref), {
    calls: [],
    results: [{ id: "read_file__call_conformance000002", error: false }],
    output: null,
  });
  assert.equal(gemini.toolOf!(lines[2]!.bytes, ref), null);
});

Deno.test("capture keeps every log byte for byte, one conversation per session id, stray files included", async () => {
  const world = await geminiWorld("home", "subagent");
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(summary.empty, []);
    withStore(world, (store) => {
      const sources = store.stmt("SELECT id, locator FROM sources WHERE agent = 'gemini'")
        .all() as { id: number; locator: string }[];
      assert.equal(sources.length, 6);
      for (const { id, locator } of sources) {
        const rows = store.stmt(
          "SELECT * FROM records WHERE source_id = ? ORDER BY generation, offset, seq",
        ).all(id) as unknown as RecordRow[];
        const bytes = Buffer.concat(rows.map((r) => decodedRow(r).raw));
        assert.ok(Buffer.from(readFileSync(locator)).equals(bytes), locator);
      }
      // The stray files of the resumes (a header and the session context) add records to
      // their session, no conversation of their own.
      const stray = store.stmt(
        `SELECT DISTINCT c.key FROM records r JOIN sources s ON s.id = r.source_id
         JOIN conversations c ON c.id = r.conversation_id WHERE s.locator LIKE '%18-25-b591831a%'
           OR s.locator LIKE '%18-31-6696795e%' ORDER BY c.key`,
      ).all() as { key: string }[];
      assert.deepEqual(stray.map((r) => r.key), [REWOUND, MAIN]);
    });
    const prompt = "Read the notes for me, quasarbeet lanternfig.";
    const cwd = "/home/user/project";
    assert.deepEqual(conversations(world), [
      {
        key: CHILD,
        title: "Subtask glimmerfane: read the notes and report.",
        cwd,
        project: cwd,
        parent: PARENT,
        subagent: 1,
        messages: 3,
      },
      { key: REWOUND, title: prompt, cwd, project: cwd, parent: null, subagent: 0, messages: 7 },
      { key: MAIN, title: prompt, cwd, project: cwd, parent: null, subagent: 0, messages: 5 },
      { key: PARENT, title: prompt, cwd, project: cwd, parent: null, subagent: 0, messages: 8 },
    ]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a resume's copy of the history is shown and found once: the exact messages show gives", async () => {
  const world = await geminiWorld("home");
  try {
    await captureWorld(world);
    assert.deepEqual(shown(world, MAIN), MAIN_SHOWN);
    for (const word of ["quasarbeet", "copperwhistle", "marmalith"]) {
      assert.deepEqual(found(world, word), [REWOUND, MAIN], word);
    }
    // The rewound session says both twice: before the rewind and after it.
    assert.deepEqual(found(world, "cobaltwren"), [REWOUND, REWOUND, MAIN]);
    assert.deepEqual(found(world, "plumquartz"), [REWOUND, REWOUND, MAIN]);
    // The session context (the workspace's tree) is context: in no search.
    assert.deepEqual(found(world, "Workspace"), []);
  } finally {
    await world.cleanup();
  }
});

Deno.test("after a rewind, the rewound turn stays where it was said and the new turn follows it", async () => {
  const world = await geminiWorld("home");
  try {
    await captureWorld(world);
    assert.deepEqual(shown(world, REWOUND), [
      ...MAIN_SHOWN,
      "message user: After the rewind, cobaltwren.",
      "message assistant: Resumed fine: plumquartz.",
    ]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a subagent's log is a child conversation of its session; its summary is not indexed again", async () => {
  const world = await geminiWorld("subagent");
  try {
    await captureWorld(world);
    assert.deepEqual(shown(world, CHILD), [
      "message user: Subtask glimmerfane: read the notes and report.",
      "tool_call assistant: read_file\n/home/user/project/notes.txt",
      "tool_result -: Field notes: copperwhistle and driftmallow.\n",
      "tool_call assistant: complete_task\nSubagent result: tessellark.",
      'summary -: {\n  "response": "Subagent result: tessellark."\n}',
    ]);
    assert.deepEqual(found(world, "tessellark"), [CHILD, PARENT]);
    assert.deepEqual(found(world, "orchidvault"), [PARENT]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a log read in two parts (an append after a capture) gives the same messages once", async () => {
  const world = await geminiWorld("home");
  try {
    const path = join(world.gemini, MAIN_FILE);
    const whole = readFileSync(path);
    // Cut after the first answer's line, before the resume.
    const cut = whole.indexOf("\n", whole.indexOf("marmalith")) + 1;
    writeFileSync(path, whole.subarray(0, cut));
    await captureWorld(world);
    assert.deepEqual(shown(world, MAIN), MAIN_SHOWN.slice(0, 4));
    appendFileSync(path, whole.subarray(cut));
    await captureWorld(world);
    assert.deepEqual(shown(world, MAIN), MAIN_SHOWN);
    assert.deepEqual(found(world, "copperwhistle"), [REWOUND, MAIN]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a log the CLI rewrote whole is a new generation whose messages replace the old ones", async () => {
  const world = await geminiWorld("home");
  try {
    await captureWorld(world);
    cpSync(join(FIXTURES, "gemini", "rewritten", MAIN_FILE), join(world.gemini, MAIN_FILE));
    await captureWorld(world);
    assert.deepEqual(shown(world, MAIN), [
      ...MAIN_SHOWN,
      "message user: After the rewrite, emberlark.",
      "message assistant: Still here: mossglint.",
    ]);
    for (const word of ["quasarbeet", "copperwhistle", "marmalith"]) {
      assert.deepEqual(found(world, word), [REWOUND, MAIN], word);
    }
    assert.deepEqual(found(world, "plumquartz"), [REWOUND, REWOUND, MAIN]);
    assert.deepEqual(found(world, "mossglint"), [MAIN]);
    withStore(world, (store) => {
      const generations = store.stmt(
        `SELECT DISTINCT r.generation FROM records r JOIN sources s ON s.id = r.source_id
         WHERE s.locator LIKE '%18-24-b591831a%' ORDER BY r.generation`,
      ).all() as { generation: number }[];
      assert.equal(generations.length, 2, "the old generation stays stored");
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a torn last line waits; completed, the log reads as if written at once", async () => {
  const world = await geminiWorld("truncated");
  try {
    const path = join(world.gemini, MAIN_FILE);
    const stored = () =>
      withStore(world, (store) =>
        Buffer.concat(
          (store.stmt(
            `SELECT r.* FROM records r JOIN sources s ON s.id = r.source_id WHERE s.locator = ?
             ORDER BY generation, offset, seq`,
          ).all(path) as unknown as RecordRow[]).map((r) => decodedRow(r).raw),
        ));
    const torn = readFileSync(path);
    await captureWorld(world);
    assert.deepEqual(shown(world, MAIN), MAIN_SHOWN);
    // Everything up to the torn line, which is not a record (nor drift) until it ends.
    assert.ok(stored().equals(torn.subarray(0, torn.lastIndexOf("\n") + 1)));
    const whole = readFileSync(join(FIXTURES, "gemini", "home", MAIN_FILE));
    appendFileSync(path, whole.subarray(torn.length));
    await captureWorld(world);
    assert.ok(stored().equals(whole));
    assert.deepEqual(shown(world, MAIN), MAIN_SHOWN);
    withStore(
      world,
      (store) =>
        assert.deepEqual(store.stmt("SELECT * FROM drift WHERE agent = 'gemini'").all(), []),
    );
  } finally {
    await world.cleanup();
  }
});

Deno.test("a torn line, unknown records, $set keys and message types are drift, kept raw; the session goes on", async () => {
  const lines = deriveFile(
    join(FIXTURES, "gemini", "ugly", CHATS, "session-2026-12-03T18-40-0f1e2d3c.jsonl"),
  );
  assert.deepEqual(lines.flatMap((l) => (l.derived.drift ? [l.derived.drift] : [])), [
    { category: "unparsable", detail: "invalid JSON" },
    { category: "unknown_type", detail: "$set/pinned" },
    { category: "unknown_type", detail: "record/$push" },
    { category: "unknown_type", detail: "message/plan" },
  ]);
  const world = await geminiWorld("ugly");
  try {
    await captureWorld(world);
    assert.deepEqual(shown(world, UGLY), MAIN_SHOWN.slice(0, 4));
    assert.deepEqual(found(world, "gravelwick"), [], "drift is not indexed");
    withStore(world, (store) => {
      const drift = store.stmt(
        "SELECT category, detail, count FROM drift WHERE agent = 'gemini' ORDER BY detail",
      ).all() as Record<string, unknown>[];
      assert.deepEqual(drift.map((d) => `${d.category} ${d.detail} ${d.count}`), [
        "unknown_type $set/pinned 1",
        "unparsable invalid JSON 1",
        "unknown_type message/plan 1",
        "unknown_type record/$push 1",
      ]);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("lines too long to hold are streamed and told apart by their short fields: each message once", async () => {
  const world = await geminiWorld("home");
  try {
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      // Every line over 500 bytes takes the streaming path: the session context, the reply
      // with its tool calls and the resume's copy of the history.
      await runPass(store, ctx, { limits: { maxLine: 500 } });
      const streamed = store.stmt(
        `SELECT count(*) AS n FROM records WHERE (flags & ${FLAG_STREAMED}) != 0`,
      ).get() as { n: number };
      assert.ok(streamed.n >= 3, `${streamed.n} streamed`);
    } finally {
      store.close();
    }
    const kinds = (lines: string[]) => lines.map((l) => l.slice(0, l.indexOf(":")));
    assert.deepEqual(kinds(shown(world, MAIN)), kinds(MAIN_SHOWN));
    for (const word of ["quasarbeet", "copperwhistle", "marmalith", "read_file"]) {
      assert.deepEqual(found(world, word), [REWOUND, MAIN], word);
    }
    assert.deepEqual(found(world, "Workspace"), []);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a rebuild derives the same records, index and conversations again", async () => {
  const world = await geminiWorld("home", "subagent", "ugly");
  try {
    await captureWorld(world);
    cpSync(join(FIXTURES, "gemini", "rewritten", MAIN_FILE), join(world.gemini, MAIN_FILE));
    await captureWorld(world);
    const snapshot = () =>
      withStore(world, (store) => ({
        conversations: store.stmt(
          `SELECT key, title, message_count, record_count, first_ts, last_ts, parent_key, subagent,
             cwd, project_root FROM conversations ORDER BY key`,
        ).all(),
        records: store.stmt(
          `SELECT id, kind, role, ts, flags, message_id, part_id, conversation_id FROM records
           ORDER BY id`,
        ).all(),
        drift: store.stmt("SELECT * FROM drift ORDER BY source_id, detail").all(),
        hits: store.stmt("SELECT rowid FROM fts ORDER BY rowid").all(),
      }));
    const before = snapshot();
    const summary = await captureWorld(world, { rebuild: true });
    assert.equal(summary.records, 0);
    assert.deepEqual(snapshot(), before);
  } finally {
    await world.cleanup();
  }
});

Deno.test("the cwd is the project's .project_root, else projects.json's entry, else the session context's", async () => {
  const world = await geminiWorld("home");
  try {
    const log = join(world.gemini, MAIN_FILE);
    const cwds = () => [...new Set(deriveFile(log).map((l) => l.derived.conversation?.cwd))];
    writeFileSync(join(world.gemini, "tmp", "project", ".project_root"), "/srv/from-root");
    assert.deepEqual(cwds(), ["/srv/from-root", "/home/user/project"]);
    Deno.removeSync(join(world.gemini, "tmp", "project", ".project_root"));
    writeFileSync(
      join(world.gemini, "projects.json"),
      JSON.stringify({ projects: { "/srv/other": "other", "/srv/from-index": "project" } }),
    );
    assert.deepEqual(cwds(), ["/srv/from-index", "/home/user/project"]);
    Deno.removeSync(join(world.gemini, "projects.json"));
    // Only the header, before the session context, goes without.
    assert.deepEqual(cwds(), [null, "/home/user/project"]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("discovery finds main logs and subagents' logs under both roots, nothing else", async () => {
  const world = await geminiWorld("home", "subagent");
  try {
    const home = join(world.home, ".gemini", "tmp", "other", "chats");
    Deno.mkdirSync(home, { recursive: true });
    writeFileSync(join(home, "session-2026-12-01T10-00-aaaaaaaa.jsonl"), "");
    writeFileSync(join(home, "session-2026-12-01T10-00-aaaaaaaa.json"), "{}");
    writeFileSync(join(world.gemini, "tmp", "project", "logs.jsonl"), "");
    const ctx = { env: world.env, extraRoots: {}, skipped: new Map() };
    const roots = gemini.roots(ctx);
    assert.deepEqual(roots, [join(world.gemini, "tmp"), join(world.home, ".gemini", "tmp")]);
    assert.deepEqual(agentSpec("gemini").cli.resume("b591"), ["--resume", "b591"]);
    assert.equal(agentSpec("gemini").cli.fork("b591"), null);
    const found: string[] = [];
    for await (const s of gemini.discover(ctx)) {
      found.push(s.path.slice(world.dir.length));
    }
    assert.deepEqual(found.sort(), [
      "/gemini-home/.gemini/tmp/project/chats/eb76cfa5-e544-4283-8fe8-7511074317a2/366ad0a2-5783-4395-9221-8a557fe900d6.jsonl",
      "/gemini-home/.gemini/tmp/project/chats/session-2026-12-03T18-24-b591831a.jsonl",
      "/gemini-home/.gemini/tmp/project/chats/session-2026-12-03T18-25-b591831a.jsonl",
      "/gemini-home/.gemini/tmp/project/chats/session-2026-12-03T18-30-6696795e.jsonl",
      "/gemini-home/.gemini/tmp/project/chats/session-2026-12-03T18-31-6696795e.jsonl",
      "/gemini-home/.gemini/tmp/project/chats/session-2026-12-03T19-12-eb76cfa5.jsonl",
      "/home/.gemini/tmp/other/chats/session-2026-12-01T10-00-aaaaaaaa.jsonl",
    ]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex, search and show read Gemini CLI's logs as a user runs them", async () => {
  const world = await geminiWorld("home", "subagent");
  try {
    const reindex = await runCli("reindex", [], world.vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    assert.doesNotMatch(reindex.stderr, /error/i);
    const hits = await runCli("search", ["copperwhistle", "--json"], world.vars);
    assert.equal(hits.code, 0, hits.stderr);
    const lines = hits.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.conversation).sort(),
      [CHILD, REWOUND, MAIN, PARENT].sort(),
    );
    assert.ok(lines.every((l) => l.agent === "gemini"));
    const show = await runCli("show", [MAIN], world.vars);
    assert.equal(show.code, 0, show.stderr);
    const body = show.stdout.split("\n").slice(3).join("\n");
    assert.equal(
      body,
      [
        "2026-12-03 18:24 user",
        "Read the notes for me, quasarbeet lanternfig.",
        "",
        "18:24 ▸ tool_call: read_file /home/user/project/notes.txt",
        "18:24 ◂ tool_result: Field notes: copperwhistle and driftmallow.",
        "2026-12-03 18:24 assistant",
        "The notes mention marmalith and vintrope.",
        "",
        "2026-12-03 18:25 user",
        "Carry on, cobaltwren.",
        "",
        "2026-12-03 18:25 assistant",
        "Resumed fine: plumquartz.",
        "",
        "",
      ].join("\n"),
    );
  } finally {
    await world.cleanup();
  }
});
