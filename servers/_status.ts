// What the status page and `GET /api/status` show: the store's status, whether capture is on and
// running (with percentage and ETA), drift, snapshots and unclosed stage markers, through the gate.

import { join } from "node:path";
import { ingestOffReason, LATCH_KEY, type LatchedFailure } from "../lib/capture.ts";
import { storeExists } from "../lib/context.ts";
import { isLockHeld } from "../lib/lock.ts";
import { stageMarkersLocation, unclosed, type UnclosedStep } from "../lib/stage_markers.ts";
import type { Progress } from "../lib/store/ingest.ts";
import { describeDrift, type StoreStatus, storeStatus } from "../lib/store/status.ts";
import type { RunView } from "./_capture.ts";
import type { Services } from "./_deps.ts";
import { redactDeep } from "./_redact.ts";

/** Capture progress with what the page shows of it. */
export type ProgressView = Progress & {
  /** Whole percent of the bytes captured. */
  percent: number;
  /** Estimated time left, or null while too little is done to tell. */
  etaMs: number | null;
};

/** The dashboard's status. */
export interface StatusView {
  capture: {
    on: boolean;
    offReason: string | null;
    phase: "never run" | "idle" | "capturing" | "failed (latched)";
    /** A capture runs now, here or in another process. */
    running: boolean;
    latched: LatchedFailure | null;
    /** Progress of the running capture (null when none runs). */
    progress: ProgressView | null;
    /** The last capture this dashboard started. */
    run: RunView | null;
  };
  /** The store's status, or null before the first capture. */
  store: StoreStatus | null;
  /** Format drift, one human line each. */
  drift: string[];
  /** Plain-text snapshots taken before compaction. */
  snapshots: { count: number; bytes: number };
  stageMarkers: { enabled: boolean; off: string | null; unclosed: UnclosedStep[] };
}

/** Gathers the status (the store part as stage `dashboard.status`). */
export async function statusView(svc: Services): Promise<StatusView> {
  const { ctx } = svc;
  const off = ingestOffReason(ctx);
  const running = svc.capture.running || isLockHeld(join(ctx.paths.run, "capture.lock"));
  let store: StoreStatus | null = null;
  let latched: LatchedFailure | null = null;
  if (storeExists(ctx)) {
    svc.op.stageSync("dashboard.status", () => {
      const opened = svc.openStore({ mustExist: true });
      try {
        store = storeStatus(opened);
        latched = opened.getMeta<LatchedFailure>(LATCH_KEY) ?? null;
      } finally {
        opened.close();
      }
    });
  }
  const status = store as StoreStatus | null;
  const progress = running && status?.progress ? progressView(status.progress, svc.now()) : null;
  const health = svc.markers.health();
  const view: StatusView = {
    capture: {
      on: off === null,
      offReason: off,
      phase: latched
        ? "failed (latched)"
        : running
        ? "capturing"
        : status === null
        ? "never run"
        : "idle",
      running,
      latched,
      progress,
      run: svc.capture.current,
    },
    store: status,
    drift: (status?.drift ?? []).map(describeDrift),
    snapshots: snapshots(ctx.paths.pruneArchives),
    stageMarkers: {
      enabled: health.enabled,
      off: health.off ?? null,
      unclosed: await openSteps(svc),
    },
  };
  return redactDeep(view, svc.redact);
}

/** Percentage and time left of a capture's progress at `now`. */
export function progressView(p: Progress, now: number): ProgressView {
  const ratio = p.bytesTotal > 0 ? Math.min(1, p.bytesDone / p.bytesTotal) : 0;
  const elapsed = Math.max(0, now - p.startedAt);
  return {
    ...p,
    percent: Math.floor(ratio * 100),
    etaMs: ratio > 0.02 && ratio < 1 ? Math.round((elapsed / ratio) * (1 - ratio)) : null,
  };
}

async function openSteps(svc: Services): Promise<UnclosedStep[]> {
  let path: string;
  try {
    path = stageMarkersLocation(svc.ctx.env).path;
  } catch {
    return [];
  }
  return await unclosed(path, { now: svc.now() });
}

/** How many snapshot files there are and their size (the folder exists once compaction ran). */
function snapshots(dir: string): { count: number; bytes: number } {
  let count = 0;
  let bytes = 0;
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return { count, bytes };
  }
  for (const entry of entries) {
    if (!entry.isFile) continue;
    try {
      bytes += Deno.lstatSync(join(dir, entry.name)).size;
      count++;
    } catch {
      // Removed while counting.
    }
  }
  return { count, bytes };
}
