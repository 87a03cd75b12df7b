// The sources of a pass: what every adapter discovers (or the watcher's last list), each looked
// at with lstat. A symlink or anything but a regular file is skipped and counted, never read.

import type { Adapter, DiscoverContext, SourceRef } from "../sources/adapter.ts";
import { type FileSeen, fileSeen } from "./source.ts";

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
  /** Told the sources kept, with their files' stat (a run keeps what status shows of them). */
  onFound?: (found: readonly Found[]) => void;
}

/** The sources to look at, each once, with their files' stat. */
export async function discoverSources(options: DiscoverOptions): Promise<Found[]> {
  const found: Found[] = [];
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
    found.push({ adapter, ref, stat: fileSeen(stat) });
  };
  if (options.sources) {
    for (const { adapter, ref } of options.sources) consider(adapter, ref);
    options.onFound?.(found);
    return found;
  }
  const discovered: { adapter: Adapter; ref: SourceRef }[] = [];
  for (const adapter of options.adapters) {
    for await (const ref of adapter.discover(options.discover)) {
      discovered.push({ adapter, ref });
      consider(adapter, ref);
    }
  }
  options.onDiscovered?.(discovered);
  options.onFound?.(found);
  return found;
}
