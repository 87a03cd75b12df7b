// A search that forgives: the words of a query widened, level by level, with what the index
// holds (`vocab.ts`): the first letters of a word as a prefix (`lante` as `lante*`), its other
// English forms (`rotating` also as `rotate`, `rotated`, `rotation`), and for a word the index
// does not hold, the closest words it does (`lanternfsh` as `lanternfish`). Each level's query
// holds the one below it, so a search can run them in order (`fallback`: the first that finds
// something) or rank their matches in tiers (`typing`: exact, then prefix, then forms).
//
// Only plain words widen: a quoted phrase, a word with digits, `_`, `.` or capitals inside it
// (code: `snake_case`, `useState`, `file.ts`), a number, CJK, and a query with FTS5's columns,
// NEAR or `^` stay as typed. A word of three letters may be a prefix; forms and spellings need
// four. The word after NOT is never widened: it would take out more than was typed.

import {
  checkBounds,
  isFtsSyntaxError,
  MAX_PREFIXES,
  MAX_TERMS,
  MIN_PREFIX_CHARS,
  SearchLimitError,
} from "./_search_bounds.ts";
import type { HistoryStore } from "./db.ts";
import type { SearchBudget } from "./_search_budget.ts";
import { tokenize } from "./text.ts";
import {
  begins,
  closestTerms,
  docsOf,
  formsOf,
  loadStemmer,
  PLAIN_WORD,
  StemmerNotLoadedError,
} from "./vocab.ts";

/**
 * How a search forgives: `exact` not at all (the query as typed); `fallback` the query as typed
 * and, only when that finds nothing, prefixes, then word forms, then spellings, the first level
 * that finds something; `typing` the last word also a prefix and every word's forms, exact
 * matches first, then prefix-only, then forms, and spellings when that finds nothing.
 */
export const FORGIVE_MODES = ["exact", "fallback", "typing"] as const;
/** One of FORGIVE_MODES. */
export type Forgive = typeof FORGIVE_MODES[number];

/** How a word of the query matched a hit. */
export type MatchHow = "exact" | "prefix" | "form" | "spelling";

/** The levels of a forgiving search, each widening the one before. */
export const LEVELS = ["exact", "prefix", "form", "spelling"] as const;
/** A level's index in LEVELS. */
export type Level = 0 | 1 | 2 | 3;

/** What a search searched instead of the query as typed, and the sentence that says so. */
export interface Forgiven {
  how: "prefix" | "form" | "spelling";
  /** The query searched, as FTS5 syntax (`lanternfish`, `lante*`, `(rotate OR rotated)`). */
  searched: string;
  /** `no hits for "lanternfsh"; showing "lanternfish"` */
  note: string;
}

/** A word of the query and the word of the hit it matched. */
export interface Matched {
  /** The word as the index reads the query (lower case), or the phrase's words. */
  word: string;
  /** The hit's word it matched. */
  term: string;
  how: MatchHow;
}

/** A query piece: a phrase, a parenthesis, an operator, or a bare word (with its `*`). */
const PIECE = /"(?:[^"]|"")*"\*?|[()]|[^\s()"]+/g;

/** Query syntax forgiveness leaves alone: columns, NEAR, `^`, `+`, and braces. */
const UNTOUCHED = /[:^+{}]|\bNEAR\b/;

/** A bare word of the query a forgiving search may widen, and what it widens to. */
interface Word {
  /** Its piece's index. */
  piece: number;
  /** Lower case. */
  word: string;
  /** May be written as a prefix at the prefix level (`typing`: the last word only). */
  prefixed: boolean;
  /** May take other forms and spellings (a PLAIN_WORD). */
  plain: boolean;
  /** Looked up when first needed. */
  docs?: number;
  begins?: boolean;
  forms?: string[];
  spellings?: string[];
}

/** One query of a search that ranks in tiers, and the level it widens to. */
export interface Tier {
  query: string;
  level: Level;
}

/** A word of the query as it is matched (for `matched`): bare, a user's prefix, or a phrase. */
interface Said {
  word: string;
  tokens: string[];
  prefix: boolean;
  /** Quoted as typed: its words are one term, as FTS5 matches them. */
  phrase: boolean;
  widened: Word | null;
}

/** The levels of one query. */
export class Forgiveness {
  readonly mode: Forgive;
  /** The query the levels widen (FTS5 syntax, after punctuated words were quoted). */
  readonly typed: string;
  readonly #store: HistoryStore;
  readonly #budget: SearchBudget;
  readonly #pieces: string[];
  readonly #words: Word[];
  readonly #said: Said[];
  #queries = new Map<Level, string>();

  /**
   * The levels of `typed`, the FTS5 query of `query` (as the user typed it, which may have a
   * punctuated word the search quoted: `phx.server` as `"phx.server"`).
   */
  constructor(
    store: HistoryStore,
    typed: string,
    mode: Forgive,
    budget: SearchBudget,
    query = typed,
  ) {
    this.mode = mode;
    this.typed = typed;
    this.#store = store;
    this.#budget = budget;
    this.#pieces = typed.match(PIECE) ?? [];
    this.#words = [];
    this.#said = [];
    const untouched = mode === "exact" || UNTOUCHED.test(typed);
    const asTyped = query.match(PIECE) ?? [];
    const original = asTyped.length === this.#pieces.length ? asTyped : this.#pieces;
    let lastBare = -1;
    this.#pieces.forEach((piece, i) => {
      const before = this.#pieces[i - 1];
      if (/^(AND|OR|NOT|NEAR)$/.test(piece) || piece === "(" || piece === ")") return;
      if (before === "NOT") return;
      if (piece.startsWith('"')) {
        const tokens = tokenize(piece.replace(/"\*?$/, "").slice(1));
        const prefix = piece.endsWith("*");
        const phrase = original[i]!.startsWith('"');
        const word = phrase ? tokens.join(" ") : original[i]!.replace(/\*$/, "").toLowerCase();
        if (tokens.length) this.#said.push({ word, tokens, prefix, phrase, widened: null });
        return;
      }
      const star = piece.length > 1 && piece.endsWith("*");
      const bare = star ? piece.slice(0, -1) : piece;
      const tokens = tokenize(bare);
      if (!tokens.length) return;
      const word = bare.toLowerCase();
      const widenable = !untouched && !star && /^[A-Za-z0-9_]+$/.test(bare) &&
        /[A-Za-z]/.test(bare) && bare.length >= MIN_PREFIX_CHARS;
      const widened: Word | null = widenable
        ? { piece: i, word, prefixed: mode === "fallback", plain: PLAIN_WORD.test(bare) }
        : null;
      if (widened) this.#words.push(widened);
      this.#said.push({ word, tokens, prefix: star, phrase: false, widened });
      lastBare = i;
    });
    if (mode === "typing") {
      const last = this.#words.find((w) => w.piece === lastBare);
      if (last) last.prefixed = true;
    }
    // FTS5 expands each prefix before the first row: no more than a query may have.
    let prefixes = this.#pieces.filter((p) => p.length > 1 && p.endsWith("*")).length;
    for (const word of this.#words) {
      if (word.prefixed && prefixes >= MAX_PREFIXES) word.prefixed = false;
      if (word.prefixed) prefixes++;
    }
  }

  /** True when some word may widen: a forgiving search has levels to try. */
  get widens(): boolean {
    return this.#words.length > 0;
  }

  /**
   * The query at `level`, holding every level below (FTS5 syntax, as typed but for the words
   * widened); the query as typed at level 0. Level 2 needs the stemmer (StemmerNotLoadedError
   * before `loadStemmer`); level 3 reads the vocabulary for each word the index does not hold.
   */
  query(level: Level): string {
    const known = this.#queries.get(level);
    if (known !== undefined) return known;
    const pieces = [...this.#pieces];
    const room = roomPerWord(this.#pieces, this.#words.length);
    for (const word of this.#words) {
      const alternatives = this.#alternatives(word, level).slice(0, room);
      const written = alternatives.length === 1
        ? alternatives[0]!
        : `(${alternatives.join(" OR ")})`;
      if (written !== word.word) pieces[word.piece] = written;
    }
    const query = level === 0 ? this.typed : rejoin(this.typed, pieces);
    this.#queries.set(level, query);
    return query;
  }

  /** The alternatives of `word` at `level`, as FTS5 terms, the word itself (or its prefix) first. */
  #alternatives(word: Word, level: Level): string[] {
    if (level === 0) return [word.word];
    const store = this.#store;
    word.begins ??= begins(store, word.word);
    const prefix = word.prefixed && word.begins;
    const own = prefix ? `${word.word}*` : word.word;
    if (level === 1 || !word.plain) return [own];
    word.forms ??= formsOf(store, word.word).map((f) => f.term);
    const forms = word.forms.filter((form) => !prefix || !form.startsWith(word.word));
    word.docs ??= docsOf(store, word.word);
    const held = word.docs > 0 || prefix;
    if (level === 2 || held) {
      return held || !forms.length ? [own, ...forms] : forms;
    }
    word.spellings ??= closestTerms(store, word.word, this.#budget).map((s) => s.term);
    const others = [...forms, ...word.spellings];
    return held || !others.length ? [own, ...others] : others;
  }

  /** What a search that found nothing as typed but found the query of `level` says. */
  forgiven(level: Exclude<Level, 0>, query: string): Forgiven {
    const searched = this.query(level);
    return {
      how: LEVELS[level] as Forgiven["how"],
      searched,
      note: `no hits for "${query.trim()}"; showing "${searched}"`,
    };
  }

  /**
   * The terms a hit's snippet marks at `level` (every alternative of every word, phrases whole),
   * each with its word of the query and how it matches; the `found` of that snippet gives
   * `matched`.
   */
  terms(level: Level): SnippetTerm[] {
    const terms: SnippetTerm[] = [];
    this.#said.forEach((said, i) => {
      const widened = said.widened;
      if (!widened || level === 0) {
        // As typed, as `queryTerms` marks them: a phrase whole, a word's tokens apiece.
        const texts = said.phrase ? [said.tokens.join(" ")] : said.tokens;
        for (const text of texts) terms.push({ text, prefix: said.prefix, said: i, how: "exact" });
        return;
      }
      const alternatives = this.#alternatives(widened, level);
      const forms = new Set(widened.forms ?? []);
      for (const alternative of alternatives) {
        const prefix = alternative.endsWith("*");
        const text = prefix ? alternative.slice(0, -1) : alternative;
        const how = text === widened.word ? "exact" : forms.has(text) ? "form" : "spelling";
        terms.push({ text, prefix, said: i, how });
      }
    });
    return terms;
  }

  /**
   * How each word of the query matched a hit, from what its snippet found of `terms` (each
   * term's first match in the whole text, or null): as typed, as a prefix, as another form, or
   * as a correction, the closest way the text has; words the text lacks (an `OR`'s other side)
   * are left out.
   */
  matched(terms: readonly SnippetTerm[], found: readonly (string | null)[]): Matched[] {
    const best = new Map<number, Matched>();
    terms.forEach((term, i) => {
      const match = found[i];
      if (match === null || match === undefined) return;
      const said = this.#said[term.said]!;
      const how = term.prefix && match !== term.text ? "prefix" : term.how;
      const known = best.get(term.said);
      if (known && RANK[known.how] <= RANK[how]) return;
      best.set(term.said, { word: said.word, term: how === "exact" ? said.word : match, how });
    });
    return [...best.keys()].sort((a, b) => a - b).map((i) => best.get(i)!);
  }
}

/** A term a snippet marks, with the word of the query it stands for and how it matches it. */
export interface SnippetTerm {
  text: string;
  prefix: boolean;
  /** The word's index among the query's words. */
  said: number;
  /** How a match of the whole term matches (a prefix's longer words match as `prefix`). */
  how: MatchHow;
}

/** The closer a way of matching, the lower. */
const RANK: Record<MatchHow, number> = { exact: 0, prefix: 1, form: 2, spelling: 3 };

/**
 * How many alternatives each widened word may have, so that the widest query stays within a
 * query's bound on terms (every word of a phrase counts).
 */
function roomPerWord(pieces: readonly string[], widened: number): number {
  if (!widened) return 0;
  const others = pieces.reduce(
    (n, p) => /^(AND|OR|NOT|\(|\))$/.test(p) ? n : n + Math.max(1, tokenize(p).length),
    0,
  ) - widened;
  return Math.max(1, Math.floor((MAX_TERMS - others) / widened));
}

/**
 * `typed` with its pieces replaced by `pieces`, in order, the spaces between kept. FTS5 joins
 * only phrases by a space (an implicit AND): next to a group, the AND is written out.
 */
function rejoin(typed: string, pieces: readonly string[]): string {
  let i = 0;
  return typed.replace(PIECE, () => {
    const piece = pieces[i]!;
    const before = pieces[i - 1];
    i++;
    const joined = before !== undefined && !/^(AND|OR|NOT|\()$/.test(before) &&
      !/^(AND|OR|NOT|\))$/.test(piece) && (isGroup(before) || isGroup(piece));
    return joined ? `AND ${piece}` : piece;
  });
}

/** A parenthesis, or a group of alternatives a word was widened to. */
function isGroup(piece: string): boolean {
  return piece.startsWith("(") || piece.endsWith(")");
}

/** What one page of a search found, for `runLevels`. */
export interface LevelPage<R> {
  result: R;
  /** False when its queries matched nothing at all (a stopped search found something). */
  found: boolean;
  /** The level of its best match (its tiers are ranked in order). */
  best: Level;
}

/**
 * A search by the levels of `forgiveness`, each page searched by `page`: the query as typed
 * (with `typing`, its exact, prefix and form levels as tiers, ranked in that order); when that
 * matched nothing and the search forgives, each wider level in turn, the first that matches
 * something being the answer, with what it searched instead (`forgiven`). `query` is what the
 * user typed, for the note. When no level matched anything, `nothing` is called with the widest
 * query of the first page (which may throw: the index may be damaged, `nothingFound`).
 */
export function runLevels<R extends object>(
  forgiveness: Forgiveness,
  query: string,
  page: (tiers: Tier[]) => LevelPage<R>,
  nothing: (searched: string) => void,
): R & { forgiven?: Forgiven } {
  const f = forgiveness;
  const typing = f.mode === "typing" && f.widens;
  const first: Tier[] = [{ query: f.typed, level: 0 }];
  if (typing) {
    for (const level of [1, 2] as const) {
      const widened = f.query(level);
      if (widened !== first.at(-1)!.query && withinBounds(widened)) {
        first.push({ query: widened, level });
      }
    }
  }
  const found = page(first);
  if (found.found || f.mode === "exact" || !f.widens) {
    if (!found.found) nothing(first.at(-1)!.query);
    return found.best > 0
      ? { ...found.result, forgiven: f.forgiven(found.best as Exclude<Level, 0>, query) }
      : found.result;
  }
  let last = first.at(-1)!.query;
  for (const level of typing ? [3] as const : [1, 2, 3] as const) {
    const widened = f.query(level);
    if (widened === last || !withinBounds(widened)) continue;
    last = widened;
    let tried: LevelPage<R>;
    try {
      tried = page([{ query: widened, level }]);
    } catch (err) {
      if (isFtsSyntaxError(err)) continue;
      throw err;
    }
    if (tried.found) return { ...tried.result, forgiven: f.forgiven(level, query) };
  }
  nothing(first.at(-1)!.query);
  return found.result;
}

/** Whether a widened query is within a query's bounds (its words and prefixes). */
function withinBounds(query: string): boolean {
  try {
    checkBounds(query);
    return true;
  } catch (err) {
    if (err instanceof SearchLimitError) return false;
    throw err;
  }
}

/**
 * Runs `search`, a search that may need word forms: when it does and the stemmer is not loaded
 * yet, loads it (a few milliseconds, once per process) and runs it again. A search that found
 * what it needed before forms never loads it.
 */
export async function withWordForms<T>(search: () => T): Promise<T> {
  try {
    return search();
  } catch (err) {
    if (!(err instanceof StemmerNotLoadedError)) throw err;
    await loadStemmer();
    return search();
  }
}
