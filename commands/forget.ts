#!/usr/bin/env -S deno run -R -W -E
// `forget`: removes chosen conversations from the history store for good — records, index
// entries and conversation rows — and leaves a tombstone so capture does not bring them back.

import { defineCommand, EXIT, run, shared, UsageError } from "./_command.ts";
import { type Io, stdio, styler } from "./_terminal/io.ts";
import { formatBytes } from "../lib/format.ts";
import { loadContext, openStore, redactorFor } from "../lib/context.ts";
import type { Env } from "../lib/env.ts";
import { projectOfUserPath } from "../lib/paths.ts";
import { forget, type ForgetCriteria } from "../lib/store/forget.ts";
import { parseWhen } from "../lib/when.ts";
import { safeIo } from "./_terminal/safe_io.ts";
import { safeJson } from "./_terminal/safe_json.ts";
import { safeText } from "./_terminal/safe_text.ts";

export const spec = defineCommand({
  name: "forget",
  summary: "remove conversations from the history store for good",
  usage:
    "logbook forget [<conversation-id>...] [--project DIR] [--before WHEN] [--dry-run] [--json]",
  options: {
    ...shared("project"),
    before: { type: "string" },
    "dry-run": { type: "boolean", short: "n" },
    ...shared("json"),
  },
  optionHelp: [
    ["--project DIR", "every conversation of this directory's project (`.` for yours)"],
    ["--before WHEN", "conversations whose last record is older than WHEN (ISO, 30d, 2w, …)"],
    ["-n, --dry-run", "list what would go and change nothing"],
    ["--json", "print the result as JSON"],
  ],
  examples: ["logbook forget --project . --before 90d --dry-run"],
});

/** Runs `forget` with `args`; returns the exit status. */
export async function main(
  args: string[],
  io: Io = stdio(),
  env: Env = Deno.env,
): Promise<number> {
  return await run(spec, args, safeIo(io), ({ values, positionals }) => {
    const ctx = loadContext({ env, onStall: io.err });
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
    const store = openStore(ctx, { mustExist: true, readOnly: values["dry-run"] === true });
    try {
      const result = forget(store, criteria, {
        dryRun: values["dry-run"] === true,
        now: ctx.now(),
        redact: redactorFor(ctx),
      });
      if (values.json) {
        io.out(safeJson(result) + "\n");
        return EXIT.ok;
      }
      const s = styler(io.color);
      if (!result.conversations.length) {
        io.out("Nothing to forget: no conversation matches\n");
        return EXIT.ok;
      }
      for (const item of result.conversations) {
        const via = item.via ? s.dim(` (subagent of ${safeText(item.via)})`) : "";
        io.out(
          `${result.dryRun ? "would forget" : "forgot"}  ${s.cyan(safeText(item.conversation))}  ${
            safeText(item.title ?? "")
          }${via}\n`,
        );
      }
      const total = `${result.conversations.length} conversations (${result.records} records, ${
        formatBytes(result.bytes)
      })`;
      io.out(
        result.dryRun
          ? `\nWould forget ${total}; run again without --dry-run to do it\n`
          : `\nForgot ${total}; the store went from ${formatBytes(result.storeBytes.before)} to ${
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
      return EXIT.ok;
    } finally {
      store.close();
    }
  });
}

if (import.meta.main) Deno.exit(await main(Deno.args));
