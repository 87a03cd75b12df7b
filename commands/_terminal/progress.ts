// The progress a capture shows on stderr while it runs: on a terminal a bar of sources and bytes
// done with the time left, for a capture, for a rebuild deriving everything again, and for
// sources derived again because what derives them changed; elsewhere (a log) a rebuild's plain
// line now and then. The time left comes from the measured rate (`TimeLeft`).

import { formatBytes, formatDuration } from "../../lib/format.ts";
import { type Estimate, type Progress, TimeLeft } from "../../lib/capture/progress.ts";
import type { Io } from "./io.ts";

/** A bar redrawn in place on `io.err`: `update` at most every 100 ms, `clear` when done. */
export interface ProgressBar {
  update(progress: Progress): void;
  clear(): void;
}

/** A progress bar drawn on `io.err` (the caller checks that stderr is a terminal). */
export function progressBar(io: Io, now: () => number = Date.now): ProgressBar {
  let last = 0;
  let shown = false;
  const timeLeft = new TimeLeft();
  return {
    update(p: Progress) {
      if (p.phase === "migrating") {
        shown = true;
        io.err("\rMigrating the store in batches (searches use the old index meanwhile)…\x1b[K");
        return;
      }
      const rebuilding = p.phase === "rebuilding";
      const rederiving = p.phase === "rederiving";
      if (rebuilding && p.bytesTotal === 0) {
        // Before the rebuild has counted what it will derive again.
        shown = true;
        io.err("\rRebuilding the index and conversations from the raw records…\x1b[K");
        return;
      }
      const at = now();
      if (p.phase !== "capturing" && !rebuilding && !rederiving) return;
      // Every report counts toward the rate; the bar is redrawn at most every 100 ms.
      const estimate = timeLeft.update(p, at);
      if (at - last < 100) return;
      last = at;
      shown = true;
      const percent = percentOf(p);
      const width = 24;
      const filled = Math.round((percent / 100) * width);
      io.err(
        `\r${rebuilding ? "Rebuilding " : rederiving ? "Deriving again " : ""}[${
          "#".repeat(filled)
        }${".".repeat(width - filled)}] ${percent}% ` +
          `${p.sourcesDone}/${p.sourcesTotal} sources ${formatBytes(p.bytesDone)}/${
            formatBytes(p.bytesTotal)
          } ${leftText(estimate)}\x1b[K`,
      );
    },
    clear() {
      if (shown) io.err("\r\x1b[K");
      shown = false;
    },
  };
}

/** Whole percent of the bytes this phase set out to do (floored: 100 only when all are). */
function percentOf(p: Progress): number {
  return p.bytesTotal > 0 ? Math.floor(Math.min(1, p.bytesDone / p.bytesTotal) * 100) : 0;
}

/** `1.2 MB/s, 4 min 05 s left`, or `estimating the time left` until a rate was measured. */
function leftText(estimate: Estimate): string {
  if (estimate.leftMs === null || estimate.bytesPerSecond === null) {
    return "estimating the time left";
  }
  return `${formatBytes(Math.round(estimate.bytesPerSecond))}/s, ${
    formatDuration(estimate.leftMs)
  } left`;
}

/**
 * A rebuild's progress as plain lines on `io.err`, for a log rather than a terminal: one as it
 * starts, one when it has counted its work, then at most one every `intervalMs`, and one when
 * every byte is done. The rate behind the time left is measured over the same interval.
 */
export function rebuildLines(
  io: Io,
  options: { intervalMs: number; now?: () => number },
): (progress: Progress) => void {
  const now = options.now ?? Date.now;
  const timeLeft = new TimeLeft({ sampleMs: Math.min(options.intervalMs, 1000) });
  let last: number | null = null;
  let noted = false;
  let ended = false;
  return (p) => {
    if (p.phase !== "rebuilding" || ended) return;
    if (p.bytesTotal === 0) {
      // Before it counts its work it empties the text index and the tables derived.
      if (!noted) {
        io.err("Rebuilding: clearing what was derived, then counting what to derive again\n");
      }
      noted = true;
      return;
    }
    const at = now();
    const estimate = timeLeft.update(p, at);
    const done = p.bytesDone >= p.bytesTotal && p.sourcesDone >= p.sourcesTotal;
    if (!done && last !== null && at - last < options.intervalMs) return;
    last = at;
    ended = done;
    const what = `${percentOf(p)}% (${formatBytes(p.bytesDone)} of ${
      formatBytes(p.bytesTotal)
    }, ${p.sourcesDone} of ${p.sourcesTotal} sources)`;
    // The last step, writing it to the store, takes a moment too (2 s at 1 GB).
    const next = done ? "derived again; writing it to the store" : leftText(estimate);
    io.err(`Rebuilding: ${what}, ${next}\n`);
  };
}
