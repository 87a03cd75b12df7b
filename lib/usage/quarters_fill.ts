// Sums the calls a store held before migration 0015 into `usage_quarters`,
// `usage_conversation_quarters` and `usage_hours`, in batches: each batch one transaction that
// adds its calls and moves `usage_quarters_fill.after` past them, so a capture stopped midway goes
// on from there.
// Calls written meanwhile are kept by the tables' triggers once the fill has passed their ids;
// when the last batch is done the row goes, and reports read the sums.

import { yieldToEventLoop } from "../event_loop.ts";
import type { HistoryStore } from "../store/db.ts";
import { HOUR, QUARTER, stepOf, tierOf } from "../store/schema.ts";

/** Calls a batch sums. */
const CALLS_PER_BATCH = 2_048;

/** The three tables of sums and the keys each adds to the quarter, agent, model and tier. */
const TABLES = [
  { table: "usage_quarters", keys: [] as string[], step: QUARTER },
  { table: "usage_conversation_quarters", keys: ["conversation_id"], step: QUARTER },
  { table: "usage_hours", keys: [] as string[], step: HOUR },
];

/** True while calls captured before the sums existed are still to be summed. */
export function quartersFillPending(store: HistoryStore): boolean {
  return store.stmt("SELECT 1 FROM usage_quarters_fill").get() !== undefined;
}

/**
 * Sums what is left to sum, batch by batch, until done or `signal` is aborted (the cursor says
 * where to go on). Returns the calls summed.
 */
export async function fillUsageQuarters(
  store: HistoryStore,
  signal?: AbortSignal,
  batch = CALLS_PER_BATCH,
): Promise<number> {
  let summed = 0;
  while (!signal?.aborted) {
    const done = store.transaction(() => fillBatch(store, batch));
    if (done === null) break;
    summed += done;
    await yieldToEventLoop();
  }
  return summed;
}

/** Sums one batch; returns its calls, or null once nothing is left. */
function fillBatch(store: HistoryStore, batch: number): number | null {
  const cursor = store.stmt("SELECT after FROM usage_quarters_fill").get() as
    | { after: number }
    | undefined;
  if (!cursor) return null;
  const ids = store.stmt(
    "SELECT record_id AS id FROM usage WHERE record_id > ? ORDER BY record_id LIMIT ?",
  ).all(cursor.after, batch) as { id: number }[];
  const last = ids.at(-1)?.id;
  if (last === undefined) {
    store.stmt("DELETE FROM usage_quarters_fill").run();
    return null;
  }
  for (const sums of TABLES) addCalls(store, sums, cursor.after, last);
  store.stmt("UPDATE usage_quarters_fill SET after = ?").run(last);
  return ids.length;
}

/** Adds the calls with ids in (`after`, `last`] to `table`, group by group. */
function addCalls(
  store: HistoryStore,
  { table, keys, step }: (typeof TABLES)[number],
  after: number,
  last: number,
): void {
  const columns = [...keys, "agent", "model"];
  const groups = store.stmt(
    `SELECT ${stepOf("u", step.ms)} AS ${step.column}, ${
      columns.map((k) => `u.${k} AS ${k}`).join(", ")
    },
       ${tierOf("u")} AS tier, count(*) AS calls, sum(u.input) AS input,
       sum(u.output) AS output, sum(u.cache_write) AS cache_write,
       sum(u.cache_read) AS cache_read, total(u.cost) AS cost, min(u.ts) AS first_ts,
       max(u.ts) AS last_ts
     FROM usage u WHERE u.record_id > ? AND u.record_id <= ? AND u.ts IS NOT NULL
     GROUP BY 1, ${columns.map((_, i) => i + 2).join(", ")}, ${columns.length + 2}`,
  ).all(after, last) as Record<string, number | string | null>[];
  const group = [`${step.column} = ?`, ...columns.map((k) => `${k} IS ?`), "tier = ?"].join(
    " AND ",
  );
  const keyColumns = [step.column, ...columns, "tier"];
  const create = store.stmt(
    `INSERT INTO ${table} (${keyColumns.join(", ")}, calls, input, output, cache_write,
       cache_read, cost, first_ts, last_ts)
     SELECT ${keyColumns.map(() => "?").join(", ")}, 0, 0, 0, 0, 0, 0, ?, ?
     WHERE NOT EXISTS (SELECT 1 FROM ${table} WHERE ${group})`,
  );
  const add = store.stmt(
    `UPDATE ${table} SET calls = calls + ?, input = input + ?, output = output + ?,
       cache_write = cache_write + ?, cache_read = cache_read + ?, cost = cost + ?,
       first_ts = min(first_ts, ?), last_ts = max(last_ts, ?)
     WHERE ${group}`,
  );
  for (const g of groups) {
    const key = keyColumns.map((k) => g[k] ?? null);
    create.run(...key, g.first_ts!, g.last_ts!, ...key);
    add.run(
      g.calls!,
      g.input!,
      g.output!,
      g.cache_write!,
      g.cache_read!,
      g.cost!,
      g.first_ts!,
      g.last_ts!,
      ...key,
    );
  }
}
