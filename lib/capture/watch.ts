// `reindex --watch`: keeps the store current. File-system notifications mark known sources
// dirty (polling is the fallback), discovery runs again every 30 s, batches follow every
// 100 ms while there is a backlog and every 2 s when idle, and SQLite contention backs off 5 s.
// A backlog (sources found with unread bytes, or a pass that stopped before the end) is read in
// full-speed passes, as `reindex` reads it, until it is drained; then only what changed is read.
// Each pass that stored something, warned or failed is recorded for `status` as a run of
// `reindex --watch` (`recordRun`), and so is the first: an idle pass writes nothing.

import { type Context } from "../context.ts";
import type { HeldLock } from "../lock.ts";
import type { Redactor } from "../gate/secrets.ts";
import type { Adapter, SourceRef } from "../sources/adapter.ts";
import { ADAPTERS } from "../sources/mod.ts";
import { type HistoryStore, StoreLockedError } from "../store/db.ts";
import { capturePass, type PassOptions } from "./engine.ts";
import { backfillInjected } from "./injected_backfill.ts";
import { fillUsageQuarters } from "../usage/quarters_fill.ts";
import { rederive } from "./rederive.ts";
import { forgetCovered } from "../store/forget.ts";
import { syncMirrors } from "./mirrors.ts";
import { dropRetired } from "../store/batched_migration.ts";
import { clearLatch, latchedFailure } from "../store/latch.ts";
import { captureOffNow } from "./switch.ts";
import {
  discoverContext,
  migrate,
  migrationPending,
  passOptions,
  recordFailure,
  recordRun,
  tryCaptureLock,
  WATCH_COMMAND,
} from "./run.ts";
import type { CaptureSummary } from "./summary.ts";

/** The cadence of the watcher (injectable so tests need not wait 30 s). */
export interface WatchTimings {
  rediscoverMs: number;
  backlogMs: number;
  idleMs: number;
  backoffMs: number;
  /**
   * How long a capture of changed sources may run before yielding to the next tick; one that
   * drains a backlog runs until the next rediscovery is due.
   */
  sliceMs: number;
}

export const WATCH_TIMINGS: WatchTimings = {
  rediscoverMs: 30_000,
  backlogMs: 100,
  idleMs: 2_000,
  backoffMs: 5_000,
  sliceMs: 1_000,
};

export interface WatchOptions {
  ctx: Context;
  store: HistoryStore;
  redact: Redactor;
  signal: AbortSignal;
  adapters?: readonly Adapter[];
  timings?: Partial<WatchTimings>;
  /** Clears a latched failure first (`reindex --watch --retry`). */
  retry?: boolean;
  /** Called after every pass that stored something or warned, once it is recorded. */
  onCapture?: (summary: CaptureSummary) => void;
  /** Called for state changes worth a line: waiting for a lock, backing off, paused, resumed. */
  onNote?: (note: string) => void;
}

/** Runs until `signal` aborts; stops at a batch boundary with cursors consistent. */
export async function watch(options: WatchOptions): Promise<void> {
  const timings = { ...WATCH_TIMINGS, ...options.timings };
  const { ctx, store, signal } = options;
  const note = options.onNote ?? (() => {});
  const adapters = options.adapters ?? ADAPTERS;
  if (options.retry) clearLatch(store);

  // The capture lock is held for the whole watch: cron runs meanwhile exit at once.
  const held = await waitForCaptureLock(ctx, timings.backoffMs, signal, note);
  if (!held) return;

  let known: { adapter: Adapter; ref: SourceRef }[] = [];
  const dirty = new Set<string>();
  let lastDiscovery = 0;
  let rediscoverSoon = true;
  // The last capture stopped before reading everything it found: what is left is read next.
  let backlog = false;
  const waiting: Waiting = { off: false, latched: false };
  // Whether a pass of this watch was recorded for `status` yet.
  let recorded = false;
  const notifications = startNotifications(adapters, ctx, dirty, () => (rediscoverSoon = true));

  try {
    while (!signal.aborted) {
      if (mustWait(ctx, store, waiting, note)) {
        if (!(await sleep(timings.idleMs, signal))) break;
        continue;
      }
      const now = Date.now();
      const full = rediscoverSoon || now - lastDiscovery >= timings.rediscoverMs;
      // A discovery may find unread sources, and a capture that stopped early left some: either
      // way they are read at full speed until the next discovery is due (then the next tick goes
      // on with what is left).
      const drain = full || backlog;
      const nextDiscovery = (full ? now : lastDiscovery) + timings.rediscoverMs;
      // Changes noted while this capture runs are for the next tick.
      const changed = new Set(dirty);
      dirty.clear();
      const requeue = () => changed.forEach((locator) => dirty.add(locator));
      const pass = () => passOptions(ctx, store, options.redact, adapters);
      let summary: CaptureSummary;
      try {
        const owed = await workOwed(pass, { signal, now, deadline: now + timings.sliceMs, note });
        if (owed === "stopped") break;
        if (owed === "migrating") {
          requeue();
          continue;
        }
        summary = await capturePass({
          ...pass(),
          signal,
          deadline: drain ? Math.max(nextDiscovery, now + timings.sliceMs) : now + timings.sliceMs,
          ...(full
            ? { onDiscovered: (sources) => (known = sources) }
            : { sources: between(known, changed, drain || !notifications.working) }),
        });
        keepUp(store, summary, { first: !recorded, full, options, sliceMs: timings.sliceMs });
        recorded = true;
      } catch (err) {
        if (!(err instanceof StoreLockedError)) {
          recordFailure(store, { at: ctx.now(), by: WATCH_COMMAND }, err);
          throw err;
        }
        requeue();
        note("the history store is busy; backing off");
        if (!(await sleep(timings.backoffMs, signal))) break;
        continue;
      }
      if (full) {
        lastDiscovery = now;
        rediscoverSoon = false;
      }
      backlog = !summary.complete;
      if (tells(summary)) options.onCapture?.(summary);
      const busy = backlog || dirty.size > 0;
      if (!(await sleep(busy ? timings.backlogMs : timings.idleMs, signal, notifications))) {
        break;
      }
    }
  } finally {
    notifications.close();
    held.release();
  }
}

/**
 * The sources a pass between discoveries reads: every known one while draining or polling (a
 * stat each, nothing read unless unread), else only those notifications named.
 */
function between<T extends { ref: SourceRef }>(
  known: T[],
  changed: ReadonlySet<string>,
  every: boolean,
): T[] {
  return every ? known : known.filter((k) => changed.has(k.ref.locator));
}

/** Takes the capture lock, waiting while another capture holds it; null when `signal` aborted. */
async function waitForCaptureLock(
  ctx: Context,
  backoffMs: number,
  signal: AbortSignal,
  note: (note: string) => void,
): Promise<HeldLock | null> {
  let lock = tryCaptureLock(ctx, WATCH_COMMAND);
  while ("holder" in lock) {
    note(`another capture is running (pid ${lock.holder?.pid ?? "?"}); waiting`);
    if (!(await sleep(backoffMs, signal))) return null;
    lock = tryCaptureLock(ctx, WATCH_COMMAND);
  }
  return lock.held;
}

/** What the watcher is waiting for, so each wait is noted once, when it begins (and ends). */
interface Waiting {
  /** Capture is switched off. */
  off: boolean;
  /** A failure is latched. */
  latched: boolean;
}

/**
 * True when capture must wait this tick: it is switched off, or stopped after a failure (a
 * failed migration or rebuild stops capture, as it stops `reindex`, until --retry).
 */
function mustWait(
  ctx: Context,
  store: HistoryStore,
  waiting: Waiting,
  note: (note: string) => void,
): boolean {
  const off = captureOffNow(ctx);
  if (off) {
    if (!waiting.off) note(`capture switched off (${off}); waiting, cursors kept`);
    waiting.off = true;
    return true;
  }
  if (waiting.off) note("capture switched on again");
  waiting.off = false;
  const latched = latchedFailure(store);
  if (latched) {
    if (!waiting.latched) note(`capture is stopped after a failure: ${latched.message}`);
    waiting.latched = true;
    return true;
  }
  waiting.latched = false;
  return false;
}

/**
 * The work a store may owe before a capture: a schema change copied in batches (capture waits
 * for its switch-over: `migrating` while a slice of it is not the last), records captured before
 * FLAG_INJECTED (0011), sources derived with other versions of their adapter (all of them; a stop
 * rolls back the one under way: `stopped`), and what a tombstone covers (0012). `ready` when the
 * capture may run.
 */
async function workOwed(
  pass: () => PassOptions,
  { signal, now, deadline, note }: {
    signal: AbortSignal;
    now: number;
    deadline: number;
    note: (note: string) => void;
  },
): Promise<"ready" | "migrating" | "stopped"> {
  const { store, redact, adapters } = pass();
  dropRetired(store);
  if (migrationPending(store) && !(await migrate({ ...pass(), signal, deadline }))) {
    return "migrating";
  }
  await backfillInjected(store, adapters, redact, signal);
  await fillUsageQuarters(store, signal);
  const rederived = await rederive({ ...pass(), signal });
  if (!rederived.done) return "stopped";
  if (rederived.sources) {
    note(`derived ${rederived.sources} stored sources again, as this build's adapters derive them`);
  }
  forgetCovered(store, { redact, now });
  return "ready";
}

/**
 * After a pass: recorded for `status`, as a run of `reindex` is (a pass that did anything, and
 * the first: the watch took over; an idle pass writes nothing), and the project mirrors kept up
 * (after a pass that stored something, and at each discovery; the changes they read trimmed).
 */
function keepUp(
  store: HistoryStore,
  summary: CaptureSummary,
  { first, full, options, sliceMs }: {
    first: boolean;
    full: boolean;
    options: WatchOptions;
    sliceMs: number;
  },
): void {
  const { ctx } = options;
  if (tells(summary) || summary.gone > 0 || first) {
    // The sources listed as yielding nothing, and those this pass found so, are looked at again.
    recordRun(
      store,
      { at: ctx.now(), by: WATCH_COMMAND, ok: summary.errors.length === 0, summary },
      { sources: { found: summary.empty } },
    );
  }
  if (summary.records > 0 || full) {
    syncMirrors(store, {
      adapters: options.adapters ?? ADAPTERS,
      redact: options.redact,
      env: ctx.env,
      now: ctx.now,
      budgetMs: sliceMs,
    });
  }
}

/** True for a pass whose summary is worth a line: it stored something, warned or failed. */
function tells(summary: CaptureSummary): boolean {
  return summary.records > 0 || summary.drift.length > 0 || summary.errors.length > 0 ||
    summary.empty.length > 0;
}

interface Notifications {
  /** False when no root could be watched: the watcher then polls. */
  working: boolean;
  /** Resolves when something changed (used to cut an idle sleep short). */
  changed(): Promise<void>;
  close(): void;
}

/**
 * Watches every existing root (a folder, or a single file such as a prompt history); events mark
 * known sources (or their database) dirty.
 */
function startNotifications(
  adapters: readonly Adapter[],
  ctx: Context,
  dirty: Set<string>,
  unknownPath: () => void,
): Notifications {
  const roots = [...new Set(adapters.flatMap((a) => a.roots(discoverContext(ctx))))]
    .filter((root) => {
      try {
        const info = Deno.statSync(root);
        return info.isDirectory || info.isFile;
      } catch {
        return false;
      }
    });
  const watchers: Deno.FsWatcher[] = [];
  const waiting: { wake: (() => void) | null } = { wake: null };
  for (const root of roots) {
    try {
      const watcher = Deno.watchFs(root, { recursive: true });
      watchers.push(watcher);
      (async () => {
        try {
          for await (const event of watcher) {
            for (const path of event.paths) {
              // A database's WAL changing means the database has new rows.
              const locator = path.replace(/-(wal|shm|journal)$/, "");
              dirty.add(locator);
              if (event.kind === "create") unknownPath();
            }
            waiting.wake?.();
          }
        } catch {
          // A root removed while watched: polling and rediscovery take over.
        }
      })();
    } catch {
      // Too many watches, or a root that vanished: polling covers it.
    }
  }
  return {
    working: watchers.length > 0 && watchers.length === roots.length,
    changed: () => new Promise((resolve) => (waiting.wake = resolve)),
    close() {
      for (const watcher of watchers) {
        try {
          watcher.close();
        } catch {
          // already closed
        }
      }
    },
  };
}

/** Sleeps `ms`, cut short by a change notification; false when the signal aborted. */
function sleep(ms: number, signal: AbortSignal, notifications?: Notifications): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (value: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(value);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener("abort", onAbort);
    // A notification ends an idle wait early, after the 100 ms batching interval.
    notifications?.changed().then(() =>
      setTimeout(() => done(!signal.aborted), WATCH_TIMINGS.backlogMs)
    );
  });
}
