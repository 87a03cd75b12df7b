// Fitting text to a terminal's columns: the width a string takes (wide CJK and emoji count two,
// combining marks none), cutting a line with an ellipsis, and wrapping text, marked or not, at
// spaces. Every function works on text already passed through the terminal filter.

import { eastAsianWidth } from "get-east-asian-width";

/** The columns a terminal gives `text` (wide characters two, combining marks none). */
export function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) width += charWidth(char.codePointAt(0)!);
  return width;
}

/**
 * What takes no column: combining marks, and what the terminal filter keeps of an emoji's
 * invisible parts (the zero-width joiner, variation selectors, a flag's tags).
 */
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\u200b\u200d\u{e0000}-\u{e007f}]$/u;

function charWidth(code: number): number {
  if (code < 0x300) return 1;
  if (ZERO_WIDTH.test(String.fromCodePoint(code))) return 0;
  // Unicode's East Asian Width: wide and fullwidth characters (CJK, and emoji such as ✅ and ⌚
  // that terminals draw in two columns) take two, ambiguous ones one.
  return eastAsianWidth(code);
}

/** `text` cut to at most `width` columns, ending in `…` when it was cut. */
export function cutToWidth(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  let out = "";
  let used = 0;
  for (const char of text) {
    const w = charWidth(char.codePointAt(0)!);
    if (used + w > width - 1) break;
    out += char;
    used += w;
  }
  return out + "…";
}

/** `text` cut from its start to at most `width` columns, beginning with `…` when cut. */
export function cutStartToWidth(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  const chars = [...text];
  let out = "";
  let used = 0;
  for (let i = chars.length - 1; i >= 0; i--) {
    const w = charWidth(chars[i]!.codePointAt(0)!);
    if (used + w > width - 1) break;
    out = chars[i]! + out;
    used += w;
  }
  return "…" + out;
}

/** A piece of text, marked (a search match) or not, and dimmed (a label) or not. */
export interface Span {
  text: string;
  mark: boolean;
  dim?: boolean;
}

/**
 * Wraps `spans` (one paragraph; runs of spaces are where lines may break) into lines of at most
 * `width` columns. A word wider than a line is broken between characters.
 */
export function wrapSpans(spans: readonly Span[], width: number): Span[][] {
  const max = Math.max(1, width);
  // Words as lists of spans, so a mark that spans a space stays marked on both lines.
  const words: Span[][] = [[]];
  for (const span of spans) {
    const parts = span.text.split(" ");
    parts.forEach((part, i) => {
      if (i > 0) words.push([]);
      if (part) words.at(-1)!.push({ ...span, text: part });
    });
  }
  const lines: Span[][] = [];
  let line: Span[] = [];
  let used = 0;
  const flush = () => {
    lines.push(line);
    line = [];
    used = 0;
  };
  for (const word of words) {
    const w = word.reduce((n, s) => n + displayWidth(s.text), 0);
    if (w === 0) continue;
    if (used > 0 && used + 1 + w <= max) {
      line.push({ text: " ", mark: false }, ...word);
      used += 1 + w;
      continue;
    }
    if (used > 0) flush();
    if (w <= max) {
      line.push(...word);
      used = w;
      continue;
    }
    for (const span of word) {
      for (const char of span.text) {
        const cw = charWidth(char.codePointAt(0)!);
        if (used + cw > max && used > 0) flush();
        const last = line.at(-1);
        if (last && last.mark === span.mark && last.dim === span.dim) last.text += char;
        else line.push({ ...span, text: char });
        used += cw;
      }
    }
  }
  if (line.length || !lines.length) flush();
  return lines;
}

/**
 * `text` wrapped to `width` columns line by line: each line that is too wide breaks at spaces,
 * keeping its indentation on the lines it continues on; lines that fit are kept as they are.
 */
export function wrapText(text: string, width: number): string {
  return text.split("\n").map((line) => {
    if (displayWidth(line) <= width) return line;
    const indent = /^[ \t]*/.exec(line)![0].replaceAll("\t", "    ");
    const room = width - indent.length >= 20 ? width - indent.length : width;
    const lead = room === width ? "" : indent;
    return wrapSpans([{ text: line.trimStart(), mark: false }], room)
      .map((spans) => lead + spans.map((s) => s.text).join(""))
      .join("\n");
  }).join("\n");
}

/** The terminal's width in columns: `$COLUMNS` when set, else what the terminal says, else 80. */
export function terminalColumns(env: { get(name: string): string | undefined }): number {
  return terminalSize(env, "COLUMNS", "columns", 80);
}

/** The terminal's height in rows: `$LINES` when set, else what the terminal says, else 24. */
export function terminalRows(env: { get(name: string): string | undefined }): number {
  return terminalSize(env, "LINES", "rows", 24);
}

function terminalSize(
  env: { get(name: string): string | undefined },
  variable: string,
  side: "columns" | "rows",
  fallback: number,
): number {
  const given = Number(env.get(variable));
  if (Number.isSafeInteger(given) && given > 0) return given;
  try {
    return Deno.consoleSize()[side] || fallback;
  } catch {
    return fallback;
  }
}
