// The worker that writes capture batches on a connection of its own, so SQLite's work on one
// batch overlaps with reading and parsing the next on the capture's thread. Started and spoken
// to only by `WorkerBatchWriter` (`batch_writers.ts`).

import { dirname } from "../path.ts";
import { HistoryStore } from "../store/db.ts";
import { type BatchPayload, writeBatch } from "./batch_transaction.ts";

/** Messages the capture sends. */
export type ToWorker =
  | { type: "open"; path: string; busyTimeoutMs: number }
  | { type: "write"; id: number; batch: BatchPayload }
  | { type: "close" };

/** Messages the worker sends back. */
export type FromWorker =
  | { type: "ready" }
  | { type: "index"; id: number }
  | { type: "done"; id: number; result: ReturnType<typeof writeBatch> }
  | { type: "failed"; id: number | null; error: WireError }
  | { type: "closed" };

/** An error as it crosses back: its class name, message and short code. */
export interface WireError {
  name: string;
  message: string;
  code?: string;
}

interface WorkerScope {
  onmessage: ((event: MessageEvent<ToWorker>) => void) | null;
  postMessage(message: FromWorker): void;
  close(): void;
}

/**
 * WAL pages (4 KiB) after which a commit of this connection checkpoints: 256 MiB. The capture's
 * reading thread copies the WAL more often while it waits for this one (`batch_pipeline.ts`);
 * this copies what that left, when it seldom waits.
 */
const CHECKPOINT_PAGES = 65536;
/** What is left of the WAL file when it starts over after a checkpoint: 16 MiB. */
const WAL_KEEP_BYTES = 16 * 1024 * 1024;
/** The page cache of this connection, in KiB. */
const WRITER_CACHE_KIB = 4096;

const scope = globalThis as unknown as WorkerScope;
let store: HistoryStore | null = null;
/**
 * The first failure. Every later batch is refused with it, unwritten: batches are handed over
 * ahead of time, and one committed after a failed one would move a cursor past records that
 * were never written.
 */
let failure: WireError | null = null;

scope.onmessage = (event) => {
  const message = event.data;
  switch (message.type) {
    case "open":
      try {
        // The capture opened (and migrated) this store already; this is a second connection.
        store = HistoryStore.open({
          path: message.path,
          root: dirname(message.path),
          busyTimeoutMs: message.busyTimeoutMs,
        });
        // This connection only writes, batch after batch: checkpointing every 256 MiB of WAL
        // instead of every 4 MiB copies pages that several batches touch once, with fewer syncs.
        store.db.exec(`PRAGMA wal_autocheckpoint = ${CHECKPOINT_PAGES}`);
        // ...and once checkpointed, the WAL file shrinks back instead of staying that large.
        store.db.exec(`PRAGMA journal_size_limit = ${WAL_KEEP_BYTES}`);
        // A writer's cache holds the pages its last batches touched, filling as the store
        // grows: 4 MiB writes as fast as 16 and keeps a capture's peak from growing with it.
        store.db.exec(`PRAGMA cache_size = -${WRITER_CACHE_KIB}`);
        scope.postMessage({ type: "ready" });
      } catch (err) {
        scope.postMessage({ type: "failed", id: null, error: wireError(err) });
      }
      return;
    case "write": {
      const { id, batch } = message;
      if (failure) {
        scope.postMessage({ type: "failed", id, error: failure });
        return;
      }
      try {
        if (!store) throw new Error("The batch writer has no open store");
        const result = writeBatch(store, batch, (write) => {
          scope.postMessage({ type: "index", id });
          write();
        });
        scope.postMessage({ type: "done", id, result });
      } catch (err) {
        failure = wireError(err);
        scope.postMessage({ type: "failed", id, error: failure });
      }
      return;
    }
    case "close":
      try {
        store?.close();
      } finally {
        store = null;
        scope.postMessage({ type: "closed" });
        scope.close();
      }
  }
};

function wireError(err: unknown): WireError {
  if (!(err instanceof Error)) return { name: "Error", message: String(err) };
  const code = (err as { code?: unknown }).code;
  return {
    name: err.name,
    message: err.message,
    ...(typeof code === "string" ? { code } : {}),
  };
}
