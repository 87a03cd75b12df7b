// The capture operation behind `reindex`, `start` and the dashboard: the ingest switch, the
// lock that keeps cron runs from overlapping, a latched failure, and the last run's result.

import { loadConfig } from "../config.ts";
import type { Redactor } from "../gate.ts";
import type { Context } from "../context.ts";
import { isOff } from "../env.ts";
import { type LockInfo, tryLock } from "../lock.ts";
import { projectOf } from "../paths.ts";
import type { Adapter, Agent, DiscoverContext } from "../sources/adapter.ts";
import { ADAPTERS } from "../sources/mod.ts";
import { HistoryStore } from "../store/db.ts";
import { checkStore, checkStoreInWorker, StoreDamagedError } from "../store/check.ts";
import {
  capture,
  type CaptureOptions,
  type CaptureSummary,
  type Progress,
  rebuildDerived,
} from "./engine.ts";
import { rebuildByCopy } from "./rebuild_by_copy.ts";
import { refreshTotals } from "../store/status.ts";

/** The meta key of a failure that stops capture until `reindex --retry`. */
export const LATCH_KEY = "latched_failure";

export interface CaptureRunOptions {
  ctx: Context;
  store: HistoryStore;
  redact: Redactor;
  adapters?: readonly Adapter[];
  maxSeconds?: number;
  signal?: AbortSignal;
  rebuild?: boolean;
  retry?: boolean;
  onProgress?: (progress: Progress) => void;
  /** Only these source locators (watch mode). */
  only?: ReadonlySet<string>;
  /** The command name written into the lock file. */
  command?: string;
}

/** What a capture run did, or why it did not run. */
export type CaptureRunResult =
  | { status: "captured"; summary: CaptureSummary; rebuilt: number | null }
  | { status: "busy"; holder: LockInfo | null }
  | { status: "off"; reason: string }
  | { status: "latched"; failure: LatchedFailure };

/** A failure kept until the user retries (a failed migration or rebuild). */
export interface LatchedFailure {
  at: number;
  message: string;
}

/** The result of the last capture run, kept in the store for `--status`. */
export interface LastRun {
  at: number;
  ok: boolean;
  summary?: CaptureSummary;
  error?: string;
}

/** Why capture is switched off, or null when it is on (`LOGBOOK_INGEST`, then config). */
export function ingestOffReason(ctx: Context): string | null {
  const env = ctx.env.get("LOGBOOK_INGEST");
  if (env !== undefined && isOff(env)) return `LOGBOOK_INGEST=${env}`;
  if (!ctx.config.history.ingest) return 'config "history.ingest" is false';
  return null;
}

/** Runs one capture under the capture lock; see CaptureRunResult for the outcomes. */
export async function runCapture(options: CaptureRunOptions): Promise<CaptureRunResult> {
  const { ctx, store } = options;
  if (options.retry) store.deleteMeta(LATCH_KEY);
  const latched = store.getMeta<LatchedFailure>(LATCH_KEY);
  if (latched) return { status: "latched", failure: latched };
  const off = ingestOffReason(ctx);
  if (off) return { status: "off", reason: off };

  const lock = tryLock(ctx.paths.run, ctx.paths.root, "capture", options.command ?? "reindex");
  if ("holder" in lock) return { status: "busy", holder: lock.holder };
  try {
    const adapters = options.adapters ?? ADAPTERS;
    const ingestOptions = {
      markers: ctx.markers.operation("capture"),
      store,
      adapters,
      discover: discoverContext(ctx),
      redact: options.redact,
      projectOf,
      now: ctx.now,
      ingestEnabled: ingestSwitch(ctx),
      ...(options.maxSeconds ? { deadline: ctx.now() + options.maxSeconds * 1000 } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.only ? { only: options.only } : {}),
    };
    let rebuilt: number | null = null;
    try {
      if (options.rebuild) {
        announce(store, "rebuilding", ctx.now(), options.onProgress);
        rebuilt = await rebuild(ingestOptions, ctx.paths.root);
        // Capture stores its progress only once it finds work: until then it is discovering.
        announce(store, "discovering", ctx.now(), options.onProgress);
      }
      const summary = await capture(ingestOptions);
      store.transaction(() => {
        store.setMeta("last_run", { at: ctx.now(), ok: summary.errors.length === 0, summary });
        refreshTotals(store, { sources: summary.records > 0 || rebuilt !== null });
      });
      return { status: "captured", summary, rebuilt };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      try {
        store.setMeta("last_run", { at: ctx.now(), ok: false, error: message } satisfies LastRun);
        if (options.rebuild) {
          store.setMeta(LATCH_KEY, { at: ctx.now(), message } satisfies LatchedFailure);
        }
      } catch {
        // The store itself failing (locked, full) is what is being reported.
      }
      throw err;
    }
  } finally {
    lock.held.release();
  }
}

/**
 * Derives everything again from the raw records: in place when the store is sound, through a
 * new file when derived data is damaged (SQLite cannot clear a damaged b-tree). Damaged raw
 * data is an error that says what to do: a rebuild cannot bring lost records back.
 */
async function rebuild(options: CaptureOptions, root: string): Promise<number> {
  // In a worker: it reads every page, and a dashboard that runs the rebuild keeps answering.
  // Where a worker cannot open the store (read-only), this connection checks it.
  const check = await checkStoreInWorker(options.store.path, root)
    .catch(() => checkStore(options.store));
  if (check.ok) return await rebuildDerived(options);
  if (check.damaged.some((d) => d.kind === "raw")) {
    throw new StoreDamagedError(
      `The history store is damaged in ${
        check.damaged.map((d) => d.label).join(", ")
      }: ${check.recovery}`,
    );
  }
  return await rebuildByCopy(options, root);
}

/**
 * Stores a phase as the capture's progress, for other processes' `status`. The rebuild runs in
 * one transaction, which they cannot see into: this is committed before it starts.
 */
function announce(
  store: HistoryStore,
  phase: Progress["phase"],
  now: number,
  onProgress: ((progress: Progress) => void) | undefined,
): void {
  const progress: Progress = {
    phase,
    sourcesTotal: 0,
    sourcesDone: 0,
    bytesTotal: 0,
    bytesDone: 0,
    startedAt: now,
    pid: Deno.pid,
  };
  store.setMeta("progress", progress);
  onProgress?.(progress);
}

/** Where adapters look: the environment and config's extra roots. */
export function discoverContext(ctx: Context): DiscoverContext {
  const roots = ctx.config.history.roots;
  const extraRoots: Partial<Record<Agent, string[]>> = {
    claude: roots.claude,
    codex: roots.codex,
    opencode: roots.opencode,
  };
  return { env: ctx.env, extraRoots, skipped: new Map() };
}

/**
 * Why capture is off right now, reading the config file again (so an edit takes effect without
 * a restart); a config being edited may be briefly invalid, and then the loaded one decides.
 */
export function ingestOffNow(ctx: Context): string | null {
  try {
    const config = loadConfig({ env: ctx.env, configDir: ctx.configDir }).config;
    return ingestOffReason({ ...ctx, config });
  } catch {
    return ingestOffReason(ctx);
  }
}

/** The ingest switch as capture sees it before each batch: read at most once a second. */
export function ingestSwitch(ctx: Context): () => boolean {
  let checked = 0;
  let on = true;
  return () => {
    const now = Date.now();
    if (now - checked < 1000) return on;
    checked = now;
    on = ingestOffNow(ctx) === null;
    return on;
  };
}
