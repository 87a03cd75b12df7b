// Capture of Cursor CLI: agent transcripts under ~/.cursor/projects, a conversation's sub-agents
// as its children, lines Cursor writes again (a transcript rewritten whole, or pruned) found once
// and shown once, and lines logbook cannot read kept as drift. The transcripts are real ones
// Cursor wrote (fixtures/cursor/MANIFEST.json); the odd lines and the rewrites are constructed.

import { conversation, found, readersAgree, said, shown } from "./_shown.ts";
import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { dirname, join } from "node:path";
import { cursor } from "../../../lib/sources/cursor.ts";
import {
  captureWorld,
  FIXTURES,
  makeWorld,
  runCli,
  withStore,
  type World,
} from "../../_helpers.ts";

/** A real conversation and the sub-agent its Task started (Cursor of May 2026). */
const MAIN_ID = "bd829b4f-8878-43b0-94c5-941935b67236";
const SUB_ID = "b6f98d30-8d68-4c3c-8b87-0f45529cfffd";
const MAIN = `cursor:${MAIN_ID}`;
const SUB = `cursor:${SUB_ID}`;
const WORKSPACE = "/Users/example/Work/wellspring-app";
const TRANSCRIPTS = join(
  ".cursor",
  "projects",
  "Users-example-Work-wellspring-app",
  "agent-transcripts",
);
/** Constructed: odd lines in the older layout, and a transcript written again. */
const OLD_ID = "5b7d9f1e-2c4a-4e6b-8d0f-1a3c5e7b9d20";
const OLD = `cursor:${OLD_ID}`;
const REWRITTEN_ID = "3f1c9a52-7d4e-4b8a-9e21-6c5d8f0a1b34";
const REWRITTEN = `cursor:${REWRITTEN_ID}`;
const OTHER_TRANSCRIPTS = join(".cursor", "projects", "home-user-project", "agent-transcripts");

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

function subFile(world: World): string {
  return join(world.home, TRANSCRIPTS, MAIN_ID, "subagents", `${SUB_ID}.jsonl`);
}

function rewrittenFile(world: World): string {
  return join(world.home, OTHER_TRANSCRIPTS, REWRITTEN_ID, `${REWRITTEN_ID}.jsonl`);
}

/** Puts stage `<name>` of `fixtures/cursor/rewrite/` in place of the rewritten transcript. */
function rewrite(world: World, name: string): void {
  Deno.mkdirSync(dirname(rewrittenFile(world)), { recursive: true });
  Deno.writeFileSync(
    rewrittenFile(world),
    Deno.readFileSync(join(FIXTURES, "cursor", "rewrite", name)),
  );
}

/** The main transcript's last line, which Cursor ends without a newline: read all the same. */
const MAIN_LAST = "message/assistant: Committed `9f916ac` on `develop`: the alias shim in " +
  "[`backend/src/config/env.ts`](backend/src/config/env.ts) and the note in " +
  "[`backend/.env.example`](backend/.env.example). Working tree is clean; nothing pushed.";

const MAIN_SAID = [
  "message/user: <user_query>",
  "message/assistant: Exploring the codebase for session media models and any existing S3 or " +
  "upload patterns.",
  // Words only "[REDACTED]": its tool calls.
  "tool_call/assistant: Read",
  "message/user: <timestamp>Tuesday, May 12, 2026, 8:52 PM (UTC+5:30)</timestamp>",
  "tool_call/assistant: Task",
  "message/user: <user_query>",
  "message/assistant: Using `S3_BUCKET` and `PRESIGN_EXPIRES_SECONDS` matches what the API " +
  "reads, so presign and `publicUrl` generation will pick up your `ap-south-1` bucket " +
  "correctly. The optional alias mapping in `loadEnv` can stay; it only applies when the " +
  "canonical keys are missing, so it will not interfere with your renamed `.env`.",
  // A prompt Cursor wrote for a button: its context first, the query last.
  "message/user: Stage the changes you worked on and create a commit for this branch.",
  "message/assistant:  I need to decide whether to keep the alias shim in env.ts since the user " +
  "has already renamed their environment variables to the canonical names. It's still a useful " +
  "safety net even if not strictly necessary, and they didn't ask me to remove it, so I'll keep " +
  "both the shim and the .env.example file and commit them together. Let me check the status " +
  "first.",
  "tool_call/assistant: Shell",
  MAIN_LAST,
];
Deno.test("each line of a real Cursor transcript is a record of its kind and role; a sub-agent is a child; the workspace comes from the paths its tools name", async () => {
  const world = await cursorWorld();
  try {
    const summary = await captureWorld(world);
    assert.deepEqual(summary.errors, []);
    assert.deepEqual(said(world, MAIN), MAIN_SAID);
    const main = conversation(world, MAIN);
    assert.equal(main.title, "Lets plan S3 integrtation for sessions'media.");
    assert.equal(main.parent_key, null);
    assert.equal(main.cwd, WORKSPACE);
    const sub = conversation(world, SUB);
    assert.equal(sub.parent_key, MAIN);
    assert.equal(sub.subagent, 1);
    assert.equal(sub.cwd, WORKSPACE);
    assert.equal(
      sub.title,
      "Implement the plan as specified, it is attached for your reference. Do NOT…",
    );
    // The sub-agent's transcript starts with an empty line, as Cursor wrote it.
    assert.deepEqual(shown(world, SUB).map((r) => r.kind), [
      "meta",
      "message",
      "message",
      "message",
      "message",
      "tool_call",
      "message",
      "tool_call",
      "message",
    ]);
    for (
      const [phrase, key] of [
        ["integrtation", MAIN],
        ["ap-south-1", MAIN],
        ["Aligning seed", SUB],
        ["tenant-prefix", SUB],
      ] as const
    ) {
      assert.deepEqual(found(world, phrase), [key], phrase);
    }
    // Cursor's `[REDACTED]` stub is not text.
    assert.deepEqual(found(world, "REDACTED"), []);
  } finally {
    await world.cleanup();
  }
});

Deno.test("Cursor ends a transcript without a newline: its last line is read once it is a whole JSON object, and nothing twice when the next comes", async () => {
  const world = await cursorWorld();
  try {
    // Every real transcript found ends so (81 of 81): Cursor writes a newline before each line
    // but the first, so the last line has none and is whole all the same.
    await captureWorld(world);
    assert.deepEqual(said(world, MAIN), MAIN_SAID);
    assert.deepEqual(found(world, "9f916ac"), [MAIN]);
    assert.equal(Deno.readTextFileSync(subFile(world)).endsWith("}"), true);
    assert.deepEqual(found(world, "final_summary"), [SUB]);
    // The conversation goes on: Cursor writes the next line after a newline.
    const next = (text: string) =>
      JSON.stringify({
        role: "user",
        message: { content: [{ type: "text", text: `<user_query>\n${text}\n</user_query>` }] },
      });
    Deno.writeTextFileSync(mainFile(world), `\n${next("Thanks, cobaltwren.")}`, { append: true });
    await captureWorld(world);
    assert.deepEqual(found(world, "9f916ac"), [MAIN]);
    assert.deepEqual(found(world, "cobaltwren"), [MAIN]);
    // A line still being written is not JSON yet: it waits, and is read once, when whole.
    const torn = next("And one more, quillbramble.");
    Deno.writeTextFileSync(mainFile(world), `\n${torn.slice(0, 40)}`, { append: true });
    await captureWorld(world);
    assert.deepEqual(found(world, "quillbramble"), []);
    Deno.writeTextFileSync(mainFile(world), torn.slice(40), { append: true });
    await captureWorld(world);
    assert.deepEqual(found(world, "quillbramble"), [MAIN]);
    const raws = shown(world, MAIN).map((r) => new TextDecoder().decode(r.raw));
    assert.equal(
      raws.join(""),
      Deno.readTextFileSync(mainFile(world)),
      "every byte, once, in order",
    );
    // The two lines after it are said once each.
    assert.deepEqual(said(world, MAIN), [
      ...MAIN_SAID,
      "message/user: <user_query>",
      "message/user: <user_query>",
    ]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a last line an earlier build held back is read although its file has not changed since", async () => {
  const world = await cursorWorld();
  try {
    // An earlier build stopped before a last line it took for unfinished; the file was not
    // written since (same size, mtime and inode), so only the held-back cursor says to read it.
    const path = mainFile(world);
    const whole = Deno.readFileSync(path);
    const cut = whole.lastIndexOf(0x0a) + 1;
    const torn = whole.slice();
    torn.fill(0x20, cut);
    Deno.writeFileSync(path, torn);
    const { mtime } = Deno.statSync(path);
    await captureWorld(world);
    assert.deepEqual(found(world, "9f916ac"), []);
    const file = Deno.openSync(path, { write: true });
    try {
      file.seekSync(cut, Deno.SeekMode.Start);
      file.writeSync(whole.subarray(cut));
    } finally {
      file.close();
    }
    Deno.utimeSync(path, mtime!, mtime!);
    await captureWorld(world);
    assert.deepEqual(found(world, "9f916ac"), [MAIN]);
    assert.deepEqual(said(world, MAIN), MAIN_SAID);
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
    const path = join(world.home, OTHER_TRANSCRIPTS, `${OLD_ID}.jsonl`);
    Deno.writeTextFileSync(path, `${Deno.readTextFileSync(path)}."}]}}\n`);
    await captureWorld(world);
    assert.deepEqual(found(world, "ochrefinch"), [OLD]);
    const raws = shown(world, OLD).map((r) => new TextDecoder().decode(r.raw));
    assert.equal(raws.join(""), Deno.readTextFileSync(path), "every byte, once, in order");
  } finally {
    await world.cleanup();
  }
});

const FIRST_TURN = [
  "message/user: <timestamp>Thursday, Sep 10, 2026, 8:27 AM (UTC+0)</timestamp>",
  "message/assistant: Listing the notes folder, lanternfig.",
  "message/assistant: The notes folder holds copperwhistle.md and driftmallow.md: marmalith.",
];
const REWRITTEN_SAID = [
  ...FIRST_TURN,
  "message/user: <timestamp>Thursday, Sep 10, 2026, 8:28 AM (UTC+0)</timestamp>",
  "tool_call/assistant: Task",
  "message/assistant: The helper found it in driftmallow.md: tessellark.",
];
const RESUMED = [
  "message/user: <timestamp>Thursday, Sep 10, 2026, 9:02 AM (UTC+0)</timestamp>",
  "message/assistant: Resumed fine: plumquartz.",
];

Deno.test("a transcript Cursor writes again whole or prunes: each message found once, shown once", async () => {
  const world = await cursorWorld();
  try {
    rewrite(world, "1-first-turn.jsonl");
    await captureWorld(world);
    assert.deepEqual(said(world, REWRITTEN), FIRST_TURN);
    // The rest of the session and a resumed turn: the file grew.
    rewrite(world, "2-resumed.jsonl");
    await captureWorld(world);
    assert.deepEqual(said(world, REWRITTEN), [...REWRITTEN_SAID, ...RESUMED]);
    for (const phrase of ["quasarbeet", "lanternfig", "marmalith", "cobaltwren", "plumquartz"]) {
      assert.deepEqual(found(world, phrase), [REWRITTEN], phrase);
    }
    // Pruned: the first turn dropped. What was said stays, once.
    rewrite(world, "3-pruned.jsonl");
    await captureWorld(world);
    assert.deepEqual(said(world, REWRITTEN), [...REWRITTEN_SAID, ...RESUMED]);
    for (const phrase of ["quasarbeet", "tessellark", "cobaltwren", "plumquartz"]) {
      assert.deepEqual(found(world, phrase), [REWRITTEN], phrase);
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
      assert.ok(readersAgree(store, ctx, "cursor").records > 20);
    });
    const source = {
      agent: "cursor",
      locator: mainFile(world),
      path: mainFile(world),
      format: "jsonl" as const,
    };
    const calls = shown(world, MAIN).map((r) => cursor.toolOf!(r.raw, source)?.calls)
      .filter((c) => c !== undefined).flat().map((c) => `${c.name}: ${c.input.split("\n")[0]}`);
    assert.deepEqual(calls, [
      "SemanticSearch: Where is session media or media URL stored for programs sessions?",
      `Grep: ${WORKSPACE}`,
      `Glob: ${WORKSPACE}`,
      `Read: ${WORKSPACE}/backend/src/modules/uploads/service.ts`,
      `Read: ${WORKSPACE}/backend/src/modules/uploads/schemas.ts`,
      `Read: ${WORKSPACE}/frontend/src/lib/presignUpload.ts`,
      `Read: ${WORKSPACE}/backend/src/config/env.ts`,
      "Task: Continue S3 session media plan",
      `Shell: cd ${WORKSPACE} && git status && echo "---DIFF---" && git diff --stat`,
      `Shell: cd ${WORKSPACE} && git add backend/src/config/env.ts backend/.env.example && ` +
      `git commit -m "$(cat <<'EOF'`,
    ]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex, search and show read a Cursor home end to end; resume prints cursor-agent --resume", async () => {
  const world = await cursorWorld();
  try {
    const reindex = await runCli("reindex", [], world.vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    const hits = await runCli(
      "search",
      ["integrtation", "--agent", "cursor", "--json"],
      world.vars,
    );
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
