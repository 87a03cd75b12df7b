// The shape a full-text query may have before it runs: FTS5 expands a prefix into every indexed
// word that starts with it before the first row comes back, in native code nothing can
// interrupt, so prefixes are bounded here; every other cost is cut by the budget as rows arrive.

import { DatabaseSync } from "node:sqlite";
import { isCorruption } from "./db.ts";
import { tokenize } from "./text.ts";
import { endsWithCjkPair } from "./cjk.ts";

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
    const words = tokenize(token.text);
    terms += words.length;
    if (next?.type !== "star" || !words.length) return;
    prefixes++;
    const prefix = words.at(-1)!;
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
