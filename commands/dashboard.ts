#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E --allow-net=127.0.0.1 --allow-run=git
// `dashboard`: serves the local web dashboard on 127.0.0.1 and prints its URL with the access
// token; Ctrl-C or SIGTERM stops it gracefully.

import type { Env } from "../lib/env.ts";
import { loadContext } from "../lib/context.ts";
import { dashboardToken, isLoopback } from "../servers/dashboard.ts";
import { defineCommand, EXIT, parsePort, run, shared, UsageError } from "./_command.ts";
import { type Io, stdio } from "./_terminal/io.ts";
import { listen, serveUntilStopped } from "./_terminal/serve.ts";

/** The command's description: usage, options and example for `--help`. */
export const spec = defineCommand({
  name: "dashboard",
  summary: "serve the local web dashboard (search, conversations, status) on 127.0.0.1",
  options: {
    ...shared({
      port: 'port to listen on (default 8787 or config "dashboard.port"; 0 picks a free one)',
    }),
    host: {
      type: "string",
      value: "HOST",
      help: "address to listen on (default 127.0.0.1; others need --allow-remote)",
    },
    "allow-remote": {
      type: "boolean",
      help: "allow a --host that is not loopback (anyone with the token gets in)",
    },
  },
  examples: ["logbook dashboard --port 8790"],
  maxPositionals: 0,
  permissions: { read: true, write: true, env: true, net: ["127.0.0.1"], run: ["git"] },
  embed: [
    "lib/capture/batch_worker.ts",
    "lib/capture/known_worker.ts",
    "lib/store/_check_worker.ts",
    "lib/store/_scan_worker.ts",
    "lib/store/_search_worker.ts",
  ],
});

/**
 * Runs `dashboard` with `args` until `stop` is aborted (default: SIGINT or SIGTERM); returns the
 * exit status.
 */
export async function main(
  args: string[],
  io: Io = stdio(),
  env: Env = Deno.env,
  stop?: AbortSignal,
): Promise<number> {
  return await run(spec, args, io, async ({ values }) => {
    const host = values.host ?? "127.0.0.1";
    if (!isLoopback(host) && !values["allow-remote"]) {
      throw new UsageError(
        `Refusing to listen on "${host}": it is not a loopback address; add --allow-remote to serve other machines`,
      );
    }
    const port = parsePort(values.port);
    const token = dashboardToken(env);
    // The stall line of a step that hangs goes to this terminal's stderr.
    const ctx = loadContext({ env, onStall: io.err, onWarning: io.err });
    const dashboard = listen({
      ctx,
      io,
      host,
      port: port ?? ctx.config.dashboard.port,
      token,
      markers: ctx.markers,
    });
    await serveUntilStopped(dashboard, io, stop);
    return EXIT.ok;
  });
}

if (import.meta.main) Deno.exit(await main(Deno.args));
