// A Codex conversation that opens as Codex's do: its rules (a developer message), AGENTS.md and
// the environment (user messages), then the prompt. Each names the gazetteer, AGENTS.md twice in
// fewer words than the prompt, so bm25 or ts_rank alone would rank the rules first. For the
// ranking tests, local and team.

import { join } from "node:path";
import type { World } from "./_helpers.ts";

/** The conversation's id (`codex:<id>` in the store). */
export const CONTEXT_SESSION = "019ee0aa-1111-7222-8333-444455556666";

/** What the prompt's snippet holds. */
export const CONTEXT_PROMPT = /importer drop/;

/** Writes the rollout under `world.codex`, its cwd `cwd`; returns its path. */
export function placeCodexContextRollout(world: World, cwd: string): string {
  const dir = join(world.codex, "sessions", "2026", "11", "30");
  Deno.mkdirSync(dir, { recursive: true });
  const at = (n: number) => `2026-11-30T08:00:0${n}.000Z`;
  const said = (n: number, role: string, text: string) =>
    JSON.stringify({
      timestamp: at(n),
      type: "response_item",
      payload: { type: "message", role, content: [{ type: "input_text", text }] },
    });
  const lines = [
    JSON.stringify({
      timestamp: at(0),
      type: "session_meta",
      payload: { id: CONTEXT_SESSION, timestamp: at(0), cwd, cli_version: "0.151.2" },
    }),
    said(1, "developer", "<permissions instructions>\nThe gazetteer is read-only.\n</permissions>"),
    said(
      1,
      "user",
      `# AGENTS.md instructions for ${cwd}\n\nKeep the gazetteer sorted and the gazetteer tests green.`,
    ),
    said(2, "user", `<environment_context>\n  <cwd>${cwd}/gazetteer</cwd>\n</environment_context>`),
    said(3, "user", "Why does the gazetteer importer drop the rows whose names carry accents?"),
  ];
  const path = join(dir, `rollout-2026-11-30T08-00-00-${CONTEXT_SESSION}.jsonl`);
  Deno.writeTextFileSync(path, lines.join("\n") + "\n");
  return path;
}
