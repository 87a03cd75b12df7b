// `start`, the README's first command, without its dashboard (`--no-dashboard`): capture what this
// machine has and say how to search it, or run the demo when there is nothing; the demo captures
// the fixtures and searches them. The dashboard it serves is tested in start_dashboard_test.ts.

import { agentSpec, OTHER_AGENTS } from "../../lib/agents.ts";
import { oneOf } from "../../lib/format.ts";
import assert from "node:assert/strict";
import { main as start, spec } from "../../commands/start.ts";
import { helpText } from "../../commands/_command.ts";
import { join } from "node:path";
import {
  captureIo,
  childBaseEnv,
  makeWorld,
  removeDir,
  ROOT,
  runCli,
  taskFlags,
} from "../_helpers.ts";
import { writeClaudeCorpus } from "../_corpus.ts";
import { eventually } from "../_wait.ts";

/** The demo's temporary data dir and home, as it prints them. */
function demoDirs(stdout: string): [string, string] {
  const match = /The demo store is (\S+) \([^)]*\); it and (\S+) are removed when this command/
    .exec(stdout);
  assert.ok(match, stdout);
  return [match[1]!, match[2]!];
}

Deno.test("start with no agent histories says so and runs the demo instead", async () => {
  const world = await makeWorld();
  const io = captureIo();
  try {
    assert.equal(await start(["--no-dashboard"], io, world.env), 0, io.stderr());
    const names = oneOf(OTHER_AGENTS.map((agent) => agentSpec(agent).display));
    assert.ok(io.stdout().includes(`No ${names} histories were found`), io.stdout());
    assert.match(io.stdout(), /Running the demo on logbook's bundled sample transcripts instead/);
    assert.match(io.stdout(), /A sample search for "marmot keyring":/);
    for (const dir of demoDirs(io.stdout())) {
      assert.equal(await Deno.stat(dir).catch(() => null), null, `${dir} removed on exit`);
    }
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
    assert.match(
      io.stdout(),
      /^The store \(\S+ \S+\) holds 29 conversations, 8 of them subagents:$/m,
    );
    assert.match(io.stdout(), /^ {2}claude +29$/m);
    assert.match(io.stdout(), /deno task search "words you remember"/);
    assert.doesNotMatch(io.stdout(), /logbook dashboard:/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("start says how to search the way it was run: logbook search, or deno task search", async (t) => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await t.step("the installed logbook start", async () => {
      // Outside deno task, nothing sets INIT_CWD.
      const { INIT_CWD: _, ...vars } = world.vars;
      const result = await runCli("logbook", ["start", "--no-dashboard"], vars);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^ {2}logbook search "words you remember"$/m);
      assert.doesNotMatch(result.stdout, /deno task/);
    });
    await t.step("deno task logbook start", async () => {
      const result = await runCli("logbook", ["start", "--no-dashboard"], world.vars);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^ {2}deno task logbook search "words you remember"$/m);
    });
    await t.step("deno task start", async () => {
      const result = await runCli("start", ["--no-dashboard"], world.vars);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^ {2}deno task search "words you remember"$/m);
    });
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
    assert.doesNotMatch(result.stdout, /LOGBOOK_DATA_DIR=/, "no command for a store that is gone");
    for (const gone of [dir, home]) {
      assert.equal(await Deno.stat(gone).catch(() => null), null, `${gone} removed on exit`);
    }
    assert.equal(
      await Deno.stat(world.data).catch(() => null),
      null,
      "the user's data dir is untouched",
    );
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

Deno.test("start on a terminal draws reindex's progress bar while it captures", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    // A terminal on stderr is what turns the bar on; the Io says so.
    const io = { ...captureIo(), errIsTerminal: true };
    assert.equal(await start(["--no-dashboard"], io, world.env), 0, io.stderr());
    assert.match(
      io.stderr(),
      // deno-lint-ignore no-control-regex
      /\r\[[#.]{24}\] \d+% \d+\/\d+ sources \S+ \S+\/\S+ \S+ .* left\x1b\[K/,
    );
    assert.match(io.stdout(), /Captured \d+ new records/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("start stopped while it captures says to run it again, and running it again finishes", async (t) => {
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 220, lines: 160 });
    await t.step("Ctrl-C (SIGINT) in a real process", async () => {
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", ...await taskFlags("start"), "--quiet", join(ROOT, "commands", "start.ts")],
        env: { ...childBaseEnv(), ...world.vars },
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      // The capture lock is taken once the signal handlers are in place.
      const lock = join(world.data, "run", "capture.lock");
      await eventually("the capture to start", () => lockHolder(lock));
      child.kill("SIGINT");
      const output = await child.output();
      const stdout = new TextDecoder().decode(output.stdout);
      const stderr = new TextDecoder().decode(output.stderr);
      assert.equal(output.code, 0, stderr);
      assert.equal(stderr, "Capture stopped; run again to finish\n");
      assert.doesNotMatch(stdout, /logbook dashboard:|Search them/, "it stops there");
    });
    await t.step("a stop signal given to main", async () => {
      const io = captureIo();
      const stopped = await start(["--no-dashboard"], io, world.env, AbortSignal.abort());
      assert.equal(stopped, 0, io.stderr());
      assert.equal(io.stderr(), "Capture stopped; run again to finish\n");
    });
    await t.step("run again, it finishes", async () => {
      const io = captureIo();
      assert.equal(await start(["--no-dashboard"], io, world.env), 0, io.stderr());
      assert.match(io.stdout(), /\(220 new conversations\)|^ {2}claude +220$/m);
      assert.match(io.stdout(), /Search them:/);
    });
  } finally {
    await world.cleanup();
  }
});

function lockHolder(path: string): number | null {
  try {
    const pid = JSON.parse(Deno.readTextFileSync(path)).pid;
    return typeof pid === "number" ? pid : null;
  } catch {
    return null;
  }
}
