// The bench runs a command as its task does: the task's variables and flags, read from the
// deno.json of the checkout it runs (an older one may set no variables).

import assert from "node:assert/strict";
import { join } from "node:path";
import { commandEnv } from "../../bench/_measure.ts";
import { RUN_ENV } from "../../lib/run_flags.ts";
import { taskEnv, taskFlags } from "../command_env.ts";
import { removeDir, tempDir } from "../_helpers.ts";

Deno.test("the bench runs a command with the variables its task sets, a figure's own over them", () => {
  for (const command of ["reindex", "start", "logbook"]) {
    const env = Object.entries(taskEnv(command)).map(([name, value]) => `${name}=${value}`);
    assert.equal(env.join(" "), RUN_ENV, command);
  }
  const [name, value] = Object.entries(taskEnv("reindex"))[0]!;
  assert.equal(commandEnv({})[name], value);
  assert.equal(
    commandEnv({ [name]: "glibc.malloc.arena_max=1" })[name],
    "glibc.malloc.arena_max=1",
  );
});

Deno.test("a checkout's task gives its own variables and flags, none where it sets none", async () => {
  const root = await tempDir();
  try {
    const tasks = {
      reindex: "deno run --v8-flags=--expose-gc -R -W commands/reindex.ts",
      start: "deno run --quiet -R commands/_bundle.ts --if-stale; " +
        "A=1 B=x=y deno run --quiet -R -E commands/start.ts",
    };
    await Deno.writeTextFile(join(root, "deno.json"), JSON.stringify({ tasks }));
    assert.deepEqual(taskFlags("reindex", root), ["--v8-flags=--expose-gc", "-R", "-W"]);
    assert.deepEqual(taskEnv("reindex", root), {});
    assert.deepEqual(taskFlags("start", root), ["--quiet", "-R", "-E"]);
    assert.deepEqual(taskEnv("start", root), { A: "1", B: "x=y" });
    assert.throws(() => taskFlags("status", root), /No "deno run … commands\/" task for "status"/);
  } finally {
    await removeDir(root);
  }
});
