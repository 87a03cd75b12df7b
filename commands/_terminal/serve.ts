// Serving the dashboard from a terminal, for `dashboard` and `start`: binding errors turned into
// what to do, the URL with its token printed, and serving until Ctrl-C or SIGTERM.

import { stopSignals } from "../_command.ts";
import type { Context } from "../../lib/context.ts";
import type { StageMarkers } from "../../lib/stage_markers.ts";
import {
  isLoopback,
  ListenError,
  type RunningDashboard,
  serveDashboard,
} from "../../servers/dashboard.ts";
import type { Io } from "./io.ts";

/** Where and how `listen` serves. */
export interface ListenOptions {
  ctx: Context;
  io: Io;
  host: string;
  port: number;
  token: string;
  markers: StageMarkers;
  /** When the port is in use, serve on a free one instead (for a port nobody asked for). */
  anyPortIfBusy?: boolean;
  /** The data dir is `start`'s demo: the dashboard says so. */
  demo?: boolean;
}

/**
 * Starts serving the dashboard (see `serveDashboard`), with the errors of binding turned into
 * messages that say what to do; unexpected errors of requests go to `io.err`.
 */
export function listen(options: ListenOptions): RunningDashboard {
  const { ctx, io, host, port } = options;
  const serve = (on: number) =>
    serveDashboard({
      ctx,
      hostname: host,
      port: on,
      token: options.token,
      markers: options.markers,
      ...(options.demo ? { demo: true } : {}),
      onError: (err) => io.err(`error: ${err instanceof Error ? err.stack ?? err.message : err}\n`),
    });
  const inUse = (err: unknown) =>
    err instanceof ListenError && err.cause instanceof Deno.errors.AddrInUse;
  try {
    try {
      return serve(port);
    } catch (err) {
      if (!(inUse(err) && options.anyPortIfBusy && port !== 0)) throw err;
      io.err(`Port ${port} is in use: serving on a free port instead\n`);
      return serve(0);
    }
  } catch (err) {
    // Only binding: the data dir's errors (the dashboard's lock is there) say what they are.
    if (!(err instanceof ListenError)) throw err;
    if (inUse(err)) {
      throw new Error(
        `Cannot listen on ${host}:${port}: the port is in use (choose another with --port)`,
      );
    }
    if (err.cause instanceof Deno.errors.NotCapable) {
      throw new Error(
        `Cannot listen on "${host}": Deno was not allowed to (run it with --allow-net=${host})`,
      );
    }
    if (err.cause instanceof Deno.errors.PermissionDenied) {
      throw new Error(
        `Cannot listen on ${host}:${port}: this user may not use the port (below 1024 only ` +
          "privileged users may); choose another with --port",
      );
    }
    throw err;
  }
}

/**
 * Prints the dashboard's URL with the token (stdout) and how to stop it (stderr), serves until
 * `stop` aborts (default: SIGINT or SIGTERM), then shuts it down.
 */
export async function serveUntilStopped(
  dashboard: RunningDashboard,
  io: Io,
  stop?: AbortSignal,
): Promise<void> {
  io.out(`logbook dashboard: ${dashboard.urlWithToken}\n`);
  io.err(
    `Serving on ${dashboard.url} (open the link above; it sets a cookie). Ctrl-C stops it.\n`,
  );
  if (!isLoopback(dashboard.hostname)) {
    io.err(
      `warning: listening on "${dashboard.hostname}": other machines can reach it with the token\n`,
    );
  }
  // The signals are listened to until the dashboard is down (see `stopSignals`).
  const until = stop ? { signal: stop, release() {} } : stopSignals();
  try {
    await aborted(until.signal);
    await dashboard.shutdown();
  } finally {
    until.release();
  }
  io.err("Dashboard stopped\n");
}

/** Resolves when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<void> {
  return signal.aborted
    ? Promise.resolve()
    : new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}
