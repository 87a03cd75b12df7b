// The words the text index holds, for a search that forgives (`forgive.ts`): FTS5's own
// vocabulary (`fts5vocab` over `fts`, a table of the connection's temp schema, nothing stored),
// read by ranges of terms, which FTS5 answers from its term index without a scan: whether a word
// is indexed and begins others, its other English forms (the terms with its Porter stem), and the
// closest words to a typo (by edit distance, the commonest first). Each read is bounded: a range
// of at most a few thousand terms, and the search's budget.

import type { StatementSync } from "node:sqlite";
import { editDistance } from "../edit_distance.ts";
import type { HistoryStore } from "./db.ts";
import type { SearchBudget } from "./_search_budget.ts";

/** An indexed word and in how many records it is. */
export interface Term {
  term: string;
  docs: number;
}

/** A word forms and spelling are looked up for: ASCII letters, lower case after the first. */
export const PLAIN_WORD = /^[A-Za-z][a-z]{3,39}$/;

/** The most terms one range read goes through (a common stem or first letters). */
const RANGE_TERMS = 5000;
/** The most other forms a word is searched with. */
export const MAX_FORMS = 6;
/** The most corrections a typo is searched with. */
export const MAX_SPELLINGS = 3;
/**
 * The most indexed words the look-ups of one typo read, within the search's budget: a bound on
 * work, not on time, so that a busy machine gets the same corrections as a quiet one (a few
 * milliseconds on a quiet one).
 */
const SPELLING_TERMS = 40_000;

let stem: ((word: string) => string) | null = null;

/**
 * Loads the stemmer (npm `stemmer`, Porter's algorithm), once per process: only when word forms
 * are needed, never at a command's start (see `withWordForms` in forgive.ts).
 */
export async function loadStemmer(): Promise<void> {
  stem ??= (await import("stemmer")).stemmer;
}

/**
 * Thrown by a search that needs word forms before `loadStemmer` was awaited: the caller loads
 * it and searches again (`withWordForms`).
 */
export class StemmerNotLoadedError extends Error {
  override name = "StemmerNotLoadedError";
  constructor() {
    super("Word forms need the stemmer: await loadStemmer() first");
  }
}

/** The Porter stem of a lower-case word; throws StemmerNotLoadedError before `loadStemmer`. */
export function stemOf(word: string): string {
  if (!stem) throw new StemmerNotLoadedError();
  return stem(word);
}

/** The vocabulary of one connection: its statements, and what it already answered. */
interface Vocabulary {
  exact: StatementSync;
  range: StatementSync;
  forms: Map<string, Term[]>;
}

const vocabularies = new WeakMap<HistoryStore["db"], Vocabulary>();

/**
 * The connection's vocabulary table, made once: in the temp schema, so a store opened only to
 * read (`query_only`) makes it too, and nothing of the store's file changes.
 */
function vocabulary(store: HistoryStore): Vocabulary {
  let found = vocabularies.get(store.db);
  if (found) return found;
  const db = store.db;
  const readOnly = (db.prepare("PRAGMA query_only").get() as { query_only: number }).query_only;
  if (readOnly) db.exec("PRAGMA query_only = OFF");
  try {
    db.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_terms USING fts5vocab(main, fts, row)");
  } finally {
    if (readOnly) db.exec("PRAGMA query_only = ON");
  }
  found = {
    exact: db.prepare("SELECT doc AS docs FROM temp.fts_terms WHERE term = ?"),
    range: db.prepare(
      "SELECT term, doc AS docs FROM temp.fts_terms WHERE term >= ? AND term < ? LIMIT ?",
    ),
    forms: new Map(),
  };
  vocabularies.set(db, found);
  return found;
}

/** In how many records the index holds `term` (lower case), 0 when it holds none. */
export function docsOf(store: HistoryStore, term: string): number {
  const row = vocabulary(store).exact.get(term) as { docs: number } | undefined;
  return row?.docs ?? 0;
}

/** Whether the index holds a word that begins with `prefix` (lower case) and is longer. */
export function begins(store: HistoryStore, prefix: string): boolean {
  return termsFrom(store, prefix, 2).some((found) => found.term !== prefix);
}

/** The first string after every string that begins with `prefix` (ASCII). */
function after(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/** Up to `limit` terms from `from` (inclusive) to `to` (exclusive), in term order. */
function termsFrom(store: HistoryStore, from: string, limit: number, to = after(from)): Term[] {
  return vocabulary(store).range.all(from, to, limit) as unknown as Term[];
}

/**
 * The other forms of `word` (a PLAIN_WORD, lower case) the index holds: the terms with its stem
 * (`rotated`, `rotating`, `rotation` for `rotate`), the commonest first, at most MAX_FORMS. The
 * terms read are those that begin as the word and its stem both do (`happ` for `happy`, whose
 * stem is `happi`); a few thousand at most. Remembered per connection.
 */
export function formsOf(store: HistoryStore, word: string): Term[] {
  const vocab = vocabulary(store);
  const known = vocab.forms.get(word);
  if (known) return known;
  const stem = stemOf(word);
  let shared = 0;
  while (shared < stem.length && stem[shared] === word[shared]) shared++;
  const forms: Term[] = [];
  if (shared >= 3) {
    for (const found of termsFrom(store, word.slice(0, shared), RANGE_TERMS)) {
      if (found.term === word || !/^[a-z]+$/.test(found.term)) continue;
      if (stemOf(found.term) === stem) forms.push(found);
    }
  }
  forms.sort((a, b) => b.docs - a.docs || (a.term < b.term ? -1 : 1));
  forms.length = Math.min(forms.length, MAX_FORMS);
  if (vocab.forms.size > 512) vocab.forms.clear();
  vocab.forms.set(word, forms);
  return forms;
}

/** A correction of a typo: an indexed word, how far from the typo, and how common. */
export interface Spelling extends Term {
  distance: number;
}

/**
 * The indexed words closest to `word` (a PLAIN_WORD, lower case, that the index does not hold):
 * one edit away (two for a word of seven letters or more; a swap of neighbours is one), those
 * closest of all, the commonest first, at most MAX_SPELLINGS. Read by ranges of first letters:
 * those the word begins with, and only when they find nothing, those a word one edit away in its
 * first three letters begins with. Stops when `budget` is spent or SPELLING_TERMS are read, with
 * what it found.
 */
export function closestTerms(
  store: HistoryStore,
  word: string,
  budget: SearchBudget,
): Spelling[] {
  const allowed = word.length >= 7 ? 2 : 1;
  const found = new Map<string, Spelling>();
  let read = 0;
  const consider = (terms: Term[]) => {
    read += terms.length;
    for (const { term, docs } of terms) {
      if (Math.abs(term.length - word.length) > allowed || !/^[a-z]+$/.test(term)) continue;
      const distance = editDistance(word, term);
      if (distance > 0 && distance <= allowed) found.set(term, { term, docs, distance });
    }
  };
  const first = word.slice(0, word.length >= 5 ? 3 : 2);
  consider(termsFrom(store, first, RANGE_TERMS));
  for (const group of found.size ? [] : editedPrefixes(word, first)) {
    for (const prefix of group) {
      if (budget.spent() || read > SPELLING_TERMS) break;
      consider(termsFrom(store, prefix, RANGE_TERMS));
    }
    if (found.size) break;
  }
  const closest = Math.min(...[...found.values()].map((s) => s.distance));
  return [...found.values()]
    .filter((s) => s.distance === closest)
    .sort((a, b) => b.docs - a.docs || (a.term < b.term ? -1 : 1))
    .slice(0, MAX_SPELLINGS);
}

const LETTERS = "abcdefghijklmnopqrstuvwxyz";

/**
 * The first letters of the words one edit from `word` within its first three letters (a letter
 * left out, added, changed, or two swapped), each as short as covers the edit, none covered by
 * another or by `done`: in groups, the likelier and cheaper first (a letter left out or typed
 * twice, two swapped: a range each), then a letter changed or missing in the first two (26
 * ranges each), then in the third (the range of the first two letters).
 */
function editedPrefixes(word: string, done: string): string[][] {
  const cheap: string[] = [];
  const wide: string[] = [];
  for (let i = 0; i < 3 && i < word.length; i++) {
    cheap.push((word.slice(0, i) + word.slice(i + 1)).slice(0, 3));
    if (i + 1 < word.length) {
      cheap.push((word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2)).slice(0, 3));
    }
    if (i === 2) continue;
    for (const letter of LETTERS) {
      wide.push((word.slice(0, i) + letter + word.slice(i + 1)).slice(0, 3));
      wide.push((word.slice(0, i) + letter + word.slice(i)).slice(0, 3));
    }
  }
  // With three letters done, the range of the first two covers every edit of the third.
  const two = done.length > 2 ? word.slice(0, 2) : null;
  const seen = new Set([done]);
  const fresh = (prefixes: string[]) =>
    prefixes.filter((p) => {
      const covered = seen.has(p) || p.length < 3 || p.startsWith(done) ||
        (two !== null && p.startsWith(two));
      seen.add(p);
      return !covered;
    });
  return [fresh(cheap), fresh(wide), ...(two ? [[two]] : [])];
}
