// The SQL every search of the store shares: the score (bm25, answers up, injected rules down),
// the orders, a candidate's columns (and a candidate as a hit), the matches of a query under the
// filters (their terms made from the filters' table), and statements the budget may stop.

import { filterTerms as tableTerms, type SearchFilters } from "../../filters_table.ts";
import type { Kind, Role } from "../../sources/adapter.ts";
import type { Agent } from "../../agents.ts";
import type { SQLInputValue, StatementSync } from "node:sqlite";
import { HistoryStore, isCorruption } from "../db.ts";
import { SearchStatementError } from "../_search_bounds.ts";
import { messageOf } from "../../format.ts";
import { FILTERING_INDEX, FLAG_INJECTED, RANKING_INDEX } from "../schema.ts";
import {
  budgetCheck,
  fallbackReserveMs,
  SearchBudget,
  SearchStoppedError,
} from "../_search_budget.ts";
import type { SearchHit, SearchSort } from "./types.ts";
import { iso } from "../records.ts";

/** A record a search matched, with its conversation's fields: a hit before it is built. */
export interface Candidate {
  id: number;
  /** Of a search ranked in tiers (`tierQueries`): the tier that matched. */
  tier?: number;
  /** Of a search in one query: how many records match it (each chunk of a long line counts). */
  total?: number;
  conversation_id: number;
  source_id: number;
  generation: number;
  offset: number;
  seq: number;
  ts: number | null;
  kind: Kind;
  role: Role | null;
  flags: number;
  score: number;
  key: string;
  title: string | null;
  agent: Agent;
  project_root: string | null;
  cwd: string | null;
}

/** A candidate as a hit, with its snippet and score (not through the gate yet). */
export function hitOfRow(row: Candidate, snippet: string, score: number): SearchHit {
  return {
    conversation: row.key,
    title: row.title,
    record: row.id,
    agent: row.agent,
    project: row.project_root,
    cwd: row.cwd,
    timestamp: iso(row.ts),
    kind: row.kind,
    role: row.role,
    snippet,
    score,
  };
}

/** How much more an answer (an assistant message, a summary) weighs than a question. */
export const ANSWER_BOOST = 1.25;
/**
 * What an agent tells the model (developer and system messages, Codex's AGENTS.md and environment
 * as user messages: FLAG_INJECTED) is the same rules in every one of its conversations: a word
 * from them would otherwise rank those copies above what was said. The roles are named too, for a
 * store read before its migration 0011 marked the records it had.
 */
export const INJECTED_WEIGHT = 0.5;

/** bm25, with answers (assistant messages, summaries) weighted up and injected rules down. */
export const SCORE = `bm25(fts) * CASE WHEN (r.flags & ${FLAG_INJECTED}) != 0
                              OR (r.kind = 'message' AND r.role IN ('developer', 'system'))
                              THEN ${INJECTED_WEIGHT}
                            WHEN (r.kind = 'message' AND r.role = 'assistant')
                              OR r.kind = 'summary' THEN ${ANSWER_BOOST} ELSE 1.0 END`;

/**
 * Each sort as an ORDER BY over candidates whose record's `id` and `ts` are columns of `rows` (a
 * table's name and a dot, or nothing), and `score` a column of the result (records without a time
 * sort last).
 */
export const ORDER: Record<SearchSort, (rows: string) => string> = {
  relevance: (rows) => `score, ${rows}id DESC`,
  newest: (rows) => `${rows}ts IS NULL, ${rows}ts DESC, ${rows}id DESC`,
  oldest: (rows) => `${rows}ts IS NULL, ${rows}ts, ${rows}id`,
};

/** The columns of a candidate row, from its record `r` and its conversation `c`. */
export const CANDIDATE_COLUMNS =
  `r.id, r.conversation_id, r.source_id, r.generation, r.offset, r.seq,
  r.ts, r.kind, r.role, r.flags, c.key, c.title, c.agent, c.project_root, c.cwd`;

/**
 * The records a search's matches are joined to, as `r`: through the ranking index where the
 * store has it (migration 0018), whose entries hold every column of a record a match is ranked
 * and filtered by, a hundred to a page, so the records' own rows are read only for the columns
 * it lacks (a hit's place in its source). `INDEXED BY`, as SQLite would otherwise look each match
 * up by its id in the table. A store no capture has upgraded yet is read as it is.
 */
export function rankedRecords(store: HistoryStore): string {
  return hasIndex(store, RANKING_INDEX) ? `records r INDEXED BY ${RANKING_INDEX}` : "records r";
}

/**
 * The conversations the filters read, as `c`: through the filtering index where the store has
 * it (migration 0019), whose entries hold every column of a conversation a filter or the rule on
 * typed prompts reads, so that a match's conversation is looked up in it rather than in the
 * table; `whole` where the statement reads the conversation's other columns too.
 */
function filteredConversations(store: HistoryStore, whole: boolean): string {
  return !whole && hasIndex(store, FILTERING_INDEX)
    ? `conversations c INDEXED BY ${FILTERING_INDEX}`
    : "conversations c";
}

/** Whether the store has the index `name` (a store no capture upgraded yet may lack it). */
function hasIndex(store: HistoryStore, name: string): boolean {
  return store.stmt("SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name = ?").get(name) !==
    undefined;
}

/**
 * The FROM and WHERE of the records matching `fts MATCH ?` under `filter` (from `filterSql`),
 * within the search budget; each joined to its conversation `c` only where a filter reads it (a
 * common word's matches are looked up there one by one: a fifth of its ranking at 10 GB).
 */
export function matchesUnder(store: HistoryStore, filter: FilterSql, whole = false): string {
  return `FROM fts
    JOIN ${rankedRecords(store)} ON r.id = fts.rowid${conversationsOf(store, filter, whole)}
    WHERE fts MATCH ? AND ${budgetCheck("fts.rowid")}${filter.where}`;
}

/**
 * The join of a match's record `r` to its conversation `c`, where `filter` reads `c`, or `whole`
 * where the statement reads every column of it (see `filteredConversations`).
 */
export function conversationsOf(
  store: HistoryStore,
  filter: Pick<FilterSql, "conversations">,
  whole = false,
): string {
  return filter.conversations || whole
    ? `\n    JOIN ${filteredConversations(store, whole)} ON c.id = r.conversation_id`
    : "";
}

/** SCORE over the matches of tiers (`tiersUnder`), whose bm25 is `m.bm`. */
export const TIER_SCORE = SCORE.replace("bm25(fts)", "m.bm");

/**
 * The FROM and WHERE of the records matching any of `tiers` FTS5 queries (`fts MATCH ?` each,
 * in order) under `where`, each match `m` with its bm25 (`m.bm`) and its tier (`m.tier`).
 */
export function tiersUnder(store: HistoryStore, tiers: number, filter: FilterSql): string {
  const arms = Array.from(
    { length: tiers },
    (_, i) =>
      `SELECT rowid AS id, bm25(fts) AS bm, ${i} AS tier FROM fts
       WHERE fts MATCH ? AND ${budgetCheck("rowid")}`,
  );
  return `FROM (${arms.join(" UNION ALL ")}) m
    JOIN ${rankedRecords(store)} ON r.id = m.id${conversationsOf(store, filter)}
    WHERE 1${filter.where}`;
}

/**
 * Every row of `statement`, a query that sorts or groups all it finds before its first row.
 * Iterated: node:sqlite's all() never returns when a function the statement calls throws (the
 * budget's). But its iterate() ends quietly when SQLite fails a step (a damaged page), as if no
 * row were left, and here a step can fail only in the first, which does all the work: a query
 * that gave no row takes that step again with get(), which throws what it met.
 */
export function sortedRows(statement: StatementSync, ...args: SQLInputValue[]): unknown[] {
  const rows = [...statement.iterate(...args)];
  if (!rows.length) statement.get(...args);
  return rows;
}

/**
 * Up to `limit` records matching `query` under `filters`, most recently captured first (first
 * captured with the `oldest` sort), unranked: FTS5 walks its matches in record order, so rows
 * arrive as they are found and the ones found before the budget's phase ends are kept. None when
 * the ranking before it took so long to reach its first row that this one, started now, would
 * end more than the fallback's share of the budget past its deadline: FTS5 gathers what the
 * query's prefixes match again before this one's first row, in code the budget cannot interrupt
 * (at 10 GB, eight common 3-letter prefixes took over a second each time).
 */
export function recentCandidates(
  store: HistoryStore,
  query: string,
  filters: SearchFilters & { sort?: SearchSort },
  limit: number,
  budget: SearchBudget,
): Candidate[] {
  const rows: Candidate[] = [];
  const setup = budget.setupMs;
  if (setup !== null && budget.wouldEndPast(setup, fallbackReserveMs(budget.ms))) return rows;
  const filter = filterSql(filters);
  const sql = `
    SELECT ${CANDIDATE_COLUMNS}, ${SCORE} AS score
    ${matchesUnder(store, filter, true)}
    ORDER BY fts.rowid${filters.sort === "oldest" ? "" : " DESC"}
    LIMIT ?`;
  stoppable(budget, () =>
    budgeted(store, sql, (statement) => {
      for (const row of statement.iterate(query, ...filter.params, limit)) {
        rows.push(row as unknown as Candidate);
      }
    }));
  return rows;
}

/**
 * Runs a statement the budget may abort; an aborted one is prepared afresh next time. One SQLite
 * would not prepare throws SearchStatementError (unless the store is damaged where it read).
 */
export function budgeted<T>(
  store: HistoryStore,
  sql: string,
  run: (statement: StatementSync) => T,
): T {
  let statement: StatementSync;
  try {
    statement = store.stmt(sql);
  } catch (err) {
    if (isCorruption(err)) throw err;
    throw new SearchStatementError(`A search statement failed to prepare: ${messageOf(err)}`, {
      cause: err,
    });
  }
  try {
    return run(statement);
  } catch (err) {
    store.dropStmt(sql);
    throw err;
  }
}

/** A search's filters as SQL over a match's record `r` and its conversation `c`. */
export interface FilterSql {
  /** The WHERE tail: ` AND …` for each term. */
  where: string;
  params: (string | number)[];
  /** Whether a term reads the conversation `c`, which must then be joined. */
  conversations: boolean;
}

/** The filters of a search as a WHERE tail and its parameters (see `FilterSql`). */
export function filterSql(filters: SearchFilters): FilterSql {
  const terms = filterTerms(filters);
  return {
    where: terms.map((term) => ` AND ${term.sql}`).join(""),
    params: terms.flatMap((term) => term.params),
    conversations: terms.some((term) => readsConversation(term.sql)),
  };
}

/** Whether a term names a column of the conversation `c` (the filters' table writes `c.…`). */
function readsConversation(sql: string): boolean {
  return /\bc\./.test(sql);
}

/** One filter of a search as a SQL term over its record `r` and conversation `c`. */
interface FilterTerm {
  /** The filter's field, or null for the term every search has. */
  key: keyof SearchFilters | null;
  sql: string;
  params: (string | number)[];
}

/**
 * The terms of `filters` (their SQL is in the filters' table, `lib/filters_table.ts`), after the
 * term every search has: a record in a conversation (a streamed line's rows have none until the
 * line is derived), and a typed prompt from a history file only where its session's transcript is
 * missing (where the transcript was captured, its own copy of the prompt is the hit): the
 * conversation is looked up for a prompt alone.
 */
export function filterTerms(filters: SearchFilters): FilterTerm[] {
  return [
    {
      key: null,
      sql: `(r.conversation_id IS NOT NULL AND (r.kind != 'prompt'
      OR (SELECT message_count FROM conversations WHERE id = r.conversation_id) = 0))`,
      params: [],
    },
    ...tableTerms(filters, "store").map((term) => ({
      key: term.field,
      sql: term.sql,
      params: term.params as (string | number)[],
    })),
  ];
}

/**
 * Runs `fn`, or returns null when the budget's current phase is spent before or while it runs
 * (whatever SQLite made of the exception the budget threw inside a statement).
 */
export function stoppable<T>(budget: SearchBudget, fn: () => T): T | null {
  if (budget.spent()) return null;
  try {
    return fn();
  } catch (err) {
    if (budget.spent() || err instanceof SearchStoppedError) return null;
    throw err;
  }
}
