// A pass's progress: reported to the caller after every batch, and stored in the store's meta
// (at most every 250 ms, with a batch) so that another process's `status` can show it.

import { type HistoryStore, translateError } from "../store/db.ts";

/** Progress of a capture, reported after every batch. */
export interface Progress {
  /** `rederiving`: sources derived again because what derives them changed (`rederive.ts`). */
  phase: "rebuilding" | "migrating" | "rederiving" | "discovering" | "capturing" | "done";
  sourcesTotal: number;
  sourcesDone: number;
  bytesTotal: number;
  bytesDone: number;
  startedAt: number;
  pid: number;
}

/** Keeps a pass's progress, tells the caller, and says when it is due to be stored again. */
export class ProgressTracker {
  /** The progress as it stands (the loop moves its counts). */
  readonly current: Progress;
  /** Source bytes read into batches so far (handed over or streamed). */
  bytesRead = 0;
  readonly #store: HistoryStore;
  readonly #now: () => number;
  readonly #onProgress: ((progress: Progress) => void) | undefined;
  #lastWrite = 0;

  constructor(
    store: HistoryStore,
    now: () => number,
    onProgress: ((progress: Progress) => void) | undefined,
  ) {
    this.#store = store;
    this.#now = now;
    this.#onProgress = onProgress;
    this.current = {
      phase: "discovering",
      sourcesTotal: 0,
      sourcesDone: 0,
      bytesTotal: 0,
      bytesDone: 0,
      startedAt: now(),
      pid: Deno.pid,
    };
  }

  /** Tells the caller; with `store`, also stores the progress now (outside any batch). */
  report(store: boolean): void {
    this.#onProgress?.({ ...this.current });
    if (!store) return;
    try {
      this.#store.setMeta("progress", this.current);
    } catch (err) {
      throw translateError(err);
    }
  }

  /** Tells the caller the progress with `extra` bytes done beyond those committed. */
  reportAhead(extra: number): void {
    this.#onProgress?.(this.ahead(extra));
  }

  /** The progress with `extra` bytes done beyond those committed. */
  ahead(extra: number): Progress {
    return { ...this.current, bytesDone: this.current.bytesDone + extra };
  }

  /** Progress is stored with each batch (cheap: one row), at most every 250 ms. */
  due(): boolean {
    const now = this.#now();
    if (now - this.#lastWrite < 250) return false;
    this.#lastWrite = now;
    return true;
  }
}

/**
 * Stores a phase as the capture's progress, for other processes' `status`. The rebuild runs in
 * one transaction, which they cannot see into: this is committed before it starts.
 */
export function announce(
  store: HistoryStore,
  phase: Progress["phase"],
  now: number,
  onProgress: ((progress: Progress) => void) | undefined,
): void {
  const progress: Progress = {
    phase,
    sourcesTotal: 0,
    sourcesDone: 0,
    bytesTotal: 0,
    bytesDone: 0,
    startedAt: now,
    pid: Deno.pid,
  };
  store.setMeta("progress", progress);
  onProgress?.(progress);
}
