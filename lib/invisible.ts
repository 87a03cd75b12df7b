// Characters a reader cannot see: Unicode's default-ignorable code points (the zero-width space,
// joiner and non-joiner, the word joiner, the BOM, the soft hyphen, bidi marks and controls,
// variation selectors, tag characters, Hangul fillers). A word with one inside (`pass\u200bword`)
// reads as the word without it, so the index and a query take text without them, while the
// terminal filter shows them (`lib/safe_text.ts`) and the raw bytes keep them.

/**
 * Unicode's Default_Ignorable_Code_Point as the body of a character class for a `u` pattern,
 * written out: a property class costs V8 a compile in every process, these ranges almost nothing.
 */
export const INVISIBLE_CLASS = "\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f" +
  "\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0" +
  "\\ufff0-\\ufff8\\u{1bca0}-\\u{1bca3}\\u{1d173}-\\u{1d17a}\\u{e0000}-\\u{e0fff}";

/**
 * The first code units of the invisible characters, as the body of a class for a pattern without
 * the `u` flag: the characters of the BMP themselves, and the lead surrogates of the others (which
 * lead visible characters too: `isInvisible` tells). A scan for these runs at the speed of a
 * plain class, where one for astral ranges with the `u` flag is several times slower.
 */
export const INVISIBLE_UNITS = "\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f" +
  "\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0" +
  "\\ufff0-\\ufff8\\ud82f\\ud834\\udb40-\\udb43";

const ANY = new RegExp(`[${INVISIBLE_CLASS}]`, "u");
const RUNS = new RegExp(`[${INVISIBLE_CLASS}]+`, "gu");
/** Whether text may hold one: the cheap scan, which most text (with none) ends at. */
const MAYBE = new RegExp(`[${INVISIBLE_UNITS}]`);

/** True when the code point `code` is an invisible character. */
export function isInvisible(code: number): boolean {
  return ANY.test(String.fromCodePoint(code));
}

/**
 * `text` without its invisible characters: the word a reader sees, as the index and a query take
 * it (`pass\u200bword` is `password`). Text without any comes back as it is.
 */
export function withoutInvisible(text: string): string {
  return MAYBE.test(text) ? text.replace(RUNS, "") : text;
}

/**
 * `text` without its invisible characters, with where each of its code units was in `text`
 * (`at[i]` for the unit at `i`), so a match found in what a reader sees can be marked in the
 * text as it is; null when `text` has none.
 */
export function visibleMap(text: string): { text: string; at: number[] } | null {
  if (!MAYBE.test(text) || !ANY.test(text)) return null;
  let visible = "";
  const at: number[] = [];
  let from = 0;
  for (const run of text.matchAll(RUNS)) {
    for (let i = from; i < run.index; i++) at.push(i);
    visible += text.slice(from, run.index);
    from = run.index + run[0].length;
  }
  for (let i = from; i < text.length; i++) at.push(i);
  return { text: visible + text.slice(from), at };
}

/** A run of tag characters (U+E0000–E007F), as a pattern for the `u` flag. */
export const TAG_RUN = "[\\u{e0000}-\\u{e007f}]+";

/** The tags of the subdivision flags emoji have (England, Scotland, Wales), cancel tag and all. */
const FLAG_TAGS = new Set(
  ["gbeng", "gbsct", "gbwls"].map((code) =>
    [...code, "\x7f"].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("")
  ),
);

/**
 * The text that the run of tag characters `run`, found at `at` in `text`, spells and no one sees
 * (U+E0020–E007E are ASCII's printable characters; any other tag is written `\u{e0001}`), or null
 * when the run is the tags of a subdivision flag after its 🏴 (🏴󠁧󠁢󠁳󠁣󠁴󠁿, Scotland), which show.
 */
export function tagText(text: string, at: number, run: string): string | null {
  if (text.codePointAt(at - 2) === 0x1f3f4 && FLAG_TAGS.has(run)) return null;
  let spelt = "";
  for (const c of run) {
    const code = c.codePointAt(0)! - 0xe0000;
    spelt += code >= 0x20 && code <= 0x7e
      ? String.fromCharCode(code)
      : `\\u{${(code + 0xe0000).toString(16)}}`;
  }
  return spelt;
}
