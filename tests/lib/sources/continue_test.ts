// Capture of the Continue CLI: session documents rewritten whole after every turn, read as rows
// of history items (new or changed ones only), forks linked by the items they copied, and a
// resume that only `cn`'s newest session can take.

import { readersAgree } from "./_shown.ts";
import { conversation, found, said, shown } from "./_shown.ts";
import { sessionUsage, storedCalls } from "./_usage.ts";
import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { envFrom } from "../../../lib/env.ts";
import { READERS } from "../../../lib/agents.ts";
import { adapterOf } from "../../../lib/sources/adapter.ts";
import { continueCli, historySpans } from "../../../lib/sources/continue.ts";
import { continueRowOf } from "../../../lib/sources/continue_text.ts";
import { continueResumeArgs, continueSessionsDir } from "../../../lib/sources/continue_cli.ts";
import {
  captureWorld,
  FIXTURES,
  makeWorld,
  runCli,
  withStore,
  type World,
} from "../../_helpers.ts";

const ID = "9f4b28a2-2559-4f81-9519-e044c1b9bb3e";
const KEY = `continue:${ID}`;
const FORK_PARENT = "b1858e94-88e5-4698-92b7-1c4d5a461836";
const FORK_COPY = "70e47d22-ff50-4b94-a3d0-8849bd86ca4d";
const PROJECT = "/home/user/project";
const decoder = new TextDecoder();

interface ContinueWorld extends World {
  sessions: string;
}

/** A world whose `$CONTINUE_GLOBAL_DIR` holds a copy of `fixtures/continue/<fixture>/`. */
async function continueWorld(fixture: string): Promise<ContinueWorld> {
  const world = await makeWorld();
  const global = join(world.dir, "continue");
  const sessions = join(global, "sessions");
  cpSync(join(FIXTURES, "continue", fixture, "sessions"), sessions, { recursive: true });
  world.vars = { ...world.vars, CONTINUE_GLOBAL_DIR: global };
  world.env = envFrom(world.vars);
  return { ...world, sessions };
}

/** Puts fixture `<fixture>`'s document of session `id` in place, as `cn` rewrites it. */
function rewrite(world: ContinueWorld, fixture: string, id = ID, mtimeMs = Date.now()): void {
  const path = join(world.sessions, `${id}.json`);
  Deno.writeFileSync(path, Deno.readFileSync(fixturePath(fixture, id)));
  Deno.utimeSync(path, mtimeMs / 1000, mtimeMs / 1000);
}

function fixturePath(fixture: string, id = ID): string {
  return join(FIXTURES, "continue", fixture, "sessions", `${id}.json`);
}

const START = [
  "message/user: Read the notes for me, quasarbeet lanternfig.",
  "tool_call/assistant: Read",
  "message/assistant: The notes mention marmalith and vintrope.",
];
const RESUMED = [
  ...START,
  "message/user: Carry on, cobaltwren.",
  "message/assistant: Resumed fine: plumquartz.",
];

Deno.test("a session's items are records of their kind and role, in one conversation with its cwd", async () => {
  const world = await continueWorld("home");
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(summary.errors, []);
    assert.deepEqual(summary.drift, []);
    assert.deepEqual(said(world, KEY), RESUMED);
    const records = shown(world, KEY);
    // The document without its items, then its five items.
    assert.deepEqual(records.map((r) => `${r.kind}/${r.role}`), [
      "meta/null",
      "message/user",
      "tool_call/assistant",
      "message/assistant",
      "message/user",
      "message/assistant",
    ]);
    // The tool call holds its input and, from its toolCallStates, the tool's output.
    assert.match(records[2]!.text, /notes\.txt/);
    assert.match(records[2]!.text, /copperwhistle and driftmallow/);
    const c = conversation(world, KEY);
    assert.equal(c.cwd, PROJECT);
    assert.equal(c.agent, "continue");
    assert.equal(c.native_id, ID);
    assert.equal(c.parent_key ?? null, null);
    // "Untitled Session" is cn's placeholder: the first prompt names it.
    assert.equal(c.title, "Read the notes for me, quasarbeet lanternfig.");
    // The first item is dated by the index's dateCreated.
    assert.equal(records[1]!.ts, new Date(1796322354491).toISOString());
    for (const word of ["quasarbeet", "marmalith", "copperwhistle", "cobaltwren", "plumquartz"]) {
      assert.deepEqual(found(world, word), [KEY], word);
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("the records hold the document's bytes exactly: each item, and the rest with the items cut", async () => {
  const world = await continueWorld("home");
  try {
    await captureWorld(world);
    const file = Deno.readFileSync(fixturePath("home"));
    const spans = historySpans(file)!;
    const rows = shown(world, KEY).map((r) => {
      const text = decoder.decode(r.raw);
      assert.ok(text.endsWith("}\n"), "a row is one JSON object and a newline");
      return { raw: r.raw, row: continueRowOf(r.raw) };
    });
    const [session, ...items] = rows;
    // The wrapped bytes are the document's own: the row ends with them, `}` and a newline.
    const tail = (raw: Uint8Array, length: number) => raw.subarray(raw.length - 2 - length, -2);
    const cut = new Uint8Array([
      ...file.subarray(0, spans.array.open + 1),
      ...file.subarray(spans.array.close),
    ]);
    assert.deepEqual(tail(session!.raw, cut.length), cut);
    assert.equal(items.length, spans.items.length);
    items.forEach(({ raw, row }, i) => {
      const [start, end] = spans.items[i]!;
      assert.deepEqual(tail(raw, end - start), file.subarray(start, end), `item ${i}`);
      assert.ok(!("bad" in row) && row.continue === "item" && row.index === i);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("READERS give every Continue record the text its adapter gives", async () => {
  const world = await continueWorld("fork");
  try {
    cpSync(fixturePath("unknown"), join(world.sessions, `${ID}.json`));
    await captureWorld(world);
    withStore(world, (store, ctx) => {
      const { withText } = readersAgree(store, ctx, "continue");
      assert.ok(withText >= 10, `${withText} records have text`);
      const locator = join(world.sessions, `${ID}.json`);
      assert.equal(adapterOf(READERS, "continue", locator)?.agent, "continue");
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a rewrite that appends (cn --resume) stores only the new items: each message once", async () => {
  const world = await continueWorld("rewrite/1-start");
  try {
    await captureWorld(world);
    assert.deepEqual(said(world, KEY), START);
    rewrite(world, "home");
    const summary = await captureWorld(world);
    // The two new items and the document's new usage, nothing else.
    assert.equal(summary.records, 3);
    assert.deepEqual(said(world, KEY), RESUMED);
    for (const word of ["quasarbeet", "copperwhistle", "marmalith", "cobaltwren", "plumquartz"]) {
      assert.deepEqual(found(world, word), [KEY], word);
    }
    // A capture with nothing new stores nothing; nor does a rewrite of the same bytes.
    assert.equal((await captureWorld(world)).records, 0);
    rewrite(world, "home", ID, Date.now() + 5000);
    assert.equal((await captureWorld(world)).records, 0);
    assert.deepEqual(said(world, KEY), RESUMED);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a compaction in -p mode, which changes only usage, stores no message", async () => {
  const world = await continueWorld("home");
  try {
    await captureWorld(world);
    const path = join(world.sessions, `${ID}.json`);
    const doc = JSON.parse(Deno.readTextFileSync(path));
    doc.usage.promptTokens += 320;
    Deno.writeTextFileSync(path, JSON.stringify(doc, null, 2));
    const summary = await captureWorld(world);
    assert.equal(summary.records, 1, "the document's new revision");
    assert.deepEqual(said(world, KEY), RESUMED);
    assert.deepEqual(found(world, "plumquartz"), [KEY]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("an item changed in place is a newer revision: found once, shown once, with its output", async () => {
  const world = await continueWorld("revision");
  try {
    await captureWorld(world);
    // Saved before the tool ran: the call, no output yet.
    assert.deepEqual(said(world, KEY), START.slice(0, 2));
    assert.deepEqual(found(world, "copperwhistle"), []);
    rewrite(world, "rewrite/1-start");
    await captureWorld(world);
    assert.deepEqual(said(world, KEY), START);
    assert.deepEqual(found(world, "copperwhistle"), [KEY]);
    assert.deepEqual(found(world, "notes.txt"), [KEY], "the call's input, found once");
    rewrite(world, "home");
    await captureWorld(world);
    assert.deepEqual(said(world, KEY), RESUMED);
    const c = conversation(world, KEY);
    assert.equal(c.message_count, 5, "the revision is not another message");
  } finally {
    await world.cleanup();
  }
});

Deno.test("a rewind keeps what it cut: the old turn and the new one are both shown and found", async () => {
  const world = await continueWorld("home");
  try {
    await captureWorld(world);
    rewrite(world, "rewind");
    await captureWorld(world);
    assert.deepEqual(said(world, KEY), [
      ...RESUMED,
      "message/user: Start over instead, emberwisp.",
      "message/assistant: Started over: thimblecrest.",
    ]);
    for (const word of ["cobaltwren", "plumquartz", "emberwisp", "thimblecrest", "quasarbeet"]) {
      assert.deepEqual(found(world, word), [KEY], word);
    }
    // Going on from the rewind appends after it, without repeating anything.
    rewrite(world, "home");
    await captureWorld(world);
    assert.deepEqual(said(world, KEY), [
      ...RESUMED,
      "message/user: Start over instead, emberwisp.",
      "message/assistant: Started over: thimblecrest.",
      "message/user: Carry on, cobaltwren.",
      "message/assistant: Resumed fine: plumquartz.",
    ]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a compaction in the terminal UI replaces the history with a summary: what it replaced stays", async () => {
  const world = await continueWorld("home");
  try {
    await captureWorld(world);
    rewrite(world, "compacted");
    await captureWorld(world);
    assert.deepEqual(said(world, KEY), [
      ...RESUMED,
      "summary/-: Summary: the notes were read (gossamerfen).",
    ]);
    assert.deepEqual(found(world, "gossamerfen"), [KEY]);
    assert.deepEqual(found(world, "quasarbeet"), [KEY]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a document caught mid-write is read again on the next run: no drift, nothing lost or doubled", async () => {
  const world = await continueWorld("truncated");
  try {
    const torn = await captureWorld(world);
    assert.deepEqual(torn.drift, []);
    assert.equal(torn.records, 0);
    assert.equal(torn.errors.length, 1);
    assert.match(
      torn.errors[0]!.message,
      /was being written when read \(not whole JSON: .*\): it is read again on the next run/,
    );
    rewrite(world, "home");
    const whole = await captureWorld(world);
    assert.deepEqual(whole.errors, []);
    assert.deepEqual(said(world, KEY), RESUMED);
    assert.deepEqual(found(world, "plumquartz"), [KEY]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("unknown roles and items without a message are drift, kept raw; the rest is read", async () => {
  const world = await continueWorld("unknown");
  try {
    const summary = await captureWorld(world);
    const drift = summary.drift.map((d) => `${d.category} ${d.detail}`).sort();
    assert.deepEqual(drift, [
      "missing_fields history item without a message role",
      "unknown_type message/critic",
    ]);
    assert.deepEqual(said(world, KEY), RESUMED);
    assert.deepEqual(found(world, "velvetmoss"), []);
    const raw = shown(world, KEY).map((r) => decoder.decode(r.raw));
    assert.ok(raw.some((r) => r.includes("velvetmoss")), "the unknown item is kept raw");
  } finally {
    await world.cleanup();
  }
});

Deno.test("a document without a history is drift, kept raw; a title cn gave a session names it", async () => {
  const world = await continueWorld("home");
  try {
    const odd = "0badd0c0-0000-4000-8000-000000000000";
    Deno.writeTextFileSync(
      join(world.sessions, `${odd}.json`),
      JSON.stringify({ sessionId: odd, title: "Untitled Session", messages: [] }, null, 2),
    );
    const path = join(world.sessions, `${ID}.json`);
    const doc = JSON.parse(Deno.readTextFileSync(path));
    doc.title = "Reading the field notes";
    Deno.writeTextFileSync(path, JSON.stringify(doc, null, 2));
    const summary = await captureWorld(world);
    assert.deepEqual(summary.drift.map((d) => `${d.category} ${d.detail}`), [
      "missing_fields document without a history",
    ]);
    assert.equal(shown(world, `continue:${odd}`).length, 1);
    assert.equal(conversation(world, KEY).title, "Reading the field notes");
    assert.deepEqual(said(world, KEY), RESUMED);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a fork (cn --fork) is a child of the session it copied; the copy is shown in it, found in the parent", async () => {
  const world = await continueWorld("fork");
  try {
    await captureWorld(world);
    const parent = `continue:${FORK_PARENT}`;
    const fork = `continue:${FORK_COPY}`;
    assert.equal(conversation(world, fork).parent_key, parent);
    assert.equal(conversation(world, parent).parent_key ?? null, null);
    const copied = [
      "message/user: Read the notes for me, quasarbeet lanternfig.",
      "tool_call/assistant: bash",
      "message/assistant: The notes mention marmalith and vintrope.",
    ];
    assert.deepEqual(said(world, parent), copied);
    assert.deepEqual(said(world, fork), [
      ...copied,
      "message/user: On the fork, cobaltwren.",
      "message/assistant: Resumed fine: plumquartz.",
    ]);
    for (const word of ["quasarbeet", "marmalith", "Tool bash not found"]) {
      assert.deepEqual(found(world, `"${word}"`), [parent], word);
    }
    assert.deepEqual(found(world, "cobaltwren"), [fork]);
    assert.equal(conversation(world, fork).title, "On the fork, cobaltwren.");
  } finally {
    await world.cleanup();
  }
});

Deno.test("a fork read before cn added it to the index (it writes the document first) is linked all the same", async () => {
  const world = await continueWorld("fork");
  try {
    const index = join(world.sessions, "sessions.json");
    const entries = JSON.parse(Deno.readTextFileSync(index));
    Deno.writeTextFileSync(
      index,
      JSON.stringify(entries.filter((e: { sessionId: string }) => e.sessionId !== FORK_COPY)),
    );
    await captureWorld(world);
    assert.equal(
      conversation(world, `continue:${FORK_COPY}`).parent_key,
      `continue:${FORK_PARENT}`,
    );
    assert.deepEqual(found(world, "quasarbeet"), [`continue:${FORK_PARENT}`]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a fork captured alone (its parent never stored) is found by what it copied", async () => {
  const world = await continueWorld("fork");
  try {
    // The parent's document is gone before logbook ever read it: the copy is all there is.
    Deno.removeSync(join(world.sessions, `${FORK_PARENT}.json`));
    await captureWorld(world);
    assert.deepEqual(found(world, "quasarbeet"), [`continue:${FORK_COPY}`]);
  } finally {
    await world.cleanup();
  }
});

/** The report's line of `calls` calls of 320 input tokens with `output` output tokens. */
function calls(n: number, output: number) {
  return { calls: n, input: 320 * n, output, cacheWrite: 0, cacheRead: 0 };
}

Deno.test("each reply's usage is one call: appends, revisions, the same bytes again and a rebuild count none twice", async (t) => {
  const world = await continueWorld("revision");
  const usage = () => sessionUsage(world, "continue");
  try {
    await t.step("a tool call saved before it ran, then again once it ran", async () => {
      await captureWorld(world);
      assert.deepEqual(usage(), { [KEY]: calls(1, 19) });
      rewrite(world, "rewrite/1-start");
      await captureWorld(world);
      // The document's own count: 640 prompt and 30 completion tokens.
      assert.deepEqual(usage(), { [KEY]: calls(2, 30) });
    });
    await t.step("cn --resume appends a turn; the same bytes again; a rebuild", async () => {
      rewrite(world, "home");
      await captureWorld(world);
      // The document's own count: 960 and 37.
      assert.deepEqual(usage(), { [KEY]: calls(3, 37) });
      rewrite(world, "home", ID, Date.now() + 5000);
      await captureWorld(world);
      await captureWorld(world, { rebuild: true });
      assert.deepEqual(usage(), { [KEY]: calls(3, 37) });
      // A store captured before the items' usage was read: deriving again fills it.
      withStore(world, (store) => {
        store.db.exec(
          "DELETE FROM usage; UPDATE sources SET derivation = NULL; DELETE FROM meta WHERE key = 'derivations'",
        );
      });
      await captureWorld(world);
      assert.deepEqual(usage(), { [KEY]: calls(3, 37) });
      const stored = storedCalls(world, "continue");
      assert.ok(stored.every((c) => c.model === "conformance-model" && c.cost === null));
      assert.ok(stored.every((c) => c.call?.startsWith(`message:${ID}:`) && c.ts !== null));
    });
    await t.step(
      "a rewind's new reply is a call of its own; going on from it repeats none",
      async () => {
        rewrite(world, "rewind");
        await captureWorld(world);
        assert.deepEqual(usage(), { [KEY]: calls(4, 44) });
        rewrite(world, "home");
        await captureWorld(world);
        assert.deepEqual(usage(), { [KEY]: calls(4, 44) });
      },
    );
  } finally {
    await world.cleanup();
  }
});

Deno.test("the cache's tokens as cn's own adapters count them (beside the prompt) and as OpenAI does (in it)", async () => {
  const world = await continueWorld("home");
  try {
    const path = join(world.sessions, `${ID}.json`);
    const doc = JSON.parse(Deno.readTextFileSync(path));
    // Anthropic's reply through cn's adapter; an OpenAI reply passed through.
    doc.history[1].message.usage.prompt_tokens_details = {
      cached_tokens: 200,
      cache_read_tokens: 200,
      cache_write_tokens: 50,
    };
    doc.history[2].message.usage.prompt_tokens_details = { cached_tokens: 300 };
    Deno.writeTextFileSync(path, JSON.stringify(doc, null, 2));
    await captureWorld(world);
    assert.deepEqual(sessionUsage(world, "continue"), {
      [KEY]: { calls: 3, input: 320 + 20 + 320, output: 37, cacheWrite: 50, cacheRead: 500 },
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a fork's copied replies count once, in the session they were made in, with or without it stored", async (t) => {
  // The parent's two replies (23 and 11 tokens out) and the fork's own (7); the report counts
  // a fork's calls in the session it was forked from.
  await t.step("both sessions", async () => {
    const world = await continueWorld("fork");
    try {
      await captureWorld(world);
      assert.deepEqual(sessionUsage(world, "continue"), {
        [`continue:${FORK_PARENT}`]: calls(3, 41),
      });
    } finally {
      await world.cleanup();
    }
  });
  await t.step("a fork's copies name their parent's calls, copied or not", async () => {
    // Derived without the store (nothing is known to be stored, so nothing is `copied`), the
    // fork's copies of its parent's replies name the same calls as the parent's own.
    const world = await continueWorld("fork");
    try {
      const callsOf = async (id: string) => {
        const path = join(world.sessions, `${id}.json`);
        const source = { agent: "continue" as const, locator: path, path, format: "rows" as const };
        const read = await continueCli.readRows(source, null, 1 << 30);
        return read.rows.flatMap((row) => {
          const d = continueCli.parseRow(row, {}, source, () => null);
          return d.usage ? [d.usage.call] : [];
        });
      };
      const parent = await callsOf(FORK_PARENT);
      const fork = await callsOf(FORK_COPY);
      assert.equal(parent.length, 2);
      assert.deepEqual(fork.slice(0, 2), parent);
      assert.equal(fork.length, 3);
      assert.ok(fork[2]!.startsWith(`message:${FORK_COPY}:`));
    } finally {
      await world.cleanup();
    }
  });
  await t.step("the fork alone, its parent gone", async () => {
    const world = await continueWorld("fork");
    try {
      Deno.removeSync(join(world.sessions, `${FORK_PARENT}.json`));
      await captureWorld(world);
      assert.deepEqual(sessionUsage(world, "continue"), {
        [`continue:${FORK_COPY}`]: calls(3, 41),
      });
    } finally {
      await world.cleanup();
    }
  });
});

Deno.test("rebuild derives the same index and conversations again, revisions, rewinds and forks included", async () => {
  const world = await continueWorld("fork");
  try {
    cpSync(fixturePath("revision"), join(world.sessions, `${ID}.json`));
    await captureWorld(world);
    for (const fixture of ["rewrite/1-start", "home", "rewind", "unknown"]) {
      rewrite(world, fixture);
      await captureWorld(world);
    }
    const snapshot = () =>
      withStore(world, (store) => ({
        conversations: store.db.prepare(
          `SELECT key, title, message_count, record_count, first_ts, last_ts, parent_key, cwd,
             agent_version FROM conversations ORDER BY key`,
        ).all(),
        records: store.db.prepare(
          "SELECT id, kind, role, ts, flags, conversation_id IS NOT NULL AS c FROM records ORDER BY id",
        ).all(),
        drift: store.db.prepare("SELECT * FROM drift ORDER BY source_id, detail").all(),
        keys: store.db.prepare("SELECT * FROM record_keys ORDER BY source_id, key").all(),
        hits: store.db.prepare(
          `SELECT rowid FROM fts WHERE fts MATCH 'quasarbeet OR copperwhistle OR cobaltwren OR emberwisp OR velvetmoss' ORDER BY rowid`,
        ).all(),
      }));
    const before = snapshot();
    const summary = await captureWorld(world, { rebuild: true });
    assert.equal(summary.records, 0);
    assert.deepEqual(snapshot(), before);
    assert.deepEqual(found(world, "quasarbeet").sort(), [KEY, `continue:${FORK_PARENT}`]);
  } finally {
    await world.cleanup();
  }
});

/** The row of item `index` of fixture `<fixture>`'s document of session `id`. */
function itemRow(fixture: string, index: number, id = ID): Uint8Array {
  const file = Deno.readFileSync(fixturePath(fixture, id));
  const [start, end] = historySpans(file)!.items[index]!;
  return new TextEncoder().encode(
    `{"sessionId":"${id}","continue":"item","index":${index},"time":null,"revises":false,` +
      `"copiedFrom":null,"item":${decoder.decode(file.subarray(start, end))}}\n`,
  );
}

Deno.test("toolOf gives a Continue tool call its input, its result's id and the output", () => {
  const source = {
    agent: "continue",
    locator: "/x.json",
    path: "/x.json",
    format: "rows" as const,
  };
  // A tool Continue did not offer: the call failed, its output says why.
  const failed = continueCli.toolOf!(itemRow("fork", 1, FORK_PARENT), source)!;
  assert.equal(failed.calls[0]!.name, "bash");
  assert.deepEqual(failed.results.map((r) => r.error), [true]);
  assert.match(failed.output!, /Tool bash not found/);
  assert.equal(continueCli.toolOf!(itemRow("home", 0), source), null, "a prompt calls no tool");
  const parts = continueCli.toolOf!(itemRow("home", 1), source)!;
  assert.deepEqual(parts.calls, [{
    id: "call_conformance000002",
    name: "Read",
    input: "/home/user/project/notes.txt",
  }]);
  assert.deepEqual(parts.results, [{ id: "call_conformance000002", error: false }]);
  assert.match(parts.output!, /copperwhistle/);
});

Deno.test("reindex, search and show read a Continue home end to end", async () => {
  const world = await continueWorld("home");
  try {
    const reindex = await runCli("reindex", [], world.vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    const search = await runCli(
      "search",
      ["plumquartz", "--agent", "continue", "--json"],
      world.vars,
    );
    assert.equal(search.code, 0, search.stderr);
    const hits = search.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(hits.map((h) => h.conversation), [KEY]);
    const show = await runCli("show", [KEY, "--json", "--limit", "100"], world.vars);
    assert.equal(show.code, 0, show.stderr);
    const page = JSON.parse(show.stdout);
    assert.equal(page.conversation.cwd, PROJECT);
    const messages = page.records.filter((r: { text: string }) => r.text.trim() !== "")
      .map((r: { kind: string; role: string | null; text: string }) =>
        `${r.kind}/${r.role ?? "-"}: ${r.text.split("\n")[0]}`
      );
    assert.deepEqual(messages, RESUMED);
  } finally {
    await world.cleanup();
  }
});

Deno.test("resume continues cn's newest session with cn --resume; an older one goes on in cn --fork <id>", async () => {
  const world = await continueWorld("fork");
  try {
    const old = Date.now() - 60_000;
    Deno.utimeSync(join(world.sessions, `${FORK_PARENT}.json`), old / 1000, old / 1000);
    const reindex = await runCli("reindex", [], world.vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    const newest = await runCli("resume", [`continue:${FORK_COPY}`, "--print"], world.vars);
    assert.equal(newest.code, 0, newest.stderr);
    assert.match(newest.stdout, /&& cn --resume\n$/);
    // `cn --resume` would load the newest session, not this one: it goes on in a fork.
    const older = await runCli("resume", [`continue:${FORK_PARENT}`, "--print"], world.vars);
    assert.equal(older.code, 0, older.stderr);
    assert.ok(older.stdout.endsWith(`&& cn --fork ${FORK_PARENT}\n`), older.stdout);
    const fork = await runCli("fork", [`continue:${FORK_COPY}`, "--print"], world.vars);
    assert.equal(fork.code, 0, fork.stderr);
    assert.ok(fork.stdout.endsWith(`&& cn --fork ${FORK_COPY}\n`), fork.stdout);
    // Once the parent is written again, it is the one cn --resume loads.
    Deno.utimeSync(
      join(world.sessions, `${FORK_PARENT}.json`),
      Date.now() / 1000 + 60,
      Date.now() / 1000 + 60,
    );
    const touched = await runCli("resume", [`continue:${FORK_PARENT}`, "--print"], world.vars);
    assert.match(touched.stdout, /&& cn --resume\n$/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("cn's folder is $CONTINUE_GLOBAL_DIR/sessions, else ~/.continue/sessions", () => {
  assert.equal(
    continueSessionsDir(envFrom({ CONTINUE_GLOBAL_DIR: "/g", HOME: "/h" })),
    join("/g", "sessions"),
  );
  assert.equal(continueSessionsDir(envFrom({ HOME: "/h" })), join("/h", ".continue", "sessions"));
  assert.equal(continueSessionsDir(envFrom({})), undefined);
  assert.deepEqual(continueResumeArgs("x", envFrom({})), ["--fork", "x"]);
});
