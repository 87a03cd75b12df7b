// The text of Gemini CLI's chat log lines: what capture indexes and what reading shows, apart from
// the capture code so that `search` and `show` load only this (lib/sources/readers.ts).
//
// A log line is one of four records (as Gemini CLI 0.61 reads them back): a `$rewindTo`, a message
// (`id`, `type`, `content`…), a `$set` patch of the session's metadata (`messages` replaces the
// whole list) or a header (`sessionId`, `projectHash`, …).

import type { TextPath, TextReader } from "./adapter.ts";
import { looksLikeBase64, obj, str, stringLeaves } from "./_text.ts";

/** Field names whose string values are never indexed: inline payloads and signatures. */
export const GEMINI_SKIP_KEYS: ReadonlySet<string> = new Set(["inlineData", "thoughtSignature"]);

/** What a log line is, told as Gemini CLI tells it (a rewind first, then a message…). */
export type GeminiShape = "rewind" | "message" | "set" | "header";

/** The shape of a parsed log line, or null for a line that is none of the four. */
export function shapeOf(record: Record<string, unknown>): GeminiShape | null {
  if (typeof record.$rewindTo === "string") return "rewind";
  if (typeof record.id === "string") return "message";
  if (obj(record.$set)) return "set";
  if (typeof record.sessionId === "string" && typeof record.projectHash === "string") {
    return "header";
  }
  return null;
}

/** The text of one log line's bytes ("" for a line that is not a JSON record). */
export function geminiLineText(bytes: Uint8Array): string {
  try {
    const record = obj(JSON.parse(new TextDecoder().decode(bytes)));
    return record ? textOfRecord(record) : "";
  } catch {
    return "";
  }
}

/**
 * The searchable text of a record: a message's words, thoughts and tool calls (a tool's output is
 * the text of the user record that returns it, not of the call's copy in `toolCalls`); a `$set`'s
 * messages and summary; nothing for a header or a rewind.
 */
export function textOfRecord(record: Record<string, unknown>): string {
  switch (shapeOf(record)) {
    case "message":
      return messageText(record);
    case "set": {
      const set = obj(record.$set)!;
      const messages = Array.isArray(set.messages) ? set.messages.map(obj) : [];
      return joinParts([
        ...messages.map((m) => (m && typeof m.id === "string" ? messageText(m) : "")),
        str(set.summary) ?? "",
      ]);
    }
    default:
      return "";
  }
}

/**
 * Where `textOfRecord` finds text, for a line too long to parse: a message's content, thoughts
 * and tool calls' names and arguments, and a `$set`'s messages and summary.
 */
export const geminiTextPath: TextPath = (path) => {
  if (path[0] !== "$set") return messagePath(path);
  if (path[1] === "summary") return path.length === 2;
  return path[1] === "messages" && typeof path[2] === "number" && messagePath(path.slice(3));
};

function messagePath(path: readonly (string | number)[]): boolean {
  const [key, index, field] = path;
  if (key === "content") return true;
  if (key === "thoughts") return field === "subject" || field === "description";
  return key === "toolCalls" && typeof index === "number" && (field === "name" || field === "args");
}

/** Gemini CLI chat logs, for reading. */
export const geminiTranscriptText: TextReader = {
  agent: "gemini",
  textOf: geminiLineText,
  skipKeys: GEMINI_SKIP_KEYS,
  textPath: geminiTextPath,
};

/** The id Gemini CLI gives the session context, the same in every session (0.61). */
const SESSION_CONTEXT_ID = "d04923d38bb0f6017037e74183378ef4";

/**
 * True for the `<session_context>` message Gemini CLI puts first in every session (the date, the
 * OS, the workspace's folders and tree): context it gives the model, not the conversation.
 */
export function isSessionContext(message: Record<string, unknown>): boolean {
  if (message.type !== "user") return false;
  if (message.id === SESSION_CONTEXT_ID) return true;
  const first = Array.isArray(message.content) ? obj(message.content[0]) : null;
  const text = typeof message.content === "string" ? message.content : str(first?.text);
  return text !== null && text.trimStart().startsWith("<session_context>");
}

/** The words of one message: its content, thoughts and tool calls (never the session context). */
export function messageText(message: Record<string, unknown>): string {
  if (isSessionContext(message)) return "";
  const calls = Array.isArray(message.toolCalls) ? message.toolCalls.map(obj) : [];
  const thoughts = Array.isArray(message.thoughts) ? message.thoughts.map(obj) : [];
  return joinParts([
    ...contentParts(message.content, calls.length > 0),
    ...thoughts.flatMap((t) => [str(t?.subject) ?? "", str(t?.description) ?? ""]),
    ...calls.flatMap((c) => [str(c?.name) ?? "", ...stringLeaves(c?.args, GEMINI_SKIP_KEYS)]),
  ]);
}

/**
 * The texts of message content: a string, or parts (text, a tool's response, a call). A call
 * part is left out when the message lists its calls in `toolCalls` too (a resume's copy does).
 */
function contentParts(content: unknown, callsListed: boolean): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  const parts: string[] = [];
  for (const item of content) {
    const part = obj(item);
    if (!part) continue;
    const text = str(part.text);
    if (text && !looksLikeBase64(text)) parts.push(text);
    const response = obj(part.functionResponse);
    if (response) parts.push(responseText(response.response));
    const call = obj(part.functionCall);
    if (call && !callsListed) {
      parts.push(str(call.name) ?? "", ...stringLeaves(call.args, GEMINI_SKIP_KEYS));
    }
  }
  return parts;
}

/** A tool's response: its `output` (or `error`), else every string in it. */
function responseText(response: unknown): string {
  const fields = obj(response);
  const said = str(fields?.output) ?? str(fields?.error);
  return said ?? joinParts(stringLeaves(response, GEMINI_SKIP_KEYS));
}

function joinParts(parts: string[]): string {
  return parts.filter((p) => p.length > 0).join("\n");
}
