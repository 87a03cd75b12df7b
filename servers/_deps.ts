// What the dashboard's routes are given: the command context, a store opener, the gate, the
// clock, the stage-marker writer and the background capture, resolved once by `createApp`.

import type { Hono } from "hono";
import {
  type Context,
  openStore as openContextStore,
  redactorFor,
  storeExists,
} from "../lib/context.ts";
import type { Redactor } from "../lib/gate/secrets.ts";
import type { Adapter } from "../lib/sources/adapter.ts";
import { ADAPTERS } from "../lib/sources/mod.ts";
import type { HistoryStore } from "../lib/store/db.ts";
import { budgetMsFrom } from "../lib/store/search.ts";
import { SearchWorkers, sharedSearchWorkers } from "../lib/store/search_workers.ts";
import { type Operation, type StageMarkers, stageMarkers } from "../lib/stage_markers.ts";
import { BackgroundCapture } from "./_capture.ts";
import { BackgroundScrub } from "./_scrub.ts";
import { ApiError } from "./_errors.ts";

/** What `createApp` needs; everything but `ctx`, `token` and `hosts` has a default. */
export interface AppDeps {
  /** The surroundings of the dashboard command: env, data and config dirs, config. */
  ctx: Context;
  /** The access token every request must carry. */
  token: string;
  /** The `Host` header values the dashboard answers to (`127.0.0.1:8787`, `localhost:8787`). */
  hosts: readonly string[];
  /** Opens the history store (default: `openStore(ctx)`); each request opens and closes one. */
  openStore?: (options?: { mustExist?: boolean }) => HistoryStore;
  /** The clock (default: `ctx.now`). */
  now?: () => number;
  /** The stage-marker writer (default: the process-wide one). */
  markers?: StageMarkers;
  /** The name of the cookie that carries the token (default `logbook_token`). */
  cookieName?: string;
  /** Source adapters, for deriving text (default: all of them). */
  adapters?: readonly Adapter[];
  /** Receives unexpected errors, which clients only see as a 500 (default: stderr). */
  onError?: (err: unknown) => void;
  /** Starts a search worker (default: the real one); a test wraps it to hold a search. */
  startSearchWorker?: () => Worker;
  /** The data dir is `start`'s demo of the sample transcripts: the home page says so. */
  demo?: boolean;
}

/** The resolved dependencies every route gets. */
export interface Services {
  ctx: Context;
  token: string;
  hosts: readonly string[];
  cookieName: string;
  now: () => number;
  adapters: readonly Adapter[];
  markers: StageMarkers;
  /** The operation the dashboard's stage markers belong to. */
  op: Operation;
  /** The gate's redaction of anything shown. */
  redact: Redactor;
  capture: BackgroundCapture;
  /** What takes a forget's words out of the text index, after the forget has answered. */
  scrub: BackgroundScrub;
  openStore: (options?: { mustExist?: boolean }) => HistoryStore;
  onError: (err: unknown) => void;
  /** Where searches run, off the event loop (the process's own workers unless a test's). */
  searches: SearchWorkers;
  /** How long a search may take from its request's arrival (`LOGBOOK_SEARCH_BUDGET_MS`). */
  searchBudgetMs: number;
  /** The data dir is `start`'s demo (see `AppDeps.demo`). */
  demo: boolean;
}

/** The Hono environment of the dashboard's apps. */
export type AppEnv = { Variables: Record<string, never> };

/** A route file: given the services, the sub-app it mounts at `/`. */
export type Route = (svc: Services) => Hono<AppEnv>;

/** Resolves `deps` into the services the routes share. */
export function services(deps: AppDeps): Services {
  const { ctx } = deps;
  const now = deps.now ?? ctx.now;
  const markers = deps.markers ?? stageMarkers();
  const open = deps.openStore ?? ((options) => openContextStore(ctx, options));
  const redact = redactorFor(ctx);
  const op = markers.operation("dashboard");
  const adapters = deps.adapters ?? ADAPTERS;
  const onError = deps.onError ?? ((err: unknown) => console.error(err));
  return {
    ctx,
    token: deps.token,
    hosts: deps.hosts.map((h) => h.toLowerCase()),
    cookieName: deps.cookieName ?? "logbook_token",
    now,
    adapters,
    markers,
    op,
    redact,
    capture: new BackgroundCapture({ ctx, openStore: () => open(), redact, now, adapters }),
    scrub: new BackgroundScrub(ctx, () => open(), onError),
    openStore: open,
    onError,
    searches: deps.startSearchWorker || deps.adapters
      ? new SearchWorkers({
        ...(deps.startSearchWorker ? { start: deps.startSearchWorker } : {}),
        ...(deps.adapters ? { adapters: deps.adapters } : {}),
      })
      : sharedSearchWorkers(),
    searchBudgetMs: budgetMsFrom(ctx.env),
    demo: deps.demo ?? false,
  };
}

/**
 * Runs `fn` with an open store as stage `dashboard.<route>`, closing the store after. A store
 * that does not exist yet is a 404 `no_store` (reading never creates it).
 */
export function withStore<T>(svc: Services, route: string, fn: (store: HistoryStore) => T): T {
  // Store work is synchronous (node:sqlite), so the step has no stall timer: nothing could fire.
  return svc.op.stageSync(`dashboard.${route}`, () => usingStore(svc, fn));
}

/** Runs `fn` with an open store, closing it after; a missing store is the 404 `no_store`. */
export function usingStore<T>(svc: Services, fn: (store: HistoryStore) => T): T {
  if (!storeExists(svc.ctx)) throw noStore();
  const store = svc.openStore({ mustExist: true });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

/** The 404 for a data dir without a history store. */
export function noStore(): ApiError {
  return new ApiError(
    404,
    "no_store",
    'No history captured yet: start a capture from the status page or run "logbook reindex"',
  );
}
