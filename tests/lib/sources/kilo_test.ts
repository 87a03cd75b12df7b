// Capture of the Kilo Code CLI: OpenCode's tables in Kilo's own `kilo.db` (fixtures written by
// Kilo 7.7.7, fixtures/kilo/MANIFEST.json), its quoted `kilo run` prompts, its subagents, a
// revert, damaged rows, and a real reindex, search, show and resume on a copy of the fixtures.

import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join, relative } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { redactorFor } from "../../../lib/context.ts";
import { READERS } from "../../../lib/agents.ts";
import type { SourceRef } from "../../../lib/sources/adapter.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { kilo } from "../../../lib/sources/kilo.ts";
import { kiloText } from "../../../lib/sources/kilo_text.ts";
import { opencode } from "../../../lib/sources/opencode.ts";
import { opencodeText } from "../../../lib/sources/opencode_text.ts";
import { findConversation, pageConversation } from "../../../lib/store/conversations.ts";
import { type RecordRow, TextDeriver } from "../../../lib/store/records.ts";
import { search } from "../../../lib/store/search.ts";
import { envFrom } from "../../../lib/env.ts";
import { DAMAGED } from "../../../fixtures/kilo/make_damaged.ts";
import {
  captureWorld,
  FIXTURES,
  makeWorld,
  runCli,
  tempDir,
  withStore,
  type World,
} from "../../_helpers.ts";

const KILO = join(FIXTURES, "kilo");
const MAIN = "ses_dc2d5c1e7ffemZSXt2XvZxBZL5";
const PARENT = "ses_dc2acb3f0ffedVb770fqVhX9kU";
const CHILD = "ses_dc2abe1a3ffe4TyowY6iNKF3Sp";
const REVERTED = "ses_dc2ddb8edffempIaA1u6I7tnMk";
const PROJECT = "/home/user/project";
const PROMPT = "Read the notes for me, quasarbeet lanternfig.";

/** Kilo's data dir in the world (`$XDG_DATA_HOME/kilo`). */
const kiloDir = (world: World) => join(world.xdgData, "kilo");
const dbPath = (world: World) => join(kiloDir(world), "kilo.db");

/** A world whose Kilo data dir holds a copy of `fixtures/kilo/<dir>/kilo.db`. */
async function kiloWorld(dir: string): Promise<World> {
  const world = await makeWorld();
  Deno.mkdirSync(kiloDir(world), { recursive: true });
  cpSync(join(KILO, dir, "kilo.db"), dbPath(world));
  return world;
}

/** Puts another stage's database where Kilo keeps its own, as Kilo's writes would leave it. */
function replaceDb(world: World, dir: string): void {
  cpSync(join(KILO, dir, "kilo.db"), dbPath(world));
}

function hits(world: World, query: string) {
  return withStore(
    world,
    (store, ctx) => search(store, ADAPTERS, redactorFor(ctx), { query, limit: 50 }).hits,
  );
}

interface Shown {
  kind: string;
  role: string | null;
  text: string;
  raw: string;
  partId: string | null;
  messageId: string | null;
}

/** Every record `show` gives of a conversation, in its order. */
function shown(world: World, id: string): Shown[] {
  return withStore(world, (store, ctx) => {
    const deriver = new TextDeriver(store, ADAPTERS, redactorFor(ctx));
    const conversation = findConversation(store, id);
    const out: Shown[] = [];
    let after: number | undefined;
    do {
      const page = pageConversation(store, deriver, conversation, {
        limit: 500,
        ...(after === undefined ? {} : { after }),
      });
      out.push(...page.records);
      after = page.next ?? undefined;
    } while (after !== undefined);
    return out;
  });
}

/** A shown record's raw bytes (base64) as text. */
const rawText = (raw: string) => new TextDecoder().decode(Uint8Array.fromBase64(raw));
const rawRow = (raw: string) => JSON.parse(rawText(raw)) as Record<string, unknown>;

/** What a person reads of a conversation: each said thing as `kind/role: first line`. */
function said(records: { kind: string; role: string | null; text: string }[]): string[] {
  return records.filter((r) => r.kind !== "event" && r.kind !== "meta" && r.text)
    .map((r) => `${r.kind}/${r.role}: ${r.text.split("\n")[0]}`);
}

const HOME_SAID = [
  `message/user: ${PROMPT}`,
  "tool_call/assistant: read",
  "message/assistant: The notes mention marmalith and vintrope.",
  "message/user: Carry on, cobaltwren.",
  "message/assistant: Resumed fine: plumquartz.",
];

function conversationRow(world: World, id: string) {
  return withStore(world, (store) => findConversation(store, id));
}

Deno.test("capture reads Kilo's kilo.db: each message once, in order, with its role, kind, cwd, project and version", async () => {
  const world = await kiloWorld("home");
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(summary.errors, []);
    assert.deepEqual(summary.drift, []);
    const records = shown(world, `kilo:${MAIN}`);
    assert.deepEqual(said(records), HOME_SAID);
    const tool = records.find((r) => r.kind === "tool_call")!;
    assert.match(tool.text, /notes\.txt[\s\S]*copperwhistle and driftmallow/);
    // step-start and step-finish are events; the session and message rows are meta.
    assert.deepEqual(
      [...new Set(records.map((r) => r.kind))].sort(),
      ["event", "message", "meta", "tool_call"],
    );
    const row = conversationRow(world, `kilo:${MAIN}`);
    assert.equal(row.agent, "kilo");
    assert.equal(row.native_id, MAIN);
    assert.equal(row.cwd, PROJECT);
    assert.equal(row.project_root, PROJECT);
    assert.equal(row.parent_key, null);
    assert.equal(row.subagent, 0);
    assert.equal(row.agent_version, "7.7.7");
    // `New session - <ISO time>` is Kilo's placeholder: the first prompt, as typed, titles it.
    assert.equal(row.title, PROMPT);
    assert.equal(row.message_count, 5);
    for (const word of ["quasarbeet", "copperwhistle", "marmalith", "cobaltwren", "plumquartz"]) {
      const found = hits(world, word);
      assert.equal(found.length, 1, word);
      assert.equal(found[0]!.conversation, `kilo:${MAIN}`, word);
      assert.equal(found[0]!.agent, "kilo", word);
    }
    assert.equal((await captureWorld(world)).records, 0, "a second capture stores nothing");
  } finally {
    await world.cleanup();
  }
});

Deno.test("toolOf gives a Kilo tool part its call, input and output at once", async () => {
  const world = await kiloWorld("home");
  try {
    await captureWorld(world);
    const tool = shown(world, `kilo:${MAIN}`).find((r) => r.kind === "tool_call")!;
    const ref: SourceRef = {
      agent: "kilo",
      locator: dbPath(world),
      path: dbPath(world),
      format: "rows",
    };
    const parts = kilo.toolOf!(Uint8Array.fromBase64(tool.raw), ref);
    assert.deepEqual(parts?.calls, [{
      id: "call_conformance000002",
      name: "read",
      input: `${PROJECT}/notes.txt`,
    }]);
    assert.match(parts?.output ?? "", /copperwhistle and driftmallow/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("each Kilo record is its row as JSON, byte for byte, and Kilo's database is left as found", async () => {
  const world = await kiloWorld("home");
  try {
    // The folder's names, and the database's bytes and mtime.
    const state = () => ({
      names: [...Deno.readDirSync(kiloDir(world))].map((e) => e.name).sort(),
      bytes: Deno.readFileSync(dbPath(world)),
      mtime: Deno.statSync(dbPath(world)).mtime?.getTime(),
    });
    const before = state();
    await captureWorld(world);
    assert.deepEqual(state(), before, "nothing created or changed beside it");
    const raws = shown(world, `kilo:${MAIN}`).map((r) => rawText(r.raw));
    const db = new DatabaseSync(dbPath(world), { readOnly: true });
    try {
      const rows: string[] = [];
      for (const table of ["session", "message", "part"]) {
        for (const row of db.prepare(`SELECT * FROM ${table}`).all()) {
          rows.push(`${JSON.stringify({ table, ...row })}\n`);
        }
      }
      assert.deepEqual([...raws].sort(), rows.sort());
    } finally {
      db.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a Kilo subagent is a child conversation of the session whose task ran it", async () => {
  const world = await kiloWorld("subagent");
  try {
    await captureWorld(world);
    const child = conversationRow(world, `kilo:${CHILD}`);
    assert.equal(child.parent_key, `kilo:${PARENT}`);
    assert.equal(child.subagent, 1);
    assert.equal(child.title, "Inspect the notes (@general subagent)");
    assert.equal(child.cwd, PROJECT);
    assert.deepEqual(said(shown(world, `kilo:${CHILD}`)), [
      "message/user: Subtask glimmerfane: read the notes and report.",
      "tool_call/assistant: read",
      "message/assistant: Subagent result: tessellark.",
    ]);
    assert.deepEqual(said(shown(world, `kilo:${PARENT}`)), [
      `message/user: ${PROMPT}`,
      "tool_call/assistant: read",
      "message/assistant: The notes mention marmalith and vintrope.",
      "message/user: Carry on, cobaltwren.",
      "message/assistant: Resumed fine: plumquartz.",
      "message/user: Hand this to a helper, zephyrkiln.",
      "tool_call/assistant: task",
      "message/assistant: The helper reported back: orchidvault.",
    ]);
    assert.equal(conversationRow(world, `kilo:${PARENT}`).title, PROMPT);
    const tessellark = hits(world, "tessellark").map((h) => h.conversation).sort();
    // The subagent's answer, and the task's output in the parent that quotes it.
    assert.deepEqual(tessellark, [`kilo:${PARENT}`, `kilo:${CHILD}`].sort());
  } finally {
    await world.cleanup();
  }
});

Deno.test("a Kilo revert: the reverted turn stays in show and search, the turn after it is added once", async (t) => {
  const revertedSaid = [
    `message/user: ${PROMPT}`,
    "tool_call/assistant: read",
    "message/assistant: The notes mention marmalith and vintrope.",
    "message/user: Carry on, cobaltwren.",
    "message/assistant: Resumed fine: plumquartz.",
  ];
  await t.step("captured at every stage", async () => {
    const world = await kiloWorld("revert/1-before");
    try {
      assert.equal((await captureWorld(world)).conversations, 1);
      assert.deepEqual(said(shown(world, `kilo:${REVERTED}`)), revertedSaid);
      // Marked: only the session row changed (its `revert`), a new revision of it.
      replaceDb(world, "revert/2-reverted");
      assert.equal((await captureWorld(world)).records, 1);
      assert.deepEqual(said(shown(world, `kilo:${REVERTED}`)), revertedSaid);
      // The next prompt deleted the reverted messages and added its own turn.
      replaceDb(world, "revert/3-after-next");
      await captureWorld(world);
      assert.deepEqual(said(shown(world, `kilo:${REVERTED}`)), [
        ...revertedSaid,
        "message/user: After the revert, cobaltwren.",
        "message/assistant: Resumed fine: plumquartz.",
      ]);
      assert.equal(hits(world, "cobaltwren").length, 2, "the reverted prompt and the new one");
      assert.equal(hits(world, '"After the revert"').length, 1);
      assert.equal(hits(world, "marmalith").length, 1, "the turn before the revert, once");
      const row = conversationRow(world, `kilo:${REVERTED}`);
      assert.equal(row.title, "Heliotrope ledger walkthrough");
      assert.equal(row.message_count, 7);
      assert.equal((await captureWorld(world)).records, 0);
    } finally {
      await world.cleanup();
    }
  });
  await t.step(
    "first captured after the next prompt: the deleted turn was never seen",
    async () => {
      const world = await kiloWorld("revert/3-after-next");
      try {
        await captureWorld(world);
        assert.deepEqual(said(shown(world, `kilo:${REVERTED}`)), [
          `message/user: ${PROMPT}`,
          "tool_call/assistant: read",
          "message/assistant: The notes mention marmalith and vintrope.",
          "message/user: After the revert, cobaltwren.",
          "message/assistant: Resumed fine: plumquartz.",
        ]);
      } finally {
        await world.cleanup();
      }
    },
  );
});

Deno.test("damaged Kilo rows are kept raw and counted as drift of Kilo 7.7.7; the rest reads as usual", async () => {
  const world = await kiloWorld("damaged");
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(summary.errors, []);
    const drift = summary.drift.map((d) => `${d.agent} ${d.version} ${d.category} ${d.detail}`)
      .sort();
    assert.deepEqual(drift, [
      "kilo 7.7.7 unknown_type part/wakeup",
      "kilo 7.7.7 unparsable message data is not JSON",
      "kilo 7.7.7 unparsable part data is not JSON",
    ]);
    const records = shown(world, `kilo:${MAIN}`);
    assert.deepEqual(said(records), [
      `message/user: ${PROMPT}`,
      "tool_call/assistant: read",
      "message/assistant: The notes mention marmalith and vintrope.",
      // Its message row cannot be read, so who said it is not known.
      "message/null: Carry on, cobaltwren.",
    ]);
    const db = new DatabaseSync(dbPath(world), { readOnly: true });
    try {
      for (
        const [table, id] of [
          ["part", DAMAGED.truncatedPart],
          ["message", DAMAGED.invalidMessage],
          ["part", DAMAGED.unknownPart],
        ] as const
      ) {
        const row = db.prepare(`SELECT * FROM ${table} WHERE id = ?`).get(id)!;
        // A row that cannot be read has no part or message id of its own: found by its raw.
        const kept = records.find((r) => rawRow(r.raw).id === id);
        assert.ok(kept, `${table} ${id} is kept`);
        assert.equal(kept.kind, "meta");
        assert.equal(rawText(kept.raw), `${JSON.stringify({ table, ...row })}\n`);
      }
    } finally {
      db.close();
    }
    for (const word of ["plumquartz", "nimbusquarry"]) assert.equal(hits(world, word).length, 0);
  } finally {
    await world.cleanup();
  }
});

Deno.test("rows in Kilo's session_message table, which 7.7.7 leaves empty, are kept raw as drift", async () => {
  const world = await kiloWorld("home");
  try {
    await captureWorld(world);
    const db = new DatabaseSync(dbPath(world));
    try {
      // The columns are Kilo 7.7.7's; what a version writing there puts in `data` is not known.
      db.prepare(
        `INSERT INTO session_message (id, session_id, type, seq, time_created, time_updated, data)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ).run("smg_1", MAIN, "user", 1, 1796322600000, 1796322600000, '{"text":"sorrelwick"}');
    } finally {
      db.close();
    }
    const summary = await captureWorld(world);
    assert.equal(summary.records, 1);
    assert.deepEqual(
      summary.drift.map((d) => `${d.agent} ${d.version} ${d.category} ${d.detail} ${d.count}`),
      ["kilo 7.7.7 unknown_type table/session_message 1"],
    );
    const kept = shown(world, `kilo:${MAIN}`).filter((r) =>
      rawRow(r.raw).table === "session_message"
    );
    assert.deepEqual(kept.map((r) => [r.kind, rawRow(r.raw).id]), [["meta", "smg_1"]]);
    assert.equal(hits(world, "sorrelwick").length, 0);
    assert.equal((await captureWorld(world)).records, 0);
  } finally {
    await world.cleanup();
  }
});

Deno.test("Kilo's reader reads every stored record of every Kilo fixture as its adapter does", async () => {
  const world = await makeWorld();
  try {
    const stages = ["home", "subagent", "damaged", "revert/1-before", "revert/3-after-next"];
    Deno.mkdirSync(kiloDir(world), { recursive: true });
    // One database per release channel, so every fixture is a source of its own.
    stages.forEach((stage, i) => {
      cpSync(join(KILO, stage, "kilo.db"), join(kiloDir(world), `kilo-${i}.db`));
    });
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
        if (text) withText++;
      }
      assert.equal(
        (store.stmt("SELECT count(*) AS n FROM sources WHERE agent = 'kilo'").get() as {
          n: number;
        }).n,
        stages.length,
      );
      assert.ok(withText >= 30, `${withText} of ${rows.length} records have text`);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a prompt kilo run wrapped in quotes reads as typed; other text, and OpenCode's, as stored", () => {
  const ref: SourceRef = {
    agent: "kilo",
    locator: "/k/kilo.db",
    path: "/k/kilo.db",
    format: "rows",
  };
  const part = (data: Record<string, unknown>) =>
    new TextEncoder().encode(
      `${
        JSON.stringify({
          table: "part",
          id: "prt_1",
          message_id: "msg_1",
          session_id: "ses_1",
          time_created: 1,
          time_updated: 1,
          data: JSON.stringify(data),
        })
      }\n`,
    );
  const prompt = (text: string) => part({ type: "text", text });
  const cases: [string, string][] = [
    ['"Read the notes for me, quasarbeet lanternfig."', PROMPT],
    // `kilo run 'say "hi" there'`: run escapes the quotes inside.
    ['"say \\"hi\\" there"', 'say "hi" there'],
    // Several arguments (`kilo run "fix it" now`), or one without a space: not one quoted prompt.
    ['"fix it" now', '"fix it" now'],
    ['"fix it" "and this"', '"fix it" "and this"'],
    ['"word"', '"word"'],
    ['"', '"'],
    ["plain words", "plain words"],
  ];
  for (const [stored, read] of cases) {
    assert.equal(kiloText.textOf(prompt(stored), ref), read, stored);
    assert.equal(kilo.textOf(prompt(stored), ref), read, stored);
    assert.equal(opencodeText.textOf(prompt(stored), ref), stored, `OpenCode: ${stored}`);
    assert.equal(opencode.textOf(prompt(stored), ref), stored, `OpenCode: ${stored}`);
  }
  // The model's text has times, a synthetic part is Kilo's own: both as stored.
  const quoted = '"A quoted answer, whole."';
  assert.equal(
    kiloText.textOf(part({ type: "text", text: quoted, time: { start: 1 } }), ref),
    quoted,
  );
  assert.equal(kiloText.textOf(part({ type: "text", text: quoted, synthetic: true }), ref), quoted);
});

Deno.test("discovery finds kilo.db and its channels' databases in $XDG_DATA_HOME/kilo, not OpenCode's nor storage/session_diff", async () => {
  const dir = await tempDir();
  try {
    const data = join(dir, "xdg", "kilo");
    const storage = join(data, "storage");
    Deno.mkdirSync(join(storage, "session_diff"), { recursive: true });
    Deno.mkdirSync(join(storage, "migration"), { recursive: true });
    Deno.mkdirSync(join(dir, "xdg", "opencode"), { recursive: true });
    for (const name of ["kilo.db", "kilo-beta.db", "opencode-beta.db", "opencode.db", "notes.db"]) {
      Deno.writeFileSync(join(data, name), new Uint8Array());
    }
    Deno.writeTextFileSync(join(dir, "xdg", "opencode", "opencode.db"), "");
    Deno.writeTextFileSync(join(storage, "session_diff", `${MAIN}.json`), "[]");
    Deno.writeTextFileSync(join(storage, "migration", "index.json"), "1");
    const ctx = {
      env: envFrom({ XDG_DATA_HOME: join(dir, "xdg"), HOME: join(dir, "home") }),
      extraRoots: {},
      skipped: new Map<string, number>(),
    };
    assert.deepEqual(kilo.roots(ctx), [data]);
    const found: string[] = [];
    for await (const ref of kilo.discover(ctx)) {
      assert.equal(ref.agent, "kilo");
      found.push(relative(dir, ref.path));
    }
    assert.deepEqual(found, [
      "xdg/kilo/kilo.db",
      "xdg/kilo/kilo-beta.db",
      "xdg/kilo/opencode-beta.db",
    ]);
    const opencodes: string[] = [];
    for await (const ref of opencode.discover(ctx)) opencodes.push(relative(dir, ref.path));
    assert.deepEqual(opencodes, ["xdg/opencode/opencode.db"]);
    // A relative XDG_DATA_HOME is not a valid one (XDG base directory spec).
    const fallback = kilo.roots({ ...ctx, env: envFrom({ XDG_DATA_HOME: "rel", HOME: "/h" }) });
    assert.deepEqual(fallback, ["/h/.local/share/kilo"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("reindex, search, show, resume --print and fork --print work on a copy of Kilo's fixtures as its data dir", async () => {
  const world = await kiloWorld("home");
  try {
    const reindex = await runCli("reindex", [], world.vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    assert.doesNotMatch(reindex.stderr, /error/i);
    const found = await runCli("search", ["cobaltwren", "--agent", "kilo", "--json"], world.vars);
    assert.equal(found.code, 0, found.stderr);
    const lines = found.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => [l.conversation, l.agent]), [[`kilo:${MAIN}`, "kilo"]]);
    const show = await runCli("show", [`kilo:${MAIN}`, "--json"], world.vars);
    assert.equal(show.code, 0, show.stderr);
    const page = JSON.parse(show.stdout);
    assert.equal(page.conversation.title, PROMPT);
    assert.equal(page.conversation.agentVersion, "7.7.7");
    assert.deepEqual(said(page.records), HOME_SAID);
    const resume = await runCli("resume", [`kilo:${MAIN}`, "--print"], world.vars);
    assert.equal(resume.code, 0, resume.stderr);
    assert.match(resume.stdout.trim(), new RegExp(`kilo --session ${MAIN}$`));
    const fork = await runCli("fork", [`kilo:${MAIN}`, "--print"], world.vars);
    assert.equal(fork.code, 0, fork.stderr);
    assert.match(fork.stdout.trim(), new RegExp(`kilo --session ${MAIN} --fork$`));
  } finally {
    await world.cleanup();
  }
});
