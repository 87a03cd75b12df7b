// For a search that found nothing: the query with words that begin indexed words written as
// prefixes (`marm*`), when that finds something.

import { HistoryStore } from "../db.ts";
import {
  checkBounds,
  isFtsSyntax,
  isFtsSyntaxError,
  MIN_PREFIX_CHARS,
  SearchLimitError,
} from "../_search_bounds.ts";
import { DEFAULT_BUDGET_MS, SearchBudget, useBudget } from "../_search_budget.ts";
import { asIndexed, soundRead } from "./_read.ts";
import { budgeted, filterSql, matchesUnder, stoppable } from "./_sql.ts";
import type { SearchOptions } from "./types.ts";

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
  const filter = filterSql(options);
  const sql = `SELECT 1 ${matchesUnder(store, filter)} LIMIT 1`;
  /** Whether `query` finds anything, or null when the budget ran out first. */
  const probe = (query: string): boolean | null => {
    try {
      return stoppable(
        budget,
        () =>
          budgeted(store, sql, (statement) => statement.get(query, ...filter.params) !== undefined),
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
