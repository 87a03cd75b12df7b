#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E --allow-net --allow-run=git
// `mcp`: a stdio MCP server that lets an agent search and read the history logbook keeps (the
// same search, the same gate, read-only: it never writes the store, not even to upgrade it, and
// says to run `logbook reindex` when the store needs that first). stdout carries only the
// protocol; a stall line goes to stderr. Runs until the client closes stdin. `--allow-net` is for
// `search_history` with `team` (the team database). In a project with a mirror and no history
// store (a container or another account that has only the checkout) it answers from the mirror.

import type { Env } from "../lib/env.ts";
import { loadContext, openStore, storeExists } from "../lib/context.ts";
import { projectOf } from "../lib/paths.ts";
import { lstatOrUndefined } from "../lib/present.ts";
import { mirrorPath, openMirror } from "../lib/store/mirror.ts";
import { defineCommand, EXIT, run } from "./_command.ts";
import { type Io, stdio } from "./_terminal/io.ts";
import { safeText } from "../lib/safe_text.ts";

export const spec = defineCommand({
  name: "mcp",
  summary: "serve your history to agents over MCP (stdio): search, read and list conversations",
  options: {
    mirror: {
      type: "boolean",
      help: "answer from this project's mirror (.logbook/) instead of the history store " +
        "(without a history store, a project's mirror answers on its own)",
    },
  },
  examples: ["claude mcp add logbook -- logbook mcp"],
  maxPositionals: 0,
  permissions: { read: true, write: true, env: true, net: true, run: ["git"] },
});

/** Runs `mcp` until the client closes stdin (or `stop` aborts); returns the exit status. */
export async function main(
  args: string[],
  io: Io = stdio(),
  env: Env = Deno.env,
  stop?: AbortSignal,
): Promise<number> {
  return await run(spec, args, io, async ({ values }) => {
    const ctx = loadContext({ env, onStall: io.err, onWarning: io.err });
    // The SDK is loaded only here: no other command pays for it.
    const [{ LineTransport }, { createMcpServer }, { HistoryTools }] = await Promise.all([
      import("../servers/mcp/stdio.ts"),
      import("../servers/mcp/server.ts"),
      import("../servers/mcp/tools.ts"),
    ]);
    const here = projectOf(ctx.cwd);
    // The history store when there is one: it holds every project, and is current. A mirror is
    // for where there is none.
    const mirror = values.mirror === true ||
      (!storeExists(ctx) && lstatOrUndefined(mirrorPath(here.root, here.key)) !== undefined);
    if (mirror && !values.mirror) {
      io.err(
        `note: no history store here; answering from this project's mirror ` +
          `"${safeText(mirrorPath(here.root, here.key))}"\n`,
      );
    }
    const tools = new HistoryTools(
      ctx,
      mirror
        ? () => openMirror(here.root, here.key, ctx.env)
        : () => openStore(ctx, { mustExist: true, readOnly: true, upgrade: false }),
    );
    const server = createMcpServer(tools);
    const closed = Promise.withResolvers<void>();
    // Ends when stdin does; a line that is not a message is answered with an error, and skipped.
    const transport = new LineTransport(
      Deno.stdin.readable,
      new WritableStream({ write: (bytes) => io.outBytes(bytes) }),
    );
    transport.onclose = () => closed.resolve();
    stop?.addEventListener("abort", () => closed.resolve(), { once: true });
    await server.connect(transport);
    try {
      await closed.promise;
    } finally {
      await server.close().catch(() => {});
      await tools.close();
    }
    return EXIT.ok;
  });
}

if (import.meta.main) Deno.exit(await main(Deno.args));
