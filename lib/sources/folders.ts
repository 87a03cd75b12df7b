// The folder listings discovery reads through. Listing a folder costs five system calls and an
// object per entry, stat-ing it one call: at 100,000 transcripts in 10,000 folders the listings
// were a third of a pass that found nothing new. A folder's mtime moves whenever an entry is
// added, removed or renamed in it, so a folder whose mtime, inode and device are those it had
// when it was listed holds the same entries, and its listing is taken from the last pass (kept in
// the store by the capture run). What that does not tell, and is still looked at every pass: a
// file written to (each file is stat-ed, `discover.ts`) and a subfolder's own entries (each
// subfolder is looked at in turn). A listing is trusted only when the folder was last changed
// well before it was listed (`SETTLED_MS`), so a change within the same tick of a coarse clock
// (FAT's two seconds, HFS+'s one) is not missed; a folder without an inode number or an mtime
// (some file systems) is listed every time.

/** A folder's entries in name order: `kinds[i]` is `f` (file), `d` (folder), `l` (link) or `o`. */
export interface Listing {
  readonly names: readonly string[];
  readonly kinds: string;
}

/** A listing as kept between passes: the folder's mtime, inode, device, when, and its entries. */
type KeptListing = [mtimeMs: number, ino: number, dev: number, listedAt: number, entries: string];

/** The listings kept by a pass, by folder. */
export type KeptListings = Record<string, KeptListing>;

/** How long before it was listed a folder must have last changed for its listing to be kept. */
export const SETTLED_MS = 2000;

/** Folder listings for one pass, from what the last pass kept where the folders did not change. */
export class Folders {
  readonly #kept: () => KeptListings;
  readonly #now: () => number;
  #last: KeptListings | undefined;
  /**
   * The folders listed or looked at in this pass, by path: what is kept of each, or its listing
   * where nothing can be kept (no inode or mtime). A kept listing is held once, as its text, and
   * parsed again when the folder is asked for again: at 100,000 sources the names held as
   * strings in arrays beside their text were 13.5 MB of a capture's 71 MB of live heap.
   */
  readonly #seen = new Map<string, KeptListing | Listing>();
  #relisted = 0;

  /** `kept` gives what the last pass kept (read on first use: a pass may list nothing). */
  constructor(kept: () => KeptListings | undefined, now: () => number = Date.now) {
    this.#kept = () => kept() ?? {};
    this.#now = now;
  }

  /**
   * The entries of `dir` (a link to a folder is followed, as `Deno.readDirSync` does). Throws
   * as `Deno.readDirSync` does for a folder that is missing, not a folder, or unreadable.
   */
  list(dir: string): Listing {
    const seen = this.#seen.get(dir);
    if (seen) return isKept(seen) ? parseEntries(seen[4]) : seen;
    const listedAt = this.#now();
    const stat = Deno.statSync(dir);
    const mtime = stat.mtime?.getTime() ?? null;
    this.#last ??= this.#kept();
    const last = this.#last[dir];
    if (
      last && stat.isDirectory && mtime !== null && stat.ino !== null && last[0] === mtime &&
      last[1] === stat.ino && last[2] === stat.dev && last[0] < last[3] - SETTLED_MS
    ) {
      this.#seen.set(dir, last);
      return parseEntries(last[4]);
    }
    const listing = readListing(dir);
    this.#relisted++;
    const ino = stat.ino;
    this.#seen.set(
      dir,
      mtime !== null && ino !== null
        ? [mtime, ino, stat.dev, listedAt, entriesText(listing)]
        : listing,
    );
    return listing;
  }

  /**
   * What to keep for the next pass, or null when it would be what the last pass kept: the
   * listings of the folders this pass looked at (a folder it did not look at is dropped).
   */
  toKeep(): KeptListings | null {
    const last = this.#last ?? this.#kept();
    const kept: KeptListings = {};
    let count = 0;
    for (const [dir, seen] of this.#seen) {
      if (!isKept(seen)) continue;
      kept[dir] = seen;
      count++;
    }
    if (this.#relisted === 0 && count === Object.keys(last).length) return null;
    return kept;
  }
}

function isKept(seen: KeptListing | Listing): seen is KeptListing {
  return Array.isArray(seen);
}

/** A folder's entries read from disk, in name order. */
export function readListing(dir: string): Listing {
  const entries = [...Deno.readDirSync(dir)];
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let kinds = "";
  for (const entry of entries) {
    kinds += entry.isSymlink ? "l" : entry.isDirectory ? "d" : entry.isFile ? "f" : "o";
  }
  return { names: entries.map((entry) => entry.name), kinds };
}

/** A listing as one string: each entry its kind then its name, separated by `/`. */
function entriesText(listing: Listing): string {
  return listing.names.map((name, i) => listing.kinds[i] + name).join("/");
}

function parseEntries(text: string): Listing {
  if (text === "") return { names: [], kinds: "" };
  const entries = text.split("/");
  return {
    names: entries.map((entry) => entry.slice(1)),
    kinds: entries.map((e) => e[0]).join(""),
  };
}
