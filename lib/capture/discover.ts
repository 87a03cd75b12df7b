// The sources of a pass: what every adapter discovers (or the watcher's last list), each looked
// at with lstat. A symlink or anything but a regular file is skipped and counted, never read.
// At 100,000 sources a pass holds only the sources that changed: the others are counted and
// their locators kept, nothing more.

import type { Adapter, DiscoverContext, SourceRef } from "../sources/adapter.ts";
import type { OnDisk } from "../store/present_sources.ts";
import { type FileSeen, fileSeen, type KnownSource } from "./source.ts";

/** A source found, with its file as it is now. */
export interface Found {
  adapter: Adapter;
  ref: SourceRef;
  stat: FileSeen;
}

/** Where to look, and which of the sources found to keep. */
export interface DiscoverOptions {
  adapters: readonly Adapter[];
  discover: DiscoverContext;
  /** Only these locators; all when undefined. */
  only?: ReadonlySet<string>;
  /** Sources to look at instead of discovering them. */
  sources?: readonly { adapter: Adapter; ref: SourceRef }[];
  /** Told what discovery found. */
  onDiscovered?: (sources: { adapter: Adapter; ref: SourceRef }[]) => void;
}

/** The sources found: those that may hold something new, and the locators of all of them. */
export interface Discovered {
  /** The sources found that `unchanged` did not pass over, in the order found. */
  changed: Found[];
  /** The locator of every source found (a regular file, looked at once). */
  present: Set<string>;
}

/**
 * The sources to look at, each once, with their files' stat; those `unchanged` says are as they
 * were read are only counted in `present`.
 */
export async function discoverSources(
  options: DiscoverOptions,
  unchanged: (found: Found) => boolean = () => false,
): Promise<Discovered> {
  const changed: Found[] = [];
  const present = new Set<string>();
  const seen = new Set<string>();
  const skipped = options.discover.skipped;
  const consider = (adapter: Adapter, ref: SourceRef) => {
    if (seen.has(ref.locator)) return;
    seen.add(ref.locator);
    if (options.only && !options.only.has(ref.locator)) return;
    let stat: Deno.FileInfo;
    try {
      stat = Deno.lstatSync(ref.path);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return;
      throw err;
    }
    if (!stat.isFile) {
      const reason = stat.isSymlink ? "symlink" : "not a regular file";
      skipped.set(reason, (skipped.get(reason) ?? 0) + 1);
      return;
    }
    present.add(ref.locator);
    const found = { adapter, ref, stat: fileSeen(stat) };
    if (!unchanged(found)) changed.push(found);
  };
  if (options.sources) {
    for (const { adapter, ref } of options.sources) consider(adapter, ref);
    return { changed, present };
  }
  const discovered: { adapter: Adapter; ref: SourceRef }[] | undefined = options.onDiscovered
    ? []
    : undefined;
  for (const adapter of options.adapters) {
    for await (const ref of adapter.discover(options.discover)) {
      discovered?.push({ adapter, ref });
      consider(adapter, ref);
    }
  }
  if (discovered) options.onDiscovered?.(discovered);
  return { changed, present };
}

/** The files a whole pass found, by path, as what `status` shows of them needs them. */
export interface SeenFiles {
  /** How many files were found. */
  readonly size: number;
  /** The size and mtime of a file found, by path; undefined for one not found. */
  get(path: string): OnDisk | undefined;
}

/**
 * The files of `discovered`: those that changed as they were seen, the others as their sources'
 * rows (`known`) say, since that is how they were found.
 */
export function seenFiles(
  discovered: Discovered,
  known: ReadonlyMap<string, KnownSource>,
): SeenFiles {
  const changed = new Map(discovered.changed.map((f) => [f.ref.path, f.stat]));
  return {
    size: discovered.present.size,
    get(path) {
      const stat = changed.get(path);
      if (stat) return stat;
      const row = discovered.present.has(path) ? known.get(path) : undefined;
      return row && row.size !== null ? { size: row.size, mtimeMs: row.mtime_ms } : undefined;
    },
  };
}
