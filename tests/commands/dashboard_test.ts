// `dashboard` as a user runs it (a real subprocess): `--help`, the options it refuses with a
// usage error before serving anything, and Ctrl-C as `deno task` delivers it.

import assert from "node:assert/strict";
import { join } from "node:path";
import { helpText } from "../../commands/_command.ts";
import { spec } from "../../commands/dashboard.ts";
import { childBaseEnv, makeWorld, ROOT, runCli, taskFlags } from "../_helpers.ts";
import { ctrlCTwice } from "./_ctrl_c_twice.ts";
import { otherUserRunner } from "../_other_user.ts";

const otherUser = await otherUserRunner();
if ("cleanup" in otherUser) addEventListener("unload", otherUser.cleanup);

Deno.test("dashboard --help, and bad options are usage errors with exit 2", async (t) => {
  const world = await makeWorld();
  try {
    await t.step("--help", async () => {
      const result = await runCli("dashboard", ["--help"], world.vars);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, helpText(spec));
    });
    await t.step("a non-loopback --host without --allow-remote", async () => {
      const result = await runCli("dashboard", ["--host", "0.0.0.0", "--port", "0"], world.vars);
      assert.equal(result.code, 2);
      assert.equal(result.stdout, "");
      assert.match(result.stderr, /^error: Refusing to listen on "0\.0\.0\.0".*--allow-remote/);
      assert.match(result.stderr, /Run "logbook dashboard --help" for usage/);
    });
    await t.step("a bad --port", async () => {
      const result = await runCli("dashboard", ["--port", "http"], world.vars);
      assert.equal(result.code, 2);
      assert.match(result.stderr, /^error: Option "--port" expects a port number/);
    });
    await t.step("an unknown option", async () => {
      const result = await runCli("dashboard", ["--public"], world.vars);
      assert.equal(result.code, 2);
      assert.match(result.stderr, /^error: .*--public/);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("Ctrl-C, which deno task delivers twice, stops the dashboard cleanly", async () => {
  const world = await makeWorld();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...await taskFlags("dashboard"),
      "--quiet",
      join(ROOT, "commands", "dashboard.ts"),
    ],
    env: { ...childBaseEnv(), ...world.vars, LOGBOOK_DASHBOARD_TOKEN: "t".repeat(32) },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let stopped = false;
  try {
    let printed = "";
    let port: RegExpExecArray | null = null;
    while (!(port = /^logbook dashboard: http:\/\/127\.0\.0\.1:(\d+)\//m.exec(printed))) {
      const { value, done } = await lines.read();
      if (done) assert.fail(`dashboard ended before printing its URL: ${await stderr}`);
      printed += value;
    }
    await ctrlCTwice(child.pid, Number(port[1]), "t".repeat(32));
    stopped = true;
    const status = await child.status;
    assert.equal(status.code, 0, `${status.signal ?? ""} ${await stderr}`);
    assert.match(await stderr, /Dashboard stopped\n$/);
    assert.doesNotMatch(await stderr, /error/i, "a request cut short by the shutdown is no error");
  } finally {
    if (!stopped) child.kill("SIGKILL");
    await lines.cancel().catch(() => {});
    await child.status;
    await stderr.catch(() => "");
    await world.cleanup();
  }
});

Deno.test("an address the dashboard cannot bind says why: in use, not allowed by Deno, privileged", async (t) => {
  const world = await makeWorld();
  try {
    await t.step("a port in use", async () => {
      const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const port = (taken.addr as Deno.NetAddr).port;
      try {
        const result = await runCli("dashboard", ["--port", String(port)], world.vars);
        assert.equal(result.code, 1);
        assert.equal(
          result.stderr,
          `error: Cannot listen on 127.0.0.1:${port}: the port is in use (choose another with --port)\n`,
        );
      } finally {
        taken.close();
      }
    });
    await t.step("Deno not allowed to listen", async () => {
      const flags = (await taskFlags("dashboard")).filter((f) => !f.startsWith("--allow-net"));
      const output = await new Deno.Command(Deno.execPath(), {
        args: ["run", ...flags, "--no-prompt", "--quiet", join(ROOT, "commands", "dashboard.ts")],
        env: { ...childBaseEnv(), ...world.vars },
        clearEnv: true,
        stdin: "null",
      }).output();
      assert.equal(output.code, 1);
      assert.equal(
        new TextDecoder().decode(output.stderr),
        'error: Cannot listen on "127.0.0.1": Deno was not allowed to (run it with --allow-net=127.0.0.1)\n',
      );
    });
    await t.step({
      name: "a privileged port, for a user who may not use it" +
        ("missing" in otherUser ? ` (skipped: ${otherUser.missing})` : ""),
      ignore: "missing" in otherUser,
      fn: async () => {
        if (!("run" in otherUser)) return;
        await Deno.chown(world.dir, 65534, 65534);
        const result = await otherUser.run("dashboard", ["--port", "80"], {
          ...world.vars,
          LOGBOOK_DATA_DIR: join(world.dir, "data-of-another"),
        });
        assert.equal(result.code, 1);
        assert.equal(
          result.stderr,
          "error: Cannot listen on 127.0.0.1:80: this user may not use the port (below 1024 " +
            "only privileged users may); choose another with --port\n",
        );
      },
    });
  } finally {
    await world.cleanup();
  }
});
