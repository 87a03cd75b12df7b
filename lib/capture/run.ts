// A capture run, the one way into capture for `reindex`, `reindex --watch`, `start` and the
// dashboard: the capture switch, the lock that keeps cron runs from overlapping, the failure
// latch, the engine's options (built here and nowhere else) and the last run's result.

import { isScrubHolder, scrubIndexYielding } from "../store/scrub.ts";
import type { Redactor } from "../gate/secrets.ts";
import type { Context } from "../context.ts";
import { captureOffNow, captureOffReason, type LastRun } from "./switch.ts";
import { type HeldLock, type LockInfo, tryLock, waitLock } from "../lock.ts";
import { projectOfRecorded } from "../paths.ts";
import type { Adapter, DiscoverContext } from "../sources/adapter.ts";
import { ADAPTERS } from "../sources/mod.ts";
import { Folders, type KeptListings } from "../sources/folders.ts";
import { giveSpaceBack, type HistoryStore } from "../store/db.ts";
import { syncMirrors } from "./mirrors.ts";
import { wantedMirrors } from "../store/mirror.ts";
import { keepCounts, refreshTotals } from "../store/status.ts";
import { keepPresentSources } from "../store/present_sources.ts";
import { keepWithRun, keptSinceLastRun } from "../store/kept.ts";
import { INDEX_UPGRADE_KEY } from "../store/cjk.ts";
import { cjkIndexStep } from "../store/cjk_index.ts";
import {
  discardBatchedMigration,
  dropRetired,
  migrationState,
  runBatchedMigration,
} from "../store/batched_migration.ts";
import { clearLatch, latch, type LatchedFailure, latchedFailure } from "../store/latch.ts";
import { yieldToEventLoop } from "../event_loop.ts";
import { capturePass, type PassOptions } from "./engine.ts";
import type { SeenFiles } from "./discover.ts";
import { backfillInjected } from "./injected_backfill.ts";
import { fillUsageQuarters } from "../usage/quarters_fill.ts";
import { rederive } from "./rederive.ts";
import { forgetCovered } from "../store/forget.ts";
import { announce, type Progress } from "./progress.ts";
import { rebuild, RebuildStoppedError } from "./rebuild.ts";
import { type CaptureSummary, Tally } from "./summary.ts";
import { messageOf } from "../format.ts";

/** How long one run spends bringing project mirrors up to date at most (the rest waits). */
const MIRROR_BUDGET_MS = 2000;

export interface CaptureRunOptions {
  ctx: Context;
  store: HistoryStore;
  redact: Redactor;
  adapters?: readonly Adapter[];
  maxSeconds?: number;
  signal?: AbortSignal;
  rebuild?: boolean;
  /** Clears a latched failure first (`reindex --retry`). */
  retry?: boolean;
  onProgress?: (progress: Progress) => void;
  /** Only these source locators. */
  only?: ReadonlySet<string>;
  /** The command name written into the lock file. */
  command?: string;
}

/** What a capture run did, or why it did not run. */
export type CaptureRunResult =
  | {
    status: "captured";
    summary: CaptureSummary;
    rebuilt: number | null;
    /** Sources derived again because what derives them changed (`rederive.ts`). */
    rederived: number;
  }
  | { status: "busy"; holder: LockInfo | null }
  | { status: "off"; reason: string }
  | { status: "latched"; failure: LatchedFailure };

/** The command `reindex --watch` names itself by, in the capture lock and its runs' results. */
export const WATCH_COMMAND = "reindex --watch";

/**
 * Keeps what a capture did for `status`, the one place it is written: the result (`last_run`,
 * with the command that ran it), with `totals`, the store's totals it changed (see
 * `refreshTotals`), and with `seen`, what a pass that discovered every source saw of them (and
 * the folder listings it read), in one transaction.
 */
export function recordRun(
  store: HistoryStore,
  run: LastRun,
  totals?: Parameters<typeof refreshTotals>[1],
  seen?: { files: SeenFiles; unchanged: boolean; folders?: Folders | undefined },
): void {
  store.transaction(() => {
    const since = store.getMeta<LastRun>("last_run")?.at ?? 0;
    store.setMeta("last_run", run);
    if (totals) refreshTotals(store, totals);
    if (seen) {
      const listings = seen.folders?.toKeep();
      if (listings) store.setMeta(FOLDERS_KEY, listings);
      keepPresentSources(store, seen.files, run.at, { unchanged: seen.unchanged, since });
      keepCounts(store, run.at, { unchanged: seen.unchanged, since });
      keepProjects(store, run.at, { unchanged: seen.unchanged, since });
    }
  });
}

/**
 * Records a capture that failed with `err` (see `recordRun`) and returns its message. A store
 * that cannot record it is left as it is: its failing is what the caller reports.
 */
export function recordFailure(
  store: HistoryStore,
  run: { at: number; by: string },
  err: unknown,
): string {
  const error = messageOf(err);
  try {
    recordRun(store, { ...run, ok: false, error });
  } catch {
    // The store itself failing (locked, full) is what is being reported.
  }
  return error;
}

/**
 * Where adapters look: the environment, config's extra roots and, with the store, the project
 * directories it knows.
 */
export function discoverContext(ctx: Context, store?: HistoryStore): DiscoverContext {
  return {
    env: ctx.env,
    extraRoots: ctx.config.history.roots,
    skipped: new Map(),
    ...(store
      ? {
        projects: knownProjects(store),
        folders: new Folders(() => store.getMeta<KeptListings>(FOLDERS_KEY)),
      }
      : {}),
  };
}

/** The folder listings a run that discovered every source kept for the next (`folders.ts`). */
const FOLDERS_KEY = "folder_listings";

/**
 * The project directories the store knows: its conversations' (as the last run kept them, when
 * no run since kept nothing) and its mirrors'.
 */
function knownProjects(store: HistoryStore): string[] {
  const dirs = keptSinceLastRun<{ dirs: string[] }>(store, PROJECTS_KEY)?.dirs ??
    conversationDirs(store);
  return [...new Set([...dirs, ...wantedMirrors(store)])];
}

const PROJECTS_KEY = "known_projects";

/** The directories of the store's conversations: one scan of them (a tenth of a second at 10 GB). */
function conversationDirs(store: HistoryStore): string[] {
  return (store.stmt(
    `SELECT cwd AS dir FROM conversations WHERE cwd IS NOT NULL
     UNION SELECT project_root FROM conversations WHERE project_root IS NOT NULL`,
  ).all() as { dir: string }[]).map((row) => row.dir);
}

/**
 * Keeps the conversations' directories with a run's result for the next run's discovery: read
 * again unless the run changed nothing and they were kept since `since` (the run before).
 */
function keepProjects(
  store: HistoryStore,
  now: number,
  options: { unchanged: boolean; since: number },
): void {
  keepWithRun(store, PROJECTS_KEY, now, options, () => ({ dirs: conversationDirs(store) }));
}

/**
 * The engine's options for one pass in `ctx`: its adapters and where they look, the gate, the
 * projects, the clock, the capture switch (read before every batch) and the stage markers.
 */
export function passOptions(
  ctx: Context,
  store: HistoryStore,
  redact: Redactor,
  adapters: readonly Adapter[] = ADAPTERS,
): PassOptions {
  return {
    markers: ctx.markers.operation("capture"),
    store,
    adapters,
    discover: discoverContext(ctx, store),
    redact,
    projectOf: projectOfRecorded,
    now: ctx.now,
    captureEnabled: captureSwitch(ctx),
  };
}

/**
 * Why a run captured nothing, as one plain sentence the caller finishes with what it does
 * instead: `Another capture is running (pid 4242)`, `Capture is switched off (LOGBOOK_INGEST=0)`,
 * `Capture stopped after a failure on <time>: <message>` (the message may hold transcript text:
 * a terminal shows it through its filter).
 */
export function whyNotCaptured(result: Exclude<CaptureRunResult, { status: "captured" }>): string {
  switch (result.status) {
    case "busy":
      // `forget --finish` holds the capture lock while it merges the text index.
      if (result.holder && isScrubHolder(result.holder)) {
        return `A forget is taking words out of the text index (pid ${result.holder.pid})`;
      }
      return `Another capture is running (${
        result.holder ? `pid ${result.holder.pid}` : "another process"
      })`;
    case "off":
      return `Capture is switched off (${result.reason})`;
    case "latched":
      return `Capture stopped after a failure on ${
        new Date(result.failure.at).toISOString()
      }: ${result.failure.message}`;
  }
}

/** Takes the capture lock for `command` without waiting, or names who holds it. */
export function tryCaptureLock(
  ctx: Context,
  command: string,
): { held: HeldLock } | { holder: LockInfo | null } {
  return tryLock(ctx.paths.run, ctx.paths.root, "capture", command);
}

/** Runs one capture under the capture lock; see CaptureRunResult for the outcomes. */
export async function runCapture(options: CaptureRunOptions): Promise<CaptureRunResult> {
  const { ctx, store } = options;
  if (options.retry) clearLatch(store);
  const latched = latchedFailure(store);
  if (latched) return { status: "latched", failure: latched };
  const off = captureOffReason(ctx);
  if (off) return { status: "off", reason: off };

  const by = options.command ?? "reindex";
  let lock = tryCaptureLock(ctx, by);
  if ("holder" in lock && isScrubHolder(lock.holder)) {
    // A forget's merge of the text index (`forget --finish`, a minute at ten gigabytes): waited
    // for, as a capture after a forget is what a person runs next.
    lock = { held: await waitLock(ctx.paths.run, ctx.paths.root, "capture", by) };
  }
  if ("holder" in lock) return { status: "busy", holder: lock.holder };
  try {
    // The files a whole pass looked at: what status shows of them is kept with its result.
    let seen: SeenFiles | undefined;
    const pass: PassOptions = {
      ...passOptions(ctx, store, options.redact, options.adapters),
      ...(options.maxSeconds ? { deadline: ctx.now() + options.maxSeconds * 1000 } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.only ? { only: options.only } : {}),
      onFound: (files) => {
        seen = files;
      },
    };
    let rebuilt: number | null = null;
    const rebuilding = options.rebuild === true;
    try {
      // What a store holds under a tombstone goes, from its project mirrors too (migration 0012
      // left the work): before a rebuild, which would drop it from the store alone.
      forgetCovered(store, { redact: pass.redact, now: ctx.now() });
      // What a stopped forget left in the text index is taken out (a rebuild empties it).
      if (!rebuilding) {
        await scrubIndexYielding(store, { signal: pass.signal, forgets: ctx.paths });
      }
      if (rebuilding) {
        rebuilt = await rebuildFirst(ctx, pass, options.onProgress);
        if (rebuilt === null) {
          return { status: "captured", summary: stoppedSummary(), rebuilt: null, rederived: 0 };
        }
        // The pass after a rebuild reads the store's sources on its own thread: the process still
        // holds what the rebuild took from the system, and a worker beside it (a heap of its own
        // and a copy of every locator) took a 10 GB rebuild from 180 MiB to its peak, 282 MiB, in
        // its last seconds. Reading them inline costs that pass half a second.
        pass.limits = { ...pass.limits, knownAsideFrom: Infinity };
      }
      // A table a killed switch-over retired goes first (the run is writing anyway).
      dropRetired(store);
      if (migrationPending(store)) {
        announce(store, "migrating", ctx.now(), options.onProgress);
        if (!(await migrate(pass))) return stoppedEarly(store, pass, by, rebuilt, 0);
        announce(store, "discovering", ctx.now(), options.onProgress);
      }
      // Records captured before FLAG_INJECTED get it (migration 0011 left the work).
      await backfillInjected(store, pass.adapters, pass.redact, pass.signal);
      // Calls captured before the usage sums are summed (migration 0015 left the work).
      await fillUsageQuarters(store, pass.signal);
      // Sources derived with other versions of their adapter are derived again first: capture
      // then goes on from a state the adapter of today left.
      const rederived = await rederive(pass);
      if (!rederived.done) return stoppedEarly(store, pass, by, rebuilt, rederived.sources);
      if (rederived.sources) announce(store, "discovering", ctx.now(), options.onProgress);
      const summary = await capturePass(pass);
      recordRun(
        store,
        { at: ctx.now(), by, ok: summary.errors.length === 0, summary },
        { sources: rebuilt === null ? { found: summary.empty } : "recount" },
        seen && !options.only
          ? {
            files: seen,
            folders: pass.discover.folders,
            // Nothing read, nothing gone: every file is as the sources' rows say.
            unchanged: summary.changed === 0 && summary.gone === 0 && summary.complete &&
              summary.errors.length === 0 && rebuilt === null && rederived.sources === 0,
          }
          : undefined,
      );
      followMirrors(options, pass);
      return { status: "captured", summary, rebuilt, rederived: rederived.sources };
    } catch (err) {
      const message = recordFailure(store, { at: ctx.now(), by }, err);
      if (rebuilding) {
        try {
          latch(store, { at: ctx.now(), message });
        } catch {
          // The store itself failing (locked, full) is what is being reported.
        }
      }
      throw err;
    }
  } finally {
    lock.held.release();
  }
}

/**
 * `reindex --rebuild`: the store's derived data made afresh from its raw bytes, before the pass
 * captures. The sources rebuilt, or null when it was stopped on request (rolled back whole).
 */
async function rebuildFirst(
  ctx: Context,
  pass: PassOptions,
  onProgress: CaptureRunOptions["onProgress"],
): Promise<number | null> {
  const { store } = pass;
  announce(store, "rebuilding", ctx.now(), onProgress);
  // A rebuild derives the whole index afresh: a batched migration of it is not needed.
  if (migrationState(store)) discardBatchedMigration(store, indexStep(pass));
  let rebuilt: number;
  try {
    rebuilt = await rebuild(pass, ctx.paths.root);
  } catch (err) {
    if (!(err instanceof RebuildStoppedError)) throw err;
    // Stopped on request, rolled back whole: not a failure to latch; run again to finish.
    announce(store, "done", ctx.now(), undefined);
    return null;
  }
  // The pages the old derived data held and the new one does not are given back now: left free,
  // the next forget gave them back, 500 MB of pages moved at ten gigabytes, 17 s of its own.
  giveSpaceBack(store);
  // Capture stores its progress only once it finds work: until then it is discovering.
  announce(store, "discovering", ctx.now(), onProgress);
  return rebuilt;
}

/** Mirrors follow the store, in small batches, within what is left of the run's time. */
function followMirrors(options: CaptureRunOptions, pass: PassOptions): void {
  const { ctx } = options;
  const left = options.maxSeconds ? pass.deadline! - ctx.now() : MIRROR_BUDGET_MS;
  syncMirrors(options.store, {
    adapters: options.adapters ?? ADAPTERS,
    redact: options.redact,
    env: ctx.env,
    now: ctx.now,
    budgetMs: Math.max(200, Math.min(MIRROR_BUDGET_MS, left)),
  });
}

/** The batched migration that gives the store the index CJK search needs. */
function indexStep(pass: PassOptions) {
  return cjkIndexStep(pass.store, pass.adapters, pass.redact);
}

/** True when a schema change waits to be copied in batches (see `migrate`). */
export function migrationPending(store: HistoryStore): boolean {
  return store.getMeta(INDEX_UPGRADE_KEY) !== undefined;
}

/**
 * Runs (or resumes) the batched migration a schema change left, before capture writes again (a
 * batch's hashes must still hold when it is verified); true once it has switched over, false
 * when the pass's signal or deadline stopped it first. Throws MigrationError when verification
 * fails (latched).
 */
export async function migrate(pass: PassOptions): Promise<boolean> {
  return await runBatchedMigration(pass.store, indexStep(pass), {
    now: pass.now ?? Date.now,
    ...(pass.signal ? { signal: pass.signal } : {}),
    ...(pass.deadline !== undefined ? { deadline: pass.deadline } : {}),
    pause: yieldToEventLoop,
  });
}

/**
 * The result of a run that stopped (its signal, its deadline) before capture began: a batched
 * migration or a derivation again left for the next run.
 */
function stoppedEarly(
  store: HistoryStore,
  pass: PassOptions,
  by: string,
  rebuilt: number | null,
  rederived: number,
): CaptureRunResult {
  const summary = new Tally().summary;
  summary.complete = false;
  summary.stoppedBy = pass.signal?.aborted ? "signal" : "deadline";
  recordRun(store, { at: (pass.now ?? Date.now)(), by, ok: true, summary });
  return { status: "captured", summary, rebuilt, rederived };
}

/** The summary of a run stopped on request before it captured anything. */
function stoppedSummary(): CaptureSummary {
  const summary = new Tally().summary;
  summary.complete = false;
  summary.stoppedBy = "signal";
  return summary;
}

/** The capture switch as a pass sees it before each batch: read at most once a second. */
function captureSwitch(ctx: Context): () => boolean {
  let checked = 0;
  let on = true;
  return () => {
    const now = Date.now();
    if (now - checked < 1000) return on;
    checked = now;
    on = captureOffNow(ctx) === null;
    return on;
  };
}
