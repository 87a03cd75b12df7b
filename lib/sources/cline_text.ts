// What a stored Cline record is and its text, apart from the capture code so that `search` and
// `show` load only this. Cline keeps each session as whole JSON documents it rewrites
// (`sessions/<id>/<id>.json`, `<id>.messages.json`, a subagent's `agent_<id>.messages.json`);
// logbook stores them as rows, one a line, that it makes of those documents (cline.ts):
//
//   {"cline":"message","sessionId":…,"agent":…,"parent":…,"restoredFrom":…,"version":…,"cwd":…,
//    "copiedFrom":…,"message":{…}}
//   {"cline":"session","sessionId":…,"session":{…}}
//
// `message` is one element of the document's `messages` as Cline wrote it (parsed and written
// again compactly: equal JSON); `session` is the session's `<id>.json`.

import type { SourceRef, TextReader } from "./adapter.ts";
import { obj, str, stringLeaves } from "./_text.ts";

/** Field names whose string values are never indexed: payloads and signatures. */
export const CLINE_SKIP_KEYS: ReadonlySet<string> = new Set(["data", "signature", "success"]);

/** A stored row, or why it cannot be read. */
export type ClineRow =
  | {
    cline: "message";
    sessionId: string;
    agent: string | null;
    parent: string | null;
    /** The session this one was restored from (a checkpoint restore starts a new session). */
    restoredFrom: string | null;
    /** Set when the message is a copy of that session's message with the same id. */
    copiedFrom: string | null;
    version: string | null;
    cwd: string | null;
    message: Record<string, unknown>;
  }
  | { cline: "session"; sessionId: string; session: Record<string, unknown> }
  | { bad: string; sessionId: string | null };

const utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

export function clineRowOf(bytes: Uint8Array): ClineRow {
  let row: Record<string, unknown> | null;
  try {
    row = obj(JSON.parse(utf8.decode(bytes)));
  } catch {
    return { bad: "invalid JSON", sessionId: null };
  }
  const sessionId = str(row?.sessionId);
  if (!row || !sessionId) return { bad: "row without a session id", sessionId: null };
  if (row.cline === "message") {
    const message = obj(row.message);
    if (!message) return { bad: "message row without a message", sessionId };
    return {
      cline: "message",
      sessionId,
      agent: str(row.agent),
      parent: str(row.parent),
      restoredFrom: str(row.restoredFrom),
      copiedFrom: str(row.copiedFrom),
      version: str(row.version),
      cwd: str(row.cwd),
      message,
    };
  }
  if (row.cline === "session") {
    const session = obj(row.session);
    if (!session) return { bad: "session row without a session", sessionId };
    return { cline: "session", sessionId, session };
  }
  return { bad: `row/${String(row.cline)}`, sessionId };
}

/** What the person typed: Cline wraps it in `<user_input mode="act">…</user_input>`. */
const USER_INPUT = /^<user_input(?: [^>]*)?>([\s\S]*)<\/user_input>$/;

/** The searchable text of one message: its words, tool names, inputs and results. */
export function clineMessageText(message: Record<string, unknown>): string {
  const content = message.content;
  if (typeof content === "string") return unwrap(content);
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const item of content) {
    const block = obj(item);
    if (!block) continue;
    switch (block.type) {
      case "text":
        if (typeof block.text === "string") parts.push(unwrap(block.text));
        break;
      case "thinking":
      case "reasoning":
        if (typeof block.thinking === "string") parts.push(block.thinking);
        else if (typeof block.text === "string") parts.push(block.text);
        break;
      case "tool_use":
        parts.push(str(block.name) ?? "", ...stringLeaves(block.input, CLINE_SKIP_KEYS));
        break;
      case "tool_result":
        parts.push(...stringLeaves(block.content, CLINE_SKIP_KEYS));
        break;
    }
  }
  return parts.filter((p) => p.trim() !== "").join("\n");
}

function unwrap(text: string): string {
  return USER_INPUT.exec(text.trim())?.[1] ?? text;
}

/** The text of one stored row's bytes ("" for a session row or one that cannot be read). */
export function clineRowText(bytes: Uint8Array, _source?: SourceRef): string {
  const row = clineRowOf(bytes);
  return "cline" in row && row.cline === "message" ? clineMessageText(row.message) : "";
}

/** Cline sessions, for reading. */
export const clineText: TextReader = {
  agent: "cline",
  textOf: clineRowText,
  skipKeys: CLINE_SKIP_KEYS,
};
