#!/usr/bin/env -S deno run -R -W -E --allow-net=127.0.0.1
// `dashboard`: serves the local web dashboard on 127.0.0.1 and prints its URL with the access
// token; Ctrl-C or SIGTERM stops it gracefully.

import type { Env } from "../lib/env.ts";
import {
  defineCommand,
  EXIT,
  helpText,
  type Io,
  parseCommand,
  runCommand,
  stdio,
  UsageError,
  wholeNumber,
} from "../lib/cli.ts";
import { type Context, loadContext } from "../lib/context.ts";
import {
  configureStageMarkers,
  type StageMarkers,
  stageMarkersFromEnv,
} from "../lib/stage_markers.ts";
import {
  isLoopback,
  newToken,
  type RunningDashboard,
  serveDashboard,
} from "../servers/dashboard.ts";

/** The command's description: usage, options and example for `--help`. */
export const spec = defineCommand({
  name: "dashboard",
  summary: "serve the local web dashboard (search, conversations, status) on 127.0.0.1",
  usage: "logbook dashboard [--port N] [--host HOST] [--allow-remote]",
  options: {
    port: { type: "string" },
    host: { type: "string" },
    "allow-remote": { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  optionHelp: [
    ["--port N", 'port to listen on (default 8787 or config "dashboard.port"; 0 picks a free one)'],
    ["--host HOST", "address to listen on (default 127.0.0.1; others need --allow-remote)"],
    ["--allow-remote", "allow a --host that is not loopback (anyone with the token gets in)"],
    ["-h, --help", "show this help"],
  ],
  examples: ["logbook dashboard --port 8790"],
  maxPositionals: 0,
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
  return await runCommand(spec.name, io, async () => {
    const { values } = parseCommand(spec, args);
    if (values.help) {
      io.out(helpText(spec));
      return EXIT.ok;
    }
    const host = values.host ?? "127.0.0.1";
    if (!isLoopback(host) && !values["allow-remote"]) {
      throw new UsageError(
        `Refusing to listen on "${host}": it is not a loopback address; add --allow-remote to serve other machines`,
      );
    }
    const port = parsePort(values.port);
    const token = dashboardToken(env);
    const ctx = loadContext({ env });
    const markers = configureStageMarkers(stageMarkersFromEnv(env, { onStall: io.err }));
    const dashboard = listen({
      ctx,
      io,
      host,
      port: port ?? ctx.config.dashboard.port,
      token,
      markers,
    });
    await serveUntilStopped(dashboard, io, stop);
    return EXIT.ok;
  });
}

/** Shortest `LOGBOOK_DASHBOARD_TOKEN` accepted. */
const MIN_TOKEN = 16;

/** `--port`: a port number from 0 to 65535 (0 picks a free one), or undefined when not given. */
export function parsePort(value: string | undefined): number | undefined {
  return wholeNumber(value, "port", { min: 0, max: 65535, what: "port number" });
}

/** The access token: `LOGBOOK_DASHBOARD_TOKEN` when set (16 characters at least), else a fresh one. */
export function dashboardToken(env: Env): string {
  const token = env.get("LOGBOOK_DASHBOARD_TOKEN") || newToken();
  if (token.length < MIN_TOKEN) {
    throw new Error(`LOGBOOK_DASHBOARD_TOKEN is too short: use at least ${MIN_TOKEN} characters`);
  }
  return token;
}

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
      onError: (err) => io.err(`error: ${err instanceof Error ? err.stack ?? err.message : err}\n`),
    });
  try {
    try {
      return serve(port);
    } catch (err) {
      if (!(err instanceof Deno.errors.AddrInUse && options.anyPortIfBusy && port !== 0)) throw err;
      io.err(`Port ${port} is in use: serving on a free port instead\n`);
      return serve(0);
    }
  } catch (err) {
    if (err instanceof Deno.errors.AddrInUse) {
      throw new Error(
        `Cannot listen on ${host}:${port}: the port is in use (choose another with --port)`,
      );
    }
    if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
      throw new Error(
        `Cannot listen on "${host}": Deno was not allowed to (run it with --allow-net=${host})`,
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
  await untilStopped(stop);
  await dashboard.shutdown();
  io.err("Dashboard stopped\n");
}

/** Resolves when `stop` aborts, or on SIGINT or SIGTERM when no signal is given. */
function untilStopped(stop: AbortSignal | undefined): Promise<void> {
  if (stop) {
    return stop.aborted
      ? Promise.resolve()
      : new Promise((resolve) => stop.addEventListener("abort", () => resolve(), { once: true }));
  }
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  return new Promise((resolve) => {
    const done = () => {
      for (const signal of signals) Deno.removeSignalListener(signal, done);
      resolve();
    };
    for (const signal of signals) Deno.addSignalListener(signal, done);
  });
}

if (import.meta.main) Deno.exit(await main(Deno.args));
