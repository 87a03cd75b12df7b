// A data dir that cannot be used, as each command meets it (a real subprocess): a file where the
// folder should be, another user's folder, a parent or a folder this user may not write, one it
// may not read. Every command says so in one sentence naming the path and what to do, never a
// raw "os error", and the dashboard never blames the network for it. The cases that need a user
// other than root are skipped, saying why, where the machine cannot switch users.

import assert from "node:assert/strict";
import { join } from "node:path";
import { makeWorld, runCli, type World } from "../_helpers.ts";
import { OTHER_GID, OTHER_UID, otherUserRunner, type Runner } from "../_other_user.ts";

/** Each command that touches the data dir, with arguments that make it do so and then stop. */
const COMMANDS: { file: string; args: string[]; writes: boolean }[] = [
  { file: "reindex", args: [], writes: true },
  { file: "start", args: ["--no-dashboard"], writes: true },
  { file: "dashboard", args: ["--port", "0"], writes: true },
  { file: "status", args: [], writes: false },
  { file: "search", args: ["anything"], writes: false },
];

const ELSEWHERE = "or set LOGBOOK_DATA_DIR to a folder of your own";

const otherUser = await otherUserRunner();
if ("cleanup" in otherUser) addEventListener("unload", otherUser.cleanup);
const notAsOtherUser = "missing" in otherUser ? otherUser.missing : undefined;

function named(name: string): string {
  return notAsOtherUser === undefined ? name : `${name} (skipped: ${notAsOtherUser})`;
}

/** Runs each of `commands` and checks it exits 1 with exactly `error` on stderr. */
async function assertSays(
  run: Runner,
  world: World,
  commands: typeof COMMANDS,
  error: string,
): Promise<void> {
  for (const { file, args } of commands) {
    const result = await run(file, args, world.vars);
    assert.equal(result.code, 1, `${file}: ${result.stderr}`);
    assert.equal(result.stderr, `error: ${error}\n`, file);
    assert.doesNotMatch(result.stdout, /logbook dashboard:/, file);
  }
}

/** Gives `path` (not what is in it) to the other user. */
function giveAway(path: string): void {
  Deno.chownSync(path, OTHER_UID, OTHER_GID);
}

Deno.test("a file where the data dir or a folder above it should be: every command names it", async (t) => {
  // Histories to capture, or start would run its demo in a data dir of its own.
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await Deno.writeTextFile(world.data, "not a folder\n");
    await t.step("the data dir is a file", async () => {
      await assertSays(
        runCli,
        world,
        COMMANDS,
        `Cannot use the data dir "${world.data}": it is a file where a folder should be; ` +
          `move it away, ${ELSEWHERE}`,
      );
    });
    await t.step("a folder above it is a file", async () => {
      const data = join(world.data, "logbook");
      world.vars.LOGBOOK_DATA_DIR = data;
      await assertSays(
        runCli,
        world,
        COMMANDS,
        `Cannot use the data dir "${data}": "${world.data}" is a file where a folder should ` +
          `be; move it away, ${ELSEWHERE}`,
      );
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: named("another user's data dir: commands that write say whose it is, not the network"),
  ignore: notAsOtherUser !== undefined,
  async fn() {
    const { run } = otherUser as { run: Runner };
    const world = await makeWorld({ fixtures: ["claude"] });
    try {
      giveAway(world.dir);
      for (const dir of [world.home, world.claude, world.codex, world.xdgData]) giveAway(dir);
      // The data dir stays root's, open to all to read, as a colleague's or a restored one is.
      await Deno.mkdir(world.data, { mode: 0o755 });
      await Deno.chmod(world.data, 0o755);
      await assertSays(
        run,
        world,
        COMMANDS.filter((c) => c.writes),
        `Cannot use the data dir "${world.data}": it belongs to another user, so it cannot be ` +
          `made owner-only; run logbook as its owner, ${ELSEWHERE}`,
      );
      // Closed to others, it cannot even be read.
      await Deno.chmod(world.data, 0o700);
      await Deno.writeTextFile(join(world.data, "history.db"), "");
      await assertSays(
        run,
        world,
        COMMANDS.filter((c) => !c.writes),
        `Cannot use the data dir "${world.data}": this user may not read it; run logbook as ` +
          `its owner, ${ELSEWHERE}`,
      );
    } finally {
      await world.cleanup();
    }
  },
});

Deno.test({
  name: named("a data dir that cannot be created or written: commands that write say where"),
  ignore: notAsOtherUser !== undefined,
  async fn(t) {
    const { run } = otherUser as { run: Runner };
    const world = await makeWorld({ fixtures: ["claude"] });
    try {
      for (const dir of [world.home, world.claude, world.codex, world.xdgData]) giveAway(dir);
      await t.step("its parent is read-only to this user", async () => {
        // world.dir stays root's: the other user may enter it but not create the data dir in it.
        await Deno.chmod(world.dir, 0o755);
        await assertSays(
          run,
          world,
          COMMANDS.filter((c) => c.writes),
          `Cannot use the data dir "${world.data}": this user may not write in "${world.dir}"; ` +
            `make it writable for you, ${ELSEWHERE}`,
        );
      });
      await t.step("it is the user's own, made read-only", async () => {
        await Deno.mkdir(world.data, { mode: 0o500 });
        await Deno.chmod(world.data, 0o500);
        giveAway(world.data);
        await assertSays(
          run,
          world,
          COMMANDS.filter((c) => c.writes),
          `Cannot use the data dir "${world.data}": this user may not write in it; make it ` +
            `writable for you, ${ELSEWHERE}`,
        );
      });
    } finally {
      await world.cleanup();
    }
  },
});
