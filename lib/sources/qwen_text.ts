// The text of Qwen Code's chat records: what capture indexes and what reading shows, apart from
// the capture code so that `search` and `show` load only this (lib/agents.ts `READERS`).
//
// A record is a Claude-like envelope (`uuid`, `parentUuid`, `type`, `cwd`…) around a Gemini-style
// message: `message.parts` of `text` (with `thought: true` for reasoning), `functionCall`,
// `functionResponse` and `inlineData`.

import type { TextPath, TextReader } from "./adapter.ts";
import { jsonRecord, looksLikeBase64, obj, str, stringLeaves } from "./_text.ts";

/** Field names whose string values are never indexed: payloads and signatures. */
export const QWEN_SKIP_KEYS: ReadonlySet<string> = new Set(["data", "thoughtSignature"]);

/** The text of one chat record's bytes ("" for a line that is not a JSON record). */
export function qwenLineText(bytes: Uint8Array): string {
  const record = jsonRecord(bytes);
  return record ? textOfRecord(record) : "";
}

/**
 * Where `textOfRecord` finds text, by a string's path in the record: a message's parts (their
 * text, a call's name and arguments, a response's fields), never ids, payloads or the telemetry
 * and snapshots of `system` records (a title and a slash command are short: never streamed).
 */
export const qwenTextPath: TextPath = (path) => {
  if (path[0] !== "message" || path[1] !== "parts" || typeof path[2] !== "number") return false;
  const [key, field] = path.slice(3);
  if (key === "text") return path.length === 4;
  if (key === "functionCall") return field === "name" || field === "args";
  return key === "functionResponse" && field === "response";
};

/** Qwen Code chats, for reading. */
export const qwenChatText: TextReader = {
  agent: "qwen",
  textOf: qwenLineText,
  skipKeys: QWEN_SKIP_KEYS,
  textPath: qwenTextPath,
};

/** The searchable text of a record: what was said, called, returned or summarised. */
export function textOfRecord(record: Record<string, unknown>): string {
  switch (record.type) {
    case "user":
    case "assistant":
    case "tool_result":
      return partsText(obj(record.message)?.parts);
    case "system":
      return systemText(record);
    default:
      return "";
  }
}

/** The parts of a Gemini-style message (`{role, parts}`), or none. */
export function partsOf(message: unknown): Record<string, unknown>[] {
  const parts = obj(message)?.parts;
  return Array.isArray(parts)
    ? parts.map(obj).filter((p): p is Record<string, unknown> => p !== null)
    : [];
}

function partsText(parts: unknown): string {
  const out: string[] = [];
  for (const part of partsOf({ parts })) {
    const call = obj(part.functionCall);
    const response = obj(part.functionResponse);
    if (typeof part.text === "string") {
      if (!looksLikeBase64(part.text)) out.push(part.text);
    } else if (call) {
      out.push([str(call.name) ?? "", ...stringLeaves(call.args, QWEN_SKIP_KEYS)].join("\n"));
    } else if (response) {
      out.push(stringLeaves(response.response, QWEN_SKIP_KEYS).join("\n"));
    }
  }
  return out.filter((p) => p.length > 0).join("\n");
}

/**
 * A system record's words: the slash command typed (once, at its invocation), and the
 * summary a compression made of the history (its first message; the rest repeats the chat).
 */
function systemText(record: Record<string, unknown>): string {
  const payload = obj(record.systemPayload);
  switch (record.subtype) {
    case "slash_command":
      return payload?.phase === "invocation" ? str(payload.rawCommand) ?? "" : "";
    case "chat_compression": {
      const history = Array.isArray(payload?.compressedHistory) ? payload.compressedHistory : [];
      return partsText(obj(history[0])?.parts);
    }
    default:
      return "";
  }
}
