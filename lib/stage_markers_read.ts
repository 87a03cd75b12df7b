// Stage markers, the reader: the log and its `.1` read back (the last markers, every marker), and
// the steps that started and never finished, with whether their process is still alive. Used by
// `stage-markers`, `status` and the dashboard; writing is `stage_markers.ts`.

import { join } from "./path.ts";
import type { DataPaths } from "./paths.ts";
import { isPidAlive } from "./private_fs.ts";
import { RunState } from "./run_state.ts";
import {
  DEFAULT_STALL_AFTER_MS,
  liveDirOf,
  liveLockName,
  type Marker,
  type MarkerEvent,
  rotatedPath,
} from "./stage_markers.ts";

const EVENTS: ReadonlySet<string> = new Set(["start", "finish", "fail", "stall"]);
/** The form of an operation id, `<name>:<8 hex>`: only such an id names a lock file. */
const OP_ID = /^[a-z][a-z0-9_.-]{0,63}:[0-9a-f]{8}$/;

/** An open step as the log shows it. */
export interface UnclosedStep {
  op: string;
  seq: number;
  step: string;
  pid: number;
  /** When it started (ISO 8601). */
  started: string;
  /** How long it has been open, by the injected clock. */
  openMs: number;
  /** Whether process `pid` is still running (a reused pid can make a dead step look alive). */
  alive: boolean;
  /** Open longer than the stall threshold. */
  stalled: boolean;
  /** The writer logged a `stall` line for it. */
  stallReported: boolean;
}

/**
 * The markers of the log at `path` and its `.1`, oldest first, lines that are not markers
 * skipped. With `tail`, only the last `tail` (holding no more than that many in memory, and
 * reading `.1` only when the current file has fewer). A missing log has none.
 */
export async function readMarkers(
  path: string,
  options: { tail?: number } = {},
): Promise<Marker[]> {
  const { tail } = options;
  if (tail !== undefined && (!Number.isSafeInteger(tail) || tail < 0)) {
    throw new RangeError(`Expected a tail of zero or more markers: got "${tail}"`);
  }
  if (tail === undefined) {
    const all: Marker[] = [];
    for await (const marker of eachMarker(path)) all.push(marker);
    return all;
  }
  if (tail === 0) return [];
  const recent = await lastOf(path, tail);
  if (recent.length >= tail) return recent;
  return [...await lastOf(rotatedPath(path), tail - recent.length), ...recent];
}

/** Every marker of the log at `path`, `.1` first, streamed line by line. */
export async function* eachMarker(path: string): AsyncGenerator<Marker> {
  for await (const markers of markerBatches(path)) yield* markers;
}

/**
 * The markers of the log at `path`, `.1` first, a read's worth at a time: a reader loops over
 * each batch without a promise per line (a log near its rotation size holds 60,000 lines).
 */
async function* markerBatches(path: string): AsyncGenerator<Marker[]> {
  for (const file of [rotatedPath(path), path]) {
    for await (const { lines } of lineBatches(file)) yield markersOf(lines);
  }
}

/** The lines that are markers, as markers. */
function markersOf(lines: readonly string[]): Marker[] {
  const markers: Marker[] = [];
  for (const line of lines) {
    const marker = parseMarker(line);
    if (marker) markers.push(marker);
  }
  return markers;
}

/** How `unclosed` tells the time, a stall and a live process. */
export interface UnclosedOptions {
  now?: number;
  stallAfterMs?: number;
  /** Replaces the liveness check (default: the operation's live lock, else the pid). */
  isAlive?: (pid: number, op: string) => boolean;
}

/**
 * The steps of the log at `path` (and its `.1`) that started and never finished or failed,
 * oldest first, with whether their process is alive and how long they have been open. Holds only
 * the open set in memory.
 */
export async function unclosed(
  path: string,
  options: UnclosedOptions = {},
): Promise<UnclosedStep[]> {
  return await new OpenSteps(path).read(options);
}

/** A step open in the log, and whether its writer logged a stall for it. */
type OpenEntry = { marker: Marker; stallReported: boolean };

/** The files read: `.1` as it was, and how far into the current log (its complete lines). */
type ReadSoFar = { rotated: string; current: string; offset: number };

/** What `OpenSteps` keeps between processes: the log, how far it was read, the steps open. */
type KeptSteps = { path: string; read: ReadSoFar; open: [string, OpenEntry][] };

/**
 * The open steps of one log, kept between reads: reading again takes only the lines written
 * since, until the log is rotated (then it reads both files again). For a process that asks
 * often: the dashboard, whose every refresh of its status logs a step of its own, in a log that
 * grows to 8 MiB beside its `.1` (a whole read of both is some 100 ms, 200 at 10 GB's capture).
 * With the data dir's `paths`, they are also kept in its run directory, so that each `status`
 * reads only the lines written since the last one.
 */
export class OpenSteps {
  readonly #path: string;
  readonly #kept: RunState<KeptSteps> | null;
  #open = new Map<string, OpenEntry>();
  #read: ReadSoFar | null = null;
  #reading: Promise<unknown> = Promise.resolve();

  constructor(path: string, paths?: Pick<DataPaths, "root" | "run">) {
    this.#path = path;
    this.#kept = paths ? new RunState(paths, "open_steps.json", isKeptSteps) : null;
  }

  /** The log whose steps these are. */
  get path(): string {
    return this.#path;
  }

  /** The steps open now (see `unclosed`); reads one after another, each from where the last ended. */
  read(options: UnclosedOptions = {}): Promise<UnclosedStep[]> {
    const next = this.#reading.then(() => this.#readOn(options));
    this.#reading = next.catch(() => {});
    return next;
  }

  async #readOn(options: UnclosedOptions): Promise<UnclosedStep[]> {
    const path = this.#path;
    if (this.#read === null) this.#takeKept();
    const rotated = identity(rotatedPath(path)).key;
    const current = identity(path);
    const before = this.#read;
    if (
      before === null || before.rotated !== rotated || before.current !== current.key ||
      current.size < before.offset
    ) {
      this.#open = new Map();
      for await (const { lines } of lineBatches(rotatedPath(path))) {
        this.#apply(markersOf(lines));
      }
      this.#read = { rotated, current: current.key, offset: 0 };
    }
    const from = this.#read!.offset;
    let offset = from;
    for await (const batch of lineBatches(path, from)) {
      this.#apply(markersOf(batch.lines));
      offset = batch.end;
    }
    const read = this.#read = { rotated, current: current.key, offset };
    if (
      this.#kept && (before?.rotated !== rotated || before.current !== read.current ||
        before.offset !== offset)
    ) this.#kept.save({ path, read, open: [...this.#open] });
    return this.#steps(options);
  }

  /** Starts from what the last process kept of this log, if it kept any. */
  #takeKept(): void {
    const kept = this.#kept?.read();
    if (kept?.path !== this.#path) return;
    this.#open = new Map(kept.open);
    this.#read = kept.read;
  }

  #apply(markers: readonly Marker[]): void {
    const open = this.#open;
    for (const marker of markers) {
      const key = `${marker.pid} ${marker.op} ${marker.seq}`;
      if (marker.event === "start") open.set(key, { marker, stallReported: false });
      else if (marker.event === "stall") {
        const entry = open.get(key);
        if (entry) entry.stallReported = true;
      } else open.delete(key);
    }
  }

  #steps(options: UnclosedOptions): UnclosedStep[] {
    const path = this.#path;
    const now = options.now ?? Date.now();
    const stallAfterMs = options.stallAfterMs ?? DEFAULT_STALL_AFTER_MS;
    const isAlive = options.isAlive ??
      ((pid: number, op: string) => liveLockState(path, op) ?? pidAlive(pid));
    const alive = new Map<string, boolean>();
    return [...this.#open.values()].map(({ marker, stallReported }) => {
      const who = `${marker.pid} ${marker.op}`;
      if (!alive.has(who)) alive.set(who, isAlive(marker.pid, marker.op));
      const openMs = Math.max(0, now - Date.parse(marker.time));
      return {
        op: marker.op,
        seq: marker.seq,
        step: marker.step,
        pid: marker.pid,
        started: marker.time,
        openMs,
        alive: alive.get(who)!,
        stalled: openMs > stallAfterMs,
        stallReported,
      };
    });
  }
}

/**
 * What tells a log file from another that took its name (a rotation renames it, a removal and
 * a new write make another), and for `.1` also from itself rewritten; "none" when it is missing.
 */
function identity(file: string): { key: string; size: number } {
  try {
    const info = Deno.statSync(file);
    const key = `${info.dev}:${info.ino}:${info.birthtime?.getTime() ?? ""}`;
    return { key, size: info.size };
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return { key: "none", size: 0 };
    }
    throw err;
  }
}

/** Whether `value` is what `OpenSteps` keeps: its open steps hold markers as the log's. */
function isKeptSteps(value: unknown): value is KeptSteps {
  const v = value as Partial<KeptSteps> | null;
  const read = v?.read as Partial<ReadSoFar> | undefined;
  return typeof v?.path === "string" && typeof read?.rotated === "string" &&
    typeof read.current === "string" && Number.isSafeInteger(read.offset) &&
    Array.isArray(v.open) &&
    v.open.every((entry) =>
      Array.isArray(entry) && typeof entry[0] === "string" &&
      typeof entry[1]?.stallReported === "boolean" &&
      asMarker(entry[1].marker) !== undefined
    );
}

/**
 * Whether the operation `op` of the log at `path` has a live process: true while its lock is
 * held, false once released by a dead process, undefined when there is no lock file to ask.
 */
function liveLockState(path: string, op: string): boolean | undefined {
  if (!OP_ID.test(op)) return undefined;
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(join(liveDirOf(path), liveLockName(op)), { read: true });
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw err;
  }
  try {
    return !file.tryLockSync(true);
  } finally {
    file.close();
  }
}

/** `isPidAlive` where the process may ask; without the permission a lockless step reads dead. */
function pidAlive(pid: number): boolean {
  try {
    return isPidAlive(pid);
  } catch (err) {
    if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
      return false;
    }
    throw err;
  }
}

/** The last `count` markers of one file, through a ring buffer. */
async function lastOf(file: string, count: number): Promise<Marker[]> {
  const ring: Marker[] = [];
  let next = 0;
  for await (const { lines } of lineBatches(file)) {
    for (const line of lines) {
      const marker = parseMarker(line);
      if (!marker) continue;
      if (ring.length < count) ring.push(marker);
      else ring[next] = marker;
      next = (next + 1) % count;
    }
  }
  return ring.length < count ? ring : [...ring.slice(next), ...ring.slice(0, next)];
}

// A read's lines are alive while its batch is read: more than 64 KiB of them at a time makes the
// young-generation collections of a 1 MiB semi-space (the commands' V8 flags) copy them again.
const READ_SIZE = 64 * 1024;
/** Markers are a few hundred bytes; anything longer is not one and is skipped unparsed. */
const MAX_LINE = 16 * 1024;

/**
 * The complete lines of `file` from byte `from` (a line's start), those of one read at a time,
 * each read's bytes decoded at once, with the offset just past the last (a torn last line is
 * left out); none when it is missing.
 */
async function* lineBatches(
  file: string,
  from = 0,
): AsyncGenerator<{ lines: string[]; end: number }> {
  let handle: Deno.FsFile;
  try {
    handle = await Deno.open(file, { read: true });
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) return;
    throw err;
  }
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(READ_SIZE);
  // The start of a line the last read did not end, or null while one too long is skipped.
  let pending: Uint8Array | null = new Uint8Array(0);
  let at = from;
  try {
    if (from > 0) await handle.seek(from, Deno.SeekMode.Start);
    while (true) {
      const n = await handle.read(buffer);
      if (n === null) return;
      const chunk = buffer.subarray(0, n);
      at += n;
      const first = chunk.indexOf(0x0a);
      if (first < 0) {
        pending = pending && pending.length + n <= MAX_LINE ? concat(pending, chunk) : null;
        continue;
      }
      const lines: string[] = [];
      if (pending && pending.length + first <= MAX_LINE) {
        lines.push(decoder.decode(concat(pending, chunk.subarray(0, first))));
      }
      const last = chunk.lastIndexOf(0x0a);
      if (last > first) {
        for (const line of decoder.decode(chunk.subarray(first + 1, last)).split("\n")) {
          // Characters, not bytes: a line of 16 K characters holds at least 16 KiB.
          if (line.length <= MAX_LINE) lines.push(line);
        }
      }
      pending = n - last - 1 <= MAX_LINE ? chunk.slice(last + 1) : null;
      yield { lines, end: at - (n - last - 1) };
    }
  } finally {
    handle.close();
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** A line as a marker, or undefined when it is not a well-formed one. */
function parseMarker(line: string): Marker | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  return asMarker(value);
}

/** A parsed value as a marker, or undefined when it is not a well-formed one. */
function asMarker(value: unknown): Marker | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (
    typeof v.time !== "string" || Number.isNaN(Date.parse(v.time)) ||
    !Number.isSafeInteger(v.pid) || (v.pid as number) <= 0 ||
    typeof v.op !== "string" || !Number.isSafeInteger(v.seq) ||
    typeof v.step !== "string" || typeof v.event !== "string" || !EVENTS.has(v.event)
  ) return undefined;
  const marker: Marker = {
    time: v.time,
    pid: v.pid as number,
    op: v.op,
    seq: v.seq as number,
    step: v.step,
    event: v.event as MarkerEvent,
  };
  if (typeof v.ms === "number" && Number.isFinite(v.ms)) marker.ms = v.ms;
  if (typeof v.error === "string") marker.error = v.error;
  if (typeof v.code === "string") marker.code = v.code;
  return marker;
}
