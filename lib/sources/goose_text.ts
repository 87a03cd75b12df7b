// The rows of Goose's session database (`sessions/sessions.db`) as logbook stores them, and their
// text: what capture derives records from and what reading shows, apart from the capture code so
// that `search` and `show` load only this.

import type { TextReader, ToolParts } from "./adapter.ts";
import { looksLikeBase64, obj, storedRow, str, stringLeaves, typedItems } from "./_text.ts";

/** Field names never indexed: payloads and signatures. */
export const GOOSE_SKIP_KEYS: ReadonlySet<string> = new Set(["data", "signature", "_meta"]);

/** A stored row: its table and its columns, as read. */
export type GooseRow =
  | { table: "sessions"; row: Record<string, unknown> }
  | { table: "messages"; row: Record<string, unknown> }
  | { table: "schema_version"; row: Record<string, unknown> };

/** A row that cannot be read: why. */
export interface GooseBad {
  bad: string;
}

/** One item of a message's `content_json`: `{"type": …, …}`. */
export type GooseContent = Record<string, unknown> & { type: string };

/** The stored row of `bytes` (`{"table":"messages","id":…,…}`), or why it is none. */
export function gooseRowOf(bytes: Uint8Array): GooseRow | GooseBad {
  return storedRow(bytes, ["sessions", "messages", "schema_version"] as const);
}

/** A message's content items, or why they cannot be read (a JSON string in the row). */
export function contentOf(row: Record<string, unknown>): GooseContent[] | GooseBad {
  return typedItems(row.content_json, "content", "a content item");
}

/**
 * The content types Goose writes (crates/goose/src/conversation/message.rs `MessageContent`),
 * and two older ones it still reads (`reasoning`, `conversationCompacted`).
 */
export const CONTENT_TYPES: ReadonlySet<string> = new Set([
  "text",
  "image",
  "toolRequest",
  "toolResponse",
  "toolConfirmationRequest",
  "actionRequired",
  "frontendToolRequest",
  "thinking",
  "redactedThinking",
  "systemNotification",
  "reasoning",
  "conversationCompacted",
]);

/** A tool call's `{"status":"success","value":{name, arguments}}`, or null. */
export function callOf(item: GooseContent): { name: string; input: string } | null {
  const call = obj(obj(item.toolCall)?.value);
  if (!call) return null;
  return {
    name: str(call.name) ?? "tool",
    input: stringLeaves(call.arguments, GOOSE_SKIP_KEYS).join("\n"),
  };
}

/** The words of a tool's result: its text content (`value.content` or, older, `value`). */
function resultText(item: GooseContent): string {
  const result = obj(item.toolResult);
  if (!result) return "";
  if (result.status === "error") return str(result.error) ?? "";
  const value = result.value;
  const content = Array.isArray(value) ? value : obj(value)?.content;
  if (!Array.isArray(content)) return "";
  return content.map((c) => {
    const text = str(obj(c)?.text) ?? "";
    return looksLikeBase64(text) ? "" : text;
  }).filter((t) => t !== "").join("\n");
}

/** The words of one content item: what was said, thought, run or returned; never payloads. */
function itemText(item: GooseContent): string {
  switch (item.type) {
    case "text":
      return str(item.text) ?? "";
    case "thinking":
      return str(item.thinking) ?? "";
    case "reasoning":
      return str(item.text) ?? "";
    case "toolRequest":
    case "frontendToolRequest": {
      const call = callOf(item);
      return call ? [call.name, call.input].filter((s) => s !== "").join("\n") : "";
    }
    case "toolResponse":
      return resultText(item);
    case "systemNotification":
      return str(item.msg) ?? "";
    default:
      return "";
  }
}

/** The text of a message's content, one item a paragraph. */
export function contentText(items: readonly GooseContent[]): string {
  return items.map(itemText).filter((t) => t.length > 0).join("\n");
}

/** The text of one stored row ("" for a row without words or one that cannot be read). */
export function gooseRowText(bytes: Uint8Array): string {
  const entry = gooseRowOf(bytes);
  if ("bad" in entry || entry.table !== "messages") return "";
  const items = contentOf(entry.row);
  return "bad" in items ? "" : contentText(items);
}

/** The tool calls and results one stored row holds, or null for none. */
export function gooseToolOf(bytes: Uint8Array): ToolParts | null {
  const entry = gooseRowOf(bytes);
  if ("bad" in entry || entry.table !== "messages") return null;
  const items = contentOf(entry.row);
  if ("bad" in items) return null;
  const tools: ToolParts = { calls: [], results: [], output: null };
  for (const item of items) {
    const id = str(item.id);
    if (item.type === "toolRequest" || item.type === "frontendToolRequest") {
      const call = callOf(item);
      if (call) tools.calls.push({ id, ...call });
    } else if (item.type === "toolResponse" && id) {
      const result = obj(item.toolResult);
      const error = result?.status === "error" || obj(result?.value)?.isError === true;
      tools.results.push({ id, error });
    }
  }
  return tools.calls.length || tools.results.length ? tools : null;
}

/** Goose's sessions, for reading. */
export const gooseText: TextReader = { agent: "goose", textOf: gooseRowText };
