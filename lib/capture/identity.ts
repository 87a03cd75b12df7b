// Which file is which source, and when a source starts a new generation. A source keeps its
// identity when its file moves (Codex archives and compresses rollouts); a file that no longer
// continues what was captured (replaced, shortened, its first bytes rewritten, or rewritten in
// place) starts a new generation, and the records of the old one stay. A source missing
// upstream is marked gone.
//
// What tells a rewrite, and what it costs: an unchanged file (same size, mtime, inode) is not
// opened. One that grew is checked at both ends: the hash of its first 4 KiB remembered with the
// cursor, and its last 64 KiB before the cursor against the bytes the store holds there (a
// millisecond or two). One whose mtime moved while its size stayed (written in place without
// growing) is compared whole, every captured byte against the store, once per such change, so a
// rewrite of the same size anywhere is found. That costs a read of the file and of its stored
// records, less than reading and hashing the file (a 100 MiB transcript: 0.4 to 0.7 s, where
// SHA-256 of it takes 0.9 s), and it is rare: agents append. Nothing new is remembered for it,
// so sources captured by earlier builds are compared the same way.

import { pathOfLocator, type SourceRef } from "../sources/adapter.ts";
import type { HistoryStore } from "../store/db.ts";
import { derivationOf } from "./derivation.ts";
import { decodedRow } from "../store/raw.ts";
import { sha256Hex } from "../sha256.ts";
import type { Found } from "./discover.ts";
import type { ByteReader } from "./lines.ts";
import type { FromKnownWorker, ToKnownWorker } from "./known_worker.ts";
import {
  type FileSeen,
  knownOfFlat,
  knownRows,
  type KnownSource,
  knownSource,
  SEEN_NUMBERS,
  seenOf,
  SOURCE_COLUMNS,
  type SourceCtx,
  type SourceRow,
  sourceRow,
} from "./source.ts";
import { type OpenedSource, openSourceReader } from "./source_reader.ts";

/** Bytes of a file's head whose hash is remembered with its cursor. */
const HEAD_BYTES = 4096;
/** Bytes before the cursor compared with the store when a file grew. */
const TAIL_BYTES = 64 * 1024;
/** Bytes of a file read at once when compared with the store. */
const COMPARE_READ = 1024 * 1024;

/** Every source the store knows, by locator: what tells whether its file changed. */
export function loadSources(store: HistoryStore): Map<string, KnownSource> {
  const known = new Map<string, KnownSource>();
  for (const row of knownRows((sql) => store.stmt(sql))) {
    const source = knownSource(row);
    known.set(source.locator, source);
  }
  return known;
}

/** The store's sources as a pass reads them beside its discovery (`loadSourcesAside`). */
export interface SourcesAside {
  /** The sources, once read (at once when read inline). */
  readonly rows: Map<string, KnownSource> | null;
  /** The sources, when read. */
  readonly known: Promise<Map<string, KnownSource>>;
  /** Settles once the worker has looked at every known source's file, or is stopped. */
  readonly looked: Promise<void>;
  /** Whether a worker is still reading or looking: its messages come as the event loop turns. */
  readonly working: boolean;
  /** The file at `path` of the known source `row` as the worker looked at it, if it has yet. */
  seen(row: KnownSource, path: string): FileSeen | string | undefined;
  /** Stops the worker: the pass has looked at every file. */
  stop(): void;
}

/**
 * Every source the store knows, as `loadSources` gives them, read in a worker with a connection
 * of its own when the store has `asideFrom` sources or more (`Limits.knownAsideFrom`), which then
 * looks at their files from the last back while the pass finds and looks at them from the first.
 * Read inline (before this returns) with fewer, or when no worker can start or read them (a
 * compiled binary without the worker's module). Call it before the pass discovers; stop it once
 * it has.
 */
export function loadSourcesAside(store: HistoryStore, asideFrom: number): SourcesAside {
  const { last } = store.stmt("SELECT max(id) AS last FROM sources").get() as {
    last: number | null;
  };
  if ((last ?? 0) >= asideFrom) {
    const aside = WorkerAside.start(store);
    if (aside) return aside;
  }
  const rows = loadSources(store);
  const now = Promise.resolve();
  return {
    rows,
    known: now.then(() => rows),
    looked: now,
    working: false,
    seen: () => undefined,
    stop() {},
  };
}

/** The sources read, and their files looked at, by a worker (`known_worker.ts`). */
class WorkerAside implements SourcesAside {
  rows: Map<string, KnownSource> | null = null;
  readonly known: Promise<Map<string, KnownSource>>;
  readonly looked: Promise<void>;
  working = true;
  readonly #worker: Worker;
  #looked = () => {};
  /** What the worker saw of row i's file (`SeenChunk`), as its chunks come. */
  #kinds = new Uint8Array();
  #numbers = new Float64Array();

  private constructor(store: HistoryStore, worker: Worker) {
    this.#worker = worker;
    this.looked = new Promise((resolve) => (this.#looked = resolve));
    this.known = new Promise((resolve) => {
      const inline = () => {
        this.stop();
        resolve(this.rows = loadSources(store));
      };
      worker.onmessage = (event: MessageEvent<FromKnownWorker>) => {
        const message = event.data;
        if (message.type === "failed") return inline();
        if (message.type === "rows") {
          this.#kinds = new Uint8Array(message.locators.length);
          this.#numbers = new Float64Array(message.locators.length * SEEN_NUMBERS);
          return resolve(this.rows = knownOfFlat(message));
        }
        this.#kinds.set(message.kinds, message.from);
        this.#numbers.set(message.numbers, message.from * SEEN_NUMBERS);
        if (message.from === 0) this.#done();
      };
      worker.onerror = (event) => {
        event.preventDefault();
        if (this.rows) this.stop();
        else inline();
      };
    });
  }

  /** A worker reading the sources of `store`, or null when none can start here. */
  static start(store: HistoryStore): WorkerAside | null {
    let worker: Worker;
    try {
      worker = new Worker(new URL("./known_worker.ts", import.meta.url).href, { type: "module" });
    } catch {
      return null;
    }
    const aside = new WorkerAside(store, worker);
    const ask: ToKnownWorker = { path: store.path };
    worker.postMessage(ask);
    return aside;
  }

  seen(row: KnownSource, path: string): FileSeen | string | undefined {
    if (row.flatIndex === undefined || pathOfLocator(row.locator) !== path) return undefined;
    return seenOf(this.#kinds, this.#numbers, row.flatIndex);
  }

  stop(): void {
    this.#worker.terminate();
    this.#done();
  }

  #done(): void {
    this.working = false;
    this.#looked();
  }
}

/** The whole row of the source `id`, to read it. */
export function sourceById(store: HistoryStore, id: number): SourceRow {
  return sourceRow(store.stmt(`SELECT ${SOURCE_COLUMNS} FROM sources WHERE id = ?`).get(id));
}

/**
 * A source row for a newly found source, in its first generation, to be derived by `adapter`
 * (its derivation recorded, `derive.ts`). Call inside a transaction.
 */
export function createSource(
  store: HistoryStore,
  { adapter, ref }: { adapter: { readonly derivation: number }; ref: SourceRef },
  now: number,
): SourceRow {
  const row = sourceRow(
    store.stmt(
      `INSERT INTO sources (agent, locator, format, generation, cursor, first_seen, derivation)
       VALUES (?, ?, ?, 1, 0, ?, ?) RETURNING ${SOURCE_COLUMNS}`,
    ).get(ref.agent, ref.locator, ref.format, now, derivationOf(adapter)),
  );
  store.stmt(
    "INSERT INTO generations (source_id, generation, started_at, reason) VALUES (?, 1, ?, ?)",
  ).run(row.id, now, "first seen");
  return row;
}

/**
 * A transcript that moved keeps its source: Codex compresses an idle rollout to `.jsonl.zst`
 * and removes the `.jsonl`, and archives a rollout by moving it to `archived_sessions/`. A new
 * file (of `found`) of the same agent with the same name (less `.zst`) as a source whose file is
 * gone (not found by the pass, nothing at its path) continues that source, so nothing is
 * captured twice; `generationChange` then confirms its bytes really continue the captured ones
 * (else a new generation starts). A source moved into an archive marks its conversations
 * archived (the adapter says which places are archives).
 */
export function adoptMoved(
  store: HistoryStore,
  found: readonly Found[],
  rows: Map<string, KnownSource>,
): void {
  const fresh = found.filter((f) => !rows.has(f.ref.locator) && f.adapter.mode === "lines");
  if (!fresh.length) return;
  const gone = new Map<string, KnownSource[]>();
  const named = store.stmt("SELECT agent, format FROM sources WHERE id = ?");
  for (const row of rows.values()) {
    if (row.found) continue;
    const { agent, format } = named.get(row.id) as { agent: string; format: string };
    if (format === "rows") continue;
    const name = `${agent}:${baseName(row.locator)}`;
    gone.set(name, [...(gone.get(name) ?? []), row]);
  }
  if (!gone.size) return;
  for (const { ref, adapter } of fresh) {
    const candidates = gone.get(`${ref.agent}:${baseName(ref.locator)}`);
    const previous = candidates?.find((row) => !pathExists(row.locator));
    if (!previous) continue;
    candidates!.splice(candidates!.indexOf(previous), 1);
    store.stmt("UPDATE sources SET locator = ?, format = ?, gone = 0 WHERE id = ?")
      .run(ref.locator, ref.format, previous.id);
    store.stmt("UPDATE conversations SET gone = 0 WHERE source_id = ?").run(previous.id);
    // Archiving by moving (Codex's `archived_sessions/`): the conversations are archived now.
    const archived = adapter.mode === "lines" ? adapter.archived?.(ref) : undefined;
    if (archived !== undefined) {
      store.stmt("UPDATE conversations SET archived = ? WHERE source_id = ?")
        .run(archived ? 1 : 0, previous.id);
    }
    rows.delete(previous.locator);
    rows.set(ref.locator, {
      ...previous,
      locator: ref.locator,
      gone: 0,
      found: true,
    });
  }
}

/**
 * Sources captured before and missing now (not found by the pass, and no file at their path):
 * their records stay, marked as gone upstream (and those back again are no longer). Returns how
 * many went missing, or 0 when nothing changed.
 */
export function markGone(store: HistoryStore, rows: Map<string, KnownSource>): number {
  const goneIds: number[] = [];
  const backIds: number[] = [];
  for (const row of rows.values()) {
    const exists = row.found === true || pathExists(pathOfLocator(row.locator));
    if (!exists && !row.gone) goneIds.push(row.id);
    if (exists && row.gone) backIds.push(row.id);
  }
  if (!goneIds.length && !backIds.length) return 0;
  store.transaction(() => {
    for (const [ids, gone] of [[goneIds, 1], [backIds, 0]] as const) {
      for (const id of ids) {
        store.stmt("UPDATE sources SET gone = ? WHERE id = ?").run(gone, id);
        store.stmt("UPDATE conversations SET gone = ? WHERE source_id = ?").run(gone, id);
      }
    }
  });
  return goneIds.length;
}

/** True when a source may hold something new: its file (or database) changed since it was read. */
export function needsWork(found: Found, row: KnownSource | undefined): boolean {
  if (!row) return true;
  if (found.adapter.mode === "rows") {
    return found.adapter.fingerprint(found.ref) !== row.fingerprint;
  }
  const { stat } = found;
  // A last line held back by a build that waited for its newline is read once it is whole.
  const heldBack = found.adapter.newlineBefore === true && row.cursor < stat.size;
  return row.size !== stat.size || row.mtime_ms !== stat.mtimeMs || row.ino !== stat.ino ||
    row.dev !== stat.dev || heldBack;
}

/**
 * Why a captured source's file (`stat`) no longer continues what was captured of it, or null
 * when it does: another file in its place, a file shorter than its cursor, a changed head, or
 * bytes the store holds that the file no longer does (all of them for a file written without
 * growing, the last 64 KiB before the cursor for one that grew).
 */
export async function generationChange(
  store: HistoryStore,
  ref: SourceRef,
  stat: FileSeen,
  source: SourceRow,
): Promise<string | null> {
  if (source.ino !== stat.ino || source.dev !== stat.dev) {
    // A copy or a restore that starts with exactly the captured bytes continues them; of
    // another file nothing is known, so a gap in them (forgotten records) is a difference.
    const same = await matchesStored(store, ref, source, 0, { gaps: false });
    return same ? null : "replaced by another file";
  }
  if (stat.size < source.cursor && ref.format === "jsonl") return "shortened below its cursor";
  if (!(await headMatches(ref, source.head_hash))) return "its first bytes changed";
  const inPlace = stat.size === source.size && stat.mtimeMs !== source.mtime_ms;
  const from = inPlace ? 0 : source.cursor - TAIL_BYTES;
  if (!(await matchesStored(store, ref, source, from, { gaps: true }))) return "rewritten in place";
  return null;
}

/** Starts the next generation of `source` (its cursor and state start over); returns it. */
export function startGeneration(
  store: HistoryStore,
  source: SourceRow,
  reason: string,
  now: number,
): number {
  const generation = source.generation + 1;
  store.transaction(() => {
    store.stmt(
      "INSERT INTO generations (source_id, generation, started_at, reason) VALUES (?, ?, ?, ?)",
    ).run(source.id, generation, now, reason);
    store.stmt(
      "UPDATE sources SET generation = ?, cursor = 0, state = NULL, head_hash = NULL WHERE id = ?",
    ).run(generation, source.id);
  });
  return generation;
}

/**
 * A hash of the source's first bytes (up to 4 KiB) to remember with a cursor at `cursor`, when
 * it covers more of them than the one remembered; else null.
 */
export function headHash(ctx: SourceCtx, cursor: number): string | null {
  if (ctx.ref.format !== "jsonl") return null; // rows have no head; compressed files are not appended
  const known = ctx.headHash ? Number(ctx.headHash.split(":")[0]) : 0;
  const length = Math.min(HEAD_BYTES, cursor);
  if (length <= known) return null;
  let bytes: Uint8Array;
  try {
    const file = Deno.openSync(ctx.ref.path, { read: true });
    try {
      bytes = new Uint8Array(length);
      let filled = 0;
      while (filled < length) {
        const n = file.readSync(bytes.subarray(filled));
        if (n === null || n === 0) break;
        filled += n;
      }
      if (filled !== length) return null;
    } finally {
      file.close();
    }
  } catch {
    return null; // gone or unreadable meanwhile: the next capture tries again
  }
  ctx.headHash = `${length}:${sha256Hex(bytes)}`;
  return ctx.headHash;
}

async function headMatches(ref: SourceRef, expected: string | null): Promise<boolean> {
  if (!expected) return true;
  const [lengthText, hash] = expected.split(":");
  const length = Number(lengthText);
  const bytes = await readPrefix(ref, length);
  return bytes.length === length && sha256Hex(bytes) === hash;
}

/**
 * True when the file holds, at their offsets, the bytes the store holds of the source's current
 * generation from `from` up to its cursor. With `gaps`, bytes the store does not hold (records
 * forgotten, or never kept because a tombstone covers their conversation) are passed over, as
 * there is nothing to compare them with; without, the stored bytes must cover the whole range.
 */
async function matchesStored(
  store: HistoryStore,
  ref: SourceRef,
  source: SourceRow,
  from: number,
  options: { gaps: boolean },
): Promise<boolean> {
  const rows = store.stmt(
    `SELECT offset, raw, flags, length FROM records
     WHERE source_id = ? AND generation = ? AND offset >= ? AND offset < ? ORDER BY offset`,
  ).iterate(source.id, source.generation, Math.max(0, from), source.cursor) as Iterable<
    { offset: number; raw: Uint8Array; flags: number; length: number | null }
  >;
  let opened: OpenedSource | null = null;
  try {
    let reader: ByteReader | null = null;
    let position = Math.max(0, from);
    for (const stored of rows) {
      const row = decodedRow(stored);
      if (row.offset < position) return false; // rows that overlap: not what capture writes
      if (row.offset > position && !options.gaps) return false;
      if (!reader) {
        opened = await openSourceReader(ref, row.offset);
        reader = buffered(opened.reader, Math.min(COMPARE_READ, source.cursor - row.offset));
      } else if (!(await skip(reader, row.offset - position))) return false;
      if (!equalBytes(await readExactly(reader, row.raw.length), row.raw)) return false;
      position = row.offset + row.raw.length;
    }
    return options.gaps || position === source.cursor;
  } finally {
    (opened as OpenedSource | null)?.close();
  }
}

/** `reader` read through a buffer of `size` bytes: few reads for many short rows. */
function buffered(reader: ByteReader, size: number): ByteReader {
  const buffer = new Uint8Array(size);
  let start = 0;
  let end = 0;
  return {
    async read(out) {
      if (start === end) {
        const n = await reader.read(buffer);
        if (n === null || n === 0) return n;
        start = 0;
        end = n;
      }
      const n = Math.min(out.length, end - start);
      out.set(buffer.subarray(start, start + n));
      start += n;
      return n;
    },
  };
}

/** Reads past `length` bytes; false when the stream ends first. */
async function skip(reader: ByteReader, length: number): Promise<boolean> {
  let left = length;
  while (left > 0) {
    const n = (await readExactly(reader, Math.min(left, COMPARE_READ))).length;
    if (n === 0) return false;
    left -= n;
  }
  return true;
}

function pathExists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    return true; // unreadable is not gone
  }
}

/** A source file's name without directories and without a compression suffix. */
function baseName(locator: string): string {
  return (locator.split("/").at(-1) ?? locator).replace(/\.zst$/, "");
}

async function readPrefix(ref: SourceRef, length: number): Promise<Uint8Array> {
  const opened = await openSourceReader(ref, 0);
  try {
    return await readExactly(opened.reader, length);
  } finally {
    opened.close();
  }
}

async function readExactly(reader: ByteReader, length: number): Promise<Uint8Array> {
  const out = new Uint8Array(length);
  let filled = 0;
  while (filled < length) {
    const n = await reader.read(out.subarray(filled));
    if (n === null || n === 0) break;
    filled += n;
  }
  return out.subarray(0, filled);
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
