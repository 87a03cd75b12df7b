// `reindex --rebuild`: every derived row (index, conversations, drift, derived columns) dropped
// and derived again from the raw records, in one transaction, so a crash leaves the old derived
// data in place. A store whose derived data is damaged is rebuilt through a copy
// (`rebuild_by_copy.ts`); damaged raw data cannot be rebuilt, and the error says what to do.

import { SCRUB_KEY } from "../store/scrub.ts";
import { adapterOf } from "../sources/adapter.ts";
import { type HistoryStore, StoreDamagedError } from "../store/db.ts";
import { checkStore, checkStoreInWorker, type StoreCheck } from "../store/check.ts";
import { FLAG_ZSTD } from "../store/schema.ts";
import { INDEX_UPGRADE_KEY } from "../store/cjk.ts";
import { refreshTotals } from "../store/status.ts";
import { derivationOf, derivations, DERIVATIONS_KEY } from "./derivation.ts";
import type { PassOptions } from "./engine.ts";
import { type Parts, partsOf } from "./parts.ts";
import { rebuildByCopy } from "./rebuild_by_copy.ts";
import { rederiveSource } from "./rederive_source.ts";
import { Batch } from "./batch_plan.ts";
import { dropConversationIds, keepConversationIds } from "./conversation_rows.ts";
import { sourceById } from "./identity.ts";

/**
 * Derives everything again from the raw records: in place when the store is sound, through a
 * new file when derived data is damaged (SQLite cannot clear a damaged b-tree). Damaged raw
 * data is an error that says what to do: a rebuild cannot bring lost records back.
 */
export async function rebuild(options: PassOptions, root: string): Promise<number> {
  // The check reads every page (a minute and a half at ten gigabytes) in a worker, beside the
  // rebuild in place, which commits only once the check found the store sound; one found damaged
  // is rolled back and rebuilt as the check says. The worker reads the store as last committed,
  // never the rebuild's writes. Where it cannot run (a read-only store), this connection checks.
  const stopCheck = new AbortController();
  const checking = checkStoreInWorker(options.store.path, root, stopCheck.signal)
    .catch(() => null);
  let verdict: StoreCheck | null = null;
  const checked = async () => verdict ??= (await checking) ?? checkStore(options.store);
  try {
    return await rebuildDerived(options, async () => {
      if (!(await untilStopped(checked(), options.signal)).ok) throw new FoundDamaged();
    });
  } catch (err) {
    if (err instanceof RebuildStoppedError) {
      stopCheck.abort();
      throw err;
    }
    if (!(err instanceof FoundDamaged) && (await checked()).ok) throw err;
  }
  const check = await checked();
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

/** Ends a rebuild in place, rolled back, when the check beside it found the store damaged. */
class FoundDamaged extends Error {}

/** `work`'s result, or RebuildStoppedError once `signal` is aborted. */
function untilStopped<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(new RebuildStoppedError());
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(new RebuildStoppedError());
    signal.addEventListener("abort", stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
  });
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
 * Reports its progress (sources and raw bytes derived again) as capture does. `beforeCommit`
 * runs last inside the transaction, and throws to roll it back.
 */
export async function rebuildDerived(
  options: PassOptions,
  beforeCommit: () => Promise<void> = () => Promise.resolve(),
): Promise<number> {
  const parts = partsOf(options, "rebuild");
  return await parts.op.stage(
    "capture.rebuild",
    () => new Rebuild(options, parts).run(beforeCommit),
  );
}

/** One rebuild: every source generation's stored records, derived again in order. */
class Rebuild {
  readonly #options: PassOptions;
  readonly #parts: Parts;

  constructor(options: PassOptions, parts: Parts) {
    this.#options = options;
    this.#parts = parts;
  }

  async run(beforeCommit: () => Promise<void>): Promise<number> {
    const { store, now } = this.#parts;
    let count = 0;
    await store.wholeTransaction(async () => {
      clearUsage(store);
      keepConversationIds(store);
      store.db.exec(`
        DELETE FROM conversations;
        DELETE FROM conversation_shares;
        DELETE FROM conversations_to_sum;
        DELETE FROM drift;
        DELETE FROM record_keys;
        DELETE FROM record_changes;
        INSERT INTO fts (fts) VALUES ('delete-all');`);
      // The index emptied holds nothing an earlier forget left in it (`scrub.ts`).
      store.deleteMeta(SCRUB_KEY);
      // The ids of the sources to derive again, each row read at its turn: at 100,000 sources
      // their rows, state and all, held together took some 100 MB through the whole rebuild.
      // A record keeps its derived columns until its source's turn, which writes every one of
      // them: emptying them first rewrote every row of the store, raw bytes and all, into the
      // write-ahead log (twice the store's size written at ten gigabytes). The records of a
      // source no adapter of this build derives are emptied now, as they will not be derived.
      const ids: number[] = [];
      const underived = store.stmt(
        // OR FAIL: no statement journal (with temp_store = MEMORY, a copy in memory of every
        // page it changes); this transaction is rolled back whole on failure.
        `UPDATE OR FAIL records SET conversation_id = NULL, ts = NULL, kind = 'meta', role = NULL,
           message_id = NULL, part_id = NULL, flags = flags & ${FLAG_ZSTD} WHERE source_id = ?`,
      );
      for (
        const { id, agent, locator } of store.stmt(
          "SELECT id, agent, locator FROM sources ORDER BY id",
        ).iterate() as Iterable<{ id: number; agent: string; locator: string }>
      ) {
        if (adapterOf(this.#options.adapters, agent, locator)) ids.push(id);
        else underived.run(id);
      }
      const progress = this.#parts.progress;
      progress.current.phase = "rebuilding";
      progress.current.sourcesTotal = ids.length;
      progress.current.bytesTotal = Number(
        (store.stmt("SELECT coalesce(sum(coalesce(length, length(raw))), 0) AS n FROM records")
          .get() as { n: number }).n,
      );
      progress.report(false);
      const stop = () => {
        if (this.#options.signal?.aborted) throw new RebuildStoppedError();
      };
      const derived = store.stmt("UPDATE sources SET derivation = ? WHERE id = ?");
      const batch = new Batch();
      for (const id of ids) {
        const source = sourceById(store, id);
        const adapter = adapterOf(this.#options.adapters, source.agent, source.locator)!;
        count += await rederiveSource(this.#parts, adapter, source, stop, batch);
        derived.run(derivationOf(adapter), source.id);
        progress.current.sourcesDone++;
        // The bytes derived, those still in the batch too: a small store fills no batch at all.
        progress.reportAhead(batch.raw);
      }
      this.#parts.pipeline.commit(batch);
      // Records a tombstone covers left the store (captured before tombstones covered children).
      refreshTotals(store, { recount: true });
      store.setMeta("last_rebuild", { at: now(), records: count });
      // Everything was indexed afresh, as the index is written today, and derived as today.
      store.deleteMeta(INDEX_UPGRADE_KEY);
      store.setMeta(DERIVATIONS_KEY, derivations(this.#options.adapters));
      store.db.exec("DROP TABLE IF EXISTS fts_next");
      dropConversationIds(store);
      await beforeCommit();
    });
    return count;
  }
}

/**
 * Empties `usage` and its sums with its triggers set aside: each deleted call fires them, a row at
 * a time, and a statement that fires triggers keeps a copy in memory of every page it changes
 * (temp_store = MEMORY): the whole table and its indexes, some 400 MB at ten gigabytes of history.
 * The triggers are made again as they were, in the same transaction.
 */
function clearUsage(store: HistoryStore): void {
  const triggers = store.db.prepare(
    "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'usage'",
  ).all() as { name: string; sql: string }[];
  for (const { name } of triggers) store.db.exec(`DROP TRIGGER "${name.replaceAll('"', '""')}"`);
  store.db.exec(`
    DELETE FROM usage_quarters;
    DELETE FROM usage_conversation_quarters;
    DELETE FROM usage_hours;
    DELETE FROM usage_quarters_fill;
    DELETE FROM usage;`);
  for (const { sql } of triggers) store.db.exec(sql);
}
