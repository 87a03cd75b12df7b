// How long one search may run. The deadline is checked as rows arrive: inside SQLite by a
// function the statements call (throwing there aborts the statement where it is) and in JS
// between the steps that follow, so a search answers or stops soon after its budget is spent.

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
 * command's start-up or a request's wait counts too), on the clock `now`.
 */
export class SearchBudget {
  readonly ms: number;
  readonly #deadline: number;
  readonly #now: () => number;
  /** Set while the literal scan runs, whose message differs. */
  literal = false;

  constructor(ms: number, startedAt?: number, now: () => number = Date.now) {
    this.ms = ms;
    this.#now = now;
    this.#deadline = (startedAt ?? now()) + ms;
  }

  /** True once the budget is spent. */
  spent(): boolean {
    return this.#now() >= this.#deadline;
  }

  /** Throws SearchStoppedError once the budget is spent. */
  check(): void {
    if (this.spent()) throw this.stopped();
  }

  /** The error of a search stopped by this budget. */
  stopped(): SearchStoppedError {
    const after = `after ${this.ms} ms`;
    return new SearchStoppedError(
      this.literal
        ? `The literal substring scan was stopped ${after} (the index cannot answer this ` +
          "query, so every record is read): check its quotes and parentheses, or add filters"
        : `The search was stopped ${after}: it matches too much to rank in time; use more ` +
          "specific words or longer prefixes, or add filters",
    );
  }
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
