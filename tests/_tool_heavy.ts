// The tool-heavy fixture conversations (fixtures/tool_heavy/): turns where many tool calls and
// results stand between a question and its answer, copied into a world's agent roots.

import { cpSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES, type World } from "./_helpers.ts";

/** What each tool-heavy conversation holds: its id, the question's words, the answer's phrase. */
export const TOOL_HEAVY = {
  claude: {
    id: "claude:b71c4e20-5d3a-4f8e-9a61-7e2d0c9f4a13",
    question: "The gantry-sorrel build takes nine minutes on CI",
    answer: "flint-meridian",
  },
  codex: {
    id: "codex:019fa1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b",
    question: "The harbor-quillwort retries hammer the upstream",
    answer: "slate-tamarind",
  },
} as const;

/** Copies the tool-heavy transcripts into `world` (capture them after). */
export function addToolHeavy(world: World): void {
  const dir = join(FIXTURES, "tool_heavy");
  cpSync(join(dir, "claude", "projects"), join(world.claude, "projects"), { recursive: true });
  cpSync(join(dir, "codex", "sessions"), join(world.codex, "sessions"), { recursive: true });
}
