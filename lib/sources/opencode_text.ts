// The entries of OpenCode's two layouts (database rows, JSON storage files) and their text:
// what capture derives records from and what reading shows, apart from the capture code so that
// `search` and `show` load only this (lib/agents.ts `READERS`). Forks that keep OpenCode's layout
// (Kilo) read through the same code, with their own `OpencodeTextOptions`.

import { basename } from "../path.ts";
import type { SourceRef, TextReader } from "./adapter.ts";
import { looksLikeBase64, obj, str, stringLeaves } from "./_text.ts";

const utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** How an agent that keeps OpenCode's layout reads differently from OpenCode. */
export interface OpencodeTextOptions {
  /**
   * Read a prompt that `<cli> run` stored wrapped in double quotes (it quotes an argument
   * holding a space, `"` inside as `\"`) as the words typed.
   */
  unquoteRunPrompts?: boolean;
}

/** The text of one stored row or storage file ("" for one that cannot be read). */
export function opencodeRowTextWith(
  options: OpencodeTextOptions = {},
): (bytes: Uint8Array, source: SourceRef) => string {
  return (bytes, source) => {
    const entry = entryOf(bytes, source);
    if ("bad" in entry) return "";
    if (entry.table === "part") return partText(entry.data, options);
    if (entry.table === "message") return messageText(entry.data);
    return "";
  };
}

/** The text of one stored OpenCode row or storage file ("" for one that cannot be read). */
export const opencodeRowText: (bytes: Uint8Array, source: SourceRef) => string =
  opencodeRowTextWith();

/** The reader of an agent that keeps OpenCode's layout. */
export function opencodeReaderFor(agent: string, options: OpencodeTextOptions = {}): TextReader {
  return { agent, textOf: opencodeRowTextWith(options) };
}

/** OpenCode sessions, for reading. */
export const opencodeText: TextReader = { agent: "opencode", textOf: opencodeRowText };

/** A session, message or part, as either layout describes it. */
export type Entry =
  | {
    table: "session";
    id: string;
    parentId: string | null;
    directory: string | null;
    title: string | null;
    version: string | null;
    created: number | null;
    updated: number | null;
    archived: boolean;
  }
  | {
    table: "message";
    id: string;
    sessionId: string;
    created: number | null;
    updated: number | null;
    data: Record<string, unknown>;
  }
  | {
    table: "part";
    id: string;
    messageId: string;
    sessionId: string;
    created: number | null;
    updated: number | null;
    data: Record<string, unknown>;
  };

/** A record that cannot be derived: why, and the session it belongs to when known. */
export interface Bad {
  bad: { category: "unknown_type" | "unparsable" | "missing_fields"; detail: string };
  sessionId: string | null;
}

export const OPENCODE_SKIP_KEYS: ReadonlySet<string> = new Set([
  "signature",
  "reasoningEncryptedContent",
  "encrypted_content",
]);

export function isStorageSource(source: SourceRef): boolean {
  return source.path.endsWith(".json");
}

export function entryOf(raw: Uint8Array, source: SourceRef): Entry | Bad {
  const fallback = isStorageSource(source) ? basename(source.path, ".json") : null;
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(raw));
  } catch {
    return { bad: { category: "unparsable", detail: "invalid JSON" }, sessionId: fallback };
  }
  const record = obj(value);
  if (!record) {
    return { bad: { category: "unparsable", detail: "not a JSON object" }, sessionId: fallback };
  }
  return isStorageSource(source) ? storageEntry(record, fallback!) : databaseEntry(record);
}

function databaseEntry(row: Record<string, unknown>): Entry | Bad {
  const table = str(row.table);
  const id = str(row.id);
  const sessionId = table === "session" ? id : str(row.session_id);
  const created = epoch(row.time_created);
  const updated = epoch(row.time_updated);
  const missing = (detail: string): Bad => ({
    bad: { category: "missing_fields", detail },
    sessionId,
  });
  switch (table) {
    case "session":
      if (!id) return missing("session row without an id");
      return {
        table,
        id,
        parentId: str(row.parent_id),
        directory: str(row.directory),
        title: str(row.title),
        version: str(row.version),
        created,
        updated,
        archived: row.time_archived !== null && row.time_archived !== undefined,
      };
    case "message":
    case "part": {
      if (!id || !sessionId) return missing(`${table} row without an id or session_id`);
      const data = parseData(row.data);
      if (!data) {
        return { bad: { category: "unparsable", detail: `${table} data is not JSON` }, sessionId };
      }
      if (table === "message") return { table, id, sessionId, created, updated, data };
      const messageId = str(row.message_id);
      if (!messageId) return missing("part row without a message_id");
      return { table, id, messageId, sessionId, created, updated, data };
    }
    default:
      return { bad: { category: "unknown_type", detail: `table/${table}` }, sessionId };
  }
}

/** A file of the JSON storage: its table told by its fields (and OpenCode's id prefixes). */
function storageEntry(file: Record<string, unknown>, sessionOfSource: string): Entry | Bad {
  const id = str(file.id);
  const time = obj(file.time) ?? {};
  if (!id) {
    return {
      bad: { category: "missing_fields", detail: "storage file without an id" },
      sessionId: sessionOfSource,
    };
  }
  const sessionId = str(file.sessionID) ?? sessionOfSource;
  if (str(file.messageID) || id.startsWith("prt_")) {
    const messageId = str(file.messageID);
    if (!messageId) {
      return {
        bad: { category: "missing_fields", detail: "part without a messageID" },
        sessionId,
      };
    }
    const start = epoch(time.start);
    return {
      table: "part",
      id,
      messageId,
      sessionId,
      created: start,
      updated: epoch(time.end) ?? start,
      data: file,
    };
  }
  if (str(file.sessionID) || id.startsWith("msg_")) {
    const created = epoch(time.created);
    return {
      table: "message",
      id,
      sessionId,
      created,
      updated: epoch(time.completed) ?? created,
      data: file,
    };
  }
  if (id.startsWith("ses_") || "projectID" in file) {
    return {
      table: "session",
      id,
      parentId: str(file.parentID),
      directory: str(file.directory),
      title: str(file.title),
      version: str(file.version),
      created: epoch(time.created),
      updated: epoch(time.updated),
      archived: time.archived !== null && time.archived !== undefined,
    };
  }
  return {
    bad: { category: "unknown_type", detail: "storage/unknown file" },
    sessionId: sessionOfSource,
  };
}

function parseData(value: unknown): Record<string, unknown> | null {
  if (typeof value !== "string") return null;
  try {
    return obj(JSON.parse(value));
  } catch {
    return null;
  }
}

function epoch(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** Pieces joined by newlines, without empties, repeats or base64 payloads. */
export function joinText(pieces: unknown[]): string {
  const kept: string[] = [];
  for (const piece of pieces) {
    if (typeof piece !== "string" || piece.trim() === "" || looksLikeBase64(piece)) continue;
    if (!kept.includes(piece)) kept.push(piece);
  }
  return kept.join("\n");
}

/** What a part says: text, reasoning, a tool's name, input and output; never payloads. */
export function partText(
  data: Record<string, unknown>,
  options: OpencodeTextOptions = {},
): string {
  switch (data.type) {
    case "text":
      return joinText([options.unquoteRunPrompts ? unquotedPrompt(data) : data.text]);
    case "reasoning":
      return joinText([data.text]);
    case "tool": {
      const state = obj(data.state) ?? {};
      const output = typeof state.output === "string" ? [state.output] : [
        state.error,
        obj(state.metadata)?.output,
      ];
      return joinText([
        data.tool,
        state.title,
        ...stringLeaves(state.input, OPENCODE_SKIP_KEYS),
        ...output,
      ]);
    }
    case "subtask":
      return joinText([data.description, data.prompt, data.agent, data.command]);
    case "file": {
      const source = obj(data.source);
      const url = str(data.url);
      return joinText([
        data.filename,
        source?.path,
        url && !url.startsWith("data:") ? url : null,
      ]);
    }
    case "patch":
      return joinText(Array.isArray(data.files) ? data.files : []);
    case "agent":
      return joinText([data.name]);
    case "retry": {
      const error = obj(data.error);
      return joinText([error?.name, obj(error?.data)?.message]);
    }
    default:
      return "";
  }
}

/**
 * A prompt's text as typed: a text part without times (the person's, not the model's) that is
 * one argument `run` wrapped in quotes (it held a space; its own `"` became `\"`), unquoted;
 * any other text as it is.
 */
function unquotedPrompt(data: Record<string, unknown>): unknown {
  const text = data.text;
  if (typeof text !== "string" || data.time !== undefined || data.synthetic === true) return text;
  if (text.length < 3 || !text.startsWith('"') || !text.endsWith('"')) return text;
  const inner = text.slice(1, -1);
  if (!inner.includes(" ")) return text;
  for (let i = inner.indexOf('"'); i !== -1; i = inner.indexOf('"', i + 1)) {
    if (inner[i - 1] !== "\\") return text;
  }
  return inner.replaceAll('\\"', '"');
}

/** A message's own text: only the error it ended with (its words are in its parts). */
export function messageText(data: Record<string, unknown>): string {
  const error = obj(data.error);
  if (!error) return "";
  return joinText([error.name, obj(error.data)?.message]);
}
