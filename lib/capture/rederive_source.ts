// One stored source derived again from its raw records, generation by generation, as capture
// derived it: `reindex --rebuild` does so for every source (`rebuild.ts`), and capture for the
// sources whose derivation changed (`rederive.ts`). The records keep their rows and bytes; the
// derived columns, flags, index entries and what they tell conversations are written again.

import { type Adapter, pathOfLocator, type SourceRef } from "../sources/adapter.ts";
import { decodedRow } from "../store/raw.ts";
import { concat } from "./_bytes.ts";
import { yieldToEventLoop } from "../event_loop.ts";
import { Batch } from "./batch_plan.ts";
import type { Existing } from "./derive.ts";
import type { RederiveStream } from "./giant_lines.ts";
import type { Parts } from "./parts.ts";
import { savedState, type SourceCtx, type SourceRow } from "./source.ts";

/** A stored line being re-derived: its chunk rows so far, held or streamed. */
interface StoredLine extends Existing {
  offset: number;
  length: number;
  /** Its chunks, until it is known to be too long to hold (then `stream` has them). */
  parts: Uint8Array[];
  stream: RederiveStream | null;
}

/**
 * Derives every stored generation of `source` again with `adapter`, writing through the pass's
 * pipeline (inline: the caller holds the transaction), and saves the adapter's state of its
 * current generation with the source. `checkStop` is called between pages of stored rows and
 * throws to stop. Returns the number of rows derived again. With `shared`, the rows go into that
 * batch, written as it fills, and the caller writes what is left of it (a rebuild: one batch per
 * source wrote 105,609 small ones at ten gigabytes); else each generation's are written at its end.
 */
export async function rederiveSource(
  parts: Parts,
  adapter: Adapter,
  source: SourceRow,
  checkStop: () => void,
  shared?: Batch,
): Promise<number> {
  const { store } = parts;
  const generations = store.stmt(
    "SELECT DISTINCT generation FROM records WHERE source_id = ? ORDER BY generation",
  ).all(source.id) as { generation: number }[];
  let count = 0;
  for (const { generation } of generations) {
    const ref: SourceRef = {
      agent: adapter.agent,
      locator: source.locator,
      path: pathOfLocator(source.locator),
      format: source.format as SourceRef["format"],
    };
    const ctx: SourceCtx = {
      adapter,
      ref,
      sourceId: source.id,
      generation,
      headHash: source.head_hash,
      state: adapter.initialState(ref),
      lastTs: null,
      recognised: false,
    };
    count += await rederiveGeneration(parts, ctx, checkStop, shared);
    if (generation === source.generation) {
      store.stmt("UPDATE sources SET state = ? WHERE id = ?").run(savedState(ctx), source.id);
    }
  }
  return count;
}

/**
 * Re-derives one source generation from its stored chunks, line by line. A line that grows
 * past `Limits.maxLine` is streamed from then on, as capture streamed it: its chunks go through
 * the JSON scanner as they are read, so no more of one line is held than that and a page.
 */
async function rederiveGeneration(
  parts: Parts,
  ctx: SourceCtx,
  checkStop: () => void,
  shared: Batch | undefined,
): Promise<number> {
  const { store, limits, deriver, pipeline, giantLines } = parts;
  const page = store.stmt(
    `SELECT id, offset, seq, raw, flags FROM records WHERE source_id = ? AND generation = ? AND offset > ?
     ORDER BY offset LIMIT ?`,
  );
  const batch = shared ?? new Batch();
  let line: StoredLine | null = null;
  let total = 0;
  let last = -1;
  const finish = async () => {
    if (!line) return;
    if (line.stream) line.stream.end(line.ids);
    else if (ctx.adapter.mode === "rows") {
      deriver.addRow(ctx, batch, line.offset, concat(line.parts, line.length), line);
    } else {
      deriver.addLine(ctx, batch, line.offset, concat(line.parts, line.length), line);
    }
    total += line.ids.length;
    line = null;
    if (batch.full(limits)) {
      pipeline.commit(batch);
      await yieldToEventLoop();
    }
  };
  while (true) {
    // A streamed line's chunks a few at a time: chunks kept past a young-generation GC are
    // promoted, and their buffers then wait for a full GC (tens of MiB at the peak).
    const rows = line?.stream ? 16 : 128;
    const stored = page.all(ctx.sourceId, ctx.generation, last, rows) as {
      id: number;
      offset: number;
      seq: number;
      raw: Uint8Array;
      flags: number;
    }[];
    if (!stored.length) break;
    checkStop();
    for (const packed of stored) {
      // Decoded one at a time: a page of a giant line is megabytes once decompressed.
      const row = decodedRow(packed);
      // A new line starts at seq 0, or after a gap left by forgotten records.
      const contiguous = line !== null && line.offset + line.length === row.offset;
      if (row.seq === 0 || !contiguous) await finish();
      line ??= { offset: row.offset, length: 0, ids: [], sizes: [], parts: [], stream: null };
      line.ids.push(row.id);
      line.sizes.push(row.raw.length);
      line.length += row.raw.length;
      last = row.offset;
      if (line.stream) line.stream.write(row.id, row.raw);
      else {
        line.parts.push(row.raw);
        if (ctx.adapter.mode === "lines" && line.length > limits.maxLine) {
          // Too long to derive in memory: the lines before it are written first, in order.
          pipeline.commit(batch);
          const stream = giantLines.rederive(ctx, line.offset);
          for (let i = 0; i < line.parts.length; i++) stream.write(line.ids[i]!, line.parts[i]!);
          line.parts = [];
          line.stream = stream;
        }
      }
    }
    await yieldToEventLoop();
  }
  await finish();
  if (!shared) pipeline.commit(batch);
  return total;
}
