// Running another agent's own resume command in this terminal (`claude --resume`, `codex resume`,
// `opencode --session`), in the session's directory, with the terminal handed to it.

import type { NativeCommand, RowAgent } from "../../lib/sessions/resume.ts";

const AGENT_NAMES: Record<RowAgent, string> = {
  logbook: "logbook",
  claude: "Claude Code",
  codex: "Codex",
  opencode: "OpenCode",
};

/**
 * Runs another agent's resume command in the session's directory, with this terminal, and
 * returns its exit status. Throws when the directory is gone or the program is not on PATH.
 */
export async function runNative(cmd: NativeCommand, agent: RowAgent): Promise<number> {
  try {
    if (!Deno.statSync(cmd.cwd).isDirectory) throw new Deno.errors.NotFound();
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory)) {
      throw err;
    }
    throw new Error(
      `Cannot resume in ${
        AGENT_NAMES[agent]
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
        `Cannot resume in ${AGENT_NAMES[agent]}: "${cmd.command}" is not on PATH`,
      );
    }
    throw err;
  }
  const status = await child.status;
  return status.code;
}
