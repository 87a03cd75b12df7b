// The failure latch: a failed migration or rebuild stops capture until `reindex --retry` clears
// it, so a failure never loops on its own. One meta key, read and written only here.

import type { HistoryStore } from "./db.ts";

/** The meta key of the latch. */
export const LATCH_KEY = "latched_failure";

/** A failure kept until the user retries (a failed migration or rebuild). */
export interface LatchedFailure {
  at: number;
  message: string;
}

/** The latched failure, or null when capture may run. */
export function latchedFailure(store: HistoryStore): LatchedFailure | null {
  return store.getMeta<LatchedFailure>(LATCH_KEY) ?? null;
}

/** Latches `failure`: capture stops until `clearLatch`. */
export function latch(store: HistoryStore, failure: LatchedFailure): void {
  store.setMeta(LATCH_KEY, failure);
}

/** Clears a latched failure, so capture runs again (`reindex --retry`). */
export function clearLatch(store: HistoryStore): void {
  store.deleteMeta(LATCH_KEY);
}
