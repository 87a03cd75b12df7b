// Shared test helpers: temp dirs, copies of the fixtures, an isolated environment, and
// running a command the way a user does (a real subprocess).

import { readLock } from "../lib/lock.ts";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cpSync } from "node:fs";
import { type Env, envFrom } from "../lib/env.ts";
import { discoverContext, runCapture } from "../lib/capture/run.ts";
import { type Context, loadContext, openStore, redactorFor } from "../lib/context.ts";
import { projectOfRecorded } from "../lib/paths.ts";
import { ADAPTERS } from "../lib/sources/mod.ts";
import type { HistoryStore } from "../lib/store/db.ts";
import { capturePass, type PassOptions } from "../lib/capture/engine.ts";
import type { CaptureSummary } from "../lib/capture/summary.ts";
import { childBaseEnv } from "./command_env.ts";
import { COMMANDS } from "../commands/logbook.ts";
import { type Permissions, runFlags, unionPermissions } from "../lib/run_flags.ts";

export { childBaseEnv };

/** The repository root and its fixtures. */
export const ROOT = fileURLToPath(new URL("../", import.meta.url));
export const FIXTURES = join(ROOT, "fixtures");
/** The shared corpus of real transcripts, present on the team's machines but not in clones. */
export const CORPUS = join(ROOT, "..", "shared", "corpus");

/** A fresh temp dir, removed by the returned `cleanup`. */
export async function tempDir(prefix = "logbook-test-"): Promise<string> {
  return await Deno.makeTempDir({ prefix });
}

/** Removes a directory tree, ignoring one that is already gone. */
export async function removeDir(dir: string): Promise<void> {
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}

/**
 * Waits for a logbook process that another one left working in the data dir `data` (the scrub a
 * `forget` starts, holding the capture lock) to end, so that a world is not removed under it.
 */
async function settled(data: string): Promise<void> {
  const path = join(data, "run", "capture.lock");
  const holder = readLock(path);
  if (!holder || holder.pid === Deno.pid) return;
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true, write: true });
  } catch {
    return;
  }
  try {
    await file.lock(true);
    await file.unlock();
  } finally {
    file.close();
  }
}

/** An isolated world for one test: its own home, data dir, config dir and agent roots. */
export interface World {
  dir: string;
  home: string;
  data: string;
  config: string;
  /** `$CLAUDE_CONFIG_DIR`: transcripts go under `claude/projects/`. */
  claude: string;
  codex: string;
  xdgData: string;
  env: Env;
  vars: Record<string, string>;
  cleanup(): Promise<void>;
}

/** Creates a world; with `fixtures`, copies the project's fixtures in as the agents' files. */
export async function makeWorld(options: { fixtures?: ("claude" | "codex" | "opencode")[] } = {}) {
  const dir = await tempDir();
  const world: World = {
    dir,
    home: join(dir, "home"),
    data: join(dir, "data"),
    config: join(dir, "config"),
    claude: join(dir, "claude"),
    codex: join(dir, "codex"),
    xdgData: join(dir, "xdg-data"),
    env: envFrom({}),
    vars: {},
    cleanup: async () => {
      await settled(join(dir, "data"));
      await removeDir(dir);
    },
  };
  for (const path of [world.home, world.claude, world.codex, world.xdgData]) {
    await Deno.mkdir(path, { recursive: true });
  }
  for (const agent of options.fixtures ?? []) {
    if (agent === "claude") {
      cpSync(join(FIXTURES, "claude", "projects"), join(world.claude, "projects"), {
        recursive: true,
      });
      cpSync(join(FIXTURES, "claude", "history.jsonl"), join(world.claude, "history.jsonl"));
    }
    if (agent === "codex") {
      for (const sub of ["sessions", "archived_sessions"]) {
        cpSync(join(FIXTURES, "codex", sub), join(world.codex, sub), { recursive: true });
      }
      cpSync(join(FIXTURES, "codex", "history.jsonl"), join(world.codex, "history.jsonl"));
    }
    if (agent === "opencode") {
      cpSync(join(FIXTURES, "opencode", "xdg-data"), world.xdgData, { recursive: true });
    }
  }
  world.vars = {
    HOME: world.home,
    LOGBOOK_DATA_DIR: world.data,
    LOGBOOK_CONFIG_DIR: world.config,
    CLAUDE_CONFIG_DIR: world.claude,
    CODEX_HOME: world.codex,
    XDG_DATA_HOME: world.xdgData,
    INIT_CWD: world.home,
    NO_COLOR: "1",
  };
  world.env = envFrom(world.vars);
  return world;
}

/**
 * The permissions command `command` declares in its spec (`delete-user-data` or its file's name,
 * `delete_user_data`); for `logbook`, the dispatcher, those of every command together.
 */
export async function permissionsOf(command: string): Promise<Permissions> {
  const name = command.replaceAll("_", "-");
  if (name === "logbook") {
    const all = await Promise.all(Object.values(COMMANDS).map(async (load) => await load()));
    return unionPermissions(all.map(({ spec }) => spec.permissions));
  }
  const load = COMMANDS[name];
  if (!load) throw new Error(`No command "${command}"`);
  return (await load()).spec.permissions;
}

/**
 * The flags `deno run` runs `command` with, as its task, its shebang and an install do: the V8
 * flags and the permissions its spec declares, so child processes run with exactly the
 * permissions users get, not `-A`.
 */
export async function taskFlags(command: string): Promise<string[]> {
  return runFlags(await permissionsOf(command));
}

// The fake terminal sits with the commands' tests, beside the Io it implements.
export { captureIo } from "./commands/_io.ts";

/** What a subprocess did. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  stdoutBytes: Uint8Array;
}

/** `deno run`'s arguments for `commands/<file>.ts` with `args`, as its task runs it, quietly. */
async function runArgs(file: string, args: string[], root = ROOT): Promise<string[]> {
  return [
    "run",
    ...await taskFlags(file),
    "--quiet",
    join(root, "commands", `${file}.ts`),
    ...args,
  ];
}

/**
 * What a command run by a test starts with unless the test says otherwise: no colour, and a
 * search budget a busy machine cannot spend (it counts the command's start-up, which under load
 * took longer than the 1200 ms default); the tests of the budget set their own.
 */
const CHILD_DEFAULTS = { NO_COLOR: "1", LOGBOOK_SEARCH_BUDGET_MS: "60000" };

/** `commands/<file>.ts` with `args` as a user runs it, output piped, nothing on its stdin. */
async function cliCommand(
  file: string,
  args: string[],
  vars: Record<string, string>,
  root = ROOT,
): Promise<Deno.Command> {
  return new Deno.Command(Deno.execPath(), {
    args: await runArgs(file, args, root),
    env: { ...childBaseEnv(), ...CHILD_DEFAULTS, ...vars },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

/**
 * Runs `commands/<file>.ts` as a user would, in a real subprocess with `vars` as its environment
 * (from the toolkit at `root`, this one unless a test made a copy).
 */
export async function runCli(
  file: string,
  args: string[],
  vars: Record<string, string> = {},
  root = ROOT,
): Promise<RunResult> {
  const output = await (await cliCommand(file, args, vars, root)).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
    stdoutBytes: output.stdout,
  };
}

/**
 * Starts `commands/<file>.ts` as `runCli` does and resolves once its stderr has said something
 * `pattern` matches (or it ended first: `said` false). `finish` waits for its end: what it did,
 * stderr whole.
 */
export async function startCliUntil(
  file: string,
  args: string[],
  vars: Record<string, string>,
  pattern: RegExp,
): Promise<{ said: boolean; finish(): Promise<RunResult> }> {
  const child = (await cliCommand(file, args, vars)).spawn();
  const stdout = new Response(child.stdout).bytes();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let stderr = "";
  let said = false;
  while (!said) {
    const { value, done } = await reader.read();
    if (done) break;
    stderr += value;
    said = pattern.test(stderr);
  }
  return {
    said,
    async finish() {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        stderr += value;
      }
      const stdoutBytes = await stdout;
      return {
        code: (await child.status).code,
        stdout: new TextDecoder().decode(stdoutBytes),
        stderr,
        stdoutBytes,
      };
    },
  };
}

/**
 * Starts `deno run -A script` with `vars` as its environment and resolves once it has said its
 * first line on stdout: that line (empty if it ended first), and `kill`, which ends it with SIGKILL
 * (a test's crash at a point the script chose).
 */
export async function startUntilLine(
  script: string,
  vars: Record<string, string>,
): Promise<{ line: string; kill(): Promise<void> }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script],
    env: { ...childBaseEnv(), ...vars },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let line = "";
  while (!line.endsWith("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    line += value;
  }
  return {
    line,
    async kill() {
      child.kill("SIGKILL");
      await child.status;
      await reader.cancel();
    },
  };
}

/** Runs `commands/<file>.ts` like `runCli`, with `input` piped to its stdin. */
export async function runCliWithInput(
  file: string,
  args: string[],
  vars: Record<string, string>,
  input: string,
): Promise<RunResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args: await runArgs(file, args),
    env: { ...childBaseEnv(), ...CHILD_DEFAULTS, ...vars },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const output = await child.output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
    stdoutBytes: output.stdout,
  };
}

/** Reads a JSON manifest of the fixtures. */
export function manifest<T = Record<string, unknown>>(agent: string): T[] {
  return JSON.parse(Deno.readTextFileSync(join(FIXTURES, agent, "MANIFEST.json")));
}

/** True when the shared corpus of real samples is present. */
export function corpusPresent(): boolean {
  try {
    return Deno.statSync(CORPUS).isDirectory;
  } catch {
    return false;
  }
}

/** Captures a world in-process with the real adapters; returns the summary. */
export async function captureWorld(
  world: World,
  extra: Partial<Parameters<typeof runCapture>[0]> = {},
): Promise<CaptureSummary> {
  const ctx = loadContext({ env: world.env });
  const store = openStore(ctx);
  try {
    const result = await runCapture({ ctx, store, redact: redactorFor(ctx), ...extra });
    if (result.status !== "captured") throw new Error(`Capture did not run: ${result.status}`);
    return result.summary;
  } finally {
    store.close();
  }
}

/**
 * Runs one capture pass itself on `store` (no lock, latch or switch), for tests that set what
 * `runCapture` does not expose, such as read limits.
 */
export async function runPass(
  store: HistoryStore,
  ctx: Context,
  extra: Partial<PassOptions> = {},
): Promise<CaptureSummary> {
  return await capturePass({
    store,
    adapters: ADAPTERS,
    discover: discoverContext(ctx),
    redact: redactorFor(ctx),
    projectOf: projectOfRecorded,
    ...extra,
  });
}

/** Runs `fn` with the world's store open, closing it after. */
export function withStore<T>(world: World, fn: (store: HistoryStore, ctx: Context) => T): T {
  const ctx = loadContext({ env: world.env });
  const store = openStore(ctx);
  try {
    return fn(store, ctx);
  } finally {
    store.close();
  }
}
