// What a capture run says on a terminal: its one-line summary, its warnings (drift, empty
// sources, skipped files) and the line for a source it could not read; used by `reindex` (once
// and in --watch), `start`, and `status` for the last run.

import { formatBytes, formatDuration, plural } from "../../lib/format.ts";
import type { CaptureSummary } from "../../lib/capture/summary.ts";
import { describeDrift } from "../../lib/store/status.ts";
import { safeText } from "../../lib/safe_text.ts";

/** What a capture or rebuild stopped by Ctrl-C says (a stopped run leaves the store consistent). */
export const STOPPED = "stopped; run again to finish";

/** The one-line summary printed after a capture. */
export function summaryLine(summary: CaptureSummary): string {
  const parts = [
    `Captured ${plural(summary.records, "new record")}`,
    `(${plural(summary.conversations, "new conversation")})`,
    `from ${summary.changed} of ${plural(summary.sources, "source")},`,
    `${formatBytes(summary.bytes)} in ${formatDuration(summary.ms)}`,
  ];
  let line = parts.join(" ");
  if (summary.stoppedBy === "deadline") {
    line += "; stopped at the time limit, the rest follows next run";
  }
  if (summary.stoppedBy === "signal") line += `; ${STOPPED}`;
  if (summary.stoppedBy === "ingest-off") line += "; stopped because capture was switched off";
  if (summary.gone) line += `; ${plural(summary.gone, "source")} gone upstream (records kept)`;
  return line;
}

/**
 * Warning lines for a capture: drift, empty sources, new generations, skipped files. Ready for a
 * terminal: drift names and paths come from the transcripts, so each line passes the filter.
 */
export function warnings(summary: CaptureSummary): string[] {
  const lines = summary.drift.map(describeDrift);
  for (const path of summary.empty) {
    lines.push(`"${path}" yielded no conversation from a non-empty file`);
  }
  for (const skipped of Object.entries(summary.skipped)) {
    lines.push(`${plural(skipped[1], "file")} skipped: ${skipped[0]}`);
  }
  return lines.map((line) => safeText(line));
}

/** The line for a source that could not be read, its parts filtered. */
export function sourceError(e: { locator: string; message: string }): string {
  return `cannot read "${safeText(e.locator)}": ${safeText(e.message)}`;
}
