#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E --allow-run
// `forget`: removes chosen conversations from the history store for good — records, index
// entries and conversation rows — and leaves a tombstone so capture does not bring them back.
// Their words leave the text index's segments in a process of its own (`forget --finish`, started
// here), a minute's work at ten gigabytes: see lib/store/scrub.ts.

import { defineCommand, EXIT, type Parsed, run, shared, UsageError } from "./_command.ts";
import { type Ask, terminalAsk } from "./_terminal/ask.ts";
import { type Io, stdio, styler } from "./_terminal/io.ts";
import { formatBytes, plural } from "../lib/format.ts";
import { type Context, loadContext, openStore, redactorFor } from "../lib/context.ts";
import type { Env } from "../lib/env.ts";
import { projectOfUserPath } from "../lib/paths.ts";
import { forget, type ForgetCriteria, type ForgetResult } from "../lib/store/forget.ts";
import { SCRUB_HOLDER, scrubIndexYielding, scrubPendingSince } from "../lib/store/scrub.ts";
import { isLockHeld, tryLock, waitLock } from "../lib/lock.ts";
import { join } from "../lib/path.ts";
import { runFlags } from "../lib/run_flags.ts";
import { canStat } from "../lib/present.ts";
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
    finish: {
      type: "boolean",
      help:
        "take what forgets left in the text index out of it now, and wait (forget starts this in the background itself)",
    },
    yes: {
      type: "boolean",
      short: "y",
      help: "do not ask first (on a terminal forget lists what goes and asks)",
    },
    ...shared({ json: "print the result as JSON" }),
  },
  examples: ["logbook forget --project . --before 90d --dry-run", "logbook forget --finish"],
  permissions: { read: true, write: true, env: true, run: true },
});

/**
 * Starts what takes forgotten words out of the text index (`forget --finish`) in a process of its
 * own, left running after this one ends, with the data and config folders of `ctx`. Returns its
 * pid, or null when it could not be started (then the caller does the work itself).
 */
export type Background = (ctx: Context) => Promise<number | null>;

/** Runs `forget` with `args`; returns the exit status. */
export async function main(
  args: string[],
  io: Io = stdio(),
  env: Env = Deno.env,
  ask: Ask | null = terminalAsk(),
  background: Background | null = defaultBackground(),
): Promise<number> {
  return await run(spec, args, safeIo(io), async ({ values, positionals }) => {
    const ctx = loadContext({ env, onStall: io.err, onWarning: io.err });
    const finishing = values.finish === true;
    if (finishing && !positionals.length && values.project === undefined && !values.before) {
      return await finish(ctx, io, values.json === true);
    }
    const criteria = criteriaOf(values, positionals, ctx, env);
    const dryRun = values["dry-run"] === true;
    // On a terminal, a person sees what goes before it goes; a script says --yes or has no terminal.
    const confirm = !dryRun && !values.yes && ask !== null;
    const store = openStore(ctx, { mustExist: true, readOnly: dryRun });
    try {
      // From the command line the index's scrub is left to a process of its own (about a minute
      // at ten gigabytes); called in-process (tests, the dashboard) it is done before returning.
      const later = !finishing && background !== null;
      const options = {
        now: ctx.now(),
        redact: redactorFor(ctx),
        scrub: later ? "later" as const : "now" as const,
        // A scrub running elsewhere (a forget before this one left it) waits while this one works.
        place: ctx.paths,
      };
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
      let scrubbing: number | null = null;
      if (!result.dryRun && !result.indexScrubbed) {
        store.close();
        scrubbing = await background!(ctx);
        if (scrubbing === null) {
          // Not started (no permission to run it, say): done here, as before.
          const lock = await waitLock(ctx.paths.run, ctx.paths.root, "capture", SCRUB_HOLDER);
          try {
            const again = openStore(ctx, { mustExist: true });
            try {
              await scrubIndexYielding(again, { forgets: ctx.paths });
            } finally {
              again.close();
            }
          } finally {
            lock.release();
          }
          result = { ...result, indexScrubbed: true };
        }
      }
      return printResult(result, io, s, { json: values.json === true, shown, scrubbing });
    } finally {
      store.close();
    }
  });
}

/**
 * `forget --finish`: waits for any capture or scrub running (they hold the capture lock), then
 * merges the text index until nothing forgotten is left in it.
 */
async function finish(ctx: Context, io: Io, json: boolean): Promise<number> {
  // The store first: a data dir that is not there (any more) is said so, and nothing is made. It
  // is closed before the lock is released: whoever waited for the lock finds its files settled.
  const store = openStore(ctx, { mustExist: true });
  try {
    const tried = tryLock(ctx.paths.run, ctx.paths.root, "capture", SCRUB_HOLDER);
    if ("holder" in tried) {
      const who = tried.holder
        ? `pid ${tried.holder.pid}, ${tried.holder.command}`
        : "another process";
      io.err(`Waiting for the work holding the store (${who}) to finish\n`);
    }
    const lock = "held" in tried
      ? tried.held
      : await waitLock(ctx.paths.run, ctx.paths.root, "capture", SCRUB_HOLDER);
    try {
      const pending = scrubPendingSince(store) !== null;
      // A step of the stage markers, so a scrub that never ends shows among the unclosed ones.
      const scrubbed = await ctx.markers.operation("forget").stage(
        "scrub",
        () =>
          scrubIndexYielding(store, {
            forgets: ctx.paths,
            onWait: () => io.err("Waiting for a forget running beside this to finish\n"),
          }),
      );
      const result = scrubbed ?? { steps: 0, pagesFreed: 0, walEmptied: true };
      if (json) {
        io.out(safeJson({ pending, ...result }) + "\n");
      } else {
        io.out(
          pending
            ? "The text index holds nothing forgotten any more\n"
            : "Nothing to finish: the text index holds nothing forgotten\n",
        );
      }
      return EXIT.ok;
    } finally {
      store.close();
      lock.release();
    }
  } finally {
    store.close();
  }
}

/** The real `Background`: this command run again with `--finish`, detached from this process. */
const inBackground: Background = async (ctx) => {
  try {
    const exe = Deno.execPath();
    const compiled = !/(^|\/)deno(\.exe)?$/.test(exe);
    const dispatcher = Deno.mainModule.endsWith("/commands/logbook.ts");
    let args: string[];
    if (compiled) {
      args = [...(dispatcher ? ["forget"] : []), "--finish"];
    } else {
      const config = new URL("../deno.json", import.meta.url);
      args = [
        "run",
        "--quiet",
        ...(canStat(pathOf(config)) ? [`--config=${pathOf(config)}`] : []),
        ...runFlags(spec.permissions),
        pathOf(new URL(import.meta.url)), // this file
        "--finish",
      ];
    }
    const child = new Deno.Command(exe, {
      args,
      env: {
        LOGBOOK_DATA_DIR: ctx.paths.root,
        LOGBOOK_CONFIG_DIR: ctx.configDir,
        LOGBOOK_STAGE_MARKERS_PATH: ctx.paths.stageMarkers,
      },
      stdin: "null",
      stdout: "null",
      stderr: "null",
      detached: true,
    }).spawn();
    let ended = false;
    child.status.then(() => ended = true, () => ended = true);
    // Returned once it holds the capture lock (or waits behind whoever does): a `forget --finish`
    // run after this one then waits for it. Bounded, should it never get that far.
    const lock = join(ctx.paths.run, "capture.lock");
    for (const until = Date.now() + 5_000; !ended && !isLockHeld(lock) && Date.now() < until;) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    child.unref();
    return child.pid;
  } catch {
    return null;
  }
};

/** The path of a `file:` URL (node:url's would cost this command 20 ms of loading). */
function pathOf(url: URL): string {
  return decodeURIComponent(url.pathname);
}

/**
 * The scrub runs in the background only for a process that is a logbook command (this file or
 * the `logbook` dispatcher, from sources or compiled); called from anything else (a test), the
 * work is done before `main` returns.
 */
function defaultBackground(): Background | null {
  return /\/commands\/(forget|logbook)\.ts$/.test(Deno.mainModule) ? inBackground : null;
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
  options: { json: boolean; shown: boolean; scrubbing: number | null },
): number {
  if (options.json) {
    io.out(safeJson({ ...result, scrubbingPid: options.scrubbing }) + "\n");
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
  if (options.scrubbing !== null) {
    io.out(
      "No search finds them. Their words leave the text index in the background\n" +
        `(pid ${options.scrubbing}; a minute at ten gigabytes): "logbook forget --finish" waits for it\n`,
    );
  }
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
