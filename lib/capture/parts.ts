// The parts a pass is made of, wired together once for the loop (`engine.ts`) and for rebuild
// (`rebuild.ts`); each part is given only the others it works with.

import type { Operation } from "../stage_markers.ts";
import type { HistoryStore } from "../store/db.ts";
import { BatchPlanner } from "./batch_plan.ts";
import { BatchPipeline } from "./batch_pipeline.ts";
import type { ConversationMode } from "./conversation_rows.ts";
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
 * The parts of a pass run with `options`, whose batches write conversations as `mode` says
 * (`ConversationMode`): capture adds to them, `rederive.ts` replaces its sources' shares and sums
 * the rows again after, a rebuild creates them again with the ids they had.
 */
export function partsOf(options: PassOptions, mode: ConversationMode = "add"): Parts {
  const { store, redact } = options;
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const op = options.markers ?? NO_MARKERS;
  const now = options.now ?? Date.now;
  const tally = new Tally();
  const progress = new ProgressTracker(store, now, options.onProgress);
  const tombstones = new Tombstones(store);
  const planner = new BatchPlanner(redact, options.projectOf, mode);
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
