// The steps a ranked and a grouped search share: reading the store soundly, the query as the
// index holds it, whether the index can answer it, the queries of forgiving's tiers, a hit built
// from its record, and every hit through the gate.

import { mapStrings, type Redactor } from "../../gate/secrets.ts";
import { withoutInvisible } from "../../invisible.ts";
import { HistoryStore } from "../db.ts";
import { damageError, indexDamaged, quickCheck, TEXT_INDEX } from "../damage.ts";
import { TextDeriver } from "../records.ts";
import { makeSnippet, queryTerms, type Snippet, tokenize } from "../text.ts";
import { cjkIndexReady, cjkQuery, hasCjk, hasLoneCjkLetter } from "../cjk.ts";
import { isAscii } from "../_letters.ts";
import { Forgiveness, type Level, type Matched, type Tier } from "../forgive.ts";
import {
  DEFAULT_BUDGET_MS,
  SearchBudget,
  SearchStoppedError,
  useBudget,
} from "../_search_budget.ts";
import { checkBounds, checkPrefixWork, isFtsSyntax, isFtsSyntaxError } from "../_search_bounds.ts";
import type { TextReader } from "../../sources/adapter.ts";
import { type Candidate, hitOfRow } from "./_sql.ts";
import { type LiteralMatcher, literalMatcher, literalTerms } from "./literal.ts";
import type { SearchHit, SearchOptions } from "./types.ts";

/**
 * Runs `fn`, a read of `store`; SQLite's word that the store is damaged becomes the
 * StoreDamagedError that names the damage and how to recover (`damageError`).
 */
export function soundRead<T>(store: HistoryStore, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw damageError(store, err) ?? err;
  }
}

/**
 * For an index search that found nothing at any level, `query` the one it searched first: throws
 * StoreDamagedError when the index matches `query` nowhere and the quick check finds it damaged,
 * the damage that makes it answer nothing instead of an error (see `quickCheck`). A search with
 * hits pays nothing, also one whose hits a wider level found (a prefix, a form, a spelling), nor
 * does one whose filters left out what the index matched (it answers the query); the quick check
 * reads the whole term index, some 40 to 60 ms on a store of ten gigabytes.
 */
export function nothingFound(store: HistoryStore, query: string): void {
  const matched = store.stmt(`SELECT rowid FROM ${TEXT_INDEX} WHERE ${TEXT_INDEX} MATCH ? LIMIT 1`)
    .get(query);
  if (matched !== undefined) return;
  const detail = quickCheck(store).damaged[0]?.messages[0];
  if (detail !== undefined) throw indexDamaged(store, detail);
}

/**
 * `options` with the query as the index holds text: without the characters a reader cannot see
 * (`lib/invisible.ts`), so a pasted `pass\u200bword` looks for `password`, as was indexed.
 */
export function asIndexed<O extends { query: string }>(options: O): O {
  const query = withoutInvisible(options.query);
  return query === options.query ? options : { ...options, query };
}

/**
 * `result`, unless its budget ran out before anything was found: then SearchStoppedError, whose
 * message says how to narrow the query (nothing found is not "no match").
 */
export function foundInTime<R extends { stopped: boolean; stopNote: string | null }>(
  result: R,
  key: keyof R,
): R {
  const found = result[key] as unknown[];
  if (result.stopped && found.length === 0) {
    throw new SearchStoppedError(result.stopNote ?? "The search was stopped");
  }
  return result;
}

/** What a page of an index search searches with, and where the page is. */
export interface PageScope {
  store: HistoryStore;
  deriver: TextDeriver;
  options: SearchOptions;
  budget: SearchBudget;
  offset: number;
  limit: number;
  forgiveness: Forgiveness;
}

/**
 * The FTS5 queries of each tier alone: the first as it is, each other without the matches of
 * the one before it (`(lante*) NOT (lante)`).
 */
export function tierQueries(tiers: readonly Tier[]): string[] {
  return tiers.map((tier, i) =>
    i === 0
      ? cjkQuery(tier.query)
      : `(${cjkQuery(tier.query)}) NOT (${cjkQuery(tiers[i - 1]!.query)})`
  );
}

/**
 * `hit` with every string passed through the gate. The snippet was cut from redacted text, and
 * is passed again so that a cut cannot leave part of a secret the whole text hid.
 */
export function throughGate(hit: SearchHit, redact: Redactor): SearchHit {
  return mapStrings(hit, (text) => redact(text));
}

/**
 * Why the index cannot answer `query`, or null when it can: no word the index holds (only
 * symbols, `💡`, `→`), a one-letter CJK word (the index holds CJK as bigrams), or CJK words in a
 * store whose index predates CJK bigrams (until `reindex` upgrades it).
 */
export function whyNotIndexed(store: HistoryStore, query: string): string | null {
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
export function ftsForms(query: string): string[] {
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

/**
 * A hit of `row`, its snippet around `terms`, and when `matchedOf` is given, how its words
 * matched (from what the snippet found of each term).
 */
export function buildHit(
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
      ...hitOfRow(row, snippet.text, Math.round(-score * 1000) / 1000),
      ...(matchedOf ? { matched: matchedOf(snippet.found) } : {}),
    },
    ranges: snippet.ranges,
  };
}

/**
 * How the hits of a page are built from their rows (`buildHit`): each snippet around the query's
 * terms, or with `forgive`, around every word's alternatives at `level`, which also say how each
 * of its words matched.
 */
export function hitBuilder(
  scope: PageScope,
  level: Level,
): (row: Candidate) => { hit: SearchHit; ranges: Snippet["ranges"] } {
  const { options, forgiveness, deriver } = scope;
  if (options.forgive === undefined) {
    const terms = queryTerms(options.query);
    return (row) => buildHit(row, deriver, terms, row.score);
  }
  const terms = forgiveness.terms(level);
  const matchedOf = (found: (string | null)[]) => forgiveness.matched(terms, found);
  return (row) => buildHit(row, deriver, terms, row.score, matchedOf);
}

/** What a literal scan searches with: a page scope without a query form to forgive. */
export type ScanScope = Omit<PageScope, "forgiveness">;

/** How a search (ranked or grouped) answers, from the index and by the literal scan. */
export interface SearchWays<R> {
  /** What an offset counts, for the error a bad one gets: `hits`, `conversations`. */
  counted: string;
  /** The page the index answers for a form of the query (its forgiveness in `scope`). */
  indexed: (scope: PageScope) => R;
  /** The page of the literal scan, with the note that says why the index could not answer. */
  literal: (scope: ScanScope, matcher: LiteralMatcher, note: string) => R;
}

/**
 * Runs a search within its budget: its page from the index for the first form of its query
 * FTS5 takes (`ftsForms`), else from the literal scan. Throws RangeError for an empty query or a
 * bad offset, and SearchLimitError for a query over a bound.
 */
export function answerWithin<R>(
  store: HistoryStore,
  adapters: readonly TextReader[],
  redact: Redactor,
  options: SearchOptions,
  now: (() => number) | undefined,
  ways: SearchWays<R>,
): R {
  const limit = Math.max(1, Math.min(options.limit ?? 20, 10_000));
  const offset = options.offset ?? 0;
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new RangeError(`Expected an offset of zero or more ${ways.counted}: got "${offset}"`);
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
      checkPrefixWork(store, typed, budget.ms);
      const forgive = options.forgive ?? "exact";
      const forgiveness = new Forgiveness(store, typed, forgive, budget, options.query);
      try {
        return ways.indexed({ store, deriver, options, budget, offset, limit, forgiveness });
      } catch (err) {
        // The empty table parses as the store's does; this only keeps the old way safe.
        if (isFtsSyntaxError(err)) continue;
        throw err;
      }
    }
    // The whole budget is the scan's: a query FTS5 refused above may have left a phase
    // shortened for a fallback that never ran.
    budget.endBefore(0);
    budget.literal = true;
    const matcher = literalMatcher(options.query, unindexed !== null);
    const note = `${
      unindexed ?? "the query is not valid FTS5 syntax"
    }; used a literal substring scan`;
    return ways.literal({ store, deriver, options, budget, offset, limit }, matcher, note);
  } finally {
    release();
  }
}
