// How long one search may run. The deadline is checked as rows arrive: inside SQLite by a
// function the statements call (throwing there aborts the statement where it is) and in JS
// between the steps that follow, so a search answers or stops soon after its budget is spent.
// A search works in phases within its one budget (ranking, then what it falls back to when the
// ranking ran out of time, then reading its hits), each ending where `endBefore` says.

import type { DatabaseSync } from "node:sqlite";
import type { Env } from "../env.ts";
import type { HistoryStore } from "./db.ts";

/** How long a search may run when nothing else is said (`LOGBOOK_SEARCH_BUDGET_MS`). */
export const DEFAULT_BUDGET_MS = 1200;

/** A search stopped because its time budget was spent; the message says how to narrow it. */
export class SearchStoppedError extends Error {
  override name = "SearchStoppedError";
}

/**
 * The budget of one search: `ms` from `startedAt` (epoch ms: when the user asked, so a
 * command's start-up or a request's wait counts too), on the clock `now`. A search that begins
 * late (a busy machine, a slow start) still has `ownMs(ms)` of its own, so a wait it did not
 * cause never stops it before it has tried; a stop then says where the time went.
 */
export class SearchBudget {
  readonly ms: number;
  /** How long passed between `startedAt` and the search's start. */
  readonly waitedMs: number;
  readonly #deadline: number;
  /** Where the current phase ends: the deadline, or earlier (see `endBefore`). */
  #end: number;
  readonly #now: () => number;
  /** The current phase's first look at the clock and its first check (ms), for `setupMs`. */
  #firstRead: number | null = null;
  #firstCheck: number | null = null;
  #setupMs: number | null = null;
  /** Set while the literal scan runs, whose message differs. */
  literal = false;

  constructor(ms: number, startedAt?: number, now: () => number = Date.now) {
    this.ms = ms;
    this.#now = now;
    const begun = now();
    const asked = Math.min(startedAt ?? begun, begun);
    this.waitedMs = begun - asked;
    this.#deadline = Math.max(asked + ms, begun + ownMs(ms));
    this.#end = this.#deadline;
  }

  /** Ends the current phase `ms` before the deadline (0: at the deadline), keeping the rest. */
  endBefore(ms: number): void {
    this.#end = this.#deadline - ms;
    this.#setupMs = this.#firstCheck === null ? null : this.#firstCheck - this.#firstRead!;
    this.#firstRead = this.#firstCheck = null;
  }

  /**
   * How long the phase before this one ran before its first check: for a statement, the work
   * SQLite did before its first row reached the check (FTS5 gathering every word a prefix
   * matches, in code nothing interrupts). Null when it made no check.
   */
  get setupMs(): number | null {
    return this.#setupMs;
  }

  /** True when work taking `ms`, begun now, would end more than `overMs` past the deadline. */
  wouldEndPast(ms: number, overMs: number): boolean {
    return this.#read() + ms > this.#deadline + overMs;
  }

  /** True once the current phase's time is spent. */
  spent(): boolean {
    return this.#read() >= this.#end;
  }

  #read(): number {
    const now = this.#now();
    this.#firstRead ??= now;
    return now;
  }

  /** Whole milliseconds left in the current phase (0 once spent), for a limit set elsewhere. */
  remainingMs(): number {
    return Math.max(0, Math.ceil(this.#end - this.#now()));
  }

  /** Throws SearchStoppedError once the current phase's time is spent. */
  check(): void {
    const now = this.#read();
    this.#firstCheck ??= now;
    if (now >= this.#end) throw this.stopped();
  }

  /** The error of a search stopped by this budget. */
  stopped(): SearchStoppedError {
    const after = `after ${this.ms} ms`;
    return new SearchStoppedError(
      this.#lateStart()
        ? `The search was stopped: ${Math.round(this.waitedMs)} ms of its ${this.ms} ms passed ` +
          "before it began (the machine is busy), and its own share was spent too; try again, " +
          "or raise LOGBOOK_SEARCH_BUDGET_MS"
        : this.literal
        ? `The literal substring scan was stopped ${after} (the index cannot answer this ` +
          "query, so every record is read): check its quotes and parentheses, or add filters"
        : `The search was stopped ${after}: it matches too much to rank in time; use more ` +
          "specific words or longer prefixes, or add filters",
    );
  }

  /**
   * What a search this budget stopped says about the `found` hits it returns: the first of the
   * ranking (`ranked`: the ranking was done, reading the hits was not), the most recently
   * captured matches (`recent`: the ranking was not done), or the newest matches of the records
   * a literal scan read (`scanned`). With none found, the message of `stopped()`.
   */
  note(found: number, order: "ranked" | "recent" | "scanned", noun = "hit"): string {
    if (found === 0) return this.stopped().message;
    const after = `after ${this.ms} ms`;
    const these = found === 1 ? `this ${noun} is` : `these ${found} ${noun}s are`;
    // A conversation's hit count is then of the matches found in time.
    const counted = noun === "hit" ? "" : ` (their hits counted among those)`;
    if (order === "scanned") {
      return `The literal substring scan was stopped ${after} (the index cannot answer this ` +
        `query, so every record is read): ${these} from the newest matches among the records ` +
        `it read${counted}; check its quotes and parentheses, or add filters, for all of them`;
    }
    if (order === "ranked") {
      return `The search was stopped ${after} while it read its hits: ${these} the best ` +
        "ranked, in order, and the rest were not read in time; ask for fewer or narrow the search";
    }
    const why = this.#lateStart()
      ? `${Math.round(this.waitedMs)} ms of it passed before it began (the machine is busy)`
      : "it matches too much to rank in time";
    return `The search was stopped ${after}: ${why}, so ${these} ` +
      `from the most recently captured matches, newest first, not ranked${counted}; use more ` +
      "specific words or longer prefixes, or add filters, for ranked hits";
  }

  /** True when most of the budget passed before the search began: then that is why it stopped. */
  #lateStart(): boolean {
    return this.ms > 0 && this.waitedMs >= this.ms / 2;
  }
}

/**
 * The time a search has of its own, however late it begins: half its budget, at most 500 ms
 * (a search that is not stopped takes a few milliseconds; one that matches too much is stopped
 * within about its budget either way).
 */
export function ownMs(ms: number): number {
  return Math.min(ms / 2, 500);
}

/**
 * How much of a budget of `ms` the ranking leaves for its fallback (the most recently captured
 * matches, when the ranking runs out of time) and for reading the hits: a fifth, at most 200 ms.
 */
export function fallbackReserveMs(ms: number): number {
  return Math.min(ms / 5, 200);
}

/** The search budget from `LOGBOOK_SEARCH_BUDGET_MS` (whole milliseconds), else the default. */
export function budgetMsFrom(env: Env): number {
  const value = env.get("LOGBOOK_SEARCH_BUDGET_MS") ?? "";
  return /^\d{1,9}$/.test(value) ? Number(value) : DEFAULT_BUDGET_MS;
}

const BUDGET_FUNCTION = "logbook_search_budget";
const active = new WeakMap<DatabaseSync, { budget: SearchBudget | null }>();

/**
 * Makes `budget` the one the statements of `store` check (see `budgetCheck`) until the
 * returned function is called.
 */
export function useBudget(store: HistoryStore, budget: SearchBudget): () => void {
  let slot = active.get(store.db);
  if (!slot) {
    const created: { budget: SearchBudget | null } = { budget: null };
    store.db.function(BUDGET_FUNCTION, { deterministic: false }, () => {
      created.budget?.check();
      return 1;
    });
    active.set(store.db, created);
    slot = created;
  }
  slot.budget = budget;
  return () => {
    slot.budget = null;
  };
}

/**
 * A WHERE term that checks the budget every 64th row id: calling into JS for every row would
 * add about a quarter to a common word's search, and 64 rows are far below a millisecond.
 */
export function budgetCheck(rowid: string): string {
  return `((${rowid} & 63) != 0 OR ${BUDGET_FUNCTION}())`;
}
