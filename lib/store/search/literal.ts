// The literal scan: a substring search of the derived text for a query the index cannot answer
// (not FTS5 syntax, only symbols, CJK the index does not hold), with its own small parser of the
// query's AND, OR, NOT and parentheses, as FTS5 combines terms.

import type { StatementSync } from "node:sqlite";
import { HistoryStore } from "../db.ts";
import { FLAG_INDEXED, FLAG_ZSTD } from "../schema.ts";
import { type RecordRow, TextDeriver } from "../records.ts";
import { makeSnippet, type Snippet } from "../text.ts";
import { isAscii } from "../_letters.ts";
import { budgetCheck, SearchBudget } from "../_search_budget.ts";

import { budgeted, type Candidate, filterSql, hitOfRow, stoppable } from "./_sql.ts";
import type { SearchHit, SearchOptions, SearchResult } from "./types.ts";

/** What the literal scan looks for: substrings, combined as the query combines its terms. */
export interface LiteralMatcher {
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
export function literalMatcher(query: string, terms: boolean): LiteralMatcher {
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
export function literalTerms(query: string): string[] {
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
export function literalSearch(
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
      hits.push(hitOfRow(row, snippet.text, 0));
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
