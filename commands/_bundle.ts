// `deno task bundle`: builds `search`, `show`, `usage` and `status` into dist/bundle/ (one minified
// file each, with their shared code split out and the dynamic imports kept lazy), and records what
// each was built from, so commands/_launch.ts runs a bundle only while its sources are unchanged.
// npm packages stay outside (Deno resolves them from deno.json as it does for the sources). Run it
// again after an edit or a pull; until then the commands run from their sources, as fast as before.
//
// Deno keeps V8's code cache of a module as compiled before it ran: a function V8 compiled lazily,
// on its first call, is compiled again in every process (about 8 ms of a search). V8 compiles a
// function at once when its `function` follows a `(`, so each file's top-level functions are made
// `var f = (function f() {…})` at its start, where a declaration would have been hoisted to. There
// are no source maps: the moved code would not match them (names are kept; LOGBOOK_SOURCES=1 runs
// the sources for a full stack).

import { type AnyNode, type Literal, parse, type Program } from "acorn";
import { fileURLToPath } from "node:url";
import {
  BUNDLE_DIR,
  type BundleInput,
  type BundleManifest,
  freshBundle,
  MANIFEST,
} from "./_launch.ts";
import { dirname, join, relative } from "../lib/path.ts";
import { canStat } from "../lib/present.ts";
import type { Permissions } from "../lib/run_flags.ts";

/** What `deno task bundle` may do: read the sources, write dist/bundle/, run `deno bundle`. */
export const permissions: Permissions = { read: true, write: true, run: true };

/** The commands that start from a bundle. */
export const BUNDLED = ["search", "show", "usage", "status"] as const;

/** The toolkit's root, where deno.json is. */
const ROOT = fileURLToPath(new URL("../", import.meta.url));

/**
 * npm packages built into the bundle rather than left for Deno to resolve: those on the start-up
 * path, which as an npm import would cost a start more than the bundle saves (about 30 ms here).
 */
const INLINED = ["get-east-asian-width"];

/** Files outside a body's module graph that still change what it does when run. */
const CONFIG_FILES = ["deno.json", "deno.lock"];

/**
 * Builds every bundle under `root` into `root/dir` and returns the manifest it wrote. The inputs
 * are stat'ed before the build and again after it: a file edited meanwhile fails the build rather
 * than record a bundle its sources no longer match. The new folder replaces the old whole.
 */
export async function buildBundles(root = ROOT, dir = BUNDLE_DIR): Promise<BundleManifest> {
  const before = new Map<string, BundleInput[]>();
  for (const name of BUNDLED) before.set(name, await inputsOf(root, name));

  const out = join(root, dir);
  const parent = join(out, "..");
  Deno.mkdirSync(parent, { recursive: true });
  const building = Deno.makeTempDirSync({ dir: parent, prefix: ".bundle-" });
  try {
    await deno(root, [
      "bundle",
      "--quiet",
      "--platform=deno",
      "--code-splitting",
      "--minify",
      "--keep-names",
      ...externals(root).map((name) => `--external=${name}`),
      `--outdir=${building}`,
      ...BUNDLED.map((name) => join("commands", "_body", `${name}.ts`)),
    ]);
    compileEagerly(building, relocator(root, dir, [...before.values()].flat()));
    const manifest: BundleManifest = { version: 1, commands: {} };
    for (const name of BUNDLED) {
      const inputs = before.get(name)!;
      const changed = inputs.find((input) => !sameInput(root, input));
      if (changed) throw new Error(`${changed[0]} changed while bundling: run it again`);
      const file = `${name}.js`;
      Deno.statSync(join(building, file));
      manifest.commands[name] = { file, inputs };
    }
    Deno.writeTextFileSync(join(building, MANIFEST), JSON.stringify(manifest) + "\n");
    replaceDir(building, out);
    return manifest;
  } catch (err) {
    Deno.removeSync(building, { recursive: true });
    throw err;
  }
}

/**
 * Rewrites each bundle file in `dir` with `eagerFunctions`, except the files in an import cycle:
 * there a module may call another's function before that module has run, which only a hoisted
 * declaration allows; then every file with `lazyImports` and `relocatedUrls`.
 */
function compileEagerly(dir: string, relocate: (url: string) => string): void {
  const files = new Map<string, { source: string; program: Program; imports: string[] }>();
  for (const entry of Deno.readDirSync(dir)) {
    if (!entry.isFile || !entry.name.endsWith(".js")) continue;
    const source = Deno.readTextFileSync(join(dir, entry.name));
    const program = parseModule(source);
    files.set(entry.name, { source, program, imports: staticImports(program) });
  }
  const cyclic = inCycles(new Map([...files].map(([name, file]) => [name, file.imports])));
  for (const [name, file] of files) {
    const eager = cyclic.has(name) ? file.source : eagerFunctions(file.source, file.program);
    Deno.writeTextFileSync(join(dir, name), relocatedUrls(lazyImports(eager), relocate));
  }
}

/** A string literal of the bundle, where it stands. */
type StringLiteral = Literal & { value: string };

/** Every node of `source`'s tree that `pick` gives a string literal of, in source order. */
function literalsWhere(source: string, pick: (node: AnyNode) => unknown): StringLiteral[] {
  const found: StringLiteral[] = [];
  const visit = (node: unknown): void => {
    if (node === null || typeof node !== "object") return;
    if (Array.isArray(node)) return node.forEach(visit);
    const literal = pick(node as AnyNode) as Literal | undefined;
    if (literal?.type === "Literal" && typeof literal.value === "string") {
      found.push(literal as StringLiteral);
    }
    for (const value of Object.values(node)) visit(value);
  };
  visit(parseModule(source));
  return found.sort((a, b) => a.start - b.start);
}

/** `source` with each of `literals` replaced by what `replace` makes of it. */
function replaceLiterals(
  source: string,
  literals: StringLiteral[],
  replace: (literal: StringLiteral) => string,
): string {
  let out = "";
  let at = 0;
  for (const literal of literals) {
    out += source.slice(at, literal.start) + replace(literal);
    at = literal.end;
  }
  return out + source.slice(at);
}

/**
 * `source` with each `import("…")` of a string made `import(String("…"))`. Deno reads every
 * module a dynamic import names with a string before the program starts, as part of its module
 * graph, and resolves the npm packages among them: a search started by reading every lazy chunk
 * and two packages (`postgres`, `stemmer`) that only `--team`, the full-screen search, an agent's
 * transcript format or a forgiving search load. Named by an expression, each is read when the
 * import runs (the commands that are bundled may read any file: `-R`).
 *
 * @example
 * lazyImports('import("./team.js")') // 'import(String("./team.js"))'
 */
export function lazyImports(source: string): string {
  const literals = literalsWhere(
    source,
    (node) => node.type === "ImportExpression" ? node.source : undefined,
  );
  return replaceLiterals(source, literals, (literal) => `String(${literal.raw})`);
}

/**
 * `source` with each `new URL("./…", import.meta.url)` (a worker's module) made to name the file
 * it named from its source module: `relocate` gives the path from the bundle's folder.
 */
export function relocatedUrls(source: string, relocate: (url: string) => string): string {
  const literals = literalsWhere(source, (node) => {
    if (node.type !== "NewExpression" || node.callee.type !== "Identifier") return undefined;
    const [url, base] = node.arguments;
    const meta = base?.type === "MemberExpression" && base.object.type === "MetaProperty" &&
      base.property.type === "Identifier" && base.property.name === "url";
    return node.callee.name === "URL" && meta ? url : undefined;
  });
  return replaceLiterals(source, literals, (literal) => JSON.stringify(relocate(literal.value)));
}

/**
 * What `relocatedUrls` needs for bundles built into `dir` (from the root) from `inputs`: the
 * source that says `new URL("<url>", import.meta.url)` names a file beside it, and the bundle
 * names the same file from its own folder. A URL no input says, or that two say of different
 * files, fails the build.
 */
function relocator(root: string, dir: string, inputs: BundleInput[]): (url: string) => string {
  const sources = [...new Set(inputs.map(([path]) => path))].filter((path) => path.endsWith(".ts"))
    .map((path) => ({ path, text: Deno.readTextFileSync(join(root, path)) }));
  return (url) => {
    const said = new RegExp(
      `new URL\\(\\s*"${RegExp.escape(url)}"\\s*,\\s*import\\.meta\\.url\\s*\\)`,
    );
    const named = new Set(
      sources.filter(({ text }) => said.test(text)).map(({ path }) => join(dirname(path), url)),
    );
    if (named.size !== 1) {
      throw new Error(
        `new URL("${url}", import.meta.url) names ${named.size} files: cannot bundle`,
      );
    }
    return relative(dir, [...named][0]!);
  };
}

function parseModule(source: string): Program {
  return parse(source, { ecmaVersion: "latest", sourceType: "module" });
}

/**
 * `source` (an ES module, parsed as `program`) with its top-level function declarations moved to
 * its start as parenthesized function expressions, which V8 compiles with the module and so keeps
 * in the code cache. Each is in place before any other statement runs, as a hoisted declaration
 * would be; a module that imports is evaluated after what it imports, so nothing sees one early.
 *
 * @example
 * eagerFunctions("f();\nfunction f() {}\n") // "var f=(function f() {});f();\n\n"
 */
export function eagerFunctions(source: string, program = parseModule(source)): string {
  let rest = "";
  let at = 0;
  const moved: string[] = [];
  for (const node of program.body) {
    if (node.type !== "FunctionDeclaration") continue;
    rest += source.slice(at, node.start);
    at = node.end;
    moved.push(`var ${node.id.name}=(${source.slice(node.start, node.end)});`);
  }
  return moved.join("") + rest + source.slice(at);
}

/** The relative files a module imports statically (`import … from "./x.js"`, `export … from`). */
function staticImports(program: Program): string[] {
  const found: string[] = [];
  for (const node of program.body) {
    if (
      (node.type === "ImportDeclaration" || node.type === "ExportNamedDeclaration" ||
        node.type === "ExportAllDeclaration") &&
      typeof node.source?.value === "string" &&
      node.source.value.startsWith("./")
    ) {
      found.push(node.source.value.slice(2));
    }
  }
  return found;
}

/** The files of `graph` (file → the files it imports) that are on an import cycle. */
export function inCycles(graph: Map<string, string[]>): Set<string> {
  const onCycle = new Set<string>();
  for (const start of graph.keys()) {
    // `start` is on a cycle when it can reach itself.
    const seen = new Set<string>();
    const stack = [...graph.get(start) ?? []];
    while (stack.length) {
      const next = stack.pop()!;
      if (next === start) {
        onCycle.add(start);
        break;
      }
      if (seen.has(next)) continue;
      seen.add(next);
      stack.push(...graph.get(next) ?? []);
    }
  }
  return onCycle;
}

/** Every local file in command `name`'s module graph, and the config files, as they are now. */
async function inputsOf(root: string, name: string): Promise<BundleInput[]> {
  const body = `commands/_body/${name}.ts`;
  const info = JSON.parse(await deno(root, ["info", "--json", body])) as {
    modules: { specifier: string }[];
  };
  // Deno names modules by their real path, which a linked checkout's root is not.
  const roots = [root, Deno.realPathSync(root)].map((dir) =>
    new URL(`file://${dir.endsWith("/") ? dir : `${dir}/`}`).href
  );
  const paths: string[] = [];
  for (const { specifier } of info.modules) {
    if (!specifier.startsWith("file:")) continue;
    const under = roots.find((url) => specifier.startsWith(url));
    // A change there would not be seen: no bundle rather than one that may be stale.
    if (!under) throw new Error(`${specifier} is outside the toolkit: ${name} cannot be bundled`);
    paths.push(decodeURIComponent(specifier.slice(under.length)));
  }
  if (!paths.includes(body)) throw new Error(`deno info did not list ${body}`);
  paths.push(...CONFIG_FILES.filter((file) => canStat(join(root, file))));
  return [...new Set(paths)].sort().map((path) => {
    const info = Deno.statSync(join(root, path));
    return [path, info.size, info.mtime!.getTime()];
  });
}

/** The import map's names (deno.json `imports`), which the bundle leaves for Deno to resolve. */
function externals(root: string): string[] {
  const config = JSON.parse(Deno.readTextFileSync(join(root, "deno.json"))) as {
    imports?: Record<string, string>;
  };
  const names = Object.keys(config.imports ?? {}).filter((name) => !INLINED.includes(name))
    .map((name) => name.endsWith("/") ? `${name}*` : name);
  return [...names, "npm:*", "jsr:*"];
}

function sameInput(root: string, [path, size, mtimeMs]: BundleInput): boolean {
  try {
    const info = Deno.statSync(join(root, path));
    return info.size === size && info.mtime?.getTime() === mtimeMs;
  } catch {
    return false;
  }
}

/**
 * Puts `fresh` where `out` is. A command that starts between the two renames finds no manifest
 * and runs from its sources.
 */
function replaceDir(fresh: string, out: string): void {
  const old = `${fresh}.old`;
  let moved = false;
  try {
    Deno.renameSync(out, old);
    moved = true;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  Deno.renameSync(fresh, out);
  if (moved) Deno.removeSync(old, { recursive: true });
}

/** Runs `deno <args>` in `root`; its stdout, or an error with its stderr. */
async function deno(root: string, args: string[]): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  if (!output.success) {
    throw new Error(`deno ${args[0]} failed: ${text.decode(output.stderr).trim()}`);
  }
  return text.decode(output.stdout);
}

/** True when every bundled command's bundle under `root` is fresh (see `freshBundle`). */
export function bundlesFresh(root = ROOT): boolean {
  const base = root.endsWith("/") ? root : `${root}/`;
  return BUNDLED.every((name) => freshBundle(name, base) !== null);
}

/**
 * `deno task bundle [--if-stale] [--quiet]`: builds the bundles (with `--if-stale`, only when one
 * is not fresh). `--quiet` prints nothing, not even a failure: `deno task start` runs it first,
 * and a command without its bundle still runs, from its sources.
 */
async function main(args: string[]): Promise<number> {
  const quiet = args.includes("--quiet");
  if (args.includes("--if-stale") && bundlesFresh()) return 0;
  try {
    const manifest = await buildBundles();
    const bundled = Object.keys(manifest.commands);
    const names = bundled.length < 2
      ? bundled.join("")
      : `${bundled.slice(0, -1).join(", ")} and ${bundled.at(-1)}`;
    if (!quiet) {
      console.log(
        `bundled ${names} into ${BUNDLE_DIR}: they start from it until their sources change`,
      );
    }
    return 0;
  } catch (err) {
    if (!quiet) console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
