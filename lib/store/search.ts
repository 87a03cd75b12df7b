// Full-text search over the history store: FTS5 with bm25 ranking that prefers answers to the
// questions that asked for them, every filter of `search`, snippets derived from raw bytes, and
// a literal substring scan when the index cannot answer the query (not FTS5 syntax, only
// symbols, or CJK the index does not hold: see `cjk.ts` for CJK words). Paged here, and every hit
// through the gate here, so the CLI, the dashboard and the search workers use it as it is.
// Every search is bounded: its query by `_search_bounds.ts`, its time by `_search_budget.ts`.
//
// A search past its budget returns what it has, and says so (`stopped`, `stopNote`). What it has
// depends on where it was: bm25 ranks only once every match is scored (SQLite keeps the best in
// a sorter that gives out no row before the scan ends, and a stopped statement drops it), so a
// ranking stopped midway has nothing to give. The ranking therefore leaves a fifth of the budget
// (at most 200 ms) for a fallback that needs no ranking: FTS5 walks its matches newest record
// first, as fast as they come, so the page is the most recently captured matches, unranked and
// labelled so. A ranking that finished but whose hits were not all read in time gives the best
// ones it read, in order; a literal scan gives the matches of the records it read.
//
// A search that meets a damaged store says so (StoreDamagedError, `damage.ts`): what is damaged
// and how to recover, never "no match". An index search that found nothing also has the text
// index looked at quickly, as a misplaced page of its term index hides matches without an error.

import { mapStrings, type Redactor } from "../gate/secrets.ts";
import { filterTerms as tableTerms, type SearchFilters } from "../filters_table.ts";
import { withoutInvisible } from "../invisible.ts";
import type { Agent, Kind, Role, TextReader } from "../sources/adapter.ts";
import type { SQLInputValue, StatementSync } from "node:sqlite";
import { HistoryStore } from "./db.ts";
import { damageError, indexDamaged, quickCheck } from "./damage.ts";
import { FLAG_INDEXED, FLAG_INJECTED, FLAG_STREAMED, FLAG_ZSTD } from "./schema.ts";
import { iso, type RecordRow, TextDeriver } from "./records.ts";
import { makeSnippet, queryTerms, type Snippet, tokenize } from "./text.ts";
import { cjkIndexReady, cjkQuery, hasCjk, hasLoneCjkLetter } from "./cjk.ts";
import { isAscii } from "./_letters.ts";
import {
  type Forgive,
  type Forgiven,
  Forgiveness,
  type LevelPage,
  type Matched,
  runLevels,
  type SnippetTerm,
  type Tier,
} from "./forgive.ts";
import {
  checkBounds,
  isFtsSyntax,
  isFtsSyntaxError,
  MIN_PREFIX_CHARS,
  SearchLimitError,
} from "./_search_bounds.ts";
import {
  budgetCheck,
  DEFAULT_BUDGET_MS,
  fallbackReserveMs,
  SearchBudget,
  SearchStoppedError,
  useBudget,
} from "./_search_budget.ts";

export {
  checkBounds,
  MAX_NEAR_DISTANCE,
  MAX_PREFIXES,
  MAX_TERMS,
  MIN_PREFIX_CHARS,
  SearchLimitError,
} from "./_search_bounds.ts";
export { type Forgive, FORGIVE_MODES, type Forgiven, type Matched } from "./forgive.ts";
export {
  budgetMsFrom,
  DEFAULT_BUDGET_MS,
  SearchBudget,
  SearchStoppedError,
} from "./_search_budget.ts";

export type { SearchFilters } from "../filters_table.ts";

/** The orders `search` knows: best match first (answers above their questions), or by time. */
export const SEARCH_SORTS = ["relevance", "newest", "oldest"] as const;
/** The order of hits. */
export type SearchSort = typeof SEARCH_SORTS[number];

export interface SearchOptions extends SearchFilters {
  query: string;
  /** The order of hits (default `relevance`). */
  sort?: SearchSort;
  /** Hits on the page (default 20, at most 10,000). */
  limit?: number;
  /** Ranked hits to skip before the page (default 0): the `next` of the page before. */
  offset?: number;
  /** How long the search may take before it stops with what it has (default 1200 ms). */
  budgetMs?: number;
  /** When the user asked (epoch ms; default: now): the budget counts from here. */
  startedAt?: number;
  /**
   * How the search forgives a query that does not match as typed (`forgive.ts`); default
   * `exact`. With any value given, each hit says how its words matched (`matched`).
   */
  forgive?: Forgive;
}

/** One hit, with the fields of `search --json`. */
export interface SearchHit {
  conversation: string;
  /** The conversation's title (its first prompt or summary), through the gate. */
  title: string | null;
  record: number;
  agent: Agent;
  project: string | null;
  cwd: string | null;
  timestamp: string | null;
  kind: Kind;
  role: Role | null;
  snippet: string;
  score: number;
  /** With `forgive` given: each word of the query the hit holds, and how it matched. */
  matched?: Matched[];
}

/**
 * What a page of a search says besides what it found (its hits, or its conversations): the same
 * for hits and groups, and what the dashboard's pages (`SearchPage`, `GroupPage`) pass on.
 */
export interface PageFacts {
  /** Where each hit's matches are in its snippet (a group's: its best hit's), in their order. */
  highlights: Snippet["ranges"][];
  /** `fts`, or `literal` when the index could not answer the query (`note` says why). */
  mode: "fts" | "literal";
  /** Why the search was a literal substring scan (null for `fts`), for the user to read. */
  note: string | null;
  /** The FTS5 query actually run (after quoting punctuated words); null for a literal scan. */
  ftsQuery: string | null;
  /** The `offset` of the next page (in hits, or in conversations), or null on the last one. */
  next: number | null;
  /**
   * How many hits (conversations, for groups) the whole search has (a line longer than 64 KiB
   * counts once per matching chunk until the last page, where the count is exact), or null when
   * it was not counted (a literal scan stops at the page, and a stopped search is not counted).
   */
  total: number | null;
  /**
   * True when the budget was spent before the search was done: the hits are what it had (a
   * group's `hits` counts the matches found in time).
   */
  stopped: boolean;
  /**
   * For a stopped search, what its hits are (the best ranked, the most recently captured
   * matches unranked, or the newest of the records a literal scan read) and how to get the
   * whole answer; null when not stopped. With no hits, it says how to narrow the query.
   */
  stopNote: string | null;
  /** When the hits are not the query's as typed: what was searched instead, and why. */
  forgiven?: Forgiven;
}

/** A page of hits, every string through the gate. */
export interface SearchResult extends PageFacts {
  hits: SearchHit[];
}

interface Candidate {
  id: number;
  /** Of a search ranked in tiers (`tierQueries`): the tier that matched. */
  tier?: number;
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

/**
 * Searches the store; see the file comment. Returns the page of `limit` hits after `offset`, each
 * passed through `redact` whole (snippet, conversation, project, cwd), and where the next page
 * starts; past its budget, what it had then (`stopped`, see the file comment). Never writes and
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

/**
 * Runs `fn`, a read of `store`; SQLite's word that the store is damaged becomes the
 * StoreDamagedError that names the damage and how to recover (`damageError`).
 */
function soundRead<T>(store: HistoryStore, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw damageError(store, err) ?? err;
  }
}

/**
 * For an index search that matched nothing at all: throws StoreDamagedError when the quick check
 * finds the text index damaged, the damage that makes it answer nothing instead of an error (see
 * `quickCheck`). Milliseconds, and only when nothing was found: a search with hits pays nothing.
 */
function nothingFound(store: HistoryStore): void {
  const detail = quickCheck(store).damaged[0]?.messages[0];
  if (detail !== undefined) throw indexDamaged(store, detail);
}

/**
 * `options` with the query as the index holds text: without the characters a reader cannot see
 * (`lib/invisible.ts`), so a pasted `pass\u200bword` looks for `password`, as was indexed.
 */
function asIndexed<O extends { query: string }>(options: O): O {
  const query = withoutInvisible(options.query);
  return query === options.query ? options : { ...options, query };
}

/**
 * `result`, unless its budget ran out before anything was found: then SearchStoppedError, whose
 * message says how to narrow the query (nothing found is not "no match").
 */
function foundInTime<R extends { stopped: boolean; stopNote: string | null }>(
  result: R,
  key: keyof R,
): R {
  const found = result[key] as unknown[];
  if (result.stopped && found.length === 0) {
    throw new SearchStoppedError(result.stopNote ?? "The search was stopped");
  }
  return result;
}

function searchWithin(
  store: HistoryStore,
  adapters: readonly TextReader[],
  redact: Redactor,
  options: SearchOptions,
  now?: () => number,
): SearchResult {
  const limit = Math.max(1, Math.min(options.limit ?? 20, 10_000));
  const offset = options.offset ?? 0;
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new RangeError(`Expected an offset of zero or more hits: got "${offset}"`);
  }
  if (!options.query.trim()) throw new RangeError("The search query is empty");
  const budget = new SearchBudget(options.budgetMs ?? DEFAULT_BUDGET_MS, options.startedAt, now);
  const release = useBudget(store, budget);
  try {
    const deriver = new TextDeriver(store, adapters, redact);
    const unindexed = whyNotIndexed(store, options.query);
    for (const typed of unindexed ? [] : ftsForms(options.query)) {
      if (!isFtsSyntax(typed)) continue;
      checkBounds(typed);
      const forgiveness = new Forgiveness(
        store,
        typed,
        options.forgive ?? "exact",
        budget,
        options.query,
      );
      const page = { store, deriver, options, budget, offset, limit, forgiveness };
      try {
        const found = runLevels(forgiveness, options.query, (tiers) => ftsPage(page, tiers));
        return {
          ...found,
          hits: found.hits.map((hit) => throughGate(hit, redact)),
          ...(found.forgiven ? { forgiven: mapStrings(found.forgiven, redact) } : {}),
        };
      } catch (err) {
        // The empty table parses as the store's does; this only keeps the old way safe.
        if (isFtsSyntaxError(err)) continue;
        throw err;
      }
    }
    // The whole budget is the scan's, as in groupsWithin: a query FTS5 refused above may have
    // left a phase shortened for a fallback that never ran.
    budget.endBefore(0);
    budget.literal = true;
    const matcher = literalMatcher(options.query, unindexed !== null);
    const found = literalSearch(store, deriver, options, matcher, { offset, limit }, budget);
    return {
      ...found,
      hits: found.hits.map((hit) => throughGate(hit, redact)),
      note: `${unindexed ?? "the query is not valid FTS5 syntax"}; used a literal substring scan`,
    };
  } finally {
    release();
  }
}

/** What a page of an index search searches with, and where the page is. */
interface PageScope {
  store: HistoryStore;
  deriver: TextDeriver;
  options: SearchOptions;
  budget: SearchBudget;
  offset: number;
  limit: number;
  forgiveness: Forgiveness;
}

/**
 * The page of hits of `tiers`, queries that each hold the one before: the matches of each ranked
 * after those of the one before it (one query, ranked by bm25, for most searches). Ranked by
 * time (`newest`, `oldest`), or out of time to rank, the widest query's matches. Hits are not
 * through the gate yet.
 */
function ftsPage(scope: PageScope, tiers: readonly Tier[]): LevelPage<SearchResult> {
  const { store, deriver, options, budget, offset, limit, forgiveness } = scope;
  const window = offset + limit + 1;
  const widest = tiers.at(-1)!;
  const candidateQuery = cjkQuery(widest.query);
  // With `forgive`, the terms of every word's alternatives, which say how each word matched.
  const terms = options.forgive === undefined
    ? queryTerms(options.query)
    : forgiveness.terms(widest.level);
  const reserve = fallbackReserveMs(budget.ms);
  budget.endBefore(reserve);
  const relevance = (options.sort ?? "relevance") === "relevance";
  const matching = relevance && tiers.length > 1 ? tierQueries(tiers) : candidateQuery;
  let rows: Candidate[] | null = stoppable(
    budget,
    () => ftsCandidates(store, matching, options, Math.min(window * 4, window + 400)),
  );
  const ranking = rows !== null;
  if (rows?.length === 0 && tiers[0]!.level === 0) nothingFound(store);
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
  const matchedOf = options.forgive === undefined
    ? undefined
    : (found: (string | null)[]) => forgiveness.matched(terms as SnippetTerm[], found);
  for (const row of page) {
    if (budget.spent()) break;
    built.push(buildHit(row, deriver, terms, row.score, matchedOf));
  }
  const stopped = !ranking || !deduped.complete || built.length < page.length;
  const next = listed.length > offset + limit && (!stopped || built.length === page.length)
    ? offset + limit
    : null;
  const total = stopped
    ? null
    : next === null
    ? Math.min(listed.length, offset + limit)
    : countAtLeast(
      stoppable(budget, () => ftsCount(store, candidateQuery, options)),
      offset + limit + 1,
    );
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

/**
 * The FTS5 queries of each tier alone: the first as it is, each other without the matches of
 * the one before it (`(lante*) NOT (lante)`).
 */
function tierQueries(tiers: readonly Tier[]): string[] {
  return tiers.map((tier, i) =>
    i === 0
      ? cjkQuery(tier.query)
      : `(${cjkQuery(tier.query)}) NOT (${cjkQuery(tiers[i - 1]!.query)})`
  );
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

/** `count`, or null when it was not counted in time; never below `least` when counted. */
function countAtLeast(count: number | null, least: number): number | null {
  return count === null ? null : Math.max(count, least);
}

/**
 * `hit` with every string passed through the gate. The snippet was cut from redacted text, and
 * is passed again so that a cut cannot leave part of a secret the whole text hid.
 */
function throughGate(hit: SearchHit, redact: Redactor): SearchHit {
  return mapStrings(hit, (text) => redact(text));
}

/**
 * Runs `fn`, or returns null when the budget's current phase is spent before or while it runs
 * (whatever SQLite made of the exception the budget threw inside a statement).
 */
function stoppable<T>(budget: SearchBudget, fn: () => T): T | null {
  if (budget.spent()) return null;
  try {
    return fn();
  } catch (err) {
    if (budget.spent() || err instanceof SearchStoppedError) return null;
    throw err;
  }
}

/**
 * Why the index cannot answer `query`, or null when it can: no word the index holds (only
 * symbols, `💡`, `→`), a one-letter CJK word (the index holds CJK as bigrams), or CJK words in a
 * store whose index predates CJK bigrams (until `reindex` upgrades it).
 */
function whyNotIndexed(store: HistoryStore, query: string): string | null {
  const words = query.replace(/\b(AND|OR|NOT|NEAR)\b/g, " ");
  if (!tokenize(words).length) return "the query has no word the index holds";
  // The index would drop such a term silently (`缓存策略 OR 💡` would find only the word).
  const bare = literalTerms(query).filter((term) => !tokenize(term).length);
  if (bare.length) {
    const named = bare.map((term) => `"${term}"`).join(", ");
    return `${named} ${bare.length === 1 ? "has" : "have"} no word the index holds`;
  }
  if (!hasCjk(query)) return null;
  if (hasLoneCjkLetter(query)) return "the index holds CJK words of two or more characters";
  if (!cjkIndexReady(store)) return "the index does not hold CJK words until reindex upgrades it";
  return null;
}

/** The query as typed, then with punctuated words quoted as phrases (`phx.server`). */
function ftsForms(query: string): string[] {
  const quoted = query.replace(/"[^"]*"|[^\s()"]+/g, (token) => {
    if (token.startsWith('"')) return token;
    if (/^(AND|OR|NOT|NEAR)$/.test(token)) return token;
    const star = token.endsWith("*") && token.length > 1 ? "*" : "";
    const body = star ? token.slice(0, -1) : token;
    if (/^[A-Za-z0-9_]+$/.test(body)) return token;
    if (!isAscii(body) && /^[\p{L}\p{N}_\u0080-\uffff]+$/u.test(body)) return token;
    return `"${body.replaceAll('"', '""')}"${star}`;
  });
  return quoted === query ? [query] : [query, quoted];
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
const SCORE = `bm25(fts) * CASE WHEN (r.flags & ${FLAG_INJECTED}) != 0
                              OR (r.kind = 'message' AND r.role IN ('developer', 'system'))
                              THEN ${INJECTED_WEIGHT}
                            WHEN (r.kind = 'message' AND r.role = 'assistant')
                              OR r.kind = 'summary' THEN ${ANSWER_BOOST} ELSE 1.0 END`;

/** Each sort as an ORDER BY over the candidates (records without a time sort last). */
const ORDER: Record<SearchSort, string> = {
  relevance: "score, r.id DESC",
  newest: "r.ts IS NULL, r.ts DESC, r.id DESC",
  oldest: "r.ts IS NULL, r.ts, r.id",
};

/** The columns of a candidate row, from its record `r` and its conversation `c`. */
const CANDIDATE_COLUMNS = `r.id, r.conversation_id, r.source_id, r.generation, r.offset, r.seq,
  r.ts, r.kind, r.role, r.flags, c.key, c.title, c.agent, c.project_root, c.cwd`;

/**
 * The FROM and WHERE of the records matching `fts MATCH ?` under `where` (from `filterSql`),
 * each joined to its conversation, within the search budget.
 */
function matchesUnder(where: string): string {
  return `FROM fts
    JOIN records r ON r.id = fts.rowid
    JOIN conversations c ON c.id = r.conversation_id
    WHERE fts MATCH ? AND ${budgetCheck("fts.rowid")}${where}`;
}

/**
 * The first `limit` records matching `query` under `filters`, in the sort's order; for the
 * queries of tiers (`tierQueries`), each tier's matches ranked after the tier before.
 */
function ftsCandidates(
  store: HistoryStore,
  query: string | string[],
  filters: SearchFilters & { sort?: SearchSort },
  limit: number,
): Candidate[] {
  const { where, params } = filterSql(filters);
  const tiered = typeof query !== "string";
  const sql = tiered
    ? `
    SELECT ${CANDIDATE_COLUMNS}, ${TIER_SCORE} AS score, m.tier
    ${tiersUnder(query.length, where)}
    ORDER BY m.tier, ${ORDER.relevance}
    LIMIT ?`
    : `
    SELECT ${CANDIDATE_COLUMNS}, ${SCORE} AS score
    ${matchesUnder(where)}
    ORDER BY ${ORDER[filters.sort ?? "relevance"]}
    LIMIT ?`;
  return budgeted(
    store,
    sql,
    (statement) => sortedRows(statement, ...(tiered ? query : [query]), ...params, limit),
  ) as unknown as Candidate[];
}

/** SCORE over the matches of tiers (`tiersUnder`), whose bm25 is `m.bm`. */
const TIER_SCORE = SCORE.replace("bm25(fts)", "m.bm");

/**
 * The FROM and WHERE of the records matching any of `tiers` FTS5 queries (`fts MATCH ?` each,
 * in order) under `where`, each match `m` with its bm25 (`m.bm`) and its tier (`m.tier`).
 */
function tiersUnder(tiers: number, where: string): string {
  const arms = Array.from(
    { length: tiers },
    (_, i) =>
      `SELECT rowid AS id, bm25(fts) AS bm, ${i} AS tier FROM fts
       WHERE fts MATCH ? AND ${budgetCheck("rowid")}`,
  );
  return `FROM (${arms.join(" UNION ALL ")}) m
    JOIN records r ON r.id = m.id
    JOIN conversations c ON c.id = r.conversation_id
    WHERE 1${where}`;
}

/**
 * Every row of `statement`, a query that sorts or groups all it finds before its first row.
 * Iterated: node:sqlite's all() never returns when a function the statement calls throws (the
 * budget's). But its iterate() ends quietly when SQLite fails a step (a damaged page), as if no
 * row were left, and here a step can fail only in the first, which does all the work: a query
 * that gave no row takes that step again with get(), which throws what it met.
 */
function sortedRows(statement: StatementSync, ...args: SQLInputValue[]): unknown[] {
  const rows = [...statement.iterate(...args)];
  if (!rows.length) statement.get(...args);
  return rows;
}

/**
 * Up to `limit` records matching `query` under `filters`, most recently captured first (first
 * captured with the `oldest` sort), unranked: FTS5 walks its matches in record order, so rows
 * arrive as they are found and the ones found before the budget's phase ends are kept.
 */
function recentCandidates(
  store: HistoryStore,
  query: string,
  filters: SearchFilters & { sort?: SearchSort },
  limit: number,
  budget: SearchBudget,
): Candidate[] {
  const { where, params } = filterSql(filters);
  const sql = `
    SELECT ${CANDIDATE_COLUMNS}, ${SCORE} AS score
    ${matchesUnder(where)}
    ORDER BY fts.rowid${filters.sort === "oldest" ? "" : " DESC"}
    LIMIT ?`;
  const rows: Candidate[] = [];
  stoppable(budget, () =>
    budgeted(store, sql, (statement) => {
      for (const row of statement.iterate(query, ...params, limit)) {
        rows.push(row as unknown as Candidate);
      }
    }));
  return rows;
}

/** How many records match `query` under `filters` (each chunk of a long line counts). */
function ftsCount(store: HistoryStore, query: string, filters: SearchFilters): number {
  const { where, params } = filterSql(filters);
  // Without a filter the index alone answers; a filter needs the rows it names.
  const sql = where
    ? `SELECT count(*) AS n ${matchesUnder(where)}`
    : `SELECT count(*) AS n FROM fts WHERE fts MATCH ? AND ${budgetCheck("fts.rowid")}`;
  return budgeted(
    store,
    sql,
    (statement) => Number((statement.get(query, ...params) as { n: number }).n),
  );
}

/** Runs a statement the budget may abort; an aborted one is prepared afresh next time. */
function budgeted<T>(store: HistoryStore, sql: string, run: (statement: StatementSync) => T): T {
  try {
    return run(store.stmt(sql));
  } catch (err) {
    store.dropStmt(sql);
    throw err;
  }
}

function filterSql(filters: SearchFilters): { where: string; params: (string | number)[] } {
  const terms = filterTerms(filters);
  return {
    where: terms.map((term) => ` AND ${term.sql}`).join(""),
    params: terms.flatMap((term) => term.params),
  };
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
 * term every search has: a typed prompt from a history file is a user message where its
 * session's transcript is missing; where the transcript was captured, its own copy of the
 * prompt is the hit.
 */
function filterTerms(filters: SearchFilters): FilterTerm[] {
  return [
    { key: null, sql: "(r.kind != 'prompt' OR c.message_count = 0)", params: [] },
    ...tableTerms(filters, "store").map((term) => ({
      key: term.field,
      sql: term.sql,
      params: term.params as (string | number)[],
    })),
  ];
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

/**
 * A hit of `row`, its snippet around `terms`, and when `matchedOf` is given, how its words
 * matched (from what the snippet found of each term).
 */
function buildHit(
  row: Candidate,
  deriver: TextDeriver,
  terms: ReturnType<typeof queryTerms>,
  score: number,
  matchedOf?: (found: (string | null)[]) => Matched[],
): { hit: SearchHit; ranges: Snippet["ranges"] } {
  const full = deriver.recordById(row.id);
  const text = deriver.textOf(full);
  const snippet = makeSnippet(text, terms);
  return {
    hit: {
      conversation: row.key,
      title: row.title,
      record: row.id,
      agent: row.agent,
      project: row.project_root,
      cwd: row.cwd,
      timestamp: iso(row.ts),
      kind: row.kind,
      role: row.role,
      snippet: snippet.text,
      score: Math.round(-score * 1000) / 1000,
      ...(matchedOf ? { matched: matchedOf(snippet.found) } : {}),
    },
    ranges: snippet.ranges,
  };
}

/** What the literal scan looks for: substrings, combined as the query combines its terms. */
interface LiteralMatcher {
  /** True when lowercased `text` matches. */
  test(text: string): boolean;
  /** The lowercased substrings to mark in a snippet. */
  needles: string[];
  /** A needle every match holds, plain enough to look for in the raw bytes first. */
  prefilter: string | null;
}

/**
 * The literal scan of `query`: the whole query as one substring, or, for a query whose terms the
 * index cannot all answer (`terms`), each term a substring (a phrase's text, a prefix without
 * its `*`) combined by the query's `AND` (or a space), `OR`, `NOT` and parentheses, as FTS5
 * combines them. A query not made only of those is one substring.
 */
function literalMatcher(query: string, terms: boolean): LiteralMatcher {
  const whole = query.trim().toLowerCase();
  const tree = terms ? parseLiteral(query) : null;
  if (!tree || tree.kind === "term") {
    const needle = tree?.kind === "term" ? tree.text : whole;
    // A plain printable needle appears as-is in the JSON bytes when it appears in the text, so
    // SQLite can skip most records before any text is derived.
    const plain = /^[\x20-\x7e]+$/.test(needle) && !/["\\]/.test(needle);
    return {
      test: (text) => text.includes(needle),
      needles: [needle],
      prefilter: plain ? needle : null,
    };
  }
  const needles: string[] = [];
  const collect = (node: LiteralNode, negated: boolean) => {
    if (node.kind === "term") {
      if (!negated && !needles.includes(node.text)) needles.push(node.text);
    } else if (node.kind === "not") {
      collect(node.left, negated);
      collect(node.right, !negated);
    } else for (const part of node.parts) collect(part, negated);
  };
  collect(tree, false);
  return { test: (text) => matches(tree, text), needles, prefilter: null };
}

/** A literal query: terms combined by AND, OR and (binary) NOT. */
type LiteralNode =
  | { kind: "term"; text: string }
  | { kind: "and" | "or"; parts: LiteralNode[] }
  | { kind: "not"; left: LiteralNode; right: LiteralNode };

function matches(node: LiteralNode, text: string): boolean {
  switch (node.kind) {
    case "term":
      return text.includes(node.text);
    case "and":
      return node.parts.every((p) => matches(p, text));
    case "or":
      return node.parts.some((p) => matches(p, text));
    case "not":
      return matches(node.left, text) && !matches(node.right, text);
  }
}

/** A phrase (with the `*` of a phrase prefix), a parenthesis, or a bareword. */
const LITERAL_TOKEN = /"((?:[^"]|"")*)"\*?|([()])|([^\s()"]+)/gy;

/** The query's terms as the literal scan takes them: phrases' text, barewords without a `*`. */
function literalTerms(query: string): string[] {
  const terms: string[] = [];
  for (const token of literalTokens(query) ?? []) {
    if (token.kind === "term") terms.push(token.text);
  }
  return terms;
}

type LiteralToken = { kind: "term"; text: string } | { kind: "op"; op: string };

/** The query's tokens, or null when it has something else (an open quote, `NEAR`, a column). */
function literalTokens(query: string): LiteralToken[] | null {
  const tokens: LiteralToken[] = [];
  LITERAL_TOKEN.lastIndex = 0;
  let at = 0;
  const text = query.trim();
  while (at < text.length) {
    const space = /\s+/y;
    space.lastIndex = at;
    if (space.exec(text)) at = space.lastIndex;
    if (at >= text.length) break;
    LITERAL_TOKEN.lastIndex = at;
    const m = LITERAL_TOKEN.exec(text);
    if (!m) return null;
    at = LITERAL_TOKEN.lastIndex;
    if (m[1] !== undefined) tokens.push({ kind: "term", text: m[1].replaceAll('""', '"') });
    else if (m[2] !== undefined) tokens.push({ kind: "op", op: m[2] });
    else {
      const word = m[3]!;
      if (/^(AND|OR|NOT)$/.test(word)) tokens.push({ kind: "op", op: word });
      else if (/^NEAR\b/.test(word) || isColumnFilter(word)) return null;
      else tokens.push({ kind: "term", text: word.replace(/(?<=.)\*$/, "") });
    }
  }
  return tokens;
}

/** True for `word:…`, FTS5's column filter (checked in ASCII first: the Unicode class is slow to compile). */
function isColumnFilter(word: string): boolean {
  if (!word.includes(":")) return false;
  return isAscii(word) ? /^[A-Za-z0-9_]+:/.test(word) : /^[\p{L}\p{N}_]+:/u.test(word);
}

/** The literal query `query` as a tree (FTS5's precedence: NOT, then AND, then OR), or null. */
function parseLiteral(query: string): LiteralNode | null {
  const tokens = literalTokens(query);
  if (!tokens?.length) return null;
  let at = 0;
  const peek = () => tokens[at];
  const isOp = (op: string) => peek()?.kind === "op" && (peek() as { op: string }).op === op;
  const unit = (): LiteralNode | null => {
    const token = tokens[at++];
    if (!token) return null;
    if (token.kind === "term") return { kind: "term", text: token.text.toLowerCase() };
    if (token.op !== "(") return null;
    const inner = or();
    if (!inner || !isOp(")")) return null;
    at++;
    return inner;
  };
  const not = (): LiteralNode | null => {
    let left = unit();
    while (left && isOp("NOT")) {
      at++;
      const right = unit();
      if (!right) return null;
      left = { kind: "not", left, right };
    }
    return left;
  };
  const and = (): LiteralNode | null => {
    const first = not();
    if (!first) return null;
    const parts = [first];
    while (peek() && !isOp("OR") && !isOp(")")) {
      if (isOp("AND")) at++;
      const next = not();
      if (!next) return null;
      parts.push(next);
    }
    return parts.length === 1 ? first : { kind: "and", parts };
  };
  const or = (): LiteralNode | null => {
    const parts: LiteralNode[] = [];
    const first = and();
    if (!first) return null;
    parts.push(first);
    while (isOp("OR")) {
      at++;
      const next = and();
      if (!next) return null;
      parts.push(next);
    }
    return parts.length === 1 ? parts[0]! : { kind: "or", parts };
  };
  const tree = or();
  return tree && at === tokens.length ? tree : null;
}

/** Where `needles` are in `text` (lowercased), as sorted ranges that do not overlap. */
function literalRanges(text: string, needles: readonly string[]): Snippet["ranges"] {
  const lower = text.toLowerCase();
  const ranges: [number, number][] = [];
  for (const needle of needles) {
    if (!needle) continue;
    for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, at + needle.length)) {
      ranges.push([at, at + needle.length]);
    }
  }
  ranges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const merged: [number, number][] = [];
  for (const range of ranges) {
    const last = merged.at(-1);
    if (last && range[0] <= last[1]) last[1] = Math.max(last[1], range[1]);
    else merged.push(range);
  }
  return merged;
}

/**
 * A substring scan of the derived text, newest first (oldest with that sort), for queries the
 * index cannot answer: the page after `offset`, with snippets only for the hits on it. Stopped
 * by the budget, it gives the hits of the records it read.
 */
function literalSearch(
  store: HistoryStore,
  deriver: TextDeriver,
  options: SearchOptions,
  matcher: LiteralMatcher,
  page: { offset: number; limit: number },
  budget: SearchBudget,
): SearchResult {
  const { where, params } = filterSql(options);
  const prefilter = matcher.prefilter !== null;
  const sql = `
    SELECT r.*, c.key, c.title, c.agent, c.project_root, c.cwd
    FROM records r JOIN conversations c ON c.id = r.conversation_id
    WHERE ${budgetCheck("r.id")} AND (r.flags & ${FLAG_INDEXED}) != 0${
    prefilter ? ` AND ((r.flags & ${FLAG_ZSTD}) != 0 OR instr(lower(r.raw), ?) > 0)` : ""
  }${where}
    ORDER BY ${options.sort === "oldest" ? "r.id" : "r.id DESC"}`;
  const args = prefilter ? [matcher.prefilter, ...params] : params;
  const hits: SearchHit[] = [];
  const highlights: Snippet["ranges"][] = [];
  const terms = matcher.needles.map((text) => ({ text, prefix: false }));
  const end = page.offset + page.limit;
  let matched = 0;
  let more = false;
  const scan = (statement: StatementSync) => {
    for (const row of statement.iterate(...args) as Iterable<Candidate & RecordRow>) {
      budget.check();
      const text = deriver.textOf(row);
      if (!matcher.test(text.toLowerCase())) continue;
      if (matched++ < page.offset) continue;
      if (matched > end) {
        more = true;
        break;
      }
      const snippet = makeSnippet(text, terms);
      hits.push({
        conversation: row.key,
        title: row.title,
        record: row.id,
        agent: row.agent,
        project: row.project_root,
        cwd: row.cwd,
        timestamp: iso(row.ts),
        kind: row.kind,
        role: row.role,
        snippet: snippet.text,
        score: 0,
      });
      // A needle may hold punctuation the word matcher skips: marked directly.
      highlights.push(literalRanges(snippet.text, matcher.needles));
    }
  };
  const stopped = stoppable(budget, () => budgeted(store, sql, scan)) === null;
  const full = hits.length === page.limit;
  return {
    hits,
    highlights,
    mode: "literal",
    note: null,
    ftsQuery: null,
    next: more || (stopped && full) ? end : null,
    total: more || stopped ? null : page.offset + hits.length,
    stopped,
    stopNote: stopped ? budget.note(hits.length, "scanned") : null,
  };
}

/** One conversation of a grouped search: its best hit, and how many hits it has. */
export interface SearchGroup extends SearchHit {
  /** Hits in this conversation (each chunk of a line longer than 64 KiB counts). */
  hits: number;
  /**
   * With `perGroup` over 1: the conversation's best hits, best first (the first is the group's
   * own), and where each one's matches are in its snippet.
   */
  top?: { hits: SearchHit[]; highlights: Snippet["ranges"][] };
}

/** Options of a grouped search. */
export interface GroupOptions extends SearchOptions {
  /** Best hits kept per conversation (default 1: the group's own). */
  perGroup?: number;
}

/** A page of conversations, best first (or by their newest or oldest hit). */
export interface GroupResult extends PageFacts {
  groups: SearchGroup[];
}

/** The most hits a literal scan reads to group them (it has no index to count with). */
const LITERAL_GROUP_SCAN = 10_000;

/** How many of the most recently captured matches a grouped search stopped in time groups. */
const RECENT_GROUP_SCAN = 2000;

/**
 * Searches like `search`, one result per conversation: its best hit (best ranked, whatever the
 * sort), how many hits it has, and the page of conversations after `offset` (in conversations),
 * ordered by best hit, newest hit or oldest hit. Past its budget, the conversations of the
 * matches found in time, as `search` gives them (newest captured first when not ranked).
 */
export function searchGroups(
  store: HistoryStore,
  adapters: readonly TextReader[],
  redact: Redactor,
  options: GroupOptions,
  now?: () => number,
): GroupResult {
  return soundRead(
    store,
    () => foundInTime(groupsWithin(store, adapters, redact, asIndexed(options), now), "groups"),
  );
}

function groupsWithin(
  store: HistoryStore,
  adapters: readonly TextReader[],
  redact: Redactor,
  options: GroupOptions,
  now?: () => number,
): GroupResult {
  const limit = Math.max(1, Math.min(options.limit ?? 20, 10_000));
  const perGroup = Math.max(1, Math.min(options.perGroup ?? 1, 50));
  const offset = options.offset ?? 0;
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new RangeError(`Expected an offset of zero or more conversations: got "${offset}"`);
  }
  if (!options.query.trim()) throw new RangeError("The search query is empty");
  const budget = new SearchBudget(options.budgetMs ?? DEFAULT_BUDGET_MS, options.startedAt, now);
  const release = useBudget(store, budget);
  try {
    const deriver = new TextDeriver(store, adapters, redact);
    // The same query forms as `search`, so grouping finds what the hits list finds.
    const unindexed = whyNotIndexed(store, options.query);
    for (const typed of unindexed ? [] : ftsForms(options.query)) {
      if (!isFtsSyntax(typed)) continue;
      checkBounds(typed);
      const forgiveness = new Forgiveness(
        store,
        typed,
        options.forgive ?? "exact",
        budget,
        options.query,
      );
      const scope = { store, deriver, options, budget, offset, limit, forgiveness };
      try {
        const found = runLevels(
          forgiveness,
          options.query,
          (tiers) => groupPage(scope, tiers, perGroup, redact),
        );
        return found.forgiven ? { ...found, forgiven: mapStrings(found.forgiven, redact) } : found;
      } catch (err) {
        if (isFtsSyntaxError(err)) continue;
        throw err;
      }
    }
    budget.literal = true;
    budget.endBefore(0);
    const matcher = literalMatcher(options.query, unindexed !== null);
    const scan = { offset: 0, limit: LITERAL_GROUP_SCAN };
    const found = literalSearch(store, deriver, options, matcher, scan, budget);
    return groupFound(
      found.hits.map((hit, i) => ({
        conversation: hit.conversation,
        row: hit,
        built: { hit, ranges: found.highlights[i] ?? [] },
      })),
      { offset, limit, perGroup, complete: !found.stopped && found.next === null },
      null,
      budget,
      {
        mode: "literal",
        order: "scanned",
        redact,
        stopped: found.stopped,
        note: `${unindexed ?? "the query is not valid FTS5 syntax"}; used a literal substring scan`,
        ftsQuery: null,
      },
    );
  } finally {
    release();
  }
}

/**
 * The page of conversations of `tiers` (as `ftsPage` ranks them), each group's hits through the
 * gate.
 */
function groupPage(
  scope: PageScope,
  tiers: readonly Tier[],
  perGroup: number,
  redact: Redactor,
): LevelPage<GroupResult> {
  const { store, deriver, options, budget, offset, limit, forgiveness } = scope;
  const widest = tiers.at(-1)!;
  const candidateQuery = cjkQuery(widest.query);
  const relevance = (options.sort ?? "relevance") === "relevance";
  const matching = relevance && tiers.length > 1 ? tierQueries(tiers) : candidateQuery;
  const terms = options.forgive === undefined
    ? queryTerms(options.query)
    : forgiveness.terms(widest.level);
  const matchedOf = options.forgive === undefined
    ? undefined
    : (found: (string | null)[]) => forgiveness.matched(terms as SnippetTerm[], found);
  const build = (row: Candidate) => buildHit(row, deriver, terms, row.score, matchedOf);
  const reserve = fallbackReserveMs(budget.ms);
  budget.endBefore(reserve);
  const rows = stoppable(
    budget,
    () => ftsGroups(store, matching, options, { offset, limit: limit + 1, perGroup }),
  );
  if (rows?.length === 0 && offset === 0 && tiers[0]!.level === 0) nothingFound(store);
  // Past the last page, whether there was a first one.
  const found = rows === null || rows.length > 0 ||
    (offset > 0 && stoppable(budget, () => matchesAny(store, candidateQuery, options)) !== false);
  if (rows === null) {
    budget.endBefore(reserve / 2);
    const recent = recentCandidates(store, candidateQuery, options, RECENT_GROUP_SCAN, budget);
    budget.endBefore(0);
    const result = groupFound(
      recent.map((row) => ({ conversation: row.key, row, built: null })),
      { offset, limit, perGroup, complete: false },
      build,
      budget,
      { mode: "fts", order: "recent", redact, note: null, ftsQuery: candidateQuery },
    );
    return { found, best: 0, result };
  }
  budget.endBefore(0);
  // Rows come group by group, best hit first.
  const byGroup: GroupRow[][] = [];
  for (const row of rows) {
    if (row.rank === 1) byGroup.push([]);
    byGroup.at(-1)?.push(row);
  }
  const page = byGroup.slice(0, limit);
  const built: { hit: SearchHit; ranges: Snippet["ranges"] }[][] = [];
  for (const group of page) {
    if (budget.spent()) break;
    built.push(group.map((row) => {
      const b = build(row);
      return { hit: throughGate(b.hit, redact), ranges: b.ranges };
    }));
  }
  const stopped = built.length < page.length;
  // Found only wider than typed, the widest tier found is what the page searched.
  const best = rows[0]?.tier ? rows.reduce((most, row) => Math.max(most, row.tier ?? 0), 0) : 0;
  return {
    found,
    best: tiers[best]!.level,
    result: {
      groups: built.map((group, i) => ({
        ...group[0]!.hit,
        score: page[i]![0]!.best,
        hits: page[i]![0]!.hits,
        ...(perGroup > 1
          ? { top: { hits: group.map((b) => b.hit), highlights: group.map((b) => b.ranges) } }
          : {}),
      })),
      highlights: built.map((group) => group[0]!.ranges),
      mode: "fts",
      note: null,
      ftsQuery: candidateQuery,
      next: byGroup.length > limit && !stopped ? offset + limit : null,
      total: rows[0]?.total ?? (offset === 0 ? 0 : null),
      stopped,
      stopNote: stopped ? budget.note(built.length, "ranked", "conversation") : null,
    },
  };
}

/** Whether `query` matches any record under `filters`. */
function matchesAny(store: HistoryStore, query: string, filters: SearchFilters): boolean {
  const { where, params } = filterSql(filters);
  const sql = `SELECT 1 ${matchesUnder(where)} LIMIT 1`;
  return budgeted(store, sql, (statement) => statement.get(query, ...params) !== undefined);
}

/**
 * Groups matches (in the order given: each conversation's first is its shown hit) into the page
 * of conversations after `page.offset`, building the shown hits (up to `page.perGroup` of each,
 * in that order) with `build` while the budget lasts. `complete` says that every match was found
 * (then the count of conversations is known).
 */
function groupFound<R>(
  found: {
    conversation: string;
    row: R;
    built: { hit: SearchHit; ranges: Snippet["ranges"] } | null;
  }[],
  page: { offset: number; limit: number; perGroup: number; complete: boolean },
  build: ((row: R) => { hit: SearchHit; ranges: Snippet["ranges"] }) | null,
  budget: SearchBudget,
  how: {
    mode: "fts" | "literal";
    order: "recent" | "scanned";
    redact: Redactor;
    stopped?: boolean;
    note: string | null;
    ftsQuery: string | null;
  },
): GroupResult {
  const byConversation = new Map<string, { items: (typeof found)[number][]; hits: number }>();
  for (const item of found) {
    const seen = byConversation.get(item.conversation);
    if (seen) {
      seen.hits++;
      if (seen.items.length < page.perGroup) seen.items.push(item);
    } else byConversation.set(item.conversation, { items: [item], hits: 1 });
  }
  const all = [...byConversation.values()];
  const shown = all.slice(page.offset, page.offset + page.limit);
  const groups: SearchGroup[] = [];
  const highlights: Snippet["ranges"][] = [];
  let stopped = how.stopped ?? how.order === "recent";
  for (const { items, hits } of shown) {
    const top: { hit: SearchHit; ranges: Snippet["ranges"] }[] = [];
    for (const item of items) {
      let built = item.built;
      if (!built) {
        if (budget.spent() || !build) break;
        built = build(item.row);
      }
      top.push({ hit: throughGate(built.hit, how.redact), ranges: built.ranges });
    }
    if (!top.length) {
      stopped = true;
      break;
    }
    groups.push({
      ...top[0]!.hit,
      hits,
      ...(page.perGroup > 1
        ? { top: { hits: top.map((t) => t.hit), highlights: top.map((t) => t.ranges) } }
        : {}),
    });
    highlights.push(top[0]!.ranges);
  }
  return {
    groups,
    highlights,
    mode: how.mode,
    note: how.note,
    ftsQuery: how.ftsQuery,
    next: all.length > page.offset + page.limit && groups.length === shown.length
      ? page.offset + page.limit
      : null,
    total: page.complete && !stopped ? all.length : null,
    stopped,
    stopNote: stopped ? budget.note(groups.length, how.order, "conversation") : null,
  };
}

/** Each group sort as an ORDER BY over the grouped conversations. */
const GROUP_ORDER: Record<SearchSort, string> = {
  relevance: "g.best, g.conversation_id DESC",
  newest: "g.newest IS NULL, g.newest DESC, g.conversation_id DESC",
  oldest: "g.oldest IS NULL, g.oldest, g.conversation_id",
};

/** One of a group's best hits (`rank` 1 is the best), with its group's figures. */
type GroupRow = Candidate & { hits: number; total: number; best: number; rank: number };

/**
 * The page of conversations with a hit, each with its hit count and its `perGroup` best-ranked
 * records, best first, group by group.
 */
function ftsGroups(
  store: HistoryStore,
  query: string | string[],
  filters: SearchFilters & { sort?: SearchSort },
  page: { offset: number; limit: number; perGroup: number },
): GroupRow[] {
  const { where, params } = filterSql(filters);
  // Queries of tiers (`tierQueries`): a conversation ranks by its best tier, then its best
  // score there; its hits likewise.
  const tiered = typeof query !== "string";
  const order = tiered
    ? `g.tier, ${GROUP_ORDER.relevance}`
    : GROUP_ORDER[filters.sort ?? "relevance"];
  const sql = `
    WITH matched AS MATERIALIZED (
      SELECT r.id, r.conversation_id, r.ts, ${
    tiered
      ? `m.tier, ${TIER_SCORE} AS score ${tiersUnder(query.length, where)}`
      : `${SCORE} AS score
      ${matchesUnder(where)}`
  }
    ),
    g AS (
      SELECT conversation_id, count(*) AS hits, ${
    tiered
      ? `min(tier) AS tier, min(tier * ${TIER_STEP} + score) - min(tier) * ${TIER_STEP} AS best`
      : "min(score) AS best"
  }, max(ts) AS newest, min(ts) AS oldest
      FROM matched GROUP BY conversation_id
    ),
    paged AS (
      SELECT g.*, count(*) OVER () AS total FROM g
      ORDER BY ${order}
      LIMIT ? OFFSET ?
    ),
    ranked AS (
      SELECT m.id, m.conversation_id, m.score,
             row_number() OVER (PARTITION BY m.conversation_id ORDER BY ${
    tiered ? "m.tier, " : ""
  }m.score, m.id DESC) AS rank
      FROM matched m WHERE m.conversation_id IN (SELECT conversation_id FROM paged)
    )
    SELECT ${CANDIDATE_COLUMNS}, k.score, k.rank, p.best, p.hits, p.total${tiered ? ", p.tier" : ""}
    FROM paged p
    JOIN ranked k ON k.conversation_id = p.conversation_id AND k.rank <= ?
    JOIN records r ON r.id = k.id
    JOIN conversations c ON c.id = p.conversation_id
    ORDER BY ${order.replaceAll("g.", "p.")}, k.rank`;
  return budgeted(
    store,
    sql,
    (statement) =>
      sortedRows(
        statement,
        ...(tiered ? query : [query]),
        ...params,
        page.limit,
        page.offset,
        page.perGroup,
      ),
  ) as unknown as GroupRow[];
}

/** Far more than any score: a tier's scores, so offset, sort after every score of the tier before. */
const TIER_STEP = 1e9;

/**
 * For a search that found nothing: the query with each bare word that matches no indexed word
 * but begins some (`marm` for `marmot`) written as a prefix (`marm*`), when that query finds
 * something under the same filters; else null. Words shorter than a prefix may be are left.
 * Looks within `budget` (default: a search's), and gives null when it runs out first: a common
 * word under a narrow filter has every match of its prefix read.
 */
export function prefixSuggestion(
  store: HistoryStore,
  options: SearchOptions,
  budget: SearchBudget = new SearchBudget(DEFAULT_BUDGET_MS),
): string | null {
  const release = useBudget(store, budget);
  try {
    return soundRead(store, () => suggestPrefix(store, asIndexed(options), budget));
  } finally {
    release();
  }
}

function suggestPrefix(
  store: HistoryStore,
  options: SearchOptions,
  budget: SearchBudget,
): string | null {
  const { where, params } = filterSql(options);
  const sql = `SELECT 1 ${matchesUnder(where)} LIMIT 1`;
  /** Whether `query` finds anything, or null when the budget ran out first. */
  const probe = (query: string): boolean | null => {
    try {
      return stoppable(
        budget,
        () => budgeted(store, sql, (statement) => statement.get(query, ...params) !== undefined),
      );
    } catch (err) {
      if (isFtsSyntaxError(err)) return false;
      throw err;
    }
  };
  const words: string[] = [];
  for (const word of prefixCandidates(options.query, (w) => /^(AND|OR|NOT|NEAR)$/.test(w))) {
    const whole = probe(word);
    if (whole === null) return null;
    if (whole) continue;
    const prefix = probe(`${word}*`);
    if (prefix === null) return null;
    if (prefix) words.push(word);
  }
  if (!words.length) return null;
  const suggested = withPrefixes(options.query, new Set(words));
  if (!isFtsSyntax(suggested)) return null;
  try {
    checkBounds(suggested);
  } catch (err) {
    if (err instanceof SearchLimitError) return null;
    throw err;
  }
  return probe(suggested) ? suggested : null;
}

/** A query's words and quoted phrases, each a token as written (operators too). */
const QUERY_TOKEN = /"[^"]*"|[^\s()"]+/g;

/**
 * The bare words of `query` (letters, digits and `_`; not an operator, which `isOperator` tells)
 * long enough to be a prefix: the words a `word*` suggestion may write as prefixes.
 */
export function prefixCandidates(query: string, isOperator: (word: string) => boolean): string[] {
  return [...query.matchAll(QUERY_TOKEN)].map((m) => m[0]).filter((token) =>
    /^[\p{L}\p{N}_]+$/u.test(token) && !isOperator(token) &&
    [...token].length >= MIN_PREFIX_CHARS
  );
}

/** `query` with each bare word of `words` written as a prefix (`marm` as `marm*`). */
export function withPrefixes(query: string, words: ReadonlySet<string>): string {
  return query.replace(QUERY_TOKEN, (token) => words.has(token) ? `${token}*` : token);
}

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
    FROM fts JOIN records r ON r.id = fts.rowid JOIN conversations c ON c.id = r.conversation_id
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
      JOIN records r ON r.id = fts.rowid
      JOIN conversations c ON c.id = r.conversation_id
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
