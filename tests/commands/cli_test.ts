// Every command as a subprocess: `--help` prints usage and exits 0, an unknown flag is a usage
// error (exit 2, `error:` on stderr), and the `logbook` dispatcher reaches each command.

import { oneOf } from "../../lib/format.ts";
import { AGENTS } from "../../lib/agents.ts";
import assert from "node:assert/strict";
import { COMMANDS } from "../../commands/logbook.ts";
import { displayWidth } from "../../commands/_terminal/wrap.ts";
import { captureIo, makeWorld, runCli } from "../_helpers.ts";

const FILES = Object.keys(COMMANDS).map((name) => name.replaceAll("-", "_"));

Deno.test("every command's --help exits 0 with usage, options and an example", async (t) => {
  const world = await makeWorld();
  try {
    for (const file of FILES) {
      await t.step(file, async () => {
        const result = await runCli(file, ["--help"], world.vars);
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stdout, /^Usage: logbook /m);
        assert.match(result.stdout, /^Options:$/m);
        assert.match(result.stdout, /^Examples?:$/m);
        assert.equal(result.stderr, "");
      });
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("every command rejects an unknown flag with exit 2 and error: on stderr", async (t) => {
  const world = await makeWorld();
  try {
    for (const file of FILES) {
      await t.step(file, async () => {
        const result = await runCli(file, ["--no-such-flag"], world.vars);
        assert.equal(result.code, 2);
        assert.match(result.stderr, /^error: .*--no-such-flag/);
        assert.match(result.stderr, /--help/);
      });
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("every numeric option refuses what is not a whole number in range with exit 2", async (t) => {
  const world = await makeWorld();
  try {
    const cases: [string, string[], string][] = [
      ["stage_markers", ["--tail", "999999999999999999999"], "tail"],
      ["stage_markers", ["--tail", "9007199254740992"], "tail"],
      ["search", ["x", "--limit", "99999999999999999999"], "limit"],
      ["search", ["x", "--limit", "1e3"], "limit"],
      ["show", ["x", "--limit", "99999999999999999999"], "limit"],
      ["show", ["x", "--after", "1e3"], "after"],
      ["reindex", ["--max-seconds", "99999999999999999999"], "max-seconds"],
      ["dashboard", ["--port", "0x50"], "port"],
    ];
    for (const [file, args, option] of cases) {
      await t.step(`${file} ${args.join(" ")}`, async () => {
        const result = await runCli(file, args, world.vars);
        assert.equal(result.code, 2, result.stderr);
        assert.match(result.stderr, new RegExp(`^error: Option "--${option}" expects `));
        assert.ok(result.stderr.includes(`got "${args.at(-1)}"`), result.stderr);
        assert.match(result.stderr, /--help/);
      });
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("the logbook dispatcher runs commands and reports unknown ones", async () => {
  const world = await makeWorld();
  try {
    const help = await runCli("logbook", ["--help"], world.vars);
    assert.equal(help.code, 0);
    for (const name of Object.keys(COMMANDS)) {
      assert.match(help.stdout, new RegExp(`^  ${name} `, "m"));
    }
    const viaDispatcher = await runCli("logbook", ["search", "--help"], world.vars);
    assert.equal(viaDispatcher.code, 0);
    assert.match(viaDispatcher.stdout, /^Usage: logbook search/m);
    const unknown = await runCli("logbook", ["frobnicate"], world.vars);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^error: Unknown command "frobnicate"/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("logbook --help lists each command with the summary its own spec gives", async () => {
  const world = await makeWorld();
  try {
    const help = await runCli("logbook", ["--help"], world.vars);
    assert.equal(help.code, 0, help.stderr);
    const listed = new Map(
      // A summary too long for 80 columns goes on under itself.
      help.stdout.replace(/\n {6,}/g, " ").split("\n").filter((line) => /^ {2}[a-z]/.test(line))
        .map((line) => {
          const [, name, summary] = /^ {2}(\S+) +(.*)$/.exec(line)!;
          return [name!, summary!];
        }),
    );
    for (const [name, load] of Object.entries(COMMANDS)) {
      assert.equal(listed.get(name), (await load()).spec.summary, name);
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("every help screen fits 80 columns", async () => {
  const { main: logbook } = await import("../../commands/logbook.ts");
  for (const name of [undefined, ...Object.keys(COMMANDS), "completions"]) {
    const io = captureIo();
    const args = name === undefined ? ["--help"] : [name, "--help"];
    assert.equal(await logbook(args, io), 0, io.stderr());
    for (const line of io.stdout().split("\n")) {
      // Columns, not bytes: "status — …" is 79 columns and 81 bytes (the dash is 3 in UTF-8).
      const columns = displayWidth(line);
      assert.ok(columns <= 80, `${name ?? "logbook"}: ${columns} columns: ${line}`);
    }
  }
});

Deno.test("logbook help <command> shows its help; a mistyped command gets a guess", async () => {
  const world = await makeWorld();
  try {
    const help = await runCli("logbook", ["help", "forget"], world.vars);
    assert.equal(help.code, 0, help.stderr);
    const direct = await runCli("logbook", ["forget", "--help"], world.vars);
    assert.equal(help.stdout, direct.stdout);
    const typo = await runCli("logbook", ["serch", "x"], world.vars);
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /^error: Unknown command "serch": did you mean "search"\?\n/);
    const helpTypo = await runCli("logbook", ["help", "stauts"], world.vars);
    assert.equal(helpTypo.code, 2);
    assert.match(helpTypo.stderr, /did you mean "status"\?/);
    const option = await runCli("logbook", ["search", "x", "--lmit", "3"], world.vars);
    assert.equal(option.code, 2);
    assert.equal(
      option.stderr,
      'error: Unknown option "--lmit": did you mean "--limit"?\n' +
        'Run "logbook search --help" for usage.\n',
    );
    const agent = await runCli("logbook", ["search", "x", "--agent", "claud"], world.vars);
    assert.equal(agent.code, 2);
    assert.match(
      agent.stderr,
      new RegExp(`^error: Option "--agent" expects ${oneOf(AGENTS)}, got "claud"\n`),
    );
  } finally {
    await world.cleanup();
  }
});
