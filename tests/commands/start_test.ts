// `start`, the README's first command, without its dashboard (`--no-dashboard`): capture what this
// machine has and say how to search it, or run the demo when there is nothing; the demo captures
// the fixtures and searches them. The dashboard it serves is tested in start_dashboard_test.ts.

import assert from "node:assert/strict";
import { main as start, spec } from "../../commands/start.ts";
import { helpText } from "../../commands/_command.ts";
import { captureIo, makeWorld, removeDir, runCli } from "../_helpers.ts";

/** The demo's temporary data dir and home, as it prints them. */
function demoDirs(stdout: string): [string, string] {
  const match = /The demo store is (\S+) \([^)]*\); delete it and (\S+) when you are done/.exec(
    stdout,
  );
  assert.ok(match, stdout);
  return [match[1]!, match[2]!];
}

Deno.test("start with no agent histories says so and runs the demo instead", async () => {
  const world = await makeWorld();
  const io = captureIo();
  try {
    assert.equal(await start(["--no-dashboard"], io, world.env), 0, io.stderr());
    assert.match(io.stdout(), /No Claude Code, Codex or OpenCode histories were found/);
    assert.match(io.stdout(), /Running the demo on logbook's bundled sample transcripts instead/);
    assert.match(io.stdout(), /A sample search for "marmot keyring":/);
    const [dir] = demoDirs(io.stdout());
    assert.ok(Deno.statSync(`${dir}/history.db`).isFile);
    assert.equal(await Deno.stat(world.data).catch(() => null), null, "nothing written");
  } finally {
    if (/The demo store is/.test(io.stdout())) {
      for (const dir of demoDirs(io.stdout())) await removeDir(dir);
    }
    await world.cleanup();
  }
});

Deno.test("start captures the machine's histories and shows how to search them", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    const io = captureIo();
    assert.equal(await start(["--no-dashboard"], io, world.env), 0, io.stderr());
    assert.match(io.stdout(), /Captured \d+ new records \(29 new conversations\)/);
    assert.match(io.stdout(), /^ {2}claude +29$/m);
    assert.match(io.stdout(), /deno task search "words you remember"/);
    assert.doesNotMatch(io.stdout(), /logbook dashboard:/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("start --demo captures the fixtures into a temp data dir and runs a sample search", async () => {
  const world = await makeWorld();
  try {
    const result = await runCli("start", ["--demo", "--no-dashboard"], world.vars);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /A sample search for "marmot keyring":/);
    assert.match(result.stdout, /claude:f332cca8-0b9a-4244-835f-c44f31385301 message\/assistant/);
    const [dir, home] = demoDirs(result.stdout);
    assert.ok(dir !== world.data);
    assert.ok(Deno.statSync(`${dir}/history.db`).isFile);
    assert.equal(
      await Deno.stat(world.data).catch(() => null),
      null,
      "the user's data dir is untouched",
    );
    await removeDir(dir);
    await removeDir(home);
  } finally {
    await world.cleanup();
  }
});

Deno.test("start --help, and a bad --port is a usage error before any work", async (t) => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await t.step("--help", async () => {
      const result = await runCli("start", ["--help"], world.vars);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, helpText(spec));
    });
    await t.step("--port 70000", async () => {
      const result = await runCli("start", ["--port", "70000"], world.vars);
      assert.equal(result.code, 2);
      assert.match(result.stderr, /^error: Option "--port" expects a port number from 0 to 65535/);
      assert.equal(await Deno.stat(world.data).catch(() => null), null, "nothing captured");
    });
    await t.step("a LOGBOOK_DASHBOARD_TOKEN too short to be safe", async () => {
      const result = await runCli("start", ["--port", "0"], {
        ...world.vars,
        LOGBOOK_DASHBOARD_TOKEN: "short",
      });
      assert.equal(result.code, 1);
      assert.match(result.stderr, /^error: LOGBOOK_DASHBOARD_TOKEN is too short/);
      assert.equal(await Deno.stat(world.data).catch(() => null), null, "nothing captured");
    });
  } finally {
    await world.cleanup();
  }
});
