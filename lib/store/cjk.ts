// CJK text in the index: FTS5's unicode61 tokenizer makes a Chinese or Japanese sentence (which
// has no spaces) one token, so a word inside it could not be found. Each run of Han, Hiragana,
// Katakana or Hangul letters is indexed as its overlapping bigrams instead (`缓存策略` →
// `缓存 存策 策略`), and a query's CJK words become the phrase of their bigrams, so any CJK word
// of two or more characters is found wherever it sits. Text without CJK is indexed as it is,
// but for the characters a reader cannot see (`lib/invisible.ts`), which it leaves out.

import { withoutInvisible } from "../invisible.ts";
import type { HistoryStore } from "./db.ts";

/** One CJK letter: Han, Hiragana, Katakana (with its prolonged sound mark) or Hangul. */
export const CJK_LETTER_CLASS =
  "[[\\p{sc=Han}\\p{sc=Hira}\\p{sc=Kana}\\p{sc=Hang}\\u30fc\\uff70]&&[\\p{L}\\p{N}]]";

/**
 * Every CJK letter lies in one of these ranges (an astral one as its surrogates), so text with
 * none of them has none. This class compiles in microseconds; the exact one, with its scripts,
 * costs V8 about half a millisecond in each process, and is made only for text that may need it.
 */
export const MAYBE_CJK = /[\u1100-\u11ff\u2e80-\u9fff\ua960-\ua97f\uac00-\ufaff\uff00-\uffef]/;

let exact: { letter: RegExp; run: RegExp } | undefined;

/** The exact patterns: one CJK letter, and a run of them (global). */
function cjk(): { letter: RegExp; run: RegExp } {
  exact ??= {
    letter: new RegExp(CJK_LETTER_CLASS, "v"),
    run: new RegExp(`${CJK_LETTER_CLASS}+`, "gv"),
  };
  return exact;
}

/** True when `text` holds a CJK letter. */
export function hasCjk(text: string): boolean {
  return MAYBE_CJK.test(text) && cjk().letter.test(text);
}

/**
 * The text FTS5 is given for `text`: without the characters a reader cannot see (so
 * `pass\u200bword` is indexed as `password`), and each CJK run as its overlapping bigrams.
 * Deterministic, so a record indexed again gives the same tokens.
 */
export function indexText(text: string): string {
  return bigramText(withoutInvisible(text));
}

/**
 * `text` with each CJK run as its overlapping bigrams (a run of one letter as itself), set apart
 * from the letters around it, and nothing else changed: the index text of migration 0008
 * (`cjk_index.ts`), whose batches an older build may have copied and this one verifies.
 */
export function bigramText(text: string): string {
  if (!hasCjk(text)) return text;
  return text.replace(cjk().run, (run) => ` ${bigrams(run)} `);
}

/** The bigrams of one CJK run, space separated (the letter itself for a run of one). */
function bigrams(run: string): string {
  const letters = Array.from(run);
  if (letters.length < 2) return run;
  const pairs: string[] = [];
  for (let i = 0; i + 1 < letters.length; i++) pairs.push(letters[i]! + letters[i + 1]!);
  return pairs.join(" ");
}

/**
 * An FTS5 query with its CJK words as the phrases the index holds: a bareword or a quoted
 * phrase that holds CJK becomes the phrase of its tokens as `indexText` gives them. A prefix
 * (`缓存*`) whose last letters are a CJK run of two or more needs no `*` (a bigram is whole).
 * Operators, parentheses and words without CJK are left as they are.
 */
export function cjkQuery(query: string): string {
  if (!hasCjk(query)) return query;
  return query.replace(/"(?:[^"]|"")*"\*?|[^\s()",:]+/g, (token) => {
    if (!hasCjk(token)) return token;
    let body = token;
    let star = "";
    if (body.endsWith("*") && body.length > 1) {
      star = "*";
      body = body.slice(0, -1);
    }
    if (body.startsWith('"') && body.endsWith('"') && body.length >= 2) {
      body = body.slice(1, -1).replaceAll('""', '"');
    } else {
      // A bareword's own prefix marks (`^` initial token, `+`): kept outside the phrase.
      const lead = /^[\^+]/.exec(body)?.[0] ?? "";
      if (lead) return lead + cjkQuery(body.slice(1) + star);
    }
    if (star && endsWithCjkPair(body)) star = "";
    const words = indexText(body).split(/\s+/).filter(Boolean).join(" ");
    return `"${words.replaceAll('"', '""')}"${star}`;
  });
}

/** True when `text` ends with at least two CJK letters (its last bigram is whole). */
export function endsWithCjkPair(text: string): boolean {
  const letters = Array.from(text);
  return letters.length >= 2 && cjk().letter.test(letters.at(-1)!) &&
    cjk().letter.test(letters.at(-2)!);
}

/** True when `query` holds a CJK word of one letter, which the index (of bigrams) cannot find. */
export function hasLoneCjkLetter(query: string): boolean {
  for (const [run] of query.matchAll(cjk().run)) if (Array.from(run).length === 1) return true;
  return false;
}

/** The migration that brought CJK bigrams; a store without it has the older index. */
export const CJK_MIGRATION = "0008_cjk_bigrams";
/** The meta key saying the index still waits to be derived again with CJK bigrams. */
export const INDEX_UPGRADE_KEY = "index_upgrade";

/**
 * True when the store's index holds CJK text as bigrams: its migration applied and nothing
 * left to derive again. A store opened read-only may predate the migration.
 */
export function cjkIndexReady(store: HistoryStore): boolean {
  if (store.pendingMigrations().includes(CJK_MIGRATION)) return false;
  return store.getMeta(INDEX_UPGRADE_KEY) === undefined;
}
