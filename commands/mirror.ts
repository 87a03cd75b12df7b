#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E --allow-run=git
// `mirror`: a project's read-only copy of its own conversations inside the repository
// (`<project>/.logbook/conversations-<hash>.db`). `enable` turns it on (the user's choice, kept in
// the history store) and fills it now, `disable` turns it off and removes the file, `status` (the
// default) lists every mirror.

import type { Env } from "../lib/env.ts";
import { runCapture } from "../lib/capture/run.ts";
import { loadContext, openStore, redactorFor, storeExists } from "../lib/context.ts";
import { mapStrings } from "../lib/gate/secrets.ts";
import { projectOf, resolveFromUser } from "../lib/paths.ts";
import { setMirror } from "../lib/capture/mirrors.ts";
import { listMirrors, mirrorPath, type MirrorState, wantMirror } from "../lib/store/mirror.ts";
import { defineCommand, EXIT, run, shared, UsageError } from "./_command.ts";
import { type Io, stdio } from "./_terminal/io.ts";
import { safeIo } from "./_terminal/safe_io.ts";
import { safeJson } from "../lib/safe_json.ts";
import { plural } from "../lib/format.ts";

export const spec = defineCommand({
  name: "mirror",
  summary: "keep a read-only copy of a project's conversations in its .logbook/ folder",
  arguments: "[enable|disable|status]",
  argumentHelp: [
    ["enable", "ask for this project's mirror and fill it now (a capture runs)"],
    ["disable", "stop mirroring this project and remove its mirror file"],
    ["status", "list every mirror: project, state, size, path (the default)"],
  ],
  options: {
    ...shared({
      project: "the project (default: the one you are in)",
      json: "print the mirrors as JSON",
    }),
  },
  examples: ["logbook mirror enable", "logbook search --mirror cache"],
  maxPositionals: 1,
  permissions: { read: true, write: true, env: true, run: ["git"] },
  embed: [
    "lib/capture/batch_worker.ts",
    "lib/capture/known_worker.ts",
    "lib/store/_check_worker.ts",
    "lib/store/_scan_worker.ts",
  ],
});

/** Runs `mirror` with `args`; returns the exit status. */
export async function main(
  args: string[],
  terminal: Io = stdio(),
  env: Env = Deno.env,
): Promise<number> {
  // Project paths and titles may come from transcripts: everything shown is filtered.
  const io = safeIo(terminal);
  return await run(spec, args, io, async ({ values, positionals }) => {
    const action = positionals[0] ?? "status";
    if (!["enable", "disable", "status"].includes(action)) {
      throw new UsageError(`Unknown action "${action}": use enable, disable or status`);
    }
    const ctx = loadContext({ env, onStall: io.err, onWarning: io.err });
    // A project's path may hold a secret (a token in a directory's name): shown through the gate.
    const redact = redactorFor(ctx);
    const out = (text: string) => io.out(redact(text));
    const project = projectOf(resolveFromUser(values.project ?? ".", env));
    if (action === "status") {
      const mirrors = storeExists(ctx) ? withStore(ctx, listMirrors) : [];
      if (values.json) io.out(safeJson(mapStrings({ mirrors }, redact)) + "\n");
      else if (!mirrors.length) {
        io.out('No project mirrors. Run "logbook mirror enable" in a project to make one.\n');
      } else for (const mirror of mirrors) out(describe(mirror));
      return EXIT.ok;
    }
    const path = mirrorPath(project.root, project.key);
    if (action === "disable") {
      const { removed } = setMirror(project.root, project.key, false, env);
      out(`Mirroring is off for ${project.root}${removed ? `; removed ${path}` : ""}.\n`);
      if (storeExists(ctx)) {
        withStore(ctx, (store) => wantMirror(store, project.root, false, ctx.now()), false);
      }
      return EXIT.ok;
    }
    setMirror(project.root, project.key, true, env);
    const captured = storeExists(ctx);
    // The choice is kept in the store (created if need be): a repository cannot write there.
    const store = openStore(ctx);
    try {
      wantMirror(store, project.root, true, ctx.now());
      out(`Mirroring is on for ${project.root}: ${path}\n`);
      if (!captured) {
        io.out('Nothing is captured yet: "logbook reindex" captures and fills the mirror.\n');
        return EXIT.ok;
      }
      const result = await runCapture({ ctx, store, redact, command: "mirror" });
      if (result.status !== "captured") {
        io.out(`The next capture fills it (capture did not run now: ${result.status}).\n`);
        return EXIT.ok;
      }
      const state = listMirrors(store).find((m) => m.project === project.root);
      if (state) out(describe(state));
      return state?.state === "waiting" ? EXIT.failure : EXIT.ok;
    } finally {
      store.close();
    }
  });
}

function withStore<T>(
  ctx: ReturnType<typeof loadContext>,
  fn: (store: ReturnType<typeof openStore>) => T,
  readOnly = true,
): T {
  const store = openStore(ctx, { mustExist: true, readOnly });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

function describe(m: MirrorState): string {
  const counts = `${plural(m.conversations, "conversation")}, ${plural(m.records, "record")}`;
  const state = m.state === "waiting" ? `waiting: ${m.reason ?? "unknown reason"}` : m.state;
  return `${m.project}\n  ${state} · ${counts}\n  ${m.path}\n`;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
