// A capture started from the dashboard runs in the server process, in the background: one at a
// time, under the same capture lock as `reindex`, and its state is kept for the status page.

import { type CaptureRunResult, runCapture, whyNotCaptured } from "../lib/capture/run.ts";
import type { Context } from "../lib/context.ts";
import type { Redactor } from "../lib/gate/secrets.ts";
import type { Adapter } from "../lib/sources/adapter.ts";
import type { HistoryStore } from "../lib/store/db.ts";
import type { CaptureSummary } from "../lib/capture/summary.ts";

/** What a dashboard capture run is doing or did. */
export interface RunView {
  id: string;
  state: "running" | "done" | "failed";
  /** Whether it was a rebuild (`reindex --rebuild`). */
  rebuild: boolean;
  startedAt: string;
  finishedAt: string | null;
  /** How it ended: `captured`, `busy` (another process captures), `off` or `latched`. */
  outcome: CaptureRunResult["status"] | null;
  summary: CaptureSummary | null;
  /** Why it did not capture (`off`, `busy`, `latched`) or why it failed, through the gate. */
  message: string | null;
}

/** How a run is started. */
export interface StartOptions {
  rebuild?: boolean;
  retry?: boolean;
}

/** What background captures need: where to capture, how to open the store, the gate and the clock. */
export interface BackgroundCaptureOptions {
  ctx: Context;
  openStore: () => HistoryStore;
  redact: Redactor;
  now: () => number;
  adapters: readonly Adapter[];
}

/** Starts captures in the background, one at a time, and remembers the last one. */
export class BackgroundCapture {
  #options: BackgroundCaptureOptions;
  #current: RunView | null = null;
  #running: Promise<void> | null = null;
  #abort = new AbortController();

  constructor(options: BackgroundCaptureOptions) {
    this.#options = options;
  }

  /** The running or last finished run of this process, or null when none was started. */
  get current(): RunView | null {
    return this.#current ? structuredClone(this.#current) : null;
  }

  /** True while a run started here is going. */
  get running(): boolean {
    return this.#running !== null;
  }

  /**
   * Starts a run unless one is going already; returns the run and whether this call started it.
   * The run itself takes the capture lock, so a `reindex` elsewhere makes it end as `busy`.
   */
  start(options: StartOptions = {}): { run: RunView; started: boolean } {
    if (this.#current && this.#running) return { run: this.current!, started: false };
    const { now, redact } = this.#options;
    const run: RunView = {
      id: crypto.randomUUID(),
      state: "running",
      rebuild: options.rebuild === true,
      startedAt: new Date(now()).toISOString(),
      finishedAt: null,
      outcome: null,
      summary: null,
      message: null,
    };
    this.#current = run;
    const finish = (state: RunView["state"]) => {
      run.state = state;
      run.finishedAt = new Date(now()).toISOString();
    };
    this.#running = this.#run(options)
      .then((result) => {
        run.outcome = result.status;
        if (result.status === "captured") run.summary = result.summary;
        else run.message = redact(describeOutcome(result));
        finish(result.status === "latched" ? "failed" : "done");
      }, (err) => {
        run.message = redact(err instanceof Error ? err.message : String(err));
        finish("failed");
      })
      .finally(() => {
        this.#running = null;
      });
    return { run: this.current!, started: true };
  }

  /** Resolves once no run is going (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** Asks a running capture to stop at its next batch boundary, and waits for it. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.idle();
    this.#abort = new AbortController();
  }

  async #run(options: StartOptions): Promise<CaptureRunResult> {
    const { ctx, openStore, redact, adapters } = this.#options;
    // Yield first, so the request that started the run is answered before any work begins.
    await new Promise((resolve) => setTimeout(resolve, 0));
    // The run is not one stage: a first capture may rightly take minutes, and its batches are
    // the steps that can stall (the request that starts it is staged as `dashboard.reindex`).
    const store = openStore();
    try {
      return await runCapture({
        ctx,
        store,
        redact,
        adapters,
        signal: this.#abort.signal,
        rebuild: options.rebuild === true,
        retry: options.retry === true,
        command: "dashboard",
      });
    } finally {
      store.close();
    }
  }
}

function describeOutcome(result: Exclude<CaptureRunResult, { status: "captured" }>): string {
  const why = whyNotCaptured(result);
  switch (result.status) {
    case "busy":
      return `${why}; nothing to do`;
    case "off":
      return `${why}; nothing was captured`;
    case "latched":
      return `${why}; start it again with "retry"`;
  }
}
