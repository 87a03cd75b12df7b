// From a raw record to the rows that store it: the adapter derives it (kind, role, conversation,
// text), the gate redacts its text, and it joins the batch as chunk rows, its whole text indexed
// with the first. A record of a conversation a tombstone covers (`lib/store/tombstones.ts`) is
// dropped here.

import {
  type Derived,
  type LineAdapter,
  type LineInput,
  makeDerived,
  type Recall,
  type RowAdapter,
} from "../sources/adapter.ts";
import type { Redactor } from "../gate/secrets.ts";
import type { HistoryStore } from "../store/db.ts";
import { type Batch, keyOf, type PendingRecord } from "./batch_plan.ts";
import { FLAG_DRIFT, FLAG_INJECTED, FLAG_JOINED, FLAG_SUPERSEDED } from "../store/schema.ts";
import { isInjected } from "../sources/injected.ts";
import type { SourceCtx } from "./source.ts";
import { type Covered, coveringKeys } from "../store/tombstones.ts";

/** Existing chunk rows of a stored record being derived again (rebuild). */
export interface Existing {
  ids: number[];
  sizes: number[];
}

/** Finds the raw bytes of the newest record under a key of `ctx`'s source (row adapters). */
export type KeyLookup = (ctx: SourceCtx, batch: Batch, key: string) => Uint8Array | null;

/** The conversations `forget` tombstoned: their records are not kept. Read on first use. */
export class Tombstones {
  readonly #store: HistoryStore;
  #keys: Set<string> | null = null;

  constructor(store: HistoryStore) {
    this.#store = store;
  }

  /**
   * True when a tombstone covers `conversation`: its own, or (a subagent) its parent's or its
   * session's (`lib/store/tombstones.ts`).
   */
  covers(conversation: Covered | null | undefined): boolean {
    if (!conversation) return false;
    this.#keys ??= new Set(
      (this.#store.stmt("SELECT key FROM tombstones").all() as { key: string }[]).map((r) => r.key),
    );
    const keys = this.#keys;
    return keys.size > 0 && coveringKeys(conversation).some((key) => keys.has(key));
  }

  /** True when the conversation `key` has a tombstone of its own. */
  has(key: string): boolean {
    return this.covers({ key });
  }

  /** A conversation tombstoned since they were read (a batch found it and dropped its records). */
  add(key: string): void {
    this.#keys?.add(key);
  }
}

/** Derives records and adds them to a batch. */
export class Deriver {
  readonly #redact: Redactor;
  readonly #chunkSize: number;
  readonly #tombstones: Tombstones;
  readonly #lookup: KeyLookup;
  readonly #recall: Recall;

  constructor(
    redact: Redactor,
    chunkSize: number,
    tombstones: Tombstones,
    lookup: KeyLookup,
    recall: Recall,
  ) {
    this.#redact = redact;
    this.#chunkSize = chunkSize;
    this.#tombstones = tombstones;
    this.#lookup = lookup;
    this.#recall = recall;
  }

  /** Derives one complete line of a line source and adds it to `batch`. */
  addLine(
    ctx: SourceCtx,
    batch: Batch,
    offset: number,
    bytes: Uint8Array,
    existing?: Existing,
  ): void {
    const adapter = ctx.adapter as LineAdapter<unknown>;
    let derived: Derived;
    try {
      derived = adapter.parseLine(decodeLine(bytes), ctx.state, ctx.ref, this.#recall);
    } catch (err) {
      // An adapter bug on one odd record must not stop capture: keep the bytes, count it.
      derived = driftRecord("unparsable", `adapter error: ${(err as Error).message}`);
    }
    this.#add(ctx, batch, offset, bytes, derived, existing);
  }

  /** Derives one row of a row source and adds it to `batch`. */
  addRow(
    ctx: SourceCtx,
    batch: Batch,
    offset: number,
    raw: Uint8Array,
    existing?: Existing,
  ): void {
    const adapter = ctx.adapter as RowAdapter<unknown>;
    let derived: Derived;
    try {
      const lookup = (key: string) => this.#lookup(ctx, batch, key);
      derived = adapter.parseRow(raw, ctx.state, ctx.ref, lookup, this.#recall);
    } catch (err) {
      derived = driftRecord("unparsable", `adapter error: ${(err as Error).message}`);
    }
    this.#add(ctx, batch, offset, raw, derived, existing);
  }

  /**
   * Adds one derived record to the batch as chunk rows: its text is indexed whole with the first
   * row (a text cut at a chunk's edge would be found, and shown, in pieces).
   */
  #add(
    ctx: SourceCtx,
    batch: Batch,
    offset: number,
    bytes: Uint8Array,
    derived: Derived,
    existing?: Existing,
  ): void {
    inheritTime(ctx, derived);
    const conversation = derived.conversation;
    if (this.#tombstones.covers(conversation)) {
      // Under a tombstone: not kept, and (a subagent met only now) tombstoned itself, so what
      // it spawned is covered too. A stored record derived again (rebuild) leaves the store.
      if (!this.#tombstones.has(conversation!.key)) {
        batch.tombstones.add(conversation!.key);
        this.#tombstones.add(conversation!.key);
      }
      if (existing) batch.drop.push(...existing.ids);
      batch.raw += bytes.length;
      return;
    }
    const redacted = derived.text && !derived.drift && !derived.copied
      ? this.#redact(derived.text)
      : "";
    // Only words are indexed: a row flagged indexed has some (`TextDeriver.hasText`).
    const text = redacted.trim() ? redacted : "";
    // A stored record keeps the chunking it was captured with.
    const sizes = existing?.sizes ?? chunkSizes(bytes.length, this.#chunkSize);
    const joined = derived.joined || derived.completes;
    // Told from the whole text, so every row of a long line says the same.
    const injected = text !== "" &&
      isInjected(ctx.ref.agent, { kind: derived.kind, role: derived.role, text });
    const flags = (derived.drift ? FLAG_DRIFT : 0) | (joined ? FLAG_JOINED : 0) |
      (injected ? FLAG_INJECTED : 0);
    const added: PendingRecord[] = [];
    let at = 0;
    sizes.forEach((size, seq) => {
      const record: PendingRecord = {
        ctx,
        ...(existing ? { existingId: existing.ids[seq]! } : {}),
        offset: offset + at,
        seq,
        raw: sizes.length === 1 ? bytes : bytes.subarray(at, at + size),
        derived,
        text: seq === 0 ? text : "",
        flags,
      };
      added.push(record);
      batch.records.push(record);
      at += size;
    });
    const key = derived.key;
    if (key && !derived.drift) {
      const composite = keyOf(ctx, key);
      const previous = batch.keyed.get(composite);
      if (derived.supersedes) {
        if (previous) {
          for (const r of previous.records) {
            r.text = "";
            r.flags |= FLAG_SUPERSEDED;
          }
        } else batch.supersede.set(composite, { ctx, key });
      }
      batch.keyed.set(composite, { ctx, key, raw: bytes, records: added });
    }
    batch.text += text.length;
    batch.raw += bytes.length;
    if (!derived.drift && derived.conversation) ctx.recognised = true;
  }
}

/** A record without a time takes the source's last one; one with a time becomes the last. */
export function inheritTime(ctx: SourceCtx, derived: Derived): void {
  if (derived.ts === null) derived.ts = ctx.lastTs;
  else ctx.lastTs = derived.ts;
}

const utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** Decodes and parses one line for an adapter (invalid UTF-8 becomes U+FFFD). */
export function decodeLine(bytes: Uint8Array): LineInput {
  const text = utf8.decode(bytes);
  if (text.trim() === "") return { bytes, value: undefined, blank: true };
  try {
    return { bytes, value: JSON.parse(text), blank: false };
  } catch (err) {
    return { bytes, value: undefined, parseError: (err as Error).message, blank: false };
  }
}

/** A record kept raw as `meta` and counted as drift. */
export function driftRecord(
  category: "unknown_type" | "unparsable" | "missing_fields",
  detail: string,
  base: Partial<Derived> = {},
): Derived {
  return makeDerived("meta", null, null, { ...base, drift: { category, detail } });
}

/** The sizes of the chunk rows a record of `length` bytes is stored in. */
function chunkSizes(length: number, chunk: number): number[] {
  const sizes: number[] = [];
  for (let at = 0; at < length || sizes.length === 0; at += chunk) {
    sizes.push(Math.min(chunk, length - at));
  }
  return sizes;
}
