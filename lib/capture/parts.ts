// The parts a pass is made of, wired together once for the loop (`engine.ts`) and for rebuild
// (`rebuild.ts`); each part is given only the others it works with.

import type { Operation } from "../stage_markers.ts";
import type { HistoryStore } from "../store/db.ts";
import { BatchPlanner } from "./batch_plan.ts";
import { BatchPipeline } from "./batch_pipeline.ts";
import { Deriver, Tombstones } from "./derive.ts";
import type { PassOptions } from "./engine.ts";
import { GiantLines } from "./giant_lines.ts";
import { DEFAULT_LIMITS, type Limits } from "./limits.ts";
import { ProgressTracker } from "./progress.ts";
import { StoreRecall } from "./recall.ts";
import { Tally } from "./summary.ts";

/** Runs steps without markers. */
const NO_MARKERS: Operation = {
  id: "none",
  stage: async (_step, fn) => await fn(),
  stageSync: (_step, fn) => fn(),
  begin: (step) => ({ step, seq: 0, finish() {}, fail() {} }),
};

/** A pass's parts. */
export interface Parts {
  store: HistoryStore;
  limits: Limits;
  op: Operation;
  now: () => number;
  tally: Tally;
  progress: ProgressTracker;
  deriver: Deriver;
  pipeline: BatchPipeline;
  giantLines: GiantLines;
}

/**
 * The parts of a pass run with `options`; with `rederive`, of one deriving stored sources again
 * in place (`rederive.ts`), whose conversation rows are summed again from their shares after.
 */
export function partsOf(options: PassOptions, rederive = false): Parts {
  const { store, redact } = options;
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const op = options.markers ?? NO_MARKERS;
  const now = options.now ?? Date.now;
  const tally = new Tally();
  const progress = new ProgressTracker(store, now, options.onProgress);
  const tombstones = new Tombstones(store);
  const planner = new BatchPlanner(redact, options.projectOf, rederive);
  const pipeline = new BatchPipeline({
    store,
    op,
    limits,
    now,
    planner,
    tally,
    progress,
    tombstones,
    startWriter: options.startWriter,
  });
  const recall = new StoreRecall(store);
  const deriver = new Deriver(
    redact,
    limits.chunkSize,
    tombstones,
    (ctx, batch, key) => pipeline.lookup(ctx, batch, key),
    recall,
  );
  const giantLines = new GiantLines({
    store,
    op,
    redact,
    chunkSize: limits.chunkSize,
    pieceSize: limits.textPiece,
    now,
    planner,
    tally,
    progress,
    tombstones,
    recall,
  });
  return { store, limits, op, now, tally, progress, deriver, pipeline, giantLines };
}
