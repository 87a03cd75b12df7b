// A conversation as a reader sees it on a terminal: a page's records with roles, full messages
// and tool calls folded to one line each, the record opened at marked, and the whole conversation
// paged through `$PAGER` from a page on (for `show` and the search screen's Enter).

import { isInjected } from "../../lib/sources/injected.ts";
import { type LocalCommand, localCommand } from "../../lib/sources/local_command.ts";
import type { Env } from "../../lib/env.ts";
import { formatLocalTime, plural } from "../../lib/format.ts";
import {
  type Page,
  pageConversation,
  type PageOptions,
  type Question,
  type RecordJson,
} from "../../lib/store/conversations.ts";
import type { HistoryStore } from "../../lib/store/db.ts";
import type { ConversationRow, TextDeriver } from "../../lib/store/records.ts";
import { type Io, styler } from "./io.ts";
import { startPager } from "./pager.ts";
import { safeText } from "../../lib/safe_text.ts";
import { cutToWidth, displayWidth, terminalRows, wrapText } from "./wrap.ts";

/** How the readable view is drawn. */
export interface View {
  io: Io;
  /** Show `meta` records and records without text too. */
  all: boolean;
  /** Columns to wrap to (a terminal's), or null to leave lines as they are. */
  width: number | null;
  /** The record `--around` opened at, marked. */
  hit: number | null;
  /** The question before it when it lies before the page: printed first, then the gap. */
  question?: Question;
}

/** A page as the reader sees it, the conversation's heading first when `heading`. */
export function renderPage(page: Page, view: View, heading: boolean): string {
  return rendered(page, view, heading).text;
}

/** Where the marked record is in a rendered page: its first line (0-based) and how many. */
export interface HitLines {
  line: number;
  lines: number;
}

/** A page as `renderPage` renders it, and where the hit is in it when the page shows it. */
export function rendered(
  page: Page,
  view: View,
  heading: boolean,
): { text: string; hit: HitLines | null } {
  const s = styler(view.io.color);
  const c = page.conversation;
  let out = "";
  if (heading) {
    const title = safeText((c.title ?? c.id).replace(/\s+/g, " ").trim());
    const id = safeText(c.id);
    const where = safeText(`${c.agent}  ${c.cwd ?? c.project ?? ""}`.trim());
    // The id is never broken: what follows it goes to the next line when the line is full.
    const idLine = view.width === null || displayWidth(`${id}  ${where}`) <= view.width
      ? `${id}  ${where}`
      : `${id}\n${cutToWidth(where, view.width)}`;
    out += `${s.bold(view.width === null ? title : wrapText(title, view.width))}\n${
      s.dim(idLine)
    }\n\n`;
  }
  // Typed prompts from a history file repeat the transcript's user messages where there is one:
  // the readable view shows them only for a session without transcript messages.
  const prompts = c.messages === 0;
  // A folded line gives its date only when the day changes: the lines around it give the day.
  let day: string | null = null;
  if (heading && view.question) {
    const { record, skipped } = view.question;
    out += renderRecord(record, view, day, c.agent);
    day = formatLocalTime(record.timestamp).slice(0, 10) || day;
    out += s.dim(
      `… ${plural(skipped, "earlier record")} · all of them: logbook show ${
        safeText(c.id)
      } --after ${record.id}`,
    ) + "\n\n";
  }
  let hit: HitLines | null = null;
  for (const record of page.records) {
    if (record.kind === "prompt" && !prompts && !view.all) continue;
    const shown = renderRecord(record, view, day, c.agent);
    if (shown) day = formatLocalTime(record.timestamp).slice(0, 10) || day;
    if (shown && record.id === view.hit) {
      hit = { line: lineCount(out), lines: lineCount(shown.replace(/\n+$/, "\n")) };
    }
    out += shown;
  }
  return { text: out, hit };
}

function lineCount(text: string): number {
  let n = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) n++;
  return n;
}

const FOLDED = new Set(["tool_call", "tool_result", "event", "meta"]);

/** A record as the reader sees it: roles, full messages, tool calls folded to one line. */
function renderRecord(
  record: RecordJson,
  view: View,
  day: string | null,
  agent: string,
): string {
  if (!view.all && (record.kind === "meta" || !record.text.trim())) return "";
  const s = styler(view.io.color);
  const when = formatLocalTime(record.timestamp);
  const mark = record.id === view.hit ? ` ${s.yellow(`◀ #${record.id}`)}` : "";
  // A local command (`/cost`) is what was typed, or what it printed, whatever kind it was kept as.
  const local = record.role === "user" || record.kind === "event"
    ? localCommand(record.text)
    : null;
  // So is what the agent told the model (its rules, AGENTS.md, the environment): one line each.
  const injected = !local && isInjected(agent, record);
  if (FOLDED.has(record.kind) || local || injected) {
    const [tag, said] = foldedAs(record, local, injected);
    const line = safeText(said.replace(/\s+/g, " ").trim());
    const sign = record.kind === "tool_call" ? "▸" : record.kind === "tool_result" ? "◂" : "·";
    const width = view.width ?? 120;
    const tail = ` ${sign} ${tag}: `;
    // The date too when the day changed, if it leaves the line room for what the record says.
    const dated = when.slice(0, 10) !== day && width - when.length - tail.length - 1 >= 20;
    const head = `${dated ? when : when.slice(11)}${tail}`;
    const cut = cutToWidth(line, Math.max(8, width - head.length - 1));
    return s.dim(head + cut) + mark + "\n";
  }
  const who = record.kind === "message"
    ? (record.role ?? "message")
    : record.kind === "prompt"
    ? "user (typed)"
    : record.kind === "reasoning"
    ? "thinking"
    : record.kind;
  const label = who === "assistant"
    ? s.green(who)
    : record.role === "user"
    ? s.cyan(who)
    : s.yellow(who);
  let text = safeText(record.text.trim(), { multiline: true });
  if (view.width !== null) text = wrapText(text, view.width);
  const body = record.kind === "reasoning" ? s.dim(text) : text;
  return `${s.dim(when)} ${s.bold(label)}${mark}\n${body}\n\n`;
}

/** The tag and the words of a record folded to one line. */
function foldedAs(
  record: RecordJson,
  local: LocalCommand | null,
  injected: boolean,
): [string, string] {
  if (local && "command" in local) return ["command", local.command];
  if (local && "output" in local) return ["output", local.output];
  if (local) return ["note", local.note];
  if (injected) return [record.role === "user" ? "context" : record.role!, record.text];
  return [record.kind, record.text];
}

/** What a conversation is paged from: its store, its rows and the first page's options. */
export interface Paging {
  store: HistoryStore;
  deriver: TextDeriver;
  conversation: ConversationRow;
  options: PageOptions;
}

/**
 * Pages the conversation through the pager `env` names, as git pages: `first` (the page at
 * `paging.options`), then the rest, until the reader quits. Resolves false, having written
 * nothing, when there is no pager to start. `less` is the `LESS` the pager gets when the user
 * set none (default `FRX`). A page opened at a hit (`view.hit`) that lies below the first screen
 * of `rows` rows (default the terminal's) opens where the hit shows (see `openingLine`).
 */
export async function pageThrough(
  first: Page,
  paging: Paging,
  view: View,
  options: { env: Env; heading: boolean; less?: string; rows?: number },
): Promise<boolean> {
  const { text, hit } = rendered(first, view, options.heading);
  const rows = options.rows ?? terminalRows(options.env);
  const at = hit === null ? null : openingLine(text, hit, view.width, rows);
  const pager = startPager(options.env, {
    ...(options.less === undefined ? {} : { less: options.less }),
    ...(at === null ? {} : { at }),
  });
  if (!pager) return false;
  try {
    let current = first;
    let open = await pager.write(text);
    while (open && current.next !== null) {
      current = pageConversation(paging.store, paging.deriver, paging.conversation, {
        ...paging.options,
        after: current.next,
      });
      open = await pager.write(renderPage(current, view, false));
    }
  } finally {
    await pager.close();
  }
  return true;
}

// deno-lint-ignore no-control-regex -- the view's own styling, taken off to measure a line
const STYLING = /\x1b\[[0-9;]*m/g;

/**
 * The line (1-based) a pager of `rows` rows should open `text` at so that the hit shows, marked,
 * with as much of what led to it (the question) above it as fits: the hit takes up to a third of
 * the screen, the lines before it the rest. Null when the text's top already shows that much.
 * A line wider than `width` counts the rows the terminal wraps it to; the pager keeps its last
 * row for its prompt.
 */
export function openingLine(
  text: string,
  hit: HitLines,
  width: number | null,
  rows: number,
): number | null {
  const lines = text.split("\n");
  const height = (line: string) =>
    width === null ? 1 : Math.max(1, Math.ceil(displayWidth(line.replace(STYLING, "")) / width));
  const screen = Math.max(1, rows - 1);
  let hitRows = 0;
  for (let i = hit.line; i < Math.min(lines.length, hit.line + hit.lines); i++) {
    hitRows += height(lines[i]!);
  }
  let used = Math.max(1, Math.min(hitRows, Math.ceil(screen / 3)));
  let start = Math.min(hit.line, lines.length);
  while (start > 0 && used + height(lines[start - 1]!) <= screen) used += height(lines[--start]!);
  return start === 0 ? null : start + 1;
}
