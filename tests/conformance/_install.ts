// Installing the agents for the conformance suite: each version once, with npm, into a cache
// outside the repository (`$LOGBOOK_CONFORMANCE_CACHE`, else `$XDG_CACHE_HOME/logbook/conformance`,
// else `~/.cache/logbook/conformance`), one folder per `<agent>@<version>`.

import { join } from "node:path";
import { canStat } from "../../lib/present.ts";
import type { AgentPin } from "./agents.ts";

/** An agent ready to run: its program and the folder it was installed in. */
export interface Installed {
  pin: AgentPin;
  /** The program (`<dir>/node_modules/.bin/<bin>`). */
  bin: string;
  dir: string;
  /** Where the companion packages were installed (`<dir>/companions`), if any. */
  companions: string | null;
  /** What `<bin> --version` printed. */
  reported: string;
  /** Seconds the install took (0 when it was cached). */
  seconds: number;
}

/** Why an agent could not be made ready. */
export interface Skipped {
  pin: AgentPin;
  reason: string;
}

/** The cache folder installs go to. */
export function cacheDir(): string {
  const explicit = Deno.env.get("LOGBOOK_CONFORMANCE_CACHE");
  if (explicit) return explicit;
  const xdg = Deno.env.get("XDG_CACHE_HOME");
  const base = xdg || join(Deno.env.get("HOME") ?? "/tmp", ".cache");
  return join(base, "logbook", "conformance");
}

/** The newest published version of a package (`npm view <pkg> version`). */
export async function latestVersion(pkg: string): Promise<string | Skipped["reason"]> {
  const out = await run("npm", ["view", pkg, "version"], Deno.cwd());
  if (!out.ok) return `npm view ${pkg} failed: ${out.text.trim().split("\n").at(-1)}`;
  return out.text.trim();
}

/**
 * Installs `pin` (unless that version is in the cache already) and checks that its program
 * runs and reports the version. Never throws: a failure is a `Skipped` with the reason.
 */
export async function install(pin: AgentPin): Promise<Installed | Skipped> {
  const dir = join(cacheDir(), `${pin.agent}@${pin.version}`);
  const bin = join(dir, "node_modules", ".bin", pin.bin);
  const companions = pin.companions.length ? join(dir, "companions") : null;
  const marker = join(dir, ".installed");
  const started = performance.now();
  let seconds = 0;
  if (!canStat(marker)) {
    await Deno.mkdir(dir, { recursive: true });
    const npm = await run("npm", [
      "install",
      "--prefix",
      dir,
      "--no-audit",
      "--no-fund",
      // A registry that does not answer fails the install in minutes, not the CI's hour.
      "--fetch-retries=1",
      "--fetch-timeout=120000",
      `${pin.package}@${pin.version}`,
      ...(pin.alongside ?? []),
    ], dir);
    if (!npm.ok) {
      return { pin, reason: `npm install ${pin.package}@${pin.version} failed: ${last(npm.text)}` };
    }
    if (companions) {
      const more = await run("npm", [
        "install",
        "--prefix",
        companions,
        "--no-audit",
        "--no-fund",
        // A registry that does not answer fails the install in minutes, not the CI's hour.
        "--fetch-retries=1",
        "--fetch-timeout=120000",
        ...pin.companions.map((c) => `${c}@${pin.version}`),
      ], dir);
      if (!more.ok) {
        return {
          pin,
          reason: `npm install of ${pin.companions.join(", ")} failed: ${last(more.text)}`,
        };
      }
    }
    seconds = (performance.now() - started) / 1000;
  }
  const home = await Deno.makeTempDir({ prefix: "logbook-conformance-version-" });
  try {
    // The agent's own folder first, as the rig has it (a Node installed alongside, say).
    const version = await run(bin, ["--version"], home, {
      HOME: home,
      PATH: `${join(dir, "node_modules", ".bin")}:${Deno.env.get("PATH") ?? ""}`,
    });
    if (!version.ok) return { pin, reason: `${pin.bin} --version failed: ${last(version.text)}` };
    if (!version.text.includes(pin.version)) {
      return {
        pin,
        reason: `${pin.bin} --version says "${version.text.trim()}", not ${pin.version}`,
      };
    }
    await Deno.writeTextFile(marker, `${pin.package}@${pin.version}\n`);
    return { pin, bin, dir, companions, reported: version.text.trim(), seconds };
  } finally {
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
}

function last(text: string): string {
  return text.trim().split("\n").filter((l) => l.trim()).at(-1) ?? "no output";
}

async function run(
  command: string,
  args: string[],
  cwd: string,
  env?: Record<string, string>,
): Promise<{ ok: boolean; text: string }> {
  try {
    const out = await new Deno.Command(command, {
      args,
      cwd,
      stdin: "null",
      ...(env ? { env, clearEnv: true } : {}),
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    return { ok: out.success, text };
  } catch (err) {
    return { ok: false, text: err instanceof Error ? err.message : String(err) };
  }
}
