#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E --allow-net --allow-run
// `fork`: copies a session (this project's, or any captured one by its id from anywhere) into a new
// one, the source left as it was: another agent's conversation in that agent's own fork when no
// model is configured (`claude --resume <id> --fork-session`, `codex fork`, `opencode --fork`),
// else, or when asked, into a logbook session opened in chat, which any model continues.

import type { Env } from "../lib/env.ts";
import { defineCommand, EXIT, run, shared, UsageError } from "./_command.ts";
import { type Io, stdio } from "./_terminal/io.ts";
import { type Context, gateFor, loadContext, redactorFor } from "../lib/context.ts";
import type { Redactor } from "../lib/gate/secrets.ts";
import { ModelError } from "../lib/sessions/model.ts";
import { type ChatSetup, chatSetup } from "../lib/sessions/setup.ts";
import { type Project, projectOf } from "../lib/paths.ts";
import { forkRow } from "../lib/sessions/fork.ts";
import {
  commandLine,
  findRowAnywhere,
  forkCommand,
  type PickerRow,
  pickerRows,
  resumeHint,
  type RunnableCommand,
  withHistoryStore,
} from "../lib/sessions/resume.ts";
import { type SessionRecord, SessionStore } from "../lib/sessions/records.ts";
import { displayName, noModelForkNote, runNative } from "./_terminal/native.ts";
import { existingCwd, openSession } from "./_terminal/open_session.ts";
import { safeIo } from "./_terminal/safe_io.ts";

export const spec = defineCommand({
  name: "fork",
  summary: "copy a session into a new one and open it (the source is left as it was)",
  arguments: "<id>",
  argumentHelp: [["ID", "a session id or unique prefix, from any project once captured"]],
  options: {
    "into-logbook": {
      type: "boolean",
      help: "fork into a logbook session, opened in chat with your model (on a terminal it " +
        "needs one); without it, another agent's conversation forks in that agent when no " +
        "model is configured",
    },
    print: {
      type: "boolean",
      help: "print the command that forks it in its own agent instead of running it",
    },
    ...shared({ incognito: "fork into a logbook session and open it without writing anything" }),
  },
  examples: ["logbook fork claude:3f2a9c1e", "logbook fork codex:7e1c --print"],
  maxPositionals: 1,
  permissions: { read: true, write: true, env: true, net: true, run: true },
});

/** How a fork goes: in the agent's own command, or into a logbook session. */
type Fork = { native: RunnableCommand; row: PickerRow } | { record: SessionRecord };

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
    const print = values.print === true;
    const incognito = values.incognito ?? false;
    const intoLogbook = values["into-logbook"] === true || incognito;
    if (print && intoLogbook) {
      const other = incognito ? "--incognito" : "--into-logbook";
      throw new UsageError(`Options "--print" and "${other}" cannot be used together`);
    }
    const ctx = loadContext({
      env,
      agent: "logbook",
      incognito,
      onStall: io.err,
      onWarning: io.err,
    });
    const project = projectOf(ctx.cwd);
    const sessions = new SessionStore(ctx.paths, { incognito });
    const redact = redactorFor(ctx);
    const { setup, noModel } = modelToOpen(ctx, { incognito, intoLogbook, print });
    const fork = forkOf(ctx, id, { sessions, project, redact, print, noModel });
    if ("native" in fork) return await forkNatively(io, ctx, fork, { print, redact });
    const record = fork.record;
    if (setup) return await openSession(io, ctx, record, setup, { incognito, verb: "Forked as" });
    io.out(`${record.id}\n`);
    io.err(redact(
      incognito
        ? `Forked as "${record.title}" in incognito: nothing was recorded\n`
        : `Forked as "${record.title}". Resume with: ${
          resumeHint(record.id, existingCwd(io, record.cwd, ctx.cwd, redact), ctx.cwd)
        }\n`,
    ));
    return EXIT.ok;
  });
}

/**
 * The model a fork opens with. On a terminal the fork opens, and a logbook session opens in chat,
 * which needs the model: without one, another agent's conversation forks in that agent (unless a
 * logbook session is asked for), and nothing is written. Off a terminal a logbook fork is only
 * written.
 */
function modelToOpen(
  ctx: Context,
  options: { incognito: boolean; intoLogbook: boolean; print: boolean },
): { setup: ChatSetup | undefined; noModel: ModelError | undefined } {
  if (!Deno.stdin.isTerminal() || options.print) return { setup: undefined, noModel: undefined };
  try {
    return { setup: chatSetup(ctx, { incognito: options.incognito }), noModel: undefined };
  } catch (err) {
    if (!(err instanceof ModelError && err.reason === "config") || options.intoLogbook) throw err;
    return { setup: undefined, noModel: err };
  }
}

/**
 * How the session `id` names forks: with `print` or without a model, in its agent's own command;
 * else copied into a new logbook session, written here.
 */
function forkOf(
  ctx: Context,
  id: string,
  options: {
    sessions: SessionStore;
    project: Project;
    redact: Redactor;
    print: boolean;
    noModel: ModelError | undefined;
  },
): Fork {
  const { sessions, project, redact, print, noModel } = options;
  return withHistoryStore(ctx, (store): Fork => {
    const listed = pickerRows(sessions, project, { store, redact });
    const row = findRowAnywhere(listed, id, "fork", { sessions, store, redact });
    if (print || noModel) {
      const native = forkCommand(row, ctx.cwd, project.root);
      if (native) return { native, row };
      // A logbook session, or a conversation of an agent whose CLI cannot fork, forks into
      // logbook only, which needs the model to open.
      if (noModel) throw noModel;
      throw new Error(
        row.agent === "logbook"
          ? `Cannot print a command that forks "${row.key}": a logbook session forks into ` +
            `logbook only ("logbook fork ${row.nativeId}")`
          : `Cannot print a command that forks "${row.key}": ${displayName(row.agent)} has no ` +
            `fork of its own; "logbook fork ${row.key}" forks it into a logbook session`,
      );
    }
    const gate = gateFor(ctx);
    return { record: forkRow({ sessions, store, row, gate, now: ctx.now(), query: id }) };
  });
}

/** Runs the agent's own command that forks the session (with `print`, prints it instead). */
async function forkNatively(
  io: Io,
  ctx: Context,
  fork: { native: RunnableCommand; row: PickerRow },
  options: { print: boolean; redact: Redactor },
): Promise<number> {
  const { command, note } = fork.native;
  const { redact } = options;
  if (note !== null) io.err(redact(`note: ${note}\n`));
  if (options.print) {
    // A command to run here: its directory as it is, or it would not run.
    io.out(commandLine(command, ctx.cwd) + "\n");
    return EXIT.ok;
  }
  io.err(noModelForkNote(fork.row));
  io.err(redact(`Forking ${fork.row.key} with: ${commandLine(command, ctx.cwd)}\n`));
  return await runNative(command, fork.row.agent, "fork");
}

if (import.meta.main) Deno.exit(await main(Deno.args));
