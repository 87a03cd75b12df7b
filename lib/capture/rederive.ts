// Stored sources derived again after what derives them changed. Each source records the versions
// it was derived with (`derivation.ts`); when its adapter's version or the shared one is another,
// or it has none (captured by a build before versions were recorded), capture derives it again
// from its raw records before reading anything new, so an upgraded store answers as a fresh
// capture of the same files would.
//
// Sources go in id order, the order a fresh capture of the same files creates them in, each
// whole in one transaction (small ones several to a transaction, up to a batch's raw bytes,
// `Limits.rawBudget`): a run stopped at any point (Ctrl-C, --max-seconds, kill -9) leaves each
// source either derived again and marked so, or as it was, and the next run goes on with those
// left; raw bytes are never written. A source's records keep their rows: their derived columns,
// flags, index entries, keys and drift are written again, and so is its share of each
// conversation it tells (`conversation_rows.ts`). The conversations touched are listed and, once
// no source is left, their rows are summed again from their shares, a batch at a time. Until
// then searches find each source as it was last derived and conversations as they were. Records
// of the conversations a project mirror holds are noted in `record_changes`, so mirrors follow.

import { type Adapter, adapterOf } from "../sources/adapter.ts";
import { wantedMirrors } from "../store/mirror.ts";
import { refreshTotals } from "../store/status.ts";
import { yieldToEventLoop } from "../event_loop.ts";
import { sumConversations } from "./conversation_rows.ts";
import { derivationOf, derivations, DERIVATIONS_KEY } from "./derivation.ts";
import type { PassOptions } from "./engine.ts";
import { type Parts, partsOf } from "./parts.ts";
import { rederiveSource } from "./rederive_source.ts";
import { SOURCE_COLUMNS, type SourceRow, sourceRow } from "./source.ts";

/** Conversation rows summed again in one transaction. */
const SUMS_PER_BATCH = 256;

/** What a run of `rederive` did: sources derived again, and whether none is left. */
export interface Rederived {
  sources: number;
  done: boolean;
}

/** A source to derive again, with the adapter that derives it and its raw bytes. */
interface Stale {
  row: SourceRow;
  adapter: Adapter;
  bytes: number;
}

/** Thrown inside a source when the pass's signal aborts: its transaction is rolled back. */
class Stopped extends Error {
  override name = "Stopped";
}

/**
 * Derives again every stored source derived with other versions than the pass's adapters', then
 * sums the conversations they touched again; stops between transactions once the pass's deadline
 * has passed, and within a source (rolled back) when its signal aborts. Reports progress as the
 * phase "rederiving". Cheap when there is nothing to do: one meta read.
 */
export async function rederive(pass: PassOptions): Promise<Rederived> {
  const { store, adapters } = pass;
  const wanted = derivations(adapters);
  if (store.getMeta<string>(DERIVATIONS_KEY) === wanted) return { sources: 0, done: true };
  const stale = staleSources(pass);
  const parts = partsOf(pass, "rederive");
  const progress = parts.progress;
  progress.current.phase = "rederiving";
  progress.current.sourcesTotal = stale.length;
  progress.current.bytesTotal = stale.reduce((n, s) => n + s.bytes, 0);
  if (stale.length) progress.report(true);
  const now = parts.now;
  // Past the deadline, a run stops after its first transaction: each run gets something done.
  const over = (worked: boolean) =>
    pass.signal?.aborted === true ||
    (worked && pass.deadline !== undefined && now() >= pass.deadline);
  let done = 0;
  let summed = 0;
  for (let at = 0; at < stale.length;) {
    if (over(done > 0)) return { sources: done, done: false };
    const group: Stale[] = [];
    let bytes = 0;
    while (at < stale.length && (group.length === 0 || bytes < parts.limits.rawBudget)) {
      bytes += stale[at]!.bytes;
      group.push(stale[at++]!);
    }
    try {
      await rederiveGroup(parts, pass, group);
    } catch (err) {
      if (err instanceof Stopped) return { sources: done, done: false };
      throw err;
    }
    done += group.length;
    await yieldToEventLoop();
  }
  while (store.stmt("SELECT 1 FROM conversations_to_sum LIMIT 1").get()) {
    if (over(done > 0 || summed > 0)) return { sources: done, done: false };
    summed += store.transaction(() => sumConversations(store, SUMS_PER_BATCH));
    await yieldToEventLoop();
  }
  store.transaction(() => {
    // Records a tombstone covers left the store as they were derived again, and a source may
    // yield a conversation now, or none.
    if (done || summed) refreshTotals(store, { recount: true, sources: "recount" });
    store.setMeta(DERIVATIONS_KEY, wanted);
  });
  if (stale.length) {
    progress.current.phase = "done";
    progress.report(false);
  }
  return { sources: done, done: true };
}

/** The sources whose recorded derivation is not their adapter's today, in id order. */
function staleSources(pass: PassOptions): Stale[] {
  const { store, adapters } = pass;
  // One row at a time, keeping only the stale: all 105,609 rows of a 10 GB store at once took
  // 277 MiB and 1.75 s, against 69 MiB and 0.78 s.
  const rows = store.stmt(`SELECT ${SOURCE_COLUMNS}, derivation FROM sources ORDER BY id`)
    .iterate() as Iterable<Record<string, unknown>>;
  const stale: Stale[] = [];
  for (const row of rows) {
    const adapter = adapterOf(adapters, String(row.agent), String(row.locator));
    if (!adapter || row.derivation === derivationOf(adapter)) continue;
    stale.push({ row: sourceRow(row), adapter, bytes: 0 });
  }
  if (!stale.length) return stale;
  const sizes = new Map(
    (store.stmt(
      "SELECT source_id, sum(coalesce(length, length(raw))) AS n FROM records GROUP BY source_id",
    ).all() as { source_id: number; n: number }[]).map((r) => [r.source_id, r.n]),
  );
  for (const s of stale) s.bytes = sizes.get(s.row.id) ?? 0;
  return stale;
}

/** Derives the sources of `group` again in one transaction, each marked derived as today. */
async function rederiveGroup(parts: Parts, pass: PassOptions, group: Stale[]): Promise<void> {
  const { store, progress } = parts;
  const stop = () => {
    if (pass.signal?.aborted) throw new Stopped();
  };
  const mirrored = mirroredRecords(parts);
  const noteChange = store.stmt("INSERT INTO record_changes (record_id) VALUES (?)");
  const derived = store.stmt("UPDATE sources SET derivation = ? WHERE id = ?");
  await store.wholeTransaction(async () => {
    for (const { row, adapter } of group) {
      const noted = new Set(mirrored(row.id));
      clearSource(parts, row.id);
      await rederiveSource(parts, adapter, row, stop);
      stop();
      derived.run(derivationOf(adapter), row.id);
      for (const id of mirrored(row.id)) noted.add(id);
      for (const id of [...noted].sort((a, b) => a - b)) noteChange.run(id);
      progress.current.sourcesDone++;
    }
    store.setMeta("progress", progress.current);
  });
  progress.report(false);
}

/**
 * What a source's records told before it is derived again goes: its index entries, keys, drift
 * and shares of conversations; the conversations its records were in are listed to be summed.
 */
function clearSource(parts: Parts, sourceId: number): void {
  const { store } = parts;
  store.stmt(
    `INSERT OR IGNORE INTO conversations_to_sum (id)
     SELECT DISTINCT conversation_id FROM records
     WHERE source_id = ? AND conversation_id IS NOT NULL`,
  ).run(sourceId);
  store.stmt(
    "DELETE FROM fts WHERE rowid IN (SELECT id FROM records WHERE source_id = ? AND (flags & 1) != 0)",
  ).run(sourceId);
  store.stmt("DELETE FROM record_keys WHERE source_id = ?").run(sourceId);
  store.stmt("DELETE FROM drift WHERE source_id = ?").run(sourceId);
  store.stmt("DELETE FROM conversation_shares WHERE source_id = ?").run(sourceId);
}

/**
 * The records of a source that sit in conversations of the projects whose mirrors the user
 * turned on (none when no mirror is on): those a mirror may hold a copy of.
 */
function mirroredRecords(parts: Parts): (sourceId: number) => number[] {
  const { store } = parts;
  const roots = [...wantedMirrors(store)];
  if (!roots.length) return () => [];
  const select = store.stmt(
    `SELECT r.id FROM records r JOIN conversations c ON c.id = r.conversation_id
     WHERE r.source_id = ? AND c.project_root IN (SELECT value FROM json_each(?))`,
  );
  return (sourceId) =>
    (select.all(sourceId, JSON.stringify(roots)) as { id: number }[]).map((r) => r.id);
}
