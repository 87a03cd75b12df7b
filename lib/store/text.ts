// Text the store derives from raw records: conversation titles, and snippets with the matched
// terms marked.

import { visibleMap } from "../invisible.ts";
import { hasCjk } from "./cjk.ts";
import { isAscii } from "./_letters.ts";

/** A title cut (at a word where possible, never inside a surrogate pair) to at most `max` characters. */
export function cutTitle(line: string, max = 80): string {
  if (line.length <= max) return line;
  let cut = line.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  if (space > max * 0.6) cut = cut.slice(0, space);
  else if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/** The words and phrases of a search query, lowercased, for marking matches in snippets. */
export function queryTerms(query: string): { text: string; prefix: boolean }[] {
  const terms: { text: string; prefix: boolean }[] = [];
  const pattern = /"([^"]*)"|([^\s()"]+)/g;
  for (const match of query.matchAll(pattern)) {
    const phrase = match[1];
    if (phrase !== undefined) {
      const words = tokenize(phrase);
      if (words.length) terms.push({ text: words.join(" "), prefix: false });
      continue;
    }
    const word = match[2]!;
    if (/^(AND|OR|NOT|NEAR)$/.test(word)) continue;
    const prefix = word.endsWith("*");
    for (const token of tokenize(word.replace(/^[-^+]/, "").replace(/\*$/, ""))) {
      terms.push({ text: token, prefix });
    }
  }
  return terms;
}

const ASCII_WORD = /[A-Za-z0-9]+/g;
/** Made on first use: a pattern with Unicode properties costs a start even when never run. */
let word: RegExp | undefined;

/** Lowercased word tokens, roughly as FTS5's unicode61 tokenizer sees them. */
export function tokenize(text: string): string[] {
  const folded = fold(text);
  if (isAscii(folded)) return folded.match(ASCII_WORD) ?? [];
  word ??= /[\p{L}\p{N}\p{Co}]+/gu;
  return folded.match(word) ?? [];
}

/** Lowercase without diacritics, length-preserving for the common cases. */
function fold(text: string): string {
  return text.toLowerCase();
}

/** A window of `text` around the first match, with matches as `[start, end)` ranges in it. */
export interface Snippet {
  text: string;
  ranges: [number, number][];
}

/** Runs of whitespace a snippet shows as one space; not the BOM, which JS counts as one. */
const SPACES = /[^\S\ufeff]+/g;

/**
 * Builds a snippet of about `width` characters around the first matched term. Terms are matched
 * in what a reader sees, as the index holds it (`pass\u200bword` is `password`), and marked in
 * the text as it is, invisible characters and all, for the terminal filter to show. `found` has,
 * for each term, the first word of the whole text it matched (lower case), or null.
 */
export function makeSnippet(
  text: string,
  terms: { text: string; prefix: boolean }[],
  width = 240,
): Snippet & { found: (string | null)[] } {
  const flat = text.replace(SPACES, " ").trim();
  const lower = flat.toLowerCase();
  const visible = visibleMap(lower);
  const seen = visible?.text ?? lower;
  const ascii = isAscii(seen);
  const ranges: [number, number][] = [];
  const found = terms.map(() => null as string | null);
  terms.forEach((term, i) => {
    if (!term.text) return;
    for (const m of seen.matchAll(termPattern(term, ascii))) {
      found[i] ??= m[0];
      const end = m.index + m[0].length;
      ranges.push(visible ? [visible.at[m.index]!, visible.at[end - 1]! + 1] : [m.index, end]);
      if (ranges.length > 200) break;
    }
  });
  ranges.sort((a, b) => a[0] - b[0]);
  const first = ranges[0]?.[0] ?? 0;
  let start = Math.max(0, first - Math.floor(width / 3));
  if (start > 0) {
    const space = flat.indexOf(" ", start);
    if (space >= 0 && space < first) start = space + 1;
  }
  let end = Math.min(flat.length, start + width);
  if (end < flat.length) {
    const space = flat.lastIndexOf(" ", end);
    if (space > first) end = space;
  }
  const prefix = start > 0 ? "…" : "";
  const suffix = end < flat.length ? "…" : "";
  const shift = prefix.length - start;
  return {
    found,
    text: prefix + flat.slice(start, end) + suffix,
    ranges: ranges
      .filter(([a, b]) => a >= start && b <= end)
      .map(([a, b]) => [a + shift, b + shift]),
  };
}

/**
 * `snippet` with what comes before its first match cut to at most `before` characters (from a
 * space where one is near, then `…`), so a line that shows only its start shows the match.
 */
export function leadToMatch(snippet: Snippet, before: number): Snippet {
  const first = snippet.ranges[0]?.[0];
  if (first === undefined || first <= before) return snippet;
  let start = first - Math.max(0, before - 1);
  // Begun inside a word: from the next one instead.
  const space = snippet.text[start - 1] === " " ? -1 : snippet.text.indexOf(" ", start);
  if (space >= 0 && space < first) start = space + 1;
  const shift = 1 - start;
  return {
    text: "…" + snippet.text.slice(start),
    ranges: snippet.ranges.map(([a, b]) => [a + shift, b + shift] as [number, number]),
  };
}

const patterns = new Map<string, RegExp>();

/**
 * The pattern matching a term as a whole word (or a prefix), compiled once per term: for ASCII
 * text (`ascii`), with the class that is cheap to compile.
 */
function termPattern(term: { text: string; prefix: boolean }, ascii: boolean): RegExp {
  const key = `${ascii ? "a" : "u"}${term.prefix ? "*" : "="}${term.text}`;
  let re = patterns.get(key);
  if (!re) {
    const letter = ascii ? "A-Za-z0-9" : "\\p{L}\\p{N}";
    const pattern = term.text.split(" ").map(escapeRegExp).join(`[^${letter}]+`);
    // A CJK word sits inside a run of letters (a sentence has no spaces): no boundary there.
    const before = hasCjk(term.text.slice(0, 2)) ? "" : `(?<![${letter}])`;
    const after = term.prefix
      ? `[${letter}]*`
      : hasCjk(term.text.slice(-2))
      ? ""
      : `(?![${letter}])`;
    re = new RegExp(`${before}${pattern}${after}`, "gu");
    if (patterns.size > 256) patterns.clear();
    patterns.set(key, re);
  }
  return re;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
