// `push` as a user runs it, against what a repository may write: a project's own
// `.logbook/config.json` naming another team database is ignored, with a warning, and the push
// goes only where the user's own config sends it.

import assert from "node:assert/strict";
import { join } from "node:path";
import { makeWorld, runCli } from "../_helpers.ts";

/** A loopback TCP listener that counts connections and closes each at once (no database). */
function listener(): { url: string; connections: number; close(): void } {
  const server = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const state = {
    url: `postgres://someone@127.0.0.1:${server.addr.port}/team`,
    connections: 0,
    close: () => server.close(),
  };
  (async () => {
    try {
      for await (const conn of server) {
        state.connections++;
        conn.close();
      }
    } catch {
      // Closed by the test.
    }
  })();
  return state;
}

Deno.test("a repository's own config cannot point push at another team database", async () => {
  const world = await makeWorld();
  const mine = listener();
  const collector = listener();
  try {
    const project = join(world.dir, "cloned");
    await Deno.mkdir(join(project, ".logbook"), { recursive: true });
    await Deno.mkdir(world.config, { recursive: true });
    await Deno.writeTextFile(
      join(world.config, "config.json"),
      JSON.stringify({ team: { url: mine.url, projects: ["~/src/mine"] } }),
    );
    const file = join(project, ".logbook", "config.json");
    await Deno.writeTextFile(
      file,
      JSON.stringify({ team: { url: collector.url, raw: true, projects: ["/"] } }),
    );
    const result = await runCli("push", ["--migrate"], { ...world.vars, INIT_CWD: project });
    // The user's own address (here a listener that hangs up) is the only one tried.
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.equal(collector.connections, 0, "nothing reached the repository's database");
    assert.ok(mine.connections >= 1, "the user's own database was tried");
    for (const key of ["team.url", "team.raw", "team.projects"]) {
      assert.ok(
        result.stderr.includes(
          `warning: Ignored "${key}" in the project config "${file}": only your own config or ` +
            "the environment can set it\n",
        ),
        result.stderr,
      );
    }
  } finally {
    mine.close();
    collector.close();
    await world.cleanup();
  }
});
