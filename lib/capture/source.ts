// A source as the store keeps it (its row in `sources`) and as a pass reads it (the adapter's
// state and what the pass learns on the way), with the state saved beside its cursor.

import type { StatementSync } from "node:sqlite";
import { type Adapter, pathOfLocator, type SourceRef } from "../sources/adapter.ts";
import { rowsById } from "../store/array_rows.ts";

/**
 * What a pass holds of every source the store knows, to tell whether its file changed since it
 * was read (`needsWork`) and to settle the sources moved and gone: its row less what reading it
 * needs (the rest is read for the sources with work, `SourceRow`). A row source's fingerprint
 * only (a file's is not compared).
 */
export interface KnownSource {
  id: number;
  locator: string;
  cursor: number;
  dev: number | null;
  ino: number | null;
  size: number | null;
  mtime_ms: number | null;
  gone: number;
  fingerprint: string | null;
  /** Found by the pass that holds it (`discover.ts`); not a column. */
  found?: boolean;
  /** Its row in what the worker that read it handed over (`FlatKnown`), if it did; not a column. */
  flatIndex?: number | undefined;
}

/** The columns of a `KnownSource`, in the order `knownSource` takes them. */
export const KNOWN_COLUMNS =
  "id, locator, cursor, dev, ino, size, mtime_ms, gone, CASE WHEN format = 'rows' THEN fingerprint END";

/**
 * Every source's `KNOWN_COLUMNS` as arrays, in id order, a page of rows a call (`rowsById`),
 * through `prepare` (a store's cached statements or a connection's): at 100,000 sources all of
 * them at once cost three times the collecting, and a row a call twice the time.
 */
export function knownRows(prepare: (sql: string) => StatementSync): Iterable<unknown[]> {
  return rowsById(prepare, "sources", KNOWN_COLUMNS);
}

/**
 * A row of `KNOWN_COLUMNS` as an array (`setReturnArrays`), made an object of one fixed shape:
 * at 100,000 sources SQLite's row objects, and the state each row holds, cost more to make and
 * collect than stat-ing every file does.
 */
export function knownSource(row: unknown[], flatIndex?: number): KnownSource {
  return {
    id: row[0] as number,
    locator: row[1] as string,
    cursor: row[2] as number,
    dev: row[3] as number | null,
    ino: row[4] as number | null,
    size: row[5] as number | null,
    mtime_ms: row[6] as number | null,
    gone: row[7] as number,
    fingerprint: row[8] as string | null,
    found: false,
    flatIndex,
  };
}

/**
 * Every source's `KNOWN_COLUMNS` flat, as the worker that reads them hands them over
 * (`known_worker.ts`): row i's locator at `locators[i]`, its other columns but the fingerprint at
 * `numbers[i * 7]` on in column order (NaN for a null), and the fingerprints there are as row
 * and value. The numbers cross as one buffer, not copied: rows as arrays cost the thread that
 * takes them a third of reading them.
 */
export interface FlatKnown {
  locators: string[];
  numbers: Float64Array<ArrayBuffer>;
  fingerprints: [row: number, fingerprint: string][];
}

/** The columns of `KNOWN_COLUMNS` held in `FlatKnown.numbers`, and where the others are. */
const FLAT_COLUMNS = [0, 2, 3, 4, 5, 6, 7];
const LOCATOR = 1;
const FINGERPRINT = 8;

/** `count` rows of `KNOWN_COLUMNS` as arrays (`setReturnArrays`), flat. */
export function flattenKnown(rows: Iterable<unknown[]>, count: number): FlatKnown {
  const flat: FlatKnown = {
    locators: [],
    numbers: new Float64Array(count * FLAT_COLUMNS.length),
    fingerprints: [],
  };
  let at = 0;
  for (const row of rows) {
    for (const column of FLAT_COLUMNS) flat.numbers[at++] = (row[column] as number | null) ?? NaN;
    const fingerprint = row[FINGERPRINT] as string | null;
    if (fingerprint !== null) flat.fingerprints.push([flat.locators.length, fingerprint]);
    flat.locators.push(row[LOCATOR] as string);
  }
  return flat;
}

/** The sources of `flat` by locator, as `loadSources` gives them. */
export function knownOfFlat(flat: FlatKnown): Map<string, KnownSource> {
  const fingerprints = new Map(flat.fingerprints);
  const known = new Map<string, KnownSource>();
  let at = 0;
  flat.locators.forEach((locator, i) => {
    const row: unknown[] = [];
    for (const column of FLAT_COLUMNS) {
      const value = flat.numbers[at++]!;
      row[column] = Number.isNaN(value) ? null : value;
    }
    row[LOCATOR] = locator;
    row[FINGERPRINT] = fingerprints.get(i) ?? null;
    known.set(locator, knownSource(row, i));
  });
  return known;
}

/** A row of the `sources` table. */
export interface SourceRow extends KnownSource {
  agent: string;
  format: string;
  generation: number;
  head_hash: string | null;
  state: string | null;
  cursor_key: string | null;
}

/** The columns of a `SourceRow`, to select instead of `*`. */
export const SOURCE_COLUMNS =
  "id, agent, locator, format, generation, cursor, dev, ino, size, mtime_ms, head_hash, state, gone, cursor_key, fingerprint";

/**
 * A row as SQLite gave it (`SOURCE_COLUMNS`), copied into an object of one fixed shape. A pass
 * keeps every source's row, and SQLite's own row objects take over twice the memory: 10,000
 * sources held 13 MiB instead of 5.5.
 */
export function sourceRow(row: unknown): SourceRow {
  const r = row as SourceRow;
  return {
    id: r.id,
    agent: r.agent,
    locator: r.locator,
    format: r.format,
    generation: r.generation,
    cursor: r.cursor,
    dev: r.dev,
    ino: r.ino,
    size: r.size,
    mtime_ms: r.mtime_ms,
    head_hash: r.head_hash,
    state: r.state,
    gone: r.gone,
    cursor_key: r.cursor_key,
    fingerprint: r.fingerprint,
  };
}

/** A source's file as a pass saw it: what tells a change, and nothing else of its stat. */
export interface FileSeen {
  size: number;
  mtimeMs: number | null;
  dev: number | null;
  ino: number | null;
}

/** What a pass keeps of a file's stat (a `Deno.FileInfo` holds four dates and a score of fields). */
export function fileSeen(stat: Deno.FileInfo): FileSeen {
  return {
    size: stat.size,
    mtimeMs: stat.mtime ? stat.mtime.getTime() : null,
    dev: stat.dev,
    ino: stat.ino,
  };
}

/** What `lookAt` says of a path with nothing at it. */
export const NOT_FOUND = "not found";

/** Why a path looked at is not read: nothing there, or no regular file. */
const NOT_READ = [NOT_FOUND, "symlink", "not a regular file"];

/**
 * The file at `path` as a pass sees it (lstat: a link is not followed), or why it is not read:
 * `NOT_FOUND`, or what else is there. Throws what lstat throws but not-found.
 */
export function lookAt(path: string): FileSeen | string {
  let stat: Deno.FileInfo;
  try {
    stat = Deno.lstatSync(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    return NOT_FOUND;
  }
  if (stat.isFile) return fileSeen(stat);
  return stat.isSymlink ? NOT_READ[1]! : NOT_READ[2]!;
}

/**
 * Known sources' files as the worker that read their rows looked at them (`known_worker.ts`),
 * rows `from` on: `kinds[i]` 0 when not looked at (lstat failed, the pass looks itself), 1 for a
 * file, whose size, mtime, dev and ino are at `numbers[i * 4]` on (NaN for a null), else 2 and
 * on for why it is not read (`lookAt`'s answer).
 */
export interface SeenChunk {
  from: number;
  kinds: Uint8Array<ArrayBuffer>;
  numbers: Float64Array<ArrayBuffer>;
}

/** Numbers of a file in `SeenChunk.numbers`. */
export const SEEN_NUMBERS = 4;

/** `lookAt` of the files of `locators[from]` to `locators[to - 1]`, as a chunk. */
export function lookAtKnown(locators: readonly string[], from: number, to: number): SeenChunk {
  const chunk: SeenChunk = {
    from,
    kinds: new Uint8Array(to - from),
    numbers: new Float64Array((to - from) * SEEN_NUMBERS),
  };
  for (let i = from; i < to; i++) {
    let seen: FileSeen | string;
    try {
      seen = lookAt(pathOfLocator(locators[i]!));
    } catch {
      continue;
    }
    const at = i - from;
    if (typeof seen === "string") {
      chunk.kinds[at] = 2 + NOT_READ.indexOf(seen);
      continue;
    }
    chunk.kinds[at] = 1;
    packSeen(chunk.numbers, at * SEEN_NUMBERS, seen);
  }
  return chunk;
}

/** Writes `seen`'s four numbers into `numbers` at `offset` (NaN for a null). */
export function packSeen(numbers: Float64Array, offset: number, seen: FileSeen): void {
  numbers[offset] = seen.size;
  numbers[offset + 1] = seen.mtimeMs ?? NaN;
  numbers[offset + 2] = seen.dev ?? NaN;
  numbers[offset + 3] = seen.ino ?? NaN;
}

/** The stat `packSeen` wrote into `numbers` at `offset`. */
export function unpackSeen(numbers: Float64Array, offset: number): FileSeen {
  const n = (k: number) => {
    const value = numbers[offset + k]!;
    return Number.isNaN(value) ? null : value;
  };
  return { size: numbers[offset]!, mtimeMs: n(1), dev: n(2), ino: n(3) };
}

/** What a `SeenChunk` (its kinds and numbers at `at`) says of row `at`, or undefined. */
export function seenOf(
  kinds: Uint8Array,
  numbers: Float64Array,
  at: number,
): FileSeen | string | undefined {
  const kind = kinds[at];
  if (!kind) return undefined;
  if (kind > 1) return NOT_READ[kind - 2];
  return unpackSeen(numbers, at * SEEN_NUMBERS);
}

/** A source being read: which generation, the adapter's state, and what was seen of it. */
export interface SourceCtx {
  adapter: Adapter;
  ref: SourceRef;
  sourceId: number;
  generation: number;
  /** The hash of the file's head remembered with the source (`<length>:<sha256>`). */
  headHash: string | null;
  state: unknown;
  lastTs: number | null;
  recognised: boolean;
}

/** The per-source state persisted with the cursor: the adapter's, plus the last time seen. */
export interface SavedState {
  a: unknown;
  t: number | null;
}

/** The state saved with a source's cursor, or null when there is none or it cannot be read. */
export function parseSaved(state: string | null): SavedState | null {
  if (!state) return null;
  try {
    return JSON.parse(state) as SavedState;
  } catch {
    return null;
  }
}

/** The state to save with the cursor of the source `ctx` reads, as JSON. */
export function savedState(ctx: SourceCtx): string {
  return JSON.stringify({ a: ctx.state, t: ctx.lastTs } satisfies SavedState);
}
