// `start`, the README's first command: capture what this machine has and say how to search it,
// or offer the demo when there is nothing; the demo captures the fixtures and searches them.

import assert from "node:assert/strict";
import { main as start } from "../../commands/start.ts";
import { captureIo, makeWorld, runCli } from "../_helpers.ts";

Deno.test("start with no agent histories says so and offers the demo", async () => {
  const world = await makeWorld();
  try {
    const io = captureIo();
    assert.equal(await start([], io, world.env), 0);
    assert.match(io.stdout(), /No Claude Code, Codex or OpenCode histories were found/);
    assert.match(io.stdout(), /deno task start --demo/);
    assert.equal(await Deno.stat(world.data).catch(() => null), null, "nothing written");
  } finally {
    await world.cleanup();
  }
});

Deno.test("start captures the machine's histories and shows how to search them", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    const io = captureIo();
    assert.equal(await start([], io, world.env), 0, io.stderr());
    assert.match(io.stdout(), /Captured \d+ new records \(16 new conversations\)/);
    assert.match(io.stdout(), /^ {2}claude +16$/m);
    assert.match(io.stdout(), /deno task search "words you remember"/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("start --demo captures the fixtures into a temp data dir and runs a sample search", async () => {
  const world = await makeWorld();
  try {
    const result = await runCli("start", ["--demo"], world.vars);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /A sample search for "marmot keyring":/);
    assert.match(result.stdout, /claude:f332cca8-0b9a-4244-835f-c44f31385301 message\/assistant/);
    const dir = /The demo store is (\S+) /.exec(result.stdout)?.[1];
    assert.ok(dir && dir !== world.data);
    assert.ok(Deno.statSync(`${dir}/history.db`).isFile);
    assert.equal(
      await Deno.stat(world.data).catch(() => null),
      null,
      "the user's data dir is untouched",
    );
    await Deno.remove(dir, { recursive: true });
  } finally {
    await world.cleanup();
  }
});
