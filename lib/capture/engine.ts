// The capture engine: one pass over every source, reading what is new since each cursor and
// committing it in bounded batches, so a crash at any point loses nothing and duplicates nothing.
//
// How one transcript line travels into the store:
//
// 1. Found. `discover.ts` lists each adapter's sources (`lib/sources/`) and stats their files;
//    `identity.ts` matches each file with its row in `sources` (a moved file keeps its source; a
//    replaced, shortened or rewritten one starts a new generation, and the old records stay) and
//    passes over the files unchanged since they were last read.
// 2. Read. `source_reader.ts` opens the file at its cursor (decompressing `.jsonl.zst`), and
//    `lines.ts` cuts complete lines out of 64 KiB reads; an incomplete last line waits (but for
//    an agent that writes the newline before a line, `newlineBefore`: its last line is read
//    once it is a whole JSON object).
// 3. Parsed. `derive.ts` decodes the line and hands it to its adapter (`LineAdapter.parseLine`),
//    which derives kind, role, conversation and text; an adapter error keeps the line as drift.
// 4. Gated. The gate (`lib/gate/`) redacts secrets from the text before anything is indexed
//    (from titles too, in `batch_plan.ts`). The raw bytes are kept exactly as they were read.
// 5. Batched. The record joins the batch as chunk rows of at most 64 KiB, its text cut into one
//    index fragment per row, and the batch's cursor moves past the line. A full batch (`limits.ts`:
//    512 KiB of text or 2 MiB raw) is planned into plain data (`batch_plan.ts`: raw bytes
//    compressed, conversation rows summed) and handed on (`batch_pipeline.ts`).
// 6. Written. `batch_writers.ts` writes the batch on this connection or, in a pass with 16 MiB
//    or more to read, in a worker with a connection of its own (`batch_worker.ts`) while the
//    next batch is read. Either way `batch_transaction.ts` writes records, index entries,
//    conversations, drift, record keys and the cursors the batch moves in one SQLite
//    transaction; from there `lib/store/search.ts` finds the line.
//
// Sources are read in the order found, except those whose records an adapter decides from other
// sources' (`readAfterOthers`: a copy that repeats its parent, a tool's output file that a
// transcript names): they come last, once the others are committed, and what they ask of the
// others is read from the store (`recall.ts`), so the answer is the same when those files are
// gone and after a rebuild.
//
// A line over 8 MiB goes another way (`giant_lines.ts`): streamed into chunk rows in a
// transaction of its own, its text scanned out piece by piece (`json_stream.ts`, `pieces.ts`).
// Rows of another program's database (OpenCode) travel as lines do: `RowAdapter.readRows` reads
// them in budgeted reads, and each row's JSON is one record at the next offset of its source.
//
// A pass is one walk through the sources (this file). A run (`run.ts`) is one pass under the
// capture switch, the capture lock and the failure latch; the watcher (`watch.ts`) holds the
// lock and runs a pass whenever files change; `rebuild.ts` derives everything again from the
// raw records.

import {
  type Adapter,
  type DiscoverContext,
  type LineAdapter,
  type RowAdapter,
  SourceError,
  type SourceRef,
} from "../sources/adapter.ts";
import type { Project } from "../paths.ts";
import type { Redactor } from "../gate/secrets.ts";
import type { Operation } from "../stage_markers.ts";
import {
  type HistoryStore,
  StoreFullError,
  StoreLockedError,
  translateError,
} from "../store/db.ts";
import { yieldToEventLoop } from "../event_loop.ts";
import { Batch } from "./batch_plan.ts";
import type { StartWriter } from "./batch_pipeline.ts";
import {
  type Discovered,
  discoverSources,
  type Found,
  type SeenFiles,
  seenFiles,
} from "./discover.ts";
import {
  adoptMoved,
  createSource,
  generationChange,
  loadSourcesAside,
  markGone,
  needsWork,
  sourceById,
  startGeneration,
} from "./identity.ts";
import type { Limits } from "./limits.ts";
import { BUFFER_SIZE, LineReader } from "./lines.ts";
import { type Parts, partsOf } from "./parts.ts";
import type { Progress } from "./progress.ts";
import { parseSaved, type SourceCtx, type SourceRow } from "./source.ts";
import { ReadingList, type Work } from "./reading_list.ts";
import { openSourceReader } from "./source_reader.ts";
import type { CaptureSummary } from "./summary.ts";
import { messageOf } from "../format.ts";

/** What a pass reads, how it writes, and when it stops. */
export interface PassOptions {
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
  captureEnabled?: () => boolean;
  onProgress?: (progress: Progress) => void;
  limits?: Partial<Limits>;
  /** Only these locators (watch mode passes the changed files); all when undefined. */
  only?: ReadonlySet<string>;
  /** Sources to look at instead of discovering them (watch mode keeps the last discovery). */
  sources?: readonly { adapter: Adapter; ref: SourceRef }[];
  /** Told what discovery found (watch mode keeps it until the next rediscovery). */
  onDiscovered?: (sources: { adapter: Adapter; ref: SourceRef }[]) => void;
  /** Told the files the pass found (`discover.ts`). */
  onFound?: (files: SeenFiles) => void;
  /** Stage markers for discovery, each batch and each index write (none when absent). */
  markers?: Operation;
  /**
   * Starts the writer of a large capture (`Limits.workerFrom`), or gives null to write inline.
   * Default: a worker with its own connection (`WorkerBatchWriter.start`).
   */
  startWriter?: StartWriter;
}

/** Captures everything new from every source the adapters discover: one pass. */
export async function capturePass(options: PassOptions): Promise<CaptureSummary> {
  return await new CapturePass(options).run();
}

/** Why a pass stopped before the end: it stops at a batch boundary, with cursors consistent. */
class Stop extends Error {
  constructor(readonly reason: "deadline" | "signal" | "ingest-off") {
    super(reason);
  }
}

/** One pass: finds the sources, reads each from its cursor, and writes in batches. */
class CapturePass {
  readonly #o: PassOptions;
  readonly #store: Parts["store"];
  readonly #limits: Parts["limits"];
  readonly #op: Parts["op"];
  readonly #now: Parts["now"];
  readonly #tally: Parts["tally"];
  readonly #progress: Parts["progress"];
  readonly #deriver: Parts["deriver"];
  readonly #pipeline: Parts["pipeline"];
  readonly #giantLines: Parts["giantLines"];
  /** The buffer each source's lines are read into, one after another (`LineReader`). */
  readonly #lines = new Uint8Array(BUFFER_SIZE);
  /** Records of one or more sources waiting to be committed together. */
  readonly #batch = new Batch();

  constructor(options: PassOptions) {
    this.#o = options;
    const parts = partsOf(options);
    this.#store = parts.store;
    this.#limits = parts.limits;
    this.#op = parts.op;
    this.#now = parts.now;
    this.#tally = parts.tally;
    this.#progress = parts.progress;
    this.#deriver = parts.deriver;
    this.#pipeline = parts.pipeline;
    this.#giantLines = parts.giantLines;
  }

  async run(): Promise<CaptureSummary> {
    const started = performance.now();
    this.#progress.report(false);
    const work = await this.#plan();
    const any = work.length > 0;
    if (work.length >= PLAN_GARBAGE_FROM) this.#pipeline.collectGarbage();
    try {
      await this.#captureAll(work);
    } finally {
      await this.#pipeline.close();
    }
    this.#progress.current.phase = "done";
    this.#progress.report(any);
    return this.#tally.finish(this.#o.discover.skipped, Math.round(performance.now() - started));
  }

  /**
   * Finds the sources, settles which moved or are gone, and gives those with work to do in
   * reading order, each with its row (new sources get theirs here). What is known of the
   * sources with nothing new is let go here: a pass holds only what it has left to read.
   */
  async #plan(): Promise<ReadingList> {
    const summary = this.#tally.summary;
    const progress = this.#progress.current;
    // The store's sources are read beside the discovery when there are many (a worker).
    const aside = loadSourcesAside(this.#store, this.#limits.knownAsideFrom);
    let discovered: Discovered;
    try {
      discovered = await this.#op.stage("capture.discover", () => discoverSources(this.#o, aside));
    } finally {
      aside.stop();
    }
    const rows = await aside.known;
    const { changed } = discovered;
    summary.sources = discovered.count;
    this.#o.onFound?.(seenFiles(discovered, rows));
    adoptMoved(this.#store, changed, rows);
    if (!this.#o.only && !this.#o.sources) summary.gone = markGone(this.#store, rows);

    // A file that moved continues its source (`adoptMoved`): nothing to read if it is as read.
    const unread = changed.filter((f) => needsWork(f, rows.get(f.ref.locator)));
    const work = new ReadingList(unread, rows);
    progress.phase = "capturing";
    progress.sourcesTotal = work.length;
    progress.bytesTotal = work.bytesLeft((locator) => rows.get(locator)?.cursor ?? 0);
    // Progress is stored only when there is work, so an idle watcher does not write.
    this.#progress.report(work.length > 0);
    // New sources get their rows in one transaction (one each cost a commit per file).
    if (work.unnumbered) {
      const now = this.#now();
      this.#store.transaction(() => {
        work.number((source) => createSource(this.#store, source, now).id);
      });
    }
    return work;
  }

  /** Captures `work` in order, emptying it: each source is let go once it is read. */
  async #captureAll(work: ReadingList): Promise<void> {
    const summary = this.#tally.summary;
    let others = true;
    try {
      for (let item = work.take(); item; item = work.take()) {
        this.#checkStop();
        if (others && item.last) {
          // What these sources decide from others' records must find them stored.
          others = false;
          await this.#pipeline.drain(this.#batch);
        }
        try {
          await this.#captureSource(item, this.#rowOf(item));
          summary.changed++;
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
        this.#progress.current.sourcesDone++;
        this.#progress.report(false);
      }
      await this.#pipeline.drain(this.#batch);
    } catch (err) {
      if (!(err instanceof Stop)) throw err;
      // Stopping happens at a batch boundary: what was read so far is committed first.
      await this.#pipeline.drain(this.#batch);
      summary.complete = false;
      summary.stoppedBy = err.reason;
    }
  }

  /**
   * The source's row, read at its turn: a pass holds only the ids of the sources it has left.
   * Holding their rows took a third of a KiB each: 33 MiB of heap for the 105,609 new sources
   * of a 10 GB capture.
   */
  #rowOf(item: Work): SourceRow | undefined {
    return item.id === undefined ? undefined : sourceById(this.#store, item.id);
  }

  #checkStop(): void {
    if (this.#o.signal?.aborted) throw new Stop("signal");
    if (this.#o.deadline !== undefined && this.#now() >= this.#o.deadline) {
      throw new Stop("deadline");
    }
    if (this.#o.captureEnabled && !this.#o.captureEnabled()) throw new Stop("ingest-off");
  }

  async #sourceFailed(ref: SourceRef, err: unknown): Promise<void> {
    const message = messageOf(err);
    this.#tally.summary.errors.push({ locator: ref.locator, message });
    await this.#pipeline.settle(); // this connection writes: the worker's batches first
    this.#store.stmt("UPDATE sources SET error = ? WHERE locator = ?").run(message, ref.locator);
  }

  // ---- one line-oriented source ----

  async #captureSource(found: Found, row: SourceRow | undefined): Promise<void> {
    if (found.adapter.mode === "rows") return await this.#captureRows(found, row);
    const { ref, stat } = found;
    const adapter = found.adapter;
    // This connection writes below: the batch in flight is committed first.
    if (!row) await this.#pipeline.settle();
    const source = row ??
      this.#store.transaction(() => createSource(this.#store, found, this.#now()));
    let generation = source.generation;
    let cursor = source.cursor;
    let saved = parseSaved(source.state);

    const newGeneration = row && cursor > 0
      ? await generationChange(this.#store, ref, stat, source)
      : null;
    if (newGeneration) {
      await this.#pipeline.settle();
      generation = startGeneration(this.#store, source, newGeneration, this.#now());
      cursor = 0;
      saved = null;
      this.#tally.summary.generations.push({
        locator: ref.locator,
        generation,
        reason: newGeneration,
      });
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
      const reader = new LineReader(opened.reader, cursor, this.#limits.maxLine, this.#lines);
      await this.#readLines(ctx, reader);
    } finally {
      opened.close();
    }
    // Read to the end: with the batch that holds its last records, the file is remembered as
    // seen (size, mtime, inode), so an unchanged file is not opened again.
    this.#batch.source(ctx).seen = stat;
    if (this.#batch.full(this.#limits)) await this.#pipeline.flush(this.#batch);
  }

  async #readLines(ctx: SourceCtx, reader: LineReader): Promise<void> {
    const batch = this.#batch;
    while (true) {
      const line = await reader.next();
      if (!line) break;
      // A line longer than the limit is streamed whether or not its end was already read, so
      // capture and rebuild always treat the same line the same way.
      if (line.oversized || line.bytes.length > this.#limits.maxLine) {
        await this.#pipeline.drain(batch);
        this.#checkStop();
        const head = line.bytes;
        if (!(await this.#giantLines.stream(ctx, reader, line.offset, head, !line.oversized))) {
          // Still being written: the cursor stays at its start until the whole line is there.
          batch.source(ctx).cursor = line.offset;
          return;
        }
        continue;
      }
      this.#deriver.addLine(ctx, batch, line.offset, line.bytes);
      batch.source(ctx).cursor = reader.position;
      if (batch.full(this.#limits)) {
        await this.#pipeline.flush(batch);
        this.#checkStop();
      }
    }
    // A source with nothing new still has its cursor in the batch (its file was seen).
    batch.source(ctx).cursor ??= reader.position;
    // An agent that writes the newline before a line leaves its last line without one.
    const rest = (ctx.adapter as LineAdapter<unknown>).newlineBefore ? reader.rest() : null;
    if (rest && isWholeObject(rest.bytes)) {
      this.#deriver.addLine(ctx, batch, rest.offset, rest.bytes);
      batch.source(ctx).cursor = reader.position;
    }
  }

  // ---- one row source (another program's database) ----

  /**
   * Reads the rows new since the source's cursor key, in budgeted reads, and appends them to
   * the source's stream: each row's JSON is one record at the next offset.
   */
  async #captureRows(found: Found, row: SourceRow | undefined): Promise<void> {
    const adapter = found.adapter as RowAdapter<unknown>;
    const { ref, stat } = found;
    if (!row) await this.#pipeline.settle();
    const source = row ??
      this.#store.transaction(() => createSource(this.#store, found, this.#now()));
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
        this.#deriver.addRow(ctx, this.#batch, offset, raw);
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
      if (this.#batch.full(this.#limits)) await this.#pipeline.flush(this.#batch);
      if (!read.more) break;
      await yieldToEventLoop();
    }
  }
}

/**
 * The sources to read from which a pass frees its discovery's garbage before it reads: a
 * collection marks what is alive (tens of milliseconds at 100,000 sources), and a watcher's pass
 * reads a few.
 */
const PLAN_GARBAGE_FROM = 10_000;

/** True for a JSON object: a last line written whole (a torn one does not parse). */
function isWholeObject(bytes: Uint8Array): boolean {
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes));
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** An error of one source (unreadable, gone, undecodable): reported for it, the pass goes on. */
function isSourceError(err: unknown): boolean {
  return err instanceof Deno.errors.NotFound || err instanceof Deno.errors.PermissionDenied ||
    err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.IsADirectory ||
    err instanceof Deno.errors.InvalidData || err instanceof Deno.errors.UnexpectedEof ||
    err instanceof SourceError;
}
