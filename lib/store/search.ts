// Full-text search over the history store: FTS5 with bm25 ranking that prefers answers to the
// questions that asked for them, every filter of `search`, snippets derived from raw bytes, and
// a literal substring scan when the index cannot answer the query (not FTS5 syntax, only
// symbols, or CJK the index does not hold: see `cjk.ts` for CJK words). Paged here, and every hit
// through the gate here, so the CLI, the dashboard and the search workers use it as it is.
// Every search is bounded: its query by `_search_bounds.ts`, its time by `_search_budget.ts`.

import { mapStrings, type Redactor } from "../gate.ts";
import type { Adapter, Agent, Kind, Role } from "../sources/adapter.ts";
import type { StatementSync } from "node:sqlite";
import { HistoryStore } from "./db.ts";
import { FLAG_INDEXED, FLAG_ZSTD } from "./schema.ts";
import { iso, type RecordRow, TextDeriver } from "./records.ts";
import { makeSnippet, queryTerms, type Snippet, tokenize } from "./text.ts";
import { cjkIndexReady, cjkQuery, hasCjk, hasLoneCjkLetter } from "./cjk.ts";
import { checkBounds, isFtsSyntax, isFtsSyntaxError } from "./_search_bounds.ts";
import { budgetCheck, DEFAULT_BUDGET_MS, SearchBudget, useBudget } from "./_search_budget.ts";

export {
  MAX_NEAR_DISTANCE,
  MAX_PREFIXES,
  MAX_TERMS,
  MIN_PREFIX_CHARS,
  SearchLimitError,
} from "./_search_bounds.ts";
export { budgetMsFrom, DEFAULT_BUDGET_MS, SearchStoppedError } from "./_search_budget.ts";

/** Narrowing a search. Every field is optional; an empty object searches everything. */
export interface SearchFilters {
  /** Canonical project root (see `projectOf`). */
  project?: string;
  agent?: Agent;
  /** Internal conversation row id (resolve user input with `findConversation`). */
  conversationId?: number;
  kind?: Kind;
  role?: Role;
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
  /** Include subagent conversations (default true). */
  subagents?: boolean;
}

export interface SearchOptions extends SearchFilters {
  query: string;
  /** Hits on the page (default 20, at most 10,000). */
  limit?: number;
  /** Ranked hits to skip before the page (default 0): the `next` of the page before. */
  offset?: number;
  /** How long the search may take before it stops with SearchStoppedError (default 1200 ms). */
  budgetMs?: number;
  /** When the user asked (epoch ms; default: now): the budget counts from here. */
  startedAt?: number;
}

/** One hit, with the fields of `search --json`. */
export interface SearchHit {
  conversation: string;
  record: number;
  agent: Agent;
  project: string | null;
  cwd: string | null;
  timestamp: string | null;
  kind: Kind;
  role: Role | null;
  snippet: string;
  score: number;
}

export interface SearchResult {
  /** The page of hits, every string through the gate. */
  hits: SearchHit[];
  /** Where each hit's matches are in its snippet, for highlighting (same order as hits). */
  highlights: Snippet["ranges"][];
  /** `fts`, or `literal` when the index could not answer the query (`note` says why). */
  mode: "fts" | "literal";
  /** Why the search was a literal substring scan (null for `fts`), for the user to read. */
  note: string | null;
  /** The FTS5 query actually run (after quoting punctuated words). */
  ftsQuery: string | null;
  /** The `offset` of the next page, or null when no hit follows this page. */
  next: number | null;
}

interface Candidate {
  id: number;
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
  agent: Agent;
  project_root: string | null;
  cwd: string | null;
}

/**
 * Searches the store; see the file comment. Returns the page of `limit` hits after `offset`, each
 * passed through `redact` whole (snippet, conversation, project, cwd), and where the next page
 * starts. Never writes and never calls the network. Throws SearchLimitError for a query over a
 * bound (before any work) and SearchStoppedError when the budget is spent; `now` is the
 * budget's clock (epoch ms).
 */
export function search(
  store: HistoryStore,
  adapters: readonly Adapter[],
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
  // One hit past the page says whether another page follows.
  const window = offset + limit + 1;
  const budget = new SearchBudget(options.budgetMs ?? DEFAULT_BUDGET_MS, options.startedAt, now);
  const release = useBudget(store, budget);
  try {
    const deriver = new TextDeriver(store, adapters, redact);
    const terms = queryTerms(options.query);
    const unindexed = whyNotIndexed(store, options.query);
    for (const typed of unindexed ? [] : ftsForms(options.query)) {
      if (!isFtsSyntax(typed)) continue;
      checkBounds(typed);
      const candidateQuery = cjkQuery(typed);
      budget.check();
      let rows: Candidate[];
      try {
        rows = withBudget(
          budget,
          () => ftsCandidates(store, candidateQuery, options, Math.min(window * 4, window + 400)),
        );
      } catch (err) {
        // The empty table parses as the store's does; this only keeps the old way safe.
        if (isFtsSyntaxError(err)) continue;
        throw err;
      }
      const ranked = preferAnswers(dedupeLines(store, rows, budget)).slice(0, window);
      const built = ranked.slice(offset, offset + limit).map((row) => {
        budget.check();
        return buildHit(row, deriver, terms, row.score);
      });
      return {
        hits: built.map((b) => throughGate(b.hit, redact)),
        highlights: built.map((b) => b.ranges),
        mode: "fts",
        note: null,
        ftsQuery: candidateQuery,
        next: ranked.length > offset + limit ? offset + limit : null,
      };
    }
    budget.literal = true;
    budget.check();
    const found = withBudget(
      budget,
      () => literalSearch(store, deriver, options, { offset, limit }, budget),
    );
    return {
      ...found,
      hits: found.hits.map((hit) => throughGate(hit, redact)),
      note: `${unindexed ?? "the query is not valid FTS5 syntax"}; used a literal substring scan`,
    };
  } finally {
    release();
  }
}

/**
 * `hit` with every string passed through the gate. The snippet was cut from redacted text, and
 * is passed again so that a cut cannot leave part of a secret the whole text hid.
 */
function throughGate(hit: SearchHit, redact: Redactor): SearchHit {
  return mapStrings(hit, (text) => redact(text));
}

/**
 * Runs `fn`, turning a statement the budget aborted into the budget's own error (whatever SQLite
 * made of the exception thrown inside it).
 */
function withBudget<T>(budget: SearchBudget, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (budget.spent()) throw budget.stopped();
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
    if (/^[\p{L}\p{N}_\u0080-\uffff]+$/u.test(body)) return token;
    return `"${body.replaceAll('"', '""')}"${star}`;
  });
  return quoted === query ? [query] : [query, quoted];
}

const ANSWER_BOOST = 1.25;

function ftsCandidates(
  store: HistoryStore,
  query: string,
  filters: SearchFilters,
  limit: number,
): Candidate[] {
  const { where, params } = filterSql(filters);
  const sql = `
    SELECT r.id, r.conversation_id, r.source_id, r.generation, r.offset, r.seq, r.ts, r.kind,
           r.role, r.flags, c.key, c.agent, c.project_root, c.cwd,
           bm25(fts) * CASE WHEN (r.kind = 'message' AND r.role = 'assistant')
                              OR r.kind = 'summary' THEN ${ANSWER_BOOST} ELSE 1.0 END AS score
    FROM fts
    JOIN records r ON r.id = fts.rowid
    JOIN conversations c ON c.id = r.conversation_id
    WHERE fts MATCH ? AND ${budgetCheck("fts.rowid")}${where}
    ORDER BY score, r.id DESC
    LIMIT ?`;
  // Iterated: node:sqlite's all() never returns when a function called by the statement throws.
  return budgeted(
    store,
    sql,
    (statement) => [...statement.iterate(query, ...params, limit)],
  ) as unknown as Candidate[];
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
  let where = "";
  const params: (string | number)[] = [];
  const add = (clause: string, value: string | number) => {
    where += ` AND ${clause}`;
    params.push(value);
  };
  if (filters.project !== undefined) add("c.project_root = ?", filters.project);
  if (filters.agent !== undefined) add("c.agent = ?", filters.agent);
  if (filters.conversationId !== undefined) add("c.id = ?", filters.conversationId);
  if (filters.kind !== undefined) add("r.kind = ?", filters.kind);
  if (filters.role !== undefined) add("r.role = ?", filters.role);
  if (filters.since !== undefined) add("r.ts >= ?", filters.since);
  if (filters.until !== undefined) add("r.ts < ?", filters.until);
  if (filters.subagents === false) where += " AND c.subagent = 0";
  return { where, params };
}

/** Keeps the best-ranked chunk of each long record (its chunks are indexed separately). */
function dedupeLines(store: HistoryStore, rows: Candidate[], budget: SearchBudget): Candidate[] {
  const seen = new Set<string>();
  const kept: Candidate[] = [];
  const head = store.stmt(
    `SELECT offset FROM records WHERE source_id = ? AND generation = ? AND offset <= ? AND seq = 0
     ORDER BY offset DESC LIMIT 1`,
  );
  for (const row of rows) {
    budget.check();
    let lineOffset = row.offset;
    if (row.seq > 0) {
      const found = head.get(row.source_id, row.generation, row.offset) as
        | { offset: number }
        | undefined;
      lineOffset = found?.offset ?? row.offset;
    }
    const key = `${row.source_id}:${row.generation}:${lineOffset}`;
    if (seen.has(key)) continue;
    seen.add(key);
    kept.push(row);
  }
  return kept;
}

/**
 * Moves each answer (assistant message or summary) above the question that asked for it: the
 * nearest earlier user message hit in the same conversation, when that question ranks higher.
 */
function preferAnswers(rows: Candidate[]): Candidate[] {
  const order = [...rows];
  const isAnswer = (r: Candidate) =>
    (r.kind === "message" && r.role === "assistant") || r.kind === "summary";
  const isQuestion = (r: Candidate) => r.kind === "message" && r.role === "user";
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

function buildHit(
  row: Candidate,
  deriver: TextDeriver,
  terms: ReturnType<typeof queryTerms>,
  score: number,
): { hit: SearchHit; ranges: Snippet["ranges"] } {
  const full = deriver.recordById(row.id);
  const text = deriver.textOf(full);
  const snippet = makeSnippet(text, terms);
  return {
    hit: {
      conversation: row.key,
      record: row.id,
      agent: row.agent,
      project: row.project_root,
      cwd: row.cwd,
      timestamp: iso(row.ts),
      kind: row.kind,
      role: row.role,
      snippet: snippet.text,
      score: Math.round(-score * 1000) / 1000,
    },
    ranges: snippet.ranges,
  };
}

/**
 * A substring scan of the derived text, newest first, for queries FTS5 cannot parse: the page
 * after `offset`, with snippets only for the hits on it.
 */
function literalSearch(
  store: HistoryStore,
  deriver: TextDeriver,
  options: SearchOptions,
  page: { offset: number; limit: number },
  budget: SearchBudget,
): SearchResult {
  const needle = options.query.trim().toLowerCase();
  const { where, params } = filterSql(options);
  // A plain printable needle appears as-is in the JSON bytes when it appears in the text, so
  // SQLite can skip most records before any text is derived.
  const prefilter = /^[\x20-\x7e]+$/.test(needle) && !/["\\]/.test(needle);
  const sql = `
    SELECT r.*, c.key, c.agent, c.project_root, c.cwd
    FROM records r JOIN conversations c ON c.id = r.conversation_id
    WHERE ${budgetCheck("r.id")} AND (r.flags & ${FLAG_INDEXED}) != 0${
    prefilter ? ` AND ((r.flags & ${FLAG_ZSTD}) != 0 OR instr(lower(r.raw), ?) > 0)` : ""
  }${where}
    ORDER BY r.id DESC`;
  const args = prefilter ? [needle, ...params] : params;
  const hits: SearchHit[] = [];
  const highlights: Snippet["ranges"][] = [];
  const terms = [{ text: needle, prefix: false }];
  const end = page.offset + page.limit;
  let matched = 0;
  let more = false;
  const scan = (statement: StatementSync) => {
    for (const row of statement.iterate(...args) as Iterable<Candidate & RecordRow>) {
      budget.check();
      const text = deriver.textOf(row);
      if (!text.toLowerCase().includes(needle)) continue;
      if (matched++ < page.offset) continue;
      if (matched > end) {
        more = true;
        break;
      }
      const snippet = makeSnippet(text, terms);
      // The literal needle may hold punctuation the word matcher skips: mark it directly.
      const at = snippet.text.toLowerCase().indexOf(needle);
      hits.push({
        conversation: row.key,
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
      highlights.push(at >= 0 ? [[at, at + needle.length]] : []);
    }
  };
  budgeted(store, sql, scan);
  return {
    hits,
    highlights,
    mode: "literal",
    note: null,
    ftsQuery: null,
    next: more ? end : null,
  };
}
