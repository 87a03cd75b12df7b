// Opening a logbook session record in the chat loop on this terminal: what `resume` does for a
// logbook session, `fork` for the copy it made, and the search screen for either.

import { type Context, redactorFor } from "../../lib/context.ts";
import { goneNote, runnableDir } from "../../lib/sessions/resume.ts";
import type { SessionRecord } from "../../lib/sessions/records.ts";
import type { ChatSetup } from "../../lib/sessions/setup.ts";
import { ChatSession } from "../../lib/sessions/turn.ts";
import { converse } from "./chat_loop.ts";
import type { Io } from "./io.ts";

/**
 * Continues `record` in chat, in its own directory, after a line saying which session it is
 * (`Resuming "Title" (id)`, `Forked as "Title" (id)`) and the notes a resume owes (another
 * build, a changed branch); with `recap`, the last exchange first. Returns chat's exit status.
 */
export async function openSession(
  io: Io,
  ctx: Context,
  record: SessionRecord,
  setup: ChatSetup,
  options: { incognito: boolean; verb: "Resuming" | "Forked as"; recap?: boolean },
): Promise<number> {
  const { session, notes } = ChatSession.resume(
    { ...setup.options, cwd: existingCwd(io, record.cwd, ctx.cwd, redactorFor(ctx)) },
    record,
    // In incognito nothing of this run is kept, so leaving offers no resume.
    { written: !options.incognito },
  );
  io.err(`${options.verb} "${session.title}" (${session.id})\n`);
  return await converse(io, ctx, session, setup, {
    notes,
    ...(options.recap ? { recap: true } : {}),
  });
}

/**
 * `cwd`, or its nearest existing parent when it is gone (`runnableDir`, the rule every resume
 * command follows), saying so on stderr through `redact` (a directory's name may hold a secret):
 * where a session's own command, or its chat, runs.
 */
export function existingCwd(
  io: Io,
  cwd: string,
  userCwd: string,
  redact: (text: string) => string,
): string {
  const where = runnableDir(cwd, userCwd);
  const note = goneNote(where);
  if (note !== null) io.err(redact(`note: ${note}\n`));
  return where.cwd;
}
