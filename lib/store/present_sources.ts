// The store's sources as they are on disk now: how much of their bytes is captured, and which
// end in a line that was never finished. The file sizes come from the files themselves, so a
// source never read to the end counts whole in the total.

import { pathOfLocator } from "../sources/adapter.ts";
import type { HistoryStore } from "./db.ts";

/** Bytes captured over the bytes of every source present on disk. */
export interface CapturedShare {
  bytes: number;
  of: number;
  /** `bytes / of`, 1 when there is nothing to capture. */
  ratio: number;
}

/** A source whose last bytes are a line without its newline: capture waits for the rest. */
export interface UnfinishedLine {
  locator: string;
  /** Length of the unfinished line. */
  bytes: number;
  /** When the file was last written (epoch ms). */
  writtenAt: number;
  /** How long ago that was. */
  ageMs: number;
}

interface Row {
  locator: string;
  format: string;
  cursor: number;
  size: number | null;
  mtime_ms: number | null;
}

/**
 * Looks at every file source the store knows and has not seen go: one `lstat` each (some
 * 10 µs), no reading. Row sources (another program's database) have no byte measure and are
 * left out. A compressed source's cursor counts decompressed bytes, so it counts as captured
 * only once it was read to the end unchanged.
 */
export function presentSources(
  store: HistoryStore,
  now: number,
): { captured: CapturedShare; unfinished: UnfinishedLine[] } {
  const rows = store.stmt(
    "SELECT locator, format, cursor, size, mtime_ms FROM sources WHERE gone = 0 AND format != 'rows' ORDER BY locator",
  ).all() as unknown as Row[];
  let bytes = 0;
  let of = 0;
  const unfinished: UnfinishedLine[] = [];
  for (const row of rows) {
    let stat: Deno.FileInfo;
    try {
      stat = Deno.lstatSync(pathOfLocator(row.locator));
    } catch {
      // Gone since the last capture (it marks it), or unreadable (it names the error).
      continue;
    }
    of += stat.size;
    const mtime = stat.mtime?.getTime() ?? null;
    // Read to the end with the file as it is now (capture records the size it saw then).
    const readToEnd = row.size === stat.size && row.mtime_ms === mtime;
    if (row.format === "jsonl.zst") {
      if (readToEnd) bytes += stat.size;
      continue;
    }
    bytes += Math.min(row.cursor, stat.size);
    if (readToEnd && row.cursor < stat.size && mtime !== null) {
      unfinished.push({
        locator: row.locator,
        bytes: stat.size - row.cursor,
        writtenAt: mtime,
        ageMs: Math.max(0, now - mtime),
      });
    }
  }
  return { captured: { bytes, of, ratio: of > 0 ? bytes / of : 1 }, unfinished };
}

/** A share as a percentage with one decimal, never rounded up to 100.0% before it is whole. */
export function sharePercent(ratio: number): string {
  // The epsilon keeps 0.973 (972.9999… thousandths in floating point) from showing as 97.2%.
  return `${(Math.floor(ratio * 1000 + 1e-9) / 10).toFixed(1)}%`;
}
