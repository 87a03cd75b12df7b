// `reindex --rebuild`: every derived row (index, conversations, drift, derived columns) dropped
// and derived again from the raw records, in one transaction, so a crash leaves the old derived
// data in place. A store whose derived data is damaged is rebuilt through a copy
// (`rebuild_by_copy.ts`); damaged raw data cannot be rebuilt, and the error says what to do.

import { adapterOf, pathOfLocator, type SourceRef } from "../sources/adapter.ts";
import { StoreDamagedError, translateError } from "../store/db.ts";
import { checkStore, checkStoreInWorker } from "../store/check.ts";
import { decodedRow } from "../store/raw.ts";
import { FLAG_ZSTD } from "../store/schema.ts";
import { INDEX_UPGRADE_KEY } from "../store/cjk.ts";
import { refreshTotals } from "../store/status.ts";
import { concat } from "./_bytes.ts";
import { yieldToEventLoop } from "./_yield.ts";
import { Batch } from "./batch_plan.ts";
import type { Existing } from "./derive.ts";
import type { PassOptions } from "./engine.ts";
import type { RederiveStream } from "./giant_lines.ts";
import { type Parts, partsOf } from "./parts.ts";
import { rebuildByCopy } from "./rebuild_by_copy.ts";
import { savedState, SOURCE_COLUMNS, type SourceCtx, sourceRow } from "./source.ts";

/**
 * Derives everything again from the raw records: in place when the store is sound, through a
 * new file when derived data is damaged (SQLite cannot clear a damaged b-tree). Damaged raw
 * data is an error that says what to do: a rebuild cannot bring lost records back.
 */
export async function rebuild(options: PassOptions, root: string): Promise<number> {
  // In a worker: it reads every page, and a dashboard that runs the rebuild keeps answering.
  // Where a worker cannot open the store (read-only), this connection checks it.
  const check = await checkStoreInWorker(options.store.path, root)
    .catch(() => checkStore(options.store));
  if (check.ok) return await rebuildDerived(options);
  if (check.damaged.some((d) => d.kind === "raw")) {
    throw new StoreDamagedError(
      `The history store is damaged in ${
        check.damaged.map((d) => d.label).join(", ")
      }: ${check.recovery}`,
    );
  }
  return await rebuildByCopy(
    options.store,
    root,
    (fresh) => rebuildDerived({ ...options, store: fresh }),
  );
}

/**
 * Thrown when a rebuild stops on the pass's signal (Ctrl-C): its transaction is rolled back, so
 * the derived data is as it was before, and running it again does the whole rebuild.
 */
export class RebuildStoppedError extends Error {
  override name = "RebuildStoppedError";
  constructor() {
    super("The rebuild was stopped; the index and conversations are as they were");
  }
}

/**
 * Drops all derived data (text index, conversations, drift) and derives it again from the
 * retained raw records, in one transaction. Nothing raw is dropped. Returns the record count.
 * Reports its progress (sources and raw bytes derived again) as capture does.
 */
export async function rebuildDerived(options: PassOptions): Promise<number> {
  const parts = partsOf(options);
  return await parts.op.stage("capture.rebuild", () => new Rebuild(options, parts).run());
}

/** A stored line being re-derived: its chunk rows so far, held or streamed. */
interface StoredLine extends Existing {
  offset: number;
  length: number;
  /** Its chunks, until it is known to be too long to hold (then `stream` has them). */
  parts: Uint8Array[];
  stream: RederiveStream | null;
}

/** One rebuild: every source generation's stored records, derived again in order. */
class Rebuild {
  readonly #options: PassOptions;
  readonly #parts: Parts;

  constructor(options: PassOptions, parts: Parts) {
    this.#options = options;
    this.#parts = parts;
  }

  async run(): Promise<number> {
    const { store, now } = this.#parts;
    let count = 0;
    store.db.exec("BEGIN IMMEDIATE");
    try {
      store.db.exec(`
        DELETE FROM conversations;
        DELETE FROM drift;
        DELETE FROM record_keys;
        DELETE FROM record_changes;
        INSERT INTO fts (fts) VALUES ('delete-all');
        -- OR FAIL: no statement journal (with temp_store = MEMORY, a copy in memory of every
        -- page it changes, the whole table); this transaction is rolled back whole on failure.
        UPDATE OR FAIL records SET conversation_id = NULL, ts = NULL, kind = 'meta', role = NULL,
          message_id = NULL, part_id = NULL, flags = flags & ${FLAG_ZSTD};`);
      const sources = store.stmt(`SELECT ${SOURCE_COLUMNS} FROM sources ORDER BY id`).all()
        .map(sourceRow);
      const progress = this.#parts.progress;
      progress.current.phase = "rebuilding";
      progress.current.sourcesTotal = sources.filter((s) =>
        adapterOf(this.#options.adapters, s.agent, s.locator)
      ).length;
      progress.current.bytesTotal = Number(
        (store.stmt("SELECT coalesce(sum(coalesce(length, length(raw))), 0) AS n FROM records")
          .get() as { n: number }).n,
      );
      progress.report(false);
      for (const source of sources) {
        const adapter = adapterOf(this.#options.adapters, source.agent, source.locator);
        if (!adapter) continue;
        const generations = store.stmt(
          "SELECT DISTINCT generation FROM records WHERE source_id = ? ORDER BY generation",
        ).all(source.id) as { generation: number }[];
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
          count += await this.#rederive(ctx);
          if (generation === source.generation) {
            store.stmt("UPDATE sources SET state = ? WHERE id = ?").run(savedState(ctx), source.id);
          }
        }
        progress.current.sourcesDone++;
        progress.report(false);
      }
      // Records a tombstone covers left the store (captured before tombstones covered children).
      refreshTotals(store, { recount: true });
      store.setMeta("last_rebuild", { at: now(), records: count });
      // Everything was indexed afresh, as the index is written today.
      store.deleteMeta(INDEX_UPGRADE_KEY);
      store.db.exec("DROP TABLE IF EXISTS fts_next");
      store.db.exec("COMMIT");
    } catch (err) {
      if (store.db.isTransaction) store.db.exec("ROLLBACK");
      throw translateError(err);
    }
    return count;
  }

  /**
   * Re-derives one source generation from its stored chunks, line by line. A line that grows
   * past `Limits.maxLine` is streamed from then on, as capture streamed it: its chunks go through
   * the JSON scanner as they are read, so rebuild holds no more of one line than that and a page.
   */
  async #rederive(ctx: SourceCtx): Promise<number> {
    const { store, limits, deriver, pipeline, giantLines } = this.#parts;
    const page = store.stmt(
      `SELECT id, offset, seq, raw, flags FROM records WHERE source_id = ? AND generation = ? AND offset > ?
       ORDER BY offset LIMIT ?`,
    );
    const batch = new Batch();
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
      if (this.#options.signal?.aborted) throw new RebuildStoppedError();
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
    pipeline.commit(batch);
    return total;
  }
}
