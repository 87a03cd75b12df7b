// A session and what was done to it, as the text a user reads: `/status`, and the one line a
// compaction ends with (shown by the chat's /compact and by the `compact` command).

import { formatDuration } from "../format.ts";
import type { CompactResult, SessionStatus } from "./turn.ts";

/** One line saying what a compaction did. */
export function describeCompaction(result: CompactResult): string {
  if (result.outcome === "nothing") return `Nothing to compact: ${result.reason}\n`;
  return `Compacted: ${result.replaced} messages replaced by a summary of ${result.summaryBytes} bytes` +
    `; ${result.kept} kept${result.snapshot ? `; snapshot ${result.snapshot}` : "; no snapshot"}\n`;
}

/** `/status` as lines of text. */
export function formatStatus(s: SessionStatus): string {
  const names = {
    waitingModelMs: "waiting on the model",
    runningToolsMs: "running tools",
    waitingUserMs: "waiting for you",
    otherMs: "other",
  } as const;
  const parts = Object.entries(s.parts).map(([k, v]) =>
    `${names[k as keyof typeof names]} ${formatDuration(v)}`
  );
  const saving = s.saving === "saved"
    ? `saved in ${s.path}`
    : s.saving === "incognito"
    ? "incognito: nothing is written"
    : s.saving === "not saved"
    ? "not saved (the data dir cannot be written)"
    : "not saved yet (nothing to save before the first turn)";
  return [
    `Session   ${s.id}`,
    `Title     ${s.title || "(none yet)"}`,
    `Directory ${s.cwd}${s.branch ? ` (branch ${s.branch})` : ""}`,
    `Model     ${s.model} at ${s.endpoint}${
      s.answeredBy && s.answeredBy !== s.model ? `; answered by ${s.answeredBy}` : ""
    }`,
    `Turns     ${s.turns} (${s.messages} messages), tokens ${s.tokensIn} in / ${s.tokensOut} out`,
    `Time      ${formatDuration(s.wallMs)}${parts.length ? `: ${parts.join(", ")}` : ""}`,
    `Record    ${saving}`,
    ...(s.forkedFrom ? [`Forked    from ${s.forkedFrom}`] : []),
    "",
  ].join("\n");
}
