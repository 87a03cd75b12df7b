// Counting a search's matches: in all and per agent and project (the dashboard's facets), and
// with each filter left out (why a search found nothing, `../no_match.ts`).

import type { SearchFilters } from "../../filters_table.ts";
import type { Agent } from "../../agents.ts";
import { HistoryStore } from "../db.ts";
import { budgetCheck, SearchBudget, useBudget } from "../_search_budget.ts";
import { soundRead } from "./_read.ts";
import {
  budgeted,
  conversationsOf,
  filterSql,
  filterTerms,
  rankedRecords,
  stoppable,
} from "./_sql.ts";

/** What `countsLeavingOut` counted. */
export interface LeftOutCounts {
  /** The matches with each set of filters left out, in the order asked. */
  each: number[];
  /** The matches with every filter left out. */
  all: number;
  /** False when the scan stopped at its limit: every count is then a least. */
  complete: boolean;
}

/**
 * How many records `ftsQuery` (the `ftsQuery` of a search's result) matches under `filters` with
 * each set of `leaveOut` left out in turn, and with every filter left out: one pass over its
 * matches without the filters, newest first, at most `scan` of them, each match tested against
 * each filter. Stopped by `budget`, the counts of the matches read then; null when it ran out
 * before any.
 */
export function countsLeavingOut(
  store: HistoryStore,
  ftsQuery: string,
  filters: SearchFilters,
  leaveOut: readonly (readonly (keyof SearchFilters)[])[],
  scan: number,
  budget: SearchBudget,
): LeftOutCounts | null {
  const terms = filterTerms(filters);
  const always = terms.filter((term) => term.key === null);
  const tested = terms.filter((term) => term.key !== null);
  const columns = tested.map((term, i) => `(${term.sql}) AS f${i}`);
  const sql = `SELECT ${columns.join(", ") || "1"}
    FROM fts JOIN ${rankedRecords(store)} ON r.id = fts.rowid${
    conversationsOf(store, filterSql(filters))
  }
    WHERE fts MATCH ? AND ${budgetCheck("fts.rowid")}${always.map((t) => ` AND ${t.sql}`).join("")}
    ORDER BY fts.rowid DESC LIMIT ?`;
  const params = [
    ...tested.flatMap((term) => term.params),
    ftsQuery,
    ...always.flatMap((term) => term.params),
    scan + 1,
  ];
  // For each set left out, the terms a match must still pass.
  const kept = leaveOut.map((keys) => tested.map((term) => !keys.includes(term.key!)));
  const each = leaveOut.map(() => 0);
  let all = 0;
  const release = useBudget(store, budget);
  try {
    const complete = soundRead(
      store,
      () =>
        stoppable(budget, () =>
          budgeted(store, sql, (statement) => {
            for (const row of statement.iterate(...params) as Iterable<Record<string, unknown>>) {
              if (all === scan) return false;
              all++;
              const passes = tested.map((_, i) => Boolean(row[`f${i}`]));
              kept.forEach((must, j) => {
                if (must.every((needed, i) => !needed || passes[i])) each[j]!++;
              });
            }
            return true;
          })),
    );
    // Stopped by the budget, what was read still counts, as lower bounds.
    if (complete === null) return all ? { each, all, complete: false } : null;
    return { each, all, complete };
  } finally {
    release();
  }
}

/** How many records match, in all and per agent and project (up to `cap`; `capped` past it). */
export interface MatchCounts {
  total: number;
  capped: boolean;
  byAgent: { agent: Agent; count: number }[];
  /** Per project root as shown, through the gate, as a hit shows it. */
  byProject: { project: string | null; count: number }[];
}

/**
 * Counts the records `ftsQuery` (the `ftsQuery` of a search's result) matches under `filters`,
 * stopping at `cap` matches so a common word stays cheap. Chunks of one long line count apiece.
 * Projects are counted by their root through `redact`.
 */
export function countMatches(
  store: HistoryStore,
  ftsQuery: string,
  filters: SearchFilters,
  redact: (text: string) => string,
  cap = 10_000,
): MatchCounts {
  const { where, params } = filterSql(filters);
  const rows = soundRead(store, () =>
    store.stmt(`
    SELECT agent, project, count(*) AS n FROM (
      SELECT c.agent AS agent, c.project_root AS project
      FROM fts
      JOIN ${rankedRecords(store)} ON r.id = fts.rowid${
      conversationsOf(store, { conversations: true })
    }
      WHERE fts MATCH ?${where}
      LIMIT ?
    ) GROUP BY agent, project`).all(ftsQuery, ...params, cap + 1)) as unknown as {
      agent: Agent;
      project: string | null;
      n: number;
    }[];
  const agents = new Map<Agent, number>();
  const projects = new Map<string | null, number>();
  let total = 0;
  for (const row of rows) {
    total += row.n;
    agents.set(row.agent, (agents.get(row.agent) ?? 0) + row.n);
    const project = row.project === null ? null : redact(row.project);
    projects.set(project, (projects.get(project) ?? 0) + row.n);
  }
  const capped = total > cap;
  const sorted = <K>(map: Map<K, number>) => [...map].sort((a, b) => b[1] - a[1]);
  return {
    total: Math.min(total, cap),
    capped,
    byAgent: sorted(agents).map(([agent, count]) => ({ agent, count })),
    byProject: sorted(projects).map(([project, count]) => ({ project, count })),
  };
}
