// A transcript that attacks the person reading it: escape sequences in its prompt, title, cwd,
// session id, replies, tool output and an unknown record type, and an AWS key in its first
// prompt. Every command that prints transcript text is run as a user runs it, and nothing a
// terminal would act on, nor the key, may reach its output; `--json` stays exact.

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { main as forget } from "../../commands/forget.ts";
import { main as reindex } from "../../commands/reindex.ts";
import { main as search } from "../../commands/search.ts";
import { main as show } from "../../commands/show.ts";
import { main as status } from "../../commands/status.ts";
import { captureIo, makeWorld, runCli, type World } from "../_helpers.ts";

/** The sequences a transcript can plant, each of which a terminal would act on. */
const PLANTED = {
  osc52: "\x1b]52;c;ZXZpbA==\x07",
  clear: "\x1b[2J",
  title: "\x1b]0;pwned\x07",
  link: "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",
  c1csi: "\u009b31m",
  bel: "\x07",
  cr: "overwrite\rX",
  bidi: "\u202eevil\u202c",
};
const HOSTILE = Object.values(PLANTED).join(" ");
/** What can go into a directory name: no `/`. */
const HOSTILE_NAME = [PLANTED.osc52, PLANTED.clear, PLANTED.title, PLANTED.c1csi, PLANTED.cr]
  .join("");
const AWS = "AKIA" + "Z3MQW7Q2JX4HB7ND";
const SID = "7e1d6a52-3c4b-4f6e-8a9d-0b1c2d3e4f5a";
const EVIL_SID = `evil${PLANTED.title}${PLANTED.c1csi}`;
const ASSISTANT_TEXT = `Deployed quokka ${HOSTILE}`;

/** Anything a terminal acts on, but tab and newline; with `sgr`, colour codes are allowed. */
function controls(text: string, sgr = false): string[] {
  // deno-lint-ignore no-control-regex -- control characters are exactly what is looked for
  const rest = sgr ? text.replace(/\x1b\[[0-9;]*m/g, "") : text;
  // deno-lint-ignore no-control-regex -- control characters are exactly what is looked for
  return rest.match(/[\0-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g) ?? [];
}

function assertClean(what: string, text: string, sgr = false): void {
  const found = controls(text, sgr);
  assert.deepEqual(
    found.map((c) => `U+${c.codePointAt(0)!.toString(16).padStart(4, "0")}`),
    [],
    `${what} printed raw control characters:\n${JSON.stringify(text)}`,
  );
}

/** Writes the hostile transcripts in Claude Code's real format; returns the cwd they name. */
function writeHostile(world: World): { cwd: string; file: string } {
  const cwd = join(world.dir, `proj ${HOSTILE_NAME}`);
  Deno.mkdirSync(cwd, { recursive: true });
  const dir = join(world.claude, "projects", "-hostile");
  Deno.mkdirSync(dir, { recursive: true });
  const base = {
    isSidechain: false,
    userType: "external",
    cwd,
    sessionId: SID,
    version: "2.1.40",
    gitBranch: "main",
  };
  let t = Date.parse("2026-05-01T10:00:00.000Z");
  const at = () => new Date(t += 1000).toISOString();
  const lines = [
    {
      ...base,
      parentUuid: null,
      type: "user",
      message: {
        role: "user",
        content: `set AWS_ACCESS_KEY_ID=${AWS} and deploy ${HOSTILE}\nthen check quokka`,
      },
      uuid: "u1",
      timestamp: at(),
    },
    {
      ...base,
      parentUuid: "u1",
      type: "assistant",
      message: {
        model: "claude-opus-4-6",
        id: "msg_1",
        type: "message",
        role: "assistant",
        content: [{ type: "text", text: ASSISTANT_TEXT }],
      },
      uuid: "a1",
      timestamp: at(),
    },
    {
      ...base,
      parentUuid: "a1",
      type: "assistant",
      message: {
        model: "claude-opus-4-6",
        id: "msg_2",
        type: "message",
        role: "assistant",
        content: [{
          type: "tool_use",
          id: "toolu_1",
          name: "Bash",
          input: { command: `echo quokka ${HOSTILE}` },
        }],
      },
      uuid: "a2",
      timestamp: at(),
    },
    {
      ...base,
      parentUuid: "a2",
      type: "user",
      message: {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: `quokka output ${HOSTILE}`,
          is_error: false,
        }],
      },
      uuid: "u2",
      timestamp: at(),
    },
    {
      ...base,
      version: `2.1.40${PLANTED.clear}${PLANTED.c1csi}`,
      type: `surprise${PLANTED.title}${PLANTED.osc52}`,
      uuid: "x1",
      timestamp: at(),
    },
  ];
  const file = join(dir, `${SID}.jsonl`);
  // JSON escapes C0 controls; a broken writer's line holds them raw (kept raw as drift).
  const broken = `{"type": "user", "broken ${HOSTILE}`;
  Deno.writeTextFileSync(
    file,
    lines.map((l) => JSON.stringify(l)).join("\n") + `\n${broken}\n`,
  );
  // A file whose name is no session id: the conversation's id comes from the record itself.
  Deno.writeTextFileSync(
    join(dir, "evil.jsonl"),
    JSON.stringify({
      ...base,
      sessionId: EVIL_SID,
      parentUuid: null,
      type: "user",
      message: { role: "user", content: `another quokka ${HOSTILE}` },
      uuid: "e1",
      timestamp: at(),
    }) + "\n",
  );
  return { cwd, file };
}

async function hostileWorld(): Promise<World & { cwd: string; file: string }> {
  const world = await makeWorld();
  const written = writeHostile(world);
  world.vars.INIT_CWD = written.cwd;
  return Object.assign(world, written);
}

Deno.test("no command prints a raw control character from a hostile transcript (real subprocesses)", async (t) => {
  const world = await hostileWorld();
  try {
    const capture = await runCli("reindex", [], world.vars);
    await t.step("reindex and its drift warning", () => {
      assert.equal(capture.code, 0, capture.stderr);
      assert.match(capture.stderr, /unknown type "surprise␛\]0;pwned\\x07␛\]52;c;ZXZpbA==\\x07"/);
      assert.match(capture.stderr, /claude 2\.1\.40␛\[2J\\x9b31m: 1 line/);
      assertClean("reindex", capture.stdout + capture.stderr);
    });
    const runs: [string, string, string[]][] = [
      ["reindex --status", "reindex", ["--status"]],
      ["status", "status", []],
      ["search", "search", ["quokka"]],
      ["search --json", "search", ["quokka", "--json"]],
      ["show", "show", [SID]],
      ["show a conversation whose id is hostile", "show", ["evil"]],
      ["show --json", "show", [SID, "--json"]],
      ["show, paged", "show", [SID, "--limit", "1"]],
      ["forget --dry-run", "forget", [SID, "evil", "--dry-run"]],
      ["forget --json --dry-run", "forget", ["--project", ".", "--json", "--dry-run"]],
      ["resume --print", "resume", [SID, "--print"]],
      ["fork (no terminal: prints the new session)", "fork", [SID]],
      ["show of an ambiguous id (the error names the ids)", "show", ["claude:"]],
    ];
    for (const [name, file, args] of runs) {
      await t.step(name, async () => {
        const result = await runCli(file, args, world.vars);
        assert.ok(result.code === 0 || name.includes("ambiguous"), result.stderr);
        assert.ok(result.stdout.length + result.stderr.length > 0);
        assertClean(name, result.stdout + result.stderr);
      });
    }
    await t.step("what was planted is shown, visibly", async () => {
      const shown = await runCli("show", [SID], world.vars);
      for (const visible of ["␛]52;c;ZXZpbA==\\x07", "␛[2J", "␛]0;pwned\\x07", "\\x9b31m"]) {
        assert.ok(shown.stdout.includes(visible), `"${visible}" is not shown`);
      }
      assert.ok(shown.stdout.includes("overwrite\\x0dX"));
      assert.ok(shown.stdout.includes("\\u202eevil\\u202c"));
      const hits = await runCli("search", ["quokka"], world.vars);
      assert.ok(hits.stdout.includes(`claude:evil␛]0;pwned\\x07\\x9b31m`));
    });
    await t.step("show --raw into a pipe stays byte-exact", async () => {
      const raw = await runCli("show", [SID, "--raw"], world.vars);
      assert.equal(raw.code, 0, raw.stderr);
      assert.ok(Buffer.from(raw.stdoutBytes).equals(readFileSync(world.file)));
    });
    // Last: it removes what the steps above read.
    await t.step("forget --yes (the lines that say what was forgotten)", async () => {
      const result = await runCli("forget", [SID, "evil", "--yes"], world.vars);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout + result.stderr, /forgot/);
      assertClean("forget --yes", result.stdout + result.stderr);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("--json output is exact JSON with the planted text, and no raw control in it", async () => {
  const world = await hostileWorld();
  try {
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    const page = await runCli("show", [SID, "--json"], world.vars);
    assertClean("show --json", page.stdout);
    const parsed = JSON.parse(page.stdout);
    assert.equal(parsed.conversation.cwd, world.cwd);
    const texts = parsed.records.map((r: { text: string }) => r.text);
    assert.ok(texts.includes(ASSISTANT_TEXT));
    assert.ok(texts.includes(`quokka output ${HOSTILE}`));

    const hits = await runCli("search", ["quokka", "--json"], world.vars);
    assertClean("search --json", hits.stdout);
    const parsedHits = hits.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.ok(parsedHits.some((h) => h.conversation === `claude:${EVIL_SID}`));
    assert.ok(parsedHits.every((h) => h.cwd === world.cwd));

    const status = await runCli("status", ["--json"], world.vars);
    assertClean("status --json", status.stdout);
    assert.ok(
      JSON.parse(status.stdout).drift.some((d: string) => d.includes(`surprise${PLANTED.title}`)),
    );
  } finally {
    await world.cleanup();
  }
});

Deno.test("with colour on a terminal, only logbook's own colour codes reach it", async (t) => {
  const world = await hostileWorld();
  try {
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const runs: [string, (io: ReturnType<typeof captureIo>) => Promise<number>][] = [
      ["search", (io) => search(["quokka"], io, world.env)],
      // Without the pager, so that what reaches the terminal is what the Io collects.
      ["show", (io) => show([SID, "--no-pager"], io, world.env)],
      ["show --raw", (io) => show([SID, "--raw"], io, world.env)],
      ["status", (io) => status([], io, world.env)],
      ["forget --dry-run", (io) => forget([SID, "--dry-run"], io, world.env)],
      ["reindex --status", (io) => reindex(["--status"], io, world.env)],
    ];
    for (const [name, run] of runs) {
      await t.step(name, async () => {
        const io = captureIo();
        io.color = true;
        io.outIsTerminal = true;
        assert.equal(await run(io), 0, io.stderr());
        assert.equal(io.bytes().length, 0, "raw bytes went to the terminal");
        assertClean(name, io.stdout() + io.stderr(), true);
        if (name === "show --raw") assert.ok(io.stdout().includes("␛]52;c;ZXZpbA==\\x07"));
        else if (name !== "reindex --status") {
          // deno-lint-ignore no-control-regex -- control characters are exactly what is looked for
          assert.match(io.stdout(), /\x1b\[[0-9;]*m/, "no colour at all: the test proves nothing");
        }
      });
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a key in the first prompt is redacted wherever the title is shown", async (t) => {
  const world = await hostileWorld();
  try {
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    const runs: [string, string, string[]][] = [
      ["show", "show", [SID]],
      ["show --json", "show", [SID, "--json"]],
      ["forget --dry-run", "forget", [SID, "--dry-run"]],
      ["forget --json", "forget", [SID, "--json", "--dry-run"]],
      ["fork", "fork", [SID]],
    ];
    for (const [name, file, args] of runs) {
      await t.step(name, async () => {
        const result = await runCli(file, args, world.vars);
        assert.equal(result.code, 0, result.stderr);
        const all = result.stdout + result.stderr;
        assert.ok(!all.includes("AKIA"), `${name} shows the key:\n${all}`);
        assert.match(all, /set AWS_ACCESS_KEY_ID=\[REDACTED:aws-access-key-id\] and deploy/);
      });
    }
    await t.step("show --json's conversation.title", async () => {
      const page = JSON.parse((await runCli("show", [SID, "--json"], world.vars)).stdout);
      assert.match(
        page.conversation.title,
        /^set AWS_ACCESS_KEY_ID=\[REDACTED:aws-access-key-id\]/,
      );
    });
    await t.step("forget --json's titles", async () => {
      const result = JSON.parse(
        (await runCli("forget", [SID, "--json", "--dry-run"], world.vars)).stdout,
      );
      assert.match(result.conversations[0].title, /\[REDACTED:aws-access-key-id\]/);
    });
  } finally {
    await world.cleanup();
  }
});
