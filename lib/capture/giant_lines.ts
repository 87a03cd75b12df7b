// Lines too long to hold in memory (over `Limits.maxLine`): a pass streams one into chunk rows
// as it is read, in a transaction of its own, its text taken out by the JSON scanner and indexed
// whole under its first row (a longer text than `Limits.textPiece` in pieces of that size, each
// redacted with its neighbours in view); once the line ends, the adapter classifies it from
// the scalars the scanner kept. Rebuild re-derives such a stored line the same way.

import type { Derived, LineAdapter, Recall } from "../sources/adapter.ts";
import type { Redactor } from "../gate/secrets.ts";
import type { Operation } from "../stage_markers.ts";
import { type HistoryStore, translateError } from "../store/db.ts";
import { concat } from "./_bytes.ts";
import {
  type BatchPlanner,
  conversationWrites,
  driftRow,
  type PendingRecord,
} from "./batch_plan.ts";
import { countDrift } from "./batch_transaction.ts";
import { writeConversations } from "./conversation_rows.ts";
import {
  FLAG_DRIFT,
  FLAG_INDEXED,
  FLAG_JOINED,
  FLAG_STREAMED,
  FLAG_ZSTD,
} from "../store/schema.ts";
import { indexText } from "../store/cjk.ts";
import { driftRecord, inheritTime, type Tombstones } from "./derive.ts";
import { addTombstone, coveredInStore } from "../store/tombstones.ts";
import { JsonTextScanner } from "./json_stream.ts";
import type { LineReader } from "./lines.ts";
import { LinePieces, type RedactedPiece } from "./pieces.ts";
import type { ProgressTracker } from "./progress.ts";
import { savedState, type SourceCtx } from "./source.ts";
import type { Tally } from "./summary.ts";

/** A long stored line's chunks, re-derived as they are read (rebuild). */
export interface RederiveStream {
  write(id: number, bytes: Uint8Array): void;
  /** Classifies the line once all its chunk rows (`ids`) were written. */
  end(ids: readonly number[]): void;
}

/** What giant lines are written with and reported to. */
export interface GiantLineParts {
  store: HistoryStore;
  op: Operation;
  redact: Redactor;
  chunkSize: number;
  /** A streamed line's text is indexed in pieces of about this many characters (`LinePieces`). */
  pieceSize: number;
  now: () => number;
  planner: BatchPlanner;
  tally: Tally;
  progress: ProgressTracker;
  tombstones: Tombstones;
  recall: Recall;
}

/** Streams lines too long to hold in memory, and re-derives them. */
export class GiantLines {
  readonly #parts: GiantLineParts;

  constructor(parts: GiantLineParts) {
    this.#parts = parts;
  }

  /**
   * Streams the line that starts at `offset` with `head` (the whole line when `headComplete`)
   * from `reader` into chunk rows, and moves the source's cursor past it, in one transaction.
   * Returns false, writing nothing, when the line is not complete yet (still being written).
   */
  async stream(
    ctx: SourceCtx,
    reader: LineReader,
    offset: number,
    head: Uint8Array,
    headComplete: boolean,
  ): Promise<boolean> {
    const { store, op, progress } = this.#parts;
    const scanner = this.#scanner(ctx);
    const pieces = this.#pieces();
    const indexed = this.#indexer();
    const rows = new ChunkRows(store, ctx, offset, this.#parts.chunkSize, (id, bytes) => {
      scanner.write(bytes);
      indexed(pieces.add(id, scanner.takeText()));
    });
    const step = op.begin("capture.long-line");
    store.db.exec("BEGIN IMMEDIATE");
    try {
      rows.push(head);
      rows.flush(false);
      let complete = headComplete;
      while (!complete) {
        const piece = await reader.nextPiece();
        if (!piece) break;
        rows.push(piece.bytes);
        if (piece.done) {
          complete = true;
          break;
        }
        rows.flush(false);
        if (rows.seq % 64 === 0) progress.reportAhead(rows.total);
      }
      if (!complete) {
        // The line is still being written: capture it once it is complete, not before.
        store.db.exec("ROLLBACK");
        step.finish();
        return false;
      }
      rows.flush(true);
      indexed(pieces.end());
      scanner.end();
      this.#finish(ctx, scanner, offset, rows.at, rows.ids);
      this.#commit(ctx, rows);
      step.finish();
      return true;
    } catch (err) {
      if (store.db.isTransaction) store.db.exec("ROLLBACK");
      const translated = translateError(err);
      step.fail(translated);
      throw translated;
    }
  }

  /** Moves the source's cursor past a streamed line, commits, and counts what it stored. */
  #commit(ctx: SourceCtx, rows: ChunkRows): void {
    const { store, now, tally, progress } = this.#parts;
    store.stmt("UPDATE sources SET cursor = ?, state = ?, last_read = ? WHERE id = ?").run(
      rows.at,
      savedState(ctx),
      now(),
      ctx.sourceId,
    );
    if (progress.due()) store.setMeta("progress", progress.current);
    store.db.exec("COMMIT");
    tally.summary.records += rows.seq;
    tally.summary.bytes += rows.total;
    progress.current.bytesDone += rows.total;
    progress.bytesRead += rows.total;
  }

  /**
   * Re-derives a stored line too long to hold in memory, chunk by chunk as its stored rows are
   * read: each chunk's text is indexed as capture indexed it, and `end` classifies the line.
   */
  rederive(ctx: SourceCtx, offset: number): RederiveStream {
    const { store } = this.#parts;
    const scanner = this.#scanner(ctx);
    const flag = store.stmt(
      `UPDATE records SET flags = (flags & ${FLAG_ZSTD}) | ${FLAG_STREAMED} WHERE id = ?`,
    );
    const pieces = this.#pieces();
    const indexed = this.#indexer();
    let end = offset;
    return {
      write: (id, bytes) => {
        scanner.write(bytes);
        const text = scanner.takeText();
        flag.run(id);
        indexed(pieces.add(id, text));
        end += bytes.length;
      },
      end: (ids) => {
        indexed(pieces.end());
        scanner.end();
        this.#finish(ctx, scanner, offset, end, ids);
      },
    };
  }

  /** The scanner of a streamed line of `ctx`'s source: its adapter says where text is. */
  #scanner(ctx: SourceCtx): JsonTextScanner {
    const adapter = ctx.adapter as LineAdapter<unknown>;
    return new JsonTextScanner(adapter.skipKeys, adapter.textPath);
  }

  /** The pieces a streamed line's text is indexed in. */
  #pieces(): LinePieces {
    return new LinePieces(this.#parts.redact, this.#parts.pieceSize);
  }

  /** Indexes redacted pieces, each under the row it starts at, and flags that row indexed. */
  #indexer(): (ready: RedactedPiece[]) => void {
    const { store } = this.#parts;
    const index = store.stmt("INSERT INTO fts (rowid, text) VALUES (?, ?)");
    const flag = store.stmt(`UPDATE records SET flags = flags | ${FLAG_INDEXED} WHERE id = ?`);
    return (ready) => {
      for (const { id, text } of ready) {
        if (!text) continue;
        index.run(id, indexText(text));
        flag.run(id);
      }
    };
  }

  /** Classifies a streamed line from its scalars and sets the derived columns of its rows. */
  #finish(
    ctx: SourceCtx,
    scanner: JsonTextScanner,
    offset: number,
    at: number,
    rowIds: readonly number[],
  ): void {
    const { store, planner, tally, tombstones } = this.#parts;
    const derived = this.#classify(ctx, scanner);
    const conversation = derived.conversation;
    // Read again inside this transaction too: `forget` runs without the capture lock.
    if (
      conversation && (tombstones.covers(conversation) || coveredInStore(store, conversation))
    ) {
      // Under a tombstone: it leaves the store, and a subagent met only now is tombstoned too.
      addTombstone(store, conversation.key, this.#parts.now());
      tombstones.add(conversation.key);
      const unindex = store.stmt("DELETE FROM fts WHERE rowid = ?");
      const drop = store.stmt("DELETE FROM records WHERE id = ?");
      for (const id of rowIds) {
        unindex.run(id);
        drop.run(id);
      }
      return;
    }
    const pendingRecord: PendingRecord = {
      ctx,
      offset,
      seq: 0,
      raw: new Uint8Array(0),
      derived,
      text: "",
      flags: 0,
    };
    const deltas = planner.conversations([pendingRecord]);
    for (const delta of deltas.values()) {
      delta.records = rowIds.length;
      delta.bytes = at - offset;
    }
    if (derived.copied) {
      // A copy of a record another conversation holds: its chunks leave the index again.
      const unindex = store.stmt("DELETE FROM fts WHERE rowid = ?");
      const unflag = store.stmt(`UPDATE records SET flags = flags & ~${FLAG_INDEXED} WHERE id = ?`);
      for (const id of rowIds) {
        unindex.run(id);
        unflag.run(id);
      }
    }
    const { ids, created } = writeConversations(
      store,
      conversationWrites(deltas),
      planner.mode,
    );
    tally.summary.conversations += created;
    const conversationId = conversation ? ids.get(conversation.key) ?? null : null;
    this.#setDerived(rowIds, conversationId, derived);
    if (derived.drift) {
      countDrift(store, driftRow(ctx, derived));
      tally.drift(ctx.ref.agent, derived);
    }
    if (!derived.drift && derived.conversation) ctx.recognised = true;
  }

  /** What the adapter derives of a streamed line from the scalars the scanner kept. */
  #classify(ctx: SourceCtx, scanner: JsonTextScanner): Derived {
    let derived: Derived;
    if (scanner.failed) derived = driftRecord("unparsable", "invalid JSON");
    else {
      try {
        derived = (ctx.adapter as LineAdapter<unknown>).parseStreamed(
          scanner.scalars,
          ctx.state,
          ctx.ref,
          this.#parts.recall,
        );
      } catch (err) {
        derived = driftRecord("unparsable", `adapter error: ${(err as Error).message}`);
      }
    }
    inheritTime(ctx, derived);
    return derived;
  }

  /** Sets the derived columns of a streamed line's rows. */
  #setDerived(rowIds: readonly number[], conversationId: number | null, derived: Derived): void {
    // Row by row: one UPDATE over the whole range would hold every row of the line in memory.
    const update = this.#parts.store.stmt(
      `UPDATE records SET conversation_id = ?, ts = ?, kind = ?, role = ?, message_id = ?,
         part_id = ?, flags = flags | ? WHERE id = ?`,
    );
    for (const id of rowIds) {
      update.run(
        conversationId,
        derived.ts,
        derived.kind,
        derived.role,
        derived.messageId,
        derived.partId,
        (derived.drift ? FLAG_DRIFT : 0) | (derived.joined ? FLAG_JOINED : 0),
        id,
      );
    }
  }
}

/**
 * The chunk rows a streamed line is written in, from `offset`: bytes pushed are cut into rows of
 * `chunkSize` (the last one shorter, once flushed whole), each handed to `wrote` with its row id.
 */
class ChunkRows {
  /** Where the next row starts, the bytes written, and the rows written (their ids too). */
  at: number;
  total = 0;
  seq = 0;
  readonly ids: number[] = [];
  #pending: Uint8Array[] = [];
  #pendingLength = 0;
  readonly #ctx: SourceCtx;
  readonly #chunkSize: number;
  readonly #wrote: (id: number, bytes: Uint8Array) => void;
  readonly #insert: ReturnType<HistoryStore["stmt"]>;

  constructor(
    store: HistoryStore,
    ctx: SourceCtx,
    offset: number,
    chunkSize: number,
    wrote: (id: number, bytes: Uint8Array) => void,
  ) {
    this.#ctx = ctx;
    this.at = offset;
    this.#chunkSize = chunkSize;
    this.#wrote = wrote;
    this.#insert = store.stmt(
      `INSERT INTO records (source_id, generation, offset, seq, raw, kind, flags)
       VALUES (?, ?, ?, ?, ?, 'meta', ${FLAG_STREAMED})`,
    );
  }

  push(bytes: Uint8Array): void {
    this.#pending.push(bytes);
    this.#pendingLength += bytes.length;
  }

  /** Writes every whole chunk pending, and with `all` the rest too. */
  flush(all: boolean): void {
    const size = this.#chunkSize;
    let joined = concat(this.#pending, this.#pendingLength);
    while (joined.length >= size || (all && joined.length > 0)) {
      this.#write(joined.subarray(0, size));
      joined = joined.subarray(Math.min(size, joined.length));
    }
    this.#pending = joined.length ? [joined.slice()] : [];
    this.#pendingLength = joined.length;
  }

  #write(bytes: Uint8Array): void {
    const ctx = this.#ctx;
    const id = Number(
      this.#insert.run(ctx.sourceId, ctx.generation, this.at, this.seq, bytes).lastInsertRowid,
    );
    this.ids.push(id);
    this.#wrote(id, bytes);
    this.at += bytes.length;
    this.total += bytes.length;
    this.seq++;
  }
}
