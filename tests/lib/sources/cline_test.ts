// Capture of Cline: sessions/<id>/<id>.messages.json (and a subagent's agent_<id>.messages.json)
// under $CLINE_DIR/data, $CLINE_DATA_DIR or ~/.cline/data, from documents the real `cline` 3.0.65
// wrote and rewrote; appends across a resume, a rewind's rewrite, drift, a torn document, and
// reindex/search/show/resume as a user runs them.

import { pageRecords, printed } from "./_shown.ts";
import { sessionUsage, storedCalls } from "./_usage.ts";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { redactorFor } from "../../../lib/context.ts";
import { envFrom } from "../../../lib/env.ts";
import type { SourceRef } from "../../../lib/sources/adapter.ts";
import { cline } from "../../../lib/sources/cline.ts";
import { clineText } from "../../../lib/sources/cline_text.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { READERS } from "../../../lib/agents.ts";
import { type RecordJson } from "../../../lib/store/conversations.ts";
import { type RecordRow, TextDeriver } from "../../../lib/store/records.ts";
import { search } from "../../../lib/store/search.ts";
import {
  captureWorld,
  FIXTURES,
  makeWorld,
  runCli,
  withStore,
  type World,
} from "../../_helpers.ts";

const MAIN = "1796334418968_nw0ry";
const AGENT = "agent_1796334487610_z2jb0r";
const CHILD = `${MAIN}__${AGENT}`;
const STAGED = "1796334276421_hw2d0";
const TORN = "1796334500000_torn1";
const ORIGINAL = "1796336393696_m4g5u";
const RESTORED = "1796336423876_thvey";
const PROJECT = "/home/user/project";

/** A world whose `$CLINE_DATA_DIR` is empty; `place` puts sessions in it. */
async function clineWorld(): Promise<World> {
  const world = await makeWorld();
  world.vars.CLINE_DATA_DIR = join(world.dir, "cline-data");
  world.env = envFrom(world.vars);
  mkdirSync(sessions(world), { recursive: true });
  return world;
}

function sessions(world: World): string {
  return join(world.vars.CLINE_DATA_DIR!, "sessions");
}

/** Copies a fixture session folder (`fixtures/cline/<from>/<id>`) over the world's, in place. */
function place(world: World, from: string, session: string): void {
  const dir = join(FIXTURES, "cline", from, session);
  const to = join(sessions(world), session);
  mkdirSync(to, { recursive: true });
  for (const entry of Deno.readDirSync(dir)) {
    writeFileSync(join(to, entry.name), Deno.readFileSync(join(dir, entry.name)));
  }
}

const HOME = "home/.cline/data/sessions";

function hits(world: World, query: string) {
  return withStore(
    world,
    (store, ctx) => search(store, ADAPTERS, redactorFor(ctx), { query, limit: 50 }).hits,
  );
}

function conversation(world: World, key: string): Record<string, unknown> {
  return withStore(world, (store) => ({
    ...store.db.prepare(
      `SELECT key, title, parent_key, subagent, cwd, project_root, branch, agent_version,
         message_count FROM conversations WHERE key = ?`,
    ).get(key),
  }));
}

const READ = [
  "message/user: Read the notes for me, quasarbeet lanternfig.",
  "tool_call/assistant: read_files | /home/user/project/notes.txt",
  "tool_result: /home/user/project/notes.txt | 1 | Field notes: copperwhistle and driftmallow.",
  "message/assistant: The notes mention marmalith and vintrope.",
];
const RESUMED = [
  "message/user: Carry on, cobaltwren.",
  "message/assistant: Resumed fine: plumquartz.",
];

Deno.test("every message of the Cline fixture is derived with its kind, role, conversation, text and parent", async () => {
  const world = await clineWorld();
  try {
    cpSync(join(FIXTURES, "cline", HOME, MAIN), join(sessions(world), MAIN), { recursive: true });
    const summary = await captureWorld(world);
    assert.deepEqual(summary.drift, []);
    const key = `cline:${MAIN}`;
    assert.deepEqual(printed(world, key), [
      ...READ,
      "message/user: Hand this to a helper, zephyrkiln.",
      "tool_call/assistant: spawn_agent | You are a helper: do the task. | Subtask glimmerfane: read the notes and report.",
      'tool_result: {"text":"Subagent result: tessellark.","iterations":2,"finishReason":"completed","usage":{"inputTokens":640,"outputTokens":28}}',
      "message/assistant: The helper reported back: orchidvault.",
      ...RESUMED,
    ]);
    assert.deepEqual(printed(world, `cline:${CHILD}`), [
      "message/user: Subtask glimmerfane: read the notes and report.",
      "tool_call/assistant: read_files | /home/user/project/notes.txt",
      "tool_result: /home/user/project/notes.txt | 1 | Field notes: copperwhistle and driftmallow.",
      "message/assistant: Subagent result: tessellark.",
    ]);
    assert.deepEqual(conversation(world, key), {
      key,
      title: "Read the notes for me, quasarbeet lanternfig.",
      parent_key: null,
      subagent: 0,
      cwd: PROJECT,
      project_root: PROJECT,
      branch: "main",
      agent_version: "3.0.65",
      message_count: 10,
    });
    assert.deepEqual(conversation(world, `cline:${CHILD}`), {
      key: `cline:${CHILD}`,
      title: "Subtask glimmerfane: read the notes and report.",
      parent_key: key,
      subagent: 1,
      cwd: PROJECT,
      project_root: PROJECT,
      branch: null,
      agent_version: "3.0.65",
      message_count: 4,
    });
    for (const word of ["quasarbeet", "marmalith", "zephyrkiln", "orchidvault", "cobaltwren"]) {
      assert.deepEqual(hits(world, word).map((h) => h.conversation), [key], word);
    }
    assert.deepEqual(hits(world, "glimmerfane").map((h) => h.conversation).sort(), [
      key,
      `cline:${CHILD}`,
    ]);
    // Every stored message row holds the message as Cline wrote it (equal JSON).
    const document = JSON.parse(
      Deno.readTextFileSync(join(sessions(world), MAIN, `${MAIN}.messages.json`)),
    );
    const stored = withStore(world, (store) =>
      store.db.prepare(
        `SELECT r.raw FROM records r JOIN sources s ON s.id = r.source_id
         WHERE s.locator = ? ORDER BY r.offset`,
      ).all(join(sessions(world), MAIN, `${MAIN}.messages.json`)) as { raw: Uint8Array }[]);
    const rows = stored.map((r) => JSON.parse(new TextDecoder().decode(r.raw)));
    assert.equal(rows[0].cline, "session");
    assert.deepEqual(rows.slice(1).map((r) => r.message), document.messages);
    // The tool call and its result name the same id.
    const source = {} as SourceRef;
    assert.deepEqual(cline.toolOf!(stored[2]!.raw, source), {
      calls: [{
        id: "call_conformance000002",
        name: "read_files",
        input: "/home/user/project/notes.txt",
      }],
      results: [],
      output: null,
    });
    assert.deepEqual(cline.toolOf!(stored[3]!.raw, source)?.results, [
      { id: "call_conformance000002", error: false },
    ]);
    assert.equal(cline.toolOf!(stored[1]!.raw, source), null);
  } finally {
    await world.cleanup();
  }
});

Deno.test("READERS read every stored Cline record as the adapter does", async () => {
  const world = await clineWorld();
  try {
    cpSync(join(FIXTURES, "cline", HOME, MAIN), join(sessions(world), MAIN), { recursive: true });
    place(world, "ugly/sessions", STAGED);
    await captureWorld(world);
    withStore(world, (store, ctx) => {
      const redact = redactorFor(ctx);
      const byAdapters = new TextDeriver(store, ADAPTERS, redact);
      const byReaders = new TextDeriver(store, READERS, redact);
      const rows = store.stmt("SELECT * FROM records ORDER BY id").all() as unknown as RecordRow[];
      let withText = 0;
      for (const row of rows) {
        const text = byAdapters.textOf(row);
        assert.equal(byReaders.textOf(row), text, `record ${row.id}`);
        assert.equal(byReaders.hasText(row), byAdapters.hasText(row), `record ${row.id}`);
        assert.equal(
          clineText.textOf(row.raw, {} as SourceRef),
          cline.textOf(row.raw, {} as SourceRef),
        );
        if (text) withText++;
      }
      assert.ok(withText >= 14, `${withText} of ${rows.length} records have text`);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a document rewritten each turn: appends across a resume keep each message once", async (t) => {
  const world = await clineWorld();
  const key = `cline:${STAGED}`;
  const count = (word: string) => hits(world, word).length;
  try {
    await t.step("the first turn", async () => {
      place(world, "stages/1-start/sessions", STAGED);
      const summary = await captureWorld(world);
      assert.deepEqual(summary.drift, []);
      assert.equal(summary.records, 5, "the session and its four messages");
      assert.deepEqual(printed(world, key), READ);
    });
    await t.step("the resumed turn: the document written again, two messages more", async () => {
      place(world, "stages/2-resume/sessions", STAGED);
      const summary = await captureWorld(world);
      assert.equal(summary.records, 3, "the changed session and the two new messages");
      assert.deepEqual(printed(world, key), [...READ, ...RESUMED]);
      for (const word of ["quasarbeet", "copperwhistle", "marmalith", "cobaltwren"]) {
        assert.equal(count(word), 1, word);
      }
    });
    await t.step("the same document again is nothing new; a rebuild derives the same", async () => {
      const before = printed(world, key);
      assert.equal((await captureWorld(world)).records, 0);
      await captureWorld(world, { rebuild: true });
      assert.deepEqual(printed(world, key), before);
      assert.equal(count("marmalith"), 1);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a checkpoint restore's new session shows the messages it kept and finds them once, in the session they came from", async (t) => {
  const world = await clineWorld();
  const original = `cline:${ORIGINAL}`;
  const restored = `cline:${RESTORED}`;
  const count = (word: string) => hits(world, word).map((h) => h.conversation);
  const stage = (name: string) => {
    for (const session of Deno.readDirSync(join(FIXTURES, "cline", "restore", name, "sessions"))) {
      place(world, `restore/${name}/sessions`, session.name);
    }
  };
  const AFTER = [
    "message/user: After the rewind, cobaltwren.",
    "message/assistant: Resumed fine: plumquartz.",
  ];
  try {
    await t.step("a session and its resumed turn", async () => {
      stage("1-start");
      await captureWorld(world);
      stage("2-resume");
      await captureWorld(world);
      assert.deepEqual(printed(world, original), [...READ, ...RESUMED]);
    });
    await t.step("Restore Checkpoint to the resumed prompt: a new session of copies", async () => {
      stage("3-restored");
      const summary = await captureWorld(world);
      assert.deepEqual(summary.drift, []);
      assert.deepEqual(printed(world, restored), READ);
      assert.deepEqual(conversation(world, restored), {
        key: restored,
        title: "Read the notes for me, quasarbeet lanternfig.",
        parent_key: original,
        subagent: 0,
        cwd: PROJECT,
        project_root: PROJECT,
        branch: "main",
        agent_version: "3.0.65",
        message_count: 0,
      });
      for (const word of ["quasarbeet", "copperwhistle", "marmalith", "cobaltwren"]) {
        assert.deepEqual(count(word), [original], word);
      }
    });
    await t.step("the next turn in the restored session is its own", async () => {
      stage("4-after");
      await captureWorld(world);
      assert.deepEqual(printed(world, original), [...READ, ...RESUMED]);
      assert.deepEqual(printed(world, restored), [...READ, ...AFTER]);
      assert.deepEqual(count("marmalith"), [original]);
      assert.deepEqual(count("cobaltwren").sort(), [original, restored]);
      const before = printed(world, restored);
      await captureWorld(world, { rebuild: true });
      assert.deepEqual(printed(world, restored), before);
      assert.deepEqual(count("marmalith"), [original]);
    });
    await t.step(
      "without the session it came from, the copies are found where they are",
      async () => {
        const alone = await clineWorld();
        try {
          place(alone, "restore/4-after/sessions", RESTORED);
          await captureWorld(alone);
          assert.deepEqual(printed(alone, restored), [...READ, ...AFTER]);
          const found = withStore(
            alone,
            (store, ctx) =>
              search(store, ADAPTERS, redactorFor(ctx), { query: "marmalith", limit: 5 }).hits,
          );
          assert.deepEqual(found.map((h) => h.conversation), [restored]);
        } finally {
          await alone.cleanup();
        }
      },
    );
  } finally {
    await world.cleanup();
  }
});

Deno.test("a message changed in place supersedes its older revision: found once, shown once", async () => {
  const world = await clineWorld();
  const key = `cline:${STAGED}`;
  try {
    place(world, "stages/1-start/sessions", STAGED);
    await captureWorld(world);
    const path = join(sessions(world), STAGED, `${STAGED}.messages.json`);
    const document = JSON.parse(Deno.readTextFileSync(path));
    document.messages[3].content[0].text = "The notes mention marmalith, vintrope and quillmarsh.";
    writeFileSync(path, JSON.stringify(document, null, 2));
    const summary = await captureWorld(world);
    assert.equal(summary.records, 1);
    assert.deepEqual(printed(world, key), [
      ...READ.slice(0, 3),
      "message/assistant: The notes mention marmalith, vintrope and quillmarsh.",
    ]);
    assert.equal(hits(world, "marmalith").length, 1);
  } finally {
    await world.cleanup();
  }
});

Deno.test("each assistant message's metrics are one call, its subagent's in its session; a rewrite counts none again", async (t) => {
  const world = await clineWorld();
  try {
    await t.step("a session with a subagent", async () => {
      cpSync(join(FIXTURES, "cline", "home", ".cline", "data", "sessions"), sessions(world), {
        recursive: true,
      });
      await captureWorld(world);
      // The lead's five replies (320 tokens in each; 21, 11, 27, 10 and 7 out: the session
      // document's usage, 1600 and 76) and the subagent's two (320 each; 21 and 7 out).
      assert.deepEqual(sessionUsage(world, "cline"), {
        [`cline:${MAIN}`]: { calls: 7, input: 2240, output: 104, cacheWrite: 0, cacheRead: 0 },
      });
      const calls = storedCalls(world, "cline");
      assert.ok(calls.every((c) => c.model === "conformance-model" && c.cost === null));
      assert.ok(calls.every((c) => /^message:msg_/.test(c.call ?? "") && c.ts !== null));
    });
    await t.step("the document rewritten by a resume, read again, rebuilt", async () => {
      place(world, "stages/1-start/sessions", STAGED);
      await captureWorld(world);
      const staged = () => sessionUsage(world, "cline")[`cline:${STAGED}`];
      assert.deepEqual(staged(), { calls: 2, input: 640, output: 32, cacheWrite: 0, cacheRead: 0 });
      place(world, "stages/2-resume/sessions", STAGED);
      await captureWorld(world);
      // What the session document says of the three turns: 960 in, 39 out.
      const resumed = { calls: 3, input: 960, output: 39, cacheWrite: 0, cacheRead: 0 };
      assert.deepEqual(staged(), resumed);
      await captureWorld(world);
      await captureWorld(world, { rebuild: true });
      assert.deepEqual(staged(), resumed);
      // A store captured before Cline's metrics were read: deriving again fills them.
      withStore(world, (store) => {
        store.db.exec(
          "DELETE FROM usage; UPDATE sources SET derivation = NULL; DELETE FROM meta WHERE key = 'derivations'",
        );
      });
      await captureWorld(world);
      assert.deepEqual(staged(), resumed);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a reply's metrics: the input without the cache's reads and writes, and Cline's cost when it priced one", async () => {
  const world = await clineWorld();
  try {
    place(world, "stages/1-start/sessions", STAGED);
    const path = join(sessions(world), STAGED, `${STAGED}.messages.json`);
    const document = JSON.parse(Deno.readTextFileSync(path));
    // An Anthropic model through Cline's SDK: the input counts the cache's tokens.
    document.messages[1].metrics = {
      inputTokens: 1000,
      outputTokens: 40,
      cacheReadTokens: 600,
      cacheWriteTokens: 100,
      cost: 0.0123,
    };
    writeFileSync(path, JSON.stringify(document, null, 2));
    await captureWorld(world);
    assert.deepEqual(sessionUsage(world, "cline"), {
      [`cline:${STAGED}`]: {
        calls: 2,
        input: 300 + 320,
        output: 51,
        cacheWrite: 100,
        cacheRead: 600,
      },
    });
    assert.deepEqual(storedCalls(world, "cline").map((c) => c.cost), [0.0123, null]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a restored session's copies count once, in the session they came from, whichever is read first", async (t) => {
  // The original's three replies (960 in, 39 out) and the restored session's own (320 and 7),
  // which the report counts in the session it was restored from, its parent.
  const both = { calls: 4, input: 1280, output: 46, cacheWrite: 0, cacheRead: 0 };
  for (const first of [ORIGINAL, RESTORED]) {
    await t.step(
      `${first === ORIGINAL ? "the original" : "the restored session"} first`,
      async () => {
        const world = await clineWorld();
        try {
          place(world, "restore/4-after/sessions", first);
          await captureWorld(world);
          place(world, "restore/4-after/sessions", first === ORIGINAL ? RESTORED : ORIGINAL);
          await captureWorld(world);
          assert.deepEqual(sessionUsage(world, "cline"), { [`cline:${ORIGINAL}`]: both });
          // Each call once: the two copied replies under their ids, then the two of their own.
          const calls = storedCalls(world, "cline").map((c) => c.call).sort();
          assert.deepEqual(calls, [
            "message:msg_OV-7Pgvu",
            "message:msg_YkiXh6gL",
            "message:msg_e8UaY4kA",
            "message:msg_enrcUmRJ",
          ]);
        } finally {
          await world.cleanup();
        }
      },
    );
  }
});

Deno.test("a message without a role, an unknown block and an unknown role are drift; the rest is read", async () => {
  const world = await clineWorld();
  try {
    place(world, "ugly/sessions", STAGED);
    const summary = await captureWorld(world);
    assert.deepEqual(
      summary.drift.map((d) => `${d.agent} ${d.version} ${d.category} ${d.detail} ${d.count}`)
        .sort(),
      [
        "cline 3.0.65 missing_fields message without an id or a role 1",
        "cline 3.0.65 unknown_type block/hologram 1",
        "cline 3.0.65 unknown_type role/narrator 1",
      ],
    );
    assert.deepEqual(printed(world, `cline:${STAGED}`), READ);
    assert.equal(pageRecords(world, `cline:${STAGED}`).length, 8);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a torn document is skipped with a warning that names it, and read once it is whole", async () => {
  const world = await clineWorld();
  try {
    place(world, "torn/sessions", TORN);
    place(world, "stages/1-start/sessions", STAGED);
    const summary = await captureWorld(world);
    const warned = JSON.stringify(summary);
    assert.match(warned, new RegExp(`${TORN}\\.messages\\.json`));
    assert.deepEqual(printed(world, `cline:${STAGED}`), READ, "the other session is read");
    // Whole again: the first turn's document under the torn session's id.
    const path = join(sessions(world), TORN, `${TORN}.messages.json`);
    const whole = JSON.parse(
      Deno.readTextFileSync(
        join(FIXTURES, "cline", "stages/1-start/sessions", STAGED, `${STAGED}.messages.json`),
      ),
    );
    writeFileSync(path, JSON.stringify({ ...whole, sessionId: TORN }, null, 2));
    await captureWorld(world);
    assert.deepEqual(printed(world, `cline:${TORN}`), READ);
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex, search, show and resume --print as a user runs them read $CLINE_DIR", async () => {
  const world = await makeWorld();
  try {
    world.vars.CLINE_DIR = join(world.dir, "cline-dir");
    cpSync(join(FIXTURES, "cline", "home", ".cline"), world.vars.CLINE_DIR, { recursive: true });
    const reindex = await runCli("reindex", [], world.vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    const found = await runCli("search", ["tessellark", "--agent", "cline", "--json"], world.vars);
    assert.equal(found.code, 0, found.stderr);
    const lines = found.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => `${l.conversation} ${l.kind}`).sort(), [
      `cline:${MAIN} tool_result`,
      `cline:${CHILD} message`,
    ]);
    const show = await runCli("show", [`cline:${MAIN}`, "--json"], world.vars);
    assert.equal(show.code, 0, show.stderr);
    const page = JSON.parse(show.stdout);
    assert.equal(page.conversation.cwd, PROJECT);
    const said = (page.records as RecordJson[]).filter((r) => r.kind === "message")
      .map((r) => `${r.role}: ${r.text}`);
    assert.deepEqual(said, [
      "user: Read the notes for me, quasarbeet lanternfig.",
      "assistant: The notes mention marmalith and vintrope.",
      "user: Hand this to a helper, zephyrkiln.",
      "assistant: The helper reported back: orchidvault.",
      "user: Carry on, cobaltwren.",
      "assistant: Resumed fine: plumquartz.",
    ]);
    const printed = await runCli("resume", [`cline:${MAIN}`, "--print"], world.vars);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, new RegExp(`cline --id ${MAIN}`));
  } finally {
    await world.cleanup();
  }
});

Deno.test("Cline's roots follow $CLINE_SESSION_DATA_DIR, $CLINE_DATA_DIR, $CLINE_DIR and ~/.cline; only messages documents in a session folder are sources", async () => {
  const world = await makeWorld();
  try {
    const vars = {
      ...world.vars,
      CLINE_SESSION_DATA_DIR: join(world.dir, "s"),
      CLINE_DATA_DIR: join(world.dir, "d"),
      CLINE_DIR: join(world.dir, "c"),
    };
    const ctx = { env: envFrom(vars), extraRoots: {}, skipped: new Map() };
    assert.deepEqual(cline.roots(ctx), [
      join(world.dir, "s"),
      join(world.dir, "d", "sessions"),
      join(world.dir, "c", "data", "sessions"),
      join(world.home, ".cline", "data", "sessions"),
    ]);
    const root = join(world.dir, "s");
    cpSync(join(FIXTURES, "cline", HOME), root, { recursive: true });
    writeFileSync(join(root, "stray.messages.json"), "{}");
    const found = [];
    for await (const source of cline.discover(ctx)) found.push(source.locator);
    assert.deepEqual(found, [
      join(root, MAIN, `${MAIN}.messages.json`),
      join(root, MAIN, `${AGENT}.messages.json`),
    ]);
  } finally {
    await world.cleanup();
  }
});
