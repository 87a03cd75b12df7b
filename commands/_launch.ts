// How `search`, `show`, `usage` and `status` start: from one bundled file built from their sources
// when that build is still theirs, else from the sources. Loading search's 48 modules costs about
// 25 ms of a 60 ms search; the bundle (`deno task bundle`, in dist/bundle/) loads in about 10. A
// bundle is used only while every file it was built from has the size and modification time it had
// then, so an edit, a checkout or a pull falls back to the sources until the next build. Nothing
// here may import what a command's body imports: the bundle holds its own copy, and one run must
// not load both.

/** Where builds go, from the root of the toolkit. */
export const BUNDLE_DIR = "dist/bundle";

/** The build's record of what it was made from: per command, its file and its inputs. */
export const MANIFEST = "manifest.json";

/** One input of a bundle: its path from the root, its size and its modification time (ms). */
export type BundleInput = [path: string, size: number, mtimeMs: number];

/** What `deno task bundle` writes beside the bundles. */
export interface BundleManifest {
  version: 1;
  commands: Record<string, { file: string; inputs: BundleInput[] }>;
}

/**
 * The URL of command `name`'s bundle under `root` (the toolkit's folder, ending in `/`), or null
 * when there is none or it was built from other sources than those there now. Never throws: a
 * missing, unreadable or malformed manifest, or a stat that fails, means the sources.
 */
export function freshBundle(name: string, root: string, dir = BUNDLE_DIR): string | null {
  try {
    const base = `${root}${dir}/`;
    const manifest = JSON.parse(Deno.readTextFileSync(base + MANIFEST)) as Partial<BundleManifest>;
    const entry = manifest.version === 1 ? manifest.commands?.[name] : undefined;
    if (!entry || typeof entry.file !== "string" || !Array.isArray(entry.inputs)) return null;
    if (entry.inputs.length === 0) return null;
    // Paths as strings: a URL per input costs as much as its stat.
    for (const [path, size, mtimeMs] of entry.inputs) {
      const info = Deno.statSync(root + path);
      if (!info.isFile || info.size !== size || info.mtime?.getTime() !== mtimeMs) return null;
    }
    return `file://${(base + entry.file).split("/").map(encodeURIComponent).join("/")}`;
  } catch {
    return null;
  }
}

/**
 * Loads command `name`'s body for the entry file at `here` (`commands/<name>.ts`): its fresh
 * bundle, else `commands/_body/<name>.ts`. LOGBOOK_SOURCES=1 always takes the sources. When the
 * entry is the main module (`isMain`), sources that cannot be loaded end the run with one line. The
 * sources' specifier is built at run time so that Deno does not read their whole graph at start
 * when the bundle is what runs.
 */
export async function loadBody<T>(name: string, here: string, isMain = false): Promise<T> {
  const root = decodeURIComponent(new URL("../", here).pathname);
  const bundle = wantsSources() ? null : freshBundle(name, root);
  if (bundle) {
    try {
      return await import(bundle) as T;
    } catch {
      // A bundle that does not load (removed half-way, or broken): the sources say what is wrong.
    }
  }
  try {
    return await import(new URL(`_body/${name}.ts`, here).href) as T;
  } catch (err) {
    if (!isMain) throw err;
    // Run without the task's -R, say, the command fails as any command does: one line, exit 1.
    const message = err instanceof Error ? err.message : String(err);
    Deno.stderr.writeSync(new TextEncoder().encode(`error: ${message}\n`));
    Deno.exit(1);
  }
}

/** True when LOGBOOK_SOURCES asks for the sources; false where the command may not read it. */
function wantsSources(): boolean {
  try {
    const value = Deno.env.get("LOGBOOK_SOURCES");
    return value !== undefined && value !== "" && value !== "0";
  } catch {
    return false;
  }
}
