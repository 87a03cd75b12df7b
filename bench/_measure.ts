// Measurements the benchmark takes outside the store's own API: child processes timed from start
// to exit, their peak memory, rg over the source tree, the huge single-line transcript, and a
// summary of a V8 CPU profile.

import { join } from "node:path";
import { mulberry32, Planter, TextGen, Vocabulary } from "./_text.ts";
import { childBaseEnv, median, ROOT, taskEnv, which } from "./_util.ts";

/** What a child process did. */
export interface ChildRun {
  code: number;
  ms: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion, timing it from spawn to exit. */
export async function runTimed(
  cmd: string,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<ChildRun> {
  const command = new Deno.Command(cmd, {
    args,
    cwd: options.cwd ?? ROOT,
    ...(options.env ? { env: options.env, clearEnv: true } : {}),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
  const start = performance.now();
  const output = await command.output();
  const ms = performance.now() - start;
  const decoder = new TextDecoder();
  return {
    code: output.code,
    ms,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/**
 * An empty script run as a command is, with `flags` and `env`: the runtime's own start-up, the
 * floor a command's time is read against (its own cost is its time less this run's beside it).
 * Returns its time in ms; the script is made in `work` on first use.
 */
export async function timeEmptyScript(
  work: string,
  flags: string[],
  env: Record<string, string>,
): Promise<number> {
  const script = join(work, "empty.ts");
  await Deno.writeTextFile(script, "\n", { createNew: true }).catch((err) => {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
  });
  return (await runTimed(Deno.execPath(), ["run", ...flags, script], { env })).ms;
}

/** Waits for a child run and throws with its stderr's tail when it failed. */
export async function check<T extends { code: number; stderr: string }>(
  run: Promise<T>,
  what: string,
): Promise<T> {
  const done = await run;
  if (done.code !== 0) throw new Error(`${what} failed (${done.code}): ${done.stderr.slice(-600)}`);
  return done;
}

/**
 * Why the code of `commit` (`what`, in words) cannot be had here (no git, or a history without
 * it), or null.
 */
export async function commitUnavailable(commit: string, what: string): Promise<string | null> {
  if (!which("git") || !which("tar")) return "git or tar is not installed";
  const found = await runTimed("git", ["cat-file", "-e", `${commit}^{commit}`]);
  return found.code === 0 ? null : `${what} (commit ${commit}) is not in this repository's history`;
}

/**
 * Exports the code of `commit` into the dir `into` (git archive, then tar): the repository itself
 * is left as it is.
 */
export async function exportCommit(commit: string, into: string): Promise<void> {
  await Deno.mkdir(into, { recursive: true });
  const tarball = `${into}.tar`;
  try {
    await check(runTimed("git", ["archive", "--output", tarball, commit]), "git archive");
    await check(runTimed("tar", ["-xf", tarball, "-C", into]), "tar");
  } finally {
    await Deno.remove(tarball).catch(() => {});
  }
}

/**
 * The environment a logbook command runs with: the base a child Deno needs, what its task sets
 * (every command's task sets the same, so the dispatcher's stands for them), plus `vars`. The
 * bench times what a user runs, so the bundled commands start from their bundle unless a figure
 * sets LOGBOOK_SOURCES itself.
 */
export function commandEnv(vars: Record<string, string>): Record<string, string> {
  return { ...childBaseEnv(), ...taskEnv("logbook"), NO_COLOR: "1", LOGBOOK_SOURCES: "", ...vars };
}

/** Arguments of `deno run` for a logbook command with its task's permission flags. */
export function commandArgs(flags: string[], file: string, args: string[]): string[] {
  return ["run", ...flags, join(ROOT, "commands", file), ...args];
}

/**
 * Builds the bundles of search, show, usage and status as the install does (`deno task bundle`,
 * run in the toolkit): "built", or why it could not be, in which case they run from their sources.
 */
export async function bundleAsInstalled(log: (message: string) => void): Promise<string> {
  const run = await runTimed(Deno.execPath(), ["task", "-q", "bundle"]);
  if (run.code !== 0) return `deno task bundle failed (${run.stderr.trim() || `exit ${run.code}`})`;
  log(`bundled search, show, usage and status in ${Math.round(run.ms)} ms (deno task bundle)`);
  return "built";
}

/** A bundled command's runs: from its bundle, from its sources, and the bundle's exit codes. */
export interface BundleRuns {
  runs: number[];
  /** The same runs from the sources (LOGBOOK_SOURCES=1), alternating with the bundle's. */
  sources: number[];
  codes: number[];
}

/**
 * Runs a bundled command (`search`, `show`) with `args(i)` once to warm up and `runs` times timed,
 * each time from its bundle then from its sources, then `alongside(i)` (other runs to interleave
 * with these, `i` 0 being the warm-up); throws when the bundle's run exits above `maxCode`.
 */
export async function timeBundleAndSources(
  vars: Record<string, string>,
  runs: number,
  args: (i: number) => string[],
  what: string,
  maxCode: number,
  alongside?: (i: number) => Promise<void>,
): Promise<BundleRuns> {
  const env = { ...commandEnv(vars), LOGBOOK_SOURCES: "" };
  const sourcesEnv = { ...env, LOGBOOK_SOURCES: "1" };
  const out: BundleRuns = { runs: [], sources: [], codes: [] };
  for (let i = 0; i <= runs; i++) {
    const run = await runTimed(Deno.execPath(), args(i), { env });
    if (run.code > maxCode) throw new Error(`${what} failed (${run.code}): ${run.stderr.trim()}`);
    const fromSources = await runTimed(Deno.execPath(), args(i), { env: sourcesEnv });
    await alongside?.(i);
    if (i > 0) {
      out.runs.push(run.ms);
      out.sources.push(fromSources.ms);
      out.codes.push(run.code);
    }
  }
  return out;
}

/**
 * Makes `rg` available: present, or installed with apt-get when running as root. Returns its
 * path, or null with the reason.
 */
export async function ensureRg(
  log: (message: string) => void,
): Promise<{ path: string | null; note: string | null }> {
  const found = which("rg");
  if (found) return { path: found, note: null };
  if (Deno.uid() !== 0 || !which("apt-get")) {
    return { path: null, note: "rg is not installed and cannot be installed here (not root)" };
  }
  log("rg is missing: installing ripgrep with apt-get");
  const install = () =>
    runTimed("apt-get", ["install", "-y", "ripgrep"], {
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", DEBIAN_FRONTEND: "noninteractive" },
    });
  let run = await install();
  if (run.code !== 0) {
    await runTimed("apt-get", ["update"], {
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    });
    run = await install();
  }
  const path = which("rg");
  return path
    ? { path, note: null }
    : { path: null, note: `installing ripgrep failed: ${run.stderr.trim().split("\n").at(-1)}` };
}

/**
 * Times `rg -l -F -i -a TERM <roots>` (list the files holding the fixed string, any case; `-a`
 * so the OpenCode database is searched too instead of skipped as binary). Returns the median of
 * `runs` runs and the number of files listed.
 */
export async function timeRg(
  rg: string,
  term: string,
  roots: string[],
  runs: number,
): Promise<{ ms: number; files: number; all: number[] }> {
  const times: number[] = [];
  let files = 0;
  for (let i = 0; i < runs; i++) {
    const run = await runTimed(rg, ["-l", "-F", "-i", "-a", "--", term, ...roots]);
    if (run.code > 1) throw new Error(`rg failed for "${term}": ${run.stderr.trim()}`);
    files = run.stdout.split("\n").filter(Boolean).length;
    times.push(run.ms);
  }
  return { ms: median(times), files, all: times };
}

/**
 * Writes a Claude Code transcript holding one line of about `bytes` bytes: a user line whose
 * `tool_result` content is a giant command output of ordinary words, streamed in 1 MiB blocks.
 */
export async function writeHugeLine(path: string, bytes: number, seed: number): Promise<number> {
  const vocabulary = new Vocabulary(seed, []);
  const random = mulberry32(seed + 1);
  const gen = new TextGen(random, vocabulary, new Planter(0, vocabulary, random));
  gen.planting = false;
  const sessionId = gen.uuid();
  const prefix = JSON.stringify({
    parentUuid: gen.uuid(),
    isSidechain: false,
    userType: "external",
    cwd: "/home/dev/src/huge",
    sessionId,
    version: "2.1.41",
    gitBranch: "main",
    type: "user",
    message: {
      role: "user",
      content: [{ tool_use_id: `toolu_01${gen.hex(22)}`, type: "tool_result", content: "@@" }],
    },
    uuid: gen.uuid(),
    timestamp: "2026-06-01T10:00:00.000Z",
  });
  const [head, tail] = prefix.split('"@@"') as [string, string];
  const encoder = new TextEncoder();
  // A 1 MiB block of log-like text, JSON-escaped, repeated (a few variants so it is not one
  // block over and over).
  const blocks: Uint8Array[] = [];
  for (let i = 0; i < 4; i++) {
    let text = "";
    while (text.length < 1 << 20) text += gen.commandOutput(400, "/home/dev/src/huge", 1 << 20);
    blocks.push(encoder.encode(JSON.stringify(text.slice(0, 1 << 20)).slice(1, -1)));
  }
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  let written = 0;
  try {
    const write = async (chunk: Uint8Array) => {
      let at = 0;
      while (at < chunk.length) at += await file.write(chunk.subarray(at));
      written += chunk.length;
    };
    await write(encoder.encode(`${head}"`));
    const end = encoder.encode(`"${tail}\n`);
    let i = 0;
    while (written + end.length < bytes) {
      const block = blocks[i++ % blocks.length]!;
      const room = bytes - end.length - written;
      // Cut only where no escape sequence is split: after a space.
      let cut = Math.min(block.length, room);
      if (cut < block.length) {
        while (cut > 0 && block[cut - 1] !== 0x20) cut--;
        if (cut === 0) break;
      }
      await write(block.subarray(0, cut));
    }
    await write(end);
  } finally {
    file.close();
  }
  return written;
}

/**
 * Peak resident memory (MiB) of a child process: `/usr/bin/time -v` when present, else the
 * child's VmHWM polled from /proc until it exits.
 */
export async function peakRss(
  cmd: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ mib: number; ms: number; code: number; how: string; stdout: string; stderr: string }> {
  const time = ["/usr/bin/time", "/bin/time"].find((p) => {
    try {
      return Deno.statSync(p).isFile;
    } catch {
      return false;
    }
  });
  if (time) {
    const run = await runTimed(time, ["-v", cmd, ...args], { env });
    const match = /Maximum resident set size \(kbytes\): (\d+)/.exec(run.stderr);
    if (!match) {
      throw new Error(`No peak RSS in the output of ${time} -v: ${run.stderr.slice(-400)}`);
    }
    return {
      mib: Number(match[1]) / 1024,
      ms: run.ms,
      code: run.code,
      how: `${time} -v`,
      stdout: run.stdout,
      stderr: run.stderr,
    };
  }
  const child = new Deno.Command(cmd, {
    args,
    cwd: ROOT,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const start = performance.now();
  let peakKb = 0;
  let done = false;
  const poll = (async () => {
    while (!done) {
      try {
        const status = Deno.readTextFileSync(`/proc/${child.pid}/status`);
        const match = /VmHWM:\s+(\d+) kB/.exec(status);
        if (match) peakKb = Math.max(peakKb, Number(match[1]));
      } catch {
        // The process is gone.
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const output = await child.output();
  done = true;
  await poll;
  const decoder = new TextDecoder();
  return {
    mib: peakKb / 1024,
    ms: performance.now() - start,
    code: output.code,
    how: "VmHWM polled from /proc",
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** One row of a CPU profile summary. */
export interface ProfileRow {
  name: string;
  ms: number;
  share: number;
}

interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Self time per function and per file of a `.cpuprofile` (V8's format, as `deno run
 * --cpu-prof` writes it), largest first.
 */
export function summariseProfile(
  path: string,
  top = 20,
): { total: number; functions: ProfileRow[]; files: ProfileRow[] } {
  const profile = JSON.parse(Deno.readTextFileSync(path)) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    total += dt;
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + dt);
  }
  const functions = new Map<string, number>();
  const files = new Map<string, number>();
  for (const [id, ms] of self) {
    const frame = byId.get(id)!.callFrame;
    const file = frame.url ? shortUrl(frame.url) : "(native)";
    const fn = frame.functionName || "(anonymous)";
    const name = `${fn.length > 60 ? `${fn.slice(0, 59)}…` : fn} ${file}${
      frame.url ? `:${frame.lineNumber + 1}` : ""
    }`;
    functions.set(name, (functions.get(name) ?? 0) + ms);
    files.set(file, (files.get(file) ?? 0) + ms);
  }
  const rows = (map: Map<string, number>) =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, ms]) => ({
      name,
      ms,
      share: total ? ms / total : 0,
    }));
  return { total, functions: rows(functions), files: rows(files) };
}

function shortUrl(url: string): string {
  const root = `file://${ROOT}`;
  if (url.startsWith(root)) return url.slice(root.length);
  const npm = url.indexOf("/npm/");
  if (npm >= 0) return url.slice(npm + 1);
  return url.replace(/^ext:/, "ext:");
}
