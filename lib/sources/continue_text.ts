// The records logbook makes of a Continue CLI session document, and their text: what capture
// derives records from and what reading shows, apart from the capture code so that `search` and
// `show` load only this (lib/agents.ts `readers`).
//
// Continue keeps a session as one pretty-printed JSON document (`sessions/<uuid>.json`), written
// whole after each turn. Its records are rows (lib/sources/continue.ts reads them): one for the
// document without its history items, and one per history item, each a line of JSON that wraps
// the document's own bytes, exactly as they are in the file, with where they came from:
//
//   {"continue":"session","sessionId":…,"time":…,"revises":…,"forkOf":…,"document":<bytes>}
//   {"continue":"item","sessionId":…,"index":…,"time":…,"revises":…,"copiedFrom":…,"item":<bytes>}
//
// `document` is the file with the items of its `history` array cut out (`"history": []`); `item`
// is one element of that array, byte for byte.

import type { SourceRef, TextReader } from "./adapter.ts";
import { obj, str, stringLeaves } from "./_text.ts";
import { joinText } from "./opencode_text.ts";

const utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** Values never indexed: images pasted into a prompt. */
export const CONTINUE_SKIP_KEYS: ReadonlySet<string> = new Set(["imageUrl", "image_url"]);

/** The roles of the messages of history items this version reads (`thinking`: reasoning). */
export const CONTINUE_ROLES: ReadonlySet<string> = new Set([
  "user",
  "assistant",
  "system",
  "tool",
  "thinking",
]);

/** One row of a session document, as stored. */
export type ContinueRow =
  | {
    continue: "session";
    sessionId: string;
    /** Epoch ms: the session's creation (its first read) or the document's mtime. */
    time: number | null;
    /** True when it replaces the session row stored before (the document changed outside its items). */
    revises: boolean;
    /** The session this one was forked from (`cn --fork`), told from the items it copied. */
    forkOf: string | null;
    document: Record<string, unknown> | null;
  }
  | {
    continue: "item";
    sessionId: string;
    index: number;
    time: number | null;
    /** True when it is a newer revision of the item stored at its place (see continue.ts). */
    revises: boolean;
    /** The session the item is a copy of (the leading items of a fork). */
    copiedFrom: string | null;
    item: unknown;
  };

/** A row that cannot be read, and the session it names when it does. */
export interface BadRow {
  bad: string;
  sessionId: string | null;
}

/** The row a record's bytes hold. */
export function continueRowOf(bytes: Uint8Array): ContinueRow | BadRow {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    return { bad: "invalid JSON", sessionId: null };
  }
  const row = obj(value);
  const sessionId = str(row?.sessionId);
  if (!row || !sessionId) return { bad: "not a Continue row", sessionId };
  const time = typeof row.time === "number" && Number.isFinite(row.time) ? row.time : null;
  const revises = row.revises === true;
  if (row.continue === "session") {
    return {
      continue: "session",
      sessionId,
      time,
      revises,
      forkOf: str(row.forkOf),
      document: obj(row.document),
    };
  }
  if (row.continue === "item" && typeof row.index === "number") {
    return {
      continue: "item",
      sessionId,
      index: row.index,
      time,
      revises,
      copiedFrom: str(row.copiedFrom),
      item: row.item,
    };
  }
  return { bad: "not a Continue row", sessionId };
}

/** The text of one stored row: what a history item says ("" for the session row). */
export function continueRowText(bytes: Uint8Array, _source?: SourceRef): string {
  const row = continueRowOf(bytes);
  return "bad" in row || row.continue !== "item" ? "" : itemText(row.item);
}

/** Continue CLI sessions, for reading. */
export const continueText: TextReader = {
  agent: "continue",
  textOf: continueRowText,
  skipKeys: CONTINUE_SKIP_KEYS,
};

/**
 * What a history item says: its message's words, the tools it called with their input, the
 * tools' output (Continue keeps it in the calling item's `toolCallStates`), a compaction's
 * summary. Context items (files attached to a prompt) and the editor's copy of a prompt are not.
 */
export function itemText(value: unknown): string {
  const item = obj(value);
  const message = obj(item?.message);
  // An item of a role this version does not know is drift: kept raw, its words not read.
  if (!item || !message || !CONTINUE_ROLES.has(message.role as string)) return "";
  return joinText([
    ...contentText(message.content),
    str(item.conversationSummary),
    str(obj(item.reasoning)?.text),
    ...toolCallsOf(message).flatMap((call) => [call.name, call.input]),
    ...toolOutputs(item).map((o) => o.content),
  ]);
}

/** A message's content: a string, or parts of which the `text` ones hold words. */
export function contentText(content: unknown): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  return content.map((part) => {
    const p = obj(part);
    return p?.type === "text" ? str(p.text) : null;
  }).filter((t): t is string => t !== null);
}

/** A tool call an assistant message makes. */
export interface ContinueToolCall {
  id: string | null;
  name: string;
  input: string;
}

/** The tool calls of an assistant message, each with its arguments as text. */
export function toolCallsOf(message: Record<string, unknown>): ContinueToolCall[] {
  const calls = Array.isArray(message.toolCalls) ? message.toolCalls : [];
  return calls.flatMap((value) => {
    const call = obj(value);
    const fn = obj(call?.function);
    if (!call || !fn) return [];
    return [{ id: str(call.id), name: str(fn.name) ?? "tool", input: argumentsText(fn.arguments) }];
  });
}

/** Arguments (a JSON string) as their string leaves, or as written when they are not JSON. */
function argumentsText(args: unknown): string {
  if (typeof args !== "string") return joinText(stringLeaves(args, CONTINUE_SKIP_KEYS));
  try {
    return joinText(stringLeaves(JSON.parse(args), CONTINUE_SKIP_KEYS));
  } catch {
    return args;
  }
}

/** The output of each tool an item called, with the call's id and whether it failed. */
export function toolOutputs(
  item: Record<string, unknown>,
): { id: string | null; error: boolean; content: string }[] {
  const states = Array.isArray(item.toolCallStates) ? item.toolCallStates : [];
  return states.flatMap((value) => {
    const state = obj(value);
    if (!state) return [];
    const output = Array.isArray(state.output) ? state.output : [];
    const content = joinText(output.map((o) => obj(o)?.content));
    return [{
      id: str(state.toolCallId),
      error: state.status === "errored" || state.status === "canceled",
      content,
    }];
  });
}
