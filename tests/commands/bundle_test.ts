// `search`, `show`, `usage` and `status` start from a bundle (`deno task bundle`) only while it is
// theirs: built from
// the sources as they are now. These tests build real bundles of a copy of the toolkit, run its
// entries as a user does, and tell which code ran by a sentence changed in the sources alone.

import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join } from "node:path";
import {
  buildBundles,
  BUNDLED,
  bundlesFresh,
  eagerFunctions,
  inCycles,
  lazyImports,
  permissions,
  relocatedUrls,
} from "../../commands/_bundle.ts";
import { type BundleManifest, freshBundle, loadBody, MANIFEST } from "../../commands/_launch.ts";
import { main as reindex } from "../../commands/reindex.ts";
import { permissionFlags } from "../../lib/run_flags.ts";
import {
  captureIo,
  makeWorld,
  removeDir,
  ROOT,
  runCli,
  type RunResult,
  tempDir,
} from "../_helpers.ts";

/** A copy of what the bundled commands are built from, in a temp dir. */
async function toolkitCopy(): Promise<string> {
  const dir = await tempDir("logbook-bundle-");
  for (const part of ["commands", "lib", "deno.json", "deno.lock"]) {
    cpSync(join(ROOT, part), join(dir, part), { recursive: true });
  }
  return dir;
}

/** Runs the copy's `commands/<name>.ts` as its task does; `sources` sets LOGBOOK_SOURCES. */
function runIn(
  root: string,
  name: string,
  args: string[],
  vars: Record<string, string>,
  sources: boolean,
): Promise<RunResult> {
  return runCli(name, args, { ...vars, LOGBOOK_SOURCES: sources ? "1" : "" }, root);
}

/** Runs the copy's `deno task bundle` script with `args`: its exit code and all it printed. */
async function runBuilder(root: string, args: string[]): Promise<{ code: number; output: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissionFlags(permissions), join(root, "commands", "_bundle.ts"), ...args],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: output.code, output: text.decode(output.stdout) + text.decode(output.stderr) };
}

/** Rewrites `from` to `to` (as long) in a file, keeping its size and modification time. */
function editUnseen(path: string, from: string, to: string): void {
  assert.equal(from.length, to.length);
  const before = Deno.statSync(path);
  const text = Deno.readTextFileSync(path);
  assert.ok(text.includes(from), `${path} says "${from}"`);
  Deno.writeTextFileSync(path, text.replace(from, to));
  Deno.utimeSync(path, before.atime!, before.mtime!);
}

const SUMMARY = "find records across every captured conversation";
const EDITED = "FIND RECORDS across every captured conversation";

Deno.test("search, show, usage and status run their bundle while its sources are unchanged, and the sources after an edit", async () => {
  const root = await toolkitCopy();
  try {
    const manifest = await buildBundles(root);
    for (const name of BUNDLED) {
      const inputs = manifest.commands[name]!.inputs.map(([path]) => path);
      for (const path of [`commands/_body/${name}.ts`, "lib/store/db.ts", "deno.json"]) {
        assert.ok(inputs.includes(path), `${name}'s inputs hold ${path}`);
      }
      // The interactive screen is a dynamic import: a change to it must count too.
      if (name === "search") assert.ok(inputs.includes("commands/_terminal/search_screen.ts"));
      assert.equal(freshBundle(name, `${root}/`), `file://${root}/dist/bundle/${name}.js`);
    }
    // No file of the build names a module Deno would read at start without running it.
    for (const entry of Deno.readDirSync(join(root, "dist", "bundle"))) {
      if (!entry.name.endsWith(".js")) continue;
      const text = Deno.readTextFileSync(join(root, "dist", "bundle", entry.name));
      assert.equal(lazyImports(text), text, `${entry.name} imports lazily`);
    }

    // The sources now say something else, with the size and time the build recorded.
    const body = join(root, "commands", "_body", "search.ts");
    editUnseen(body, SUMMARY, EDITED);
    const bundled = await runIn(root, "search", ["--help"], {}, false);
    assert.equal(bundled.code, 0, bundled.stderr);
    assert.match(bundled.stdout, new RegExp(SUMMARY), "the bundle ran");
    const forced = await runIn(root, "search", ["--help"], {}, true);
    assert.match(forced.stdout, new RegExp(EDITED), "LOGBOOK_SOURCES=1 runs the sources");

    // An edit as an editor makes it (a new modification time): the bundle is no longer theirs.
    const later = new Date(Deno.statSync(body).mtime!.getTime() + 2000);
    Deno.utimeSync(body, later, later);
    assert.equal(freshBundle("search", `${root}/`), null);
    const edited = await runIn(root, "search", ["--help"], {}, false);
    assert.match(edited.stdout, new RegExp(EDITED), "the sources ran");
    // show's inputs did not change: it still starts from its bundle.
    assert.notEqual(freshBundle("show", `${root}/`), null);

    // What `deno task start` runs first: nothing while every bundle is fresh, a build otherwise.
    assert.equal(bundlesFresh(root), false);
    const ifStale = () => runBuilder(root, ["--if-stale", "--quiet"]);
    assert.deepEqual(await ifStale(), { code: 0, output: "" });
    assert.equal(bundlesFresh(root), true);
    const manifestPath = join(root, "dist", "bundle", MANIFEST);
    const built = Deno.statSync(manifestPath).mtime!.getTime();
    assert.deepEqual(await ifStale(), { code: 0, output: "" });
    assert.equal(Deno.statSync(manifestPath).mtime!.getTime(), built, "not built again");
    const rebuilt = await runIn(root, "search", ["--help"], {}, false);
    assert.match(rebuilt.stdout, new RegExp(EDITED), "the new bundle holds the edit");
  } finally {
    await removeDir(root);
  }
});

Deno.test("a build through a linked checkout records the same inputs", async () => {
  const root = await toolkitCopy();
  const link = `${root}-link`;
  try {
    Deno.symlinkSync(root, link);
    const direct = await buildBundles(root);
    const linked = await buildBundles(link);
    const paths = (m: BundleManifest) => m.commands.search!.inputs.map(([path]) => path);
    assert.ok(paths(direct).length > 40, `${paths(direct).length} inputs`);
    assert.deepEqual(paths(linked), paths(direct));
    assert.notEqual(freshBundle("search", `${link}/`), null);
  } finally {
    await Deno.remove(link);
    await removeDir(root);
  }
});

Deno.test("a bundled search, show, usage and status print what their sources print", async () => {
  const root = await toolkitCopy();
  const world = await makeWorld({ fixtures: ["claude", "codex"] });
  try {
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    await buildBundles(root);
    const first = await runIn(
      root,
      "search",
      ["migration", "--all-projects", "--json"],
      world.vars,
      true,
    );
    assert.equal(first.code, 0, first.stderr);
    const id = JSON.parse(first.stdout.split("\n")[0]!).conversation as string;
    // Each run and the exit it must have: hits, none, a usage error, a page, an export, a miss.
    const runs: [string, string[], number][] = [
      ["search", ["migration", "--all-projects"], 0],
      ["search", ["migration", "--all-projects", "--json", "--group"], 0],
      ["search", ["zzzqqqnothing", "--all-projects"], 1],
      ["search", ["--sort", "sideways", "x"], 2],
      ["show", [id, "--no-pager"], 0],
      ["show", [id, "--json", "--limit", "5"], 0],
      ["show", [id, "--format", "md"], 0],
      ["show", ["claude:no-such-conversation"], 1],
      ["usage", ["--tz", "UTC"], 0],
      ["usage", ["session", "--tz", "UTC", "--json", "--breakdown"], 0],
      ["usage", ["--model", "nothing-like-it"], 1],
      ["status", ["--help"], 0],
      ["status", ["--json", "--no-such-flag"], 2],
    ];
    for (const [name, args, code] of runs) {
      const what = `${name} ${args.join(" ")}`;
      const sources = await runIn(root, name, args, world.vars, true);
      const bundled = await runIn(root, name, args, world.vars, false);
      assert.equal(sources.code, code, `${what}: ${sources.stderr}`);
      assert.equal(bundled.code, code, `${what}: ${bundled.stderr}`);
      assert.equal(bundled.stdout, sources.stdout, what);
      assert.equal(bundled.stderr, sources.stderr, what);
    }
    // The same status, but for how long ago each thing it dates happened.
    const statusOf = async (sources: boolean) => {
      const run = await runIn(root, "status", ["--json"], world.vars, sources);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /"ageMs":\d+/);
      return JSON.parse(run.stdout, (key, value) => key === "ageMs" ? undefined : value);
    };
    assert.deepEqual(await statusOf(false), await statusOf(true));
    // The store's check runs in a worker whose module the bundle names from its own folder.
    const checked = await runIn(root, "status", ["--check", "--json"], world.vars, false);
    assert.equal(checked.code, 0, checked.stderr);
    assert.equal(JSON.parse(checked.stdout).check.ok, true);
  } finally {
    await world.cleanup();
    await removeDir(root);
  }
});

Deno.test("a bundle that is missing, malformed, unfinished or broken leaves the sources to run", async () => {
  const root = await tempDir("logbook-launch-");
  const previous = Deno.env.get("LOGBOOK_SOURCES");
  Deno.env.delete("LOGBOOK_SOURCES");
  try {
    const dist = join(root, "dist", "bundle");
    Deno.mkdirSync(join(root, "commands", "_body"), { recursive: true });
    Deno.mkdirSync(dist, { recursive: true });
    const source = join(root, "commands", "_body", "probe.ts");
    Deno.writeTextFileSync(source, 'export const from = "sources";\n');
    const entry = `file://${root}/commands/probe.ts`;
    const write = (manifest: unknown) =>
      Deno.writeTextFileSync(join(dist, MANIFEST), JSON.stringify(manifest));
    const stamp = (): BundleManifest => {
      const info = Deno.statSync(source);
      return {
        version: 1,
        commands: {
          probe: {
            file: "probe.js",
            inputs: [["commands/_body/probe.ts", info.size, info.mtime!.getTime()]],
          },
        },
      };
    };
    const loaded = async () => (await loadBody<{ from: string }>("probe", entry)).from;

    assert.equal(await loaded(), "sources", "no bundle at all");
    Deno.writeTextFileSync(join(dist, "probe.js"), 'export const from = "bundle";\n');
    assert.equal(await loaded(), "sources", "a bundle without its manifest");
    Deno.writeTextFileSync(join(dist, MANIFEST), '{"version": 1, "commands": {');
    assert.equal(await loaded(), "sources", "a manifest cut short");
    write({ ...stamp(), version: 2 });
    assert.equal(await loaded(), "sources", "a manifest of another version");
    write({ version: 1, commands: { probe: { file: "probe.js", inputs: [] } } });
    assert.equal(await loaded(), "sources", "a manifest that lists no inputs");
    write(stamp());
    assert.equal(await loaded(), "bundle", "a fresh bundle");

    const fresh = stamp();
    fresh.commands.probe!.inputs.push(["lib/gone.ts", 10, 0]);
    write(fresh);
    assert.equal(await loaded(), "sources", "an input that is gone");

    const bigger = stamp();
    bigger.commands.probe!.inputs[0]![1] += 1;
    write(bigger);
    assert.equal(await loaded(), "sources", "an input of another size");

    // A bundle that throws as it loads: the sources run, and say what is wrong if anything is.
    Deno.writeTextFileSync(join(dist, "broken.js"), 'throw new Error("half a bundle");\n');
    write({ version: 1, commands: { probe: { ...stamp().commands.probe!, file: "broken.js" } } });
    assert.equal(await loaded(), "sources", "a bundle that does not load");
  } finally {
    if (previous !== undefined) Deno.env.set("LOGBOOK_SOURCES", previous);
    await removeDir(root);
  }
});

Deno.test("eagerFunctions makes top-level functions compile with their module and run as before", async () => {
  const source = [
    'import { join } from "node:path";',
    "export const early = twice(21);",
    "function twice(n) { return n * 2; }",
    "async function later() { return join('a', 'b'); }",
    "function* count() { yield 1; yield 2; }",
    "if (true) { function inner() { return 'block'; } }",
    "export const { name } = twice;",
    "export { later, count };",
    "export function exported() { return typeof twice; }",
    "",
  ].join("\n");
  const eager = eagerFunctions(source);
  for (const name of ["twice", "later", "count"]) {
    assert.match(eager, new RegExp(`var ${name}=\\(`));
  }
  // A function in a block is not the module's, and an exported one stays a declaration.
  assert.match(eager, /\{ function inner\(\)/);
  assert.match(eager, /export function exported\(\)/);
  const dir = await tempDir("logbook-eager-");
  try {
    const path = join(dir, "module.js");
    Deno.writeTextFileSync(path, eager);
    const module = await import(`file://${path}`);
    assert.equal(module.early, 42, "called before where its declaration stood");
    assert.equal(module.name, "twice");
    assert.equal(await module.later(), join("a", "b"));
    assert.deepEqual([...module.count()], [1, 2]);
    assert.equal(module.exported(), "function");
  } finally {
    await removeDir(dir);
  }
});

Deno.test("lazyImports names dynamic imports by an expression, and they load as before", async () => {
  const source = [
    'export const said = "import(\\"./quoted.js\\")";',
    "export const later = () => import('./later.js');",
    'export const chosen = (name) => import("./" + name);',
    "",
  ].join("\n");
  const lazy = lazyImports(source);
  assert.match(lazy, /import\(String\('\.\/later\.js'\)\)/);
  assert.match(lazy, /"import\(\\"\.\/quoted\.js\\"\)"/, "a string that says it is left");
  assert.match(lazy, /import\("\.\/" \+ name\)/, "an expression is left");
  assert.equal(lazyImports(lazy), lazy);
  const dir = await tempDir("logbook-lazy-");
  try {
    Deno.writeTextFileSync(join(dir, "module.js"), lazy);
    Deno.writeTextFileSync(join(dir, "later.js"), "export const value = 42;\n");
    const module = await import(`file://${join(dir, "module.js")}`);
    assert.equal((await module.later()).value, 42);
    assert.equal((await module.chosen("later.js")).value, 42);
  } finally {
    await removeDir(dir);
  }
});

Deno.test("relocatedUrls points a module-relative URL from the bundle's folder", () => {
  const source = [
    'const worker = new URL("./_check_worker.ts", import.meta.url);',
    'const other = new URL("./_check_worker.ts", "file:///elsewhere/");',
    'const site = new URL("https://example.com/");',
    "",
  ].join("\n");
  const seen: string[] = [];
  const moved = relocatedUrls(source, (url) => {
    seen.push(url);
    return "../../lib/store/_check_worker.ts";
  });
  assert.deepEqual(seen, ["./_check_worker.ts"]);
  assert.match(moved, /new URL\("\.\.\/\.\.\/lib\/store\/_check_worker\.ts", import\.meta\.url\)/);
  assert.match(moved, /new URL\("\.\/_check_worker\.ts", "file:\/\/\/elsewhere\/"\)/);
  assert.match(moved, /new URL\("https:\/\/example\.com\/"\)/);
});

Deno.test("inCycles names the files on an import cycle and no other", () => {
  const graph = new Map([
    ["entry.js", ["a.js", "shared.js"]],
    ["a.js", ["b.js"]],
    ["b.js", ["a.js", "shared.js"]],
    ["shared.js", []],
    ["self.js", ["self.js"]],
  ]);
  assert.deepEqual([...inCycles(graph)].sort(), ["a.js", "b.js", "self.js"]);
});
