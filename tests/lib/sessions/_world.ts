// What the session tests of this folder share: a project with a neighbour in a fresh world, and
// Claude Code transcripts written in their real format.

import { join } from "node:path";
import { makeWorld, type World } from "../../_helpers.ts";

/** Writes a Claude Code transcript in its real format for a session run in `cwd`. */
export function writeClaudeSession(
  world: World,
  cwd: string,
  sessionId: string,
  turns: [string, string][],
  start = "2026-04-01T09:00:00.000Z",
): void {
  const dir = join(world.claude, "projects", cwd.replace(/[^A-Za-z0-9]/g, "-"));
  Deno.mkdirSync(dir, { recursive: true });
  const lines: string[] = [];
  let parent: string | null = null;
  let t = Date.parse(start);
  turns.forEach(([question, answer], i) => {
    const base = {
      isSidechain: false,
      userType: "external",
      cwd,
      sessionId,
      version: "2.1.40",
      gitBranch: "main",
    };
    const u = crypto.randomUUID();
    lines.push(JSON.stringify({
      ...base,
      parentUuid: parent,
      type: "user",
      message: { role: "user", content: question },
      uuid: u,
      timestamp: new Date(t += 1000).toISOString(),
    }));
    const a = crypto.randomUUID();
    lines.push(JSON.stringify({
      ...base,
      parentUuid: u,
      type: "assistant",
      message: {
        model: "claude-opus-4-6",
        id: `msg_${i}`,
        type: "message",
        role: "assistant",
        content: [{ type: "text", text: answer }],
      },
      uuid: a,
      timestamp: new Date(t += 1000).toISOString(),
    }));
    parent = a;
  });
  Deno.writeTextFileSync(join(dir, `${sessionId}.jsonl`), lines.join("\n") + "\n");
}

/** A fresh world with a project directory (the user's cwd) and a neighbour whose name extends it. */
export async function world(): Promise<{ world: World; project: string; other: string }> {
  const w = await makeWorld();
  const project = join(w.dir, "proj");
  const other = join(w.dir, "proj-other");
  Deno.mkdirSync(project);
  Deno.mkdirSync(other);
  w.vars.INIT_CWD = project;
  return { world: w, project, other };
}
