// Everything `status` and the dashboard report about logbook on this machine: capture on or off
// and running, the store, drift, snapshots, unclosed stage markers, sessions and corrupt records.

import { isScrubHolder } from "./store/scrub.ts";
import { join } from "./path.ts";
import type { DataPaths } from "./paths.ts";
import { RunState } from "./run_state.ts";
import { captureOffReason, type LastRun } from "./capture/switch.ts";
import { type LatchedFailure, latchedFailure } from "./store/latch.ts";
import { snapshotStats } from "./sessions/compaction.ts";
import { type Context, openStore, redactorFor, storeExists } from "./context.ts";
import { mapStrings } from "./gate/secrets.ts";
import { isLockHeld, readLock } from "./lock.ts";
import { stageMarkersLocation } from "./stage_markers.ts";
import { OpenSteps, type UnclosedStep } from "./stage_markers_read.ts";
import { HistoryStore, isCorruption } from "./store/db.ts";
import type { Progress } from "./capture/progress.ts";
import type { CorruptRecord } from "./sessions/records.ts";
import { describeDrift, type StoreStatus, storeStatus } from "./store/status.ts";
import type { StoreCheck } from "./store/check.ts";
import { quickCheck } from "./store/damage.ts";

/**
 * A running capture's progress with a percentage and an estimate of the time left. The
 * percentage is of this run's work; the share of everything captured is `store.captured`.
 */
export type ProgressView = Progress & {
  /** Whole percent of the bytes this run set out to read. */
  percent: number;
  /** Estimated time left, or null while too little is done to tell. */
  etaMs: number | null;
};

/** The whole status. */
export interface Status {
  dataDir: string;
  capture: {
    on: boolean;
    offReason: string | null;
    /** "rebuilding" while `reindex --rebuild` derives the index and conversations again. */
    phase: "never run" | "idle" | "capturing" | "rebuilding" | "migrating" | "failed (latched)";
    /** A capture runs now (in any process). */
    running: boolean;
    /**
     * A forget's scrub of the text index runs now (`forget --finish`, which a forget starts): it
     * holds the capture lock, so a capture waits for it.
     */
    scrubbing: boolean;
    latched: LatchedFailure | null;
    /** Progress of the running capture (null when none runs). */
    progress: ProgressView | null;
    /** The last run's result (see `recordRun`), and how long ago it ended. */
    lastRun: (LastRun & { ageMs: number }) | null;
  };
  /** The store's status, or null before the first capture (or when damage hides it). */
  store: StoreStatus | null;
  /**
   * What the store check found, when one was asked for; else the damage a quick check of the
   * text index found (null when it found none).
   */
  check: StoreCheck | null;
  /** Format drift, one human line each. */
  drift: string[];
  /** Plain-text snapshots taken before compaction. */
  snapshots: { count: number; bytes: number };
  stageMarkers: { enabled: boolean; off: string | null; unclosed: UnclosedStep[] };
  sessions: { count: number; corrupt: CorruptRecord[] };
}

export interface StatusOptions {
  /** Opens the store (default: read-only `openStore`), for callers that manage connections. */
  open?: () => HistoryStore;
  /** Wraps the store reading (the dashboard marks it as a stage). */
  wrap?: <T>(fn: () => T) => T;
  /** Also true when this process runs a capture that holds no lock file of its own. */
  running?: boolean;
  /**
   * Also check the store for damage (`gatherStatus`). It reads every page (seconds on a large
   * store), in a worker, so a dashboard keeps answering meanwhile.
   */
  check?: boolean;
  /** A check found damage: a store that cannot be read is left out instead of failing. */
  damaged?: boolean;
  /**
   * Also look at the text index for the damage its reads do not report (`quickCheck`,
   * milliseconds); `gatherStatus` does unless the whole check was asked for.
   */
  quickCheck?: boolean;
  /** Where a process that asks often keeps the quick check of a store that did not change. */
  quickChecks?: QuickChecks;
  /** Where a process that asks often keeps the open steps of the stage markers' log at `path`. */
  openSteps?: (path: string) => OpenSteps;
  now?: number;
}

/** Capture's state and the store's status, without the rest of the status. */
export interface CaptureState {
  capture: Status["capture"];
  /** The store's status, or null before the first capture (or when damage hides it). */
  store: StoreStatus | null;
  /** The damage a quick check found (asked for with `quickCheck`), else null. */
  damage: StoreCheck | null;
}

/** Reads capture's state and the store's status; reading never creates the store. */
export function captureState(ctx: Context, options: StatusOptions = {}): CaptureState {
  const now = options.now ?? ctx.now();
  const off = captureOffReason(ctx);
  const lockPath = join(ctx.paths.run, "capture.lock");
  const held = isLockHeld(lockPath);
  const scrubbing = held && isScrubHolder(readLock(lockPath));
  const running = options.running === true || (held && !scrubbing);
  let store: StoreStatus | null = null;
  let latched: LatchedFailure | null = null;
  let damage: StoreCheck | null = null;
  const exists = storeExists(ctx);
  if (exists) {
    const read = () => {
      let opened: HistoryStore | null = null;
      try {
        opened = options.open ? options.open() : openStore(ctx, { readOnly: true });
        store = storeStatus(opened, now);
        latched = latchedFailure(opened);
        if (options.quickCheck) {
          const found = options.quickChecks?.of(opened) ?? quickCheck(opened);
          if (!found.ok) damage = found;
        }
      } catch (err) {
        // The damage a check found may be what cannot be read: the check names it.
        if (!options.damaged || !isCorruption(err)) throw err;
      } finally {
        opened?.close();
      }
    };
    options.wrap ? options.wrap(read) : read();
  }
  const status = store as StoreStatus | null;
  const rebuilding = running && status?.progress?.phase === "rebuilding";
  const migrating = running && status?.progress?.phase === "migrating";
  return {
    capture: {
      on: off === null,
      offReason: off,
      phase: latched
        ? "failed (latched)"
        : rebuilding
        ? "rebuilding"
        : migrating
        ? "migrating"
        : running
        ? "capturing"
        : exists
        ? "idle"
        : "never run",
      running,
      scrubbing,
      latched,
      progress: running && status?.progress ? progressView(status.progress, now) : null,
      lastRun: lastRunAt(status?.lastRun, now),
    },
    store: status,
    damage,
  };
}

/**
 * The quick check of a store kept with the state of its files (the database and its WAL): asked
 * again while they are as they were, it answers without reading the whole term index again
 * (some 40 ms of CPU on a store of ten gigabytes). A write, by SQLite or not, makes it look
 * again. With the data dir's `paths`, a sound store's check is also kept in a file of its run
 * directory, so that every `status` of a store that did not change since is spared it, not only
 * a process that asks often (the dashboard, at every refresh).
 */
export class QuickChecks {
  #kept: KeptCheck | null = null;
  readonly #file: RunState<KeptCheck> | null;

  constructor(paths?: Pick<DataPaths, "root" | "run">) {
    this.#file = paths ? new RunState(paths, "quick_check.json", isSoundCheck) : null;
  }

  /** The data dir whose run directory keeps the check, if any. */
  get root(): string | null {
    return this.#file?.root ?? null;
  }

  /** The quick check of `store`, kept while its files stay as they are. */
  of(store: HistoryStore): StoreCheck {
    const started = Date.now();
    const state = filesState(store.path);
    if (this.#kept?.state === state.key) return this.#kept.found;
    const saved = this.#file?.read();
    if (saved?.state === state.key) return (this.#kept = saved).found;
    const found = quickCheck(store);
    // A file's time is the kernel's coarse clock (a few ms a tick): one written in the last
    // second may be written again with the same time, unseen; its check is not kept.
    this.#kept = state.writtenAt < started - 1000 ? { state: state.key, found } : null;
    if (this.#kept && found.ok) this.#file?.save(this.#kept);
    return found;
  }
}

/** A quick check kept with the state of the store's files it was made on. */
type KeptCheck = { state: string; found: StoreCheck };

/** Only a sound store's check is kept in a file: damage is looked at again by every status. */
function isSoundCheck(value: unknown): value is KeptCheck {
  const v = value as Partial<KeptCheck> | null;
  return typeof v?.state === "string" && v.found?.ok === true;
}

/** What identifies the state of the store at `path` and its WAL, and when it was last written. */
function filesState(path: string): { key: string; writtenAt: number } {
  const parts: string[] = [path];
  let writtenAt = 0;
  for (const file of [path, `${path}-wal`]) {
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(file);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
      parts.push("none");
      continue;
    }
    // An empty WAL holds nothing (a reader's open makes one, its close removes it).
    if (file !== path && info.size === 0) {
      parts.push("none");
      continue;
    }
    const mtime = info.mtime?.getTime() ?? Infinity;
    writtenAt = Math.max(writtenAt, mtime);
    parts.push(`${info.dev}:${info.ino}:${info.size}:${mtime}:${info.ctime?.getTime()}`);
  }
  return { key: parts.join(" "), writtenAt };
}

/** The last run's result with its age at `now`; null when none was recorded. */
function lastRunAt(kept: unknown, now: number): Status["capture"]["lastRun"] {
  const last = kept as LastRun | null | undefined;
  return last ? { ...last, ageMs: Math.max(0, now - last.at) } : null;
}

/**
 * Gathers the status, every string of it through the gate (a mirror's project is a transcript's
 * path, which may hold a token); reading never creates the store.
 */
export async function gatherStatus(ctx: Context, options: StatusOptions = {}): Promise<Status> {
  return mapStrings(await statusOf(ctx, options), redactorFor(ctx));
}

async function statusOf(ctx: Context, options: StatusOptions): Promise<Status> {
  const now = options.now ?? ctx.now();
  // The whole check and the session records' schemas (zod) are loaded only when there is
  // something for them to read: each costs every other status 10 to 25 ms of start-up.
  const check = options.check && storeExists(ctx)
    ? await (await import("./store/check.ts")).checkStoreInWorker(
      ctx.paths.historyDb,
      ctx.paths.root,
    )
    : null;
  const { capture, store: status, damage } = captureState(ctx, {
    ...options,
    now,
    damaged: check?.ok === false,
    quickCheck: check === null,
    quickChecks: options.quickChecks ?? new QuickChecks(ctx.paths),
  });
  const health = ctx.markers.health();
  const sessions = await sessionsOf(ctx);
  return {
    dataDir: ctx.paths.root,
    capture,
    store: status,
    // Damage a quick look found is reported as a check's: what, and how to recover.
    check: check ?? damage,
    drift: (status?.drift ?? []).map(describeDrift),
    snapshots: snapshotStats(ctx.paths.pruneArchives),
    stageMarkers: {
      enabled: health.enabled,
      off: health.off ?? null,
      unclosed: await openSteps(ctx, now, options.openSteps),
    },
    sessions,
  };
}

/** How many session records there are and which cannot be read; none without a sessions dir. */
async function sessionsOf(ctx: Context): Promise<Status["sessions"]> {
  if (!hasEntries(ctx.paths.sessions)) return { count: 0, corrupt: [] };
  const { SessionStore } = await import("./sessions/records.ts");
  const sessions = new SessionStore(ctx.paths, { incognito: true });
  let count = 0;
  const corrupt: CorruptRecord[] = [];
  for (const key of sessions.projectKeys()) {
    const listed = sessions.list(key);
    count += listed.sessions.length;
    corrupt.push(...listed.corrupt);
  }
  return { count, corrupt };
}

/** Whether `dir` is a directory with anything in it. */
function hasEntries(dir: string): boolean {
  try {
    return !Deno.readDirSync(dir)[Symbol.iterator]().next().done;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return false;
    }
    throw err;
  }
}

/** Percentage and time left of a capture's progress at `now`. */
export function progressView(p: Progress, now: number): ProgressView {
  const ratio = p.bytesTotal > 0 ? Math.min(1, p.bytesDone / p.bytesTotal) : 0;
  const elapsed = Math.max(0, now - p.startedAt);
  return {
    ...p,
    percent: Math.floor(ratio * 100),
    etaMs: ratio > 0.02 && ratio < 1 ? Math.round((elapsed / ratio) * (1 - ratio)) : null,
  };
}

async function openSteps(
  ctx: Context,
  now: number,
  kept?: (path: string) => OpenSteps,
): Promise<UnclosedStep[]> {
  let path: string;
  try {
    path = stageMarkersLocation(ctx.env).path;
  } catch {
    return [];
  }
  return await (kept ? kept(path) : new OpenSteps(path, ctx.paths)).read({ now });
}
