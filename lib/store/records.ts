// Reading records back: the searchable text of a stored record derived again from its raw
// bytes (for snippets and `show`), and the conversation rows in the shape commands print.

import {
  type Adapter,
  type Agent,
  type Kind,
  pathOfLocator,
  type Role,
  type SourceRef,
} from "../sources/adapter.ts";
import { HistoryStore } from "./db.ts";
import { FLAG_STREAMED } from "./_batch_write.ts";
import { DEFAULT_LIMITS } from "./_limits.ts";
import { looseText, splitFragments } from "./_text.ts";
import { decodedRow } from "./_raw.ts";

/** A stored record row, as the readers need it. */
export interface RecordRow {
  id: number;
  source_id: number;
  generation: number;
  offset: number;
  seq: number;
  raw: Uint8Array;
  conversation_id: number | null;
  ts: number | null;
  kind: Kind;
  role: Role | null;
  message_id: string | null;
  part_id: string | null;
  flags: number;
}

/** A conversation row. */
export interface ConversationRow {
  id: number;
  key: string;
  agent: Agent;
  native_id: string;
  source_id: number | null;
  project_root: string | null;
  project_key: string | null;
  cwd: string | null;
  branch: string | null;
  title: string | null;
  first_ts: number | null;
  last_ts: number | null;
  message_count: number;
  record_count: number;
  bytes: number;
  parent_key: string | null;
  subagent: number;
  archived: number | null;
  agent_version: string | null;
  gone: number;
}

/** A conversation as `show --json` and the dashboard print it. */
export interface ConversationJson {
  id: string;
  agent: Agent;
  nativeId: string;
  title: string | null;
  project: string | null;
  projectKey: string | null;
  cwd: string | null;
  branch: string | null;
  firstTimestamp: string | null;
  lastTimestamp: string | null;
  messages: number;
  records: number;
  bytes: number;
  parent: string | null;
  subagent: boolean;
  archived: boolean;
  sourceGone: boolean;
  agentVersion: string | null;
}

/**
 * The printable form of a conversation row. The title is a transcript's first prompt or summary,
 * so it passes `redact` (the gate's redaction of anything shown) like every derived text.
 */
export function conversationJson(
  row: ConversationRow,
  redact: (text: string) => string,
): ConversationJson {
  return {
    id: row.key,
    agent: row.agent,
    nativeId: row.native_id,
    title: row.title === null ? null : redact(row.title),
    project: row.project_root,
    projectKey: row.project_key,
    cwd: row.cwd,
    branch: row.branch,
    firstTimestamp: iso(row.first_ts),
    lastTimestamp: iso(row.last_ts),
    messages: row.message_count,
    records: row.record_count,
    bytes: row.bytes,
    parent: row.parent_key,
    subagent: row.subagent === 1,
    archived: row.archived === 1,
    sourceGone: row.gone === 1,
    agentVersion: row.agent_version,
  };
}

/** ISO time of epoch milliseconds, or null. */
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

interface SourceInfo {
  ref: SourceRef;
  adapter: Adapter | undefined;
}

/**
 * Derives the text of stored records again from their raw bytes, exactly as capture indexed it
 * (a long record's text split over its chunks), and redacted. Caches source lookups.
 */
export class TextDeriver {
  #store: HistoryStore;
  #adapters: Map<string, Adapter>;
  #redact: (text: string) => string;
  #sources = new Map<number, SourceInfo>();

  constructor(store: HistoryStore, adapters: readonly Adapter[], redact: (text: string) => string) {
    this.#store = store;
    this.#adapters = new Map(adapters.map((a) => [a.agent, a]));
    this.#redact = redact;
  }

  /** `text` through the same redaction as the records' text (for titles shown beside them). */
  redact(text: string): string {
    return this.#redact(text);
  }

  /** The source a record came from. */
  source(sourceId: number): SourceInfo {
    let info = this.#sources.get(sourceId);
    if (!info) {
      const row = this.#store.stmt("SELECT agent, locator, format FROM sources WHERE id = ?")
        .get(sourceId) as { agent: Agent; locator: string; format: SourceRef["format"] };
      info = {
        ref: {
          agent: row.agent,
          locator: row.locator,
          path: pathOfLocator(row.locator),
          format: row.format,
        },
        adapter: this.#adapters.get(row.agent),
      };
      this.#sources.set(sourceId, info);
    }
    return info;
  }

  /** One record row by id, its raw bytes decoded. */
  recordById(id: number): RecordRow {
    return decodedRow(
      this.#store.stmt("SELECT * FROM records WHERE id = ?").get(id) as unknown as RecordRow,
    );
  }

  /** The text of one record row (the fragment of its line's text that belongs to this chunk). */
  textOf(stored: RecordRow): string {
    const row = decodedRow(stored);
    if (row.flags & FLAG_STREAMED) return this.#redact(looseText(row.raw).trim());
    const { adapter, ref } = this.source(row.source_id);
    if (!adapter) return "";
    const line = this.lineOf(row);
    const text = this.#redact(adapter.textOf(line.bytes, ref));
    if (line.rows === 1) return text;
    return splitFragments(text, line.rows)[row.seq] ?? "";
  }

  /** The whole line a chunk belongs to: its bytes and how many chunk rows it spans. */
  lineOf(stored: RecordRow): { bytes: Uint8Array; rows: number } {
    const row = decodedRow(stored);
    const head = row.seq === 0 ? row : this.#store.stmt(
      `SELECT * FROM records WHERE source_id = ? AND generation = ? AND offset < ? AND seq = 0
       ORDER BY offset DESC LIMIT 1`,
    ).get(row.source_id, row.generation, row.offset) as unknown as RecordRow | undefined;
    if (!head) return { bytes: row.raw, rows: 1 };
    const headRaw = decodedRow(head).raw;
    // Lines are cut into rows of exactly the chunk size: a shorter head is the whole line.
    if (headRaw.length < DEFAULT_LIMITS.chunkSize) return { bytes: headRaw, rows: 1 };
    const rest = (this.#store.stmt(
      `SELECT raw, flags FROM records WHERE source_id = ? AND generation = ? AND offset > ?
         AND seq > 0 AND offset < coalesce((SELECT min(offset) FROM records
           WHERE source_id = ?1 AND generation = ?2 AND offset > ?3 AND seq = 0), 9e18)
       ORDER BY offset`,
    ).all(head.source_id, head.generation, head.offset) as { raw: Uint8Array; flags: number }[])
      .map(decodedRow);
    if (!rest.length) return { bytes: headRaw, rows: 1 };
    const parts = [headRaw, ...rest.map((r) => r.raw)];
    const length = parts.reduce((n, p) => n + p.length, 0);
    const bytes = new Uint8Array(length);
    let at = 0;
    for (const part of parts) {
      bytes.set(part, at);
      at += part.length;
    }
    return { bytes, rows: parts.length };
  }
}
