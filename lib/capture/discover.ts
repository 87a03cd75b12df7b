// The sources of a pass: what every adapter discovers (or the watcher's last list), each looked
// at with lstat. A symlink or anything but a regular file is skipped and counted, never read.
// At 100,000 sources a pass holds only the sources that changed: the others are marked found in
// the store's list and counted, nothing more.

import type { Adapter, DiscoverContext, SourceRef } from "../sources/adapter.ts";
import type { OnDisk } from "../store/present_sources.ts";
import { needsWork, type SourcesAside } from "./identity.ts";
import { type FileSeen, type KnownSource, lookAt, NOT_FOUND } from "./source.ts";

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

/** The sources found: those that may hold something new, and how many there were. */
export interface Discovered {
  /** The sources found that are new, or whose files changed since they were read, in order. */
  changed: Found[];
  /** How many sources were found (regular files, each looked at once). */
  count: number;
}

/**
 * The sources to look at, each once, with their files' stat. A source of `known` whose file is
 * as it was read is only marked `found` and counted: a pass holds nothing else of it, as most
 * of 100,000 sources are. `known` may still be being read (`loadSourcesAside`): the files are
 * found and looked at meanwhile, and held until it is there; once it is, a file its worker looked
 * at already is not looked at again.
 */
export async function discoverSources(
  options: DiscoverOptions,
  known: ReadonlyMap<string, KnownSource> | SourcesAside,
): Promise<Discovered> {
  const changed: Found[] = [];
  let count = 0;
  // Locators looked at that the store does not know, or that were no regular file.
  const others = new Set<string>();
  const skipped = options.discover.skipped;
  const aside = known instanceof Map ? null : known as SourcesAside;
  let rows = aside ? aside.rows : known as ReadonlyMap<string, KnownSource>;
  const looked: Looked[] = [];
  const consider = (
    adapter: Adapter,
    ref: SourceRef,
    stat: FileSeen | string,
    row = rows!.get(ref.locator),
  ) => {
    if (row?.found || others.has(ref.locator)) return;
    if (typeof stat === "string") {
      if (stat !== NOT_FOUND) skipped.set(stat, (skipped.get(stat) ?? 0) + 1);
      others.add(ref.locator);
      return;
    }
    count++;
    const found = { adapter, ref, stat };
    if (row) row.found = true;
    else others.add(ref.locator);
    if (needsWork(found, row)) changed.push(found);
  };
  const look = (adapter: Adapter, ref: SourceRef) => {
    if (options.only && !options.only.has(ref.locator)) return;
    if (!rows) {
      looked.push({ adapter, ref, stat: lookAt(ref.path) });
      return;
    }
    // A source found twice is looked at once.
    const row = rows.get(ref.locator);
    if (row?.found || others.has(ref.locator)) return;
    consider(adapter, ref, (row && aside?.seen(row, ref.path)) ?? lookAt(ref.path), row);
  };
  const settle = () => {
    for (const { adapter, ref, stat } of looked) consider(adapter, ref, stat);
    looked.length = 0;
  };
  // The sources in, the files looked at so far are settled, the next at once: what is held
  // meanwhile survives collections, which copy it.
  if (!rows) {
    aside!.known.then((map) => {
      rows = map;
      settle();
    });
  }
  let waiting = 0;
  /** A turn of the event loop now and then, for the worker's messages to come in. */
  const letIn = async () => {
    if (aside?.working && ++waiting % LET_IN_EVERY === 0) {
      await new Promise((ok) => setTimeout(ok, 0));
    }
  };
  const settled = async () => {
    rows ??= await aside!.known;
    settle();
  };
  if (options.sources) {
    for (const { adapter, ref } of options.sources) {
      look(adapter, ref);
      await letIn();
    }
    await settled();
    return { changed, count };
  }
  const discovered: { adapter: Adapter; ref: SourceRef }[] | undefined = options.onDiscovered
    ? []
    : undefined;
  for (const adapter of options.adapters) {
    for await (const ref of adapter.discover(options.discover)) {
      discovered?.push({ adapter, ref });
      look(adapter, ref);
      await letIn();
    }
  }
  await settled();
  if (discovered) options.onDiscovered?.(discovered);
  return { changed, count };
}

/** A source looked at before the store's sources were there to tell whether it changed. */
interface Looked {
  adapter: Adapter;
  ref: SourceRef;
  stat: FileSeen | string;
}

/** Files looked at between turns of the event loop while a worker reads and looks aside. */
const LET_IN_EVERY = 2000;

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
  // Held until the pass ends, when every source is read: an index into two arrays of numbers,
  // not the 105,609 stats of a 10 GB capture from empty (10 MiB of objects and boxed numbers).
  const changed = new Map<string, number>();
  const sizes = new Float64Array(discovered.changed.length);
  const mtimes = new Float64Array(discovered.changed.length);
  discovered.changed.forEach(({ ref, stat }, i) => {
    changed.set(ref.path, i);
    sizes[i] = stat.size;
    mtimes[i] = stat.mtimeMs ?? NaN;
  });
  return {
    size: discovered.count,
    get(path) {
      const i = changed.get(path);
      if (i !== undefined) {
        const mtimeMs = mtimes[i]!;
        return { size: sizes[i]!, mtimeMs: Number.isNaN(mtimeMs) ? null : mtimeMs };
      }
      const row = known.get(path);
      return row?.found && row.size !== null
        ? { size: row.size, mtimeMs: row.mtime_ms }
        : undefined;
    },
  };
}
