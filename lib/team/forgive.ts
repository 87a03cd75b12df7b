// A team search that forgives, as a local one does (`lib/store/forgive.ts`), in PostgreSQL: the
// words of a query that finds nothing widened in its tsquery, level by level: a prefix
// (`'lante':*`), the word's other English forms, and for a word no record holds, the closest
// words records do hold. Forms are made from the word's Porter stem (the endings English adds,
// each kept only when it has the same stem), since the team database has no vocabulary to read
// cheaply (`ts_stat` reads every record); a form no record holds costs one look-up in the GIN
// index and matches nothing. Spellings come from the records `pg_trgm` finds holding a word
// close to the typo (`<%`, read for a bounded time: no index serves it), read in JS.
// Only plain words widen, as locally: not phrases, negated words, code, numbers or CJK.

import { editDistance } from "../edit_distance.ts";
import type { Forgiven, Matched, MatchHow } from "../store/forgive.ts";
import { MAX_FORMS, MAX_SPELLINGS, PLAIN_WORD, stemOf } from "../store/vocab.ts";
import { tokenize } from "../store/text.ts";

/** The levels a team search widens a query by, in order. */
export const TEAM_LEVELS = ["prefix", "form", "spelling"] as const;
/** One of TEAM_LEVELS. */
export type TeamLevel = typeof TEAM_LEVELS[number];

/** A word of the query that may widen, and what it widens to. */
export interface TeamWord {
  /** Lower case, as the tsquery holds it. */
  word: string;
  /** May be a prefix (three letters or more). */
  prefixed: boolean;
  /** May take forms and spellings (a PLAIN_WORD). */
  plain: boolean;
  forms?: string[];
  spellings?: string[];
}

/**
 * The words of a team query (websearch syntax) that may widen: bare words outside quotes, not
 * negated, not an operator, of ASCII letters (digits and `_` after the first letter) and at
 * least three of them; in the order typed, each once.
 */
export function teamWords(query: string): TeamWord[] {
  const words = new Map<string, TeamWord>();
  const unquoted = query.replace(/"[^"]*"?/g, " ");
  for (const match of unquoted.matchAll(/(^|[\s(])(-?)([^\s()]+)/g)) {
    const [, , negated, token] = match;
    if (negated || /^(or|and|not)$/i.test(token!)) continue;
    if (!/^[A-Za-z][A-Za-z0-9_]{2,}$/.test(token!) || token!.includes("_")) continue;
    const word = token!.toLowerCase();
    if (!words.has(word)) {
      words.set(word, { word, prefixed: true, plain: PLAIN_WORD.test(token!) });
    }
  }
  return [...words.values()];
}

/**
 * The tsquery (as text) with each lexeme of `words` that stands alone (not in a phrase, not
 * negated, not already a prefix) replaced by its alternatives at `level`; null when nothing
 * changed.
 */
export function widenTsquery(
  tsquery: string,
  words: readonly TeamWord[],
  level: TeamLevel,
): string | null {
  const byWord = new Map(words.map((w) => [w.word, w]));
  let changed = false;
  const widened = tsquery.replace(
    /(!?\s*)'((?:[^']|'')*)'(:\*)?(\s*<\d*-?>)?/g,
    (
      whole: string,
      not: string,
      lexeme: string,
      star: string | undefined,
      next: string | undefined,
      at: number,
    ) => {
      const word = byWord.get(lexeme.replaceAll("''", "'"));
      const before = tsquery.slice(0, at).trimEnd();
      if (!word || not.trim() || star || next || /<\d*-?>$/.test(before)) return whole;
      const alternatives = alternativesOf(word, level);
      if (alternatives.length === 1 && alternatives[0] === `'${word.word}'`) return whole;
      changed = true;
      return `${not}${
        alternatives.length === 1 ? alternatives[0] : `( ${alternatives.join(" | ")} )`
      }`;
    },
  );
  return changed ? widened : null;
}

/** The tsquery terms `word` widens to at `level`, holding those of the levels below. */
function alternativesOf(word: TeamWord, level: TeamLevel): string[] {
  const quoted = (w: string) => `'${w.replaceAll("'", "''")}'`;
  const own = word.prefixed ? `${quoted(word.word)}:*` : quoted(word.word);
  if (level === "prefix" || !word.plain) return [own];
  const forms = (word.forms ??= formsByRule(word.word));
  const widened = [own, ...forms.filter((f) => !f.startsWith(word.word)).map(quoted)];
  if (level === "form" || !word.spellings?.length) return widened;
  return [...widened, ...word.spellings.map(quoted)];
}

/** The endings English adds to a stem, for making a word's forms. */
const ENDINGS = [
  "",
  "e",
  "s",
  "es",
  "ed",
  "d",
  "ing",
  "er",
  "ers",
  "ion",
  "ions",
  "ation",
  "ations",
  "ment",
  "ments",
  "ly",
  "ity",
  "ness",
  "ive",
  "al",
  "or",
  "ors",
  "ate",
  "ates",
  "ated",
  "ating",
  "ize",
  "izes",
  "ized",
  "izing",
  "y",
  "ies",
  "ied",
];

/**
 * The other forms of `word` (lower case, a PLAIN_WORD) English may have: its stem (and the word)
 * with each common ending, a final consonant doubled before one that starts with a vowel, a
 * final `i` as the `y` it stood for; each kept only when its stem is the word's. The stemmer
 * must be loaded (StemmerNotLoadedError otherwise).
 */
export function formsByRule(word: string): string[] {
  const stem = stemOf(word);
  const bases = new Set([stem, word, stem.replace(/i$/, "y"), stem.replace(/i$/, "")]);
  const found = new Set<string>();
  for (const base of bases) {
    if (base.length < 3) continue;
    for (const ending of ENDINGS) {
      found.add(base + ending);
      if (/^[aeiou]/.test(ending) && /[^aeiou][aeiou][bdfgklmnprtvz]$/.test(base)) {
        found.add(base + base.at(-1) + ending);
      }
    }
  }
  found.delete(word);
  return [...found]
    .filter((form) => PLAIN_WORD.test(form) && stemOf(form) === stem)
    .sort((a, b) => a.length - b.length || (a < b ? -1 : 1))
    .slice(0, MAX_FORMS * 2);
}

/**
 * The words of `texts` (records found holding a word close to `word`) closest to it: one edit
 * away (two for seven letters or more), those closest of all, the commonest among the texts
 * first, at most MAX_SPELLINGS.
 */
export function spellingsIn(texts: readonly string[], word: string): string[] {
  const allowed = word.length >= 7 ? 2 : 1;
  const counts = new Map<string, { distance: number; n: number }>();
  for (const text of texts) {
    for (const token of new Set(tokenize(text))) {
      if (Math.abs(token.length - word.length) > allowed || !/^[a-z]+$/.test(token)) continue;
      const known = counts.get(token);
      if (known) {
        known.n++;
        continue;
      }
      const distance = editDistance(word, token);
      if (distance > 0 && distance <= allowed) counts.set(token, { distance, n: 1 });
    }
  }
  const closest = Math.min(...[...counts.values()].map((c) => c.distance));
  return [...counts]
    .filter(([, c]) => c.distance === closest)
    .sort((a, b) => b[1].n - a[1].n || (a[0] < b[0] ? -1 : 1))
    .slice(0, MAX_SPELLINGS)
    .map(([token]) => token);
}

/** What a team search that found nothing as typed says it searched instead. */
export function teamForgiven(
  query: string,
  words: readonly TeamWord[],
  level: TeamLevel,
): Forgiven {
  const shown = query.replace(/"[^"]*"?|[^\s()"]+/g, (token) => {
    const word = words.find((w) => w.word === token.toLowerCase());
    if (!word) return token;
    const alternatives = alternativesOf(word, level).map((a) =>
      a.replace(/^'(.*)'(:\*)?$/, (_m, w: string, star?: string) => `${w}${star ? "*" : ""}`)
    );
    return alternatives.length === 1 ? alternatives[0]! : `(${alternatives.join(" OR ")})`;
  });
  return { how: level, searched: shown, note: `no hits for "${query}"; showing "${shown}"` };
}

/**
 * How each word of `query` matched a hit's `text`, the words of `words` widened to `level` (as
 * typed, a prefix, another form, a correction; null: as typed); words and phrases the text
 * lacks are left out.
 */
export function teamMatched(
  text: string,
  query: string,
  words: readonly TeamWord[],
  level: TeamLevel | null,
): Matched[] {
  const tokens = new Set(tokenize(text));
  const lower = text.toLowerCase();
  const out: Matched[] = [];
  const widened = new Set(words.map((w) => w.word));
  for (const match of query.matchAll(/"([^"]*)"?|(?:^|(?<=[\s(]))-?([^\s()"]+)/g)) {
    const said = (match[1] ?? match[2] ?? "").toLowerCase().trim();
    if (!said || match[0].startsWith("-") || /^(or|and|not)$/.test(said)) continue;
    if (widened.has(said)) continue;
    const inside = tokenize(said);
    const held = inside.length ? inside.every((t) => tokens.has(t)) : lower.includes(said);
    if (held) out.push({ word: said, term: said, how: "exact" });
  }
  for (const w of words) {
    const found = (how: MatchHow, term: string | undefined) =>
      term !== undefined && (out.push({ word: w.word, term, how }), true);
    if (found("exact", tokens.has(w.word) ? w.word : undefined)) continue;
    if (level === null) continue;
    if (w.prefixed && found("prefix", [...tokens].find((t) => t.startsWith(w.word)))) continue;
    if (level === "prefix") continue;
    if (found("form", w.forms?.find((f) => tokens.has(f)))) continue;
    if (level === "spelling") found("spelling", w.spellings?.find((s) => tokens.has(s)));
  }
  return out;
}
