// Paging long output as git does: `$PAGER` (default `less -R`, with `LESS=FRX` unless the user set
// LESS, so a short text prints and exits) reads what the command writes, and the command stops
// writing when the reader quits it. Without permission to run a program, there is no pager.

import type { Env } from "../../lib/env.ts";

/** Where paged text is written; `write` resolves false once the pager has quit. */
export interface Pager {
  write(text: string): Promise<boolean>;
  /** Closes the pager's input and waits for the reader to quit it. */
  close(): Promise<void>;
}

/** The pager command `env` names: `$PAGER`, else `less -R`; none for an empty one or `cat`. */
export function pagerCommand(env: Env): string | null {
  const chosen = env.get("PAGER");
  if (chosen === undefined) return "less -R";
  const trimmed = chosen.trim();
  return trimmed === "" || trimmed === "cat" ? null : trimmed;
}

/** Whether `command` runs less (`less -R`, `/usr/bin/less`), which takes `+<line>`. */
export function runsLess(command: string): boolean {
  return /^(\S*\/)?less(\s|$)/.test(command.trim());
}

/**
 * Starts the pager `env` names, reading from a pipe and showing on this terminal, or returns
 * null when there is none, when this process may not run programs, or when it cannot start.
 * `less` is the `LESS` it gets when the user set none (default `FRX`); `at` is the line
 * (1-based) to open at, which less is told with `+<line>` (another pager opens at the top).
 */
export function startPager(env: Env, options: { less?: string; at?: number } = {}): Pager | null {
  const command = pagerCommand(env);
  if (command === null) return null;
  if (Deno.permissions.querySync({ name: "run", command: "sh" }).state !== "granted") return null;
  // The line goes after the user's own words as an argument of theirs, never into the script.
  const at = options.at !== undefined && options.at > 1 && runsLess(command)
    ? ["sh", `+${Math.floor(options.at)}`]
    : [];
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command("sh", {
      args: ["-c", at.length ? `${command} "$@"` : command, ...at],
      stdin: "piped",
      stdout: "inherit",
      stderr: "inherit",
      env: {
        ...(env.get("LESS") === undefined ? { LESS: options.less ?? "FRX" } : {}),
        ...(env.get("LV") === undefined ? { LV: "-c" } : {}),
      },
    }).spawn();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.PermissionDenied) {
      return null;
    }
    throw err;
  }
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  // Ctrl-C belongs to the pager while it runs (less stops a search with it), as under git: this
  // process must not die and leave the pager reading from a closed pipe.
  const ignore = () => {};
  Deno.addSignalListener("SIGINT", ignore);
  let open = true;
  return {
    async write(text) {
      if (!open) return false;
      try {
        await writer.write(encoder.encode(text));
      } catch (err) {
        // The reader quit before the end: stop writing, as git does.
        if (!(err instanceof Deno.errors.BrokenPipe || err instanceof TypeError)) throw err;
        open = false;
      }
      return open;
    },
    async close() {
      if (open) {
        open = false;
        await writer.close().catch(() => {});
      }
      try {
        await child.status;
      } finally {
        Deno.removeSignalListener("SIGINT", ignore);
      }
    },
  };
}
