import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { cpSync } from "node:fs";
import { join } from "node:path";
import {
  aider,
  type AiderState,
  cutBlocks,
  type CutState,
  sessionId,
} from "../../../lib/sources/aider.ts";
import { aiderBlockText, aiderText } from "../../../lib/sources/aider_text.ts";
import type { Derived, DiscoverContext, SourceRef } from "../../../lib/sources/adapter.ts";
import { envFrom } from "../../../lib/env.ts";
import { FIXTURES, makeWorld, runCli, tempDir, withStore, type World } from "../../_helpers.ts";

const HISTORY = ".aider.chat.history.md";
const OLD_NAME = "aider.chat.history 2023-10-02_1654.md";
const fixture = (project: string) => join(FIXTURES, "aider", project, HISTORY);
const refOf = (path: string): SourceRef => ({
  agent: "aider",
  locator: path,
  path,
  format: "rows",
});
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Every block of a file in one read, derived in order. */
async function readAll(path: string, cursorKey: string | null = null, state?: AiderState) {
  const ref = refOf(path);
  const read = await aider.readRows(ref, cursorKey, 1 << 30);
  const own = state ?? aider.initialState(ref);
  const derived = read.rows.map((row) => aider.parseRow(row, own, ref, () => null));
  return { read, derived, state: own };
}

/** The shape of a derived record the tests compare: kind, role, the start of its text. */
function shape(d: Derived): string {
  const text = d.text.replace(/\s+/g, " ").slice(0, 30);
  return `${d.kind}${d.role ? `/${d.role}` : ""}${text ? ` ${text}` : ""}`;
}

Deno.test("a history with several sessions is one conversation per session header", async () => {
  const path = fixture("car-game");
  const bytes = await Deno.readFile(path);
  const { read, derived } = await readAll(path);
  // The blocks end to end are the file, byte for byte.
  assert.deepEqual(concat(read.rows), bytes);
  assert.equal(read.more, false);
  const project = join(FIXTURES, "aider", "car-game");
  const ids = ["2026-06-24 00:29:34", "2026-07-03 13:14:18", "2026-07-03 13:15:19"].map((t) =>
    `aider:${sessionId(project, t)}`
  );
  assert.match(ids[0]!, /^aider:[0-9a-f]{8}-20260624T002934$/);
  assert.deepEqual(
    [...new Set(derived.map((d) => d.conversation?.key))],
    ids,
  );
  for (const d of derived) assert.equal(d.conversation?.cwd, project);
  assert.deepEqual(derived.map(shape), [
    "event",
    "event Please answer with one of: yes",
    "message/user /model openai/gpt-5.4",
    "event Aider v0.86.2 Main model: open",
    "message/user /ask what does delta represent",
    "message/user what does delta represent in t",
    "message/assistant In this file, `delta` represen",
    "event Tokens: 587 sent, 345 received",
    "event",
    "event /home/user/.local/bin/aider /h",
    "event",
    "event /home/user/.local/bin/aider /h",
    "message/user /ask None of the three roads s",
    "message/user None of the three roads spawn ",
    "event scenes/road/road.tscn Add file",
    "reasoning/assistant We are asked why the roads are",
    "message/assistant The road chunk instances are c",
    "event Tokens: 1.4k sent, 1.0k receiv",
    "message/user /drop oil:///home/user/project",
  ]);
  // A code block's `> ` and `#### ` lines stay in the reply that holds them.
  const reply = derived[16]!.text;
  assert.match(reply, /^> this line is code, not aider's output {2}$/m);
  assert.match(reply, /^#### nor is this a prompt {2}$/m);
  assert.match(reply, /After that, the roads should appear\.$/);
  // Titles: the first typed message that is not a command, once per session.
  assert.deepEqual(derived.filter((d) => d.title).map((d) => d.title!.text), [
    "what does delta represent in this file? I am working with godot",
    "None of the three roads spawn when the game loads. Why is this?",
  ]);
  // The session's version comes from Aider's start-up notice; its start is the header's time.
  assert.equal(derived[2]!.version, "0.86.2");
  assert.equal(derived[0]!.ts, new Date(2026, 5, 24, 0, 29, 34).getTime());
  assert.ok(derived.every((d) => !d.drift));
  // New messages: what was typed and each reply, not Aider's notices nor the thinking.
  assert.equal(derived.filter((d) => d.newMessage).length, 8);
});

Deno.test("a reply with nested code fences and a message of Aider's over several lines", async () => {
  // Aider 0.76.2 in architect mode, its history kept as `.aider/aider.chat.history.md`.
  const path = join(FIXTURES, "aider", "label-printer", ".aider", "aider.chat.history.md");
  const { read, derived } = await readAll(path);
  const bytes = await Deno.readFile(path);
  assert.deepEqual(concat(read.rows), bytes.subarray(0, bytes.length - 1)); // its last blank line waits
  assert.deepEqual(derived.map(shape), [
    "event",
    "event /Users/user/.local/bin/aider A",
    "event",
    "event /Users/user/.local/bin/aider A",
    "message/user implement the program as defin",
    "event README.md Add file to the chat",
    "message/assistant It seems like the `README.md` ",
    "event Tokens: 304 sent, 104 received",
    "message/user implement the program as defin",
    "event https://docs.rs/actix/latest/a",
    "message/assistant To implement a program using t",
    "event Tokens: 2.0k sent, 496 receive",
    "message/user To implement a program using t",
    "message/assistant Here is the *SEARCH/REPLACE bl",
    "event Tokens: 2.2k sent, 387 receive",
    "message/user /add label_bro_py/README.md",
    "event Added label_bro_py/README.md t",
    "message/user /voice",
    "message/user /voice",
  ]);
  // The install hint, one message of Aider's: `> ` on its first line, two spaces on its last.
  assert.match(derived[5]!.text, /install Playwright:\n\n\/Users\/user\/[^\n]*pip install/);
  assert.match(
    derived[5]!.text,
    /for more info\.\nInstall playwright\? \(Y\)es\/\(N\)o \[Yes\]: y/,
  );
  // The editor's reply nests code blocks in an edit block; it ends where Aider's output begins.
  assert.match(derived[13]!.text, /^```rust$[\s\S]*^>>>>>>> REPLACE\n```$/m);
  assert.equal(derived[13]!.version, "0.76.2");
});

Deno.test("an Aider 0.14 history kept under another name reads the same way", async () => {
  // Committed as `aider.chat.history <date>.md`: AIDER_CHAT_HISTORY_FILE names such a file.
  const path = join(FIXTURES, "aider", "adventure", OLD_NAME);
  const { read, derived } = await readAll(path);
  assert.deepEqual(concat(read.rows), await Deno.readFile(path));
  assert.deepEqual(derived.map(shape), [
    "event",
    "event Aider v0.14.1 Add .aider* to .",
    "message/user /help",
    "event /add Add matching files to the",
    "message/user Hello!",
    "message/assistant Hello! How can I assist you to",
    "message/user My Test1\\Junk.java file is cur",
    "message/assistant Sure, I can help with that. We",
    "event Applied edit to Test1\\Junk.jav",
    "message/user /quit",
    "event Invalid command: /quit",
    "message/user /exit",
    "event",
    "event Aider v0.14.1 C:\\Tools\\python\\",
    "message/user Hello! I would like to create ",
    "message/assistant Sure, I can help you with that",
  ]);
  assert.deepEqual([...new Set(derived.map((d) => d.version ?? null))], [null, "0.14.1"]);
  assert.equal(new Set(derived.map((d) => d.conversation?.key)).size, 2);
  // Its edit block (`<<<<<<< HEAD` … `>>>>>>> updated`) stays in the reply.
  assert.match(derived[7]!.text, /^<<<<<<< HEAD$[\s\S]*^>>>>>>> updated$/m);
});

Deno.test("a history with Windows line endings reads as the same blocks", async () => {
  // Aider on Windows writes its file in text mode: every line ends in CRLF.
  const dir = await tempDir();
  try {
    const path = join(dir, HISTORY);
    const lf = decoder.decode(await Deno.readFile(fixture("car-game")));
    await Deno.writeTextFile(path, lf.replaceAll("\n", "\r\n"));
    const crlf = await readAll(path);
    const plain = await readAll(fixture("car-game"));
    assert.deepEqual(concat(crlf.read.rows), await Deno.readFile(path));
    assert.deepEqual(crlf.derived.map(shape), plain.derived.map(shape));
    assert.deepEqual(
      crlf.derived.map((d) => d.text.replaceAll("\r\n", "\n")),
      plain.derived.map((d) => d.text),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the reader gives each block the adapter's text", async () => {
  const paths = ["car-game", "calculator", "note_app"].map(fixture);
  const others = [
    join(FIXTURES, "aider", "adventure", OLD_NAME),
    join(FIXTURES, "aider", "label-printer", ".aider", "aider.chat.history.md"),
  ];
  for (const path of [...paths, ...others]) {
    const { read, derived } = await readAll(path);
    read.rows.forEach((row, i) => {
      assert.equal(aiderText.textOf(row, refOf(path)), derived[i]!.text);
      assert.equal(aider.textOf(row, refOf(path)), derived[i]!.text);
    });
  }
});

Deno.test("a history cut mid-reply is read to its last whole line; the rest comes with its end", async () => {
  const dir = await tempDir();
  try {
    const path = join(dir, HISTORY);
    const whole = await Deno.readFile(fixture("calculator"));
    await Deno.writeFile(path, whole);
    const first = await readAll(path);
    assert.deepEqual(first.derived.map(shape).slice(-4), [
      "event Commit c339495 aider: the late",
      "message/user i get this error : Compiled wi",
      "reasoning/assistant Okay, let's look at the proble",
      "message/assistant To resolve the ESLint warnings",
    ]);
    // A multi-line prompt keeps its lines, empty ones too.
    assert.match(first.derived.at(-3)!.text, /warnings\.\n\n\[eslint\]\nsrc\/components/);
    // The cut line waits: the blocks read end where the last whole line ends.
    const read = concat(first.read.rows);
    assert.equal(decoder.decode(whole.subarray(read.length)), "\n1. Move the consta");
    // Aider's write ends: the line and the rest of the reply come as one more block.
    await Deno.writeFile(path, encoder.encode("nts above the component.\n\n"), { append: true });
    const next = await readAll(path, first.read.cursorKey, first.state);
    assert.deepEqual(next.derived.map(shape), [
      "message/assistant 1. Move the constants above th",
    ]);
    assert.equal(next.derived[0]!.conversation?.key, first.derived[0]!.conversation?.key);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an appended history reads only what was added, as a whole read would", async () => {
  const dir = await tempDir();
  try {
    const path = join(dir, HISTORY);
    const whole = await Deno.readFile(fixture("car-game"));
    // The real file grew a session at a time (its commits a5bf090, then 04dd250).
    const second = decoder.decode(whole).indexOf("\n# aider chat started at 2026-07-03 13:14:18");
    await Deno.writeFile(path, whole.subarray(0, second));
    const first = await readAll(path);
    await Deno.writeFile(path, whole.subarray(second), { append: true });
    const next = await readAll(path, first.read.cursorKey, first.state);
    assert.equal(concat(next.read.rows)[0], 0x0a);
    const once = await readAll(fixture("car-game"));
    assert.deepEqual([...first.read.rows, ...next.read.rows], once.read.rows);
    // The same blocks, keyed by the same places in the same sessions.
    const place = (d: Derived) => [d.key?.replace(/^block:[0-9a-f]{8}-/, ""), d.text];
    assert.deepEqual([...first.derived, ...next.derived].map(place), once.derived.map(place));
    // Nothing new: nothing read.
    const again = await readAll(path, next.read.cursorKey, next.state);
    assert.deepEqual(again.read.rows, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cutting is the same at any budget and any window: a read stops only between blocks", () => {
  const fresh = () => ({ open: null, pending: false, closed: false, blank: false }) as CutState;
  for (const path of [fixture("car-game"), fixture("calculator")]) {
    const bytes = Deno.readFileSync(path);
    const whole = cutBlocks(bytes, fresh(), 1e9);
    for (const [budget, window] of [[1, 1e9], [1e9, 300], [200, 64]]) {
      const rows: Uint8Array[] = [];
      let state = fresh();
      let at = 0;
      let size = window!;
      while (true) {
        const toEnd = at + size >= bytes.length;
        const cut = cutBlocks(bytes.subarray(at, at + size), state, budget!, toEnd);
        // A block longer than the window widens it, as readRows does.
        if (cut.rows.length === 0 && !toEnd) {
          size *= 2;
          continue;
        }
        rows.push(...cut.rows);
        at += cut.end;
        state = cut.state;
        size = window!;
        if (!cut.more) break;
      }
      assert.deepEqual(rows, whole.rows, `budget ${budget}, window ${window}`);
    }
  }
});

Deno.test("text before the first session header and a header without a time are drift, kept", async () => {
  const dir = await tempDir();
  try {
    const path = join(dir, HISTORY);
    await Deno.writeTextFile(
      path,
      "notes someone wrote on top\n\n# aider chat started at sometime\n\n> Aider v0.14.1  \n",
    );
    const { read, derived } = await readAll(path);
    assert.deepEqual(concat(read.rows), await Deno.readFile(path));
    assert.deepEqual(derived.map((d) => [d.kind, d.drift?.category ?? null]), [
      ["meta", "missing_fields"],
      ["event", "unparsable"],
      ["event", null],
    ]);
    assert.match(derived[1]!.conversation!.nativeId, /^[0-9a-f]{8}-x[0-9a-f]{12}$/);
    assert.equal(derived[2]!.conversation?.key, derived[1]!.conversation?.key);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("discovery finds histories in known projects and their parents, and under roots", async () => {
  const dir = await tempDir();
  try {
    const home = join(dir, "home");
    const project = join(home, "code", "car-game");
    const other = join(dir, "roots", "group", "calculator");
    for (const [from, to] of [["car-game", project], ["calculator", other]] as const) {
      await Deno.mkdir(to, { recursive: true });
      cpSync(fixture(from), join(to, HISTORY));
    }
    await Deno.mkdir(join(project, "src", "deep"), { recursive: true });
    const ctx: DiscoverContext = {
      env: envFrom({ HOME: home }),
      extraRoots: { aider: [join(dir, "roots")] },
      skipped: new Map(),
      // A conversation recorded in a folder below the project, one gone from the disk, and one
      // whose history is a link (a project's files are not followed out of it).
      projects: [join(project, "src", "deep"), join(dir, "gone"), join(dir, "linking")],
    };
    await Deno.mkdir(join(dir, "linking"));
    await Deno.symlink(join(project, HISTORY), join(dir, "linking", HISTORY));
    const found = [];
    for await (const ref of aider.discover(ctx)) found.push(ref.path);
    assert.deepEqual(found.sort(), [join(other, HISTORY), join(project, HISTORY)].sort());
    // A variable naming a history file makes it a root, through a link too.
    const real = join(dir, "elsewhere.md");
    cpSync(fixture("note_app"), real);
    const named = join(dir, "linked.md");
    await Deno.symlink(real, named);
    const byVariable: DiscoverContext = {
      env: envFrom({ HOME: home, AIDER_CHAT_HISTORY_FILE: named }),
      extraRoots: {},
      skipped: new Map(),
    };
    const paths = [];
    for await (const ref of aider.discover(byVariable)) paths.push(ref.path);
    assert.deepEqual(paths, [named]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A conversation as `show --format json` gives it: each record's kind, role and text. */
async function shown(vars: Record<string, string>, id: string): Promise<string[]> {
  const out = await runCli("show", [id, "--format", "json"], vars);
  assert.equal(out.code, 0, out.stderr);
  const json = JSON.parse(out.stdout);
  const records = json.records as { kind: string; role: string | null; text: string }[];
  return records.filter((r) => r.text.trim() !== "").map((r) =>
    `${r.kind}${r.role ? `/${r.role}` : ""} ${r.text.replace(/\s+/g, " ").slice(0, 30)}`.trim()
  );
}

/** The car-game history in a project of the world, named by `AIDER_CHAT_HISTORY_FILE`. */
async function carGame(world: World) {
  const project = join(world.dir, "car-game");
  await Deno.mkdir(project);
  const path = join(project, HISTORY);
  const whole = await Deno.readFile(fixture("car-game"));
  await Deno.writeFile(path, whole);
  return { project, path, whole, vars: { ...world.vars, AIDER_CHAT_HISTORY_FILE: path } };
}

Deno.test("reindex, search and show read Aider's history; a rewrite neither repeats nor loses", async () => {
  const world = await makeWorld();
  try {
    const { project, path, whole, vars } = await carGame(world);
    const reindex = await runCli("reindex", [], vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    assert.doesNotMatch(reindex.stderr, /error/i);
    const id = `aider:${sessionId(project, "2026-07-03 13:15:19")}`;
    const found = await runCli("search", ["instances", "--json"], vars);
    assert.equal(found.code, 0, found.stderr);
    const hits = found.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(hits.map((h) => [h.conversation, h.agent]), [[id, "aider"]]);
    const before = await shown(vars, id);
    const session = [
      "event /home/user/.local/bin/aider /h",
      "message/user /ask None of the three roads s",
      "message/user None of the three roads spawn",
      "event scenes/road/road.tscn Add file",
      "reasoning/assistant We are asked why the roads are",
      "message/assistant The road chunk instances are c",
      "event Tokens: 1.4k sent, 1.0k receiv",
    ];
    assert.deepEqual(before, [...session, "message/user /drop oil:///home/user/project"]);
    // Its raw records are its part of the file, byte for byte.
    const raw = await runCli("show", [id, "--raw"], vars);
    assert.equal(raw.code, 0, raw.stderr);
    const start = decoder.decode(whole).indexOf("\n# aider chat started at 2026-07-03 13:15:19");
    assert.deepEqual(
      raw.stdoutBytes,
      whole.subarray(encoder.encode(decoder.decode(whole).slice(0, start)).length),
    );
    // Resuming restores the project's history in its directory: Aider has no session ids.
    const resume = await runCli("resume", [id, "--print"], vars);
    assert.equal(resume.code, 0, resume.stderr);
    assert.equal(resume.stdout, `cd ${project} && aider --restore-chat-history\n`);
    // The file is put back as it was an hour before (a checkout), then Aider goes on.
    const cut = decoder.decode(whole).indexOf("\n#### /drop");
    await Deno.writeFile(path, whole.subarray(0, cut));
    await Deno.writeFile(
      path,
      encoder.encode("\n#### /undo  \n> Removed: 1a2b3c4 aider: spawn the road chunks  \n"),
      { append: true },
    );
    const again = await runCli("reindex", [], vars);
    assert.equal(again.code, 0, again.stderr);
    const after = await shown(vars, id);
    // The blocks read again replace their first reading; the one the rewrite removed stays.
    assert.deepEqual(after, [
      "message/user /drop oil:///home/user/project",
      ...session,
      "message/user /undo",
      "event Removed: 1a2b3c4 aider: spawn",
    ]);
    // A rebuild derives the same from the stored blocks.
    const rebuild = await runCli("reindex", ["--rebuild"], vars);
    assert.equal(rebuild.code, 0, rebuild.stderr);
    assert.deepEqual(await shown(vars, id), after);
    const once = await runCli("search", ["instances", "--json"], vars);
    assert.equal(once.stdout.trim().split("\n").length, 1);
    const first = await runCli("search", ["delta represent", "--json"], vars);
    const firstHits = first.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(new Set(firstHits.map((h) => h.record)).size, firstHits.length);
    assert.equal(firstHits.length, 2);
  } finally {
    await world.cleanup();
  }
});

Deno.test("each Tokens report is a call with the session's model, Aider's rounded counts and its cost as written", async () => {
  const label = join(FIXTURES, "aider", "label-printer", ".aider", "aider.chat.history.md");
  const usage = async (path: string) =>
    (await readAll(path)).derived.flatMap((d) =>
      d.usage ? [{ conversation: d.conversation?.key, ...d.usage }] : []
    );
  const tokens = { cacheWrite: 0, cacheRead: 0 };
  const project = (name: string) => join(FIXTURES, "aider", name);
  const car = ["2026-06-24 00:29:34", "2026-07-03 13:15:19"].map((t) =>
    sessionId(project("car-game"), t)
  );
  assert.deepEqual(await usage(fixture("car-game")), [
    // `Model:` at start-up, then `/model` switched it: `Main model:` names the one it used.
    {
      conversation: `aider:${car[0]}`,
      call: `tokens:${car[0]}+1012`,
      model: "openai/gpt-5.4",
      input: 587,
      output: 345,
      ...tokens,
      cost: 0.0066,
    },
    {
      conversation: `aider:${car[1]}`,
      call: `tokens:${car[1]}+1168`,
      model: "deepseek/deepseek-v4-pro",
      input: 1400,
      output: 1000,
      ...tokens,
      cost: 0.0015,
    },
  ]);
  // A model Aider has no price for: no cost, the tokens left to be priced.
  const calc = sessionId(project("calculator"), "2025-05-04 17:02:36");
  assert.deepEqual(
    (await usage(fixture("calculator"))).map((u) => [u.call, u.model, u.input, u.output, u.cost]),
    [
      [`tokens:${calc}+669`, "gemini/gemini-2.5-pro-exp-03-25", 3200, 222, null],
      [`tokens:${calc}+1190`, "gemini/gemini-2.5-pro-exp-03-25", 5400, 1100, null],
    ],
  );
  // Architect mode: the main model's name; three replies of one session.
  assert.deepEqual(
    (await usage(label)).map((u) => [u.model, u.input, u.output, u.cost]),
    [["gpt-4o", 304, 104, 0.0018], ["gpt-4o", 2000, 496, 0.0099], ["gpt-4o", 2200, 387, 0.0095]],
  );
  // Aider 0.14 wrote no reports; this one wrote none either.
  assert.deepEqual(await usage(join(FIXTURES, "aider", "adventure", OLD_NAME)), []);
  assert.deepEqual(await usage(fixture("note_app")), []);
});

Deno.test("the cache's counts, older wordings, a report over two lines and an escaped $", async () => {
  const dir = await tempDir();
  try {
    const path = join(dir, HISTORY);
    await Deno.writeTextFile(
      path,
      [
        "",
        "# aider chat started at 2024-08-02 10:00:00",
        "",
        "> Aider v0.46.1  ",
        "> Models: claude-3-5-sonnet-20240620 with diff edit format, weak model claude-3-haiku  ",
        "",
        "#### hello  ",
        "",
        "Hi.",
        "",
        "> Tokens: 12,345 sent, 1,024 received. Cost: $0.053 request, $0.053 session.  ",
        "",
        "#### again  ",
        "",
        "Hi again.",
        "",
        "> Tokens: 12k sent, 2.5k cache write, 8.1k cache hit, 150 received.",
        "Cost: $0.02 message, $0.07 session.  ",
        "",
        "#### and a history a Markdown formatter went through  ",
        "",
        "Escaped.",
        "",
        "> Tokens: 175k sent, 846 received. Cost: \\$0.06 message, \\$0.07 session.  ",
        "",
      ].join("\n"),
    );
    const usage = (await readAll(path)).derived.flatMap((d) => (d.usage ? [d.usage] : []));
    assert.deepEqual(
      usage.map((u) => [u.model, u.input, u.output, u.cacheWrite, u.cacheRead, u.cost]),
      [
        ["claude-3-5-sonnet-20240620", 12345, 1024, 0, 0, 0.053],
        ["claude-3-5-sonnet-20240620", 1400, 150, 2500, 8100, 0.02],
        ["claude-3-5-sonnet-20240620", 175000, 846, 0, 0, 0.06],
      ],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("logbook usage counts each reply's report once, through a rewrite and a rebuild", async () => {
  const world = await makeWorld();
  try {
    const { project, path, whole, vars } = await carGame(world);
    const report = async () => {
      const run = await runCli("usage", ["session", "--json", "--tz", "UTC"], vars);
      assert.equal(run.code, 0, run.stderr);
      const { lines, totals } = JSON.parse(run.stdout);
      return {
        lines: lines.map((l: Record<string, unknown>) => [l.key, l.calls, l.input, l.output]),
        calls: totals.calls,
        cost: Math.round(totals.cost * 1e6) / 1e6,
      };
    };
    assert.equal((await runCli("reindex", [], vars)).code, 0);
    const ids = ["2026-06-24 00:29:34", "2026-07-03 13:15:19"].map((t) =>
      `aider:${sessionId(project, t)}`
    );
    const expected = {
      lines: [[ids[0], 1, 587, 345], [ids[1], 1, 1400, 1000]],
      calls: 2,
      cost: 0.0081,
    };
    assert.deepEqual(await report(), expected);
    // The file put back as it was before its last turn, then one more turn: read again from
    // its start, the reports it still holds count once, the new one once.
    const cut = decoder.decode(whole).indexOf("\n#### /drop");
    await Deno.writeFile(path, whole.subarray(0, cut));
    await Deno.writeFile(
      path,
      encoder.encode("\n#### and now?  \n\nNow it works.\n\n> Tokens: 2.1k sent, 30 received.  \n"),
      { append: true },
    );
    assert.equal((await runCli("reindex", [], vars)).code, 0);
    const grown = {
      lines: [[ids[0], 1, 587, 345], [ids[1], 2, 3500, 1030]],
      calls: 3,
      cost: 0.0081,
    };
    assert.deepEqual(await report(), grown);
    assert.equal((await runCli("reindex", ["--rebuild"], vars)).code, 0);
    assert.deepEqual(await report(), grown);
    // A store captured before Aider's reports were read: deriving its blocks again fills them.
    withStore(world, (store) => {
      store.db.exec(
        "DELETE FROM usage; UPDATE sources SET derivation = NULL; DELETE FROM meta WHERE key = 'derivations'",
      );
    });
    assert.equal((await runCli("reindex", [], vars)).code, 0);
    assert.deepEqual(await report(), grown);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a project captured once is looked in again without the variable that named it", async () => {
  const world = await makeWorld();
  try {
    const project = join(world.dir, "calculator");
    await Deno.mkdir(project);
    const path = join(project, HISTORY);
    cpSync(fixture("note_app"), path);
    const first = await runCli("reindex", [], { ...world.vars, AIDER_CHAT_HISTORY_FILE: path });
    assert.equal(first.code, 0, first.stderr);
    // Aider goes on in that project; logbook runs without the variable.
    await Deno.writeFile(
      path,
      encoder.encode("\n#### name the project's largest file  \n\nIt is src/app.js.\n\n"),
      { append: true },
    );
    const capture = await runCli("reindex", [], world.vars);
    assert.equal(capture.code, 0, capture.stderr);
    const found = await runCli("search", ["largest", "--json"], world.vars);
    assert.equal(found.code, 0, found.stderr);
    const hits = found.stdout.trim().split("\n").filter((l) => l).map((l) => JSON.parse(l));
    assert.deepEqual(hits.map((h) => h.conversation), [
      `aider:${sessionId(project, "2026-06-21 02:24:48")}`,
    ]);
  } finally {
    await world.cleanup();
  }
});

/** Blocks end to end. */
function concat(rows: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(rows));
}

Deno.test("bytes that are not UTF-8 are kept as they are and read as replacement characters", async () => {
  const dir = await tempDir();
  try {
    const path = join(dir, HISTORY);
    const bytes = Buffer.concat([
      encoder.encode("\n# aider chat started at 2025-01-02 03:04:05\n\n#### caf"),
      new Uint8Array([0xe9]),
      encoder.encode(" au lait  \n\nA reply.\n\n"),
    ]);
    await Deno.writeFile(path, bytes);
    const { read, derived } = await readAll(path);
    assert.deepEqual(concat(read.rows), new Uint8Array(bytes.subarray(0, bytes.length - 1)));
    assert.deepEqual(derived.map(shape), [
      "event",
      "message/user caf\ufffd au lait",
      "message/assistant A reply.",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a block's text does not depend on what came before it", () => {
  const bytes = encoder.encode("\n#### first line  \n#### second line  \n");
  assert.equal(aiderBlockText(bytes), "first line\nsecond line");
  assert.equal(aiderBlockText(encoder.encode("\n#### <blank>  \n")), "");
  assert.equal(aiderBlockText(encoder.encode(">  \n> ^C again to exit  \n")), "^C again to exit");
});
