// lib/sessions/ stands without a terminal: a turn runs in a process with no stdin and prints
// nothing, and no module of the folder loads terminal code or touches the process's streams.

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadContext } from "../../../lib/context.ts";
import { projectOf } from "../../../lib/paths.ts";
import { SessionStore } from "../../../lib/sessions/records.ts";
import { childBaseEnv, ROOT, taskFlags } from "../../_helpers.ts";
import { withModelWorld } from "../../_openai_server.ts";

const SESSIONS = join(ROOT, "lib", "sessions");

Deno.test("a turn runs with no terminal: nothing printed, the record and its trail on disk", async () => {
  await withModelWorld(async ({ world, server, vars, project }) => {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...await taskFlags("chat"),
        "--quiet",
        fileURLToPath(new URL("./_one_turn.ts", import.meta.url)),
        "Explain the cache",
      ],
      env: { ...childBaseEnv(), ...vars },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    assert.equal(decoder.decode(output.stderr), "");
    assert.equal(decoder.decode(output.stdout), "");
    assert.equal(output.code, 0);
    assert.equal(server.requests.length, 1);

    const ctx = loadContext({ env: world.env });
    const store = new SessionStore(ctx.paths);
    const { sessions, corrupt } = store.list(projectOf(project).key);
    assert.deepEqual(corrupt, []);
    assert.equal(sessions.length, 1);
    const record = sessions[0]!;
    assert.deepEqual(record.messages.map((m) => [m.role, m.content]), [
      ["user", "Explain the cache"],
      ["assistant", "Echo: Explain the cache"],
    ]);
    const trail = new TextDecoder().decode(store.readTrail(record)).trimEnd().split("\n");
    assert.deepEqual(trail.map((line) => JSON.parse(line).event), ["turn"]);
    // The prompt history is kept by the chat loop (commands/_terminal/chat_loop.ts), not by a turn.
    assert.throws(() => Deno.statSync(ctx.paths.promptHistory), Deno.errors.NotFound);
  });
});

Deno.test("no module of lib/sessions/ loads terminal code or uses the process's streams", async (t) => {
  const files = [...Deno.readDirSync(SESSIONS)]
    .filter((e) => e.isFile && e.name.endsWith(".ts"))
    .map((e) => join(SESSIONS, e.name))
    .sort();
  assert.ok(files.length > 0);
  for (const file of files) {
    await t.step(file.slice(ROOT.length), async () => {
      const source = Deno.readTextFileSync(file);
      assert.doesNotMatch(
        source,
        /Deno\.(stdin|stdout|stderr|exit|isatty|consoleSize|addSignalListener)\b|console\./,
      );
      const info = await new Deno.Command(Deno.execPath(), {
        args: ["info", "--json", file],
        cwd: ROOT,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(info.code, 0, new TextDecoder().decode(info.stderr));
      const graph = JSON.parse(new TextDecoder().decode(info.stdout)) as {
        modules: { specifier: string }[];
      };
      const loaded = graph.modules.map((m) => m.specifier);
      assert.deepEqual(
        loaded.filter((s) => s.includes("/commands/") || s.startsWith("npm:/@inquirer/")),
        [],
      );
    });
  }
});
