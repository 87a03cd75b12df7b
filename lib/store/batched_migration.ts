// Migrations that copy a table in bounded batches, so a schema change never holds a large store
// hostage: at most 32 rows, 512 KiB or 50 ms a batch (one row may exceed the bytes or the time),
// each batch one transaction that also moves the cursor kept in the store, so a migration killed
// at any point resumes from its last committed batch. Each batch records a typed,
// length-delimited hash of its source rows and of the target rows it wrote.
//
// Before switching over, the copy is verified against the source as it is then, in bounded
// steps too. Each batch's source rows are read again: rows that changed since their copy (a
// conversation forgotten meanwhile) are copied again; for the others the target is derived from
// them once more, as digests per block of batches (`migration_digest.ts`). Then the whole target
// is scanned, as it keeps itself (a text index term by term), into the same digests. A block
// whose digests differ holds a copy that differs from an unchanged source: damage. Until the
// switch, readers use the old table. Damage fails closed: latched (capture stops until
// `reindex --retry`), both copies kept; the retry copies the failing blocks again and verifies
// everything once more.

import type { Hash } from "node:crypto";
import type { HistoryStore } from "./db.ts";
import { sha256Hash } from "../sha256.ts";
import { giveSpaceBack, MigrationError } from "./db.ts";
import { latch, latchedFailure } from "./latch.ts";
import { ScanAside } from "./scan_aside.ts";
import { GarbageRelease } from "../garbage.ts";
import { BlockDigests, DIGEST_BLOCKS, DIGEST_VERSION, type ItemSink } from "./migration_digest.ts";

/** Batch bounds: rows, source bytes and time (a single row may exceed the last two). */
export const BATCH_ROWS = 32;
export const BATCH_BYTES = 512 * 1024;
export const BATCH_MS = 50;

/** Target items a scan step reads at most (one text index term may exceed it). */
const SCAN_ITEMS = 16_384;

/** The meta key of the batched migration under way. */
export const MIGRATION_STATE_KEY = "batched_migration";
/** The meta key of the tables a switch-over retired, dropped just after it (`dropRetired`). */
const RETIRED_KEY = "retired_tables";

/** One source row as a step reads it: its id and what the hash and the copy need. */
export interface SourceRow {
  id: number;
  /** Bytes read from the store for it (counted against the batch's byte bound). */
  bytes: number;
}

/**
 * What a batched migration copies: source rows by ascending id into a target, and how each
 * side is hashed. The target is derived from the source by `write` alone, so a batch copied
 * again gives the same target rows.
 */
export interface BatchedStep<R extends SourceRow> {
  /** The migration's name in `schema.ts`, whose SQL step marked the copy to be done. */
  name: string;
  /** Creates the target afresh (dropping what an abandoned run may have left). */
  prepare(store: HistoryStore): void;
  /** How many source rows there are (for the share done). */
  count(store: HistoryStore): number;
  /** The next source row with an id greater than `after`, or null at the end. */
  next(store: HistoryStore, after: number): R | null;
  /** Adds the source row's typed fields to `hash`. */
  hashSource(row: R, hash: RowHash): void;
  /** Writes the target rows of `rows` (inside the batch's transaction). */
  write(store: HistoryStore, rows: readonly R[]): void;
  /** Removes the target rows of ids `first`..`last` (to copy a batch again). */
  clear(store: HistoryStore, first: number, last: number): void;
  /** Adds the target rows of ids `first`..`last`, as they are now, to `hash`. */
  hashTarget(store: HistoryStore, first: number, last: number, hash: RowHash): void;
  /** Gives `add` every item the target should hold for `rows`, derived from them now. */
  expectTarget(store: HistoryStore, rows: readonly R[], add: ItemSink): void;
  /**
   * Gives `add` the target's next items after `cursor` ("" to begin), about `limit` of them, in
   * whatever order the target keeps them; returns the cursor to go on from, or null at the end.
   */
  scanTarget(store: HistoryStore, cursor: string, limit: number, add: ItemSink): string | null;
  /** Source rows with ids `first`..`last`, as they are now (for verification). */
  range(store: HistoryStore, first: number, last: number): R[];
  /**
   * Puts the target in the old table's place (inside the switch-over transaction); returns the
   * name the old table now has, to be dropped after the switch-over, or null when it is gone.
   */
  switchOver(store: HistoryStore): string | null;
  /** Drops the target and whatever the step left (when the migration is abandoned). */
  discard(store: HistoryStore): void;
}

/** Where a batched migration stands, kept in `meta` and moved with every batch. */
export interface MigrationState {
  name: string;
  phase: "copy" | "verify" | "failed";
  /** The last source id copied. */
  cursor: number;
  /** Batches written, and the last one verified (0 before the first). */
  batches: number;
  verified: number;
  /** Source rows copied, and the source rows there were when the copy began. */
  rowsCopied: number;
  rowsTotal: number;
  /** Source bytes read by the copy. */
  bytesCopied: number;
  startedAt: number;
  /** Time spent working on it, over every run (for the time left). */
  workMs: number;
  /** After `reindex --retry`: a batch that fails verification is copied once more. */
  repair: boolean;
  failure: string | null;
  /** The verification's digests, from its start (absent in a state an older build wrote). */
  digests?: DigestState | null;
}

/** The digests of a verification under way: per block of `per` batches, as hex. */
export interface DigestState {
  /** How its items were hashed (`DIGEST_VERSION`; absent where an older build began it). */
  version?: number;
  per: number;
  /** What the target should hold, derived from the batches verified so far. */
  expected: string;
  /** What the target holds, as scanned so far. */
  actual: string;
  /** Where the scan goes on from ("" before it starts), or null once it is done. */
  cursor: string | null;
  /** Blocks whose batches a retry copies again before they are verified. */
  recopy: number[];
  /** Blocks that differed (after a failure). */
  failed: number[];
}

/** The phase, share done and time left of a migration under way, for `status`. */
export interface MigrationProgress {
  name: string;
  phase: MigrationState["phase"];
  /** 0–1, each phase weighted by its share of the time (see `SHARES`). */
  share: number;
  /** Estimated milliseconds left at the rate so far, or null before there is a rate. */
  leftMs: number | null;
  failure: string | null;
}

/** The migration under way in `store`, or null. */
export function migrationState(store: HistoryStore): MigrationState | null {
  return store.getMeta<MigrationState>(MIGRATION_STATE_KEY) ?? null;
}

/** The phase, share and time left of the migration under way, or null. */
export function migrationProgress(store: HistoryStore): MigrationProgress | null {
  const state = migrationState(store);
  if (!state) return null;
  const copied = state.rowsTotal ? Math.min(1, state.rowsCopied / state.rowsTotal) : 1;
  const share = state.phase === "copy" ? copied * SHARES.copy : SHARES.copy + verifiedShare(state);
  const leftMs = share > 0 && state.workMs > 0
    ? Math.round(state.workMs * (1 - share) / share)
    : null;
  return {
    name: state.name,
    phase: state.phase,
    share,
    leftMs: state.phase === "failed" ? null : leftMs,
    failure: state.failure,
  };
}

/**
 * How the time of a migration divides between copying, reading the batches again and what is left
 * of scanning the new table once they are read (a worker scans it meanwhile), as measured for the
 * CJK index at 200 MB (copying 8.2 s, reading 9 to 10 s, the scan's 5.9 s beside it), for the
 * share done.
 */
const SHARES = { copy: 0.45, read: 0.5, scan: 0.05 };

/** The share of the whole migration its verification has done. */
function verifiedShare(state: MigrationState): number {
  const read = state.batches ? state.verified / state.batches : 1;
  const d = state.digests;
  let scan = 0;
  if (d?.cursor === null) scan = 1;
  else if (d && d.cursor !== "" && read > 0) {
    // The scan runs beside the reading: the items it will find in all are, as far as the batches
    // read so far tell, those found so far over the share read.
    const blocks = blocksOf(state, d);
    const expected = new BlockDigests(blocks, d.expected).total() / read;
    const scanned = new BlockDigests(blocks, d.actual).total();
    scan = expected ? Math.min(1, scanned / expected) : 1;
  }
  return read * SHARES.read + scan * SHARES.scan;
}

/** What `runBatchedMigration` is told by its caller. */
export interface RunOptions {
  now: () => number;
  /** Stops at the next batch boundary (the migration resumes on the next run). */
  signal?: AbortSignal;
  /** Epoch ms after which it stops at the next batch boundary. */
  deadline?: number;
  /** After every batch. */
  onBatch?: (progress: MigrationProgress) => void;
  /** Lets the event loop run between batches (a dashboard keeps answering). */
  pause?: () => Promise<void>;
  /**
   * The monotonic clock (ms) that bounds a batch's time (default `performance.now`). Given, the
   * target is scanned on this thread, each step bounded by it, not by a worker beside.
   */
  timer?: () => number;
  /** How long each step of a scan beside reads before it says where it is (default BATCH_MS). */
  asideStepMs?: number;
  /** What collects the garbage each batch leaves (default: every 8 MiB of rows copied or read). */
  garbage?: GarbageRelease;
}

/**
 * Starts (when no migration is under way) or resumes the batched migration `step`; returns true
 * once it has switched over, false when stopped early (signal, deadline). Throws
 * MigrationError when verification fails: the failure is latched and both copies kept.
 */
export async function runBatchedMigration<R extends SourceRow>(
  store: HistoryStore,
  step: BatchedStep<R>,
  options: RunOptions,
): Promise<boolean> {
  const timer = options.timer ?? (() => performance.now());
  let state = startOrResume(store, step, options.now);
  const garbage = options.garbage ?? new GarbageRelease();
  if (state.phase === "failed") state = retryFailed(store, state);
  const stopped = () =>
    options.signal?.aborted === true ||
    (options.deadline !== undefined && options.now() >= options.deadline);
  while (state.phase === "copy") {
    if (stopped()) return false;
    const before = state.bytesCopied;
    state = copyBatch(store, step, state, timer);
    garbage.committed(state.bytesCopied - before);
    options.onBatch?.(migrationProgress(store)!);
    await options.pause?.();
  }
  // A state an older build wrote verified without digests, or hashed its items otherwise: its
  // verification starts again.
  if (state.digests?.version !== DIGEST_VERSION) {
    state = { ...state, verified: 0, digests: freshDigests(state, []) };
    store.setMeta(MIGRATION_STATE_KEY, state);
  }
  const blocks = new BlockMap(store, state.name, state.digests!.per, state.batches);
  // What V8 kept of the pages freed so far goes back before a worker starts beside the reading:
  // the first seconds of a 10 GB verification peaked at 211 MiB without this, 179 with it.
  garbage.giveBack();
  for (;;) {
    // Scanning the target needs nothing that reading the batches again does: a worker scans it
    // meanwhile. Not in a retry's repair, which copies batches again as it reads them, nor where
    // the caller's clock bounds each step (`timer`), which a worker's steps cannot keep.
    const digests = state.digests!;
    const aside = state.repair || digests.cursor === null || options.timer
      ? null
      : ScanAside.start(store, {
        name: state.name,
        batches: state.batches,
        per: digests.per,
        cursor: digests.cursor,
        actual: digests.actual,
        stepMs: options.asideStepMs ?? BATCH_MS,
      });
    try {
      let recopied = false;
      while (state.verified < state.batches) {
        if (stopped()) return false;
        const read = verifyBatches(store, step, scanned(state, aside), blocks, options.now, timer);
        state = read.state;
        recopied ||= read.recopied;
        garbage.committed(read.bytes);
        options.onBatch?.(migrationProgress(store)!);
        await options.pause?.();
      }
      if (aside && recopied) {
        // Batches were copied again while it scanned: what it read of them may be gone.
        state = { ...state, digests: freshScan(state) };
        store.setMeta(MIGRATION_STATE_KEY, state);
      }
      // What is left of the scan, waited for step by step, each kept as it comes.
      let waited = timer();
      while (aside && !recopied) {
        state = scanned(state, aside);
        state = { ...state, workMs: state.workMs + (timer() - waited) };
        store.setMeta(MIGRATION_STATE_KEY, state);
        options.onBatch?.(migrationProgress(store)!);
        if (aside.ended) break;
        if (stopped()) return false;
        waited = timer();
        await aside.next();
      }
    } finally {
      aside?.stop();
    }
    while (state.digests!.cursor !== null) {
      if (stopped()) return false;
      state = scanTarget(store, step, state, blocks, timer);
      options.onBatch?.(migrationProgress(store)!);
      await options.pause?.();
    }
    const again: MigrationState | null = compareDigests(store, step, state, blocks, options.now);
    if (!again) break;
    state = again;
  }
  switchOver(store, step);
  return true;
}

/** The state of the migration under way, or of `step` begun afresh when none is. */
function startOrResume<R extends SourceRow>(
  store: HistoryStore,
  step: BatchedStep<R>,
  now: () => number,
): MigrationState {
  const found = migrationState(store);
  if (found && found.name !== step.name) {
    throw new MigrationError(
      `Migration "${step.name}" cannot start while "${found.name}" is under way`,
    );
  }
  if (found) return found;
  const begun: MigrationState = {
    name: step.name,
    phase: "copy",
    cursor: 0,
    batches: 0,
    verified: 0,
    rowsCopied: 0,
    rowsTotal: 0,
    bytesCopied: 0,
    startedAt: now(),
    workMs: 0,
    repair: false,
    failure: null,
    digests: null,
  };
  store.transaction(() => {
    step.prepare(store);
    store.stmt(`DELETE FROM migration_batches WHERE migration = ?`).run(step.name);
    begun.rowsTotal = step.count(store);
    store.setMeta(MIGRATION_STATE_KEY, begun);
  });
  return begun;
}

/**
 * The state a failed migration goes on from: the blocks that differed copied again, everything
 * verified once more. Throws MigrationError while the failure is latched.
 */
function retryFailed(store: HistoryStore, failed: MigrationState): MigrationState {
  // Failed closed: only `reindex --retry`, which clears the latch, lets it go on.
  if (latchedFailure(store)) throw new MigrationError(failed.failure ?? "Migration failed");
  const recopy = failed.digests?.failed ?? [];
  const state: MigrationState = {
    ...failed,
    phase: "verify",
    verified: 0,
    repair: true,
    failure: null,
    digests: freshDigests(failed, recopy),
  };
  store.setMeta(MIGRATION_STATE_KEY, state);
  return state;
}

/** Puts the verified copy in place, retires the old one and forgets the migration. */
function switchOver<R extends SourceRow>(store: HistoryStore, step: BatchedStep<R>): void {
  store.transaction(() => {
    const retired = step.switchOver(store);
    if (retired) store.setMeta(RETIRED_KEY, [...retiredTables(store), retired]);
    store.stmt(`DELETE FROM migration_batches WHERE migration = ?`).run(step.name);
    store.deleteMeta(MIGRATION_STATE_KEY);
  });
  dropRetired(store);
  // What the copy cached is not what capture reads next.
  store.db.exec("PRAGMA shrink_memory");
}

function retiredTables(store: HistoryStore): string[] {
  return store.getMeta<string[]>(RETIRED_KEY) ?? [];
}

/**
 * Drops the tables a switch-over retired, and gives their space back: after the switch-over and,
 * for a run killed between the two, before the next capture. The drop runs with secure_delete
 * off: zeroing every page of a large table in one statement keeps a copy of each in memory
 * (temp_store = MEMORY), 200 MB for the 600 MB index of a 1 GB corpus. The incremental vacuum that
 * follows then fills or cuts off every free page, so nothing of the retired table stays in the
 * file (the list is cleared only once it is done, so a kill before then does it again).
 */
export function dropRetired(store: HistoryStore): void {
  const names = retiredTables(store);
  if (!names.length) return;
  store.db.exec("PRAGMA secure_delete = OFF");
  try {
    for (const name of names) store.db.exec(`DROP TABLE IF EXISTS "${name.replaceAll('"', '""')}"`);
  } finally {
    store.db.exec("PRAGMA secure_delete = ON");
  }
  giveSpaceBack(store);
  store.deleteMeta(RETIRED_KEY);
}

/** Abandons the migration under way: its target and batches dropped, the old table kept. */
export function discardBatchedMigration<R extends SourceRow>(
  store: HistoryStore,
  step: BatchedStep<R>,
): void {
  store.transaction(() => {
    step.discard(store);
    store.stmt(`DELETE FROM migration_batches WHERE migration = ?`).run(step.name);
    store.deleteMeta(MIGRATION_STATE_KEY);
  });
}

/** Copies one bounded batch and moves the cursor with it, in one transaction. */
function copyBatch<R extends SourceRow>(
  store: HistoryStore,
  step: BatchedStep<R>,
  state: MigrationState,
  timer: () => number,
): MigrationState {
  const started = timer();
  return store.transaction(() => {
    const rows: R[] = [];
    let bytes = 0;
    let after = state.cursor;
    while (rows.length < BATCH_ROWS) {
      if (rows.length && (bytes >= BATCH_BYTES || timer() - started >= BATCH_MS)) break;
      const row = step.next(store, after);
      if (!row) break;
      rows.push(row);
      bytes += row.bytes;
      after = row.id;
    }
    if (!rows.length) {
      const copied: MigrationState = { ...state, phase: "verify", workMs: spent() };
      const next = { ...copied, digests: freshDigests(copied, []) };
      store.setMeta(MIGRATION_STATE_KEY, next);
      return next;
    }
    step.write(store, rows);
    const first = state.cursor + 1;
    const last = rows.at(-1)!.id;
    const batch = state.batches + 1;
    store.stmt(
      `INSERT INTO migration_batches (migration, batch, first_id, last_id, rows, source_hash,
         target_hash) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      step.name,
      batch,
      first,
      last,
      rows.length,
      sourceHash(step, rows),
      targetHash(store, step, first, last),
    );
    const next: MigrationState = {
      ...state,
      cursor: last,
      batches: batch,
      rowsCopied: state.rowsCopied + rows.length,
      bytesCopied: state.bytesCopied + bytes,
      workMs: spent(),
    };
    store.setMeta(MIGRATION_STATE_KEY, next);
    return next;
  });

  // Kept to the fraction of a millisecond: a fast batch still counts toward the time left.
  function spent(): number {
    return state.workMs + (timer() - started);
  }
}

/** `state` with what the scan `aside` has reached, once it has said anything. */
function scanned(state: MigrationState, aside: ScanAside | null): MigrationState {
  const latest = aside?.latest;
  if (!latest) return state;
  return { ...state, digests: { ...state.digests!, cursor: latest.cursor, actual: latest.actual } };
}

/** `state`'s digests with the scan begun again: nothing scanned yet. */
function freshScan(state: MigrationState): DigestState {
  const digests = state.digests!;
  const empty = new BlockDigests(blocksOf(state, digests)).toHex();
  return { ...digests, cursor: "", actual: empty };
}

/** Empty digests for the verification of `state`'s batches. */
function freshDigests(state: MigrationState, recopy: number[]): DigestState {
  const per = Math.max(1, Math.ceil(state.batches / DIGEST_BLOCKS));
  const empty = new BlockDigests(blockCount(state.batches, per)).toHex();
  return {
    version: DIGEST_VERSION,
    per,
    expected: empty,
    actual: empty,
    cursor: "",
    recopy,
    failed: [],
  };
}

function blockCount(batches: number, per: number): number {
  return Math.max(1, Math.ceil(batches / per));
}

function blocksOf(state: MigrationState, digests: DigestState): number {
  return blockCount(state.batches, digests.per);
}

/** Which block a batch, or the source row an item came from, belongs to. */
export class BlockMap {
  readonly count: number;
  /** Each block's last source id, in block order (read once the copy is done). */
  #ends: Float64Array | null = null;
  /** The block `ofId` found last, and the ids it holds: a scan's ids come in runs. */
  #found = { block: 0, after: 0, last: -1 };

  /** The blocks of migration `name`'s `batches`, `per` to a block. */
  constructor(
    readonly store: HistoryStore,
    readonly name: string,
    readonly per: number,
    batches: number,
  ) {
    this.count = blockCount(batches, per);
  }

  ofBatch(batch: number): number {
    return Math.min(this.count - 1, Math.floor((batch - 1) / this.per));
  }

  /** The block of source id `id` (an id past every batch counts in the last block). */
  ofId(id: number): number {
    const found = this.#found;
    if (id > found.after && id <= found.last) return found.block;
    const ends = this.#ends ??= this.#blockEnds();
    let lo = 0;
    let hi = ends.length - 1;
    if (hi < 0) return 0;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ends[mid]! < id) lo = mid + 1;
      else hi = mid;
    }
    found.block = lo;
    found.after = lo > 0 ? ends[lo - 1]! : -Infinity;
    found.last = lo === ends.length - 1 ? Infinity : ends[lo]!;
    return lo;
  }

  /** Each block's last source id: its last batch's. */
  #blockEnds(): Float64Array {
    const lasts = (this.store.stmt(
      "SELECT last_id FROM migration_batches WHERE migration = ? ORDER BY batch",
    ).all(this.name) as { last_id: number }[]).map((r) => r.last_id);
    const ends = new Float64Array(lasts.length ? this.ofBatch(lasts.length) + 1 : 0);
    lasts.forEach((last, i) => ends[this.ofBatch(i + 1)] = last);
    return ends;
  }

  /** The batches of `block`, first and last. */
  batches(block: number, total: number): [number, number] {
    return [block * this.per + 1, Math.min(total, (block + 1) * this.per)];
  }
}

interface BatchRow {
  batch: number;
  first_id: number;
  last_id: number;
  rows: number;
  source_hash: Uint8Array;
  target_hash: Uint8Array;
}

const READ_BATCH = `SELECT batch, first_id, last_id, rows, source_hash, target_hash
  FROM migration_batches WHERE migration = ? AND batch = ?`;

/**
 * Verifies stored batches for up to `BATCH_MS` (at least one): the source rows of each, hashed
 * as they are now, must equal the hash its copy recorded (else they are copied again), and so
 * must the target rows as they are now; then the target those source rows give, derived from
 * them again, is added to the expected digests. A mismatch fails the migration closed, unless
 * it is a retry's repair: then the batch is copied once more.
 */
function verifyBatches<R extends SourceRow>(
  store: HistoryStore,
  step: BatchedStep<R>,
  state: MigrationState,
  blocks: BlockMap,
  now: () => number,
  timer: () => number,
): { state: MigrationState; recopied: boolean; bytes: number } {
  const started = timer();
  const read = store.stmt(READ_BATCH);
  let recopied = false;
  const digests = state.digests!;
  const expected = new BlockDigests(blocks.count, digests.expected);
  let verified = state.verified;
  let failure: string | null = null;
  // Bounded as a copy's batch is: a stored batch at least, then up to the bytes or the time.
  const counted = { bytes: 0 };
  const rows: R[] = [];
  store.transaction(() => {
    while (verified < state.batches) {
      if (
        verified > state.verified &&
        (counted.bytes >= BATCH_BYTES || timer() - started >= BATCH_MS)
      ) break;
      let batch = read.get(state.name, verified + 1) as BatchRow | undefined;
      if (!batch) {
        failure = `batch ${verified + 1} of the copy is missing`;
        break;
      }
      const block = blocks.ofBatch(batch.batch);
      if (state.repair && digests.recopy.includes(block)) {
        recopy(store, step, batch);
        recopied = true;
      }
      let checked = check(store, step, batch, counted);
      // Source rows changed since their copy (a conversation forgotten meanwhile) are copied
      // again from the source as it is now; a copy that differs from an unchanged source is
      // damage, and fails closed unless a retry asked for a repair.
      if (checked.problem && (checked.problem.kind === "source" || state.repair)) {
        recopy(store, step, batch);
        recopied = true;
        batch = read.get(state.name, verified + 1) as unknown as BatchRow;
        checked = check(store, step, batch, counted);
      }
      if (checked.problem) {
        failure = checked.problem.message;
        break;
      }
      rows.push(...checked.rows);
      verified++;
    }
    // Derived again together: each derivation has a cost of its own besides its rows'.
    step.expectTarget(
      store,
      rows,
      (id, position, text) => expected.add(blocks.ofId(id), id, position, text),
    );
  });
  const workMs = state.workMs + (timer() - started);
  const next: MigrationState = {
    ...state,
    phase: "verify",
    verified,
    workMs,
    digests: { ...digests, expected: expected.toHex() },
  };
  if (failure) fail(store, next, failure, [], now);
  store.setMeta(MIGRATION_STATE_KEY, next);
  return { state: next, recopied, bytes: counted.bytes };
}

/**
 * Scans the target from `cursor` into `actual`, a step at a time while `more` says so (at least
 * one); returns where it stopped, or null at the end. The migration's thread and the worker beside
 * it (`_scan_worker.ts`) both scan with it.
 */
export function scanPiece(
  store: HistoryStore,
  scan: BatchedStep<SourceRow>["scanTarget"],
  cursor: string,
  blocks: BlockMap,
  actual: BlockDigests,
  more: () => boolean,
): string | null {
  let at: string | null = cursor;
  do {
    at = scan(
      store,
      at,
      SCAN_ITEMS,
      (id, position, text) => actual.add(blocks.ofId(id), id, position, text),
    );
  } while (at !== null && more());
  return at;
}

/** Scans the target into the actual digests for up to `BATCH_MS` (at least one step). */
function scanTarget<R extends SourceRow>(
  store: HistoryStore,
  step: BatchedStep<R>,
  state: MigrationState,
  blocks: BlockMap,
  timer: () => number,
): MigrationState {
  const started = timer();
  const digests = state.digests!;
  const actual = new BlockDigests(blocks.count, digests.actual);
  return store.transaction(() => {
    const cursor = scanPiece(
      store,
      step.scanTarget,
      digests.cursor!,
      blocks,
      actual,
      () => timer() - started < BATCH_MS,
    );
    const next: MigrationState = {
      ...state,
      workMs: state.workMs + (timer() - started),
      digests: { ...digests, actual: actual.toHex(), cursor },
    };
    store.setMeta(MIGRATION_STATE_KEY, next);
    return next;
  });
}

/**
 * Compares the digests of a finished verification: null when every block agrees (the target is
 * what the source gives). A block whose source changed since it was read (a forget during the
 * scan) is no damage: the verification starts again, and that state is returned. Otherwise the
 * migration fails closed.
 */
function compareDigests<R extends SourceRow>(
  store: HistoryStore,
  step: BatchedStep<R>,
  state: MigrationState,
  blocks: BlockMap,
  now: () => number,
): MigrationState | null {
  const digests = state.digests!;
  const expected = new BlockDigests(blocks.count, digests.expected);
  const differ = expected.differing(new BlockDigests(blocks.count, digests.actual));
  if (!differ.length) return null;
  const read = store.stmt(READ_BATCH);
  for (const block of differ) {
    const [first, last] = blocks.batches(block, state.batches);
    for (let b = first; b <= last; b++) {
      const batch = read.get(state.name, b) as BatchRow | undefined;
      if (batch && check(store, step, batch, { bytes: 0 }).problem?.kind === "source") {
        const again: MigrationState = { ...state, verified: 0, digests: freshDigests(state, []) };
        store.setMeta(MIGRATION_STATE_KEY, again);
        return again;
      }
    }
  }
  const [firstBatch] = blocks.batches(differ[0]!, state.batches);
  const [, lastBatch] = blocks.batches(differ[0]!, state.batches);
  const bounds = store.stmt(
    `SELECT min(first_id) AS first, max(last_id) AS last FROM migration_batches
     WHERE migration = ? AND batch BETWEEN ? AND ?`,
  ).get(state.name, firstBatch, lastBatch) as { first: number; last: number };
  const more = differ.length > 1 ? ` and ${differ.length - 1} more block(s)` : "";
  fail(
    store,
    state,
    `the copy of rows ${bounds.first}–${bounds.last} (batches ${firstBatch}–${lastBatch}) ` +
      `differs from its source${more}`,
    differ,
    now,
  );
}

/** Fails the migration closed: the state says why, the latch stops capture; throws. */
function fail(
  store: HistoryStore,
  state: MigrationState,
  failure: string,
  blocks: number[],
  now: () => number,
): never {
  const message = `Migration "${state.name}" failed verification: ${failure}; both copies ` +
    `are kept. Run "logbook reindex --retry" to copy the failing batches again`;
  const failed: MigrationState = {
    ...state,
    phase: "failed",
    failure,
    digests: state.digests ? { ...state.digests, failed: blocks } : null,
  };
  store.transaction(() => {
    store.setMeta(MIGRATION_STATE_KEY, failed);
    latch(store, { at: now(), message });
  });
  throw new MigrationError(message);
}

interface Mismatch {
  kind: "source" | "target";
  message: string;
}

/**
 * A batch's source rows as they are now, and what differs: its source rows or its target rows
 * hashed now against the hashes its copy recorded, or null. Counts the bytes read.
 */
function check<R extends SourceRow>(
  store: HistoryStore,
  step: BatchedStep<R>,
  batch: BatchRow,
  read: { bytes: number },
): { rows: R[]; problem: Mismatch | null } {
  const rows = step.range(store, batch.first_id, batch.last_id);
  for (const row of rows) read.bytes += row.bytes;
  const ids = `rows ${batch.first_id}–${batch.last_id} (batch ${batch.batch})`;
  if (!equal(sourceHash(step, rows), batch.source_hash)) {
    return {
      rows,
      problem: { kind: "source", message: `the source ${ids} changed after their copy` },
    };
  }
  if (!equal(targetHash(store, step, batch.first_id, batch.last_id), batch.target_hash)) {
    return {
      rows,
      problem: { kind: "target", message: `the copy of ${ids} differs from its source` },
    };
  }
  return { rows, problem: null };
}

/** Copies one stored batch again (a repair), recording its new hashes. */
function recopy<R extends SourceRow>(
  store: HistoryStore,
  step: BatchedStep<R>,
  batch: BatchRow,
): void {
  const rows = step.range(store, batch.first_id, batch.last_id);
  step.clear(store, batch.first_id, batch.last_id);
  step.write(store, rows);
  store.stmt(
    `UPDATE migration_batches SET rows = ?, source_hash = ?, target_hash = ?
     WHERE migration = ? AND batch = ?`,
  ).run(
    rows.length,
    sourceHash(step, rows),
    targetHash(store, step, batch.first_id, batch.last_id),
    step.name,
    batch.batch,
  );
}

function sourceHash<R extends SourceRow>(step: BatchedStep<R>, rows: readonly R[]): Uint8Array {
  const hash = new RowHash();
  for (const row of rows) step.hashSource(row, hash);
  return hash.digest();
}

function targetHash<R extends SourceRow>(
  store: HistoryStore,
  step: BatchedStep<R>,
  first: number,
  last: number,
): Uint8Array {
  const hash = new RowHash();
  step.hashTarget(store, first, last, hash);
  return hash.digest();
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/**
 * A SHA-256 over typed, length-delimited values: each value is a type tag, its length and its
 * bytes, and each row ends with a mark, so no two different rows (or row sequences) hash alike
 * by shifting bytes between fields or rows.
 */
export class RowHash {
  readonly #hash: Hash = sha256Hash();
  readonly #encoder = new TextEncoder();
  // Values are gathered here and hashed a buffer at a time: an update per value costs more
  // than the hashing itself.
  #buffer = new Uint8Array(16 * 1024);
  #view = new DataView(this.#buffer.buffer);
  #used = 0;

  /** Adds one value: null, an integer, a real, text or bytes. */
  value(value: null | number | bigint | string | Uint8Array): this {
    if (value === null) return this.#head(0, 0);
    if (typeof value === "bigint" || (typeof value === "number" && Number.isInteger(value))) {
      this.#head(1, 8);
      if (typeof value === "number" && value >= 0 && value <= Number.MAX_SAFE_INTEGER) {
        // The same 8 bytes as setBigInt64, without making a BigInt of every id.
        this.#view.setUint32(this.#used, value % 0x1_0000_0000, true);
        this.#view.setUint32(this.#used + 4, Math.floor(value / 0x1_0000_0000), true);
      } else this.#view.setBigInt64(this.#used, BigInt(value), true);
      this.#used += 8;
      return this;
    }
    if (typeof value === "number") {
      this.#head(2, 8);
      this.#view.setFloat64(this.#used, value, true);
      this.#used += 8;
      return this;
    }
    if (typeof value === "string" && value.length * 3 + 17 <= this.#buffer.length) {
      // Encoded in place, the length written before it once known: no array per string.
      if (this.#buffer.length - this.#used < value.length * 3 + 17) this.#flush();
      const at = this.#used;
      const { written } = this.#encoder.encodeInto(value, this.#buffer.subarray(at + 9));
      this.#head(3, written);
      this.#used = at + 9 + written;
      return this;
    }
    const bytes = typeof value === "string" ? this.#encoder.encode(value) : value;
    this.#head(typeof value === "string" ? 3 : 4, bytes.length);
    if (bytes.length > this.#buffer.length - this.#used) {
      this.#flush();
      this.#hash.update(bytes);
    } else {
      this.#buffer.set(bytes, this.#used);
      this.#used += bytes.length;
    }
    return this;
  }

  /** Ends a row. */
  endRow(): this {
    return this.#head(5, 0);
  }

  digest(): Uint8Array {
    this.#flush();
    return new Uint8Array(this.#hash.digest());
  }

  /** The type tag and the length of the value that follows, with room for 8 bytes after. */
  #head(tag: number, length: number): this {
    if (this.#buffer.length - this.#used < 17) this.#flush();
    this.#view.setUint8(this.#used, tag);
    this.#view.setUint32(this.#used + 1, length % 0x1_0000_0000, true);
    this.#view.setUint32(this.#used + 5, Math.floor(length / 0x1_0000_0000), true);
    this.#used += 9;
    return this;
  }

  #flush(): void {
    if (this.#used) this.#hash.update(this.#buffer.subarray(0, this.#used));
    this.#used = 0;
  }
}
