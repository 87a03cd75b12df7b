#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E --allow-net
// `fork`: copies a session (this project's, or any captured one by its id from anywhere) into a new
// logbook session (its own id, the same conversation) and opens it; another agent's conversation
// becomes a session any model continues.

import type { Env } from "../lib/env.ts";
import { defineCommand, EXIT, run, shared, UsageError } from "./_command.ts";
import { type Io, stdio } from "./_terminal/io.ts";
import { gateFor, loadContext, redactorFor } from "../lib/context.ts";
import { chatSetup } from "../lib/sessions/setup.ts";
import { projectOf } from "../lib/paths.ts";
import { forkRow } from "../lib/sessions/fork.ts";
import {
  findRowAnywhere,
  pickerRows,
  resumeHint,
  withHistoryStore,
} from "../lib/sessions/resume.ts";
import { type SessionRecord, SessionStore } from "../lib/sessions/records.ts";
import { existingCwd, openSession } from "./_terminal/open_session.ts";
import { safeIo } from "./_terminal/safe_io.ts";

export const spec = defineCommand({
  name: "fork",
  summary: "copy a session into a new one and open it (the source is left as it was)",
  usage: "logbook fork <id> [--incognito]",
  options: {
    ...shared("incognito"),
  },
  optionHelp: [
    ["ID", "a session id or unique prefix, from any project once captured"],
    ["--incognito", "open the copy without writing anything"],
  ],
  examples: ["logbook fork claude:3f2a9c1e"],
  maxPositionals: 1,
});

/** Runs `fork` with `args`; returns the exit status. */
export async function main(
  args: string[],
  terminal: Io = stdio(),
  env: Env = Deno.env,
): Promise<number> {
  // Titles, ids and directories shown here may come from transcripts; nothing is styled.
  const io = safeIo(terminal);
  return await run(spec, args, io, async ({ values, positionals }) => {
    const id = positionals[0];
    if (id === undefined) throw new UsageError("Missing the id of the session to fork");
    const incognito = values.incognito ?? false;
    const ctx = loadContext({
      env,
      agent: "logbook",
      incognito: values.incognito === true,
      onStall: io.err,
      onWarning: io.err,
    });
    const project = projectOf(ctx.cwd);
    const sessions = new SessionStore(ctx.paths, { incognito });
    const open = Deno.stdin.isTerminal();
    // Opening the fork needs the model: fail before anything is written when it is missing.
    const setup = open ? chatSetup(ctx, { incognito }) : undefined;

    const fork = withHistoryStore(ctx, (store): SessionRecord => {
      const redact = redactorFor(ctx);
      const listed = pickerRows(sessions, project, { store, redact });
      const row = findRowAnywhere(listed, id, "fork", { sessions, store, redact });
      return forkRow({ sessions, store, row, gate: gateFor(ctx), now: ctx.now(), query: id });
    });

    if (setup) return await openSession(io, ctx, fork, setup, { incognito, verb: "Forked as" });
    io.out(`${fork.id}\n`);
    const redact = redactorFor(ctx);
    io.err(redact(
      incognito
        ? `Forked as "${fork.title}" in incognito: nothing was recorded\n`
        : `Forked as "${fork.title}". Resume with: ${
          resumeHint(fork.id, existingCwd(io, fork.cwd, ctx.cwd, redact), ctx.cwd)
        }\n`,
    ));
    return EXIT.ok;
  });
}

if (import.meta.main) Deno.exit(await main(Deno.args));
