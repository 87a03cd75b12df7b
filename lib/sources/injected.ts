// What an agent puts into a conversation that nobody there wrote: the instructions and the
// environment it gives the model (developer and system messages, and Codex's AGENTS.md and
// environment context as user messages). \`show\` and the dashboard fold each to one line, as they
// fold tool calls: a Codex conversation otherwise opens on pages of its sandbox rules.

import { isCodexContext } from "./codex_text.ts";

/** What `isInjected` looks at. */
export interface InjectedCandidate {
  kind: string;
  role: string | null;
  text: string;
}

/** True when `record`, of a conversation of `agent`, is context the agent injected. */
export function isInjected(agent: string, record: InjectedCandidate): boolean {
  if (record.kind !== "message") return false;
  if (record.role === "developer" || record.role === "system") return true;
  return agent === "codex" && record.role === "user" && isCodexContext(record.text);
}
