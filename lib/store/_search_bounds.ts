// The shape a full-text query may have before it runs: FTS5 expands a prefix into every indexed
// word that starts with it before the first row comes back, in native code nothing can
// interrupt, so prefixes are bounded here; every other cost is cut by the budget as rows arrive.

import { DatabaseSync } from "node:sqlite";
import { type HistoryStore, isCorruption } from "./db.ts";
import { tokenize } from "./text.ts";
import { endsWithCjkPair } from "./cjk.ts";
import { formatCount } from "../format.ts";

/** At most this many words (each word of a phrase counts) in one query. */
export const MAX_TERMS = 32;
/** At most this many prefix terms (`word*`) in one query. */
export const MAX_PREFIXES = 8;
/** A prefix term needs at least this many characters before its `*`. */
export const MIN_PREFIX_CHARS = 3;
/** The largest distance a `NEAR(…, N)` group may ask for. */
export const MAX_NEAR_DISTANCE = 1000;

/** A query over one of the bounds above; the message names which and how to fix it. */
export class SearchLimitError extends Error {
  override name = "SearchLimitError";
}

/**
 * Throws SearchLimitError when the FTS5 query `query` (already known to parse) has too many
 * words, too many or too short prefixes, or too wide a NEAR group.
 */
export function checkBounds(query: string): void {
  let terms = 0;
  let prefixes = 0;
  const tokens = lex(query);
  tokens.forEach((token, i) => {
    const next = tokens[i + 1];
    if (token.type === "near" && token.distance > MAX_NEAR_DISTANCE) {
      throw new SearchLimitError(
        `The NEAR distance ${token.distance} is over the limit of ${MAX_NEAR_DISTANCE}: for ` +
          "words anywhere in the same record, leave NEAR out",
      );
    }
    if (token.type !== "string" || next?.type === "colon") return;
    terms += tokenize(token.text).length;
    const prefix = prefixAt(tokens, i);
    if (prefix === null) return;
    prefixes++;
    // Ending in two CJK letters, it ends in a whole bigram of the index: nothing to expand.
    if (endsWithCjkPair(prefix)) return;
    if ([...prefix].length < MIN_PREFIX_CHARS) {
      throw new SearchLimitError(
        `The prefix "${prefix}*" is too short: a prefix needs at least ${MIN_PREFIX_CHARS} ` +
          `characters before "*"`,
      );
    }
  });
  if (terms > MAX_TERMS) {
    throw new SearchLimitError(
      `The query has ${terms} words: at most ${MAX_TERMS} are allowed; keep the most distinctive`,
    );
  }
  if (prefixes > MAX_PREFIXES) {
    throw new SearchLimitError(
      `The query has ${prefixes} prefixes: at most ${MAX_PREFIXES} are allowed`,
    );
  }
}

/**
 * Pages of the text index FTS5 goes through per millisecond of a search's budget as it expands
 * prefixes before a ranked search's first row (and bm25 counts each one's matches), on the 2-core
 * reference machine in a quiet hour at 10 GB (2026-12-07): `dev* OR the*`, whose words fill 8,347
 * pages, took 2.3 s to its first row (3.6 pages a millisecond); eight common 3-letter prefixes,
 * 22,868 pages, 3.0 s (7.6 a millisecond).
 */
export const PREFIX_PAGES_PER_MS = 3;

/**
 * Throws SearchLimitError when the words the prefixes of `query` begin span more pages of the
 * store's text index than FTS5 goes through within a budget of `budgetMs` (`indexPages`): it
 * expands each prefix into all of them before the first row, in code the budget cannot stop, so
 * such a search would end seconds past its budget with nothing to show. A bound on work, as the
 * others are, not a timing: a busy machine refuses the same queries as a quiet one.
 */
export function checkPrefixWork(
  store: HistoryStore,
  query: string,
  budgetMs: number,
  pagesPerMs = PREFIX_PAGES_PER_MS,
): void {
  const tokens = lex(query);
  const expanded = tokens.map((_, i) => prefixAt(tokens, i))
    .filter((prefix): prefix is string => prefix !== null && !endsWithCjkPair(prefix));
  if (!expanded.length) return;
  const pages = indexPages(store, expanded);
  const most = Math.floor(budgetMs * pagesPerMs);
  if (pages > most) {
    const named = expanded.map((prefix) => `"${prefix}*"`).join(", ");
    throw new SearchLimitError(
      `The words that ${named} begin fill ${formatCount(pages)} pages of the text index, more ` +
        `than a search goes through within its time budget (${formatCount(most)}): make the ` +
        "prefixes longer, or search for whole words",
    );
  }
}

/**
 * How many pages of the text index (`fts`) hold the words that `prefixes` begin, summed over the
 * index's segments: FTS5 keeps, for each page of a segment, the start of its first word, as short
 * as tells it from the page before (`fts_idx`, keyed by segment and word, the main index's words
 * after a "0", the page number shifted left by one), so the pages from the one a prefix's first
 * word may start on to the one the words after them start on are two look-ups a segment. Words
 * FTS5 folds otherwise than `tokenize` does (diacritics) are not found, and count no page.
 */
export function indexPages(store: HistoryStore, prefixes: readonly string[]): number {
  const segment = store.stmt("SELECT segid FROM fts_idx WHERE segid > ? ORDER BY segid LIMIT 1");
  const before = store.stmt(
    "SELECT pgno FROM fts_idx WHERE segid = ? AND term < ? ORDER BY term DESC LIMIT 1",
  );
  const from = store.stmt(
    "SELECT pgno FROM fts_idx WHERE segid = ? AND term >= ? ORDER BY term LIMIT 1",
  );
  const last = store.stmt("SELECT pgno FROM fts_idx WHERE segid = ? ORDER BY term DESC LIMIT 1");
  const page = (row: unknown) => ((row as { pgno: number } | undefined)?.pgno ?? 0) >> 1;
  const encoder = new TextEncoder();
  // The segments' ids, one seek each rather than a read of every key.
  const segments: number[] = [];
  for (let row = segment.get(-1); row; row = segment.get(segments.at(-1)!)) {
    segments.push((row as { segid: number }).segid);
  }
  let pages = 0;
  for (const prefix of prefixes) {
    const start = encoder.encode(`0${prefix}`);
    // The first key past every word the prefix begins: its last byte one higher (a UTF-8 text's
    // bytes are never 0xff).
    const past = start.slice();
    past[past.length - 1]! += 1;
    for (const id of segments) {
      const end = page(from.get(id, past) ?? last.get(id));
      pages += Math.max(0, end - page(before.get(id, start)));
    }
  }
  return pages;
}

/** The prefix `tokens[i]` asks FTS5 to expand (the last word of a string before `*`), or null. */
function prefixAt(tokens: readonly Token[], i: number): string | null {
  const token = tokens[i]!;
  if (token.type !== "string" || tokens[i + 1]?.type !== "star") return null;
  return tokenize(token.text).at(-1) ?? null;
}

type Token =
  | { type: "string"; text: string }
  | { type: "near"; distance: number }
  | { type: "star" | "colon" | "other" };

/**
 * The query's tokens as FTS5 reads them: barewords and quoted strings (operators dropped), `*`
 * after a string, `:` after a column name, and each NEAR group with its distance (default 10).
 */
function lex(query: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /"((?:[^"]|"")*)"|([^\s"(){}:,+*^-]+)|([*:])|(\S)/g;
  let near: { type: "near"; distance: number } | null = null;
  let afterComma = false;
  let inColumns = false;
  for (const match of query.matchAll(pattern)) {
    const [, quoted, bare, mark, other] = match;
    if (quoted !== undefined) {
      tokens.push({ type: "string", text: quoted.replaceAll('""', '"') });
    } else if (bare !== undefined) {
      if (inColumns) tokens.push({ type: "other" });
      else if (near && afterComma) near.distance = Number(bare);
      else if (bare === "NEAR" && /^\s*\(/.test(query.slice(match.index + bare.length))) {
        near = { type: "near", distance: 10 };
        tokens.push(near);
      } else if (!/^(AND|OR|NOT)$/.test(bare)) tokens.push({ type: "string", text: bare });
    } else if (mark !== undefined) {
      tokens.push({ type: mark === "*" ? "star" : "colon" });
    } else {
      if (other === ")") near = null;
      if (other === "{" || other === "}") inColumns = other === "{";
      tokens.push({ type: "other" });
    }
    afterComma = other === ",";
  }
  return tokens;
}

let syntaxTable: { db: DatabaseSync; match: (query: string) => void } | null = null;

/** Barewords of ASCII letters, digits and `_`, each with an optional `*`, between spaces. */
const PLAIN_WORDS = /^\s*[A-Za-z0-9_]+\*?(?:\s+[A-Za-z0-9_]+\*?)*\s*$/;
/** A word FTS5 reads as an operator when it stands alone. */
const OPERATOR_WORD = /(?:^|\s)(?:AND|OR|NOT|NEAR)\*?(?=\s|$)/;

/**
 * True when FTS5 accepts `query` as its syntax. Asked of an empty table with the store's
 * column and tokenizer, so the answer costs nothing however much the query would match.
 */
export function isFtsSyntax(query: string): boolean {
  // Plain words (a prefix `*` at most), none of them an operator: always FTS5's syntax, and the
  // commonest query, answered without making the table (half a millisecond of a start).
  if (PLAIN_WORDS.test(query) && !OPERATOR_WORD.test(query)) return true;
  if (!syntaxTable) {
    const db = new DatabaseSync(":memory:");
    db.exec(
      "CREATE VIRTUAL TABLE fts USING fts5(text, content = '', tokenize = 'unicode61 remove_diacritics 2')",
    );
    const statement = db.prepare("SELECT rowid FROM fts WHERE fts MATCH ?");
    syntaxTable = { db, match: (q) => void statement.get(q) };
  }
  try {
    syntaxTable.match(query);
    return true;
  } catch (err) {
    if (isFtsSyntaxError(err)) return false;
    throw err;
  }
}

/**
 * A search's own statement that SQLite would not prepare: a mistake in logbook's SQL, never in
 * what was typed (a query is bound, and FTS5 reads it as the statement runs), though SQLite words
 * some the way FTS5 words a query's (`no such column: c.key`).
 */
export class SearchStatementError extends Error {
  override name = "SearchStatementError";
}

/**
 * True for the errors FTS5 gives a query it cannot parse; never for a damaged index, whose
 * errors FTS5 words the same way (`fts5: corruption found …`): a search must not answer one
 * with a literal scan, or with nothing; nor for a statement of its own that SQLite would not
 * prepare (`SearchStatementError`).
 */
export function isFtsSyntaxError(err: unknown): boolean {
  if (isCorruption(err) || err instanceof SearchStatementError) return false;
  const message = err instanceof Error ? err.message : "";
  return /fts5: syntax error|unterminated string|unknown special query|no such column|expected integer|fts5: /i
    .test(message);
}
