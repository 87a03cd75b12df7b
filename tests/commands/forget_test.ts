// `forget`: chosen conversations leave the store (records, index, rows), their bytes leave the
// file, tombstones keep capture from bringing them back, and --dry-run changes nothing.

import assert from "node:assert/strict";
import { appendFileSync, cpSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { DatabaseSync, type SQLOutputValue } from "node:sqlite";
import { main as forgetCommand } from "../../commands/forget.ts";
import { main as reindex } from "../../commands/reindex.ts";
import { main as search } from "../../commands/search.ts";
import { writeClaudeCorpus } from "../_corpus.ts";
import { captureIo, FIXTURES, makeWorld, manifest, runCli, type World } from "../_helpers.ts";

interface Entry {
  path: string;
  case: string;
  conversation: string;
  parent: string | null;
  phrases: string[];
}

async function hits(world: World, query: string): Promise<number> {
  const io = captureIo();
  return (await search([query, "--json"], io, world.env)) === 0
    ? io.stdout().trim().split("\n").length
    : 0;
}

async function captured(): Promise<World> {
  const world = await makeWorld({ fixtures: ["claude"] });
  assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
  return world;
}

function storeFileHas(world: World, text: string): boolean {
  const needle = new TextEncoder().encode(text);
  for (const name of ["history.db", "history.db-wal"]) {
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(join(world.data, name));
    } catch {
      continue;
    }
    outer: for (let i = 0; i <= bytes.length - needle.length; i++) {
      for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer;
      return true;
    }
  }
  return false;
}

Deno.test("forget removes a conversation, its bytes from the file, and keeps it from coming back", async () => {
  const world = await captured();
  try {
    const entries = manifest<Entry>("claude");
    const entry = entries.find((e) => e.case === "long-line")!;
    // A small conversation too: its records are stored as they are, so its bytes can be
    // looked for in the file (the long line's big chunks are stored compressed).
    const small = entries.find((e) => e.case === "crlf")!;
    const phrase = "obsidian-tambourine";
    assert.equal(await hits(world, phrase), 1);
    assert.ok(storeFileHas(world, "copper-marionette"));
    const sizeBefore = Deno.statSync(join(world.data, "history.db")).size;

    const result = await runCli(
      "forget",
      [entry.conversation, small.conversation, "--json"],
      world.vars,
    );
    assert.equal(result.code, 0, result.stderr);
    const parsed = JSON.parse(result.stdout);
    assert.deepEqual(parsed.conversations.map((c: { conversation: string }) => c.conversation), [
      entry.conversation,
      small.conversation,
    ]);
    assert.equal(parsed.dryRun, false);
    // The text index is scrubbed by a process of its own; --finish waits for it.
    assert.equal(parsed.indexScrubbed, false);
    assert.equal(typeof parsed.scrubbingPid, "number");
    const finished = await runCli("forget", ["--finish", "--json"], world.vars);
    assert.equal(finished.code, 0, finished.stderr);
    assert.equal(JSON.parse(finished.stdout).walEmptied, true);
    assert.equal(await hits(world, phrase), 0);
    assert.equal(await hits(world, "kestrel-bramble"), 0);
    assert.equal(await hits(world, "copper-marionette"), 0);
    assert.equal(
      storeFileHas(world, "copper-marionette"),
      false,
      "the forgotten bytes are gone from the file",
    );
    assert.ok(Deno.statSync(join(world.data, "history.db")).size < sizeBefore, "space given back");

    // Unchanged, appended to, or replaced: the source does not bring it back.
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const file = join(world.claude, entry.path);
    const sid = entry.conversation.slice("claude:".length);
    appendFileSync(
      file,
      JSON.stringify({
        type: "user",
        sessionId: sid,
        cwd: "/home/dev/src/zeta_svc.v2",
        timestamp: "2026-10-02T10:00:00.000Z",
        message: { role: "user", content: "late line platypus-gazette" },
      }) + "\n",
    );
    const copy = readFileSync(file);
    Deno.removeSync(file);
    Deno.writeFileSync(file, copy);
    const io = captureIo();
    assert.equal(await reindex(["--json"], io, world.env), 0);
    assert.equal(JSON.parse(io.stdout()).records, 0);
    assert.equal(await hits(world, "platypus-gazette"), 0);
    assert.equal(await hits(world, phrase), 0);
  } finally {
    await world.cleanup();
  }
});

Deno.test("forget takes a session's subagents with it, and --dry-run changes nothing", async () => {
  const world = await captured();
  try {
    const parent = manifest<Entry>("claude").find((e) =>
      e.case === "subagent-current" && !e.parent
    )!;
    const dry = captureIo();
    assert.equal(
      await forgetCommand([parent.conversation, "--dry-run", "--json"], dry, world.env),
      0,
    );
    const planned = JSON.parse(dry.stdout());
    assert.equal(planned.dryRun, true);
    assert.equal(planned.conversations.length, 3, "the session and its two subagents");
    assert.ok(
      planned.conversations.slice(1).every((c: { via: string }) => c.via === parent.conversation),
    );
    assert.equal(await hits(world, "lichen-semaphore"), 1, "dry run forgot nothing");

    assert.equal(await forgetCommand([parent.conversation], captureIo(), world.env), 0);
    for (const phrase of ["harbor-quince", "lichen-semaphore", "hazel-turnstile"]) {
      assert.equal(await hits(world, phrase), 0, phrase);
    }
    assert.equal(await hits(world, "quokka-lantern"), 1, "other conversations stay");
  } finally {
    await world.cleanup();
  }
});

/** `fixtures/forgotten_children/`: a session, a Codex thread, and what appears under them later. */
const CHILDREN = join(FIXTURES, "forgotten_children");
const LETHE = "claude/projects/-home-dev-src-lethe";
const SESSION = "3c9e1f20-5a7b-4d8c-9e2f-1a3b5c7d9e01";
const ROLLOUTS = "codex/sessions/2026/08/03";
const THREAD = "019f1a20-4c3b-7d2e-9a1f-0b2c3d4e5f60";

/** Copies `path` of the fixture into the world (`claude/…` and `codex/…` to their roots). */
function place(world: World, path: string, lines?: number): void {
  const [root, ...rest] = path.split("/");
  const to = join(
    root === "claude" ? world.claude : root === "codex" ? world.codex : join(world.home, ".claude"),
    ...rest,
  );
  Deno.mkdirSync(dirname(to), { recursive: true });
  if (lines === undefined) return cpSync(join(CHILDREN, path), to, { recursive: true });
  const text = Deno.readTextFileSync(join(CHILDREN, path));
  Deno.writeTextFileSync(to, text.split("\n").slice(0, lines).join("\n") + "\n");
}

function rollout(id: string): string {
  return [...Deno.readDirSync(join(CHILDREN, ROLLOUTS))].find((e) => e.name.includes(id))!.name;
}

Deno.test("what appears under a forgotten conversation later stays forgotten, through a rebuild", async () => {
  const world = await makeWorld();
  try {
    // Before the forget: the session, another of its project, the Codex thread, and the
    // prompt histories up to the session's first prompt.
    place(world, `${LETHE}/${SESSION}.jsonl`);
    place(world, `${LETHE}/8a4d2c6e-1f3b-4a5d-8e7c-9b0a1c2d3e4f.jsonl`);
    place(world, "claude/history.jsonl", 2);
    place(world, `${ROLLOUTS}/${rollout(THREAD)}`);
    place(world, "codex/history.jsonl", 1);
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    assert.equal(await hits(world, "brackish-semaphore"), 1);
    assert.equal(await hits(world, "velour-pinwheel"), 1);
    const forgot = await runCli("forget", [`claude:${SESSION}`, `codex:${THREAD}`, "--yes"], {
      ...world.vars,
    });
    assert.equal(forgot.code, 0, forgot.stderr);

    // Later: the session's subagent (with the output file it named), its helper copies, an
    // output file of its own, its prompts in the history, its transcript in another root; the
    // thread's subagent, a fork of it, and its prompts.
    place(world, `${LETHE}/${SESSION}/subagents`);
    place(world, `${LETHE}/${SESSION}/tool-results`);
    place(world, "claude/history.jsonl");
    place(world, `home-claude/projects/-home-dev-src-lethe/${SESSION}.jsonl`);
    place(world, `${ROLLOUTS}/${rollout("019f1a24-7e8d-7f10-8b2c-1d3e4f5a6b70")}`);
    place(world, `${ROLLOUTS}/${rollout("019f1a2a-3b4c-7d5e-8f6a-7b8c9d0e1f20")}`);
    place(world, "codex/history.jsonl");
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    // And in a pass of its own, what the thread's subagent spawned in turn.
    place(world, `${ROLLOUTS}/${rollout("019f1a27-0a1b-7c2d-9e3f-4a5b6c7d8e90")}`);
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);

    const forgotten = [
      "brackish-semaphore", // the session
      "quartz-lamprey", // its transcript in another root
      "tundra-falconet", // a prompt typed into it
      "thistle-aqueduct", // its subagent
      "ochre-bellows", // the subagent's title (.meta.json)
      "marigold-turbine", // the output file the subagent named
      "saffron-gondola", // an output file of the session
      "cobalt-wheelbarrow", // its compaction copy
      "kelp-sextant", // its aside question
      "velour-pinwheel", // the Codex thread
      "tinsel-oxbow", // a prompt typed into it
      "hickory-meridian", // its subagent
      "lantern-isthmus", // the subagent's subagent
    ];
    const check = async (when: string) => {
      for (const phrase of forgotten) {
        assert.equal(await hits(world, phrase), 0, `${phrase} ${when}`);
      }
      assert.equal(await hits(world, "pebble-orchard"), 1, `another session stays ${when}`);
      assert.equal(await hits(world, "drumlin-cascade"), 1, `a fork is its own ${when}`);
      assert.deepEqual([...filesHolding(world.data, forgotten)], [], `no file holds them ${when}`);
    };
    await check("after a capture");
    assert.equal(await reindex(["--rebuild", "--quiet"], captureIo(), world.env), 0);
    await check("after a rebuild");
  } finally {
    await world.cleanup();
  }
});

Deno.test("an OpenCode child session written after its parent was forgotten stays forgotten", async () => {
  const world = await makeWorld({ fixtures: ["opencode"] });
  try {
    // The child and the grandchild leave the database, to come back after the forget.
    const db = new DatabaseSync(join(world.xdgData, "opencode", "opencode.db"));
    const later = ["ses_14a321b85ffeN5pChXfqtnfAxX", "ses_14a32115dffeVvwgyyhPd5dZKN"];
    const marks = later.map(() => "?").join(", ");
    const taken = new Map<string, Record<string, SQLOutputValue>[]>();
    try {
      for (const table of ["part", "message", "session"]) {
        const column = table === "session" ? "id" : "session_id";
        const where = `WHERE ${column} IN (${marks})`;
        taken.set(table, db.prepare(`SELECT * FROM "${table}" ${where}`).all(...later));
        db.prepare(`DELETE FROM "${table}" ${where}`).run(...later);
      }
    } finally {
      db.close();
    }
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    assert.equal(await hits(world, "copper-narwhal"), 1);
    const forgot = captureIo();
    assert.equal(
      await forgetCommand(["opencode:ses_14a3290bfffeZahCjvaILC4ZAN", "--yes"], forgot, world.env),
      0,
      forgot.stderr(),
    );
    const back = new DatabaseSync(join(world.xdgData, "opencode", "opencode.db"));
    try {
      for (const table of ["session", "message", "part"]) {
        for (const row of taken.get(table)!) {
          const columns = Object.keys(row);
          back.prepare(
            `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(", ")})
             VALUES (${columns.map(() => "?").join(", ")})`,
          ).run(...Object.values(row));
        }
      }
    } finally {
      back.close();
    }
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    assert.equal(await hits(world, "walnut-semaphore"), 0, "the child");
    assert.equal(await hits(world, "opal-dirigible"), 0, "the grandchild");
    assert.equal(await hits(world, "lichen-bugle"), 1, "other sessions stay");
  } finally {
    await world.cleanup();
  }
});

Deno.test("forget --project and --before choose by project and by age", async () => {
  const world = await captured();
  try {
    const io = captureIo();
    assert.equal(
      await forgetCommand(
        ["--before", "2026-04-01", "--project", "/home/dev/src/delta", "--json"],
        io,
        world.env,
      ),
      0,
    );
    const gone = JSON.parse(io.stdout()).conversations.map((c: { conversation: string }) =>
      c.conversation
    );
    assert.equal(gone.length, 2, "the January and March sessions of delta");
    assert.equal(await hits(world, "alder-polka"), 0);
    assert.equal(await hits(world, "mango-sundial"), 0);
    assert.equal(await hits(world, "ferret-cathedral"), 1, "June stays");
    const projectOnly = captureIo();
    assert.equal(
      await forgetCommand(["--project", "/home/dev/src/alpha"], projectOnly, world.env),
      0,
    );
    assert.equal(await hits(world, "marmot keyring"), 0);
    assert.equal(await hits(world, "ferret-cathedral"), 1);
    const none = captureIo();
    assert.equal(await forgetCommand([], none, world.env), 2);
    assert.match(none.stderr(), /Say what to forget/);
  } finally {
    await world.cleanup();
  }
});

/** Every file under `dir` (the store, its -wal and -shm, logs) whose bytes hold `text`. */
function filesHolding(dir: string, texts: string[]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const walk = (at: string) => {
    for (const entry of Deno.readDirSync(at)) {
      const path = join(at, entry.name);
      if (entry.isDirectory) walk(path);
      if (!entry.isFile) continue;
      // latin1 maps each byte to one character, so an ASCII word is found at any byte offset.
      const bytes = readFileSync(path).toString("latin1");
      const hits = texts.filter((t) => bytes.includes(t));
      if (hits.length) found.set(path, hits);
    }
  };
  walk(dir);
  return found;
}

Deno.test("forgetting half a store shrinks the file by a third and leaves its words in no file", async () => {
  const world = await makeWorld();
  try {
    const sessions = 120;
    writeClaudeCorpus(world.claude, { sessions, lines: 40 });
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const sizeBefore = Deno.statSync(join(world.data, "history.db")).size;
    // Session N starts N hours after the first: the first half ended before this instant.
    const cutoff = new Date(Date.parse("2026-05-01T09:00:00Z") + (sessions / 2) * 3_600_000);
    // Each session's first prompt opens with "marker<N> " (the space keeps marker1 from
    // matching marker10).
    const forgotten = Array.from({ length: sessions / 2 }, (_, n) => `marker${n} `);
    const kept = Array.from({ length: sessions / 2 }, (_, n) => `marker${n + sessions / 2} `);
    assert.equal(filesHolding(world.data, forgotten).size, 1, "each word is in the store first");

    const result = await runCli("forget", ["--before", cutoff.toISOString(), "--json"], world.vars);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).conversations.length, sessions / 2);
    const finished = await runCli("forget", ["--finish"], world.vars);
    assert.equal(finished.code, 0, finished.stderr);

    const sizeAfter = Deno.statSync(join(world.data, "history.db")).size;
    assert.ok(
      sizeAfter <= sizeBefore * 2 / 3,
      `the store shrank from ${sizeBefore} to ${sizeAfter} bytes, less than a third`,
    );
    assert.deepEqual(
      [...filesHolding(world.data, forgotten)],
      [],
      "no file holds a forgotten word",
    );
    assert.equal(await hits(world, "marker0"), 0);
    assert.equal(await hits(world, `marker${sessions - 1}`), 1, "the other half stays");
    assert.equal(filesHolding(world.data, kept).size, 1);
  } finally {
    await world.cleanup();
  }
});

Deno.test("forget on a terminal lists what goes and asks; only yes forgets, --yes skips it", async (t) => {
  const world = await captured();
  try {
    const all = manifest<Entry>("claude");
    const parents = new Set(all.map((e) => e.parent));
    const [first, second] = all.filter((e) => !e.parent && !parents.has(e.conversation))
      .map((e) => e.conversation);
    const count = async (id: string) => {
      const io = captureIo();
      // A forgotten id is no longer found (exit 1).
      if (await forgetCommand([id, "--dry-run", "--json"], io, world.env, null) !== 0) return 0;
      return JSON.parse(io.stdout()).conversations.length;
    };
    await t.step("no keeps everything, exit 1", async () => {
      const asked: string[] = [];
      const io = captureIo();
      const code = await forgetCommand([first!], io, world.env, (q) => (asked.push(q), "n"));
      assert.equal(code, 1);
      assert.equal(asked.length, 1);
      assert.match(asked[0]!, /Forget 1 conversation \(\d+ records?, .*\) for good\? \[y\/N\]$/);
      assert.match(io.stderr(), new RegExp(`would forget  ${first}`));
      assert.match(io.stderr(), /Nothing was forgotten\n$/);
      assert.equal(await count(first!), 1, "still there");
    });
    await t.step("yes forgets what was listed, singular where one", async () => {
      const io = captureIo();
      assert.equal(await forgetCommand([first!], io, world.env, () => "yes"), 0, io.stderr());
      assert.match(io.stdout(), /^Forgot 1 conversation \(/m);
      assert.equal(await count(first!), 0);
    });
    await t.step("--yes does not ask", async () => {
      const io = captureIo();
      const never = () => assert.fail("asked despite --yes");
      assert.equal(await forgetCommand([second!, "--yes"], io, world.env, never), 0);
      assert.match(io.stdout(), /^Forgot 1 conversation/m);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("forget leaves the index's scrub to a process of its own; --finish waits for it and says what it did", async () => {
  const world = await captured();
  try {
    const entry = manifest<Entry>("claude").find((e) => e.case === "crlf")!;
    const result = await runCli("forget", [entry.conversation], world.vars);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /^No search finds them\. Their words leave the text index in the background\n\(pid \d+; /m,
    );
    for (const line of result.stdout.split("\n").filter((l) => /text index|^\(pid/.test(l))) {
      assert.ok(line.length <= 80, `${line.length} columns: ${line}`);
    }
    const finished = await runCli("forget", ["--finish"], world.vars);
    assert.equal(finished.code, 0, finished.stderr);
    // The background process may have finished first: either way nothing forgotten is left.
    assert.match(
      finished.stdout,
      /^(The text index holds nothing forgotten any more|Nothing to finish: .*)\n$/,
    );
    const again = await runCli("forget", ["--finish", "--json"], world.vars);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), {
      pending: false,
      steps: 0,
      pagesFreed: 0,
      walEmptied: true,
    });
    assert.equal(storeFileHas(world, "copper-marionette"), false);
  } finally {
    await world.cleanup();
  }
});
