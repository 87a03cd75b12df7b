// Serves the dashboard app with `Deno.serve` on a loopback address, holding `run/dashboard.lock`
// (so `delete-user-data` can find and stop it) until it shuts down.

import { Buffer } from "node:buffer";
import type { Context } from "../lib/context.ts";
import type { Env } from "../lib/env.ts";
import { type LockInfo, tryLock } from "../lib/lock.ts";
import type { StageMarkers } from "../lib/stage_markers.ts";
import { createApp } from "./app.ts";
import type { Services } from "./_deps.ts";

/** Thrown when another dashboard holds the lock for this data dir. */
export class DashboardRunningError extends Error {
  override name = "DashboardRunningError";
  constructor(readonly holder: LockInfo | null) {
    super(
      `Another dashboard is already running for this data dir${
        holder ? ` (pid ${holder.pid})` : ""
      }`,
    );
  }
}

/** Thrown when the address cannot be bound; `cause` is Deno's error (`AddrInUse`, `NotCapable`…). */
export class ListenError extends Error {
  override name = "ListenError";
  constructor(readonly hostname: string, readonly port: number, cause: unknown) {
    super(
      `Cannot listen on ${hostname}:${port}: ${cause instanceof Error ? cause.message : cause}`,
      { cause },
    );
  }
}

/** How to serve. */
export interface ServeOptions {
  ctx: Context;
  /** The address to bind: `127.0.0.1` unless the caller allowed another. */
  hostname: string;
  /** The port; 0 picks a free one. */
  port: number;
  token: string;
  markers?: StageMarkers;
  onError?: (err: unknown) => void;
  /** The data dir is `start`'s demo: the home page says so. */
  demo?: boolean;
}

/** A dashboard being served. */
export interface RunningDashboard {
  /** `http://<host>:<port>/`, without the token. */
  url: string;
  /** The URL to open: with `?token=`, which the first visit trades for a cookie. */
  urlWithToken: string;
  hostname: string;
  port: number;
  server: Deno.HttpServer<Deno.NetAddr>;
  services: Services;
  /** Stops a running capture at its next batch, closes the server, releases the lock. */
  shutdown(): Promise<void>;
}

/** True for the names and addresses of the loopback interface. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** A fresh access token: 32 random bytes, base64url. */
export function newToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/** Shortest `LOGBOOK_DASHBOARD_TOKEN` accepted. */
const MIN_TOKEN = 16;

/** The access token: `LOGBOOK_DASHBOARD_TOKEN` when set (16 characters at least), else a fresh one. */
export function dashboardToken(env: Env): string {
  const token = env.get("LOGBOOK_DASHBOARD_TOKEN") || newToken();
  if (token.length < MIN_TOKEN) {
    throw new Error(`LOGBOOK_DASHBOARD_TOKEN is too short: use at least ${MIN_TOKEN} characters`);
  }
  return token;
}

/** The `Host` values a dashboard bound to `hostname:port` answers to. */
export function servedHosts(hostname: string, port: number): string[] {
  const bracket = (h: string) => (h.includes(":") ? `[${h}]` : h);
  const hosts = new Set([`${bracket(hostname)}:${port}`]);
  if (isLoopback(hostname)) {
    hosts.add(`127.0.0.1:${port}`);
    hosts.add(`localhost:${port}`);
  }
  return [...hosts];
}

/**
 * Takes the dashboard lock and serves the app on `hostname:port`. Throws DashboardRunningError
 * when another dashboard holds the lock, and ListenError when the address cannot be bound (the
 * lock is released again then).
 */
export function serveDashboard(options: ServeOptions): RunningDashboard {
  const { ctx } = options;
  const bind = options.hostname.toLowerCase() === "localhost" ? "127.0.0.1" : options.hostname;
  const lock = tryLock(ctx.paths.run, ctx.paths.root, "dashboard", "dashboard");
  if ("holder" in lock) throw new DashboardRunningError(lock.holder);
  let fetch: (request: Request) => Response | Promise<Response> = () =>
    new Response("Starting", { status: 503 });
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve(
      { hostname: bind, port: options.port, onListen: () => {} },
      (request) => fetch(request),
    );
  } catch (err) {
    lock.held.release();
    throw new ListenError(bind, options.port, err);
  }
  const port = server.addr.port;
  const { app, services } = createApp({
    ctx,
    token: options.token,
    hosts: servedHosts(bind, port),
    cookieName: `logbook_token_${port}`,
    ...(options.markers ? { markers: options.markers } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.demo ? { demo: true } : {}),
  });
  fetch = (request) => app.fetch(request);
  services.searches.warm();
  const host = bind.includes(":") ? `[${bind}]` : bind;
  const url = `http://${host}:${port}/`;
  let closing: Promise<void> | undefined;
  return {
    url,
    urlWithToken: `${url}?token=${encodeURIComponent(options.token)}`,
    hostname: bind,
    port,
    server,
    services,
    shutdown() {
      closing ??= (async () => {
        try {
          // The scrub first: a capture may be waiting for the lock it holds.
          await services.scrub.stop();
          await services.capture.stop();
          services.searches.close();
          await server.shutdown();
        } finally {
          lock.held.release();
        }
      })();
      return closing;
    },
  };
}
