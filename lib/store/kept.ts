// Figures a capture run keeps in `meta` with its result (the share captured, the status counts,
// the project directories), so that what reads them need not scan the store or the disk again.
// A run that changed nothing only moves their time; a run that kept nothing (a watcher's, between
// its discoveries) leaves them stale, and a reader then computes them itself.

import type { HistoryStore } from "./db.ts";

/** When a run kept a figure. */
export interface KeptAt {
  at: number;
}

/**
 * Keeps `compute()` under `key` with a run's result (at `now`), or only moves its time when the
 * run changed nothing (`unchanged`), it was kept since `since` (the run before) and `still` holds.
 */
export function keepWithRun<T extends object>(
  store: HistoryStore,
  key: string,
  now: number,
  options: { unchanged: boolean; since: number },
  compute: () => T,
  still: (kept: T & KeptAt) => boolean = () => true,
): void {
  const kept = store.getMeta<T & KeptAt>(key);
  if (options.unchanged && kept && kept.at >= options.since && still(kept)) {
    store.setMeta(key, { ...kept, at: now });
  } else store.setMeta(key, { ...compute(), at: now });
}

/** What a run kept under `key`, unless a run since kept nothing (then null: compute it). */
export function keptSinceLastRun<T extends object>(
  store: HistoryStore,
  key: string,
): (T & KeptAt) | null {
  const kept = store.getMeta<T & KeptAt>(key);
  const since = store.getMeta<KeptAt>("last_run")?.at ?? 0;
  return kept && kept.at >= since ? kept : null;
}
