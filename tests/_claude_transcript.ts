// Claude Code transcripts written by tests in the real format: a session of user/assistant turns
// in a working directory, and the file placed where Claude Code keeps it
// (`<CLAUDE_CONFIG_DIR>/projects/<cwd with / as ->/<session>.jsonl`).

import { join } from "node:path";
import type { World } from "./_helpers.ts";

/** The lines of a Claude Code session of `turns` (prompt, answer), one minute apart. */
export function claudeTranscript(
  session: string,
  cwd: string,
  turns: readonly (readonly [string, string])[],
  start = Date.UTC(2026, 10, 2, 10, 0),
): string {
  const lines: string[] = [];
  let parent: string | null = null;
  turns.forEach(([ask, answer], i) => {
    const at = new Date(start + i * 60_000).toISOString();
    const base = {
      isSidechain: false,
      userType: "external",
      cwd,
      sessionId: session,
      version: "2.1.40",
      gitBranch: "main",
    };
    const q = `${session.slice(0, 24)}${(i * 2).toString(16).padStart(12, "0")}`;
    const a = `${session.slice(0, 24)}${(i * 2 + 1).toString(16).padStart(12, "0")}`;
    lines.push(JSON.stringify({
      parentUuid: parent,
      ...base,
      type: "user",
      message: { role: "user", content: ask },
      uuid: q,
      timestamp: at,
    }));
    lines.push(JSON.stringify({
      parentUuid: q,
      ...base,
      type: "assistant",
      message: {
        id: `msg_${a.slice(-12)}`,
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [{ type: "text", text: answer }],
        stop_reason: "end_turn",
        usage: { input_tokens: 5, output_tokens: 9 },
      },
      uuid: a,
      timestamp: at,
    }));
    parent = a;
  });
  return lines.join("\n") + "\n";
}

/** Writes a session's transcript where Claude Code keeps it in `world`; returns its path. */
export async function placeClaudeTranscript(
  world: World,
  cwd: string,
  session: string,
  text: string,
): Promise<string> {
  await Deno.mkdir(cwd, { recursive: true });
  const folder = join(world.claude, "projects", cwd.replaceAll("/", "-"));
  await Deno.mkdir(folder, { recursive: true });
  const path = join(folder, `${session}.jsonl`);
  await Deno.writeTextFile(path, text);
  return path;
}
