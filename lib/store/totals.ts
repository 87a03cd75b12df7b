// The store's record count and raw bytes as `meta` keeps them up to a record id, so `status`
// needs no scan of the records table (`storeTotals` in status.ts reads only rows added since).

import type { HistoryStore } from "./db.ts";

/** Records and their raw bytes, counted up to a record id. */
export interface Totals {
  /** The highest record id counted. */
  upTo: number;
  records: number;
  raw: number;
}

export const TOTALS_KEY = "totals";

/**
 * Counts rows `first` to `last`, just inserted with `raw` captured bytes, into the kept totals
 * when they follow on from them (nothing uncounted before `first`), in the caller's transaction.
 * Capture does so for each batch: summing a first capture's rows once it ended read every page
 * of the records table again (0.4 s at 200 MB, growing with the capture). Otherwise the totals
 * are left for `refreshTotals` to bring up to date.
 */
export function addToTotals(store: HistoryStore, first: number, last: number, raw: number): void {
  const kept = store.getMeta<Totals>(TOTALS_KEY) ?? { upTo: 0, records: 0, raw: 0 };
  if (kept.upTo !== first - 1 || last < first) return;
  store.setMeta(TOTALS_KEY, {
    upTo: last,
    records: kept.records + last - first + 1,
    raw: kept.raw + raw,
  });
}
