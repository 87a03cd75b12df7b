#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E --allow-net
// `compact`: compacts one of this project's logbook sessions on demand, at any size: a
// snapshot of the whole conversation first, then a summary from the model replaces the oldest
// rounds in requests, the replaced messages kept in the record's archive.

import { defineCommand, EXIT, run, shared, UsageError } from "./_command.ts";
import { type Io, stdio } from "./_terminal/io.ts";
import { loadContext, redactorFor } from "../lib/context.ts";
import type { Env } from "../lib/env.ts";
import { projectOf } from "../lib/paths.ts";
import { describeCompaction } from "../lib/sessions/describe.ts";
import { findRow, pickerRows, withHistoryStore } from "../lib/sessions/resume.ts";
import { chatSetup } from "../lib/sessions/setup.ts";
import { ChatSession } from "../lib/sessions/turn.ts";
import { safeIo } from "./_terminal/safe_io.ts";
import { safeJson } from "../lib/safe_json.ts";

export const spec = defineCommand({
  name: "compact",
  summary: "replace the oldest rounds of a logbook session by a summary (snapshot first)",
  arguments: "<id>",
  options: {
    "no-snapshot": {
      type: "boolean",
      help: "this once, compact without writing the plain-text snapshot first",
    },
    ...shared({ json: "print what was done as JSON" }),
  },
  examples: ["logbook compact 3f2a9c1e"],
  maxPositionals: 1,
  permissions: { read: true, write: true, env: true, net: true },
});

/** Runs `compact` with `args`; returns the exit status. */
export async function main(
  args: string[],
  terminal: Io = stdio(),
  env: Env = Deno.env,
): Promise<number> {
  // Titles, ids and directories shown here may come from transcripts; nothing is styled.
  const io = safeIo(terminal);
  return await run(spec, args, io, async ({ values, positionals }) => {
    const id = positionals[0];
    if (id === undefined) throw new UsageError("Missing the id of the session to compact");
    const ctx = loadContext({ env, agent: "logbook", onStall: io.err, onWarning: io.err });
    const setup = chatSetup(ctx, { incognito: false });
    const project = projectOf(ctx.cwd);
    const row = withHistoryStore(ctx, (store) => {
      const { rows, corrupt } = pickerRows(setup.persistence.store, project, {
        store,
        redact: redactorFor(ctx),
      });
      return findRow(rows, id, "compact", corrupt);
    });
    if (!row.record) {
      throw new Error(`Cannot compact "${row.key}": only logbook's own sessions can be compacted`);
    }
    const { session } = ChatSession.resume({ ...setup.options, cwd: row.record.cwd }, row.record);
    const result = await session.compact({ noSnapshot: values["no-snapshot"] === true });
    for (const warning of setup.persistence.takeWarnings()) io.err(`warning: ${warning}\n`);
    if (values.json) io.out(safeJson({ session: session.id, ...result }) + "\n");
    else io.out(describeCompaction(result));
    return EXIT.ok;
  });
}

if (import.meta.main) Deno.exit(await main(Deno.args));
