// How much disk a run needs, worked out before it starts from the corpus size and the parts
// selected, and how much the work folder's file system has free (`df`: Deno has no statfs).
// What stays for the whole run (the corpus, the store, its WAL) is added to the largest of what
// one part makes and removes again (the parts run one after another).

import { dirname } from "node:path";
import { type Part, slicedParts } from "./_parts.ts";
import { MACHINE_BYTES, MACHINES } from "./_team.ts";

/** A store's size over its source bytes at most (the store_ratio target). */
export const STORE_RATIO = 1.3;
/**
 * The WAL between two checkpoints: capture checkpoints every 256 MiB. One batch's merge of the
 * index's largest segments grows it further, for seconds (0.38 GB at 1 GB, 2.3 GB at 10 GB), which
 * the store's allowance at 1.3 × the source, where it takes 1.01 to 1.06, leaves room for.
 */
const WAL_ALLOWANCE = 256e6;
/**
 * The team database's size over the captured bytes pushed into it (its text, the tsvectors and
 * their GIN index; raw bytes stay home): 262 MB for 132.8 MB at 200 MB. And its WAL, which
 * max_wal_size (1 GB) bounds.
 */
export const TEAM_RATIO = 2;
const TEAM_WAL = 1e9;

/** What the disk plan is computed from. */
export interface DiskInput {
  size: number;
  parts: readonly Part[];
  /** Whether the corpus is generated (false: kept and reused, or not needed). */
  generatesCorpus: boolean;
  /** Whether the store is made (some part needs it). */
  makesStore: boolean;
  captureRounds: number;
  hugeLine: number;
  upgradeSize: number;
  relevanceSize: number;
  /** The slice's size: smaller than `size`, a corpus and a store of its own. */
  sliceSize: number;
}

/** One line of the plan: what takes the bytes. */
export interface DiskItem {
  what: string;
  bytes: number;
}

/** What a run needs: the items that stay, the largest part's own, and their sum. */
export interface DiskPlan {
  stays: DiskItem[];
  /** The part whose own files are the largest, or null when no part makes any. */
  largest: DiskItem | null;
  needed: number;
}

/** The disk a run of `input` needs at its peak; see the file comment. */
export function diskPlan(input: DiskInput): DiskPlan {
  const { size, parts } = input;
  const store = STORE_RATIO * size;
  const stays: DiskItem[] = [];
  if (input.generatesCorpus) stays.push({ what: "the corpus", bytes: size });
  if (input.makesStore) {
    stays.push({ what: "the store", bytes: store }, { what: "its WAL", bytes: WAL_ALLOWANCE });
  }
  // A smaller corpus of its own, captured by three builds (the upgrade) or two (relevance).
  const own = (bytes: number, stores: number) => bytes + stores * STORE_RATIO * bytes;
  // The slice stays from the first part that makes it to the end of the run.
  const sliced = input.sliceSize < size;
  const slice = sliced ? STORE_RATIO * input.sliceSize : store;
  if (sliced && slicedParts(parts).length) {
    stays.push({ what: "the slice's corpus and store", bytes: own(input.sliceSize, 1) });
  }
  const byPart: Partial<Record<Part, DiskItem>> = {
    capture: {
      what: input.captureRounds > 1
        ? "capture: a scratch store per extra round"
        : "capture: the FTS ceiling's and raw inserts' databases",
      bytes: input.captureRounds > 1 ? store : size,
    },
    // With the store made, the rss part reads the first capture's peak: no store more.
    ...(input.makesStore
      ? {}
      : { rss: { what: "rss: a store captured from empty", bytes: store } }),
    watch: { what: "watch: two stores captured from empty side by side", bytes: 2 * slice },
    migration: { what: "migration: a copy of the store", bytes: slice },
    team: {
      what: `team: ${MACHINES} machines' pushes into PostgreSQL (at most ${
        MACHINE_BYTES / 1e9
      } GB each) and its WAL`,
      bytes: TEAM_RATIO * MACHINES * Math.min(size, MACHINE_BYTES) + TEAM_WAL,
    },
    rebuild: { what: "rebuild: a rebuilt copy of the store at most", bytes: store },
    huge: { what: "huge: the huge line and its store", bytes: own(input.hugeLine, 1) },
    upgrade: {
      what: "upgrade: its corpus and three stores",
      bytes: input.upgradeSize === size ? 3 * STORE_RATIO * size : own(input.upgradeSize, 3),
    },
    relevance: { what: "relevance: its corpus and two stores", bytes: own(input.relevanceSize, 2) },
  };
  let largest: DiskItem | null = null;
  for (const part of parts) {
    const item = byPart[part];
    if (item && item.bytes > (largest?.bytes ?? 0)) largest = item;
  }
  const needed = stays.reduce((n, item) => n + item.bytes, 0) + (largest?.bytes ?? 0);
  return { stays, largest, needed: Math.ceil(needed) };
}

/**
 * Bytes free for an unprivileged writer on the file system that holds `path` (or, when it does
 * not exist yet, its nearest parent that does), from `df -B1 --output=avail`; null when df
 * cannot say.
 */
export async function freeBytes(path: string): Promise<number | null> {
  let at = path;
  while (true) {
    try {
      Deno.statSync(at);
      break;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
      const up = dirname(at);
      if (up === at) return null;
      at = up;
    }
  }
  try {
    const out = await new Deno.Command("df", {
      args: ["-B1", "--output=avail", at],
      stdout: "piped",
      stderr: "null",
    }).output();
    if (!out.success) return null;
    const last = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)?.trim() ?? "";
    return /^\d+$/.test(last) ? Number(last) : null;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null; // no df here
    throw err;
  }
}
