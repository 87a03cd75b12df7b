#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E --allow-net --allow-run
// `resume`: picks a session back up (this project's, or any captured one by its id from anywhere):
// logbook's own continue in chat, another agent's run that agent's own resume command in the
// session's directory (its nearest existing parent when it is gone).

import type { Env } from "../lib/env.ts";
import { defineCommand, EXIT, run, shared, UsageError } from "./_command.ts";
import { type Io, stdio } from "./_terminal/io.ts";
import { type Context, gateFor, loadContext, redactorFor } from "../lib/context.ts";
import type { Redactor } from "../lib/gate/secrets.ts";
import { chatSetup } from "../lib/sessions/setup.ts";
import { type Project, projectOf } from "../lib/paths.ts";
import {
  commandLine,
  describeManifest,
  findRowAnywhere,
  newestContinuable,
  type PickerRow,
  pickerRows,
  resumeCommand,
  type Rows,
  withHistoryStore,
} from "../lib/sessions/resume.ts";
import { SessionStore } from "../lib/sessions/records.ts";
import { runNative } from "./_terminal/native.ts";
import { pickRow } from "./_terminal/picker.ts";
import { openSession } from "./_terminal/open_session.ts";
import { safeIo } from "./_terminal/safe_io.ts";
import { safeText } from "../lib/safe_text.ts";

export const spec = defineCommand({
  name: "resume",
  summary: "pick a session back up, in logbook or in its own agent",
  arguments: "[ID]",
  argumentHelp: [
    ["ID", "a session id or unique prefix, from any project once captured (none: a picker)"],
  ],
  options: {
    continue: {
      type: "boolean",
      short: "c",
      shortInUsage: true,
      help: "the newest session that can be continued (manifest runs are passed over)",
    },
    print: { type: "boolean", help: "print the command that resumes it instead of running it" },
    ...shared({ incognito: "continue a logbook session without writing anything" }),
  },
  examples: ["logbook resume 3f2a", "logbook resume --continue --print"],
  maxPositionals: 1,
  permissions: { read: true, write: true, env: true, net: true, run: true },
});

/** Runs `resume` with `args`; returns the exit status. */
export async function main(
  args: string[],
  terminal: Io = stdio(),
  env: Env = Deno.env,
): Promise<number> {
  // Titles, ids and directories shown here come from transcripts; nothing is styled.
  const io = safeIo(terminal);
  return await run(spec, args, io, async ({ values, positionals }) => {
    const id = positionals[0];
    if (id !== undefined && values.continue) {
      throw new UsageError('Give a session id or "--continue", not both');
    }
    if (id === undefined && !values.continue && !Deno.stdin.isTerminal()) {
      throw new UsageError(
        'Missing the session id: give an id or "--continue", or run on a terminal to pick one',
      );
    }
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
    const redact = redactorFor(ctx);
    const { listed, named } = lookUp(ctx, id, { sessions, project, redact });
    reportLeftOut(io, listed);
    const row = await chosenRow(ctx, listed, named, {
      newest: values.continue === true,
      root: project.root,
    });
    if (!row) {
      io.err("Nothing resumed\n");
      return EXIT.failure;
    }
    return await resumeRow(io, ctx, row, {
      incognito,
      print: values.print === true,
      root: project.root,
      redact,
    });
  });
}

/** The session an id names, found, or why it is not. */
type Named = { row: PickerRow } | { err: unknown };

/**
 * This project's sessions, and the one `id` names: looked for here first, then among every
 * captured conversation (the id says which project), while the history store is open.
 */
function lookUp(
  ctx: Context,
  id: string | undefined,
  options: { sessions: SessionStore; project: Project; redact: Redactor },
): { listed: Rows; named: Named | undefined } {
  const { sessions, project, redact } = options;
  return withHistoryStore(ctx, (store, problem) => {
    const listed: Rows = {
      ...pickerRows(sessions, project, { store, redact }),
      ...(problem ? { storeProblem: problem } : {}),
    };
    if (id === undefined) return { listed, named: undefined };
    try {
      return {
        listed,
        named: { row: findRowAnywhere(listed, id, "resume", { sessions, store, redact }) },
      };
    } catch (err) {
      return { listed, named: { err } };
    }
  });
}

/**
 * The session to resume: with `newest` the newest that can be continued, else the one named, else
 * the one picked on the terminal (undefined when the picker is left without a choice).
 */
async function chosenRow(
  ctx: Context,
  listed: Rows,
  named: Named | undefined,
  options: { newest: boolean; root: string },
): Promise<PickerRow | undefined> {
  if (options.newest) {
    const row = newestContinuable(listed.rows);
    if (!row) {
      throw new Error(
        `Nothing to continue in "${options.root}": this project has no session that can be continued`,
      );
    }
    return row;
  }
  if (named) {
    if ("err" in named) throw named.err;
    return named.row;
  }
  if (listed.rows.length === 0) throw new Error(`No sessions to resume in "${options.root}"`);
  const gate = gateFor(ctx);
  return await pickRow(listed.rows, ctx.now(), {
    shown: (text) => safeText(gate.redact(text, { destination: "display" }).text),
  });
}

/**
 * Picks `row` back up: a manifest run is described, a logbook session opens in chat, another
 * agent's session runs that agent's own resume command (with `print`, the command is printed).
 */
async function resumeRow(
  io: Io,
  ctx: Context,
  row: PickerRow,
  options: { incognito: boolean; print: boolean; root: string; redact: Redactor },
): Promise<number> {
  const { incognito, print, redact } = options;
  if (row.manifest && row.record) {
    io.out(gateFor(ctx).redact(describeManifest(row.record), { destination: "display" }).text);
    return EXIT.ok;
  }
  if (row.agent === "logbook" && row.record && !print) {
    const setup = chatSetup(ctx, { incognito });
    // The last exchange, so the conversation picks up where the user left it.
    return await openSession(io, ctx, row.record, setup, {
      incognito,
      verb: "Resuming",
      recap: true,
    });
  }
  const { command, note } = resumeCommand(row, ctx.cwd, options.root);
  if (note !== null) io.err(redact(`note: ${note}\n`));
  if (print) {
    // A command to run here: its directory as it is, or it would not run.
    io.out(commandLine(command, ctx.cwd) + "\n");
    return EXIT.ok;
  }
  io.err(redact(`Resuming ${row.key} with: ${commandLine(command, ctx.cwd)}\n`));
  return await runNative(command, row.agent);
}

function reportLeftOut(io: Io, listed: Rows): void {
  if (listed.corrupt.length > 0) {
    const n = listed.corrupt.length;
    io.err(
      `note: ${n} session record${n === 1 ? "" : "s"} cannot be read and ${
        n === 1 ? "is" : "are"
      } left out: ${listed.corrupt.map((c) => `"${c.path}" (${c.reason})`).join(", ")}\n`,
    );
  }
  if (listed.storeProblem) {
    io.err(`note: other agents' sessions are left out: ${listed.storeProblem}\n`);
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
