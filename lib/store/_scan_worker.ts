// The worker that scans a batched migration's target on a read-only connection of its own, while
// the migration's thread reads its batches again: the two halves of a verification need nothing
// of each other, and each takes a core. Started and spoken to only by `scanAside`
// (`scan_aside.ts`), which knows the steps it can scan by name.

import { dirname } from "../path.ts";
import { messageOf } from "../format.ts";
import { GarbageRelease } from "../garbage.ts";
import { HistoryStore } from "./db.ts";
import { BlockMap, scanPiece } from "./batched_migration.ts";
import { BlockDigests } from "./migration_digest.ts";
import { CJK_MIGRATION } from "./cjk.ts";
import { prepareScan, scanInstances } from "./cjk_index.ts";

/** What the worker is asked: to scan the target of migration `name` on from `cursor`. */
export interface ScanRequest {
  path: string;
  name: string;
  /** The migration's batches, and the batches a digest block holds. */
  batches: number;
  per: number;
  /** Where the scan goes on from ("" to begin), and its digests so far (hex). */
  cursor: string;
  actual: string;
  /** How long a step of the scan reads before it says where it is (ms). */
  stepMs: number;
}

/** What it says: where the scan is after each step (cursor null once done), or why it stopped. */
export type ScanReply =
  | { type: "step"; cursor: string | null; actual: string }
  | { type: "failed"; message: string };

/** Every how many steps the scan's garbage is collected, and at which step given back. */
const COLLECT_STEPS = 10;
const GIVE_BACK_STEP = 20;

/** The scans this worker can run, by migration. */
const SCANS = { [CJK_MIGRATION]: { prepare: prepareScan, scan: scanInstances } };

interface WorkerScope {
  onmessage: ((event: MessageEvent<ScanRequest>) => void) | null;
  postMessage(message: ScanReply): void;
  close(): void;
}

const scope = self as unknown as WorkerScope;

scope.onmessage = ({ data }) => {
  try {
    run(data);
  } catch (err) {
    scope.postMessage({ type: "failed", message: messageOf(err) });
  }
  scope.close();
};

function run(request: ScanRequest): void {
  const known = SCANS[request.name as keyof typeof SCANS];
  if (!known) throw new Error(`No scan for migration "${request.name}"`);
  const store = HistoryStore.open({
    path: request.path,
    root: dirname(request.path),
    readOnly: true,
  });
  try {
    // Every page is read once, in order: a small page cache keeps this thread's memory small.
    store.db.exec("PRAGMA cache_size = -2000");
    known.prepare(store);
    const garbage = new GarbageRelease();
    const blocks = new BlockMap(store, request.name, request.per, request.batches);
    const actual = new BlockDigests(blocks.count, request.actual);
    let cursor: string | null = request.cursor;
    let steps = 0;
    while (cursor !== null) {
      const started = performance.now();
      // One snapshot a step, as the migration's own scan steps read (a deferred transaction:
      // this connection never writes, and must not hold the writer's lock).
      store.db.exec("BEGIN");
      try {
        cursor = scanPiece(
          store,
          known.scan,
          cursor,
          blocks,
          actual,
          () => performance.now() - started < request.stepMs,
        );
      } finally {
        store.db.exec("COMMIT");
      }
      scope.postMessage({ type: "step", cursor, actual: actual.toHex() });
      // A step leaves a string behind for each instance it read (about 100,000 in its 50 ms),
      // which V8 let pile up for tens of MiB: collected every tenth step, and the pages that
      // frees given back once (see GarbageRelease.giveBack). The migration's thread, where it
      // scans alone (`scanTarget`), needs none: at 1 GB that scan held 116 to 122 MiB without
      // them, no more than the reading before it, and 123 to 124 with them.
      steps++;
      if (steps === GIVE_BACK_STEP) garbage.giveBack();
      else if (steps % COLLECT_STEPS === 0) garbage.collect();
    }
  } finally {
    store.close();
  }
}
