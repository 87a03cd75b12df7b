// Ranked search (`search`): the page of hits of an FTS5 query, best first (answers above their
// questions) or by time, forgiving a query that finds nothing as typed (`../forgive.ts`); the
// literal scan (`literal.ts`) when the index cannot answer the query.

import { mapStrings, type Redactor } from "../../gate/secrets.ts";
import type { SearchFilters } from "../../filters_table.ts";
import type { TextReader } from "../../sources/adapter.ts";
import { HistoryStore } from "../db.ts";
import { FLAG_STREAMED } from "../schema.ts";
import { cjkQuery } from "../cjk.ts";
import { type LevelPage, runLevels, type Tier } from "../forgive.ts";
import { fallbackReserveMs, SearchBudget } from "../_search_budget.ts";
import {
  answerWithin,
  asIndexed,
  buildHit,
  foundInTime,
  hitBuilder,
  nothingFound,
  type PageScope,
  soundRead,
  throughGate,
  tierQueries,
} from "./_read.ts";
import {
  budgeted,
  type Candidate,
  CANDIDATE_COLUMNS,
  filterSql,
  matchesUnder,
  ORDER,
  recentCandidates,
  SCORE,
  sortedRows,
  stoppable,
  TIER_SCORE,
  tiersUnder,
} from "./_sql.ts";
import { literalSearch } from "./literal.ts";
import type { SearchOptions, SearchResult, SearchSort } from "./types.ts";

/** The weights the ranking gives answers and what an agent told the model (the team's too). */
export { ANSWER_BOOST, INJECTED_WEIGHT } from "./_sql.ts";

/**
 * Searches the store; see `../search.ts`'s file comment. Returns the page of `limit` hits after
 * `offset`, each passed through `redact` whole (snippet, conversation, project, cwd), and where
 * the next page starts; past its budget, what it had then (`stopped`, see that comment). Never writes and
 * never calls the network. Throws SearchLimitError for a query over a bound (before any work),
 * SearchStoppedError when the budget ran out before any hit was found, and StoreDamagedError
 * when the store is damaged where the search read it (or the index it found nothing in is: see
 * `nothingFound`); `now` is the budget's clock (epoch ms).
 */
export function search(
  store: HistoryStore,
  adapters: readonly TextReader[],
  redact: Redactor,
  options: SearchOptions,
  now?: () => number,
): SearchResult {
  return soundRead(
    store,
    () => foundInTime(searchWithin(store, adapters, redact, asIndexed(options), now), "hits"),
  );
}

function searchWithin(
  store: HistoryStore,
  adapters: readonly TextReader[],
  redact: Redactor,
  options: SearchOptions,
  now?: () => number,
): SearchResult {
  return answerWithin(store, adapters, redact, options, now, {
    counted: "hits",
    indexed: (page) => {
      const found = runLevels(
        page.forgiveness,
        options.query,
        (tiers) => ftsPage(page, tiers),
        (searched) => nothingFound(store, cjkQuery(searched)),
      );
      return {
        ...found,
        hits: found.hits.map((hit) => throughGate(hit, redact)),
        ...(found.forgiven ? { forgiven: mapStrings(found.forgiven, redact) } : {}),
      };
    },
    literal: ({ store, deriver, budget, offset, limit }, matcher, note) => {
      const found = literalSearch(store, deriver, options, matcher, { offset, limit }, budget);
      return { ...found, hits: found.hits.map((hit) => throughGate(hit, redact)), note };
    },
  });
}

/**
 * The page of hits of `tiers`, queries that each hold the one before: the matches of each ranked
 * after those of the one before it (one query, ranked by bm25, for most searches). Ranked by
 * time (`newest`, `oldest`), or out of time to rank, the widest query's matches. Hits are not
 * through the gate yet.
 */
function ftsPage(scope: PageScope, tiers: readonly Tier[]): LevelPage<SearchResult> {
  const { store, options, budget, offset, limit } = scope;
  const window = offset + limit + 1;
  const widest = tiers.at(-1)!;
  const candidateQuery = cjkQuery(widest.query);
  const build = hitBuilder(scope, widest.level);
  const reserve = fallbackReserveMs(budget.ms);
  budget.endBefore(reserve);
  const relevance = (options.sort ?? "relevance") === "relevance";
  const matching = relevance && tiers.length > 1 ? tierQueries(tiers) : candidateQuery;
  let rows: Candidate[] | null = stoppable(
    budget,
    () => ftsCandidates(store, matching, options, Math.min(window * 4, window + 400)),
  );
  const ranking = rows !== null;
  const found = rows?.length !== 0;
  if (rows === null) {
    // Out of time to rank: the most recently captured matches, as fast as FTS5 finds them.
    budget.endBefore(reserve / 2);
    rows = recentCandidates(store, candidateQuery, options, window + 16, budget);
  }
  budget.endBefore(0);
  const deduped = dedupeLines(store, rows, budget);
  // One hit past the page says whether another page follows.
  const sorted = ranking && relevance ? byTier(deduped.rows).flatMap(preferAnswers) : deduped.rows;
  const listed = sorted.slice(0, window);
  const page = listed.slice(offset, offset + limit);
  const built: ReturnType<typeof buildHit>[] = [];
  for (const row of page) {
    if (budget.spent()) break;
    built.push(build(row));
  }
  const stopped = !ranking || !deduped.complete || built.length < page.length;
  const next = listed.length > offset + limit && (!stopped || built.length === page.length)
    ? offset + limit
    : null;
  const total = stopped ? null : next === null
    ? Math.min(listed.length, offset + limit)
    // Counted as they were ranked (each tier leaves out the matches of the one before, so the
    // tiers' matches are the widest query's, each once).
    : Math.max(rows[0]?.total ?? 0, offset + limit + 1);
  // Found only wider than typed, the widest tier found is what the page searched.
  const best = rows[0]?.tier ? rows.reduce((most, row) => Math.max(most, row.tier ?? 0), 0) : 0;
  return {
    found,
    best: tiers[best]!.level,
    result: {
      hits: built.map((b) => b.hit),
      highlights: built.map((b) => b.ranges),
      mode: "fts",
      note: null,
      ftsQuery: candidateQuery,
      next,
      total,
      stopped,
      stopNote: stopped ? budget.note(built.length, ranking ? "ranked" : "recent") : null,
    },
  };
}

/** `rows`, in tier order already, as one list per tier. */
function byTier<R extends { tier?: number }>(rows: R[]): R[][] {
  const tiers: R[][] = [];
  let current: number | undefined = -1;
  for (const row of rows) {
    if (row.tier !== current || !tiers.length) tiers.push([]);
    current = row.tier;
    tiers.at(-1)!.push(row);
  }
  return tiers;
}

/**
 * The first `limit` records matching `query` under `filters`, in the sort's order, each with how
 * many match in all (`total`); for the queries of tiers (`tierQueries`), each tier's matches
 * ranked after the tier before, without it. Ranking reads every match's record, which counting
 * them would read again: at 10 GB, a word in 53,806 records took 0.31 s to count after 0.42 to
 * rank. So the one query counts as it ranks, keeping of each match only what orders it until the
 * first `limit` are known; the budget bounds how many it reads.
 */
function ftsCandidates(
  store: HistoryStore,
  query: string | string[],
  filters: SearchFilters & { sort?: SearchSort },
  limit: number,
): Candidate[] {
  const filter = filterSql(filters);
  const tiered = typeof query !== "string";
  const matches = tiered
    ? `SELECT r.id AS id, r.ts AS ts, m.tier AS tier, ${TIER_SCORE} AS score
       ${tiersUnder(store, query.length, filter)}`
    : `SELECT r.id AS id, r.ts AS ts, ${SCORE} AS score ${matchesUnder(store, filter)}`;
  const order = (rows: string) =>
    tiered ? `${rows}tier, ${ORDER.relevance(rows)}` : ORDER[filters.sort ?? "relevance"](rows);
  const tier = tiered ? "tier, " : "";
  const sql = `
    SELECT ${CANDIDATE_COLUMNS}, m.score, ${tier && "m.tier, "}m.total
    FROM (
      SELECT id, ts, ${tier}score, count(*) OVER () AS total
      FROM (${matches})
      ORDER BY ${order("")}
      LIMIT ?
    ) m
    JOIN records r ON r.id = m.id
    JOIN conversations c ON c.id = r.conversation_id
    ORDER BY ${order("m.")}`;
  return budgeted(
    store,
    sql,
    (statement) => sortedRows(statement, ...(tiered ? query : [query]), ...filter.params, limit),
  ) as unknown as Candidate[];
}

/**
 * Keeps the best-ranked chunk of each long record (a streamed line's pieces of text are indexed
 * apart), a hit on a later row of a line parsed whole standing for the line's first row, which
 * holds its text (a store captured before that held a piece in each row); when the budget runs
 * out, the rows kept so far (`complete` false).
 */
function dedupeLines(
  store: HistoryStore,
  rows: Candidate[],
  budget: SearchBudget,
): { rows: Candidate[]; complete: boolean } {
  const seen = new Set<string>();
  const kept: Candidate[] = [];
  const head = store.stmt(
    `SELECT id, offset FROM records WHERE source_id = ? AND generation = ? AND offset <= ?
       AND seq = 0 ORDER BY offset DESC LIMIT 1`,
  );
  for (const row of rows) {
    if (budget.spent()) return { rows: kept, complete: false };
    let lineOffset = row.offset;
    let hit = row;
    if (row.seq > 0) {
      const found = head.get(row.source_id, row.generation, row.offset) as
        | { id: number; offset: number }
        | undefined;
      lineOffset = found?.offset ?? row.offset;
      if (found && !(row.flags & FLAG_STREAMED)) {
        hit = { ...row, id: found.id, offset: found.offset, seq: 0 };
      }
    }
    const key = `${row.source_id}:${row.generation}:${lineOffset}`;
    if (seen.has(key)) continue;
    seen.add(key);
    kept.push(hit);
  }
  return { rows: kept, complete: true };
}

/**
 * Moves each answer (assistant message or summary) above the question that asked for it: the
 * nearest earlier user message hit in the same conversation, when that question ranks higher.
 */
function preferAnswers(rows: Candidate[]): Candidate[] {
  const order = [...rows];
  const isAnswer = (r: Candidate) =>
    (r.kind === "message" && r.role === "assistant") || r.kind === "summary";
  const isQuestion = (r: Candidate) =>
    (r.kind === "message" || r.kind === "prompt") && r.role === "user";
  for (const answer of rows.filter(isAnswer)) {
    const question = rows
      .filter((r) =>
        isQuestion(r) && r.conversation_id === answer.conversation_id && r.id < answer.id
      )
      .reduce<Candidate | null>((best, r) => (!best || r.id > best.id ? r : best), null);
    if (!question) continue;
    const qi = order.indexOf(question);
    const ai = order.indexOf(answer);
    if (qi < ai) {
      order.splice(ai, 1);
      order.splice(qi, 0, answer);
    }
  }
  return order;
}
