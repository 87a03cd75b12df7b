// Searches for a long-running process (the dashboard) on worker threads, each job on its own
// connection, so the event loop keeps answering while one runs. A search that outlives its
// budget is answered as stopped at once and its worker replaced: `terminate()` cannot stop a
// thread inside SQLite, but the caller no longer waits for it, and the bounds keep it short.

import type { TextReader } from "../sources/adapter.ts";
import { DEFAULT_BUDGET_MS, SearchBudget, SearchStoppedError } from "./_search_budget.ts";
import { SearchLimitError } from "./_search_bounds.ts";
import { type JobResult, runSearchJob, type SearchJob, type WireError } from "./_search_job.ts";
import type { SearchReply } from "./_search_worker.ts";
import { withWordForms } from "./forgive.ts";
import { StoreDamagedError, StoreFullError, StoreLockedError } from "./db.ts";
import type { GroupResult, SearchResult } from "./search.ts";

export type { SearchJob } from "./_search_job.ts";

/** How the workers are started and how long a search is waited for. */
export interface SearchWorkersOptions {
  /** Searches that run at once; more wait their turn (default 2). */
  size?: number;
  /** Starts a worker (default: `_search_worker.ts`); a test wraps the real one. */
  start?: () => Worker;
  /** How long past its budget a search that has not answered is given up (default 300 ms). */
  graceMs?: number;
  /**
   * Adapters other than the built-in ones: workers only know those, so jobs then run inline
   * (on the caller's thread, still bounded by their budget).
   */
  adapters?: readonly TextReader[];
}

interface Pending {
  job: SearchJob;
  resolve: (result: JobResult) => void;
  reject: (err: Error) => void;
  /** When the budget counts from: the job's start, later by any wait for a worker to load. */
  startedAt: number;
  queuedAt: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  worker: Worker | null;
  settled: boolean;
}

/** A worker that has not loaded after this long is taken for one that cannot run here. */
const LOAD_MS = 20_000;

/** A small pool of search workers, started when first needed; see the file comment. */
export class SearchWorkers {
  readonly #size: number;
  readonly #start: () => Worker;
  readonly #graceMs: number;
  readonly #adapters: readonly TextReader[] | null;
  /** Workers loading their modules, with when they were started. */
  #starting = new Map<Worker, number>();
  #loadTimers = new Map<Worker, ReturnType<typeof setTimeout>>();
  #idle: Worker[] = [];
  #busy = new Map<Worker, Pending>();
  #queue: Pending[] = [];
  #inline = false;

  constructor(options: SearchWorkersOptions = {}) {
    this.#size = Math.max(1, options.size ?? 2);
    this.#start = options.start ??
      (() => new Worker(new URL("./_search_worker.ts", import.meta.url).href, { type: "module" }));
    this.#graceMs = options.graceMs ?? 300;
    this.#adapters = options.adapters ?? null;
  }

  /**
   * Runs `job` on a worker; settles with its result, its error (SearchLimitError,
   * SearchStoppedError, the store's errors), or SearchStoppedError once its budget and the
   * grace are spent, whether or not the worker has answered. The budget counts from the job's
   * `startedAt`, except the time spent waiting for a worker to load its modules.
   */
  run(job: SearchJob & { perGroup: number }): Promise<GroupResult>;
  run(job: Omit<SearchJob, "perGroup">): Promise<SearchResult>;
  run(job: SearchJob): Promise<JobResult> {
    if (this.#inline || this.#adapters) return this.#runInline(job);
    return new Promise<JobResult>((resolve, reject) => {
      const now = Date.now();
      const pending: Pending = {
        job,
        resolve,
        reject,
        startedAt: job.options.startedAt ?? now,
        queuedAt: now,
        timer: undefined,
        worker: null,
        settled: false,
      };
      this.#queue.push(pending);
      this.#pump();
      this.#arm(pending);
    });
  }

  /** Starts the workers now, so that the first searches do not wait for them to load. */
  warm(): void {
    if (this.#inline || this.#adapters) return;
    while (this.#spawn());
  }

  /** Ends every worker; pending searches fail. Later searches start workers again. */
  close(): void {
    const error = new Error("The search workers were closed");
    for (const pending of [...this.#queue, ...this.#busy.values()]) this.#settle(pending, error);
    for (const worker of [...this.#starting.keys(), ...this.#idle, ...this.#busy.keys()]) {
      worker.terminate();
    }
    for (const timer of this.#loadTimers.values()) clearTimeout(timer);
    this.#loadTimers.clear();
    this.#queue = [];
    this.#starting.clear();
    this.#idle = [];
    this.#busy.clear();
  }

  #runInline(job: SearchJob): Promise<JobResult> {
    return withWordForms(() => runSearchJob(job, ...(this.#adapters ? [this.#adapters] : [])));
  }

  /** Hands queued jobs to idle workers, and starts a worker when jobs wait and there is room. */
  #pump(): void {
    while (this.#queue.length && this.#idle.length) {
      const worker = this.#idle.pop()!;
      const pending = this.#queue.shift()!;
      pending.worker = worker;
      this.#busy.set(worker, pending);
      const job = {
        ...pending.job,
        options: { ...pending.job.options, startedAt: pending.startedAt },
      };
      worker.postMessage(job);
    }
    if (this.#queue.length > this.#starting.size) this.#spawn();
  }

  /** Starts a worker when the pool has room; false when it has none or workers cannot run. */
  #spawn(): boolean {
    const count = this.#starting.size + this.#idle.length + this.#busy.size;
    if (count >= this.#size || this.#inline) return false;
    let worker: Worker;
    try {
      worker = this.#start();
    } catch {
      this.#fallBackInline();
      return false;
    }
    this.#starting.set(worker, Date.now());
    this.#loadTimers.set(
      worker,
      setTimeout(() => this.#failed(worker, new Error("The search worker did not load")), LOAD_MS),
    );
    worker.onmessage = (event: MessageEvent<SearchReply>) => {
      if (event.data.type === "ready") this.#ready(worker);
      else this.#answered(worker, event.data);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      this.#failed(worker, new Error(`The search worker stopped: ${event.message}`));
    };
    return true;
  }

  /** True while jobs can only wait for a worker to load (none has yet, or all were replaced). */
  #cold(): boolean {
    return !this.#idle.length && !this.#busy.size && this.#starting.size > 0;
  }

  #ready(worker: Worker): void {
    const since = this.#starting.get(worker);
    if (since === undefined) return;
    clearTimeout(this.#loadTimers.get(worker));
    this.#loadTimers.delete(worker);
    const cold = this.#cold();
    this.#starting.delete(worker);
    this.#idle.push(worker);
    if (cold) {
      // No worker could take a job until this one loaded: that wait is not the search's.
      const now = Date.now();
      for (const pending of this.#queue) {
        pending.startedAt += now - Math.max(since, pending.queuedAt);
        this.#arm(pending);
      }
    }
    this.#pump();
  }

  #answered(worker: Worker, reply: Extract<SearchReply, { type: "answer" }>): void {
    const pending = this.#busy.get(worker);
    if (!pending) return;
    this.#busy.delete(worker);
    this.#idle.push(worker);
    this.#settle(pending, reply.ok ? reply.result : fromWire(reply.error));
    this.#pump();
  }

  #failed(worker: Worker, error: Error): void {
    worker.terminate();
    clearTimeout(this.#loadTimers.get(worker));
    this.#loadTimers.delete(worker);
    if (this.#starting.delete(worker)) {
      // It never loaded: workers cannot run here (a compiled binary without the module).
      this.#fallBackInline();
      return;
    }
    const pending = this.#busy.get(worker);
    this.#busy.delete(worker);
    this.#idle = this.#idle.filter((w) => w !== worker);
    if (pending) this.#settle(pending, error);
    this.#pump();
  }

  /**
   * (Re)sets the moment `pending` is given up: its budget and the grace after it. While no
   * worker has loaded yet, the job waits without a clock (see `#ready`).
   */
  #arm(pending: Pending): void {
    clearTimeout(pending.timer);
    if (pending.settled || this.#cold()) return;
    const budgetMs = pending.job.options.budgetMs ?? DEFAULT_BUDGET_MS;
    const wait = pending.startedAt + budgetMs + this.#graceMs - Date.now();
    pending.timer = setTimeout(() => this.#giveUp(pending, budgetMs), Math.max(0, wait));
  }

  /** The budget and the grace are spent: answer now, and replace the worker if it holds it. */
  #giveUp(pending: Pending, budgetMs: number): void {
    const queued = this.#queue.indexOf(pending);
    if (queued >= 0) this.#queue.splice(queued, 1);
    const worker = pending.worker;
    if (worker && this.#busy.get(worker) === pending) {
      this.#busy.delete(worker);
      worker.terminate();
    }
    this.#settle(pending, new SearchBudget(budgetMs).stopped());
    this.#pump();
  }

  #fallBackInline(): void {
    this.#inline = true;
    for (const pending of this.#queue.splice(0)) {
      this.#runInline(pending.job).then(
        (result) => this.#settle(pending, result),
        (err) => this.#settle(pending, err),
      );
    }
  }

  #settle(pending: Pending, outcome: JobResult | Error): void {
    clearTimeout(pending.timer);
    if (pending.settled) return;
    pending.settled = true;
    pending.worker = null;
    if (outcome instanceof Error) pending.reject(outcome);
    else pending.resolve(outcome);
  }
}

let shared: SearchWorkers | null = null;

/** The process's search workers, shared by every dashboard app it builds. */
export function sharedSearchWorkers(): SearchWorkers {
  shared ??= new SearchWorkers();
  return shared;
}

/** The error a worker reported, as the class a caller catches. */
function fromWire(wire: WireError): Error {
  const classes: Record<string, new (message: string) => Error> = {
    SearchLimitError,
    SearchStoppedError,
    StoreLockedError,
    StoreFullError,
    StoreDamagedError,
    RangeError,
    TypeError,
  };
  const Class = classes[wire.name];
  const error = Class ? new Class(wire.message) : new Error(wire.message);
  if (!Class) error.name = wire.name;
  return error;
}
