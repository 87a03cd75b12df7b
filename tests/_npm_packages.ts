// npm packages that only a test needs (the browser test's playwright-core and axe-core), installed
// with npm into a cache outside the repository, not through deno.json: `deno task start` downloads
// every package deno.lock holds on a user's first run, needed or not.

import { join } from "node:path";
import { canStat } from "../lib/present.ts";

/** Where the packages go: `$XDG_CACHE_HOME/logbook/test-packages`, else `~/.cache/…`. */
function cacheDir(): string {
  const xdg = Deno.env.get("XDG_CACHE_HOME");
  const base = xdg || join(Deno.env.get("HOME") ?? "/tmp", ".cache");
  return join(base, "logbook", "test-packages");
}

/**
 * The `node_modules` folder holding `pins` (name → exact version), installed with npm the first
 * time, or why they cannot be installed here (no npm, no registry).
 */
export async function npmPackages(
  pins: Record<string, string>,
): Promise<{ modules: string } | { missing: string }> {
  const specs = Object.entries(pins).map(([name, version]) => `${name}@${version}`).sort();
  const dir = join(cacheDir(), specs.join("+").replaceAll("/", "%2F"));
  const marker = join(dir, ".installed");
  if (!canStat(marker)) {
    await Deno.mkdir(dir, { recursive: true });
    let output: Deno.CommandOutput;
    try {
      output = await new Deno.Command("npm", {
        args: ["install", "--prefix", dir, "--no-audit", "--no-fund", ...specs],
        cwd: dir,
        stdin: "null",
      }).output();
    } catch (err) {
      return { missing: `npm cannot be run: ${(err as Error).message}` };
    }
    if (!output.success) {
      const said = new TextDecoder().decode(output.stderr).trim().split("\n").at(-1);
      return { missing: `npm install ${specs.join(" ")} failed: ${said}` };
    }
    await Deno.writeTextFile(marker, specs.join("\n") + "\n");
  }
  return { modules: join(dir, "node_modules") };
}
