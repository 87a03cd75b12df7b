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

/** What a pass has left, from the rate it has been moving at (see `TimeLeft`). */
export interface Estimate {
  /** Bytes a second, smoothed; null until a rate was measured. */
  bytesPerSecond: number | null;
  /** Time left at that rate: null while estimating, 0 once every byte is done. */
  leftMs: number | null;
}

/**
 * The time left of a pass's phase, from the rate its bytes are done at: measured over each span
 * of at least `sampleMs` and smoothed exponentially over about `windowMs`, so a run of small
 * sources or one slow giant line moves the estimate gradually rather than at once. A new phase
 * (or a new total) starts measuring again; until a span has passed it is estimating. Time spent
 * before the first bytes (a rebuild checking and clearing the store) is not counted as work.
 */
export class TimeLeft {
  readonly #sampleMs: number;
  readonly #windowMs: number;
  #key = "";
  #from: { at: number; done: number } | null = null;
  #rate: number | null = null;

  constructor(options: { sampleMs?: number; windowMs?: number } = {}) {
    this.#sampleMs = options.sampleMs ?? 1000;
    this.#windowMs = options.windowMs ?? 10_000;
  }

  /** Takes the progress at `at` (epoch ms) into the rate; returns the estimate. */
  update(p: Progress, at: number): Estimate {
    const key = `${p.phase} ${p.bytesTotal}`;
    if (key !== this.#key) {
      this.#key = key;
      this.#from = null;
      this.#rate = null;
    }
    const left = Math.max(0, p.bytesTotal - p.bytesDone);
    if (this.#from === null) this.#from = { at, done: p.bytesDone };
    const span = at - this.#from.at;
    if (span > 0 && span >= this.#sampleMs) {
      // Bytes a millisecond over the span, blended in by how long the span was.
      const measured = (p.bytesDone - this.#from.done) / span;
      const weight = 1 - Math.exp(-span / this.#windowMs);
      this.#rate = this.#rate === null ? measured : this.#rate + weight * (measured - this.#rate);
      this.#from = { at, done: p.bytesDone };
    }
    const rate = this.#rate;
    return {
      bytesPerSecond: rate === null ? null : rate * 1000,
      leftMs: left === 0 ? 0 : rate !== null && rate > 0 ? Math.round(left / rate) : null,
    };
  }
}
