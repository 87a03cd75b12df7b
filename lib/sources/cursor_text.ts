// The lines of Cursor CLI's agent transcripts (`agent-transcripts/<id>/<id>.jsonl`) and their
// text: what capture derives records from and what reading shows, apart from the capture code so
// that `search` and `show` load only this.

import type { TextReader, ToolParts } from "./adapter.ts";
import { obj, str, stringLeaves } from "./_text.ts";

const utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** Field names never indexed. */
export const CURSOR_SKIP_KEYS: ReadonlySet<string> = new Set(["data", "signature"]);

/** Cursor's stand-in for what it keeps out of a transcript, at the end of an assistant text. */
const REDACTED = /\s*\[REDACTED\]\s*$/;

/** The human prompt in a user text: the `<user_query>` envelopes' content, else the text. */
export function promptOf(text: string): string {
  const queries = [...text.matchAll(/<user_query>([\s\S]*?)<\/user_query>/g)]
    .map((m) => m[1]!.trim());
  return (queries.length ? queries.join("\n") : text).trim();
}

/** The blocks of a line's `message.content`, or null when it has none. */
export function blocksOf(record: Record<string, unknown>): Record<string, unknown>[] | null {
  const content = obj(record.message)?.content;
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.map((b) => obj(b) ?? {}) : null;
}

/** The words of a block: text (without Cursor's `[REDACTED]` stub), or a tool's name and input. */
function blockText(block: Record<string, unknown>): string {
  if (block.type === "text") return (str(block.text) ?? "").replace(REDACTED, "");
  if (block.type === "tool_use") {
    return [str(block.name) ?? "", ...stringLeaves(block.input, CURSOR_SKIP_KEYS)]
      .filter((s) => s !== "").join("\n");
  }
  return "";
}

/** The searchable text of one parsed line. */
export function recordText(record: Record<string, unknown>): string {
  if (record.type === "turn_ended") return str(record.error) ?? "";
  const blocks = blocksOf(record);
  if (!blocks) return "";
  return blocks.map(blockText).filter((t) => t.trim() !== "").join("\n");
}

/** The text of one line's bytes ("" for a line that is not a JSON object). */
export function cursorLineText(bytes: Uint8Array): string {
  try {
    const record = obj(JSON.parse(utf8.decode(bytes)));
    return record ? recordText(record) : "";
  } catch {
    return "";
  }
}

/** The tool calls one line holds (Cursor records a call's input, never its id or output). */
export function cursorToolOf(bytes: Uint8Array): ToolParts | null {
  let record: Record<string, unknown> | null;
  try {
    record = obj(JSON.parse(utf8.decode(bytes)));
  } catch {
    return null;
  }
  const calls = (record && record.role === "assistant" ? blocksOf(record) ?? [] : [])
    .filter((b) => b.type === "tool_use")
    .map((b) => ({
      id: str(b.id),
      name: str(b.name) ?? "tool",
      input: stringLeaves(b.input, CURSOR_SKIP_KEYS).join("\n"),
    }));
  return calls.length ? { calls, results: [], output: null } : null;
}

/** Cursor CLI's transcripts, for reading. */
export const cursorText: TextReader = {
  agent: "cursor",
  textOf: cursorLineText,
  skipKeys: CURSOR_SKIP_KEYS,
};
