// The text index's scrub after a forget from the dashboard (lib/store/scrub.ts): run in this
// process, a step at a time with the event loop running between steps, under the capture lock as
// `forget --finish` runs it, so requests keep being answered through the minute it takes at ten
// gigabytes. When the lock is held (a capture, a `forget --finish` elsewhere), the work is left
// to it: a capture finishes what a forget left, and `forget --finish` is that work.

import type { Context } from "../lib/context.ts";
import type { HistoryStore } from "../lib/store/db.ts";
import { tryLock } from "../lib/lock.ts";
import { SCRUB_HOLDER, scrubIndexYielding } from "../lib/store/scrub.ts";

export class BackgroundScrub {
  #ctx: Context;
  #openStore: () => HistoryStore;
  #onError: (err: unknown) => void;
  #running: Promise<void> | null = null;
  #abort = new AbortController();

  constructor(ctx: Context, openStore: () => HistoryStore, onError: (err: unknown) => void) {
    this.#ctx = ctx;
    this.#openStore = openStore;
    this.#onError = onError;
  }

  /** Starts the scrub unless one runs in this process already; the request is answered first. */
  start(): void {
    this.#running ??= this.#run().catch(this.#onError).finally(() => {
      this.#running = null;
    });
  }

  /** Resolves once no scrub runs here (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** Stops a running scrub between two steps (the store stays marked for the next one). */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.idle();
    this.#abort = new AbortController();
  }

  async #run(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 0));
    const { paths } = this.#ctx;
    const lock = tryLock(paths.run, paths.root, "capture", `${SCRUB_HOLDER} (dashboard)`);
    if (!("held" in lock)) return;
    try {
      const store = this.#openStore();
      try {
        await scrubIndexYielding(store, { signal: this.#abort.signal, forgets: paths });
      } finally {
        store.close();
      }
    } finally {
      lock.held.release();
    }
  }
}
