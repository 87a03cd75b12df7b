#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E
// `forget`: removes chosen conversations from the history store for good — records, index
// entries and conversation rows — and leaves a tombstone so capture does not bring them back.

import { defineCommand, EXIT, type Parsed, run, shared, UsageError } from "./_command.ts";
import { type Ask, terminalAsk } from "./_terminal/ask.ts";
import { type Io, stdio, styler } from "./_terminal/io.ts";
import { formatBytes, plural } from "../lib/format.ts";
import { type Context, loadContext, openStore, redactorFor } from "../lib/context.ts";
import type { Env } from "../lib/env.ts";
import { projectOfUserPath } from "../lib/paths.ts";
import { forget, type ForgetCriteria, type ForgetResult } from "../lib/store/forget.ts";
import { parseWhen } from "../lib/when.ts";
import { safeIo } from "./_terminal/safe_io.ts";
import { safeJson } from "../lib/safe_json.ts";
import { safeText } from "../lib/safe_text.ts";

export const spec = defineCommand({
  name: "forget",
  summary: "remove conversations from the history store for good",
  arguments: "[<conversation-id>...]",
  options: {
    ...shared({ project: "every conversation of this directory's project (`.` for yours)" }),
    before: {
      type: "string",
      value: "WHEN",
      help: "conversations whose last record is older than WHEN (ISO, 30d, 2w, …)",
    },
    "dry-run": { type: "boolean", short: "n", help: "list what would go and change nothing" },
    yes: {
      type: "boolean",
      short: "y",
      help: "do not ask first (on a terminal forget lists what goes and asks)",
    },
    ...shared({ json: "print the result as JSON" }),
  },
  examples: ["logbook forget --project . --before 90d --dry-run"],
  permissions: { read: true, write: true, env: true },
});

/** Runs `forget` with `args`; returns the exit status. */
export async function main(
  args: string[],
  io: Io = stdio(),
  env: Env = Deno.env,
  ask: Ask | null = terminalAsk(),
): Promise<number> {
  return await run(spec, args, safeIo(io), ({ values, positionals }) => {
    const ctx = loadContext({ env, onStall: io.err, onWarning: io.err });
    const criteria = criteriaOf(values, positionals, ctx, env);
    const dryRun = values["dry-run"] === true;
    // On a terminal, a person sees what goes before it goes; a script says --yes or has no terminal.
    const confirm = !dryRun && !values.yes && ask !== null;
    const store = openStore(ctx, { mustExist: true, readOnly: dryRun });
    try {
      const options = { now: ctx.now(), redact: redactorFor(ctx) };
      let result = forget(store, criteria, { ...options, dryRun: dryRun || confirm });
      const s = styler(io.color);
      let shown = false;
      if (confirm && result.conversations.length) {
        for (const line of itemLines(result, s)) io.err(line);
        const answer = ask(`\nForget ${total(result)} for good? [y/N]`);
        if (!/^\s*y(es)?\s*$/i.test(answer ?? "")) {
          io.err("Nothing was forgotten\n");
          return EXIT.failure;
        }
        // Exactly what was listed goes, even if a capture added a match since.
        const ids = result.conversations.map((item) => item.conversation);
        result = forget(store, { ids }, { ...options, dryRun: false });
        shown = io.outIsTerminal;
      }
      return printResult(result, io, s, { json: values.json === true, shown });
    } finally {
      store.close();
    }
  });
}

/**
 * What the command line says to forget: ids, a project, a time. Throws UsageError for a `--before`
 * that is not a time and when it names none of them.
 */
function criteriaOf(
  values: Parsed<typeof spec.options>["values"],
  positionals: string[],
  ctx: Context,
  env: Env,
): ForgetCriteria {
  const criteria: ForgetCriteria = {};
  if (positionals.length) criteria.ids = positionals;
  if (values.project !== undefined) {
    criteria.project = projectOfUserPath(values.project, env).root;
  }
  if (values.before !== undefined) {
    try {
      criteria.before = parseWhen(values.before, ctx.now());
    } catch (err) {
      throw new UsageError(`Invalid value for "--before": ${(err as Error).message}`);
    }
  }
  if (!criteria.ids && criteria.project === undefined && criteria.before === undefined) {
    throw new UsageError("Say what to forget: conversation ids, --project or --before");
  }
  return criteria;
}

/**
 * Prints what was forgotten (or would be): as JSON, or a line per conversation (unless the
 * confirmation listed them on this terminal already) and the totals. Returns the exit status.
 */
function printResult(
  result: ForgetResult,
  io: Io,
  s: ReturnType<typeof styler>,
  options: { json: boolean; shown: boolean },
): number {
  if (options.json) {
    io.out(safeJson(result) + "\n");
    return reportUnreached(result, io, s);
  }
  if (!result.conversations.length) {
    io.out("Nothing to forget: no conversation matches\n");
    return EXIT.ok;
  }
  if (!options.shown) { for (const line of itemLines(result, s)) io.out(line); }
  io.out(
    result.dryRun
      ? `\nWould forget ${total(result)}; run again without --dry-run to do it\n`
      : `\nForgot ${total(result)}; the store went from ${
        formatBytes(result.storeBytes.before)
      } to ${
        formatBytes(result.storeBytes.after)
      }. They will not be captured again while their sources exist\n`,
  );
  if (!result.dryRun && !result.walEmptied) {
    io.err(
      `${
        s.yellow("warning:")
      } another process was reading the store: old copies of the forgotten pages stay in "history.db-wal" until the last process using the store closes it\n`,
    );
  }
  return reportUnreached(result, io, s);
}

/**
 * What was forgotten but stays in a mirror that could not be opened: an error for each such
 * mirror, and a failure, for it is not done.
 */
function reportUnreached(result: ForgetResult, io: Io, s: ReturnType<typeof styler>): number {
  for (const m of result.mirrorsUnreached) {
    io.err(
      `${s.red("error:")} the project mirror "${safeText(m.path)}" could not be opened ` +
        `(${safeText(m.reason)}): it still holds what was forgotten. Capture removes it ` +
        `there once it can open the mirror, or delete that file (a mirror is only a copy)\n`,
    );
  }
  return result.mirrorsUnreached.length ? EXIT.failure : EXIT.ok;
}

function itemLines(result: ForgetResult, s: ReturnType<typeof styler>): string[] {
  return result.conversations.map((item) => {
    const via = item.via ? s.dim(` (subagent of ${safeText(item.via)})`) : "";
    return `${result.dryRun ? "would forget" : "forgot"}  ${s.cyan(safeText(item.conversation))}  ${
      safeText(item.title ?? "")
    }${via}\n`;
  });
}

/** `3 conversations (120 records, 1.2 MB)`, singular where there is one. */
function total(result: ForgetResult): string {
  return `${plural(result.conversations.length, "conversation")} (${
    plural(result.records, "record")
  }, ${formatBytes(result.bytes)})`;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
