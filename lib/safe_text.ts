// The one filter between text that came from a transcript and a terminal: every character a
// terminal would act on (escape sequences, C1 controls, carriage returns, bidi controls) and every
// character a reader cannot see (zero-width characters, bidi marks, the BOM, tag characters) is
// shown as visible text instead, so nothing a transcript holds can move the cursor, clear the
// screen, set the clipboard or the window title, open a link, reorder what the reader sees, or
// say what the reader cannot see.

import { INVISIBLE_CLASS, INVISIBLE_UNITS, isInvisible, tagText } from "./invisible.ts";

// What may begin a character the filter shows, one code unit at a time (a scan for one class of
// code units is the fastest V8 has): C0 controls but tab, DEL, C1 controls (as code points: a
// string holds what UTF-8 decoded), the line and paragraph separators, and the invisible
// characters (`lib/invisible.ts`), among them the bidi marks and the bidi embeddings, overrides
// and isolates of "Trojan Source" (CVE-2021-42574). Newline is not looked for in multi-line text,
// so that ordinary text costs nothing per line.
const SUSPECT_LINE = new RegExp(
  `[\\0-\\x08\\n-\\x1f\\x7f-\\x9f\\u2028\\u2029${INVISIBLE_UNITS}]`,
  "g",
);
const SUSPECT_MULTI = new RegExp(
  `[\\0-\\x08\\x0b-\\x1f\\x7f-\\x9f\\u2028\\u2029${INVISIBLE_UNITS}]`,
  "g",
);
/** What a variation selector selects nothing after: a space, a control, what the filter shows. */
const NO_BASE = new RegExp(`^[\\s\\0-\\x1f\\x7f-\\x9f\\u2028\\u2029${INVISIBLE_CLASS}]$`, "u");
const SKIN_TONE = /^[\u{1f3fb}-\u{1f3ff}]$/u;

/**
 * `text` made safe to print on a terminal: ESC is shown as `␛`, every other C0 or C1 control
 * and DEL as `\xNN`, a bidi control, a line or paragraph separator or an invisible character
 * (zero-width space, joiner and non-joiner, word joiner, BOM, soft hyphen, bidi marks) as
 * `\uNNNN` (`\u{NNNNN}` past U+FFFF), and a run of tag characters, which spells text no one sees,
 * as that text: `⟨tag text: …⟩`. What an emoji needs is kept: a joiner between two emoji
 * (👨‍👩‍👧), a variation selector after a character it may follow, the tags of a subdivision flag.
 * Tab is kept; newline is kept (a CRLF becomes a newline) only with `multiline`, for text whose
 * layout needs line ends; a lone CR is always shown, since it would let a line overwrite what came
 * before it. Invalid UTF-8 was replaced by U+FFFD when the bytes were decoded, and a lone
 * surrogate is written as U+FFFD by the encoder. Filter text before styling it: the styler's own
 * colour codes must not pass through here.
 *
 * @example
 * safeText("ok\x1b]52;c;ZXZpbA==\x07"); // "ok␛]52;c;ZXZpbA==\x07"
 * safeText("pass\u200bword"); // "pass\u200bword" (the escape, as six characters)
 */
export function safeText(text: string, options: { multiline?: boolean } = {}): string {
  const multiline = options.multiline === true;
  const suspect = multiline ? SUSPECT_MULTI : SUSPECT_LINE;
  // By hand rather than with replace(): V8's replace with a function copies the whole text slowly
  // once anything matched (about 17 ms a megabyte), and an emoji's joiner is common.
  let out = "";
  let done = 0;
  suspect.lastIndex = 0;
  for (let found = suspect.exec(text); found; found = suspect.exec(text)) {
    const at = found.index;
    const code = text.codePointAt(at)!;
    let end = at + (code > 0xffff ? 2 : 1);
    let shown: string;
    if (code === 0x0d && text.charCodeAt(at + 1) === 0x0a) {
      end = at + 2;
      shown = multiline ? "\n" : "\\x0d\\x0a";
    } else if (code === 0x1b) shown = "␛";
    else if (isTag(code)) {
      while (isTag(text.codePointAt(end))) end += 2;
      const run = text.slice(at, end);
      const spelt = tagText(text, at, run);
      shown = spelt === null ? run : `⟨tag text: ${spelt}⟩`;
    } else if (
      (code >= 0xd800 && code <= 0xdfff) || (code > 0xffff && !isInvisible(code)) ||
      (code === 0x200d && joinsEmoji(text, at)) ||
      (isVariationSelector(code) && mayVary(text, at, code))
    ) {
      // A lone surrogate, a visible character of the planes past the BMP, or part of an emoji.
      shown = text.slice(at, end);
    } else shown = escaped(code);
    out += text.slice(done, at) + shown;
    done = end;
    suspect.lastIndex = end;
  }
  return done === 0 ? text : out + text.slice(done);
}

function isTag(code: number | undefined): boolean {
  return code !== undefined && code >= 0xe0000 && code <= 0xe007f;
}

/** `code` as an escape: `\xNN` for a control, `\uNNNN` or `\u{NNNNN}` for the rest. */
function escaped(code: number): string {
  const hex = code.toString(16);
  if (code <= 0x9f) return `\\x${hex.padStart(2, "0")}`;
  return code > 0xffff ? `\\u{${hex}}` : `\\u${hex.padStart(4, "0")}`;
}

function isVariationSelector(code: number): boolean {
  return (code >= 0xfe00 && code <= 0xfe0f) || (code >= 0xe0100 && code <= 0xe01ef);
}

let emoji: RegExp | undefined;
let ideograph: RegExp | undefined;

/** The code point that ends just before `at` (a surrogate pair read whole), or undefined. */
function before(text: string, at: number): string | undefined {
  if (at <= 0) return undefined;
  const low = text.charCodeAt(at - 1);
  const pair = low >= 0xdc00 && low <= 0xdfff && at >= 2 &&
    text.charCodeAt(at - 2) >= 0xd800 && text.charCodeAt(at - 2) <= 0xdbff;
  return text.slice(pair ? at - 2 : at - 1, at);
}

/**
 * True when the zero-width joiner at `at` joins two emoji (👨‍👩‍👧): an emoji before it, with
 * its skin tone or presentation selector, and one after it.
 */
function joinsEmoji(text: string, at: number): boolean {
  // Made on first use: a pattern with Unicode properties costs a start even when never run.
  emoji ??= /^\p{Extended_Pictographic}/u;
  const after = text.codePointAt(at + 1);
  if (after === undefined || !emoji.test(String.fromCodePoint(after))) return false;
  let end = at;
  let prev = before(text, end);
  if (prev === "\ufe0f" || SKIN_TONE.test(prev ?? "")) {
    end -= prev!.length;
    prev = before(text, end);
  }
  return prev !== undefined && emoji.test(prev);
}

/**
 * True when the variation selector at `at` follows a character it may vary: one of U+FE00–FE0F
 * after a visible character (the emoji or text presentation of ❤️, a math symbol's form), one of
 * U+E0100–E01EF after an ideograph. A selector after another selector, a space, a control or an
 * invisible character selects nothing and is shown: runs of them are a known way to hide bytes.
 */
function mayVary(text: string, at: number, code: number): boolean {
  const prev = before(text, at);
  if (prev === undefined || NO_BASE.test(prev)) return false;
  if (code < 0xe0100) return true;
  ideograph ??= /^\p{Ideographic}$/u;
  return ideograph.test(prev);
}
