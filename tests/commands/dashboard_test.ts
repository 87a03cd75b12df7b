// `dashboard` as a user runs it (a real subprocess): `--help`, and the options it refuses with a
// usage error before serving anything.

import assert from "node:assert/strict";
import { helpText } from "../../commands/_command.ts";
import { spec } from "../../commands/dashboard.ts";
import { makeWorld, runCli } from "../_helpers.ts";

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
