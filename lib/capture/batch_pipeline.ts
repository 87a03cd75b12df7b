// Batches on their way to SQLite: each is planned, handed to the writer (on this connection, or
// to a worker once a pass proves large), kept in flight until committed (two at most), and then
// taken into the pass's tally. Rebuild writes here too: inline, inside its own transaction.

import type { Operation } from "../stage_markers.ts";
import type { HistoryStore } from "../store/db.ts";
import { concat } from "./_bytes.ts";
import { GarbageRelease } from "../garbage.ts";
import { yieldToEventLoop } from "../event_loop.ts";
import { type Batch, type BatchPlanner, type Job, keyOf } from "./batch_plan.ts";
import { type BatchResult, lineRows } from "./batch_transaction.ts";
import { emptySourceAt } from "../store/status.ts";
import { type BatchWriter, InlineBatchWriter, WorkerBatchWriter } from "./batch_writers.ts";
import type { Tombstones } from "./derive.ts";
import type { Limits } from "./limits.ts";
import type { ProgressTracker } from "./progress.ts";
import type { SourceCtx } from "./source.ts";
import type { Tally } from "./summary.ts";

/** Batches a worker may hold at once: one being written, one waiting. */
const MAX_IN_FLIGHT = 2;

/**
 * Batches a worker commits between two checkpoints of this connection, each run while this
 * thread would wait for the worker anyway (`#checkpointWhileWaiting`).
 */
const CHECKPOINT_BATCHES = 16;

/** Starts the writer of a large capture, or gives null to write inline. */
export type StartWriter = (store: HistoryStore, op: Operation) => Promise<BatchWriter | null>;

/** What a pipeline writes with and reports to. */
export interface PipelineParts {
  store: HistoryStore;
  op: Operation;
  limits: Limits;
  now: () => number;
  planner: BatchPlanner;
  tally: Tally;
  progress: ProgressTracker;
  tombstones: Tombstones;
  /** Default: a worker with its own connection (`WorkerBatchWriter.start`). */
  startWriter?: StartWriter | undefined;
}

/** Hands batches to the writer in order and takes each commit into the tally. */
export class BatchPipeline {
  readonly #parts: PipelineParts;
  /** Writes on this connection; also the writer of rebuilds and small captures. */
  readonly #inline: InlineBatchWriter;
  /** Where batches go: `#inline`, or a worker for a large capture (`Limits.workerFrom`). */
  #writer: BatchWriter;
  /** Whether starting a worker was considered (once per pass). */
  #workerConsidered = false;
  /** Batches handed to the writer and not yet committed, oldest first (worker only). */
  #inflight: { job: Job; writing: Promise<BatchResult>; settled: boolean }[] = [];
  /** Batches the worker committed since this connection last checkpointed. */
  #uncopied = 0;
  readonly #garbage = new GarbageRelease();

  constructor(parts: PipelineParts) {
    this.#parts = parts;
    this.#inline = new InlineBatchWriter(parts.store, parts.op);
    this.#writer = this.#inline;
  }

  /**
   * Hands the pending batch to the writer (and empties it). With a worker, it is committed while
   * the next ones are read; up to MAX_IN_FLIGHT batches wait there, which evens out batches that
   * take longer to read than to write and the other way round.
   */
  async flush(batch: Batch, full = true): Promise<void> {
    if (batch.empty) return;
    const { payload, job } = this.#plan(batch);
    batch.reset();
    this.#parts.progress.bytesRead += job.raw;
    if (full && !this.#workerConsidered) await this.#considerWorker();
    if (this.#inflight.length >= MAX_IN_FLIGHT) this.#checkpointWhileWaiting();
    while (this.#inflight.length >= MAX_IN_FLIGHT) await this.#settleOldest();
    const writing = this.#writer.write(payload);
    const entry = { job, writing, settled: false };
    // A batch that fails while an older one is awaited is reported when its turn comes.
    const settled = () => void (entry.settled = true);
    writing.then(settled, settled);
    this.#inflight.push(entry);
    if (this.#writer === this.#inline) await this.settle();
    await yieldToEventLoop();
  }

  /** Flushes the pending batch and waits until everything handed over is committed. */
  async drain(batch: Batch): Promise<void> {
    await this.flush(batch, false);
    await this.settle();
  }

  /** Waits until every batch in flight is committed (this connection may write after). */
  async settle(): Promise<void> {
    while (this.#inflight.length) await this.#settleOldest();
  }

  /** Writes a batch now, on this connection (rebuild: inside its own transaction). */
  commit(batch: Batch): void {
    if (batch.empty) return;
    const { payload, job } = this.#plan(batch);
    batch.reset();
    this.#committed(job, this.#inline.writeNow(payload));
  }

  /** The raw bytes of the newest record stored (or pending) under `key` in `ctx`'s source. */
  lookup(ctx: SourceCtx, batch: Batch, key: string): Uint8Array | null {
    const composite = keyOf(ctx, key);
    let pending = batch.keyed.get(composite);
    for (let i = this.#inflight.length - 1; !pending && i >= 0; i--) {
      pending = this.#inflight[i]!.job.keyed.get(composite);
    }
    if (pending) return pending.raw;
    const { store } = this.#parts;
    const row = store.stmt(
      "SELECT record_id FROM record_keys WHERE source_id = ? AND key = ?",
    )
      .get(ctx.sourceId, key) as { record_id: number } | undefined;
    if (!row) return null;
    const parts = lineRows(store, row.record_id).map((r) => r.raw);
    return concat(parts, parts.reduce((n, p) => n + p.length, 0));
  }

  /** Frees the garbage of what came before the batches (a large pass's plan) at once. */
  collectGarbage(): void {
    this.#garbage.collect();
  }

  /**
   * Ends the pass's writing: the batches in flight end first (committed, or rolled back after
   * a failure), then a worker is closed and this connection writes again.
   */
  async close(): Promise<void> {
    for (const { writing } of this.#inflight) await writing.catch(() => {});
    this.#inflight = [];
    await this.#writer.close();
    this.#writer = this.#inline;
  }

  /** The batch as the writer takes it, with the progress as it will be once it commits. */
  #plan(batch: Batch) {
    const { planner, progress, now } = this.#parts;
    // As it will be once this batch commits (after those in flight before it).
    const due = progress.due()
      ? progress.ahead(batch.raw + this.#inflight.reduce((n, i) => n + i.job.raw, 0))
      : null;
    return planner.plan(batch, due, now());
  }

  /**
   * At the first full batch: when enough is left to read (`Limits.workerFrom`), a worker writes
   * the batches from here on. Decided then rather than at the start, so a capture that is
   * mostly one streamed giant line, a handful of appends, or a database that changed without
   * new rows never starts one.
   */
  async #considerWorker(): Promise<void> {
    this.#workerConsidered = true;
    const { store, op, limits, progress, tally } = this.#parts;
    const left = progress.current.bytesTotal - progress.bytesRead;
    if (left < limits.workerFrom || store.db.isTransaction) return;
    const start = this.#parts.startWriter ?? ((store, op) => WorkerBatchWriter.start(store, op));
    const worker = await start(store, op);
    if (!worker) return;
    this.#writer = worker;
    tally.summary.writer = "worker";
  }

  /**
   * Copies the WAL into the store on this connection while this thread would wait for the worker
   * anyway (its batches in flight are full and the oldest is not committed yet), once it committed
   * `CHECKPOINT_BATCHES` since the last copy. A capture the worker holds up so gives the copying,
   * and its waits on the disk, to the thread with time to spare (10 GB from empty, with a first
   * version that checkpointed every 16th batch, waiting or not: 592 and 542 s against 631 and
   * 592, alternating); one that reads slower than the worker writes seldom waits, and the worker's
   * own checkpoint (`batch_worker.ts`) copies the log. PASSIVE: it waits for no one, and copies
   * what the worker has committed.
   */
  #checkpointWhileWaiting(): void {
    const { store } = this.#parts;
    if (this.#writer === this.#inline || this.#uncopied < CHECKPOINT_BATCHES) return;
    if (this.#inflight[0]?.settled !== false || store.db.isTransaction) return;
    this.#uncopied = 0;
    store.db.exec("PRAGMA wal_checkpoint(PASSIVE)");
  }

  /** Waits for the oldest batch in flight; once committed, takes its result into the tally. */
  async #settleOldest(): Promise<void> {
    const oldest = this.#inflight.shift();
    if (!oldest) return;
    this.#committed(oldest.job, await oldest.writing);
    this.#uncopied++;
  }

  /** Takes a committed batch into the tally, then looks at the sources it finished. */
  #committed(job: Job, result: BatchResult): void {
    const { tally, progress, tombstones } = this.#parts;
    const dropped = new Set(result.tombstoned);
    for (const key of dropped) tombstones.add(key);
    for (const r of job.drift) {
      const key = r.derived.conversation?.key;
      if (key === undefined || !dropped.has(key)) tally.drift(r.ctx.ref.agent, r.derived);
    }
    tally.summary.records += result.inserted;
    tally.summary.conversations += result.newConversations;
    tally.summary.bytes += job.raw;
    progress.current.bytesDone += job.raw;
    for (const ctx of job.finished) this.#checkEmpty(ctx);
    progress.report(false);
    this.#garbage.committed(job.raw);
  }

  /** After a capture: a non-empty source with no recognised record is a warning. */
  #checkEmpty(ctx: SourceCtx): void {
    if (ctx.recognised) return;
    if (emptySourceAt(this.#parts.store, ctx.sourceId) !== null) {
      this.#parts.tally.summary.empty.push(ctx.ref.locator);
    }
  }
}
