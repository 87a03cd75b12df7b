// `reindex --watch`: keeps the store current. File-system notifications mark known sources
// dirty (polling is the fallback), discovery runs again every 30 s, batches follow every
// 100 ms while there is a backlog and every 2 s when idle, and SQLite contention backs off 5 s.
// A backlog (sources found with unread bytes, or a pass that stopped before the end) is read in
// full-speed passes, as `reindex` reads it, until it is drained; then only what changed is read.
// Each pass that stored something, warned or failed is recorded for `status` as a run of
// `reindex --watch` (`recordRun`), and so is the first: an idle pass writes nothing.

import { type Context } from "../context.ts";
import type { Redactor } from "../gate/secrets.ts";
import type { Adapter, SourceRef } from "../sources/adapter.ts";
import { ADAPTERS } from "../sources/mod.ts";
import { type HistoryStore, StoreLockedError } from "../store/db.ts";
import { capturePass } from "./engine.ts";
import { backfillInjected } from "./injected_backfill.ts";
import { rederive } from "./rederive.ts";
import { forgetCovered } from "../store/forget.ts";
import { emptySources } from "../store/status.ts";
import { syncMirrors } from "./mirrors.ts";
import { dropRetired } from "../store/batched_migration.ts";
import { clearLatch, latchedFailure } from "../store/latch.ts";
import {
  captureOffNow,
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
  let lock = tryCaptureLock(ctx, WATCH_COMMAND);
  while ("holder" in lock) {
    note(`another capture is running (pid ${lock.holder?.pid ?? "?"}); waiting`);
    if (!(await sleep(timings.backoffMs, signal))) return;
    lock = tryCaptureLock(ctx, WATCH_COMMAND);
  }
  const held = lock.held;

  let known: { adapter: Adapter; ref: SourceRef }[] = [];
  const dirty = new Set<string>();
  let lastDiscovery = 0;
  let rediscoverSoon = true;
  // The last capture stopped before reading everything it found: what is left is read next.
  let backlog = false;
  let paused = false;
  let stopped = false;
  // Whether a pass of this watch was recorded for `status` yet.
  let recorded = false;
  const notifications = startNotifications(adapters, ctx, dirty, () => (rediscoverSoon = true));

  try {
    while (!signal.aborted) {
      const off = captureOffNow(ctx);
      if (off) {
        if (!paused) note(`capture switched off (${off}); waiting, cursors kept`);
        paused = true;
        if (!(await sleep(timings.idleMs, signal))) break;
        continue;
      }
      if (paused) note("capture switched on again");
      paused = false;
      // A failed migration or rebuild stops capture, as it stops `reindex`, until --retry.
      const latched = latchedFailure(store);
      if (latched) {
        if (!stopped) note(`capture is stopped after a failure: ${latched.message}`);
        stopped = true;
        if (!(await sleep(timings.idleMs, signal))) break;
        continue;
      }
      stopped = false;

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
      let summary: CaptureSummary;
      try {
        dropRetired(store);
        if (migrationPending(store)) {
          // A schema change is copied in batches first; capture waits for its switch-over.
          const done = await migrate({
            ...passOptions(ctx, store, options.redact, adapters),
            signal,
            deadline: now + timings.sliceMs,
          });
          if (!done) {
            for (const locator of changed) dirty.add(locator);
            continue;
          }
        }
        // Records captured before FLAG_INJECTED get it (migration 0011 left the work).
        await backfillInjected(store, adapters, options.redact, signal);
        // Sources derived with other versions of their adapter are derived again first, all of
        // them (capture goes on from the state they leave); a stop rolls back the one under way.
        const rederived = await rederive({
          ...passOptions(ctx, store, options.redact, adapters),
          signal,
        });
        if (!rederived.done) break;
        if (rederived.sources) {
          note(
            `derived ${rederived.sources} stored sources again, as this build's adapters derive them`,
          );
        }
        // What a store holds under a tombstone goes (migration 0012 left the work).
        forgetCovered(store, { redact: options.redact, now });
        summary = await capturePass({
          ...passOptions(ctx, store, options.redact, adapters),
          signal,
          deadline: drain ? Math.max(nextDiscovery, now + timings.sliceMs) : now + timings.sliceMs,
          ...(full
            ? { onDiscovered: (sources) => (known = sources) }
            // Between discoveries: every known source while draining or polling (a stat each,
            // nothing read unless unread), else only those notifications named.
            : {
              sources: drain || !notifications.working
                ? known
                : known.filter((k) => changed.has(k.ref.locator)),
            }),
        });
        // For `status`, as a run of `reindex` is: a pass that did anything, and the first (the
        // watch took over); an idle pass writes nothing. The list of sources that yielded nothing
        // is counted again (tens of ms over thousands of sources) only when it may change: a
        // source met this pass yielded nothing, or one listed may have yielded something now.
        if (tells(summary) || summary.gone > 0 || !recorded) {
          recordRun(
            store,
            { at: ctx.now(), by: WATCH_COMMAND, ok: summary.errors.length === 0, summary },
            { sources: summary.empty.length > 0 || emptySources(store).length > 0 },
          );
          recorded = true;
        }
        // Mirrors follow the store as after every capture run (and the changes they read are
        // trimmed): after a pass that stored something, and at each discovery.
        if (summary.records > 0 || full) {
          syncMirrors(store, {
            adapters,
            redact: options.redact,
            env: ctx.env,
            now: ctx.now,
            budgetMs: timings.sliceMs,
          });
        }
      } catch (err) {
        if (!(err instanceof StoreLockedError)) {
          recordFailure(store, { at: ctx.now(), by: WATCH_COMMAND }, err);
          throw err;
        }
        for (const locator of changed) dirty.add(locator);
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
