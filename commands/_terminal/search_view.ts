// What the search screen shows, as a pure function of its state and the terminal's size: the box,
// a status line, one row per hit (agent, age, project, title, the snippet with its match marked),
// a rule with the keys, and the selected hit in context. Every line fits the width exactly as the
// terminal counts it (wide CJK characters take two columns), and every piece of transcript text
// passes the terminal filter before it is measured or styled.

import type { Page, RecordJson } from "../../lib/store/conversations.ts";
import { formatLocalTime, tilde, timeAgo } from "../../lib/format.ts";
import { markRanges } from "./highlight.ts";
import { safeText } from "../../lib/safe_text.ts";
import { cutStartToWidth, cutToWidth, displayWidth, wrapText } from "./wrap.ts";

/** One row of the list: a search hit, or (with no words in the box) a recent conversation. */
export interface Item {
  /** The conversation's id (`claude:<sessionId>`). */
  conversation: string;
  /** The hit's record, or null for a conversation listed as recent. */
  record: number | null;
  agent: string;
  project: string | null;
  /** When (epoch ms): the hit's record, or the conversation's last activity. */
  when: number | null;
  title: string | null;
  /** The hit's snippet (through the gate), empty for a recent conversation. */
  snippet: string;
  /** Where the matches are in the snippet. */
  ranges: readonly [number, number][];
  /** A recent conversation's message count. */
  messages?: number;
}

/** How a piece of a line is drawn. */
export type Style =
  | "plain"
  | "mark"
  | "dim"
  | "bold"
  | "error"
  | "note"
  | "id"
  | "user"
  | "assistant"
  | "other"
  | "hit";

/** A piece of a line, already through the terminal filter. */
export interface Seg {
  text: string;
  style: Style;
}

/** A line of the screen, as pieces. */
export type Line = Seg[];

/** The status line: what was found, a note about it, or what is wrong with the box. */
export interface Status {
  text: string;
  tone: "info" | "note" | "error";
}

/** What the screen shows. */
export interface SearchModel {
  /** What is typed in the box, and where the cursor is in it (in characters). */
  input: string;
  cursor: number;
  items: readonly Item[];
  selected: number;
  /** The first item on the list's first row. */
  top: number;
  status: Status;
  /** `20 of 1,214 hits`, shown at the status line's end. */
  count: string;
  /** The preview pane's lines (already fitted to the pane by `previewLines`). */
  preview: readonly Line[];
  now: number;
  home: string | undefined;
}

/**
 * How the rows are shared: the box, the status line, the list, the rule, the preview. A status
 * of several rows (a problem shown whole) takes its extra rows from the preview first, then from
 * the list, which keeps one.
 */
export function layout(rows: number, statusRows = 1): { list: number; preview: number } {
  const room = Math.max(1, rows - 3);
  const list = Math.max(1, Math.min(room, Math.floor(room / 2)));
  const preview = Math.max(0, room - list);
  const extra = Math.max(0, statusRows - 1);
  return {
    list: Math.max(1, list - Math.max(0, extra - preview)),
    preview: Math.max(0, preview - extra),
  };
}

/** The first item shown so that `selected` is on the list (`top` kept when it still is). */
export function scrolled(top: number, selected: number, rows: number): number {
  if (selected < top) return selected;
  if (selected >= top + rows) return selected - rows + 1;
  return top;
}

const PROMPT = "> ";

/**
 * The screen at `cols` × `rows`: one string per row (styled only with `color`, reverse video
 * for the selected row either way) and where the cursor goes (1-based).
 */
export function render(
  model: SearchModel,
  cols: number,
  rows: number,
  color: boolean,
): { lines: string[]; cursor: { row: number; column: number } } {
  const width = Math.max(1, cols);
  const status = statusLines(model.status, model.count, width, rows);
  const { list, preview } = layout(rows, status.length);
  const top = scrolled(model.top, model.selected, list);
  const lines: string[] = [];

  const box = inputLine(model.input, model.cursor, width);
  lines.push(paint(box.line, width, color));
  for (const line of status) lines.push(paint(line, width, color));
  for (let i = 0; i < list; i++) {
    const index = top + i;
    const item = model.items[index];
    if (!item) {
      lines.push("");
      continue;
    }
    const selected = index === model.selected;
    lines.push(paint(itemLine(item, width, model.now, model.home), width, color, selected));
  }
  if (lines.length < rows) {
    lines.push(paint(ruleLine(model.items[model.selected], width), width, color));
  }
  for (let i = 0; i < preview && lines.length < rows; i++) {
    const line = model.preview[i];
    lines.push(line ? paint(line, width, color) : "");
  }
  return { lines: lines.slice(0, rows), cursor: { row: 1, column: box.column } };
}

/** The box: the prompt and what is typed, scrolled so the cursor stays on the screen. */
function inputLine(input: string, cursor: number, width: number): { line: Line; column: number } {
  const chars = [...input];
  const before = safeText(chars.slice(0, cursor).join(""));
  const after = safeText(chars.slice(cursor).join(""));
  const room = Math.max(1, width - PROMPT.length - 1);
  const shownBefore = displayWidth(before) > room ? cutStartToWidth(before, room) : before;
  const left = room - displayWidth(shownBefore);
  const shownAfter = left > 0 ? cutToWidth(after, left) : "";
  return {
    line: [
      { text: PROMPT, style: "bold" },
      { text: shownBefore, style: "plain" },
      { text: shownAfter, style: "plain" },
    ],
    column: Math.min(width, PROMPT.length + displayWidth(shownBefore) + 1),
  };
}

/**
 * The rows the status takes at `width` on a screen of `rows`: one for what was found (the count
 * at its end), and for a problem or a note as many as it needs to be read whole (its own lines,
 * wrapped), up to all but the box, a list row and the rule.
 */
export function statusLines(status: Status, count: string, width: number, rows: number): Line[] {
  const one = statusLine(status, count, width);
  if (status.tone === "info") return [one];
  const text = safeText(status.text.trim(), { multiline: true });
  if (!text.includes("\n") && displayWidth(text) <= width) return [one];
  const tone: Style = status.tone === "error" ? "error" : "note";
  const wrapped = wrapText(text, width).split("\n");
  const most = Math.max(1, rows - 3);
  if (wrapped.length > most) {
    // Only a screen too small for it comes here: the last row says the rest is cut.
    wrapped.length = most;
    wrapped[most - 1] = cutToWidth(`${wrapped[most - 1]} …`, width);
  }
  return wrapped.map((line) => [{ text: line, style: tone }]);
}

/** The status line: the message, and the count at its end when there is room. */
function statusLine(status: Status, count: string, width: number): Line {
  const tone: Style = status.tone === "error" ? "error" : status.tone === "note" ? "note" : "dim";
  const text = safeText(status.text.replace(/\s+/g, " ").trim());
  // A problem or a note is read whole before the count is: the count gives way when both
  // would not fit.
  const whole = displayWidth(text) + displayWidth(count) + 2 <= width;
  const counted = count && (whole || status.tone === "info") ? safeText(count) : "";
  const room = counted ? width - displayWidth(counted) - 2 : width;
  if (room < 10) return [{ text: cutToWidth(text, width), style: tone }];
  const message = cutToWidth(text, room);
  const gap = width - displayWidth(message) - displayWidth(counted);
  return [
    { text: message, style: tone },
    { text: " ".repeat(Math.max(1, gap)), style: "plain" },
    { text: counted, style: "dim" },
  ];
}

/** `text` padded with spaces to `width` columns. */
function padTo(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - displayWidth(text)));
}

/**
 * One row of the list: the agent, how long ago, the project, the title and the snippet with its
 * matches marked (moved along so the first match shows), or a recent conversation's size.
 */
export function itemLine(item: Item, width: number, now: number, home: string | undefined): Line {
  const projectWidth = width >= 60 ? Math.max(10, Math.min(24, Math.floor(width * 0.14))) : 0;
  const titleWidth = Math.max(12, Math.min(40, Math.floor(width * 0.24)));
  const age = item.when === null ? "" : timeAgo(item.when, now, "short");
  const project = safeText(item.project ? tilde(item.project, home) : "");
  const title = safeText((item.title ?? "(untitled)").replace(/\s+/g, " ").trim());
  const line: Line = [
    { text: padTo(safeText(item.agent), 8) + " ", style: "id" },
    { text: padTo("", 10 - displayWidth(age)) + age + "  ", style: "dim" },
  ];
  if (projectWidth) {
    line.push({
      text: padTo(cutStartToWidth(project, projectWidth), projectWidth) + "  ",
      style: "dim",
    });
  }
  line.push({ text: padTo(cutToWidth(title, titleWidth), titleWidth) + "  ", style: "bold" });
  const used = line.reduce((n, s) => n + displayWidth(s.text), 0);
  const room = width - used;
  if (room <= 0) return line;
  if (item.record === null) {
    const n = item.messages ?? 0;
    line.push({ text: `${n} message${n === 1 ? "" : "s"}`, style: "dim" });
    return line;
  }
  line.push(...snippetSegs(item.snippet, item.ranges, room));
  return line;
}

/**
 * A snippet on one line of `room` columns: whitespace runs as one space, the text before the
 * first match cut back (with `…`) when the match would not show otherwise.
 */
function snippetSegs(snippet: string, ranges: readonly [number, number][], room: number): Line {
  const segs: Line = [];
  const push = (text: string, style: Style) => {
    const shown = safeText(text.replace(/\s+/g, " "));
    if (shown) segs.push({ text: shown, style });
    return "";
  };
  markRanges(snippet, ranges, (t) => push(t, "mark"), (t) => push(t, "plain"));
  const firstMark = segs.findIndex((s) => s.style === "mark");
  if (firstMark > 0) {
    const lead = segs.slice(0, firstMark).reduce((n, s) => n + displayWidth(s.text), 0);
    const keep = Math.floor(room / 4);
    if (lead > keep && lead > room / 3) {
      // Drop columns from the front until `keep` are left before the match.
      let drop = lead - keep + 1;
      while (drop > 0 && segs.length && segs[0]!.style !== "mark") {
        const first = segs[0]!;
        const w = displayWidth(first.text);
        if (w <= drop) {
          segs.shift();
          drop -= w;
          continue;
        }
        const chars = [...first.text];
        let cut = 0;
        while (drop > 0 && cut < chars.length) drop -= displayWidth(chars[cut++]!);
        first.text = chars.slice(cut).join("");
      }
      segs.unshift({ text: "…", style: "dim" });
    }
  }
  return segs;
}

/** The rule between the list and the preview: the selected conversation and the keys. */
function ruleLine(item: Item | undefined, width: number): Line {
  const keys = width >= 72
    ? " ↵ open  ^O resume  ^F fork  ^Y copy  Esc quit "
    : width >= 40
    ? " ↵ ^O ^F ^Y Esc "
    : "";
  const id = item ? safeText(item.conversation) : "";
  const room = width - 4 - displayWidth(keys);
  const shownId = id && room >= 8 ? cutToWidth(id, room) : "";
  const used = 3 + (shownId ? displayWidth(shownId) + 1 : 0) + displayWidth(keys);
  const line: Line = [{ text: "── ", style: "dim" }];
  if (shownId) line.push({ text: shownId, style: "id" }, { text: " ", style: "dim" });
  line.push({ text: "─".repeat(Math.max(0, width - used)), style: "dim" });
  line.push({ text: keys, style: "dim" });
  return line;
}

const FOLDED = new Set(["tool_call", "tool_result", "event", "meta"]);

/** The most characters of a record the preview wraps (the hit's: around its first match). */
const PREVIEW_CHARS = 6000;

/**
 * The preview pane: the conversation's title, then its records from the page's start (a few
 * before the hit, as `show --around` opens), folded as `show` folds them, the hit's marked, the
 * words of `marks` highlighted; `height` lines of it, from a little before the hit's first match.
 */
export function previewLines(
  page: Page,
  hit: number | null,
  marks: readonly string[],
  width: number,
  height: number,
): Line[] {
  if (height <= 0) return [];
  const pattern = markPattern(marks);
  const lines: Line[] = [];
  const title = safeText((page.conversation.title ?? page.conversation.id).replace(/\s+/g, " "));
  lines.push([{ text: cutToWidth(title.trim(), width), style: "bold" }]);
  let hitLine = -1;
  let matchLine = -1;
  const prompts = page.conversation.messages === 0;
  for (const record of page.records) {
    if (record.kind === "meta" || !record.text.trim()) continue;
    if (record.kind === "prompt" && !prompts) continue;
    const isHit = record.id === hit;
    if (isHit) hitLine = lines.length;
    const mark: Line = isHit ? [{ text: " ◀", style: "hit" }] : [];
    if (FOLDED.has(record.kind)) {
      const sign = record.kind === "tool_call" ? "▸" : record.kind === "tool_result" ? "◂" : "·";
      const head = `${formatLocalTime(record.timestamp).slice(11)} ${sign} ${record.kind}: `;
      const text = safeText(record.text.replace(/\s+/g, " ").trim());
      const room = Math.max(1, width - displayWidth(head) - (isHit ? 2 : 0));
      const line = fitted([{ text: head, style: "dim" }, ...marked(text, pattern, "dim")], room);
      if (isHit && matchLine === -1) matchLine = lines.length;
      lines.push([...line, ...mark]);
      continue;
    }
    const who = record.kind === "message"
      ? (record.role ?? "message")
      : record.kind === "prompt"
      ? "user (typed)"
      : record.kind === "reasoning"
      ? "thinking"
      : record.kind;
    const style: Style = who === "assistant"
      ? "assistant"
      : record.role === "user"
      ? "user"
      : "other";
    lines.push(fitted([
      { text: `${formatLocalTime(record.timestamp)} `, style: "dim" },
      { text: who, style },
      ...mark,
    ], width));
    const body = wrapText(safeText(excerpt(record, isHit, pattern), { multiline: true }), width);
    for (const text of body.split("\n")) {
      const segs = marked(text, pattern, record.kind === "reasoning" ? "dim" : "plain");
      if (isHit && matchLine === -1 && segs.some((s) => s.style === "mark")) {
        matchLine = lines.length;
      }
      lines.push(fitted(segs, width));
    }
    lines.push([]);
  }
  const focus = matchLine !== -1 ? matchLine : hitLine;
  // The hit's line a third of the way down, its label kept in view when the match is near it.
  let start = focus === -1 ? 0 : Math.max(0, focus - Math.floor(height / 3));
  if (hitLine !== -1 && hitLine < start && focus - hitLine < height - 1) start = hitLine;
  return lines.slice(start, start + height);
}

/** The text of a record the preview shows: the start, or for the hit, around its first match. */
function excerpt(record: RecordJson, isHit: boolean, pattern: RegExp | null): string {
  const text = record.text.trim();
  if (text.length <= PREVIEW_CHARS) return text;
  let from = 0;
  if (isHit && pattern) {
    pattern.lastIndex = 0;
    const at = pattern.exec(text)?.index ?? 0;
    from = Math.max(0, at - PREVIEW_CHARS / 3);
  }
  const cut = text.slice(from, from + PREVIEW_CHARS);
  return `${from > 0 ? "…" : ""}${cut}…`;
}

/** A case-insensitive pattern of the matched words, longest first, or null. */
function markPattern(marks: readonly string[]): RegExp | null {
  const words = [...new Set(marks.map((m) => safeText(m.trim())).filter((m) => m.length > 0))]
    .sort((a, b) => b.length - a.length)
    .map((m) => m.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return words.length ? new RegExp(words.join("|"), "giu") : null;
}

/** `text` (already filtered) as pieces, the matches of `pattern` marked. */
function marked(text: string, pattern: RegExp | null, style: Style): Line {
  if (!pattern || !text) return text ? [{ text, style }] : [];
  const ranges: [number, number][] = [];
  pattern.lastIndex = 0;
  for (const m of text.matchAll(pattern)) {
    if (m[0].length) ranges.push([m.index, m.index + m[0].length]);
  }
  const segs: Line = [];
  markRanges(text, ranges, (t) => {
    segs.push({ text: t, style: "mark" });
    return "";
  }, (t) => {
    if (t) segs.push({ text: t, style });
    return "";
  });
  return segs;
}

/** `line` cut to `width` columns, ending in `…` when it was cut. */
export function fitted(line: Line, width: number): Line {
  const total = line.reduce((n, s) => n + displayWidth(s.text), 0);
  if (total <= width) return line;
  const out: Line = [];
  let used = 0;
  const room = Math.max(0, width - 1);
  for (const seg of line) {
    const w = displayWidth(seg.text);
    if (used + w <= room) {
      out.push(seg);
      used += w;
      continue;
    }
    let text = "";
    for (const char of seg.text) {
      const cw = displayWidth(char);
      if (used + cw > room) break;
      text += char;
      used += cw;
    }
    if (text) out.push({ ...seg, text });
    out.push({ text: "…", style: seg.style });
    return out;
  }
  return out;
}

/** SGR parameters of each style, with colour and without (NO_COLOR: attributes only). */
const SGR: Record<Style, [string, string]> = {
  plain: ["", ""],
  mark: ["1;33", "1;4"],
  dim: ["2", "2"],
  bold: ["1", "1"],
  error: ["1;31", "1"],
  note: ["33", ""],
  id: ["36", ""],
  user: ["1;36", "1"],
  assistant: ["1;32", "1"],
  other: ["1;33", "1"],
  hit: ["1;33", "1"],
};

/**
 * A line as the terminal draws it: cut to `width`, each piece styled (colours only with
 * `color`), and a selected line in reverse video across the whole width.
 */
export function paint(line: Line, width: number, color: boolean, selected = false): string {
  const fit = fitted(line, width);
  let out = "";
  let used = 0;
  for (const seg of fit) {
    if (!seg.text) continue;
    const code = SGR[seg.style][color ? 0 : 1];
    const params = [selected ? "7" : "", code].filter(Boolean).join(";");
    out += params ? `\x1b[0;${params}m${seg.text}\x1b[0m` : seg.text;
    used += displayWidth(seg.text);
  }
  if (selected && used < width) out += `\x1b[0;7m${" ".repeat(width - used)}\x1b[0m`;
  return out;
}
