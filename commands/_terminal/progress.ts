// The progress bar a capture draws on stderr while it runs (only on a terminal): sources and
// bytes done with the time left, for a capture, for a rebuild deriving everything again, and for
// sources derived again because what derives them changed.

import { formatBytes, formatDuration } from "../../lib/format.ts";
import { progressView } from "../../lib/status.ts";
import type { Progress } from "../../lib/capture/progress.ts";
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
      if (at - last < 100 || (p.phase !== "capturing" && !rebuilding && !rederiving)) return;
      last = at;
      shown = true;
      const view = progressView(p, at);
      const width = 24;
      const filled = Math.round((view.percent / 100) * width);
      const eta = view.etaMs !== null ? formatDuration(view.etaMs) : "…";
      io.err(
        `\r${rebuilding ? "Rebuilding " : rederiving ? "Deriving again " : ""}[${
          "#".repeat(filled)
        }${".".repeat(width - filled)}] ${view.percent}% ` +
          `${p.sourcesDone}/${p.sourcesTotal} sources ${formatBytes(p.bytesDone)}/${
            formatBytes(p.bytesTotal)
          } ${eta} left\x1b[K`,
      );
    },
    clear() {
      if (shown) io.err("\r\x1b[K");
      shown = false;
    },
  };
}
