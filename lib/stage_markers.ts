// Stage markers, the writer: every step of a long operation leaves a JSON line as it starts and
// as it ends, so a step that stalls or dies shows itself. Names and timings only, never contents
// or messages. Reading the log back is `stage_markers_read.ts`.

import { basename, dirname, isAbsolute, join, relative, sep } from "./path.ts";
import { formatDuration, messageOf } from "./format.ts";
import { type Env, isOff } from "./env.ts";
import { dataDir, dataPaths } from "./paths.ts";
import {
  appendPrivate,
  assertNoSymlinkInside,
  ensurePrivateDir,
  ensurePrivateFile,
} from "./private_fs.ts";

/** What a step or operation name must look like: short, lowercase, no user text. */
export const STEP_NAME = /^[a-z][a-z0-9_.-]{0,63}$/;
/** How long a step may stay open before a `stall suspected` report (120 s). */
export const DEFAULT_STALL_AFTER_MS = 120_000;
/** The size at which the log is rotated to `.1` (8 MiB). */
export const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;

/** What happened to a step: it started, finished, failed, or has been open too long. */
export type MarkerEvent = "start" | "finish" | "fail" | "stall";

/** One line of the log. `op`, `pid` and `seq` together name one run of a step. */
export interface Marker {
  /** ISO 8601 time, UTC. */
  time: string;
  pid: number;
  /** The operation id, `<name>:<8 hex>`, grouping the steps of one long operation. */
  op: string;
  /** Numbers the steps a writer opens, so a start pairs with its own end. */
  seq: number;
  step: string;
  event: MarkerEvent;
  /** How long the step had been open (finish, fail, stall). */
  ms?: number;
  /** The error's class name (`NotFound`, `SnapshotError`), never its message. */
  error?: string;
  /** The error's short code (`ENOSPC`) when it has one. */
  code?: string;
}

/** Schedules the stall check; injected so tests can fire it by hand. */
export interface StallTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/** How a writer is set up. Without `path`, or with `enabled: false`, it writes nothing at all. */
export interface StageMarkersOptions {
  /** The log file. */
  path?: string;
  /** The tree no symbolic link may be followed in and whose missing dirs are made 0700
   * (default: the log's own directory). */
  root?: string;
  /** False turns markers off (incognito runs): no file, no directory, no stall timers. */
  enabled?: boolean;
  /** Why the writer is off, for `health()` (set by `stageMarkersFromEnv`). */
  offReason?: string;
  now?: () => number;
  pid?: number;
  /** A step open longer than this gets one `stall suspected` report (default 120 s). */
  stallAfterMs?: number;
  /**
   * Receives the one-line stall report: a command passes its stderr. Without one the report is
   * only the `stall` marker in the log (the library never writes to a terminal itself).
   */
  onStall?: (line: string) => void;
  /** Rotation size (default 8 MiB). */
  maxBytes?: number;
  timers?: StallTimers;
}

/** A step opened by `begin()`; closing it twice does nothing. */
export interface OpenStep {
  readonly step: string;
  readonly seq: number;
  /** Writes the `finish` marker. */
  finish(): void;
  /** Writes the `fail` marker: only the class name and short code of a thrown `error` are kept;
   * a string is a fixed code of your own such as `"timeout"` (the form of a step name). */
  fail(error?: unknown): void;
}

/** The steps of one operation. */
export interface Operation {
  /** `<name>:<8 hex>`, the `op` of every marker written through this object. */
  readonly id: string;
  /** Runs `fn` as step `step`: `start` before, `finish` or `fail` after; returns or rethrows. */
  stage<T>(step: string, fn: () => Promise<T> | T): Promise<T>;
  /** The same for synchronous work (no stall timer: nothing could report while it blocks). */
  stageSync<T>(step: string, fn: () => T): T;
  /** Opens a step to be closed by hand, for work that does not fit in one function. */
  begin(step: string): OpenStep;
}

/** What a writer has done, for `status` to report markers that could not be written. */
export interface StageMarkersHealth {
  enabled: boolean;
  path: string | undefined;
  /** Why markers are off, when they are. */
  off?: string;
  written: number;
  dropped: number;
  /** The last write error's message (local only: never written to the log). */
  lastError?: string;
}

/** A marker writer. Its own `stage`/`begin` use a default operation for the whole process. */
export interface StageMarkers extends Operation {
  readonly enabled: boolean;
  readonly path: string | undefined;
  /** Opens an operation, e.g. `operation("capture")` for one capture run. */
  operation(name: string): Operation;
  health(): StageMarkersHealth;
}

const ERROR_NAME = /^[A-Za-z_$][A-Za-z0-9_$.]{0,63}$/;
/** The form of system and library codes: `ENOSPC`, `ERR_SQLITE_ERROR`. */
const ERROR_CODE = /^[A-Z][A-Z0-9_]{1,39}$/;

/** Throws TypeError unless `name` is a valid step or operation name. */
export function assertStepName(name: unknown, what = "step"): asserts name is string {
  if (typeof name !== "string" || !STEP_NAME.test(name)) {
    throw new TypeError(
      `Invalid stage ${what} name "${String(name).slice(0, 80)}": expected 1 to 64 of a-z, 0-9, ` +
        `"_", "." or "-", starting with a letter`,
    );
  }
}

/** The rotated log beside `path`. */
export function rotatedPath(path: string): string {
  return `${path}.1`;
}

/** Creates a marker writer; see StageMarkersOptions. */
export function createStageMarkers(options: StageMarkersOptions = {}): StageMarkers {
  return new Writer(options);
}

/**
 * Where the log is and which tree guards it: `logs/stage-markers.log` in the data dir (guarded
 * from the data dir), or `LOGBOOK_STAGE_MARKERS_PATH` (guarded from its own directory when it is
 * outside the data dir). Throws NoHomeError when the data dir cannot be located.
 */
export function stageMarkersLocation(env: Env): { path: string; root: string } {
  const data = physical(dataDir(env));
  const path = dataPaths(data, env).stageMarkers;
  const rel = relative(data, path);
  if (rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel)) {
    return { path, root: data };
  }
  // The user chose this place: a link above the log (such as macOS's /tmp) is theirs to have.
  const root = physical(dirname(path));
  return { path: join(root, basename(path)), root };
}

/**
 * A writer configured from the environment: off when `LOGBOOK_STAGE_MARKERS` is `0` (or when the
 * data dir cannot be located), else writing where `stageMarkersLocation` says. `options` add the
 * clock, sink or `enabled: false` (incognito); they cannot turn on what the environment turns off.
 *
 * @example
 * configureStageMarkers(stageMarkersFromEnv(env, { enabled: !incognito, onStall: io.err }));
 */
export function stageMarkersFromEnv(
  env: Env,
  options: Omit<StageMarkersOptions, "path" | "root" | "offReason"> = {},
): StageMarkers {
  if (isOff(env.get("LOGBOOK_STAGE_MARKERS"))) {
    return createStageMarkers({ ...options, enabled: false, offReason: "LOGBOOK_STAGE_MARKERS=0" });
  }
  if (options.enabled === false) return createStageMarkers({ ...options, offReason: "turned off" });
  let location: { path: string; root: string };
  try {
    location = stageMarkersLocation(env);
  } catch (err) {
    return createStageMarkers({ ...options, enabled: false, offReason: messageOf(err) });
  }
  return createStageMarkers({ ...options, ...location });
}

let processWide: StageMarkers | undefined;

/**
 * The process-wide writer that `stage`, `stageSync`, `beginStage` and `operation` use. Unless
 * `configureStageMarkers` set one, it is made on first use from `Deno.env`, and is off when the
 * process may not read the environment or read and write the log (it never prompts).
 */
export function stageMarkers(): StageMarkers {
  processWide ??= fromProcess();
  return processWide;
}

/** Replaces the process-wide writer (a command does this first, with its own env and flags). */
export function configureStageMarkers(markers: StageMarkers): StageMarkers {
  processWide = markers;
  return markers;
}

/**
 * Runs `fn` as step `step` of the process-wide writer's default operation.
 *
 * @example
 * const rows = await stage("index.write", () => writeBatch(store, batch));
 */
export function stage<T>(step: string, fn: () => Promise<T> | T): Promise<T> {
  return stageMarkers().stage(step, fn);
}

/** Runs synchronous `fn` as step `step` of the process-wide writer's default operation. */
export function stageSync<T>(step: string, fn: () => T): T {
  return stageMarkers().stageSync(step, fn);
}

/** Opens step `step` of the process-wide writer's default operation, to be closed by hand. */
export function beginStage(step: string): OpenStep {
  return stageMarkers().begin(step);
}

/**
 * Opens an operation on the process-wide writer.
 *
 * @example
 * const op = operation("capture");
 * await op.stage("capture.discover", () => discover());
 */
export function operation(name: string): Operation {
  return stageMarkers().operation(name);
}

/** The class name and short code of a thrown value: all a `fail` marker keeps of it. */
export function errorClass(error: unknown): { error: string; code?: string } {
  if (error instanceof Error) {
    const name = ERROR_NAME.test(error.name) ? error.name : "Error";
    const code = "code" in error ? error.code : undefined;
    return typeof code === "string" && ERROR_CODE.test(code)
      ? { error: name, code }
      : { error: name };
  }
  return { error: error === undefined ? "Error" : "NonError" };
}

const realTimers: StallTimers = {
  set(fn, ms) {
    const id = setTimeout(fn, ms);
    // A stall check must never be the reason a finished process stays alive.
    Deno.unrefTimer(id);
    return id;
  },
  clear(handle) {
    clearTimeout(handle as number);
  },
};

const encoder = new TextEncoder();

class Writer implements StageMarkers {
  readonly enabled: boolean;
  readonly path: string | undefined;
  readonly #root: string;
  readonly #off: string | undefined;
  readonly #now: () => number;
  readonly #pid: number;
  readonly #stallAfterMs: number;
  readonly #onStall: (line: string) => void;
  readonly #maxBytes: number;
  readonly #timers: StallTimers;
  readonly #default: Operation;
  #seq = 0;
  #written = 0;
  #dropped = 0;
  #lastError: string | undefined;
  /** Open steps per operation, and the liveness lock held while there are any. */
  readonly #live = new Map<string, { open: number; lock: HeldLiveLock | undefined }>();
  #swept = false;

  constructor(options: StageMarkersOptions) {
    const stallAfterMs = options.stallAfterMs ?? DEFAULT_STALL_AFTER_MS;
    if (!(stallAfterMs > 0)) {
      throw new RangeError(`Expected a positive stall threshold: got "${stallAfterMs}"`);
    }
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1024) {
      throw new RangeError(`Expected a rotation size of at least 1024 bytes: got "${maxBytes}"`);
    }
    this.path = options.path;
    this.enabled = options.enabled !== false && options.path !== undefined;
    this.#off = this.enabled
      ? undefined
      : options.offReason ?? (options.path === undefined ? "no log path" : "turned off");
    this.#root = options.root ?? dirname(options.path ?? ".");
    this.#now = options.now ?? Date.now;
    this.#pid = options.pid ?? Deno.pid;
    this.#stallAfterMs = stallAfterMs;
    this.#onStall = options.onStall ?? (() => {});
    this.#maxBytes = maxBytes;
    this.#timers = options.timers ?? realTimers;
    this.#default = this.operation("process");
  }

  get id(): string {
    return this.#default.id;
  }

  stage<T>(step: string, fn: () => Promise<T> | T): Promise<T> {
    return this.#default.stage(step, fn);
  }

  stageSync<T>(step: string, fn: () => T): T {
    return this.#default.stageSync(step, fn);
  }

  begin(step: string): OpenStep {
    return this.#default.begin(step);
  }

  operation(name: string): Operation {
    assertStepName(name, "operation");
    const id = `${name}:${randomHex()}`;
    const begin = (step: string, stall: boolean) => this.#begin(id, step, stall);
    return {
      id,
      async stage<T>(step: string, fn: () => Promise<T> | T): Promise<T> {
        const open = begin(step, true);
        let result: T;
        try {
          result = await fn();
        } catch (err) {
          open.thrown(err);
          throw err;
        }
        open.finish();
        return result;
      },
      stageSync<T>(step: string, fn: () => T): T {
        const open = begin(step, false);
        let result: T;
        try {
          result = fn();
        } catch (err) {
          open.thrown(err);
          throw err;
        }
        open.finish();
        return result;
      },
      begin: (step: string) => begin(step, true),
    };
  }

  health(): StageMarkersHealth {
    return {
      enabled: this.enabled,
      path: this.path,
      ...(this.#off === undefined ? {} : { off: this.#off }),
      written: this.#written,
      dropped: this.#dropped,
      ...(this.#lastError === undefined ? {} : { lastError: this.#lastError }),
    };
  }

  #begin(op: string, step: string, stall: boolean): OpenStep & { thrown(err: unknown): void } {
    assertStepName(step);
    const seq = ++this.#seq;
    const started = this.#now();
    const base = { op, seq, step };
    let closed = false;
    let timer: unknown;
    let timerSet = false;
    if (this.enabled) {
      // The lock comes first: a reader that sees the start must also see the process alive.
      this.#opened(op);
      this.#write({ ...base, event: "start" }, started);
      if (stall && Number.isFinite(this.#stallAfterMs)) {
        timer = this.#timers.set(() => {
          timerSet = false;
          if (!closed) this.#stall(op, seq, step, started);
        }, Math.min(this.#stallAfterMs, 2 ** 31 - 1));
        timerSet = true;
      }
    }
    const close = (event: "finish" | "fail", extra: { error?: string; code?: string }) => {
      if (closed) return;
      closed = true;
      if (timerSet) this.#timers.clear(timer);
      timerSet = false;
      if (!this.enabled) return;
      const at = this.#now();
      this.#write({ ...base, event, ms: Math.max(0, Math.round(at - started)), ...extra }, at);
      this.#closed(op);
    };
    return {
      step,
      seq,
      finish: () => close("finish", {}),
      fail: (error?: unknown) => {
        if (typeof error === "string") {
          if (!STEP_NAME.test(error)) {
            throw new TypeError(
              `Invalid stage failure code "${error.slice(0, 80)}": expected a short code ` +
                `such as "timeout", not a message`,
            );
          }
          close("fail", { error });
        } else close("fail", errorClass(error));
      },
      // What a wrapped function threw is never taken as a code, whatever its type.
      thrown: (err: unknown) => close("fail", errorClass(err)),
    };
  }

  #opened(op: string): void {
    const entry = this.#live.get(op) ?? { open: 0, lock: undefined };
    this.#live.set(op, entry);
    if (++entry.open === 1) entry.lock = this.#holdLiveLock(op);
  }

  #closed(op: string): void {
    const entry = this.#live.get(op);
    if (!entry || --entry.open > 0) return;
    this.#live.delete(op);
    if (entry.lock) releaseLiveLock(entry.lock);
  }

  /** Takes `<op>.lock` in the live dir, so readers can tell this operation's process is alive. */
  #holdLiveLock(op: string): HeldLiveLock | undefined {
    const path = this.path!;
    try {
      const dir = liveDirOf(path);
      ensurePrivateDir(dir, this.#root);
      if (!this.#swept) {
        this.#swept = true;
        sweepLiveDir(dir, Date.now());
      }
      const lockPath = join(dir, liveLockName(op));
      ensurePrivateFile(lockPath, this.#root);
      const file = Deno.openSync(lockPath, { read: true, write: true });
      if (file.tryLockSync(true)) return { file, path: lockPath };
      file.close();
    } catch (err) {
      // Without the lock, readers fall back to probing the pid; the markers still go out.
      this.#lastError = messageOf(err);
    }
    return undefined;
  }

  #stall(op: string, seq: number, step: string, started: number): void {
    const at = this.#now();
    const ms = Math.max(0, Math.round(at - started));
    this.#write({ op, seq, step, event: "stall", ms }, at);
    try {
      this.#onStall(
        `warning: stall suspected: step "${step}" of operation "${op}" (pid ${this.#pid}) ` +
          `has been open for ${formatDuration(ms)}; nothing is cancelled\n`,
      );
    } catch {
      // A failing sink must not turn a report into a failure.
    }
  }

  #write(fields: Omit<Marker, "time" | "pid">, at: number): void {
    const marker = { time: isoTime(at), pid: this.#pid, ...fields };
    const line = JSON.stringify(marker) + "\n";
    const path = this.path!;
    try {
      this.#rotateFor(path, encoder.encode(line).length);
      appendPrivate(path, line, this.#root);
      this.#written++;
    } catch (err) {
      // A marker is never worth failing the step it describes; `health()` says what was lost.
      this.#dropped++;
      this.#lastError = messageOf(err);
    }
  }

  /** Renames the log to `.1` (replacing the old one) when `bytes` more would pass the limit. */
  #rotateFor(path: string, bytes: number): void {
    let size: number;
    try {
      const info = Deno.lstatSync(path);
      if (!info.isFile) return; // appendPrivate refuses it and the marker is counted as dropped
      size = info.size;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) return;
      throw err;
    }
    if (size === 0 || size + bytes <= this.#maxBytes) return;
    assertNoSymlinkInside(path, this.#root);
    try {
      Deno.renameSync(path, rotatedPath(path));
    } catch (err) {
      // Another process rotated it a moment ago.
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
}

/** A held liveness lock: the open file holding it and its path. */
interface HeldLiveLock {
  file: Deno.FsFile;
  path: string;
}

/** Unlocked lock files older than this are left by dead processes and are removed. */
const STALE_LOCK_MS = 60_000;

/**
 * The directory of liveness locks beside the log (`logs/stage-markers.live/`): a process holds
 * `<op>.lock` while that operation has open steps, and the OS lets the lock go when the process
 * dies, however it dies. Reading `/proc` or signalling a pid needs more than the commands' read
 * and write permissions, and a lock cannot be fooled by a reused pid.
 */
export function liveDirOf(path: string): string {
  return join(dirname(path), `${basename(path).replace(/\.log$/, "")}.live`);
}

/** The name of operation `op`'s lock file in the live dir. */
export function liveLockName(op: string): string {
  return `${op.replace(":", "-")}.lock`;
}

function releaseLiveLock(lock: HeldLiveLock): void {
  // Removed before it is unlocked, so no reader finds it unlocked while the process lives.
  try {
    Deno.removeSync(lock.path);
  } catch {
    // Already swept or never removable: the released lock still reads as not alive.
  }
  try {
    lock.file.close();
  } catch {
    // Closed already.
  }
}

/** Removes lock files that nobody holds and that are not being created right now. */
function sweepLiveDir(dir: string, now: number): void {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return;
  }
  for (const entry of entries) {
    if (!entry.isFile || !entry.name.endsWith(".lock")) continue;
    const path = join(dir, entry.name);
    try {
      const mtime = Deno.lstatSync(path).mtime?.getTime() ?? now;
      if (now - mtime < STALE_LOCK_MS) continue;
      const file = Deno.openSync(path, { read: true });
      try {
        if (file.tryLockSync(true)) Deno.removeSync(path);
      } finally {
        file.close();
      }
    } catch {
      // Gone already, or not ours to remove: a stale file costs nothing.
    }
  }
}

/** The process-wide default: from `Deno.env`, off where permissions would make Deno prompt. */
function fromProcess(): StageMarkers {
  if (!granted({ name: "env" })) {
    return createStageMarkers({
      enabled: false,
      offReason: "no permission to read the environment",
    });
  }
  const markers = stageMarkersFromEnv(Deno.env);
  if (!markers.enabled || markers.path === undefined) return markers;
  const dir = dirname(markers.path);
  if (!granted({ name: "read", path: dir }) || !granted({ name: "write", path: dir })) {
    return createStageMarkers({
      enabled: false,
      offReason: `no permission to read and write "${dir}"`,
    });
  }
  return markers;
}

function granted(descriptor: Deno.PermissionDescriptor): boolean {
  try {
    return Deno.permissions.querySync(descriptor).state === "granted";
  } catch {
    return false;
  }
}

function randomHex(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(4));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function isoTime(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? new Date(0).toISOString() : date.toISOString();
}

function physical(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}
