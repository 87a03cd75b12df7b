// The rows of Crush's database (`.crush/crush.db`) as logbook stores them, and their text: what
// capture derives records from and what reading shows, apart from the capture code so that
// `search` and `show` load only this.

import type { SourceRef, TextReader, ToolParts } from "./adapter.ts";
import { looksLikeBase64, obj, storedRow, str, stringLeaves, typedItems } from "./_text.ts";

/** Field names of a tool's input whose values are never indexed. */
export const CRUSH_SKIP_KEYS: ReadonlySet<string> = new Set(["data", "signature"]);

/** One part of a message's `parts`: `{"type":…,"data":{…}}`. */
export interface CrushPart {
  type: string;
  data: Record<string, unknown>;
}

/** A stored row: its table and its columns, as read. */
export type CrushRow =
  | { table: "sessions"; row: Record<string, unknown> }
  | { table: "messages"; row: Record<string, unknown> }
  | { table: "goose_db_version"; row: Record<string, unknown> };

/** A row that cannot be read: why. */
export interface CrushBad {
  bad: string;
}

/** The stored row of `bytes` (`{"table":"messages","id":…,…}`), or why it is none. */
export function crushRowOf(bytes: Uint8Array): CrushRow | CrushBad {
  return storedRow(bytes, ["sessions", "messages", "goose_db_version"] as const);
}

/** A message's parts, or why they cannot be read (they are a JSON string in the row). */
export function partsOf(row: Record<string, unknown>): CrushPart[] | CrushBad {
  const parts = typedItems(row.parts, "parts", "a message part");
  if ("bad" in parts) return parts;
  return parts.map((part) => ({ type: part.type, data: obj(part.data) ?? {} }));
}

/** The part types Crush writes (internal/message/message.go's `partType`). */
export const PART_TYPES: ReadonlySet<string> = new Set([
  "reasoning",
  "text",
  "image_url",
  "binary",
  "tool_call",
  "tool_result",
  "finish",
  "shell_command",
]);

/** A tool call's input: the JSON string Crush stores, as its string leaves. */
function inputText(input: unknown): string {
  if (typeof input !== "string") return stringLeaves(input, CRUSH_SKIP_KEYS).join("\n");
  try {
    return stringLeaves(JSON.parse(input), CRUSH_SKIP_KEYS).join("\n");
  } catch {
    return input;
  }
}

/** The words of one part: what was said, thought, run or returned; never payloads. */
function partText(part: CrushPart): string {
  const { data } = part;
  switch (part.type) {
    case "text":
      return str(data.text) ?? "";
    case "reasoning":
      return str(data.thinking) ?? "";
    case "tool_call":
      return [str(data.name) ?? "", inputText(data.input)].filter((s) => s !== "").join("\n");
    case "tool_result": {
      const content = str(data.content) ?? "";
      return looksLikeBase64(content) ? "" : content;
    }
    case "shell_command":
      return [str(data.command) ?? "", str(data.output) ?? ""].filter((s) => s !== "").join("\n");
    case "binary":
      return pastedText(data);
    case "finish":
      // A turn that failed or was cancelled: what Crush showed ("API Error" and the response).
      return [str(data.message) ?? "", str(data.details) ?? ""].filter((s) => s !== "").join("\n");
    default:
      return "";
  }
}

/**
 * The words of a binary part that holds text: what a person pasted or attached (Crush keeps a
 * paste as `{"Path":"paste_1.txt","MIMEType":"text/plain; charset=utf-8","Data":<base64>}`, the
 * Go field names as they are); "" for an image or any other payload.
 */
export function pastedText(data: Record<string, unknown>): string {
  const mime = str(data.MIMEType) ?? str(data.mime_type) ?? "";
  const payload = str(data.Data) ?? str(data.data);
  if (!mime.startsWith("text/") || !payload) return "";
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.fromBase64(payload));
  } catch {
    return "";
  }
}

/** The text of a message's parts, one part a paragraph. */
export function partsText(parts: readonly CrushPart[]): string {
  return parts.map(partText).filter((t) => t.length > 0).join("\n");
}

/** The text of one stored row ("" for a row without words or one that cannot be read). */
export function crushRowText(bytes: Uint8Array, _source?: SourceRef): string {
  const entry = crushRowOf(bytes);
  if ("bad" in entry || entry.table !== "messages") return "";
  const parts = partsOf(entry.row);
  return "bad" in parts ? "" : partsText(parts);
}

/** The tool calls and results one stored row holds, or null for none. */
export function crushToolOf(bytes: Uint8Array): ToolParts | null {
  const entry = crushRowOf(bytes);
  if ("bad" in entry || entry.table !== "messages") return null;
  const parts = partsOf(entry.row);
  if ("bad" in parts) return null;
  const tools: ToolParts = { calls: [], results: [], output: null };
  for (const { type, data } of parts) {
    if (type === "tool_call") {
      tools.calls.push({
        id: str(data.id),
        name: str(data.name) ?? "tool",
        input: inputText(data.input),
      });
    } else if (type === "tool_result") {
      const id = str(data.tool_call_id);
      if (id) tools.results.push({ id, error: data.is_error === true });
    }
  }
  return tools.calls.length || tools.results.length ? tools : null;
}

/** Crush's sessions, for reading. */
export const crushText: TextReader = { agent: "crush", textOf: crushRowText };
