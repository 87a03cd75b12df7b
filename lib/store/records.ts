// Reading records back: the searchable text of a stored record derived again from its raw
// bytes (for snippets and `show`), and the conversation rows in the shape commands print.

import {
  adapterOf,
  type AgentName,
  type Kind,
  pathOfLocator,
  type Role,
  type SourceRef,
  type TextReader,
} from "../sources/adapter.ts";
import { HistoryStore } from "./db.ts";
import { FLAG_INDEXED, FLAG_STREAMED, FLAG_SUPERSEDED, FLAG_ZSTD } from "./schema.ts";
import { DEFAULT_LIMITS } from "../capture/limits.ts";
import { type LineRow, streamedText } from "./_streamed_text.ts";
import { decodedRow } from "./raw.ts";
import { mapStrings, REDACTION_OVERLAP, type Redactor } from "../gate/secrets.ts";
import { shownProjectKey } from "../paths.ts";

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
  /** The captured length of a compressed row (null where `raw` is the captured bytes). */
  length?: number | null;
}

/** A conversation row. */
export interface ConversationRow {
  id: number;
  key: string;
  agent: AgentName;
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
  /** A subagent's type; absent from a store opened read-only before migration 0009. */
  agent_type?: string | null;
  gone: number;
}

/** A conversation as `show --json` and the dashboard print it. */
export interface ConversationJson {
  id: string;
  agent: AgentName;
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
  /** A subagent's type, as its agent names it (`Explore`), or null. */
  agentType: string | null;
  archived: boolean;
  sourceGone: boolean;
  agentVersion: string | null;
}

/**
 * The printable form of a conversation row, the one form in which its fields are shown or sent:
 * every string in it passes `redact` (the gate's redaction of anything shown), not only the
 * title (a transcript's first prompt or summary) but the paths (a token in a directory's name)
 * and the rest a transcript gave, so no view has a field to forget. The project key's readable
 * part is made from the project as shown (see `shownProjectKey`).
 */
export function conversationJson(
  row: ConversationRow,
  redact: (text: string) => string,
): ConversationJson {
  const shown = mapStrings(rowJson(row), (text) => redact(text));
  if (shown.projectKey !== null && shown.project !== null && shown.project !== row.project_root) {
    shown.projectKey = shownProjectKey(shown.projectKey, shown.project);
  }
  return shown;
}

function rowJson(row: ConversationRow): ConversationJson {
  return {
    id: row.key,
    agent: row.agent,
    nativeId: row.native_id,
    title: row.title,
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
    agentType: row.agent_type ?? null,
    archived: row.archived === 1,
    sourceGone: row.gone === 1,
    agentVersion: row.agent_version,
  };
}

/** ISO time of epoch milliseconds, or null. */
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** Where a chunk sits: its source generation, offset, place in its line and captured size. */
export interface ChunkPlace {
  source_id: number;
  generation: number;
  offset: number;
  seq: number;
  size: number;
}

/** A chunk next to another in its line. */
interface Neighbour {
  id: number;
  offset: number;
  raw: Uint8Array;
  flags: number;
}

interface SourceInfo {
  ref: SourceRef;
  adapter: TextReader | undefined;
}

/** The bytes of a chunk's line just before and just after it (empty where the line ends). */
export interface ChunkNeighbours {
  before: Uint8Array;
  after: Uint8Array;
}

const NO_BYTES: Uint8Array = new Uint8Array(0);

/**
 * The sources a TextDeriver keeps looked up: a pass over a whole store (a migration) meets every
 * source, and the lookups of the 105,609 of the 10 GB bench store, all kept, took 31.3 MiB of heap
 * (0.4 MiB with these kept).
 */
const SOURCES_KEPT = 1024;

/**
 * Derives the text of stored records again from their raw bytes, exactly as capture indexed it
 * (a long record's text split over its chunks), and redacted. Caches the latest source lookups.
 */
export class TextDeriver {
  #store: HistoryStore;
  #adapters: readonly TextReader[];
  #redact: Redactor;
  /** The sources looked up last, the oldest first. */
  #sources = new Map<number, SourceInfo>();
  /** The last few chunks decoded, as pages read each chunk's neighbours too. */
  #recent = new Map<number, Uint8Array>();

  constructor(store: HistoryStore, adapters: readonly TextReader[], redact: Redactor) {
    this.#store = store;
    this.#adapters = adapters;
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
        .get(sourceId) as { agent: AgentName; locator: string; format: SourceRef["format"] };
      info = {
        ref: {
          agent: row.agent,
          locator: row.locator,
          path: pathOfLocator(row.locator),
          format: row.format,
        },
        adapter: adapterOf(this.#adapters, row.agent, row.locator),
      };
      if (this.#sources.size >= SOURCES_KEPT) {
        this.#sources.delete(this.#sources.keys().next().value!);
      }
      this.#sources.set(sourceId, info);
    }
    return info;
  }

  /** One record row by id, its raw bytes decoded. */
  recordById(id: number): RecordRow {
    return decodedRow(this.storedById(id));
  }

  /** One record row by id as stored (its raw bytes still compressed where they are). */
  storedById(id: number): RecordRow {
    return this.#store.stmt("SELECT * FROM records WHERE id = ?").get(id) as unknown as RecordRow;
  }

  /**
   * The text of one record row. A line longer than a chunk is several rows, and its text is its
   * first row's, whole; the others have none. A streamed line's text is in pieces, each at the
   * row it starts at, as capture indexed them (`_streamed_text.ts`).
   */
  textOf(stored: RecordRow): string {
    // A superseded record's words live in the record that replaced it (a newer revision, a
    // response item repeating an agent message): shown, forked and scanned once, there.
    if (stored.flags & FLAG_SUPERSEDED) return "";
    const row = decodedRow(stored);
    if (row.flags & FLAG_STREAMED) return this.#streamedText(row);
    if (row.seq > 0) return "";
    const { adapter, ref } = this.source(row.source_id);
    if (!adapter) return "";
    return this.#redact(adapter.textOf(this.lineOf(row).bytes, ref));
  }

  /**
   * True when the record has words to show: what `textOf` gives is not blank. Cheaper than
   * `textOf` (no redaction, which never empties a text): a long line whose text was indexed is
   * told without reading it.
   */
  hasText(stored: RecordRow): boolean {
    if (stored.flags & FLAG_SUPERSEDED) return false;
    if (stored.flags & FLAG_STREAMED && stored.flags & FLAG_INDEXED) return true;
    if (stored.seq > 0) return false;
    if (stored.flags & FLAG_STREAMED) return this.#streamedText(decodedRow(stored)) !== "";
    if (stored.flags & FLAG_INDEXED && this.#continued(stored)) return true;
    const row = decodedRow(stored);
    const { adapter, ref } = this.source(row.source_id);
    if (!adapter) return false;
    return adapter.textOf(this.lineOf(row).bytes, ref).trim() !== "";
  }

  /** The text of a row of a streamed line (see `streamedText`). */
  #streamedText(row: RecordRow): string {
    const { adapter } = this.source(row.source_id);
    if (!adapter || (row.seq > 0 && !(row.flags & FLAG_INDEXED))) return "";
    return streamedText(this.#lineRows(row), row, adapter, this.#redact, DEFAULT_LIMITS.textPiece);
  }

  /** The rows of the line `row` is a chunk of, from its first, each decoded as it is read. */
  *#lineRows(row: RecordRow): Iterable<LineRow> {
    const head = row.seq === 0 ? row.offset : (this.#store.stmt(
      `SELECT offset FROM records WHERE source_id = ? AND generation = ? AND offset <= ? AND seq = 0
       ORDER BY offset DESC LIMIT 1`,
    ).get(row.source_id, row.generation, row.offset) as { offset: number } | undefined)?.offset;
    if (head === undefined) return;
    const rows = this.#store.stmt(
      `SELECT id, raw, flags, length FROM records WHERE source_id = ?1 AND generation = ?2
         AND offset >= ?3 AND offset < coalesce((SELECT min(offset) FROM records
           WHERE source_id = ?1 AND generation = ?2 AND offset > ?3 AND seq = 0), 9e18)
       ORDER BY offset`,
    ).iterate(row.source_id, row.generation, head) as Iterable<LineRow>;
    for (const stored of rows) yield decodedRow(stored);
  }

  /**
   * True when the line whose first row is `head` goes on in another row (a long line), told
   * without reading, decoding and parsing all of it.
   */
  #continued(head: RecordRow): boolean {
    const length = head.flags & FLAG_ZSTD ? head.length : head.raw.length;
    if (length !== DEFAULT_LIMITS.chunkSize) return false;
    return this.#store.stmt(
      `SELECT 1 FROM records WHERE source_id = ? AND generation = ? AND offset = ? AND seq > 0`,
    ).get(head.source_id, head.generation, head.offset + length) !== undefined;
  }

  /**
   * Up to `REDACTION_OVERLAP` bytes of the chunks before and after a chunk in its line (a line
   * longer than the chunk size is stored as several rows); empty where the line starts or ends.
   */
  neighbours(chunk: ChunkPlace): ChunkNeighbours {
    let before: Uint8Array = NO_BYTES;
    if (chunk.seq > 0) {
      const previous = this.#store.stmt(
        `SELECT id, offset, raw, flags FROM records WHERE source_id = ? AND generation = ?
           AND offset < ? ORDER BY offset DESC LIMIT 1`,
      ).get(chunk.source_id, chunk.generation, chunk.offset) as Neighbour | undefined;
      const raw = previous && this.#rawOf(previous);
      if (raw && previous.offset + raw.length === chunk.offset) {
        before = raw.subarray(Math.max(0, raw.length - REDACTION_OVERLAP));
      }
    }
    let after: Uint8Array = NO_BYTES;
    const next = this.#store.stmt(
      `SELECT id, offset, seq, raw, flags FROM records WHERE source_id = ? AND generation = ?
         AND offset > ? ORDER BY offset LIMIT 1`,
    ).get(chunk.source_id, chunk.generation, chunk.offset) as
      | (Neighbour & { seq: number })
      | undefined;
    if (next && next.seq > 0 && chunk.offset + chunk.size === next.offset) {
      after = this.#rawOf(next).subarray(0, REDACTION_OVERLAP);
    }
    return { before, after };
  }

  /** `neighbours` of the record with id `id` (none when there is no such record). */
  neighboursOf(id: number): ChunkNeighbours {
    const chunk = this.#store.stmt(
      `SELECT source_id, generation, offset, seq, coalesce(length, length(raw)) AS size
       FROM records WHERE id = ?`,
    ).get(id) as ChunkPlace | undefined;
    return chunk ? this.neighbours(chunk) : { before: NO_BYTES, after: NO_BYTES };
  }

  /** The captured bytes of a neighbouring chunk, decoded once for a page. */
  #rawOf(row: Neighbour): Uint8Array {
    let raw = this.#recent.get(row.id);
    if (!raw) {
      raw = decodedRow(row).raw;
      if (this.#recent.size >= 4) this.#recent.delete(this.#recent.keys().next().value!);
      this.#recent.set(row.id, raw);
    }
    return raw;
  }

  /** The whole line a chunk belongs to: its bytes, and the chunk rows it spans (their ids). */
  lineOf(stored: RecordRow): { bytes: Uint8Array; rows: number; ids: number[] } {
    const row = decodedRow(stored);
    const head = row.seq === 0 ? row : this.#store.stmt(
      `SELECT * FROM records WHERE source_id = ? AND generation = ? AND offset < ? AND seq = 0
       ORDER BY offset DESC LIMIT 1`,
    ).get(row.source_id, row.generation, row.offset) as unknown as RecordRow | undefined;
    if (!head) return { bytes: row.raw, rows: 1, ids: [row.id] };
    const headRaw = decodedRow(head).raw;
    // Lines are cut into rows of exactly the chunk size: a shorter head is the whole line.
    if (headRaw.length < DEFAULT_LIMITS.chunkSize) {
      return { bytes: headRaw, rows: 1, ids: [head.id] };
    }
    const rest = (this.#store.stmt(
      `SELECT id, raw, flags FROM records WHERE source_id = ? AND generation = ? AND offset > ?
         AND seq > 0 AND offset < coalesce((SELECT min(offset) FROM records
           WHERE source_id = ?1 AND generation = ?2 AND offset > ?3 AND seq = 0), 9e18)
       ORDER BY offset`,
    ).all(head.source_id, head.generation, head.offset) as {
      id: number;
      raw: Uint8Array;
      flags: number;
    }[])
      .map(decodedRow);
    if (!rest.length) return { bytes: headRaw, rows: 1, ids: [head.id] };
    const parts = [headRaw, ...rest.map((r) => r.raw)];
    const length = parts.reduce((n, p) => n + p.length, 0);
    const bytes = new Uint8Array(length);
    let at = 0;
    for (const part of parts) {
      bytes.set(part, at);
      at += part.length;
    }
    return { bytes, rows: parts.length, ids: [head.id, ...rest.map((r) => r.id)] };
  }
}
