// A batch as a pass assembles it (the records of one or more sources, the keys they carry, the
// cursors they move) and as the writer takes it (`BatchPayload`: plain data, the raw bytes
// compressed and packed in one buffer, what it tells each conversation summed per source).

import type { AgentName, ConversationInfo, Derived } from "../sources/adapter.ts";
import type { Redactor } from "../gate/secrets.ts";
import type { Project } from "../paths.ts";
import { indexText } from "../store/cjk.ts";
import { encodeRaw } from "../store/raw.ts";
import { cutTitle } from "../store/text.ts";
import type { BatchPayload, BatchRecord, DriftRow } from "./batch_transaction.ts";
import type { ConversationMode, ConversationWrite } from "./conversation_rows.ts";
import { FLAG_INDEXED } from "../store/schema.ts";
import { headHash } from "./identity.ts";
import type { Limits } from "./limits.ts";
import { type FileSeen, savedState, type SourceCtx } from "./source.ts";

/** One chunk row of a derived record, waiting in a batch. */
export interface PendingRecord {
  /** The source the record comes from. */
  ctx: SourceCtx;
  /** Set when re-deriving a stored record (rebuild): it is updated, not inserted. */
  existingId?: number;
  offset: number;
  seq: number;
  raw: Uint8Array;
  derived: Derived;
  text: string;
  flags: number;
}

/** What a batch moves a source to: its cursor, and whether its file was read to the end. */
export interface SourceUpdate {
  ctx: SourceCtx;
  /** The stream position after the last record read (null: unchanged, as in rebuild). */
  cursor: number | null;
  cursorKey?: string;
  /** The file as it was when read to the end. */
  seen?: FileSeen;
  fingerprint?: string;
}

/** What a pass keeps of a batch handed to the writer, for when it is committed. */
export interface Job {
  /** Its drift records, counted in the run's report once stored. */
  drift: PendingRecord[];
  /** Source bytes the batch covers. */
  raw: number;
  /** Sources the batch finished reading. */
  finished: SourceCtx[];
  /** Its keyed records, for lookups while it is in flight. */
  keyed: Batch["keyed"];
}

/** What the records of one source in a batch tell a conversation row. */
export interface ConversationDelta {
  key: string;
  info: ConversationInfo;
  agent: AgentName;
  sourceId: number;
  firstTs: number | null;
  lastTs: number | null;
  messages: number;
  records: number;
  bytes: number;
  title: { text: string; rank: number } | null;
  version: string | null;
}

/** Records waiting to be committed together, and what they move. */
export class Batch {
  records: PendingRecord[] = [];
  text = 0;
  raw = 0;
  /** Keyed records of this batch (the newest per key), for lookups before they are stored. */
  keyed = new Map<
    string,
    { ctx: SourceCtx; key: string; raw: Uint8Array; records: PendingRecord[] }
  >();
  /** Stored records that records of this batch supersede. */
  supersede = new Map<string, { ctx: SourceCtx; key: string }>();
  /** The sources this batch moves forward. */
  sources = new Map<number, SourceUpdate>();
  /** Conversations met under a tombstone (a forgotten session's subagents): tombstoned too. */
  tombstones = new Set<string>();
  /** Stored rows of records a tombstone covers, derived again (rebuild): they leave the store. */
  drop: number[] = [];

  /** The update of `ctx`'s source, created on first use. */
  source(ctx: SourceCtx): SourceUpdate {
    let update = this.sources.get(ctx.sourceId);
    if (!update) {
      update = { ctx, cursor: null };
      this.sources.set(ctx.sourceId, update);
    }
    return update;
  }

  /** True when there is nothing to write. */
  get empty(): boolean {
    return this.records.length === 0 && this.sources.size === 0 && this.tombstones.size === 0 &&
      this.drop.length === 0;
  }

  /** True once the batch holds about as much as one transaction should. */
  full(limits: Limits): boolean {
    return this.text >= limits.textBudget || this.raw >= limits.rawBudget ||
      this.records.length >= limits.recordBudget;
  }

  reset(): void {
    this.records = [];
    this.text = 0;
    this.raw = 0;
    this.keyed = new Map();
    this.supersede = new Map();
    this.sources = new Map();
    this.tombstones = new Set();
    this.drop = [];
  }
}

/** Turns batches into payloads: conversation rows with titles redacted and projects resolved. */
export class BatchPlanner {
  readonly #redact: Redactor;
  readonly #projectOf: (cwd: string) => Project;
  readonly #projects = new Map<string, Project>();

  /** How the batches planned write their conversations (`ConversationMode`). */
  readonly mode: ConversationMode;

  constructor(
    redact: Redactor,
    projectOf: (cwd: string) => Project,
    mode: ConversationMode = "add",
  ) {
    this.#redact = redact;
    this.#projectOf = projectOf;
    this.mode = mode;
  }

  /**
   * `batch` as the writer takes it, and what the pass keeps of it until it is committed;
   * `progress` and `now` are stored with it.
   */
  plan(batch: Batch, progress: unknown, now: number): { payload: BatchPayload; job: Job } {
    const deltas = this.conversations(batch.records);
    const { records, raw, position, drift } = recordRows(batch.records);
    const keys: BatchPayload["keys"] = [];
    for (const keyed of batch.keyed.values()) {
      const head = position.get(keyed.records[0]!);
      if (head !== undefined) {
        keys.push({ sourceId: keyed.ctx.sourceId, key: keyed.key, record: head });
      }
    }
    const sources = [...batch.sources.values()];
    return {
      payload: {
        records,
        raw,
        conversations: conversationWrites(deltas),
        supersede: [...batch.supersede.values()].map(({ ctx, key }) => ({
          sourceId: ctx.sourceId,
          key,
        })),
        keys,
        mode: this.mode,
        tombstones: [...batch.tombstones],
        drop: batch.drop,
        sources: sources.map((u) => ({
          sourceId: u.ctx.sourceId,
          cursor: u.cursor,
          state: u.cursor === null ? null : savedState(u.ctx),
          cursorKey: u.cursorKey ?? null,
          seen: u.seen ?? null,
          fingerprint: u.fingerprint ?? null,
          // Once read to the end: the hash its next capture compares the file's head with.
          headHash: u.seen && u.cursor !== null ? headHash(u.ctx, u.cursor) : null,
        })),
        progress,
        now,
      },
      job: {
        drift,
        raw: batch.raw,
        finished: sources.filter((u) => u.seen).map((u) => u.ctx),
        keyed: batch.keyed,
      },
    };
  }

  /**
   * What `records` tell their conversations, by conversation and source (in the order first
   * met, so a conversation's writes add up as its records came), each with its project resolved.
   */
  conversations(records: PendingRecord[]): Map<string, ConversationDelta> {
    const deltas = new Map<string, ConversationDelta>();
    for (const r of records) {
      const d = r.derived;
      if (!d.conversation) continue;
      const at = `${r.ctx.sourceId} ${d.conversation.key}`;
      let delta = deltas.get(at);
      if (!delta) {
        delta = {
          key: d.conversation.key,
          info: { ...d.conversation },
          agent: r.ctx.ref.agent,
          sourceId: r.ctx.sourceId,
          firstTs: null,
          lastTs: null,
          messages: 0,
          records: 0,
          bytes: 0,
          title: null,
          version: null,
        };
        deltas.set(at, delta);
      } else {
        mergeInfo(delta.info, d.conversation);
      }
      delta.records++;
      delta.bytes += r.raw.length;
      if (r.seq > 0) continue;
      if (d.ts !== null) {
        delta.firstTs = delta.firstTs === null ? d.ts : Math.min(delta.firstTs, d.ts);
        delta.lastTs = delta.lastTs === null ? d.ts : Math.max(delta.lastTs, d.ts);
      }
      if (d.newMessage) delta.messages++;
      if (d.version) delta.version = d.version;
      if (d.title && d.title.text) {
        const current = delta.title;
        if (
          !current || d.title.rank > current.rank ||
          (d.title.rank >= 2 && d.title.rank === current.rank)
        ) {
          // Redacted before it is cut: a cut through a secret would leave a part no shape matches.
          delta.title = { text: cutTitle(this.#redact(d.title.text)), rank: d.title.rank };
        }
      }
    }
    for (const delta of deltas.values()) this.#resolveProject(delta.info);
    return deltas;
  }

  #resolveProject(info: ConversationInfo): void {
    if (!info.cwd) return;
    let project = this.#projects.get(info.cwd);
    if (!project) {
      project = this.#projectOf(info.cwd);
      this.#projects.set(info.cwd, project);
    }
    (info as ConversationInfo & { project?: Project }).project = project;
  }
}

/** The conversation rows a batch's deltas upsert. */
export function conversationWrites(deltas: Map<string, ConversationDelta>): ConversationWrite[] {
  return [...deltas.values()].map((delta) => {
    const info = delta.info as ConversationInfo & { project?: Project };
    return {
      key: delta.key,
      agent: delta.agent,
      nativeId: info.nativeId,
      sourceId: delta.sourceId,
      projectRoot: info.project?.root ?? null,
      projectKey: info.project?.key ?? null,
      cwd: info.cwd ?? null,
      branch: info.branch ?? null,
      title: delta.title?.text ?? null,
      titleRank: delta.title?.rank ?? 0,
      firstTs: delta.firstTs,
      lastTs: delta.lastTs,
      messages: delta.messages,
      records: delta.records,
      bytes: delta.bytes,
      parentKey: info.parentKey ?? null,
      subagent: info.subagent ?? false,
      agentType: info.agentType ?? null,
      archived: info.archived ?? null,
      version: delta.version,
    };
  });
}

/** The drift count a drift record adds to (by source generation, agent version and kind). */
export function driftRow(ctx: SourceCtx, d: Derived): DriftRow {
  return {
    sourceId: ctx.sourceId,
    generation: ctx.generation,
    agent: ctx.ref.agent,
    version: d.version ?? "unknown",
    category: d.drift!.category,
    detail: d.drift!.detail,
  };
}

/** A record key scoped to its source. */
export function keyOf(ctx: SourceCtx, key: string): string {
  return `${ctx.sourceId} ${key}`;
}

const EMPTY = new Uint8Array(0);

/**
 * A batch's records as the writer takes them, their raw bytes (encoded where it pays) in one
 * buffer, where each record sits among them, and the records whose drift is counted.
 */
function recordRows(batch: readonly PendingRecord[]): {
  records: BatchRecord[];
  raw: Uint8Array;
  position: Map<PendingRecord, number>;
  drift: PendingRecord[];
} {
  const records: BatchRecord[] = [];
  const stored: Uint8Array[] = [];
  const position = new Map<PendingRecord, number>();
  const drift: PendingRecord[] = [];
  let rawLength = 0;
  for (const r of batch) {
    const d = r.derived;
    // A record derived again (rebuild) keeps its stored bytes: only derived columns change.
    const { stored: bytes, flag } = r.existingId === undefined
      ? encodeRaw(r.raw)
      : { stored: EMPTY, flag: 0 };
    const counted = d.drift && r.seq === 0 ? d.drift : null;
    if (counted) drift.push(r);
    position.set(r, records.length);
    records.push({
      existingId: r.existingId ?? null,
      sourceId: r.ctx.sourceId,
      generation: r.ctx.generation,
      offset: r.offset,
      seq: r.seq,
      rawAt: rawLength,
      rawLength: bytes.length,
      length: flag ? r.raw.length : null,
      conversationKey: d.conversation?.key ?? null,
      ts: d.ts,
      kind: d.kind,
      role: d.role,
      messageId: d.messageId,
      partId: d.partId,
      flags: r.flags | (r.text ? FLAG_INDEXED : 0) | flag,
      completes: r.seq === 0 && d.completes === true && !d.drift,
      // Made here rather than by the writer, whose thread is capture's busier one.
      text: r.text ? indexText(r.text) : "",
      drift: counted ? driftRow(r.ctx, d) : null,
      usage: r.seq === 0 && d.usage && !d.copied && !d.drift
        ? { ...d.usage, agent: r.ctx.ref.agent }
        : null,
    });
    stored.push(bytes);
    rawLength += bytes.length;
  }
  // One fresh buffer (never a view of a reader's), so it can move to a worker.
  const raw = new Uint8Array(rawLength);
  let at = 0;
  for (const bytes of stored) {
    raw.set(bytes, at);
    at += bytes.length;
  }
  return { records, raw, position, drift };
}

function mergeInfo(into: ConversationInfo, from: ConversationInfo): void {
  into.cwd ??= from.cwd ?? null;
  if (from.branch) into.branch = from.branch;
  into.parentKey ??= from.parentKey ?? null;
  if (from.subagent) into.subagent = true;
  if (from.agentType) into.agentType = from.agentType;
  if (from.archived !== undefined) into.archived = from.archived;
}
