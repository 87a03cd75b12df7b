// `deno task compile` builds standalone executables. Building needs Deno's `denort` runtime,
// downloaded on first use; where that download cannot happen the test is skipped, saying why.

import assert from "node:assert/strict";
import { join } from "node:path";
import { childBaseEnv, makeWorld, ROOT, tempDir } from "../_helpers.ts";

async function compile(out: string): Promise<{ ok: boolean; stderr: string }> {
  const result = await new Deno.Command(Deno.execPath(), {
    // search, show, usage and status load their bodies by a computed specifier: the compile task
    // includes them.
    args: [
      "compile",
      "-R",
      "-W",
      "-E",
      "--quiet",
      ...["search", "show", "usage", "status"].flatMap((
        name,
      ) => ["--include", join(ROOT, "commands", "_body", `${name}.ts`)]),
      "-o",
      out,
      join(ROOT, "commands", "logbook.ts"),
    ],
    env: { ...childBaseEnv(), NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { ok: result.success, stderr: new TextDecoder().decode(result.stderr) };
}

const probeDir = await tempDir("logbook-compile-");
const probe = await compile(join(probeDir, "logbook"));
const lines = probe.stderr.split("\n").map((l) => l.trim()).filter(Boolean);
const reason = probe.ok
  ? ""
  : (lines.find((l) => /dns|lookup|download|denort|network/i.test(l)) ?? lines[0] ?? "failed");

Deno.test({
  name: probe.ok
    ? "the compiled logbook binary runs a command"
    : `the compiled logbook binary runs a command (skipped: deno compile cannot fetch its runtime here: ${
      reason.slice(0, 120)
    })`,
  ignore: !probe.ok,
  fn: async () => {
    const world = await makeWorld({ fixtures: ["claude"] });
    try {
      const binary = join(probeDir, "logbook");
      const run = (args: string[]) =>
        new Deno.Command(binary, {
          args,
          env: world.vars,
          clearEnv: true,
          stdout: "piped",
          stderr: "piped",
        })
          .output();
      const help = await run(["search", "--help"]);
      assert.equal(help.code, 0);
      assert.match(new TextDecoder().decode(help.stdout), /^Usage: logbook search/m);
      assert.equal((await run(["reindex", "--quiet"])).code, 0);
      const found = await run(["search", "marmot keyring", "--json"]);
      assert.equal(found.code, 0);
    } finally {
      await world.cleanup();
    }
  },
});

addEventListener("unload", () => Deno.removeSync(probeDir, { recursive: true }));

Deno.test("the compile task includes the bodies search, show, usage and status load by a computed specifier", () => {
  // deno compile embeds what it can see imported; commands/_launch.ts builds the body's URL.
  const task = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).tasks.compile as string;
  const builds = task.split("&&").map((part) => part.trim());
  const needs: Record<string, string[]> = {
    "commands/search.ts": ["search"],
    "commands/show.ts": ["show"],
    "commands/usage.ts": ["usage"],
    "commands/status.ts": ["status"],
    "commands/logbook.ts": ["search", "show", "usage", "status"],
  };
  for (const [entry, bodies] of Object.entries(needs)) {
    const build = builds.find((part) => part.endsWith(` ${entry}`));
    assert.ok(build, `the compile task builds ${entry}`);
    for (const body of bodies) {
      assert.ok(build.includes(`--include commands/_body/${body}.ts`), `${entry} embeds ${body}`);
    }
  }
});
