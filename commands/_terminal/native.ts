// Running another agent's own command in this terminal (`claude --resume`, `codex resume`,
// `opencode --session`, and their forks), in the session's directory, with the terminal handed
// to it.

import type { NativeCommand, PickerRow, RowAgent } from "../../lib/sessions/resume.ts";
import { AGENT_SPECS } from "../../lib/agents.ts";

/** What an agent is called in messages: its display name (`Claude Code`), else its name. */
export function displayName(agent: RowAgent): string {
  return AGENT_SPECS.find((spec) => spec.name === agent)?.display ?? agent;
}

/**
 * Runs another agent's command (one that `verb`s a session: resumes it, by default, or forks it)
 * in the session's directory, with this terminal, and returns its exit status. Throws when the
 * directory is gone or the program is not on PATH.
 */
export async function runNative(
  cmd: NativeCommand,
  agent: RowAgent,
  verb: "resume" | "fork" = "resume",
): Promise<number> {
  try {
    if (!Deno.statSync(cmd.cwd).isDirectory) throw new Deno.errors.NotFound();
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory)) {
      throw err;
    }
    throw new Error(
      `Cannot ${verb} in ${
        displayName(agent)
      }: the session's directory "${cmd.cwd}" no longer exists`,
    );
  }
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(cmd.command, {
      args: cmd.args,
      cwd: cmd.cwd,
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new Error(
        `Cannot ${verb} in ${displayName(agent)}: "${cmd.command}" is not on PATH`,
      );
    }
    throw err;
  }
  const status = await child.status;
  return status.code;
}

/**
 * What a fork run in the agent's own command says first: why it is not a logbook session, and
 * how to get one.
 */
export function noModelForkNote(row: PickerRow): string {
  return `note: no model is configured, so this forks in ${displayName(row.agent)}; ` +
    `"logbook fork --into-logbook ${row.key}" says what to set for a logbook session\n`;
}
