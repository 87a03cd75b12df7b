// Which file is which source, and when a source starts a new generation. A source keeps its
// identity when its file moves (Codex archives and compresses rollouts); a file that no longer
// continues what was captured (replaced, shortened, its first bytes rewritten) starts a new
// generation, and the records of the old one stay. A source missing upstream is marked gone.

import { createHash } from "node:crypto";
import { pathOfLocator, type SourceRef } from "../sources/adapter.ts";
import type { HistoryStore } from "../store/db.ts";
import { decodedRow } from "../store/raw.ts";
import type { Found } from "./discover.ts";
import type { ByteReader } from "./lines.ts";
import {
  type FileSeen,
  SOURCE_COLUMNS,
  type SourceCtx,
  type SourceRow,
  sourceRow,
} from "./source.ts";
import { openSourceReader } from "./source_reader.ts";

/** Bytes of a file's head whose hash is remembered with its cursor. */
const HEAD_BYTES = 4096;

/** Every source the store knows, by locator. */
export function loadSources(store: HistoryStore): Map<string, SourceRow> {
  const rows = store.stmt(`SELECT ${SOURCE_COLUMNS} FROM sources`).all().map(sourceRow);
  return new Map(rows.map((row) => [row.locator, row]));
}

/** A source row for a newly found source, in its first generation (call inside a transaction). */
export function createSource(store: HistoryStore, ref: SourceRef, now: number): SourceRow {
  const row = sourceRow(
    store.stmt(
      `INSERT INTO sources (agent, locator, format, generation, cursor, first_seen)
       VALUES (?, ?, ?, 1, 0, ?) RETURNING ${SOURCE_COLUMNS}`,
    ).get(ref.agent, ref.locator, ref.format, now),
  );
  store.stmt(
    "INSERT INTO generations (source_id, generation, started_at, reason) VALUES (?, 1, ?, ?)",
  ).run(row.id, now, "first seen");
  return row;
}

/**
 * A transcript that moved keeps its source: Codex compresses an idle rollout to `.jsonl.zst`
 * and removes the `.jsonl`, and archives a rollout by moving it to `archived_sessions/`. A new
 * file of the same agent with the same name (less `.zst`) as a source whose file is gone
 * continues that source, so nothing is captured twice; `generationChange` then confirms its
 * bytes really continue the captured ones (else a new generation starts). A source moved into
 * an archive marks its conversations archived (the adapter says which places are archives).
 */
export function adoptMoved(
  store: HistoryStore,
  found: Found[],
  rows: Map<string, SourceRow>,
): void {
  const fresh = found.filter((f) => !rows.has(f.ref.locator) && f.adapter.mode === "lines");
  if (!fresh.length) return;
  const present = new Set(found.map((f) => f.ref.locator));
  const gone = new Map<string, SourceRow[]>();
  for (const row of rows.values()) {
    if (row.format === "rows" || present.has(row.locator)) continue;
    const name = `${row.agent}:${baseName(row.locator)}`;
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
    rows.set(ref.locator, { ...previous, locator: ref.locator, format: ref.format, gone: 0 });
  }
}

/**
 * Sources captured before and missing now: their records stay, marked as gone upstream (and
 * those back again are no longer). Returns how many went missing, or 0 when nothing changed.
 */
export function markGone(
  store: HistoryStore,
  found: Found[],
  rows: Map<string, SourceRow>,
): number {
  const present = new Set(found.map((f) => f.ref.locator));
  const goneIds: number[] = [];
  const backIds: number[] = [];
  for (const row of rows.values()) {
    const exists = present.has(row.locator) || pathExists(pathOfLocator(row.locator));
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
export function needsWork(found: Found, row: SourceRow | undefined): boolean {
  if (!row) return true;
  if (found.adapter.mode === "rows") {
    return found.adapter.fingerprint(found.ref) !== row.fingerprint;
  }
  const { stat } = found;
  return row.size !== stat.size || row.mtime_ms !== stat.mtimeMs || row.ino !== stat.ino ||
    row.dev !== stat.dev;
}

/**
 * Why a captured source's file (`stat`) no longer continues what was captured of it, or null
 * when it does: another file in its place, a file shorter than its cursor, a changed head.
 */
export async function generationChange(
  store: HistoryStore,
  ref: SourceRef,
  stat: FileSeen,
  source: SourceRow,
): Promise<string | null> {
  if (source.ino !== stat.ino || source.dev !== stat.dev) {
    return (await samePrefix(store, ref, source)) ? null : "replaced by another file";
  }
  if (stat.size < source.cursor && ref.format === "jsonl") return "shortened below its cursor";
  if (!(await headMatches(ref, source.head_hash))) return "its first bytes changed";
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
  ctx.headHash = `${length}:${sha256(bytes)}`;
  return ctx.headHash;
}

async function headMatches(ref: SourceRef, expected: string | null): Promise<boolean> {
  if (!expected) return true;
  const [lengthText, hash] = expected.split(":");
  const length = Number(lengthText);
  const bytes = await readPrefix(ref, length);
  return bytes.length === length && sha256(bytes) === hash;
}

/**
 * True when a file that replaced a captured one starts with exactly the captured bytes (a
 * copy or a restore): then it continues the same generation instead of duplicating it.
 */
async function samePrefix(
  store: HistoryStore,
  ref: SourceRef,
  source: SourceRow,
): Promise<boolean> {
  const opened = await openSourceReader(ref, 0);
  try {
    const rows = store.stmt(
      "SELECT offset, raw, flags FROM records WHERE source_id = ? AND generation = ? ORDER BY offset",
    ).iterate(source.id, source.generation) as Iterable<
      { offset: number; raw: Uint8Array; flags: number }
    >;
    let expected = 0;
    for (const stored of rows) {
      const row = decodedRow(stored);
      if (row.offset !== expected) return false; // a gap (forgotten records): cannot compare
      const bytes = await readExactly(opened.reader, row.raw.length);
      if (!equalBytes(bytes, row.raw)) return false;
      expected += row.raw.length;
    }
    return expected === source.cursor;
  } finally {
    opened.close();
  }
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

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
