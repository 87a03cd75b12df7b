// `deno task bundle`: builds `search` and `show` into dist/bundle/ (one minified file each, with
// their shared code split out and the dynamic imports kept lazy), and records what each was built
// from, so commands/_launch.ts runs a bundle only while its sources are unchanged. npm packages
// stay outside (Deno resolves them from deno.json as it does for the sources). Run it again after
// an edit or a pull; until then the commands run from their sources, as fast as before.

import { fileURLToPath } from "node:url";
import { BUNDLE_DIR, type BundleInput, type BundleManifest, MANIFEST } from "./_launch.ts";
import { join } from "../lib/path.ts";

/** The commands that start from a bundle. */
export const BUNDLED = ["search", "show"] as const;

/** The toolkit's root, where deno.json is. */
const ROOT = fileURLToPath(new URL("../", import.meta.url));

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
      "--sourcemap=linked",
      ...externals(root).map((name) => `--external=${name}`),
      `--outdir=${building}`,
      ...BUNDLED.map((name) => join("commands", "_body", `${name}.ts`)),
    ]);
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

/** Every local file in command `name`'s module graph, and the config files, as they are now. */
async function inputsOf(root: string, name: string): Promise<BundleInput[]> {
  const info = JSON.parse(
    await deno(root, ["info", "--json", join("commands", "_body", `${name}.ts`)]),
  ) as { modules: { specifier: string }[] };
  const rootUrl = new URL(`file://${root.endsWith("/") ? root : `${root}/`}`).href;
  const paths = info.modules
    .map((m) => m.specifier)
    .filter((s) => s.startsWith(rootUrl))
    .map((s) => decodeURIComponent(s.slice(rootUrl.length)));
  paths.push(...CONFIG_FILES.filter((file) => exists(join(root, file))));
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
  const names = Object.keys(config.imports ?? {}).map((name) =>
    name.endsWith("/") ? `${name}*` : name
  );
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

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
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

if (import.meta.main) {
  try {
    const manifest = await buildBundles();
    const names = Object.keys(manifest.commands).join(" and ");
    console.log(
      `bundled ${names} into ${BUNDLE_DIR}: they start from it until their sources change`,
    );
  } catch (err) {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    Deno.exit(1);
  }
}
