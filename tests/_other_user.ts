// Running a command as a user who is not root (root ignores permission bits) or inside a private
// mount namespace, for tests of read-only data dirs. Each probe says why it cannot run here.

import { join } from "node:path";
import { childBaseEnv, ROOT, type RunResult, taskFlags, tempDir } from "./_helpers.ts";

/** The unprivileged user the tests switch to: `nobody` on Debian and most Linux systems. */
export const OTHER_UID = 65534;
export const OTHER_GID = 65534;

/** Runs `commands/<file>.ts` as a user would, with `vars` as its environment. */
export type Runner = (
  file: string,
  args: string[],
  vars: Record<string, string>,
) => Promise<RunResult>;

/** A runner and what to remove once the tests are done, or why there is none on this machine. */
export type Probe = { run: Runner; cleanup: () => void } | { missing: string };

/**
 * A runner that spawns commands as uid/gid 65534 with `setpriv`. The child gets its own module
 * cache (hard links to this one where the disk allows), since root's is not readable to it.
 */
export async function otherUserRunner(): Promise<Probe> {
  if (Deno.build.os !== "linux") return { missing: "switching users is only done on Linux" };
  if (Deno.uid() !== 0) return { missing: "the tests do not run as root, so cannot switch user" };
  const setpriv = await which("setpriv");
  if (!setpriv) return { missing: "setpriv is not installed" };
  const cache = await tempDir("logbook-deno-dir-");
  const cleanup = () => Deno.removeSync(cache, { recursive: true });
  try {
    await Deno.chmod(cache, 0o755);
    const source = join(childBaseEnv().DENO_DIR!, "npm");
    const copied = await sh(`cp -al "$1" "$2" 2>/dev/null || cp -r "$1" "$2"`, [source, cache]);
    if (!copied.success) {
      cleanup();
      return { missing: `the module cache cannot be copied for the other user: ${copied.stderr}` };
    }
    // The child writes its compile caches here; the copied packages stay root's (hard links).
    await Deno.chown(cache, OTHER_UID, OTHER_GID);
    const run: Runner = (file, args, vars) =>
      spawn(
        setpriv,
        [`--reuid=${OTHER_UID}`, `--regid=${OTHER_GID}`, "--clear-groups", "--"],
        file,
        args,
        { ...vars, DENO_DIR: cache },
      );
    const probe = await run("stage_markers", ["--help"], {});
    if (probe.code !== 0) {
      cleanup();
      return { missing: `deno cannot run as uid ${OTHER_UID}: ${firstLine(probe.stderr)}` };
    }
    return { run, cleanup };
  } catch (err) {
    cleanup();
    return { missing: `the other user cannot be set up: ${(err as Error).message}` };
  }
}

/** Why a read-only bind mount cannot be made here, or undefined when it can. */
export async function readOnlyMountMissing(): Promise<string | undefined> {
  if (Deno.build.os !== "linux") return "bind mounts are only made on Linux";
  if (Deno.uid() !== 0) return "the tests do not run as root, so cannot mount";
  if (!(await which("unshare"))) return "unshare is not installed";
  const dir = await tempDir("logbook-mount-");
  try {
    const probe = await new Deno.Command("unshare", {
      args: [...mountPrefix(dir), "sh", "-c", 'touch "$0/probe"', dir],
      stdout: "null",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(probe.stderr);
    if (probe.success) return `a read-only bind mount of "${dir}" stayed writable`;
    if (!/read-only file system/i.test(stderr)) {
      return `a read-only bind mount cannot be made here: ${firstLine(stderr)}`;
    }
    return undefined;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

/**
 * A runner that spawns commands (as root) in a private mount namespace where `dir` is bind-mounted
 * read-only over itself: nothing outside the child sees the mount, and it ends with the child.
 */
export function readOnlyMountRunner(dir: string): Runner {
  return (file, args, vars) => spawn("unshare", mountPrefix(dir), file, args, vars);
}

function mountPrefix(dir: string): string[] {
  return [
    "-m",
    "--propagation",
    "private",
    "sh",
    "-c",
    'mount --bind -o ro "$0" "$0" && exec "$@"',
    dir,
  ];
}

async function spawn(
  program: string,
  prefix: string[],
  file: string,
  args: string[],
  vars: Record<string, string>,
): Promise<RunResult> {
  const output = await new Deno.Command(program, {
    args: [
      ...prefix,
      Deno.execPath(),
      "run",
      ...await taskFlags(file),
      "--quiet",
      join(ROOT, "commands", `${file}.ts`),
      ...args,
    ],
    env: { ...childBaseEnv(), NO_COLOR: "1", ...vars },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
    stdoutBytes: output.stdout,
  };
}

async function which(name: string): Promise<string | undefined> {
  const found = await sh(`command -v "$1"`, [name]);
  return found.success ? found.stdout.trim() : undefined;
}

async function sh(
  script: string,
  args: string[],
): Promise<{ success: boolean; stdout: string; stderr: string }> {
  const output = await new Deno.Command("sh", {
    args: ["-c", script, "sh", ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    success: output.success,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr).trim(),
  };
}

function firstLine(text: string): string {
  return text.trim().split("\n")[0] ?? "";
}
