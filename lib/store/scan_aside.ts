// A batched migration's scan of its target, run by a worker on a connection of its own
// (`_scan_worker.ts`) while the migration reads its batches again: each half of the verification
// takes a core. The migration keeps what the worker last said in its state, so a run stopped or
// killed goes on from there; where no worker can run (a runtime or a binary without workers), or
// it fails, the migration scans on its own thread from that point.

import type { HistoryStore } from "./db.ts";
import type { ScanReply, ScanRequest } from "./_scan_worker.ts";

/** Where a scan is: the term it goes on after (null once done) and its digests so far (hex). */
export interface ScanProgress {
  cursor: string | null;
  actual: string;
}

/** A scan running in a worker: what it has said so far, and a way to wait for more. */
export class ScanAside {
  readonly #worker: Worker;
  #latest: ScanProgress | null = null;
  #ended = false;
  #wake: (() => void) | null = null;

  private constructor(worker: Worker, request: ScanRequest) {
    this.#worker = worker;
    worker.onmessage = ({ data }: MessageEvent<ScanReply>) => {
      if (data.type === "step") this.#latest = { cursor: data.cursor, actual: data.actual };
      if (data.type === "failed" || data.cursor === null) this.#ended = true;
      this.#woken();
    };
    worker.onerror = (event) => {
      event.preventDefault();
      this.#ended = true;
      this.#woken();
    };
    worker.postMessage(request);
  }

  /** Starts the scan of `store`'s migration target, or null where no worker starts. */
  static start(store: HistoryStore, request: Omit<ScanRequest, "path">): ScanAside | null {
    try {
      const url = new URL("./_scan_worker.ts", import.meta.url).href;
      return new ScanAside(new Worker(url, { type: "module" }), { ...request, path: store.path });
    } catch {
      return null;
    }
  }

  /** What the scan had reached when it last said (null before its first step). */
  get latest(): ScanProgress | null {
    return this.#latest;
  }

  /** True once it is done, failed or stopped: it says nothing more. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Resolves when it next says something, or at once once it has ended. */
  next(): Promise<void> {
    if (this.#ended) return Promise.resolve();
    return new Promise((resolve) => this.#wake = resolve);
  }

  /** Ends the worker (what it said is kept). */
  stop(): void {
    this.#worker.terminate();
    this.#ended = true;
    this.#woken();
  }

  #woken(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
}
