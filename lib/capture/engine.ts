// The capture engine: discovers sources, reads what is new since each cursor in bounded
// batches, and commits records, index entries, conversations and the cursor in one
// transaction per batch, so a crash at any point loses nothing and duplicates nothing.

import { createHash } from "node:crypto";
import {
  type Adapter,
  type Agent,
  type ConversationInfo,
  type Derived,
  type DiscoverContext,
  type LineAdapter,
  makeDerived,
  pathOfLocator,
  type RowAdapter,
  SourceError,
  type SourceRef,
} from "../sources/adapter.ts";
import type { Project } from "../paths.ts";
import type { Redactor } from "../gate.ts";
import { HistoryStore, StoreFullError, StoreLockedError, translateError } from "../store/db.ts";
import { type ByteReader, LineReader } from "./lines.ts";
import { JsonTextScanner } from "./json_stream.ts";
import { cutTitle, splitFragments } from "../store/_text.ts";
import { PieceRedactor, type RedactedPiece } from "./pieces.ts";
import { openSourceReader } from "./source_reader.ts";
import { decodedRow, encodeRaw, FLAG_ZSTD } from "../store/_raw.ts";
import {
  type BatchPayload,
  type BatchRecord,
  type BatchResult,
  type ConversationWrite,
  countDrift,
  type DriftRow,
  FLAG_DRIFT,
  FLAG_INDEXED,
  FLAG_STREAMED,
  FLAG_SUPERSEDED,
  lineRows,
  writeConversations,
} from "./batch_write.ts";
import { type BatchWriter, InlineBatchWriter, WorkerBatchWriter } from "./batch_writer.ts";
import type { Operation } from "../stage_markers.ts";
import { DEFAULT_LIMITS, type Limits } from "./limits.ts";

export { FLAG_DRIFT, FLAG_INDEXED, FLAG_STREAMED, FLAG_SUPERSEDED } from "./batch_write.ts";
export { DEFAULT_LIMITS, type Limits } from "./limits.ts";

/** Progress of a capture, reported after every batch. */
export interface Progress {
  phase: "rebuilding" | "discovering" | "capturing" | "done";
  sourcesTotal: number;
  sourcesDone: number;
  bytesTotal: number;
  bytesDone: number;
  startedAt: number;
  pid: number;
}

/** Drift seen in one run: "codex 0.160.0: 212 lines of unknown type `foo`". */
export interface DriftCount {
  agent: Agent;
  version: string;
  category: string;
  detail: string;
  count: number;
}

/** What a capture did. */
export interface CaptureSummary {
  sources: number;
  changed: number;
  records: number;
  conversations: number;
  bytes: number;
  ms: number;
  complete: boolean;
  stoppedBy: "deadline" | "signal" | "ingest-off" | null;
  generations: { locator: string; generation: number; reason: string }[];
  gone: number;
  drift: DriftCount[];
  /** Sources that yielded no conversation from a non-empty file. */
  empty: string[];
  errors: { locator: string; message: string }[];
  skipped: Record<string, number>;
  /** How batches were written: on the capture's connection, or by a worker beside it. */
  writer: "inline" | "worker";
}

export interface CaptureOptions {
  store: HistoryStore;
  adapters: readonly Adapter[];
  discover: DiscoverContext;
  /** Redacts secrets from derived text before it is indexed (a long line's piece by piece). */
  redact: Redactor;
  /** Project identity of a transcript's cwd. */
  projectOf: (cwd: string) => Project;
  now?: () => number;
  /** Stop at the first batch boundary after this instant (epoch ms). */
  deadline?: number;
  signal?: AbortSignal;
  /** Consulted before every batch: capture switched off stops the run, cursors kept. */
  ingestEnabled?: () => boolean;
  onProgress?: (progress: Progress) => void;
  limits?: Partial<Limits>;
  /** Only these locators (watch mode passes the changed files); all when undefined. */
  only?: ReadonlySet<string>;
  /** Sources to look at instead of discovering them (watch mode keeps the last discovery). */
  sources?: readonly { adapter: Adapter; ref: SourceRef }[];
  /** Told what discovery found (watch mode keeps it until the next rediscovery). */
  onDiscovered?: (sources: { adapter: Adapter; ref: SourceRef }[]) => void;
  /** Stage markers for discovery, each batch and each index write (none when absent). */
  markers?: Operation;
  /**
   * Starts the writer of a large capture (`Limits.workerFrom`), or gives null to write inline.
   * Default: a worker with its own connection (`WorkerBatchWriter.start`).
   */
  startWriter?: (store: HistoryStore, op: Operation) => Promise<BatchWriter | null>;
}

/** Runs steps without markers. */
const NO_MARKERS: Operation = {
  id: "none",
  stage: async (_step, fn) => await fn(),
  stageSync: (_step, fn) => fn(),
  begin: (step) => ({ step, seq: 0, finish() {}, fail() {} }),
};

interface SourceRow {
  id: number;
  agent: string;
  locator: string;
  format: string;
  generation: number;
  cursor: number;
  dev: number | null;
  ino: number | null;
  size: number | null;
  mtime_ms: number | null;
  head_hash: string | null;
  state: string | null;
  gone: number;
  cursor_key: string | null;
  fingerprint: string | null;
}

interface Found {
  adapter: Adapter;
  ref: SourceRef;
  stat: Deno.FileInfo;
}

interface PendingRecord {
  /** The source the record comes from. */
  ctx: SourceCtx;
  /** Set when re-deriving a stored record (rebuild): it is updated, not inserted. */
  existingId?: number;
  offset: number;
  seq: number;
  raw: Uint8Array;
  derived: Derived;
  text: string;
  flags: number;
}

/** What a batch tells a conversation row. */
interface ConversationDelta {
  info: ConversationInfo;
  agent: Agent;
  /** The source of its first record in the batch. */
  sourceId: number;
  firstTs: number | null;
  lastTs: number | null;
  messages: number;
  records: number;
  bytes: number;
  title: { text: string; rank: number } | null;
  version: string | null;
}

/** The per-source state persisted with the cursor: the adapter's, plus the last time seen. */
interface SavedState {
  a: unknown;
  t: number | null;
}

class Stop extends Error {
  constructor(readonly reason: "deadline" | "signal" | "ingest-off") {
    super(reason);
  }
}

/** Captures everything new from every source the adapters discover. */
export async function capture(options: CaptureOptions): Promise<CaptureSummary> {
  return await new Capture(options).run();
}

/**
 * Drops all derived data (text index, conversations, drift) and derives it again from the
 * retained raw records, in one transaction. Nothing raw is dropped. Returns the record count.
 */
export async function rebuildDerived(options: CaptureOptions): Promise<number> {
  return await new Capture(options).rebuild();
}

class Capture {
  #o: CaptureOptions;
  #store: HistoryStore;
  #limits: Limits;
  #now: () => number;
  #projects = new Map<string, Project>();
  #summary: CaptureSummary;
  #progress: Progress;
  #drift = new Map<string, DriftCount>();
  #lastProgressWrite = 0;
  #tombstones: Set<string> | null = null;
  #op: Operation;
  /** Records of one or more sources waiting to be committed together. */
  #batch = new Batch();
  /** Writes on this connection; also the writer of rebuilds and small captures. */
  #inline: InlineBatchWriter;
  /** Where batches go: `#inline`, or a worker for a large capture (`Limits.workerFrom`). */
  #writer: BatchWriter;
  /** Whether starting a worker was considered (once per run). */
  #workerConsidered = false;
  /** Source bytes read into batches so far (handed over or streamed). */
  #bytesRead = 0;
  /** Batches handed to the writer and not yet committed, oldest first (worker only). */
  #inflight: { job: Job; writing: Promise<BatchResult> }[] = [];

  constructor(options: CaptureOptions) {
    this.#o = options;
    this.#store = options.store;
    this.#limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.#op = options.markers ?? NO_MARKERS;
    this.#inline = new InlineBatchWriter(this.#store, this.#op);
    this.#writer = this.#inline;
    this.#now = options.now ?? Date.now;
    this.#summary = {
      sources: 0,
      changed: 0,
      records: 0,
      conversations: 0,
      bytes: 0,
      ms: 0,
      complete: true,
      stoppedBy: null,
      generations: [],
      gone: 0,
      drift: [],
      empty: [],
      errors: [],
      skipped: {},
      writer: "inline",
    };
    this.#progress = {
      phase: "discovering",
      sourcesTotal: 0,
      sourcesDone: 0,
      bytesTotal: 0,
      bytesDone: 0,
      startedAt: this.#now(),
      pid: Deno.pid,
    };
  }

  async run(): Promise<CaptureSummary> {
    const started = performance.now();
    this.#report(false);
    const rows = this.#loadSources();
    const found = await this.#op.stage("capture.discover", () => this.#discoverAll());
    this.#summary.sources = found.length;
    this.#adoptMoved(found, rows);
    if (!this.#o.only && !this.#o.sources) this.#markGone(found, rows);

    const work = found.filter((f) => this.#needsWork(f, rows.get(f.ref.locator)));
    this.#progress.phase = "capturing";
    this.#progress.sourcesTotal = work.length;
    this.#progress.bytesTotal = work.reduce(
      (sum, f) => sum + Math.max(0, f.stat.size - (rows.get(f.ref.locator)?.cursor ?? 0)),
      0,
    );
    // Progress is stored only when there is work, so an idle watcher does not write.
    this.#report(work.length > 0);
    // New sources get their rows in one transaction (one each cost a commit per file).
    const fresh = work.filter((f) => !rows.has(f.ref.locator));
    if (fresh.length) {
      const now = this.#now();
      this.#store.transaction(() => {
        for (const f of fresh) rows.set(f.ref.locator, this.#createSource(f.ref, now));
      });
    }

    try {
      await this.#captureAll(work, rows);
    } finally {
      // After a failure, the batches in flight still end (committed or rolled back) first.
      for (const { writing } of this.#inflight) await writing.catch(() => {});
      this.#inflight = [];
      await this.#writer.close();
      this.#writer = this.#inline;
    }
    this.#progress.phase = "done";
    this.#report(work.length > 0);
    this.#summary.drift = [...this.#drift.values()];
    this.#summary.skipped = Object.fromEntries(this.#o.discover.skipped);
    this.#summary.ms = Math.round(performance.now() - started);
    return this.#summary;
  }

  async #captureAll(work: Found[], rows: Map<string, SourceRow>): Promise<void> {
    try {
      for (const item of work) {
        this.#checkStop();
        try {
          await this.#captureSource(item, rows.get(item.ref.locator));
          this.#summary.changed++;
        } catch (err) {
          const translated = translateError(err);
          if (translated instanceof Stop) throw translated;
          if (translated instanceof StoreLockedError || translated instanceof StoreFullError) {
            throw translated;
          }
          if (!isSourceError(translated)) throw translated;
          // What was read of it before the failure is complete lines: it is kept.
          await this.#sourceFailed(item.ref, translated);
        }
        this.#progress.sourcesDone++;
        this.#report(false);
      }
      await this.#drain();
    } catch (err) {
      if (!(err instanceof Stop)) throw err;
      // Stopping happens at a batch boundary: what was read so far is committed first.
      await this.#drain();
      this.#summary.complete = false;
      this.#summary.stoppedBy = err.reason;
    }
  }

  /**
   * Drops every derived row (index, conversations, drift, derived columns) and derives it again
   * from the raw records, in one transaction: a crash leaves the old derived data in place.
   * Returns how many records were re-derived.
   */
  async rebuild(): Promise<number> {
    return await this.#op.stage("capture.rebuild", () => this.#rebuild());
  }

  async #rebuild(): Promise<number> {
    const store = this.#store;
    const started = performance.now();
    let count = 0;
    store.db.exec("BEGIN IMMEDIATE");
    try {
      store.db.exec(`
        DELETE FROM conversations;
        DELETE FROM drift;
        DELETE FROM record_keys;
        INSERT INTO fts (fts) VALUES ('delete-all');
        -- OR FAIL: no statement journal (with temp_store = MEMORY, a copy in memory of every
        -- page it changes, the whole table); this transaction is rolled back whole on failure.
        UPDATE OR FAIL records SET conversation_id = NULL, ts = NULL, kind = 'meta', role = NULL,
          message_id = NULL, part_id = NULL, flags = flags & ${FLAG_ZSTD};`);
      const sources = store.stmt("SELECT * FROM sources ORDER BY id")
        .all() as unknown as SourceRow[];
      const adapters = new Map(this.#o.adapters.map((a) => [a.agent, a]));
      for (const source of sources) {
        const adapter = adapters.get(source.agent as Agent);
        if (!adapter) continue;
        const generations = store.stmt(
          "SELECT DISTINCT generation FROM records WHERE source_id = ? ORDER BY generation",
        ).all(source.id) as { generation: number }[];
        for (const { generation } of generations) {
          const ref: SourceRef = {
            agent: adapter.agent,
            locator: source.locator,
            path: pathOfLocator(source.locator),
            format: source.format as SourceRef["format"],
          };
          const ctx: SourceCtx = {
            adapter,
            ref,
            sourceId: source.id,
            generation,
            headHash: source.head_hash,
            state: adapter.initialState(ref),
            lastTs: null,
            recognised: false,
          };
          count += await this.#rederive(ctx);
          if (generation === source.generation) {
            store.stmt("UPDATE sources SET state = ? WHERE id = ?").run(
              JSON.stringify({ a: ctx.state, t: ctx.lastTs } satisfies SavedState),
              source.id,
            );
          }
        }
      }
      store.setMeta("last_rebuild", { at: this.#now(), records: count });
      store.db.exec("COMMIT");
    } catch (err) {
      if (store.db.isTransaction) store.db.exec("ROLLBACK");
      throw translateError(err);
    }
    this.#summary.ms += Math.round(performance.now() - started);
    return count;
  }

  /**
   * Re-derives one source generation from its stored chunks, line by line. A line that grows
   * past `Limits.maxLine` is streamed from then on, as capture streamed it: its chunks go through
   * the JSON scanner as they are read, so rebuild holds no more of one line than that and a page.
   */
  async #rederive(ctx: SourceCtx): Promise<number> {
    const page = this.#store.stmt(
      `SELECT id, offset, seq, raw, flags FROM records WHERE source_id = ? AND generation = ? AND offset > ?
       ORDER BY offset LIMIT ?`,
    );
    const batch = new Batch();
    let line: StoredLine | null = null;
    let total = 0;
    let last = -1;
    const finish = async () => {
      if (!line) return;
      if (line.stream) line.stream.end(line.ids);
      else if (ctx.adapter.mode === "rows") {
        this.#addRow(ctx, batch, line.offset, concat(line.parts, line.length), line);
      } else {
        this.#addLine(ctx, batch, line.offset, concat(line.parts, line.length), line);
      }
      total += line.ids.length;
      line = null;
      if (batch.full(this.#limits)) {
        this.#commit(batch);
        await yieldToEventLoop();
      }
    };
    while (true) {
      // A streamed line's chunks a few at a time: chunks kept past a young-generation GC are
      // promoted, and their buffers then wait for a full GC (tens of MiB at the peak).
      const rows = line?.stream ? 16 : 128;
      const stored = page.all(ctx.sourceId, ctx.generation, last, rows) as {
        id: number;
        offset: number;
        seq: number;
        raw: Uint8Array;
        flags: number;
      }[];
      if (!stored.length) break;
      for (const packed of stored) {
        // Decoded one at a time: a page of a giant line is megabytes once decompressed.
        const row = decodedRow(packed);
        // A new line starts at seq 0, or after a gap left by forgotten records.
        const contiguous = line !== null && line.offset + line.length === row.offset;
        if (row.seq === 0 || !contiguous) await finish();
        line ??= { offset: row.offset, length: 0, ids: [], sizes: [], parts: [], stream: null };
        line.ids.push(row.id);
        line.sizes.push(row.raw.length);
        line.length += row.raw.length;
        last = row.offset;
        if (line.stream) line.stream.write(row.id, row.raw);
        else {
          line.parts.push(row.raw);
          if (ctx.adapter.mode === "lines" && line.length > this.#limits.maxLine) {
            // Too long to derive in memory: the lines before it are written first, in order.
            this.#commit(batch);
            const stream = this.#rederiveStream(ctx, line.offset);
            for (let i = 0; i < line.parts.length; i++) stream.write(line.ids[i]!, line.parts[i]!);
            line.parts = [];
            line.stream = stream;
          }
        }
      }
      await yieldToEventLoop();
    }
    await finish();
    this.#commit(batch);
    return total;
  }

  /**
   * Re-derives a line too long to hold in memory, chunk by chunk as its stored rows are read:
   * each chunk's text is indexed as capture indexed it, and `end` classifies the line.
   */
  #rederiveStream(ctx: SourceCtx, offset: number): RederiveStream {
    const scanner = new JsonTextScanner(ctx.adapter.skipKeys);
    const index = this.#store.stmt("INSERT INTO fts (rowid, text) VALUES (?, ?)");
    const flag = this.#store.stmt(
      `UPDATE records SET flags = (flags & ${FLAG_ZSTD}) | ? WHERE id = ?`,
    );
    // Each chunk's text is indexed once the text after it is known (see `PieceRedactor`).
    const pieces = new PieceRedactor(this.#o.redact);
    const indexed = (ready: RedactedPiece[]) => {
      for (const { id, text } of ready) if (text) index.run(id, text);
    };
    let end = offset;
    return {
      write: (id, bytes) => {
        scanner.write(bytes);
        const text = scanner.takeText();
        flag.run(FLAG_STREAMED | (text.trim() ? FLAG_INDEXED : 0), id);
        indexed(pieces.push(id, text));
        end += bytes.length;
      },
      end: (ids) => {
        indexed(pieces.end());
        scanner.end();
        this.#finishStreamed(ctx, scanner, offset, end, ids);
      },
    };
  }

  #loadSources(): Map<string, SourceRow> {
    const rows = this.#store.stmt("SELECT * FROM sources").all() as unknown as SourceRow[];
    return new Map(rows.map((row) => [row.locator, row]));
  }

  async #discoverAll(): Promise<Found[]> {
    const found: Found[] = [];
    const seen = new Set<string>();
    const consider = (adapter: Adapter, ref: SourceRef) => {
      if (seen.has(ref.locator)) return;
      seen.add(ref.locator);
      if (this.#o.only && !this.#o.only.has(ref.locator)) return;
      let stat: Deno.FileInfo;
      try {
        stat = Deno.lstatSync(ref.path);
      } catch (err) {
        if (err instanceof Deno.errors.NotFound) return;
        throw err;
      }
      if (!stat.isFile) {
        this.#skip(stat.isSymlink ? "symlink" : "not a regular file");
        return;
      }
      found.push({ adapter, ref, stat });
    };
    if (this.#o.sources) {
      for (const { adapter, ref } of this.#o.sources) consider(adapter, ref);
      return found;
    }
    const discovered: { adapter: Adapter; ref: SourceRef }[] = [];
    for (const adapter of this.#o.adapters) {
      for await (const ref of adapter.discover(this.#o.discover)) {
        discovered.push({ adapter, ref });
        consider(adapter, ref);
      }
    }
    this.#o.onDiscovered?.(discovered);
    return found;
  }

  /**
   * A transcript that moved keeps its source: Codex compresses an idle rollout to `.jsonl.zst`
   * and removes the `.jsonl`, and archives a rollout by moving it to `archived_sessions/`. A new
   * file of the same agent with the same name (less `.zst`) as a source whose file is gone
   * continues that source, so nothing is captured twice; the prefix check of `#captureSource`
   * then confirms its bytes really continue the captured ones (else a new generation starts).
   */
  #adoptMoved(found: Found[], rows: Map<string, SourceRow>): void {
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
    for (const { ref } of fresh) {
      const candidates = gone.get(`${ref.agent}:${baseName(ref.locator)}`);
      const previous = candidates?.find((row) => !pathExists(row.locator));
      if (!previous) continue;
      candidates!.splice(candidates!.indexOf(previous), 1);
      this.#store.stmt("UPDATE sources SET locator = ?, format = ?, gone = 0 WHERE id = ?")
        .run(ref.locator, ref.format, previous.id);
      this.#store.stmt("UPDATE conversations SET gone = 0 WHERE source_id = ?").run(previous.id);
      rows.delete(previous.locator);
      rows.set(ref.locator, { ...previous, locator: ref.locator, format: ref.format, gone: 0 });
    }
  }

  #skip(reason: string): void {
    const skipped = this.#o.discover.skipped;
    skipped.set(reason, (skipped.get(reason) ?? 0) + 1);
  }

  /** Sources captured before and missing now: their records stay, marked as gone upstream. */
  #markGone(found: Found[], rows: Map<string, SourceRow>): void {
    const present = new Set(found.map((f) => f.ref.locator));
    const goneIds: number[] = [];
    const backIds: number[] = [];
    for (const row of rows.values()) {
      const exists = present.has(row.locator) || pathExists(pathOfLocator(row.locator));
      if (!exists && !row.gone) goneIds.push(row.id);
      if (exists && row.gone) backIds.push(row.id);
    }
    if (!goneIds.length && !backIds.length) return;
    this.#store.transaction(() => {
      for (const [ids, gone] of [[goneIds, 1], [backIds, 0]] as const) {
        for (const id of ids) {
          this.#store.stmt("UPDATE sources SET gone = ? WHERE id = ?").run(gone, id);
          this.#store.stmt("UPDATE conversations SET gone = ? WHERE source_id = ?").run(gone, id);
        }
      }
    });
    this.#summary.gone = goneIds.length;
  }

  #needsWork(found: Found, row: SourceRow | undefined): boolean {
    if (!row) return true;
    if (found.adapter.mode === "rows") {
      return found.adapter.fingerprint(found.ref) !== row.fingerprint;
    }
    const { stat } = found;
    return row.size !== stat.size || row.mtime_ms !== mtimeOf(stat) || row.ino !== stat.ino ||
      row.dev !== stat.dev;
  }

  #checkStop(): void {
    if (this.#o.signal?.aborted) throw new Stop("signal");
    if (this.#o.deadline !== undefined && this.#now() >= this.#o.deadline) {
      throw new Stop("deadline");
    }
    if (this.#o.ingestEnabled && !this.#o.ingestEnabled()) throw new Stop("ingest-off");
  }

  async #sourceFailed(ref: SourceRef, err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message : String(err);
    this.#summary.errors.push({ locator: ref.locator, message });
    await this.#settle(); // this connection writes: the worker's batches first
    this.#store.stmt("UPDATE sources SET error = ? WHERE locator = ?").run(message, ref.locator);
  }

  // ---- one line-oriented source ----

  async #captureSource(found: Found, row: SourceRow | undefined): Promise<void> {
    if (found.adapter.mode === "rows") return await this.#captureRows(found, row);
    const { ref, stat } = found;
    const adapter = found.adapter;
    // This connection writes below: the batch in flight is committed first.
    if (!row) await this.#settle();
    const source = row ?? this.#store.transaction(() => this.#createSource(ref));
    let generation = source.generation;
    let cursor = source.cursor;
    let saved = parseSaved(source.state);

    const unchangedIdentity = source.ino === stat.ino && source.dev === stat.dev;
    let newGeneration: string | null = null;
    if (row && cursor > 0) {
      if (!unchangedIdentity) {
        if (!(await this.#samePrefix(ref, source))) newGeneration = "replaced by another file";
      } else if (stat.size < cursor && ref.format === "jsonl") {
        newGeneration = "shortened below its cursor";
      } else if (!(await this.#headMatches(ref, source.head_hash))) {
        newGeneration = "its first bytes changed";
      }
    }
    if (newGeneration) {
      await this.#settle();
      generation = source.generation + 1;
      cursor = 0;
      saved = null;
      this.#store.transaction(() => {
        this.#store.stmt(
          "INSERT INTO generations (source_id, generation, started_at, reason) VALUES (?, ?, ?, ?)",
        ).run(source.id, generation, this.#now(), newGeneration);
        this.#store.stmt(
          "UPDATE sources SET generation = ?, cursor = 0, state = NULL, head_hash = NULL WHERE id = ?",
        ).run(generation, source.id);
      });
      this.#summary.generations.push({ locator: ref.locator, generation, reason: newGeneration });
    }

    const ctx: SourceCtx = {
      adapter,
      ref,
      sourceId: source.id,
      generation,
      headHash: newGeneration ? null : source.head_hash,
      state: saved ? saved.a : adapter.initialState(ref),
      lastTs: saved?.t ?? null,
      recognised: false,
    };
    const opened = await openSourceReader(ref, cursor);
    try {
      const reader = new LineReader(opened.reader, cursor, this.#limits.maxLine);
      await this.#readLines(ctx, reader);
    } finally {
      opened.close();
    }
    // Read to the end: with the batch that holds its last records, the file is remembered as
    // seen (size, mtime, inode), so an unchanged file is not opened again.
    this.#batch.source(ctx).seen = stat;
    if (this.#batch.full(this.#limits)) await this.#flush();
  }

  // ---- one row source (another program's database) ----

  /**
   * Reads the rows new since the source's cursor key, in budgeted reads, and appends them to
   * the source's stream: each row's JSON is one record at the next offset.
   */
  async #captureRows(found: Found, row: SourceRow | undefined): Promise<void> {
    const adapter = found.adapter as RowAdapter<unknown>;
    const { ref, stat } = found;
    if (!row) await this.#settle();
    const source = row ?? this.#store.transaction(() => this.#createSource(ref));
    const saved = parseSaved(source.state);
    const ctx: SourceCtx = {
      adapter,
      ref,
      sourceId: source.id,
      generation: source.generation,
      headHash: null,
      state: saved ? saved.a : adapter.initialState(ref),
      lastTs: saved?.t ?? null,
      recognised: false,
    };
    // The fingerprint is taken before reading: rows written meanwhile change it again.
    const fingerprint = adapter.fingerprint(ref);
    let offset = source.cursor;
    let cursorKey = source.cursor_key;
    while (true) {
      this.#checkStop();
      const read = await adapter.readRows(ref, cursorKey, this.#limits.textBudget);
      for (const raw of read.rows) {
        this.#addRow(ctx, this.#batch, offset, raw);
        offset += raw.length;
      }
      cursorKey = read.cursorKey;
      const update = this.#batch.source(ctx);
      update.cursor = offset;
      update.cursorKey = cursorKey;
      if (!read.more) {
        update.seen = stat;
        update.fingerprint = fingerprint;
      }
      if (this.#batch.full(this.#limits)) await this.#flush();
      if (!read.more) break;
      await yieldToEventLoop();
    }
  }

  #addRow(
    ctx: SourceCtx,
    batch: Batch,
    offset: number,
    raw: Uint8Array,
    existing?: Existing,
  ): void {
    const adapter = ctx.adapter as RowAdapter<unknown>;
    let derived: Derived;
    try {
      derived = adapter.parseRow(raw, ctx.state, ctx.ref, (key) => this.#lookup(ctx, batch, key));
    } catch (err) {
      derived = driftRecord("unparsable", `adapter error: ${(err as Error).message}`);
    }
    this.#addDerived(ctx, batch, offset, raw, derived, existing);
  }

  /** The raw bytes of the newest record stored (or pending) under `key` in this source. */
  #lookup(ctx: SourceCtx, batch: Batch, key: string): Uint8Array | null {
    const composite = keyOf(ctx, key);
    let pending = batch.keyed.get(composite);
    for (let i = this.#inflight.length - 1; !pending && i >= 0; i--) {
      pending = this.#inflight[i]!.job.keyed.get(composite);
    }
    if (pending) return pending.raw;
    const row = this.#store.stmt(
      "SELECT record_id FROM record_keys WHERE source_id = ? AND key = ?",
    )
      .get(ctx.sourceId, key) as { record_id: number } | undefined;
    if (!row) return null;
    const parts = lineRows(this.#store, row.record_id).map((r) => r.raw);
    return concat(parts, parts.reduce((n, p) => n + p.length, 0));
  }

  /** A source row for a newly found source (call inside a transaction). */
  #createSource(ref: SourceRef, now = this.#now()): SourceRow {
    const row = this.#store.stmt(
      `INSERT INTO sources (agent, locator, format, generation, cursor, first_seen)
       VALUES (?, ?, ?, 1, 0, ?) RETURNING *`,
    ).get(ref.agent, ref.locator, ref.format, now) as unknown as SourceRow;
    this.#store.stmt(
      "INSERT INTO generations (source_id, generation, started_at, reason) VALUES (?, 1, ?, ?)",
    ).run(row.id, now, "first seen");
    return row;
  }

  /** After a capture: a non-empty source with no recognised record is a warning. */
  #checkEmpty(ctx: SourceCtx): void {
    if (ctx.recognised) return;
    const row = this.#store.stmt(
      `SELECT s.cursor AS cursor,
              EXISTS (SELECT 1 FROM records WHERE source_id = s.id AND generation = s.generation
                      AND conversation_id IS NOT NULL AND (flags & ${FLAG_DRIFT}) = 0) AS any
       FROM sources s WHERE s.id = ?`,
    ).get(ctx.sourceId) as { cursor: number; any: number } | undefined;
    if (row && row.cursor > 0 && !row.any) this.#summary.empty.push(ctx.ref.locator);
  }

  async #readLines(ctx: SourceCtx, reader: LineReader): Promise<void> {
    const batch = this.#batch;
    while (true) {
      const line = await reader.next();
      if (!line) break;
      // A line longer than the limit is streamed whether or not its end was already read, so
      // capture and rebuild always treat the same line the same way.
      if (line.oversized || line.bytes.length > this.#limits.maxLine) {
        await this.#drain();
        this.#checkStop();
        if (!(await this.#streamLine(ctx, reader, line.offset, line.bytes, !line.oversized))) {
          // Still being written: the cursor stays at its start until the whole line is there.
          batch.source(ctx).cursor = line.offset;
          return;
        }
        continue;
      }
      this.#addLine(ctx, batch, line.offset, line.bytes);
      batch.source(ctx).cursor = reader.position;
      if (batch.full(this.#limits)) {
        await this.#flush();
        this.#checkStop();
      }
    }
    // A source with nothing new still has its cursor in the batch (its file was seen).
    batch.source(ctx).cursor ??= reader.position;
  }

  #addLine(
    ctx: SourceCtx,
    batch: Batch,
    offset: number,
    bytes: Uint8Array,
    existing?: Existing,
  ): void {
    const adapter = ctx.adapter as LineAdapter<unknown>;
    let derived: Derived;
    try {
      derived = adapter.parseLine(decodeLine(bytes), ctx.state, ctx.ref);
    } catch (err) {
      // An adapter bug on one odd record must not stop capture: keep the bytes, count it.
      derived = driftRecord("unparsable", `adapter error: ${(err as Error).message}`);
    }
    this.#addDerived(ctx, batch, offset, bytes, derived, existing);
  }

  /** True when `forget` left a tombstone for this conversation: its records are not kept. */
  #forgotten(key: string | undefined): boolean {
    if (key === undefined) return false;
    this.#tombstones ??= new Set(
      (this.#store.stmt("SELECT key FROM tombstones").all() as { key: string }[]).map((r) => r.key),
    );
    return this.#tombstones.has(key);
  }

  /** Adds one derived record to the batch, split into chunk rows with its text in fragments. */
  #addDerived(
    ctx: SourceCtx,
    batch: Batch,
    offset: number,
    bytes: Uint8Array,
    derived: Derived,
    existing?: Existing,
  ): void {
    this.#inheritTime(ctx, derived);
    if (this.#forgotten(derived.conversation?.key)) {
      batch.raw += bytes.length;
      return;
    }
    const text = derived.text && !derived.drift ? this.#o.redact(derived.text) : "";
    const chunk = this.#limits.chunkSize;
    // A stored record keeps the chunking it was captured with.
    const sizes = existing?.sizes ?? chunkSizes(bytes.length, chunk);
    const fragments = text ? splitFragments(text, sizes.length) : [];
    const flags = derived.drift ? FLAG_DRIFT : 0;
    const added: PendingRecord[] = [];
    let at = 0;
    sizes.forEach((size, seq) => {
      const record: PendingRecord = {
        ctx,
        ...(existing ? { existingId: existing.ids[seq]! } : {}),
        offset: offset + at,
        seq,
        raw: sizes.length === 1 ? bytes : bytes.subarray(at, at + size),
        derived,
        text: fragments[seq] ?? "",
        flags,
      };
      added.push(record);
      batch.records.push(record);
      at += size;
    });
    const key = derived.key;
    if (key && !derived.drift) {
      const composite = keyOf(ctx, key);
      const previous = batch.keyed.get(composite);
      if (derived.supersedes) {
        if (previous) {
          for (const r of previous.records) {
            r.text = "";
            r.flags |= FLAG_SUPERSEDED;
          }
        } else batch.supersede.set(composite, { ctx, key });
      }
      batch.keyed.set(composite, { ctx, key, raw: bytes, records: added });
    }
    batch.text += text.length;
    batch.raw += bytes.length;
    if (!derived.drift && derived.conversation) ctx.recognised = true;
  }

  #inheritTime(ctx: SourceCtx, derived: Derived): void {
    if (derived.ts === null) derived.ts = ctx.lastTs;
    else ctx.lastTs = derived.ts;
  }

  /**
   * Hands the pending batch to the writer. With a worker, it is committed while the next ones
   * are read; up to MAX_IN_FLIGHT batches wait there, which evens out batches that take longer
   * to read than to write and the other way round.
   */
  async #flush(full = true): Promise<void> {
    const batch = this.#batch;
    if (batch.empty) return;
    const { payload, job } = this.#prepare(batch);
    batch.reset();
    this.#bytesRead += job.raw;
    if (full && !this.#workerConsidered) await this.#considerWorker();
    while (this.#inflight.length >= MAX_IN_FLIGHT) await this.#settleOldest();
    const writing = this.#writer.write(payload);
    // A batch that fails while an older one is awaited is reported when its turn comes.
    writing.catch(() => {});
    this.#inflight.push({ job, writing });
    if (this.#writer === this.#inline) await this.#settle();
    await yieldToEventLoop();
  }

  /**
   * At the first full batch: when enough is left to read (`Limits.workerFrom`), a worker writes
   * the batches from here on. Decided then rather than at the start, so a capture that is
   * mostly one streamed giant line, a handful of appends, or a database that changed without
   * new rows never starts one.
   */
  async #considerWorker(): Promise<void> {
    this.#workerConsidered = true;
    const left = this.#progress.bytesTotal - this.#bytesRead;
    if (left < this.#limits.workerFrom || this.#store.db.isTransaction) return;
    const start = this.#o.startWriter ?? ((store, op) => WorkerBatchWriter.start(store, op));
    const worker = await start(this.#store, this.#op);
    if (!worker) return;
    this.#writer = worker;
    this.#summary.writer = "worker";
  }

  /** Flushes the pending batch and waits until everything handed over is committed. */
  async #drain(): Promise<void> {
    await this.#flush(false);
    await this.#settle();
  }

  /** Waits until every batch in flight is committed (this connection may write after). */
  async #settle(): Promise<void> {
    while (this.#inflight.length) await this.#settleOldest();
  }

  /** Waits for the oldest batch in flight; once committed, takes its result into the summary. */
  async #settleOldest(): Promise<void> {
    const oldest = this.#inflight.shift();
    if (oldest) this.#committed(oldest.job, await oldest.writing);
  }

  /** Writes a batch now, on this connection (rebuild: inside its own transaction). */
  #commit(batch: Batch): void {
    if (batch.empty) return;
    const { payload, job } = this.#prepare(batch);
    batch.reset();
    this.#committed(job, this.#inline.writeNow(payload));
  }

  /**
   * A batch as the writer takes it (plain data, its raw bytes compressed and packed), and what
   * capture keeps of it until it is committed.
   */
  #prepare(batch: Batch): { payload: BatchPayload; job: Job } {
    const deltas = this.#conversationDeltas(batch.records);
    for (const delta of deltas.values()) this.#resolveProject(delta.info);
    const records: BatchRecord[] = [];
    const stored: Uint8Array[] = [];
    const position = new Map<PendingRecord, number>();
    const drift: PendingRecord[] = [];
    let rawLength = 0;
    for (const r of batch.records) {
      const d = r.derived;
      // A record derived again (rebuild) keeps its stored bytes: only derived columns change.
      const { stored: bytes, flag } = r.existingId === undefined
        ? encodeRaw(r.raw)
        : { stored: EMPTY, flag: 0 };
      const counted = d.drift && r.seq === 0 ? d.drift : null;
      if (counted) drift.push(r);
      position.set(r, records.length);
      records.push({
        existingId: r.existingId ?? null,
        sourceId: r.ctx.sourceId,
        generation: r.ctx.generation,
        offset: r.offset,
        seq: r.seq,
        rawAt: rawLength,
        rawLength: bytes.length,
        length: flag ? r.raw.length : null,
        conversationKey: d.conversation?.key ?? null,
        ts: d.ts,
        kind: d.kind,
        role: d.role,
        messageId: d.messageId,
        partId: d.partId,
        flags: r.flags | (r.text ? FLAG_INDEXED : 0) | flag,
        text: r.text,
        drift: counted ? driftRow(r.ctx, d) : null,
      });
      stored.push(bytes);
      rawLength += bytes.length;
    }
    // One fresh buffer (never a view of a reader's), so it can move to a worker.
    const raw = new Uint8Array(rawLength);
    let at = 0;
    for (const bytes of stored) {
      raw.set(bytes, at);
      at += bytes.length;
    }
    const keys: BatchPayload["keys"] = [];
    for (const keyed of batch.keyed.values()) {
      const head = position.get(keyed.records[0]!);
      if (head !== undefined) {
        keys.push({ sourceId: keyed.ctx.sourceId, key: keyed.key, record: head });
      }
    }
    const sources = [...batch.sources.values()];
    return {
      payload: {
        records,
        raw,
        conversations: conversationWrites(deltas),
        supersede: [...batch.supersede.values()].map(({ ctx, key }) => ({
          sourceId: ctx.sourceId,
          key,
        })),
        keys,
        sources: sources.map((u) => ({
          sourceId: u.ctx.sourceId,
          cursor: u.cursor,
          state: u.cursor === null
            ? null
            : JSON.stringify({ a: u.ctx.state, t: u.ctx.lastTs } satisfies SavedState),
          cursorKey: u.cursorKey ?? null,
          seen: u.seen
            ? { size: u.seen.size, mtimeMs: mtimeOf(u.seen), dev: u.seen.dev, ino: u.seen.ino }
            : null,
          fingerprint: u.fingerprint ?? null,
          // Once read to the end: the hash its next capture compares the file's head with.
          headHash: u.seen && u.cursor !== null ? this.#headHash(u.ctx, u.cursor) : null,
        })),
        // As it will be once this batch commits (after those in flight before it).
        progress: this.#progressDue()
          ? {
            ...this.#progress,
            bytesDone: this.#progress.bytesDone + batch.raw +
              this.#inflight.reduce((n, i) => n + i.job.raw, 0),
          }
          : null,
        now: this.#now(),
      },
      job: {
        drift,
        raw: batch.raw,
        finished: sources.filter((u) => u.seen).map((u) => u.ctx),
        keyed: batch.keyed,
      },
    };
  }

  /** Takes a committed batch into the summary, then looks at the sources it finished. */
  #committed(job: Job, result: BatchResult): void {
    const dropped = new Set(result.tombstoned);
    for (const key of dropped) this.#tombstones?.add(key);
    for (const r of job.drift) {
      const key = r.derived.conversation?.key;
      if (key === undefined || !dropped.has(key)) this.#countDriftSeen(r.ctx, r.derived);
    }
    this.#summary.records += result.inserted;
    this.#summary.conversations += result.newConversations;
    this.#summary.bytes += job.raw;
    this.#progress.bytesDone += job.raw;
    for (const ctx of job.finished) this.#checkEmpty(ctx);
    this.#report(false);
  }

  #conversationDeltas(records: PendingRecord[]): Map<string, ConversationDelta> {
    const deltas = new Map<string, ConversationDelta>();
    for (const r of records) {
      const d = r.derived;
      if (!d.conversation) continue;
      let delta = deltas.get(d.conversation.key);
      if (!delta) {
        delta = {
          info: { ...d.conversation },
          agent: r.ctx.ref.agent,
          sourceId: r.ctx.sourceId,
          firstTs: null,
          lastTs: null,
          messages: 0,
          records: 0,
          bytes: 0,
          title: null,
          version: null,
        };
        deltas.set(d.conversation.key, delta);
      } else {
        mergeInfo(delta.info, d.conversation);
      }
      delta.records++;
      delta.bytes += r.raw.length;
      if (r.seq > 0) continue;
      if (d.ts !== null) {
        delta.firstTs = delta.firstTs === null ? d.ts : Math.min(delta.firstTs, d.ts);
        delta.lastTs = delta.lastTs === null ? d.ts : Math.max(delta.lastTs, d.ts);
      }
      if (d.newMessage) delta.messages++;
      if (d.version) delta.version = d.version;
      if (d.title && d.title.text) {
        const current = delta.title;
        if (
          !current || d.title.rank > current.rank ||
          (d.title.rank >= 2 && d.title.rank === current.rank)
        ) {
          // Redacted before it is cut: a cut through a secret would leave a part no shape matches.
          delta.title = { text: cutTitle(this.#o.redact(d.title.text)), rank: d.title.rank };
        }
      }
    }
    return deltas;
  }

  #resolveProject(info: ConversationInfo): void {
    if (!info.cwd) return;
    let project = this.#projects.get(info.cwd);
    if (!project) {
      project = this.#o.projectOf(info.cwd);
      this.#projects.set(info.cwd, project);
    }
    (info as ConversationInfo & { project?: Project }).project = project;
  }

  /** Counts a stored drift record in this run's report. */
  #countDriftSeen(ctx: SourceCtx, d: Derived): void {
    const drift = d.drift!;
    const version = d.version ?? "unknown";
    const key = `${ctx.ref.agent}\0${version}\0${drift.category}\0${drift.detail}`;
    const seen = this.#drift.get(key);
    if (seen) seen.count++;
    else {
      this.#drift.set(key, {
        agent: ctx.ref.agent,
        version,
        category: drift.category,
        detail: drift.detail,
        count: 1,
      });
    }
  }

  // ---- a line too long to hold in memory ----

  async #streamLine(
    ctx: SourceCtx,
    reader: LineReader,
    offset: number,
    head: Uint8Array,
    headComplete: boolean,
  ): Promise<boolean> {
    const store = this.#store;
    const chunkSize = this.#limits.chunkSize;
    const scanner = new JsonTextScanner(ctx.adapter.skipKeys);
    const insert = store.stmt(
      `INSERT INTO records (source_id, generation, offset, seq, raw, kind, flags)
       VALUES (?, ?, ?, ?, ?, 'meta', ?)`,
    );
    const index = store.stmt("INSERT INTO fts (rowid, text) VALUES (?, ?)");
    let seq = 0;
    let at = offset;
    let total = 0;
    let pending: Uint8Array[] = [];
    let pendingLength = 0;
    const rowIds: number[] = [];
    // Each chunk's text is indexed once the text after it is known (see `PieceRedactor`).
    const pieces = new PieceRedactor(this.#o.redact);
    const indexed = (ready: RedactedPiece[]) => {
      for (const { id, text } of ready) if (text) index.run(id, text);
    };
    const writeRow = (bytes: Uint8Array) => {
      scanner.write(bytes);
      const text = scanner.takeText();
      const flags = FLAG_STREAMED | (text.trim() ? FLAG_INDEXED : 0);
      const id = Number(
        insert.run(ctx.sourceId, ctx.generation, at, seq, bytes, flags).lastInsertRowid,
      );
      rowIds.push(id);
      indexed(pieces.push(id, text));
      at += bytes.length;
      total += bytes.length;
      seq++;
    };
    const flush = (all: boolean) => {
      let joined = concat(pending, pendingLength);
      while (joined.length >= chunkSize || (all && joined.length > 0)) {
        writeRow(joined.subarray(0, chunkSize));
        joined = joined.subarray(Math.min(chunkSize, joined.length));
      }
      pending = joined.length ? [joined.slice()] : [];
      pendingLength = joined.length;
    };

    const step = this.#op.begin("capture.long-line");
    store.db.exec("BEGIN IMMEDIATE");
    try {
      pending.push(head);
      pendingLength = head.length;
      flush(false);
      let complete = headComplete;
      while (!complete) {
        const piece = await reader.nextPiece();
        if (!piece) break;
        pending.push(piece.bytes);
        pendingLength += piece.bytes.length;
        if (piece.done) {
          complete = true;
          break;
        }
        flush(false);
        if (seq % 64 === 0) this.#reportBytes(total);
      }
      if (!complete) {
        // The line is still being written: capture it once it is complete, not before.
        store.db.exec("ROLLBACK");
        step.finish();
        return false;
      }
      flush(true);
      indexed(pieces.end());
      scanner.end();
      this.#finishStreamed(ctx, scanner, offset, at, rowIds);
      store.stmt("UPDATE sources SET cursor = ?, state = ?, last_read = ? WHERE id = ?").run(
        at,
        JSON.stringify({ a: ctx.state, t: ctx.lastTs } satisfies SavedState),
        this.#now(),
        ctx.sourceId,
      );
      if (this.#progressDue()) store.setMeta("progress", this.#progress);
      store.db.exec("COMMIT");
      this.#summary.records += seq;
      this.#summary.bytes += total;
      this.#progress.bytesDone += total;
      this.#bytesRead += total;
      step.finish();
      return true;
    } catch (err) {
      if (store.db.isTransaction) store.db.exec("ROLLBACK");
      const translated = translateError(err);
      step.fail(translated);
      throw translated;
    }
  }

  /** Classifies a streamed line from its scalars and sets the derived columns of its rows. */
  #finishStreamed(
    ctx: SourceCtx,
    scanner: JsonTextScanner,
    offset: number,
    at: number,
    rowIds: readonly number[],
  ): void {
    const store = this.#store;
    const total = at - offset;
    const seq = rowIds.length;
    let derived: Derived;
    if (scanner.failed) derived = driftRecord("unparsable", "invalid JSON");
    else {
      try {
        derived = (ctx.adapter as LineAdapter<unknown>).parseStreamed(
          scanner.scalars,
          ctx.state,
          ctx.ref,
        );
      } catch (err) {
        derived = driftRecord("unparsable", `adapter error: ${(err as Error).message}`);
      }
    }
    this.#inheritTime(ctx, derived);
    if (this.#forgotten(derived.conversation?.key)) {
      const unindex = store.stmt("DELETE FROM fts WHERE rowid = ?");
      const drop = store.stmt("DELETE FROM records WHERE id = ?");
      for (const id of rowIds) {
        unindex.run(id);
        drop.run(id);
      }
      return;
    }
    const pendingRecord: PendingRecord = {
      ctx,
      offset,
      seq: 0,
      raw: new Uint8Array(0),
      derived,
      text: "",
      flags: 0,
    };
    const deltas = this.#conversationDeltas([pendingRecord]);
    for (const delta of deltas.values()) {
      delta.records = seq;
      delta.bytes = total;
      this.#resolveProject(delta.info);
    }
    const { ids, created } = writeConversations(store, conversationWrites(deltas));
    this.#summary.conversations += created;
    const conversationId = derived.conversation ? ids.get(derived.conversation.key) ?? null : null;
    // Row by row: one UPDATE over the whole range would hold every row of the line in memory.
    const update = store.stmt(
      `UPDATE records SET conversation_id = ?, ts = ?, kind = ?, role = ?, message_id = ?,
         part_id = ?, flags = flags | ? WHERE id = ?`,
    );
    for (const id of rowIds) {
      update.run(
        conversationId,
        derived.ts,
        derived.kind,
        derived.role,
        derived.messageId,
        derived.partId,
        derived.drift ? FLAG_DRIFT : 0,
        id,
      );
    }
    if (derived.drift) {
      countDrift(store, driftRow(ctx, derived));
      this.#countDriftSeen(ctx, derived);
    }
    if (!derived.drift && derived.conversation) ctx.recognised = true;
  }

  #reportBytes(extra: number): void {
    this.#o.onProgress?.({ ...this.#progress, bytesDone: this.#progress.bytesDone + extra });
  }

  // ---- generations ----

  async #headMatches(ref: SourceRef, expected: string | null): Promise<boolean> {
    if (!expected) return true;
    const [lengthText, hash] = expected.split(":");
    const length = Number(lengthText);
    const bytes = await readPrefix(ref, length);
    return bytes.length === length && sha256(bytes) === hash;
  }

  /**
   * A hash of the source's first bytes (up to 4 KiB) to remember with a cursor at `cursor`, when
   * it covers more of them than the one remembered; else null.
   */
  #headHash(ctx: SourceCtx, cursor: number): string | null {
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

  /**
   * True when a file that replaced a captured one starts with exactly the captured bytes (a
   * copy or a restore): then it continues the same generation instead of duplicating it.
   */
  async #samePrefix(ref: SourceRef, source: SourceRow): Promise<boolean> {
    const opened = await openSourceReader(ref, 0);
    try {
      const rows = this.#store.stmt(
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

  // ---- progress ----

  #report(force: boolean): void {
    this.#o.onProgress?.({ ...this.#progress });
    if (force) this.#writeProgressNow();
  }

  /** Progress is stored with each batch (cheap: one row), at most every 250 ms. */
  #progressDue(): boolean {
    const now = this.#now();
    if (now - this.#lastProgressWrite < 250) return false;
    this.#lastProgressWrite = now;
    return true;
  }

  #writeProgressNow(): void {
    try {
      this.#store.setMeta("progress", this.#progress);
    } catch (err) {
      throw translateError(err);
    }
  }
}

interface SourceCtx {
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

/** Existing chunk rows of a stored record being derived again (rebuild). */
interface Existing {
  ids: number[];
  sizes: number[];
}

/** A stored line being re-derived (rebuild): its chunk rows so far, held or streamed. */
interface StoredLine extends Existing {
  offset: number;
  length: number;
  /** Its chunks, until it is known to be too long to hold (then `stream` has them). */
  parts: Uint8Array[];
  stream: RederiveStream | null;
}

/** A long stored line's chunks, re-derived as they are read. */
interface RederiveStream {
  write(id: number, bytes: Uint8Array): void;
  /** Classifies the line once all its chunk rows (`ids`) were written. */
  end(ids: readonly number[]): void;
}

/** What a batch moves a source to: its cursor, and whether its file was read to the end. */
interface SourceUpdate {
  ctx: SourceCtx;
  /** The stream position after the last record read (null: unchanged, as in rebuild). */
  cursor: number | null;
  cursorKey?: string;
  /** The file as it was when read to the end. */
  seen?: Deno.FileInfo;
  fingerprint?: string;
}

/** What capture keeps of a batch handed to the writer, for when it is committed. */
interface Job {
  /** Its drift records, counted in the run's report once stored. */
  drift: PendingRecord[];
  /** Source bytes the batch covers. */
  raw: number;
  /** Sources the batch finished reading. */
  finished: SourceCtx[];
  /** Its keyed records, for lookups while it is in flight. */
  keyed: Batch["keyed"];
}

const EMPTY = new Uint8Array(0);

/** The drift count a drift record adds to (by source generation, agent version and kind). */
function driftRow(ctx: SourceCtx, d: Derived): DriftRow {
  return {
    sourceId: ctx.sourceId,
    generation: ctx.generation,
    agent: ctx.ref.agent,
    version: d.version ?? "unknown",
    category: d.drift!.category,
    detail: d.drift!.detail,
  };
}

/** The conversation rows a batch's deltas upsert. */
function conversationWrites(deltas: Map<string, ConversationDelta>): ConversationWrite[] {
  return [...deltas].map(([key, delta]) => {
    const info = delta.info as ConversationInfo & { project?: Project };
    return {
      key,
      agent: delta.agent,
      nativeId: info.nativeId,
      sourceId: delta.sourceId,
      projectRoot: info.project?.root ?? null,
      projectKey: info.project?.key ?? null,
      cwd: info.cwd ?? null,
      branch: info.branch ?? null,
      title: delta.title?.text ?? null,
      titleRank: delta.title?.rank ?? 0,
      firstTs: delta.firstTs,
      lastTs: delta.lastTs,
      messages: delta.messages,
      records: delta.records,
      bytes: delta.bytes,
      parentKey: info.parentKey ?? null,
      subagent: info.subagent ?? false,
      archived: info.archived ?? null,
      version: delta.version,
    };
  });
}

/** A record key scoped to its source. */
function keyOf(ctx: SourceCtx, key: string): string {
  return `${ctx.sourceId} ${key}`;
}

class Batch {
  records: PendingRecord[] = [];
  text = 0;
  raw = 0;
  /** Keyed records of this batch (the newest per key), for lookups before they are stored. */
  keyed = new Map<
    string,
    { ctx: SourceCtx; key: string; raw: Uint8Array; records: PendingRecord[] }
  >();
  /** Stored records that records of this batch supersede. */
  supersede = new Map<string, { ctx: SourceCtx; key: string }>();
  /** The sources this batch moves forward. */
  sources = new Map<number, SourceUpdate>();

  /** The update of `ctx`'s source, created on first use. */
  source(ctx: SourceCtx): SourceUpdate {
    let update = this.sources.get(ctx.sourceId);
    if (!update) {
      update = { ctx, cursor: null };
      this.sources.set(ctx.sourceId, update);
    }
    return update;
  }

  /** True when there is nothing to write. */
  get empty(): boolean {
    return this.records.length === 0 && this.sources.size === 0;
  }

  /** True once the batch holds about as much as one transaction should. */
  full(limits: Limits): boolean {
    return this.text >= limits.textBudget || this.raw >= limits.rawBudget;
  }

  reset(): void {
    this.records = [];
    this.text = 0;
    this.raw = 0;
    this.keyed = new Map();
    this.supersede = new Map();
    this.sources = new Map();
  }
}

const HEAD_BYTES = 4096;
/** Batches a worker may hold at once: one being written, one waiting. */
const MAX_IN_FLIGHT = 2;
const utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** Decodes and parses one line for an adapter (invalid UTF-8 becomes U+FFFD). */
export function decodeLine(bytes: Uint8Array): import("../sources/adapter.ts").LineInput {
  const text = utf8.decode(bytes);
  if (text.trim() === "") return { bytes, value: undefined, blank: true };
  try {
    return { bytes, value: JSON.parse(text), blank: false };
  } catch (err) {
    return { bytes, value: undefined, parseError: (err as Error).message, blank: false };
  }
}

/** A record kept raw as `meta` and counted as drift. */
function driftRecord(
  category: "unknown_type" | "unparsable" | "missing_fields",
  detail: string,
  base: Partial<Derived> = {},
): Derived {
  return makeDerived("meta", null, null, { ...base, drift: { category, detail } });
}

function chunkSizes(length: number, chunk: number): number[] {
  const sizes: number[] = [];
  for (let at = 0; at < length || sizes.length === 0; at += chunk) {
    sizes.push(Math.min(chunk, length - at));
  }
  return sizes;
}

function mergeInfo(into: ConversationInfo, from: ConversationInfo): void {
  into.cwd ??= from.cwd ?? null;
  if (from.branch) into.branch = from.branch;
  into.parentKey ??= from.parentKey ?? null;
  if (from.subagent) into.subagent = true;
  if (from.archived !== undefined) into.archived = from.archived;
}

function parseSaved(state: string | null): SavedState | null {
  if (!state) return null;
  try {
    return JSON.parse(state) as SavedState;
  } catch {
    return null;
  }
}

function mtimeOf(stat: Deno.FileInfo): number | null {
  return stat.mtime ? stat.mtime.getTime() : null;
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

function isSourceError(err: unknown): boolean {
  return err instanceof Deno.errors.NotFound || err instanceof Deno.errors.PermissionDenied ||
    err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.IsADirectory ||
    err instanceof Deno.errors.InvalidData || err instanceof Deno.errors.UnexpectedEof ||
    err instanceof SourceError;
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

function concat(parts: Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

let lastYield = 0;

/**
 * Lets timers and signals (SIGTERM, a watch tick) run between batches: at most every 20 ms,
 * since each yield costs a timer tick.
 */
function yieldToEventLoop(): Promise<void> {
  const now = performance.now();
  if (now - lastYield < 20) return Promise.resolve();
  lastYield = now;
  return new Promise((resolve) => setTimeout(resolve, 0));
}
