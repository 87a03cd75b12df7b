// The text of Claude Code's transcript lines: what capture indexes and what reading shows, apart
// from the capture code so that `search` and `show` load only this (lib/sources/readers.ts).

import type { SourceRef, TextPath, TextReader } from "./adapter.ts";
import { looksLikeBase64, obj, str, stringLeaves } from "./_text.ts";

/** Field names whose string values are never indexed: payloads and signatures. */
export const CLAUDE_SKIP_KEYS: ReadonlySet<string> = new Set(["data", "signature"]);

/** The text of one transcript line's bytes ("" for a line that is not a JSON record). */
export function claudeLineText(bytes: Uint8Array): string {
  try {
    const record = obj(JSON.parse(new TextDecoder().decode(bytes)));
    const type = record && str(record.type);
    return record && type ? textOfRecord(type, record) : "";
  } catch {
    return "";
  }
}

/**
 * Where `textOfRecord` finds text, by a string's path in the record: a summary, a system
 * record's content, and a message's content (a string, or its blocks' text, thinking, tool name
 * and input, and a tool result's content); not ids, types, payloads or the tool result copy
 * (`toolUseResult`) a user record also holds.
 */
export const claudeTextPath: TextPath = (path) => {
  if (path.length === 1) return path[0] === "summary" || path[0] === "content";
  if (path[0] !== "message" || path[1] !== "content") return false;
  return path.length === 2 || (typeof path[2] === "number" && blockTextPath(path.slice(3)));
};

/** Whether a string at `path` inside a content block is text. */
function blockTextPath(path: readonly (string | number)[]): boolean {
  const [key, next] = path;
  if (key === "input") return true;
  if (path.length === 1) {
    return key === "text" || key === "thinking" || key === "name" || key === "content";
  }
  // A tool result's content blocks.
  return key === "content" && typeof next === "number" && blockTextPath(path.slice(2));
}

/** Claude Code transcripts, for reading. */
export const claudeTranscriptText: TextReader = {
  agent: "claude",
  textOf: claudeLineText,
  skipKeys: CLAUDE_SKIP_KEYS,
  textPath: claudeTextPath,
};

/** The searchable text of a record: what was said, run, returned or thought; never payloads. */
export function textOfRecord(type: string, record: Record<string, unknown>): string {
  switch (type) {
    case "user":
    case "assistant": {
      const message = obj(record.message);
      return message ? contentText(message.content) : "";
    }
    case "system":
      return typeof record.content === "string" ? record.content : "";
    case "summary":
      return str(record.summary) ?? "";
    default:
      return "";
  }
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const item of content) {
    const block = obj(item);
    if (!block) continue;
    switch (block.type) {
      case "text":
        if (typeof block.text === "string") parts.push(block.text);
        break;
      case "thinking":
        if (typeof block.thinking === "string") parts.push(block.thinking);
        break;
      case "tool_use":
      case "server_tool_use":
        parts.push(
          [str(block.name) ?? "", ...stringLeaves(block.input, CLAUDE_SKIP_KEYS)].join("\n"),
        );
        break;
      case "tool_result":
        parts.push(contentText(block.content));
        break;
      default:
        // Images and documents: their payloads are never indexed.
        if (typeof block.text === "string" && !looksLikeBase64(block.text)) parts.push(block.text);
    }
  }
  return parts.filter((p) => p.length > 0).join("\n");
}

/** A file directly inside a `tool-results` folder (either separator: locators of other systems). */
const SIDECAR = /[\\/]tool-results[\\/][^\\/]+$/;

/** Field names of a structured output file whose values are never indexed. */
export const TOOL_RESULT_SKIP_KEYS: ReadonlySet<string> = new Set(["data", "signature", "type"]);

/** True for the locator of a persisted tool output (`<session>/tool-results/<file>`). */
export function isToolResultFile(locator: string): boolean {
  return SIDECAR.test(locator);
}

/** The text of an output file: as written, or the strings of a structured (`.json`) one. */
export function outputText(bytes: Uint8Array, source: SourceRef): string {
  const text = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true }).decode(bytes);
  if (!source.path.endsWith(".json")) return text;
  try {
    return stringLeaves(JSON.parse(text), TOOL_RESULT_SKIP_KEYS).join("\n");
  } catch {
    return text;
  }
}

/** Claude Code's persisted tool output, for reading. */
export const claudeToolResultText: TextReader = {
  agent: "claude",
  claims: isToolResultFile,
  textOf: outputText,
};
