// `search` and `show` start fast: nothing on their start-up path (the static imports from the
// command file down) loads node:fs, node:zlib, node:crypto, node:util, node:path, node:buffer or
// an npm package such as zod, each of which costs a start 6 to 25 ms (node:path and node:buffer
// share one Node set-up of ~9 ms; lib/path.ts stands in for node:path), save the one package
// measured not to. They are loaded on first use where a command needs them. Stored chunks are
// decoded by lib/store/zstd_decode.ts until native zstd would pay.

import assert from "node:assert/strict";
import { join } from "node:path";
import { captureWorld, childBaseEnv, makeWorld, ROOT, taskFlags, withStore } from "../_helpers.ts";

/**
 * Modules that cost start-up and that a reading command must not load before it needs them: the
 * Node set-ups, npm packages, and the store's whole-file check (`status --check` alone runs it).
 */
const HEAVY = /^(node:(fs|zlib|crypto|util|path|buffer)(\/|$)|npm:)|\/lib\/store\/check\.ts$/;

/**
 * The npm packages allowed on the start-up path, each measured (docs/design.md): the terminal's
 * column widths (get-east-asian-width), which the bundle holds (commands/_bundle.ts `INLINED`).
 */
const ALLOWED = /^npm:\/?get-east-asian-width@/;

interface InfoDependency {
  specifier: string;
  code?: { specifier: string };
  isDynamic?: boolean;
}
interface InfoModule {
  specifier: string;
  dependencies?: InfoDependency[];
}

interface Info {
  roots: string[];
  modules: InfoModule[];
  redirects: Record<string, string>;
}

/** What `deno info --json` says of the entry point's module graph. */
async function infoOf(entry: string): Promise<Info> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  return JSON.parse(new TextDecoder().decode(output.stdout)) as Info;
}

/** Every module Deno loads with the entry point (its whole graph, type-only imports aside). */
async function graphOf(entry: string): Promise<string[]> {
  const info = await infoOf(entry);
  const modules = new Map(info.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const walk = (specifier: string) => {
    if (seen.has(specifier)) return;
    seen.add(specifier);
    for (const dep of modules.get(specifier)?.dependencies ?? []) {
      if (dep.code) walk(info.redirects[dep.code.specifier] ?? dep.code.specifier);
    }
  };
  walk(info.roots[0]!);
  return [...seen];
}

/** Every heavy module the entry point reaches by static imports, each with the chain to it. */
async function heavyOnStartUp(entry: string): Promise<string[]> {
  const info = await infoOf(entry);
  const modules = new Map(info.modules.map((m) => [m.specifier, m]));
  const found: string[] = [];
  const seen = new Set<string>();
  const walk = (specifier: string, chain: string[]) => {
    if (seen.has(specifier)) return;
    seen.add(specifier);
    for (const dep of modules.get(specifier)?.dependencies ?? []) {
      // Type-only imports have no `code`; a dynamic import() loads when it runs, not at start.
      if (!dep.code || dep.isDynamic) continue;
      const target = info.redirects[dep.code.specifier] ?? dep.code.specifier;
      const next = [...chain, target.replace(`file://${ROOT}`, "")];
      const heavy = HEAVY.test(dep.code.specifier) || HEAVY.test(target);
      if (heavy && !ALLOWED.test(target)) found.push(next.join(" → "));
      else walk(target, next);
    }
  };
  walk(info.roots[0]!, [entry]);
  assert.ok(seen.size > 10, `the graph of ${entry} was read (${seen.size} modules)`);
  return found;
}

for (const command of ["search", "show"]) {
  Deno.test(`${command}'s start-up path loads no node:fs, zlib, crypto, util, path, buffer, npm package or store check`, async () => {
    assert.deepEqual(await heavyOnStartUp(join("commands", "_body", `${command}.ts`)), []);
  });
}

for (const command of ["search", "show", "status"]) {
  Deno.test(`${command}'s entry reads no more than the launcher before it picks bundle or sources`, async () => {
    // A literal import of the body would make Deno read and hash its whole graph at every start,
    // the bundle's runs too: the entry holds only itself and commands/_launch.ts.
    const modules = await graphOf(join("commands", `${command}.ts`));
    assert.deepEqual(modules.map((m) => m.replace(`file://${ROOT}`, "")).sort(), [
      "commands/_launch.ts",
      `commands/${command}.ts`,
    ]);
  });
}

Deno.test("status's start-up path loads no zod or other npm package, no node:fs, zlib, crypto, util, path, buffer and no store check", async () => {
  // status answers from what the last capture kept: its cost is loading. The session records'
  // schemas (zod) load only when there are session records, the whole check only with --check.
  assert.deepEqual(await heavyOnStartUp(join("commands", "_body", "status.ts")), []);
});

Deno.test("search and show hash nothing and load no node built-in on their way to an answer", async () => {
  // What the static check above cannot see: a built-in loaded on first use (lib/node_builtins.ts)
  // while the command runs, such as node:crypto for a project key nobody reads.
  const world = await makeWorld({ fixtures: ["claude", "codex"] });
  try {
    await captureWorld(world);
    const key = withStore(
      world,
      (store) =>
        (store.db.prepare("SELECT key FROM conversations ORDER BY record_count DESC LIMIT 1")
          .get() as { key: string }).key,
    );
    for (const [command, args] of [["search", ["keyring"]], ["show", [key]]] as const) {
      const script = join(world.dir, `${command}.ts`);
      Deno.writeTextFileSync(
        script,
        `import { main } from ${JSON.stringify(join(ROOT, "commands", "_body", `${command}.ts`))};
import { loadedBuiltins } from ${JSON.stringify(join(ROOT, "lib", "node_builtins.ts"))};
const code = await main(${JSON.stringify(args)});
console.error(JSON.stringify({ code, loaded: loadedBuiltins() }));
`,
      );
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--config", join(ROOT, "deno.json"), ...await taskFlags(command), script],
        env: { ...childBaseEnv(), ...world.vars },
        clearEnv: true,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(out.stderr).trim().split("\n");
      const { code, loaded } = JSON.parse(stderr.at(-1)!);
      assert.equal(code, 0, stderr.join("\n"));
      assert.ok(new TextDecoder().decode(out.stdout).length > 0, `${command} printed its answer`);
      assert.deepEqual(loaded, [], `${command} loaded ${loaded.join(", ")}`);
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("the start-up check finds a heavy module where there is one", async () => {
  // reindex checks the whole store before a rebuild: its path holds the store check.
  const found = await heavyOnStartUp(join("commands", "reindex.ts"));
  assert.ok(found.some((chain) => chain.endsWith("lib/store/check.ts")), found.join("\n"));
  // The dashboard is built on hono and validates with zod, both npm packages.
  const dashboard = await heavyOnStartUp(join("commands", "dashboard.ts"));
  assert.ok(dashboard.some((chain) => /npm:.*zod/.test(chain)), dashboard.join("\n"));
});

Deno.test("every command task and shebang runs with the same V8 flags", () => {
  // V8 takes a module's code cache only from a run with the same flags: a cron reindex with other
  // flags would make the next search compile its modules afresh (about 20 ms).
  const tasks = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).tasks as Record<
    string,
    string
  >;
  const flagsOf = (line: string) => /--v8-flags=(\S+)/.exec(line)?.[1] ?? "(none)";
  const commands = Object.entries(tasks).filter(([, line]) => / commands\/\S+\.ts/.test(line));
  assert.ok(commands.length >= 15, `${commands.length} command tasks`);
  const wanted = flagsOf(tasks.reindex!);
  assert.notEqual(wanted, "(none)");
  for (const [name, line] of commands) {
    for (const part of line.split("&&")) assert.equal(flagsOf(part), wanted, `task ${name}`);
  }
  for (const entry of Deno.readDirSync(join(ROOT, "commands"))) {
    if (!entry.isFile || !entry.name.endsWith(".ts")) continue;
    const first = Deno.readTextFileSync(join(ROOT, "commands", entry.name)).split("\n")[0]!;
    if (first.startsWith("#!")) assert.equal(flagsOf(first), wanted, entry.name);
  }
});
