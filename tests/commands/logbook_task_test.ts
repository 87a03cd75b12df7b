// `deno task logbook <command>` can run every command: its permissions cover each command's own
// task, and chat (the network) and dashboard (a loopback server) really run under it.

import assert from "node:assert/strict";
import { join } from "node:path";
import { COMMANDS } from "../../commands/logbook.ts";
import { withModelWorld } from "../_openai_server.ts";
import { childBaseEnv, makeWorld, ROOT, taskFlags } from "../_helpers.ts";

/** Whether the flags `granted` allow what the flag `needed` asks for. */
function covers(granted: string[], needed: string): boolean {
  const [name, scope] = needed.split("=");
  return granted.some((flag) => {
    const [grantedName, grantedScope] = flag.split("=");
    return grantedName === name && (grantedScope === undefined || grantedScope === scope);
  });
}

Deno.test("the logbook task grants every permission each command's own task has", async () => {
  const granted = await taskFlags("logbook");
  for (const name of Object.keys(COMMANDS)) {
    for (const needed of await taskFlags(name)) {
      assert.ok(covers(granted, needed), `logbook task lacks ${needed}, which ${name} needs`);
    }
  }
});

Deno.test("deno task logbook chat -p answers through the endpoint", async () => {
  await withModelWorld(async (s) => {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "--config", join(ROOT, "deno.json"), "logbook", "chat", "-p", "hi"],
      env: { ...childBaseEnv(), NO_COLOR: "1", ...s.vars },
      clearEnv: true,
      stdin: "null",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, stderr);
    assert.equal(new TextDecoder().decode(output.stdout), "Echo: hi\n");
  });
});

Deno.test("logbook dashboard serves under the logbook task's permissions", async () => {
  const world = await makeWorld();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...await taskFlags("logbook"),
      "--quiet",
      join(ROOT, "commands", "logbook.ts"),
      "dashboard",
      "--port",
      "0",
    ],
    env: { ...childBaseEnv(), NO_COLOR: "1", ...world.vars },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let printed = "";
    let url: RegExpExecArray | null = null;
    while (!(url = /^logbook dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/m.exec(printed))) {
      const { value, done } = await reader.read();
      if (done) {
        assert.fail(`dashboard ended before printing its URL:\n${printed}\n${await stderr}`);
      }
      printed += value;
    }
    const response = await fetch(url[1]!);
    await response.body?.cancel();
    assert.equal(response.status, 401, "it answers, and asks for its token");
  } finally {
    child.kill("SIGTERM");
    await reader.cancel().catch(() => {});
    await child.status;
    await stderr.catch(() => "");
    await world.cleanup();
  }
});
