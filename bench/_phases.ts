// Where capture's time goes, measured piece by piece on the same corpus: reading the files,
// splitting and parsing lines, the adapters' derivation, redaction, and bare SQLite inserts of the
// raw chunks and of the derived text (the FTS ceiling) into fresh databases.

import { DatabaseSync } from "node:sqlite";
import type { Redactor } from "../lib/gate/secrets.ts";
import type { Adapter, LineAdapter, SourceRef } from "../lib/sources/adapter.ts";
import type { HistoryStore } from "../lib/store/db.ts";
import { indexText } from "../lib/store/cjk.ts";
import { FLAG_INDEXED } from "../lib/store/schema.ts";
import { DEFAULT_LIMITS } from "../lib/capture/limits.ts";
import { type RecordRow, TextDeriver } from "../lib/store/records.ts";
import { MIGRATIONS } from "../lib/store/schema.ts";

/** A batch of the ceiling commits after this much text, as capture's batches do. */
const TEXT_BATCH = DEFAULT_LIMITS.textBudget;
/** Raw inserts commit after this much raw, as capture's batches do at most. */
const RAW_BATCH = 8 * 1024 * 1024;

/** The store's own DDL for a table or virtual table, taken from the migrations. */
function ddl(pattern: RegExp, what: string): string {
  for (const migration of MIGRATIONS) {
    const found = migration.sql.match(pattern);
    if (found) return found.join("\n");
  }
  throw new Error(`No ${what} in lib/store/schema.ts's migrations`);
}

/** `CREATE VIRTUAL TABLE fts …` exactly as the store creates it (same tokenizer and options). */
export function ftsDdl(): string {
  return ddl(/CREATE VIRTUAL TABLE fts USING fts5\([\s\S]*?\);/, "fts table");
}

/** The FTS5 configuration the store's migrations set after creating the table (automerge). */
export function ftsSettings(): string {
  return ddl(/INSERT INTO fts \(fts, rank\) VALUES \([^)]*\);/g, "fts setting");
}

/** The `sources` and `records` tables and the records' indexes (its foreign key checks too). */
function recordsDdl(): string {
  const sources = ddl(/CREATE TABLE sources \([\s\S]*?\) STRICT;/, "sources table");
  const table = ddl(/CREATE TABLE records \([\s\S]*?\) STRICT;/, "records table");
  const indexes = ddl(/CREATE (?:UNIQUE )?INDEX records_\w+ ON records \([^)]*\);/g, "index");
  return `${sources}\n${table}\n${indexes}`;
}

/** A fresh database with the store's pragmas (WAL, synchronous NORMAL, the same cache). */
function freshDb(path: string): DatabaseSync {
  for (const suffix of ["", "-wal", "-shm"]) {
    try {
      Deno.removeSync(path + suffix);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA temp_store = MEMORY");
  db.exec("PRAGMA cache_size = -16000");
  return db;
}

/** Reads the store's records in id order, a page at a time. */
function* recordPages(store: HistoryStore, where: string): Generator<RecordRow[]> {
  const page = store.db.prepare(
    `SELECT * FROM records WHERE id > ? ${where} ORDER BY id LIMIT 1000`,
  );
  let last = 0;
  while (true) {
    const rows = page.all(last) as unknown as RecordRow[];
    if (!rows.length) return;
    yield rows;
    last = rows.at(-1)!.id;
  }
}

/** What the FTS ceiling measured. */
export interface Ceiling {
  /** Time spent in the inserts and commits only. */
  insertMs: number;
  /** Time spent deriving the text again from raw (not part of the ceiling). */
  deriveMs: number;
  rows: number;
  textBytes: number;
}

/**
 * The bare FTS baseline: the text capture indexed, derived again from the stored raw bytes with
 * `TextDeriver` and made index text as capture makes it (`indexText`, untimed), inserted into a fresh FTS5 table created with the store's own DDL,
 * in transactions of about 512 KiB of text, as capture's batches. Only the inserts and commits
 * are timed. With `storeSettings`, the table also gets the FTS5 settings the store's migrations
 * tune for capture (a larger automerge), for comparison.
 */
export function ftsCeiling(
  store: HistoryStore,
  adapters: readonly Adapter[],
  redact: Redactor,
  dbPath: string,
  options: { storeSettings?: boolean } = {},
): Ceiling {
  const deriver = new TextDeriver(store, adapters, redact);
  const db = freshDb(dbPath);
  const encoder = new TextEncoder();
  const result: Ceiling = { insertMs: 0, deriveMs: 0, rows: 0, textBytes: 0 };
  try {
    db.exec(ftsDdl());
    if (options.storeSettings) db.exec(ftsSettings());
    const insert = db.prepare("INSERT INTO fts (rowid, text) VALUES (?, ?)");
    let batch: [number, string][] = [];
    let batchChars = 0;
    const flush = () => {
      if (!batch.length) return;
      const start = performance.now();
      db.exec("BEGIN");
      for (const [id, text] of batch) insert.run(id, text);
      db.exec("COMMIT");
      result.insertMs += performance.now() - start;
      batch = [];
      batchChars = 0;
    };
    for (const rows of recordPages(store, `AND (flags & ${FLAG_INDEXED}) != 0`)) {
      for (const row of rows) {
        const start = performance.now();
        // What capture gives FTS5: CJK runs as bigrams, invisible characters left out.
        const text = indexText(deriver.textOf(row));
        result.deriveMs += performance.now() - start;
        if (!text) continue;
        batch.push([row.id, text]);
        batchChars += text.length;
        result.rows++;
        result.textBytes += encoder.encode(text).length;
        if (batchChars >= TEXT_BATCH) flush();
      }
    }
    flush();
  } finally {
    db.close();
  }
  return result;
}

/**
 * Bare inserts of every stored raw chunk (all columns) into a fresh `records` table with the
 * store's DDL and indexes, committing every 8 MiB of raw. Only the inserts are timed.
 */
export function rawInsertCeiling(
  store: HistoryStore,
  dbPath: string,
): { ms: number; rows: number; bytes: number } {
  const db = freshDb(dbPath);
  const result = { ms: 0, rows: 0, bytes: 0 };
  try {
    db.exec(recordsDdl());
    const source = db.prepare(
      "INSERT INTO sources (id, agent, locator, format, first_seen) VALUES (?, ?, ?, ?, 0)",
    );
    for (const row of store.db.prepare("SELECT id, agent, locator, format FROM sources").all()) {
      source.run(row.id!, row.agent!, row.locator!, row.format!);
    }
    const insert = db.prepare(
      `INSERT INTO records (id, source_id, generation, offset, seq, raw, conversation_id, ts, kind,
        role, message_id, part_id, flags) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    let pending = 0;
    let open = false;
    for (const rows of recordPages(store, "")) {
      const start = performance.now();
      if (!open) {
        db.exec("BEGIN");
        open = true;
      }
      for (const r of rows) {
        insert.run(
          r.id,
          r.source_id,
          r.generation,
          r.offset,
          r.seq,
          r.raw,
          r.conversation_id,
          r.ts,
          r.kind,
          r.role,
          r.message_id,
          r.part_id,
          r.flags,
        );
        pending += r.raw.length;
        result.bytes += r.raw.length;
        result.rows++;
      }
      if (pending >= RAW_BATCH) {
        db.exec("COMMIT");
        open = false;
        pending = 0;
      }
      result.ms += performance.now() - start;
    }
    if (open) {
      const start = performance.now();
      db.exec("COMMIT");
      result.ms += performance.now() - start;
    }
  } finally {
    db.close();
  }
  return result;
}

/** Time per step of reading and deriving the line sources, each step timed on its own. */
export interface LinePhases {
  files: number;
  bytes: number;
  lines: number;
  readMs: number;
  splitMs: number;
  parseMs: number;
  deriveMs: number;
  redactMs: number;
}

/**
 * Reads every line source (Claude Code, Codex) the way capture must — whole lines split out of
 * the bytes, decoded, parsed, handed to the adapter's `parseLine`, their text redacted — timing
 * each step separately. Row sources (OpenCode) are not included.
 */
export function linePhases(
  sources: readonly { adapter: LineAdapter; ref: SourceRef }[],
  redact: (text: string) => string,
): LinePhases {
  const decoder = new TextDecoder();
  const out: LinePhases = {
    files: 0,
    bytes: 0,
    lines: 0,
    readMs: 0,
    splitMs: 0,
    parseMs: 0,
    deriveMs: 0,
    redactMs: 0,
  };
  for (const { adapter, ref } of sources) {
    let t = performance.now();
    const bytes = Deno.readFileSync(ref.path);
    let now = performance.now();
    out.readMs += now - t;
    out.files++;
    out.bytes += bytes.length;
    t = now;
    const lines: Uint8Array[] = [];
    let start = 0;
    while (start < bytes.length) {
      let end = bytes.indexOf(10, start);
      end = end < 0 ? bytes.length : end + 1;
      lines.push(bytes.subarray(start, end));
      start = end;
    }
    now = performance.now();
    out.splitMs += now - t;
    out.lines += lines.length;
    const state = adapter.initialState(ref);
    for (const line of lines) {
      t = performance.now();
      const text = decoder.decode(line);
      const blank = text.trim() === "";
      let value: unknown;
      let parseError: string | undefined;
      if (!blank) {
        try {
          value = JSON.parse(text);
        } catch (err) {
          parseError = (err as Error).message;
        }
      }
      const t2 = performance.now();
      out.parseMs += t2 - t;
      const derived = adapter.parseLine(
        { bytes: line, value, blank, ...(parseError ? { parseError } : {}) },
        state,
        ref,
      );
      const t3 = performance.now();
      out.deriveMs += t3 - t2;
      if (derived.text) redact(derived.text);
      out.redactMs += performance.now() - t3;
    }
  }
  return out;
}
