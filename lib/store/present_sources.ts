// The store's sources as they are on disk now: how much of their bytes is captured, and which
// end in a line that was never finished. The file sizes come from the files themselves, so a
// source never read to the end counts whole in the total.

import { pathOfLocator } from "../sources/adapter.ts";
import { rowsById } from "./array_rows.ts";
import type { HistoryStore } from "./db.ts";
import { keepWithRun, type KeptAt, keptSinceLastRun } from "./kept.ts";

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

/** A source's columns as `presentOf` reads them. */
type Row = [
  id: number,
  locator: string,
  format: string,
  cursor: number,
  size: number | null,
  mtimeMs: number | null,
];

/** What a file on disk is now, as far as the share captured needs it. */
export interface OnDisk {
  size: number;
  mtimeMs: number | null;
}

/** The sources on disk and how much of them is captured, as `status` shows them. */
export interface PresentSources {
  captured: CapturedShare;
  unfinished: UnfinishedLine[];
}

/**
 * Looks at every file source the store knows and has not seen go: one `lstat` each (some
 * 10 µs), no reading. Row sources (another program's database) have no byte measure and are
 * left out. A compressed source's cursor counts decompressed bytes, so it counts as captured
 * only once it was read to the end unchanged.
 */
export function presentSources(store: HistoryStore, now: number): PresentSources {
  return presentOf(store, now, lstatOf);
}

/**
 * What a capture pass saw of the sources (`seen`: the files it found, by locator; any other
 * source still kept is looked at), kept in `meta` so that `status` need not look at every file
 * again: on a store of ten gigabytes that is 100,000 files, a second or more. A pass that found
 * the same files, none changed since they were read (`unchanged`), leaves the figures as they
 * were kept, if they were kept since `since` (the run before): only when they were seen moves,
 * and the sources' rows are not read again. `keptPresentSources` reads them.
 */
export function keepPresentSources(
  store: HistoryStore,
  seen: Pick<ReadonlyMap<string, OnDisk>, "size" | "get">,
  now: number,
  options: { unchanged: boolean; since: number },
): void {
  keepWithRun<Kept>(store, PRESENT_KEY, now, options, () => {
    const present = presentOf(store, now, (path) => seen.get(path) ?? lstatOf(path));
    return {
      files: seen.size,
      captured: present.captured,
      unfinished: present.unfinished.map(({ ageMs: _, ...line }) => line),
    };
  }, (kept) => kept.files === seen.size);
}

/** What `keepPresentSources` keeps: of how many files found, and what it saw. */
interface Kept {
  files: number;
  captured: CapturedShare;
  unfinished: Omit<UnfinishedLine, "ageMs">[];
}

/**
 * The sources as the last capture saw them, with their unfinished lines' age at `now`, and when
 * it saw them; null when no capture kept them (a store from an older build), or a run since did
 * not.
 */
export function keptPresentSources(
  store: HistoryStore,
  now: number,
): (PresentSources & KeptAt) | null {
  const kept = keptSinceLastRun<Kept>(store, PRESENT_KEY);
  if (!kept) return null;
  return {
    at: kept.at,
    captured: kept.captured,
    unfinished: kept.unfinished.map((line) => ({
      ...line,
      ageMs: Math.max(0, now - line.writtenAt),
    })),
  };
}

const PRESENT_KEY = "present_sources";

function lstatOf(path: string): OnDisk | null {
  try {
    const stat = Deno.lstatSync(path);
    return { size: stat.size, mtimeMs: stat.mtime?.getTime() ?? null };
  } catch {
    // Gone since the last capture (it marks it), or unreadable (it names the error).
    return null;
  }
}

function presentOf(
  store: HistoryStore,
  now: number,
  onDisk: (path: string) => OnDisk | null,
): PresentSources {
  // A page at a time (at 100,000 sources, SQLite's row objects all at once were 138 MiB, the
  // peak of a 10 GB capture from empty, as keepPresentSources runs as it ends), as arrays, in the
  // table's order (`rowsById`); objects in the locators' order took twice the time. The few
  // unfinished lines are put in that order after.
  const rows = rowsById(
    (sql) => store.stmt(sql),
    "sources",
    "id, locator, format, cursor, size, mtime_ms",
    { where: "gone = 0 AND format != 'rows'" },
  );
  let bytes = 0;
  let of = 0;
  const unfinished: UnfinishedLine[] = [];
  for (const [, locator, format, cursor, size, mtimeMs] of rows as Iterable<Row>) {
    const stat = onDisk(pathOfLocator(locator));
    if (stat === null) continue;
    of += stat.size;
    const mtime = stat.mtimeMs;
    // Read to the end with the file as it is now (capture records the size it saw then).
    const readToEnd = size === stat.size && mtimeMs === mtime;
    if (format === "jsonl.zst") {
      if (readToEnd) bytes += stat.size;
      continue;
    }
    bytes += Math.min(cursor, stat.size);
    if (readToEnd && cursor < stat.size && mtime !== null) {
      unfinished.push({
        locator,
        bytes: stat.size - cursor,
        writtenAt: mtime,
        ageMs: Math.max(0, now - mtime),
      });
    }
  }
  unfinished.sort((a, b) => byCodeUnits(a.locator, b.locator));
  return { captured: { bytes, of, ratio: of > 0 ? bytes / of : 1 }, unfinished };
}

/** Orders strings by their UTF-16 code units (as `<` does), for `Array.prototype.sort`. */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A share as a percentage with one decimal, never rounded up to 100.0% before it is whole. */
export function sharePercent(ratio: number): string {
  // The epsilon keeps 0.973 (972.9999… thousandths in floating point) from showing as 97.2%.
  return `${(Math.floor(ratio * 1000 + 1e-9) / 10).toFixed(1)}%`;
}
