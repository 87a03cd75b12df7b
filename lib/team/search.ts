// Searching and paging the team database: PostgreSQL's own full-text search (`websearch` syntax
// over the 'simple' configuration, ranked with ts_rank), and a substring match where words cannot
// find the text: queries with CJK (the 'simple' parser keeps a CJK run whole, so a word inside a
// sentence is no token of its own), which `pg_trgm`'s index of the text's CJK words answers, and
// symbols the parser drops, which no index can (the text is read within the budget). Every
// search is bounded as a local one is: its query by the same bounds (`checkBounds`), its time by
// the same budget, which PostgreSQL enforces (`statement_timeout` in the search's transaction).
// Every hit says which machine it came from.

import type { PendingQuery, Row as SqlRow, Sql, TransactionSql } from "postgres";
import type { Forgive, Forgiven, Matched } from "../store/forgive.ts";
import { loadStemmer } from "../store/vocab.ts";
import {
  spellingsIn,
  TEAM_LEVELS,
  teamForgiven,
  type TeamLevel,
  teamMatched,
  type TeamWord,
  teamWords,
  widenTsquery,
} from "./forgive.ts";
import type { Redactor } from "../gate/secrets.ts";
import type { Kind, Role } from "../sources/adapter.ts";
import type { Agent } from "../agents.ts";
import { FILTERS, type FilterSpec, filterTerms, type SearchFilters } from "../filters_table.ts";
import { hasCjk } from "../store/cjk.ts";
import { withoutInvisible } from "../invisible.ts";
import { formatCount } from "../format.ts";
import {
  ConversationNotFoundError,
  isCompleteId,
  MAX_ID_CHARS,
  onlyMatch,
} from "../store/conversations.ts";
import {
  ANSWER_BOOST,
  checkBounds,
  DEFAULT_BUDGET_MS,
  INJECTED_WEIGHT,
  prefixCandidates,
  SearchBudget,
  type SearchHit,
  SearchLimitError,
  withPrefixes,
} from "../store/search.ts";

/**
 * A team search: a local search's filters (but a conversation), and a machine. Projects are
 * pushed as shown (through the gate, see `push.ts`), so `project`, a canonical root, is matched
 * through `redact` too, and a root holding a secret is never sent in a query.
 */
export interface TeamSearchOptions extends Omit<SearchFilters, "conversationId"> {
  query: string;
  machine?: string;
  limit?: number;
  offset?: number;
  /** How long the search may take before it stops with SearchStoppedError (default 1200 ms). */
  budgetMs?: number;
  /** When the user asked (epoch ms; default: now): the budget counts from here. */
  startedAt?: number;
  /**
   * As a local search's (`lib/store/forgive.ts`): `fallback` widens a query that finds nothing
   * (prefixes, forms, spellings: `forgive.ts` here); `typing` does the same; default `exact`.
   * With any value given, each hit says how its words matched.
   */
  forgive?: Forgive;
}

/**
 * One hit of `search --team`: a local hit's fields (`search --json`'s), `record` being the
 * record's id in the team database (what `show --team --after` takes), and the machine.
 */
export interface TeamHit extends SearchHit {
  machine: string;
}

export interface TeamSearchResult {
  hits: TeamHit[];
  /** `fts`, or `substring` when words cannot find the query (CJK, symbols): `note` says why. */
  mode: "fts" | "substring";
  note: string | null;
  /** The `offset` of the next page, or null when no hit follows this page. */
  next: number | null;
  /**
   * With no hit at all: the query with each word that matches nothing but begins indexed words
   * written as a prefix (`cormo*`), when that finds something, as a local search suggests it;
   * else null.
   */
  suggestion: string | null;
  /** When the words as typed found nothing: what was searched instead, as a local search says. */
  forgiven?: Forgiven;
}

const SNIPPET_CHARS = 160;

/**
 * How a text Codex injected as a user message starts (`isCodexContext`): a tag or AGENTS.md's
 * heading, after the frames of any image pasted first. Tested on its first 2 KiB only.
 */
export const CONTEXT_START = String.raw`^\s*((<image name=\[Image #[0-9]+\][^>]*>|</image>)\s*)*` +
  String.raw`(<(?!image name=\[Image #|/image>)|# AGENTS\.md instructions)`;

/**
 * ts_rank's weight, as the local search weights bm25: answers up, and what an agent told the
 * model down (developer and system messages, and the AGENTS.md and environment Codex sends as
 * user messages, told from the text pushed). The text decides, so every row is weighed alike
 * whenever it was pushed, and the team schema needs no column. Which agent a user message is of,
 * its conversation's key says (`<agent>:<native id>`): looking the conversation up read a page of
 * its table for each of hundreds of user messages a search ranks.
 */
const RANK_WEIGHT = `CASE
  WHEN r.kind = 'message' AND (r.role IN ('developer', 'system') OR (r.role = 'user'
    AND r.conversation_key LIKE 'codex:%'
    AND substr(r.text, 1, 2048) ~ '${CONTEXT_START}'))
    THEN ${INJECTED_WEIGHT}
  WHEN (r.kind = 'message' AND r.role = 'assistant') OR r.kind = 'summary' THEN ${ANSWER_BOOST}
  ELSE 1.0 END`;

/**
 * The most matches a team search ranks: the most recently pushed, when more match (the search
 * says so). Ranking reads each candidate's tsvector; this many take tens of milliseconds.
 */
export const RANK_CANDIDATES = 2000;

/** PostgreSQL's SQLSTATE for a statement cancelled by statement_timeout (query_canceled). */
const QUERY_CANCELED = "57014";

/**
 * Searches the team database; every string of a hit passes `redact` (this user's labels too).
 * Throws SearchLimitError for a query over a bound (before any work) and SearchStoppedError when
 * the budget is spent; `now` is the budget's clock (epoch ms).
 */
export async function teamSearch(
  sql: Sql,
  redact: Redactor,
  options: TeamSearchOptions,
  now: () => number = Date.now,
): Promise<TeamSearchResult> {
  // Its words as a reader sees them, as the text was indexed (0005_words_as_read in db.ts).
  const query = withoutInvisible(options.query).trim();
  if (!query) throw new RangeError("The search query is empty");
  checkBounds(query);
  const limit = Math.max(1, Math.min(options.limit ?? 20, 1000));
  const offset = Math.max(0, options.offset ?? 0);
  const budget = new SearchBudget(options.budgetMs ?? DEFAULT_BUDGET_MS, options.startedAt, now);
  const filters = filterSql(sql, redact, options);
  const columns = sql`r.machine, r.id, r.conversation_key, r.ts, r.kind, r.role, r.text, c.title,
    c.agent, c.project, c.cwd`;
  let mode: TeamSearchResult["mode"] = "fts";
  let note: string | null = null;
  let terms = wordsOf(query).map((t) => t.toLowerCase());
  const widenable = teamWords(query);
  let forgivenAt: TeamLevel | null = null;
  budget.check();
  let rows: Row[];
  try {
    // One snapshot for every statement: the rows a window found are where it found them
    // (`newestMatches`) when the page is read.
    rows = await sql.begin("isolation level repeatable read read only", async (tx) => {
      // The budget left, as PostgreSQL's own limit on every statement of this transaction.
      const limitTime = async () => {
        budget.check();
        await tx`SELECT set_config('statement_timeout', ${String(budget.remainingMs())}, true)`;
      };
      await limitTime();
      const cjk = hasCjk(query);
      const words = cjk ? null : await tsqueryOf(tx, query);
      if (words !== null) {
        // Words are index lookups and the records they name: starting parallel workers for them
        // took 30 to 45 ms of a rare word's 60 in the server, and the searches that read
        // thousands of records read them by windows (`newestMatches`).
        await tx`SELECT set_config('max_parallel_workers_per_gather', '0', true)`;
        const page = { columns, filters, limit: limit + 1, offset, limitTime };
        const found = await rankedRows(sql, tx, words, page, options.forgive ?? "exact", widenable);
        forgivenAt = found.forgivenAt;
        return found.rows;
      }
      mode = "substring";
      budget.literal = true;
      // Each word must appear as it is written; with CJK, words are what spaces part.
      const parts = cjk ? wordsOf(query) : [query];
      terms = parts.map((t) => t.toLowerCase());
      note = cjk
        ? "the query has CJK, which word search holds only as whole runs: matched each word as a " +
          "substring"
        : "no word of the query is indexed as a word; matched it as a substring";
      await limitTime();
      return await substringRows(tx, parts, columns, filters, limit + 1, offset);
    });
  } catch (err) {
    if ((err as { code?: unknown }).code === QUERY_CANCELED || budget.spent()) {
      throw budget.stopped();
    }
    throw err;
  }
  const page = rows.slice(0, limit);
  const cap = Math.max(RANK_CANDIDATES, offset + limit + 1);
  if (mode === "fts" && Number(rows[0]?.candidates ?? 0) >= cap) {
    note = `more than ${formatCount(cap)} records match: ranked the ${
      formatCount(cap)
    } most recently pushed; add words or filters to rank them all`;
  }
  const suggestion = !rows.length && offset === 0 && mode === "fts" &&
      (options.forgive ?? "exact") === "exact"
    ? await teamPrefixSuggestion(sql, query, filters.all)
    : null;
  if (forgivenAt !== null) {
    for (const word of widenable) terms.push(...(word.forms ?? []), ...(word.spellings ?? []));
  }
  return {
    mode,
    note,
    suggestion,
    ...(forgivenAt !== null ? { forgiven: teamForgiven(query.trim(), widenable, forgivenAt) } : {}),
    next: rows.length > limit ? offset + limit : null,
    hits: page.map((row) => {
      const matched = options.forgive !== undefined && mode === "fts"
        ? teamMatched(row.text, query, widenable, forgivenAt)
        : undefined;
      return hitOf(row, redact, terms, matched);
    }),
  };
}

/**
 * A row as a hit, every string through `redact`, its snippet around the first of `terms`, and
 * how its words matched when the search was asked to say.
 */
function hitOf(row: Row, redact: Redactor, terms: string[], matched?: Matched[]): TeamHit {
  return {
    machine: row.machine,
    conversation: redact(row.conversation_key),
    record: Number(row.id),
    title: row.title === null ? null : redact(row.title),
    agent: row.agent as Agent,
    project: row.project === null ? null : redact(row.project),
    cwd: row.cwd === null ? null : redact(row.cwd),
    timestamp: row.ts === null ? null : new Date(row.ts).toISOString(),
    kind: row.kind as Kind,
    role: row.role as Role | null,
    snippet: redact(snippet(row.text, terms)),
    score: Number(row.score),
    ...(matched ? { matched } : {}),
  };
}

/** A piece of SQL with its values bound, as sql`…` makes it. */
type Fragment = PendingQuery<SqlRow[]>;

/**
 * A team search's filters as SQL: `all` over its records `r` joined with their conversations
 * `c`; `records` those on a record's own columns and `conversation` those that need its
 * conversation (with `r` in scope), so a search can check the conversation of only the matches
 * it keeps. A typed prompt pushed from a history file is a hit only in a conversation without
 * transcript messages: where the transcript was pushed, its own copy of the prompt is the hit, as
 * in a local search.
 */
export interface TeamFilters {
  all: Fragment;
  records: Fragment;
  conversation: Fragment;
  /** True when a filter asks about conversations: every match's is then looked up. */
  ofConversations: boolean;
}

export function filterSql(sql: Sql, redact: Redactor, options: TeamSearchOptions): TeamFilters {
  const terms = filterTerms(options, "team").map((term) => {
    const value = term.params.map((param) => {
      const how = (FILTERS[term.name] as FilterSpec).teamValue;
      return how === "date"
        ? new Date(param as number)
        : how === "shown"
        ? redact(param as string)
        : param;
    });
    // `r.role = ?` as a fragment with its value bound, as sql`AND r.role = ${value}` makes it.
    const parts = ` AND ${term.sql}`.split("?");
    const fragment = sql(
      Object.assign(parts, { raw: parts }) as unknown as TemplateStringsArray,
      ...value as never[],
    );
    return { fragment, ofConversation: /\bc\./.test(term.sql) };
  });
  // One fragment each: postgres.js takes an empty list for a value, not for no SQL.
  const join = (first: Fragment, of: boolean) =>
    terms.filter((t) => t.ofConversation === of).reduce(
      (all, term) => sql`${all} ${term.fragment}`,
      first,
    );
  const records = join(
    options.machine ? sql`AND r.machine = ${options.machine}` : sql``,
    false,
  );
  const conversation = join(sql`AND (r.kind <> 'prompt' OR c.messages = 0)`, true);
  const ofConversations = terms.some((t) => t.ofConversation);
  return { all: sql`${records} ${conversation}`, records, conversation, ofConversations };
}

/** Where a page of a team search is, what narrows it, and its budget for each statement. */
interface TeamPage {
  columns: Fragment;
  filters: TeamFilters;
  limit: number;
  offset: number;
  limitTime: () => Promise<void>;
}

/**
 * The page of rows matching the tsquery `words`, best ranked first; when it has none and
 * `forgive` allows, the first of the wider tsqueries of `widenable` (prefixes, other forms,
 * spellings) that finds some, with the level that found them (null: as typed).
 */
async function rankedRows(
  sql: Sql,
  tx: TransactionSql,
  words: string,
  page: TeamPage,
  forgive: Forgive,
  widenable: TeamWord[],
): Promise<{ rows: Row[]; forgivenAt: TeamLevel | null }> {
  const { columns, filters, limit, offset, limitTime } = page;
  const cap = Math.max(RANK_CANDIDATES, offset + limit);
  const ranked = async (tsquery: string) => {
    await limitTime();
    const newest = await newestMatches(tx, tsquery, filters, cap, limitTime);
    await limitTime();
    // The newest matches first (`newestTids`), at most `cap`, then only those are ranked:
    // ts_rank reads each one's tsvector, which for a common word over gigabytes would take
    // seconds. A match's conversation is looked up by its key where it decides
    // (`conversationKept`): joined to every conversation instead, a rare word's search read the
    // whole conversations table (190 ms of a 200 ms search with 5 GB pushed); the other columns
    // of a conversation are read for the page only. Where the windows found them, they are given.
    // Each match is read again where it was found (its `ctid`), not through the primary key: a
    // lookup by id reads an index page for each of 2,000 matches that a new connection has not
    // touched.
    const candidates = newest === null
      ? newestTids(tx, tsquery, filters, cap)
      : tx`SELECT tid FROM unnest(CAST(${tidArray(newest)} AS tid[])) AS given (tid)`;
    return await tx<Row[]>`
      WITH m AS MATERIALIZED (${candidates}),
      top AS MATERIALIZED (
        SELECT r.ctid AS tid, ts_rank(r.tsv, q) * ${sql.unsafe(RANK_WEIGHT)} AS score,
          (SELECT count(*) FROM m) AS candidates
        FROM m JOIN logbook_records r ON r.ctid = m.tid, CAST(${tsquery} AS tsquery) q
        ORDER BY score DESC, r.ts DESC NULLS LAST, r.id DESC
        LIMIT ${limit} OFFSET ${offset})
      SELECT ${columns}, top.score, top.candidates
      FROM top JOIN logbook_records r ON r.ctid = top.tid
        JOIN logbook_conversations c ON c.machine = r.machine AND c.key = r.conversation_key
      ORDER BY top.score DESC, r.ts DESC NULLS LAST, r.id DESC`;
  };
  const found = await ranked(words);
  const asTyped = { rows: found, forgivenAt: null };
  if (found.length || forgive === "exact") return asTyped;
  // Past the last page, whether there was a first one.
  if (offset > 0 && await matchesAny(tx, words, filters.all)) return asTyped;
  let tried: string | null = null;
  for (const level of TEAM_LEVELS) {
    if (level === "form") await loadStemmer();
    if (level === "spelling") await findSpellings(tx, widenable, limitTime);
    const widened = widenTsquery(words, widenable, level);
    if (widened === null || widened === tried) continue;
    tried = widened;
    const rows = await ranked(widened);
    if (rows.length) return { rows, forgivenAt: level };
  }
  return asTyped;
}

/**
 * The newest records a team search reads first, to learn how many of them match, where the
 * planner's statistics do not tell (`newestMatches`).
 */
export const PROBE_IDS = 16_384;
/**
 * The matches, expected by the planner and then by the newest records, from which a search reads
 * them window by window rather than all at once.
 */
const WINDOWED_FROM = 3 * RANK_CANDIDATES;

/**
 * Where the newest `cap` matches of `tsquery` under `filters` are (their `ctid`s, as text), newest
 * first, read window by window from the newest record back; null for one pass over all the
 * matches, where the planner expects fewer than WINDOWED_FROM of them, or the first window holds
 * fewer than its share of that. A pass over all reads every match's record to learn its id, 31,600
 * of them for a common word in 3.35 GB of records (0.8 s); a window reads only its own matches,
 * its ids from the primary key and the word's from the text index intersected before any record
 * is read (which the planner does only where it expects many matches: else it reads all of them
 * to test their ids). The first window is sized for `cap` matches where the planner knows how
 * often the word comes (`plannedRate`), else it is the newest PROBE_IDS records; each next one is
 * sized for the matches still wanted at the rate met so far. Each window reads the word's whole
 * entry in the text index again (25 ms for 43,648 matches at 10 GB), so the fewer the better.
 */
export async function newestMatches(
  tx: TransactionSql,
  tsquery: string,
  filters: TeamFilters,
  cap: number,
  limitTime: () => Promise<void>,
): Promise<string[] | null> {
  const { planned, known } = await plannedRate(tx, tsquery, filters);
  if (planned < WINDOWED_FROM) return null;
  const [top] = await tx<{ hi: number | null; indexscan: string }[]>`
    SELECT max(id) AS hi, current_setting('enable_indexscan') AS indexscan
    FROM logbook_records`;
  const hi = Number(top?.hi ?? 0);
  if (!top || hi <= PROBE_IDS) return null;
  const window = async (lo: number, upper: number, wanted: number) => {
    await limitTime();
    // Else the planner walks a window by the primary key and reads each record's tsvector.
    await tx`SELECT set_config('enable_indexscan', 'off', true)`;
    const within = tx`AND r.id > ${lo} AND r.id <= ${upper}`;
    const rows = await newestTids(tx, tsquery, filters, wanted, within);
    // Back to the server's, which every other statement plans with.
    await tx`SELECT set_config('enable_indexscan', ${top.indexscan}, true)`;
    return rows.map((row) => String(row.tid));
  };
  const first = known ? Math.ceil((cap / planned) * hi * 1.25) : PROBE_IDS;
  let lo = Math.max(0, hi - Math.max(first, PROBE_IDS));
  const tids = await window(lo, hi, cap);
  if (tids.length < cap && lo > 0 && (tids.length / (hi - lo)) * hi < WINDOWED_FROM) return null;
  while (tids.length < cap && lo > 0) {
    const rate = Math.max(tids.length, 1) / (hi - lo);
    const upper = lo;
    lo = Math.max(0, upper - Math.ceil(((cap - tids.length) / rate) * 1.25));
    tids.push(...await window(lo, upper, cap - tids.length));
  }
  return tids;
}

/**
 * How many records the planner expects to match `tsquery` under `filters`, and whether that comes
 * from its statistics of the word (`known`). A word its statistics do not hold is given half the
 * rate of the least common one they hold, whatever its own: that figure, which a word that cannot
 * occur is given too, tells the two apart, since every word they hold comes at least twice as
 * often. Only a single word is told apart: the planner multiplies or adds the rates of several.
 */
async function plannedRate(
  tx: TransactionSql,
  tsquery: string,
  filters: TeamFilters,
): Promise<{ planned: number; known: boolean }> {
  const single = /^'(?:[^']|'')+'$/.test(tsquery);
  const [line] = await tx<{ "QUERY PLAN": unknown }[]>`
    EXPLAIN (FORMAT JSON) SELECT 1 FROM logbook_records r
    WHERE r.tsv @@ CAST(${tsquery} AS tsquery) ${filters.records}
    ${
    single
      ? tx`UNION ALL SELECT 1 FROM logbook_records r
          WHERE r.tsv @@ CAST(${UNSEEN_WORD} AS tsquery) ${filters.records}`
      : tx``
  }`;
  // JSON as the driver parses it, or as text (the small client).
  const json = line?.["QUERY PLAN"];
  const [{ Plan: plan }] = (typeof json === "string" ? JSON.parse(json) : json) as [
    { Plan: PlanNode },
  ];
  if (!single) return { planned: plan["Plan Rows"], known: false };
  // An Append of the two: the query's rows, then the unseen word's.
  const [query, unseen] = plan.Plans ?? [];
  const planned = query?.["Plan Rows"] ?? 0;
  const guessed = unseen?.["Plan Rows"] ?? 0;
  return { planned, known: guessed > 0 && planned >= 2 * guessed };
}

/** What `plannedRate` reads of a node of EXPLAIN (FORMAT JSON). */
interface PlanNode {
  "Plan Rows": number;
  Plans?: PlanNode[];
}

/** A word no record holds (a lexeme of 64 characters), whose rate the planner guesses. */
const UNSEEN_WORD = `'${"q".repeat(64)}'`;

/**
 * Where the newest `limit` records matching `tsquery` under `filters` are (`within`, a range of
 * ids, when given), newest first: by id, which `+ 0` keeps from walking the primary key backwards
 * and testing every record, each match's conversation checked where it decides, newest match
 * first, until `limit` pass.
 */
function newestTids(
  tx: TransactionSql,
  tsquery: string,
  filters: TeamFilters,
  limit: number,
  within: Fragment = tx``,
): Fragment {
  return tx`
    SELECT r.tid FROM (
      SELECT r.id + 0 AS newest, r.ctid AS tid, r.machine, r.conversation_key, r.kind
      FROM logbook_records r
      WHERE r.tsv @@ CAST(${tsquery} AS tsquery) ${within} ${filters.records}
      ORDER BY r.id + 0 DESC OFFSET 0) r
    WHERE ${conversationKept(tx, filters)}
    ORDER BY r.newest DESC LIMIT ${limit}`;
}

/** `tids` (each as `(page,item)`) as the text of a PostgreSQL array. */
function tidArray(tids: readonly string[]): string {
  return `{${tids.map((tid) => `"${tid}"`).join(",")}}`;
}

/**
 * Whether match `r`'s conversation passes `filters`: looked up by its key, and with no filter on
 * conversations only for a prompt, the one kind whose conversation decides (`OFFSET 0` keeps the
 * planner from reading every conversation to hash them). A search reads the conversations of its
 * page only: each one read is a page of the server's memory its process maps on first touch.
 */
function conversationKept(tx: TransactionSql, filters: TeamFilters): Fragment {
  return tx`(${filters.ofConversations ? tx`` : tx`r.kind <> 'prompt' OR`} EXISTS (
    SELECT FROM logbook_conversations c
    WHERE c.machine = r.machine AND c.key = r.conversation_key ${filters.conversation}
    OFFSET 0))`;
}

/**
 * Up to `limit` rows after `offset` whose text holds each of `parts` (case aside), newest first,
 * under `filters`, where words cannot find them.
 */
async function substringRows(
  tx: TransactionSql,
  parts: string[],
  columns: Fragment,
  filters: TeamFilters,
  limit: number,
  offset: number,
): Promise<Row[]> {
  const patterns = parts.map((t) => {
    const pattern = `%${t.replace(/[\\%_]/g, "\\$&")}%`;
    // A word with CJK lies within one of the text's CJK-bearing words, which `cjk` holds (parted
    // by spaces, as `parts` are) and pg_trgm indexes: what matches there is in the text, which
    // is not read.
    return hasCjk(t) ? tx`AND r.cjk ILIKE ${pattern}` : tx`AND r.text ILIKE ${pattern}`;
  });
  // The matches newest first, then each one's conversation checked where it decides until the
  // page is full (`OFFSET 0` keeps the check out of the scan): checked in the scan, a CJK word's
  // search looked up the conversations of all its 748 prompts among 5,538 matches.
  return await tx<Row[]>`
    WITH page AS MATERIALIZED (
      SELECT r.tid FROM (
        SELECT r.ctid AS tid, r.ts, r.id, r.machine, r.conversation_key, r.kind
        FROM logbook_records r
        WHERE true ${patterns} ${filters.records}
        ORDER BY r.ts DESC NULLS LAST, r.id DESC OFFSET 0) r
      WHERE ${conversationKept(tx, filters)}
      ORDER BY r.ts DESC NULLS LAST, r.id DESC
      LIMIT ${limit} OFFSET ${offset})
    SELECT ${columns}, 0::real AS score
    FROM page JOIN logbook_records r ON r.ctid = page.tid
      JOIN logbook_conversations c ON c.machine = r.machine AND c.key = r.conversation_key
    ORDER BY r.ts DESC NULLS LAST, r.id DESC`;
}

/**
 * The tsquery (as text) of a query in websearch syntax, its `word*` terms prefixes, as a local
 * search reads them (websearch itself drops the `*`); null when it has no word PostgreSQL
 * indexes.
 */
async function tsqueryOf(tx: TransactionSql, query: string): Promise<string | null> {
  const [parsed] = await tx<{ words: number; text: string }[]>`
    SELECT numnode(q) AS words, q::text AS text FROM websearch_to_tsquery('simple', ${query}) q`;
  if (!parsed || parsed.words === 0) return null;
  let text = parsed.text;
  for (const match of query.matchAll(/(?<![^\s(-])([\p{L}\p{N}]+)\*/gu)) {
    const lexeme = match[1]!.toLowerCase().replaceAll("'", "''");
    text = text.replaceAll(new RegExp(`'${lexeme}'(?!:)`, "g"), `'${lexeme}':*`);
  }
  return text;
}

/** Whether `tsquery` matches any record under `filters`. */
async function matchesAny(
  tx: TransactionSql,
  tsquery: string,
  filters: Fragment,
): Promise<boolean> {
  const [found] = await tx<{ found: boolean }[]>`
    SELECT EXISTS (
      SELECT 1 FROM logbook_records r
        JOIN logbook_conversations c ON c.machine = r.machine AND c.key = r.conversation_key
      WHERE r.tsv @@ CAST(${tsquery} AS tsquery) ${filters}) AS found`;
  return found?.found === true;
}

/** The records read for the words close to a typo: enough to find it, few enough to be quick. */
const SPELLING_TEXTS = 200;
/**
 * How long the look for a typo's spellings may read records (no index serves it, see
 * 0004_lighter_indexes in db.ts): a typo of a common word is found in the first records read;
 * one of a rare word in a large team database may not be, and then is not forgiven.
 */
const SPELLING_MS = 300;

/**
 * Finds the spellings of each plain word of `words` no record holds (nor begins a word of): the
 * words of the records holding a word close to it (pg_trgm's `<%`), read for SPELLING_MS at most.
 */
async function findSpellings(
  tx: TransactionSql,
  words: TeamWord[],
  limitTime: () => Promise<void>,
): Promise<void> {
  for (const word of words) {
    if (!word.plain || word.spellings) continue;
    word.spellings = [];
    await limitTime();
    const prefix = `'${word.word}':*`;
    const [held] = await tx<{ found: boolean }[]>`
      SELECT EXISTS (
        SELECT 1 FROM logbook_records WHERE tsv @@ CAST(${prefix} AS tsquery)) AS found`;
    if (held?.found) continue;
    try {
      const rows = await tx.savepoint(async (sp) => {
        await sp`SELECT set_config('statement_timeout', ${String(SPELLING_MS)}, true)`;
        // Looser than pg_trgm's default, so a typo in a short word still shares enough trigrams.
        await sp`SELECT set_config('pg_trgm.word_similarity_threshold', '0.4', true)`;
        return await sp<{ text: string }[]>`
          SELECT text FROM logbook_records WHERE ${word.word} <% text LIMIT ${SPELLING_TEXTS}`;
      });
      word.spellings = spellingsIn(rows.map((r) => r.text), word.word);
    } catch (err) {
      if ((err as { code?: unknown }).code !== QUERY_CANCELED) throw err;
    }
  }
}

/** How long a team search's suggestion may look, apart from the search's own budget. */
const SUGGESTION_MS = 500;

/**
 * For a team search that found nothing: as `prefixSuggestion` for a local one, the query with
 * each bare word that matches nothing under `filters` but begins indexed words written as a
 * prefix, when that query finds something; null otherwise, or when looking takes too long.
 */
async function teamPrefixSuggestion(
  sql: Sql,
  query: string,
  filters: Fragment,
): Promise<string | null> {
  const candidates = prefixCandidates(query, (word) => /^(or|and|not)$/i.test(word));
  if (!candidates.length) return null;
  try {
    return await sql.begin(async (tx) => {
      await tx`SELECT set_config('statement_timeout', ${String(SUGGESTION_MS)}, true)`;
      const finds = async (typed: string) => {
        const words = await tsqueryOf(tx, typed);
        if (words === null) return false;
        const [found] = await tx<{ found: boolean }[]>`
          SELECT EXISTS (
            SELECT 1 FROM logbook_records r
              JOIN logbook_conversations c ON c.machine = r.machine AND c.key = r.conversation_key
            WHERE r.tsv @@ CAST(${words} AS tsquery) ${filters}) AS found`;
        return found?.found === true;
      };
      const prefixed = new Set<string>();
      for (const word of candidates) {
        if (!(await finds(word)) && (await finds(`${word}*`))) prefixed.add(word);
      }
      if (!prefixed.size) return null;
      const suggested = withPrefixes(query, prefixed);
      checkBounds(suggested);
      return (await finds(suggested)) ? suggested : null;
    });
  } catch (err) {
    if (err instanceof SearchLimitError || (err as { code?: unknown }).code === QUERY_CANCELED) {
      return null;
    }
    throw err;
  }
}

/** The words of a query, without websearch's quotes, operators and negations. */
function wordsOf(query: string): string[] {
  return query.split(/[\s"()*]+/).map((t) => t.replace(/^-+/, "")).filter((t) =>
    t && !/^(or|and|not)$/i.test(t)
  );
}

interface Row {
  machine: string;
  id: number;
  conversation_key: string;
  ts: Date | null;
  kind: string;
  role: string | null;
  text: string;
  title: string | null;
  agent: string;
  project: string | null;
  cwd: string | null;
  score: number;
  /** How many matches were ranked (a ranked search's rows only). */
  candidates?: number;
}

/** About `SNIPPET_CHARS` of `text` around the first of `terms`, on one line. */
export function snippet(text: string, terms: string[]): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const lower = flat.toLowerCase();
  const at = terms.map((t) => lower.indexOf(t)).filter((i) => i >= 0).sort((a, b) => a - b)[0] ??
    0;
  const start = Math.max(0, at - SNIPPET_CHARS / 3);
  const cut = flat.slice(start, start + SNIPPET_CHARS);
  return `${start > 0 ? "…" : ""}${cut}${start + SNIPPET_CHARS < flat.length ? "…" : ""}`;
}

/** One record of a pushed conversation, as `show --team --json` prints it. */
export interface TeamRecord {
  id: number;
  timestamp: string | null;
  kind: string;
  role: string | null;
  text: string;
}

/** A pushed conversation an id names, and the machines that pushed it. */
export interface TeamConversation {
  key: string;
  machines: string[];
}

/**
 * The pushed conversation `id` names (of `machine`, when given), by the rule of a local id
 * (`findConversation`): its full id, its native id, or a unique prefix of either, a session's
 * prefix meaning the session rather than its subagents; a whole UUID is never a prefix. Throws
 * ConversationNotFoundError for no such conversation, or one naming the candidates.
 */
export async function findTeamConversation(
  sql: Sql,
  id: string,
  machine?: string,
): Promise<TeamConversation> {
  const wanted = id.trim();
  if (!wanted) throw new RangeError("The conversation id is empty");
  if (wanted.length > MAX_ID_CHARS) {
    throw new RangeError(
      `The conversation id is too long: ${wanted.length} characters, at most ${MAX_ID_CHARS}`,
    );
  }
  const native = sql`substr(key, strpos(key, ':') + 1)`;
  const named = (where: ReturnType<Sql>) =>
    sql<(TeamConversation & { subagent: boolean; parent_key: string | null })[]>`
      SELECT key, bool_or(subagent) AS subagent, min(parent_key) AS parent_key,
        array_agg(machine ORDER BY machine) AS machines
      FROM logbook_conversations
      WHERE (${where}) ${machine === undefined ? sql`` : sql`AND machine = ${machine}`}
      GROUP BY key
      ORDER BY bool_or(subagent), max(last_ts) DESC NULLS LAST, key
      LIMIT 50`;
  const place = machine === undefined
    ? "the team database"
    : `what machine "${machine}" pushed to the team database`;
  const [whole] = await named(sql`key = ${wanted}`);
  if (whole) return whole;
  const exact = await named(sql`${native} = ${wanted}`);
  if (exact.length === 1) return exact[0]!;
  if (!exact.length && isCompleteId(wanted)) {
    throw new ConversationNotFoundError(`No conversation "${wanted}" in ${place}`);
  }
  const pattern = wanted.replace(/[\\%_]/g, "\\$&") + "%";
  const matches = exact.length ? exact : await named(
    sql`key LIKE ${pattern} OR ${native} LIKE ${pattern}`,
  );
  const { key, machines } = onlyMatch(wanted, matches, place);
  return { key, machines };
}

/** A page of a pushed conversation after record `after`; `next` is null on the last page. */
export async function teamPage(
  sql: Sql,
  redact: Redactor,
  machine: string,
  key: string,
  options: { after?: number; limit?: number } = {},
): Promise<{ title: string | null; records: TeamRecord[]; next: number | null } | null> {
  const [conversation] = await sql<{ title: string | null }[]>`
    SELECT title FROM logbook_conversations WHERE machine = ${machine} AND key = ${key}`;
  if (!conversation) return null;
  const limit = Math.max(1, options.limit ?? 100);
  const rows = await sql<
    { id: number; ts: Date | null; kind: string; role: string | null; text: string }[]
  >`
    SELECT id, ts, kind, role, text FROM logbook_records
    WHERE machine = ${machine} AND conversation_key = ${key} AND id > ${options.after ?? 0}
    ORDER BY id LIMIT ${limit + 1}`;
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  return {
    title: conversation.title === null ? null : redact(conversation.title),
    records: page.map((r) => ({
      id: Number(r.id),
      timestamp: r.ts === null ? null : new Date(r.ts).toISOString(),
      kind: r.kind,
      role: r.role,
      text: redact(r.text),
    })),
    next: more ? Number(page.at(-1)!.id) : null,
  };
}
