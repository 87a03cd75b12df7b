#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E
// `rename`: gives one of this project's logbook sessions a new title, rewriting its record at
// once. An empty title is refused.

import type { Env } from "../lib/env.ts";
import { defineCommand, EXIT, run, shared, UsageError } from "./_command.ts";
import { type Io, stdio } from "./_terminal/io.ts";
import { gateFor, loadContext, redactorFor } from "../lib/context.ts";
import { projectOf } from "../lib/paths.ts";
import { findRow, pickerRows, withHistoryStore } from "../lib/sessions/resume.ts";
import { cleanTitle, SessionStore } from "../lib/sessions/records.ts";
import { safeIo } from "./_terminal/safe_io.ts";

export const spec = defineCommand({
  name: "rename",
  summary: "give a logbook session of this project a new title",
  arguments: "<id> <title>",
  options: {
    ...shared({ incognito: "check the rename but write nothing" }),
  },
  examples: ['logbook rename 3f2a "dependency audit"'],
  permissions: { read: true, write: true, env: true },
});

/** Runs `rename` with `args`; returns the exit status. */
export async function main(
  args: string[],
  terminal: Io = stdio(),
  env: Env = Deno.env,
): Promise<number> {
  // Titles, ids and directories shown here may come from transcripts; nothing is styled.
  const io = safeIo(terminal);
  return await run(spec, args, io, ({ values, positionals }) => {
    const [id, ...words] = positionals;
    if (id === undefined) throw new UsageError("Missing the id of the session to rename");
    const title = cleanTitle(words.join(" "));
    if (title === "") throw new UsageError(`Cannot rename session "${id}": the title is empty`);
    const incognito = values.incognito ?? false;
    const ctx = loadContext({
      env,
      agent: "logbook",
      incognito: values.incognito === true,
      onStall: io.err,
      onWarning: io.err,
    });
    const sessions = new SessionStore(ctx.paths, { incognito });
    const project = projectOf(ctx.cwd);
    const row = withHistoryStore(
      ctx,
      (store) => {
        const { rows, corrupt } = pickerRows(sessions, project, {
          store,
          redact: redactorFor(ctx),
        });
        return findRow(rows, id, "rename", corrupt);
      },
    );
    if (!row.record) {
      throw new Error(
        `Cannot rename "${row.key}": only logbook's own sessions can be renamed`,
      );
    }
    const renamed = sessions.rename(row.record, title, gateFor(ctx), ctx.now());
    io.out(
      `Renamed ${renamed.id} to "${renamed.title}"${
        incognito ? " (incognito: nothing was written)" : ""
      }\n`,
    );
    return EXIT.ok;
  });
}

if (import.meta.main) Deno.exit(await main(Deno.args));
