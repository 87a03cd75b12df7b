// Driving a real terminal from tests: a tmux server of the test's own running one command, keys
// sent to it and its screen read back; the script that runs a command there as a user would; and
// fake agents on PATH (`claude`, `codex`, `opencode`) that record how they were run.

import { join } from "node:path";
import { childBaseEnv, ROOT, taskFlags, type World } from "./_helpers.ts";

/** True when tmux can run here. */
export function tmuxAvailable(): boolean {
  try {
    return new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" }).outputSync()
      .success;
  } catch {
    return false;
  }
}

/** The size of the terminal and, when wanted, OSC 52 clipboard writes kept in a tmux buffer. */
export interface TmuxOptions {
  width?: number;
  height?: number;
  /** `set -s set-clipboard on`: a program's OSC 52 write lands in tmux's paste buffer. */
  clipboard?: boolean;
}

/** A tmux session running a command in a real terminal, driven by keys. */
export class Tmux {
  readonly name = `logbook-test-${crypto.randomUUID().slice(0, 8)}`;

  constructor(script: string, options: TmuxOptions = {}) {
    const { width = 160, height = 40 } = options;
    this.#tmux([
      "new-session",
      "-d",
      "-s",
      this.name,
      "-x",
      String(width),
      "-y",
      String(height),
      script,
    ]);
    // Set as soon as the server is up, long before the program has started and been sent a key.
    if (options.clipboard) this.#tmux(["set", "-s", "set-clipboard", "on"]);
  }

  keys(...keys: string[]): void {
    this.#tmux(["send-keys", "-t", this.name, ...keys]);
  }

  literal(text: string): void {
    this.#tmux(["send-keys", "-t", this.name, "-l", text]);
  }

  /** Pastes `text` as a terminal does when a person pastes (bracketed paste). */
  paste(text: string): void {
    const buffer = `${this.name}-paste`;
    this.#tmux(["set-buffer", "-b", buffer, text]);
    this.#tmux(["paste-buffer", "-p", "-d", "-b", buffer, "-t", this.name]);
  }

  /** The screen as text. */
  screen(): string {
    return this.#tmux(["capture-pane", "-p", "-t", this.name]);
  }

  /** The screen with its colours and attributes as escape sequences (`capture-pane -e`). */
  styledScreen(): string {
    return this.#tmux(["capture-pane", "-p", "-e", "-t", this.name]);
  }

  /** A tmux format for the pane (`#{pane_title}`: the title a program set with OSC 0). */
  display(format: string): string {
    return this.#tmux(["display-message", "-p", "-t", this.name, format]).trimEnd();
  }

  /** The newest paste buffer (where an OSC 52 write lands with `clipboard`), or null. */
  buffer(): string | null {
    try {
      return this.#tmux(["show-buffer"]);
    } catch {
      return null;
    }
  }

  /** The pid of the program the pane's script runs (the script's child). */
  childPid(): number {
    const shell = this.display("#{pane_pid}");
    const out = new Deno.Command("pgrep", { args: ["-P", shell], stdout: "piped" }).outputSync();
    const pid = Number(new TextDecoder().decode(out.stdout).trim().split("\n")[0]);
    if (!Number.isSafeInteger(pid) || pid <= 0) throw new Error(`No child of the pane's ${shell}`);
    return pid;
  }

  /** Changes the terminal's size, as a user dragging the window does (SIGWINCH follows). */
  resize(width: number, height: number): void {
    this.#tmux(["resize-window", "-t", this.name, "-x", String(width), "-y", String(height)]);
  }

  /** Waits until the screen matches (up to a generous limit, so a slow machine still passes). */
  waitFor(pattern: RegExp, what: string): Promise<string> {
    return this.waitUntil((screen) => pattern.test(screen), what);
  }

  /**
   * Waits until `ready` holds of the screen. For a screen that redraws in steps (a picker whose
   * list follows its filter a moment later), `ready` names the whole settled state.
   */
  async waitUntil(ready: (screen: string) => boolean, what: string): Promise<string> {
    for (let i = 0; i < 600; i++) {
      const screen = this.screen();
      if (ready(screen)) return screen;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`Timed out waiting for ${what}; the screen shows:\n${this.screen()}`);
  }

  /** Waits until `ready` holds of the styled screen (`capture-pane -e`); returns that screen. */
  async waitForStyled(ready: (screen: string) => boolean, what: string): Promise<string> {
    for (let i = 0; i < 600; i++) {
      const screen = this.styledScreen();
      if (ready(screen)) return screen;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`Timed out waiting for ${what}; the screen shows:\n${this.screen()}`);
  }

  /**
   * Waits until the prompt is open again: the last line shown is the bare prompt, and the
   * terminal is in raw mode (readline has it, so a key sent next is read as a key).
   */
  async ready(what: string): Promise<void> {
    await this.waitFor(/\n>\s*$/, what);
    for (let i = 0; !this.#raw(); i++) {
      if (i > 600) throw new Error(`Timed out waiting for ${what} to take the terminal`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** True when the pane's terminal is in raw mode (`stty` says `-icanon`). */
  #raw(): boolean {
    const out = new Deno.Command("stty", {
      args: ["-a", "-F", this.display("#{pane_tty}")],
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    if (!out.success) throw new Error(`stty failed: ${new TextDecoder().decode(out.stderr)}`);
    return /(^|\s)-icanon(\s|$)/.test(new TextDecoder().decode(out.stdout));
  }

  kill(): void {
    try {
      this.#tmux(["kill-server"]);
    } catch {
      // Already gone with its program.
    }
  }

  #tmux(args: string[]): string {
    // A server of its own: nothing another tmux user does on this machine reaches it.
    const out = new Deno.Command("tmux", {
      args: ["-L", this.name, ...args],
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    if (!out.success) {
      throw new Error(`tmux ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}`);
    }
    return new TextDecoder().decode(out.stdout);
  }
}

/** Quotes a word for a POSIX shell. */
export function shellWord(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** What a script prints before its command runs (to see that the screen is given back). */
export interface ScriptOptions {
  banner?: string;
  /** Shell commands run after it, before the script waits (`stty -a`, to see the mode). */
  after?: string;
}

/**
 * A shell script that runs `commands/<file>.ts` (with its task's permissions) with `vars` and
 * leaves its exit status in `status`; `INIT_CWD` in `vars` is where it runs.
 */
export async function terminalScript(
  dir: string,
  file: string,
  args: string[],
  vars: Record<string, string>,
  options: ScriptOptions = {},
): Promise<{ script: string; status: string }> {
  const argv = [
    Deno.execPath(),
    "run",
    // Loaded when a test runs, not when this module is: a command's module may still be
    // evaluating its own top-level await then (search.ts, show.ts), its spec not yet there.
    ...await taskFlags(file),
    "--quiet",
    join(ROOT, "commands", `${file}.ts`),
    ...args,
  ];
  return shellScript(dir, file, argv, vars, options);
}

/** A shell script that runs `argv` with `vars` (in `INIT_CWD`) and leaves its status in `status`. */
export function shellScript(
  dir: string,
  name: string,
  argv: string[],
  vars: Record<string, string>,
  options: ScriptOptions = {},
): { script: string; status: string } {
  const q = shellWord;
  const env = Object.entries({ ...childBaseEnv(), TERM: "xterm-256color", ...vars })
    .map(([k, v]) => `${k}=${q(v)}`).join(" ");
  const status = join(dir, `${name}.status`);
  const script = join(dir, `${name}-terminal.sh`);
  Deno.writeTextFileSync(
    script,
    `#!/bin/sh\ncd ${q(vars.INIT_CWD ?? dir)}\n${
      options.banner === undefined ? "" : `printf '%s\\n' ${q(options.banner)}\n`
    }env -i ${env} ${argv.map(q).join(" ")}\necho $? > ${q(`${status}.part`)}\nmv ${
      q(`${status}.part`)
    } ${q(status)}\n${options.after === undefined ? "" : `${options.after}\n`}sleep 30\n`,
  );
  Deno.chmodSync(script, 0o755);
  return { script, status };
}

/**
 * Waits until the script's status file is there (moved into place whole, so it is never seen
 * empty); returns the exit status it holds. A busy machine only makes the wait longer: it gives
 * up after two minutes, for a command that never ended.
 */
export async function exitStatus(status: string): Promise<string> {
  for (let i = 0; i < 2400 && !existsFile(status); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  return Deno.readTextFileSync(status).trim();
}

/** True when `path` is a file. */
export function existsFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/**
 * Fake `claude`, `codex` and `opencode` on PATH that record their name, directory and arguments
 * (`name|dir|args`, a line each) in `calls`, and exit 3.
 */
export function fakeAgents(world: World): { path: string; calls: string } {
  const bin = join(world.dir, "bin");
  const calls = join(world.dir, "calls.txt");
  Deno.mkdirSync(bin, { recursive: true });
  for (const name of ["claude", "codex", "opencode"]) {
    const script = join(bin, name);
    Deno.writeTextFileSync(
      script,
      `#!/bin/sh\nprintf '%s|%s|%s\\n' "${name}" "$PWD" "$*" >> '${calls}'\nexit 3\n`,
    );
    Deno.chmodSync(script, 0o755);
  }
  return { path: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`, calls };
}
