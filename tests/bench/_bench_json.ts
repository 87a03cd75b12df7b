// The benchmark run as `deno task bench -- … --json` runs it, for the bench tests: its one line of
// figures and what it logged, or the running process and its log line by line.

import assert from "node:assert/strict";
import { join } from "node:path";
import { childBaseEnv, ROOT } from "../_helpers.ts";

/** The command that runs bench/run.ts with `args` as `deno task bench -- …` does. */
export function benchCommand(args: string[]): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(ROOT, "bench", "run.ts"), "--", ...args],
    cwd: ROOT,
    env: {
      ...childBaseEnv(),
      NO_COLOR: "1",
      // Where the conformance suite's installs are (ccusage, for the usage figures).
      XDG_CACHE_HOME: Deno.env.get("XDG_CACHE_HOME") ??
        join(Deno.env.get("HOME") ?? "/root", ".cache"),
    },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

/**
 * Reads a running bench's log (its stderr, decoded) on from `text` until it matches `pattern`;
 * returns all read so far. Throws when the bench ends first.
 */
export async function logUntil(
  log: ReadableStreamDefaultReader<string>,
  pattern: RegExp,
  text = "",
): Promise<string> {
  while (!pattern.test(text)) {
    const { value, done } = await log.read();
    if (done) throw new Error(`The bench ended before logging ${pattern}:\n${text}`);
    text += value;
  }
  return text;
}

/**
 * Runs bench/run.ts with `args` (handed on after `--`, as `deno task bench -- …` does, `--json`
 * among them), asserts it exits 0 having printed exactly one line, and returns that line's
 * figures and the run's stderr.
 */
export async function benchJson(
  args: string[],
): Promise<{ figures: Record<string, number | null>; stderr: string }> {
  const output = await benchCommand(args).output();
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, stderr);
  const lines = new TextDecoder().decode(output.stdout).trim().split("\n");
  assert.equal(lines.length, 1);
  return { figures: JSON.parse(lines[0]!), stderr };
}
