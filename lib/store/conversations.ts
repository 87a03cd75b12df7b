// Finding a conversation by a full or partial id, and paging through its records in order
// with a record limit and a raw-byte budget, exactly as `show` and the dashboard need them.

import { Buffer } from "node:buffer";
import type { Kind, Role } from "../sources/adapter.ts";
import { HistoryStore } from "./db.ts";
import { decodedRow } from "./raw.ts";
import {
  type ConversationJson,
  conversationJson,
  type ConversationRow,
  iso,
  type RecordRow,
  TextDeriver,
} from "./records.ts";

/** Thrown when a conversation id matches nothing, or more than one conversation. */
export class ConversationNotFoundError extends Error {
  override name = "ConversationNotFoundError";
}

/**
 * The conversation `id` names: a full id (`claude:<sessionId>`), a native id, or a unique
 * prefix of either.
 */
export function findConversation(store: HistoryStore, id: string): ConversationRow {
  const wanted = id.trim();
  if (!wanted) throw new RangeError("The conversation id is empty");
  const exact = store.stmt("SELECT * FROM conversations WHERE key = ? OR native_id = ?")
    .all(wanted, wanted) as unknown as ConversationRow[];
  if (exact.length === 1) return exact[0]!;
  const pattern = wanted.replace(/[\\%_]/g, (c) => `\\${c}`) + "%";
  const matches = exact.length > 1 ? exact : store.stmt(
    `SELECT * FROM conversations WHERE key LIKE ?1 ESCAPE '\\' OR native_id LIKE ?1 ESCAPE '\\'
     ORDER BY subagent, last_ts DESC LIMIT 50`,
  ).all(pattern) as unknown as ConversationRow[];
  if (matches.length === 1) return matches[0]!;
  // A session's prefix also matches its subagents (`<id>/agent-…`): the session is meant.
  const parents = matches.filter((m) => !m.subagent);
  if (
    parents.length === 1 &&
    matches.every((m) => m === parents[0] || m.parent_key === parents[0]!.key)
  ) {
    return parents[0]!;
  }
  if (!matches.length) {
    throw new ConversationNotFoundError(`No conversation "${wanted}" in the history store`);
  }
  const names = matches.slice(0, 5).map((m) => `"${m.key}"`).join(", ");
  throw new ConversationNotFoundError(
    `Conversation id "${wanted}" is ambiguous: it matches ${names}${
      matches.length > 5 ? " and more" : ""
    }`,
  );
}

/** One record as `show --json` prints it; `raw` is the exact captured bytes in base64. */
export interface RecordJson {
  id: number;
  source: string;
  generation: number;
  offset: number;
  timestamp: string | null;
  kind: Kind;
  role: Role | null;
  text: string;
  raw: string;
  messageId: string | null;
  partId: string | null;
}

/** A page of a conversation. Pass `next` as `after` until it is null. */
export interface Page {
  conversation: ConversationJson;
  records: RecordJson[];
  next: number | null;
}

export interface PageOptions {
  /** Return records after this record id. */
  after?: number;
  /** At most this many records (default 100). */
  limit?: number;
  /** At most about this many raw bytes; one record may cross it (default 512 KiB). */
  budget?: number;
}

export const DEFAULT_PAGE_LIMIT = 100;
export const PAGE_BUDGET = 512 * 1024;

/** The rows of one page, in record order, and whether more follow. */
export function pageRows(
  store: HistoryStore,
  conversationId: number,
  options: PageOptions = {},
): { rows: RecordRow[]; next: number | null } {
  const limit = Math.max(1, options.limit ?? DEFAULT_PAGE_LIMIT);
  const budget = options.budget ?? PAGE_BUDGET;
  const rows: RecordRow[] = [];
  let bytes = 0;
  let more = false;
  const iterator = store.stmt(
    "SELECT * FROM records WHERE conversation_id = ? AND id > ? ORDER BY id LIMIT ?",
  ).iterate(conversationId, options.after ?? 0, limit + 1) as Iterable<RecordRow>;
  for (const stored of iterator) {
    if (rows.length >= limit || (rows.length > 0 && bytes >= budget)) {
      more = true;
      break;
    }
    const row = decodedRow(stored);
    rows.push(row);
    bytes += row.raw.length;
  }
  return { rows, next: more ? rows.at(-1)!.id : null };
}

/**
 * A page of `conversation` with each record's text derived again from its bytes; the texts and
 * the conversation's title pass the deriver's redaction.
 */
export function pageConversation(
  store: HistoryStore,
  deriver: TextDeriver,
  conversation: ConversationRow,
  options: PageOptions = {},
): Page {
  const { rows, next } = pageRows(store, conversation.id, options);
  return {
    conversation: conversationJson(conversation, (text) => deriver.redact(text)),
    records: rows.map((row) => recordJson(row, deriver)),
    next,
  };
}

/** The printable form of a record row. */
function recordJson(row: RecordRow, deriver: TextDeriver): RecordJson {
  return {
    id: row.id,
    source: deriver.source(row.source_id).ref.locator,
    generation: row.generation,
    offset: row.offset,
    timestamp: iso(row.ts),
    kind: row.kind,
    role: row.role,
    text: deriver.textOf(row),
    raw: Buffer.from(row.raw.buffer, row.raw.byteOffset, row.raw.byteLength).toString("base64"),
    messageId: row.message_id,
    partId: row.part_id,
  };
}

/** The most records shown before a record opened with `show --around`. */
export const AROUND_CONTEXT = 6;

/**
 * Where to start a page that opens at `record` with what led to it: the `after` that begins with
 * up to `before` shown records (not `meta`) before it, reaching back at most to the nearest user
 * message (the question before the answer). Throws RangeError when `record` is not a record of
 * `conversation`.
 */
export function contextStart(
  store: HistoryStore,
  conversation: ConversationRow,
  record: number,
  before = AROUND_CONTEXT,
): number {
  const found = store.stmt("SELECT 1 FROM records WHERE id = ? AND conversation_id = ?")
    .get(record, conversation.id);
  if (found === undefined) {
    throw new RangeError(`Record ${record} is not in conversation "${conversation.key}"`);
  }
  let start = record;
  let shown = 0;
  const earlier = store.stmt(
    `SELECT id, kind, role FROM records
     WHERE conversation_id = ? AND id < ? AND kind != 'meta' ORDER BY id DESC LIMIT ?`,
  ).iterate(conversation.id, record, before) as Iterable<{ id: number; kind: Kind; role: Role }>;
  for (const row of earlier) {
    start = row.id;
    shown++;
    if ((row.kind === "message" && row.role === "user") || shown >= before) break;
  }
  return start - 1;
}
