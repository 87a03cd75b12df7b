// Aider's chat history (`.aider.chat.history.md`): what each part of the Markdown it appends is,
// told from its lines, and the text of one stored block. Capture cuts the file into blocks
// (lib/sources/aider.ts); this module reads one block's bytes, without the capture code, so that
// `search` and `show` load only this (lib/agents.ts).
//
// How Aider writes the file (its `aider/io.py`), each part appended whole:
// - a session: a blank line, `# aider chat started at <local time>`, a blank line;
// - what the person typed: a blank line, then each of its lines as `#### <line>` ending in two
//   spaces (an empty input is `#### <blank>`);
// - its own output (notices, questions and answers, token counts): each line as `> <line>`
//   ending in two spaces, except a message of several lines given at once (`/run` output, an
//   install hint), which has the `> ` on its first line and the two spaces on its last only;
// - the model's reply: a blank line, the reply as it came, a blank line.

import type { SourceRef, TextReader } from "./adapter.ts";

/** The name Aider gives its chat history file. */
export const AIDER_HISTORY_FILE = ".aider.chat.history.md";

/** What one block of the file is. */
export type BlockKind = "session" | "user" | "output" | "reasoning" | "assistant" | "blank";

/** What a line is, before what surrounds it is known. */
export type LineKind = "session" | "user" | "output" | "reasoning" | "text" | "blank";

const SESSION = /^# aider chat started at (.*?)\s*$/;
const SESSION_TIME = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)$/;
/** The tags a reasoning model's thoughts come in (`<think>`, Aider's `<thinking-content-…>`). */
const REASONING_OPEN = /^<(think|thinking-content-[0-9a-f]+)>\s*$/;
const REASONING_CLOSE = /^<\/(think|thinking-content-[0-9a-f]+)>\s*$/;

/** A line without its line ending. */
export function lineBody(line: string): string {
  return line.replace(/\r?\n$/, "");
}

/**
 * What a line looks like on its own. Aider ends its own lines (`#### `, `> `) with two spaces;
 * a reply's Markdown heading or quote without them stays the reply's text.
 */
export function lineKind(line: string): LineKind {
  const body = lineBody(line);
  if (body.trim() === "") return "blank";
  if (SESSION.test(body)) return "session";
  if (body.endsWith("  ")) {
    if (body.startsWith("####") && (body.length === 4 || body[4] === " ")) return "user";
    if (body.startsWith(">")) return "output";
  }
  if (REASONING_OPEN.test(body)) return "reasoning";
  return "text";
}

/** True for the line that closes a reasoning block. */
export function closesReasoning(line: string): boolean {
  return REASONING_CLOSE.test(lineBody(line));
}

/** The lines of a text, each with its line ending. */
export function linesOf(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** One block as read from its bytes: what it is, its text, and a session's start. */
export interface Block {
  kind: BlockKind;
  text: string;
  /** For a session: the start as Aider wrote it (local time, no zone). */
  started?: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** What a stored block is, told from its first line that is not blank, and its text. */
export function blockOf(bytes: Uint8Array): Block {
  const lines = linesOf(utf8.decode(bytes));
  const first = lines.findIndex((line) => lineKind(line) !== "blank");
  if (first < 0) return { kind: "blank", text: "" };
  const body = lines.slice(first).map(lineBody);
  switch (headOf(lines[first]!, body)) {
    case "session":
      return { kind: "session", text: "", started: SESSION.exec(body[0]!)![1]! };
    case "user": {
      const text = joined(body.map((line) => strip(line, "####")));
      return { kind: "user", text: text === "<blank>" ? "" : text };
    }
    case "output":
      return { kind: "output", text: joined(body.map((line) => strip(line, ">"))) };
    case "reasoning": {
      const close = body.findIndex((line, i) => i > 0 && REASONING_CLOSE.test(line));
      return { kind: "reasoning", text: joined(body.slice(1, close < 0 ? undefined : close)) };
    }
    default:
      return { kind: "assistant", text: joined(body) };
  }
}

/**
 * What a block's first line makes it. A message of Aider's over several lines starts with a `>`
 * line without the two spaces, which its last line has (a reply's last line never ends in spaces:
 * Aider strips the reply).
 */
function headOf(first: string, body: string[]): LineKind {
  const kind = lineKind(first);
  if (kind !== "text" || !first.startsWith(">")) return kind;
  const last = body.findLast((line) => line.trim() !== "") ?? "";
  return last.endsWith("  ") ? "output" : kind;
}

/** A line of Aider's own without its marker, the space after it and its two closing spaces. */
function strip(line: string, marker: string): string {
  if (!line.startsWith(marker)) return line.trimEnd();
  const rest = line.slice(marker.length);
  return (rest.startsWith(" ") ? rest.slice(1) : rest).trimEnd();
}

function joined(lines: string[]): string {
  return lines.join("\n").trim();
}

/** Epoch milliseconds of a session's start (Aider writes local time), or null. */
export function sessionTime(started: string): number | null {
  const m = SESSION_TIME.exec(started);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const ms = new Date(y, mo - 1, d, h, mi, s).getTime();
  return Number.isNaN(ms) ? null : ms;
}

/** The text of one stored block ("" for a session header or blank lines). */
export function aiderBlockText(bytes: Uint8Array, _source?: SourceRef): string {
  return blockOf(bytes).text;
}

/** Aider's chat histories, for reading. */
export const aiderText: TextReader = { agent: "aider", textOf: aiderBlockText };
