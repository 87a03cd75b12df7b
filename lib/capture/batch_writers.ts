// The two ways capture hands a batch to SQLite: on its own connection, in turn with reading
// (small captures, rebuilds), or to a worker with a connection of its own, so that writing one
// batch overlaps with reading and parsing the next (large captures, on a second core).

import type { OpenStep, Operation } from "../stage_markers.ts";
import { HistoryStore, MigrationError, StoreFullError, StoreLockedError } from "../store/db.ts";
import { type BatchPayload, type BatchResult, writeBatch } from "./batch_transaction.ts";
import type { FromWorker, ToWorker, WireError } from "./batch_worker.ts";

/** Writes batches, one transaction each, in the order they are given. */
export interface BatchWriter {
  /** Writes `batch`; the promise settles once it is committed (or failed, rolled back). */
  write(batch: BatchPayload): Promise<BatchResult>;
  /** Releases what the writer holds (after the last write has settled). */
  close(): Promise<void>;
}

/** Writes on the capture's own connection, synchronously, as the `capture.batch` step. */
export class InlineBatchWriter implements BatchWriter {
  readonly #store: HistoryStore;
  readonly #op: Operation;

  constructor(store: HistoryStore, op: Operation) {
    this.#store = store;
    this.#op = op;
  }

  /** Writes `batch` now (the returned promise is already settled). */
  writeNow(batch: BatchPayload): BatchResult {
    return this.#op.stageSync(
      "capture.batch",
      () => writeBatch(this.#store, batch, (write) => this.#op.stageSync("index.write", write)),
    );
  }

  write(batch: BatchPayload): Promise<BatchResult> {
    try {
      return Promise.resolve(this.writeNow(batch));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Writes in a worker holding a second connection to the same store. The `capture.batch` step
 * opens when a batch is handed over and `index.write` when the worker reports it is indexing;
 * both close when the worker reports the commit.
 */
export class WorkerBatchWriter implements BatchWriter {
  readonly #worker: Worker;
  readonly #op: Operation;
  #next = 1;
  #pending = new Map<
    number,
    {
      resolve: (result: BatchResult) => void;
      reject: (err: Error) => void;
      batchStep: OpenStep;
      indexStep: OpenStep | null;
    }
  >();
  #closed: (() => void) | null = null;
  #dead: Error | null = null;

  private constructor(worker: Worker, op: Operation) {
    this.#worker = worker;
    this.#op = op;
  }

  /**
   * Starts a worker with its own connection to the store at `path`, or returns null when no
   * worker can be started here (a runtime without workers, a compiled binary without the
   * worker's module, a connection the worker cannot open): the caller writes inline instead.
   */
  static async start(store: HistoryStore, op: Operation): Promise<WorkerBatchWriter | null> {
    let worker: Worker;
    try {
      worker = new Worker(new URL("./batch_worker.ts", import.meta.url).href, { type: "module" });
    } catch {
      return null;
    }
    const timeout = store.db.prepare("PRAGMA busy_timeout").get() as { timeout?: number };
    const ready = await new Promise<boolean>((resolve) => {
      worker.onmessage = (event: MessageEvent<FromWorker>) => resolve(event.data.type === "ready");
      worker.onerror = (event) => {
        event.preventDefault();
        resolve(false);
      };
      const open: ToWorker = {
        type: "open",
        path: store.path,
        busyTimeoutMs: timeout.timeout ?? 5000,
      };
      worker.postMessage(open);
    });
    if (!ready) {
      worker.terminate();
      return null;
    }
    const writer = new WorkerBatchWriter(worker, op);
    worker.onmessage = (event: MessageEvent<FromWorker>) => writer.#receive(event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      writer.#die(new Error(`The batch writer stopped: ${event.message}`));
    };
    return writer;
  }

  write(batch: BatchPayload): Promise<BatchResult> {
    if (this.#dead) return Promise.reject(this.#dead);
    const id = this.#next++;
    return new Promise<BatchResult>((resolve, reject) => {
      const batchStep = this.#op.begin("capture.batch");
      const message: ToWorker = { type: "write", id, batch };
      try {
        // The raw bytes move to the worker instead of being copied.
        this.#worker.postMessage(message, [batch.raw.buffer as ArrayBuffer]);
      } catch (err) {
        batchStep.fail(err);
        reject(err);
        return;
      }
      this.#pending.set(id, { resolve, reject, batchStep, indexStep: null });
    });
  }

  /** Closes the worker's connection and ends the worker (pending writes settle first). */
  async close(): Promise<void> {
    if (this.#dead) {
      this.#worker.terminate();
      return;
    }
    await new Promise<void>((resolve) => {
      this.#closed = resolve;
      this.#worker.postMessage({ type: "close" } satisfies ToWorker);
    });
    this.#worker.terminate();
  }

  #receive(message: FromWorker): void {
    switch (message.type) {
      case "index": {
        const pending = this.#pending.get(message.id);
        if (pending) pending.indexStep = this.#op.begin("index.write");
        return;
      }
      case "done": {
        const pending = this.#pending.get(message.id);
        if (!pending) return;
        this.#pending.delete(message.id);
        pending.indexStep?.finish();
        pending.batchStep.finish();
        pending.resolve(message.result);
        return;
      }
      case "failed": {
        const error = fromWire(message.error);
        if (message.id === null) return this.#die(error);
        const pending = this.#pending.get(message.id);
        if (!pending) return;
        this.#pending.delete(message.id);
        pending.indexStep?.fail(error);
        pending.batchStep.fail(error);
        pending.reject(error);
        return;
      }
      case "closed":
        this.#closed?.();
        return;
      case "ready":
        return;
    }
  }

  /** The worker is gone: every pending write fails with `error`. */
  #die(error: Error): void {
    this.#dead = error;
    for (const pending of this.#pending.values()) {
      pending.indexStep?.fail(error);
      pending.batchStep.fail(error);
      pending.reject(error);
    }
    this.#pending.clear();
    this.#closed?.();
  }
}

/** The error a worker reported, as the class a caller catches. */
function fromWire(wire: WireError): Error {
  const classes: Record<string, new (message: string) => Error> = {
    StoreFullError,
    StoreLockedError,
    MigrationError,
  };
  const Class = classes[wire.name];
  const error = Class ? new Class(wire.message) : new Error(wire.message);
  if (!Class) error.name = wire.name;
  if (wire.code) Object.assign(error, { code: wire.code });
  return error;
}
