// How fast `reindex --watch` drains a backlog: a watcher started on an empty store, timed until
// the store holds the whole corpus, against a plain `reindex` of the same corpus in the same run.

import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { commandArgs, commandEnv, peakRss } from "./_measure.ts";
import { median, taskFlags } from "./_util.ts";

/** A watcher's drain of the whole corpus against a plain capture of it, round by round. */
export interface WatchBacklog {
  /** `reindex` from an empty store, spawn to exit, each round. */
  reindexRuns: number[];
  /** Each of those runs' peak RSS in MiB (capture's peak memory from empty), and how it was read. */
  reindexRss: { mib: number; ms: number; how: string }[];
  /** `reindex --watch` from an empty store, spawn to the whole corpus stored, each round. */
  watchRuns: number[];
  /** The median watch over the median reindex; null when a watcher never finished. */
  ratio: number | null;
  /** What the store holds once captured: sources, and their cursors summed. */
  sources: number;
  cursors: number;
}

/** How often the watcher's store is looked at (the resolution of a watch time). */
const POLL_MS = 25;

/**
 * Captures the corpus of `vars` from empty `rounds` times each way, alternating, in scratch data
 * dirs under `work` (removed after): by `reindex`, then by `reindex --watch`, which is stopped
 * once its store's sources and cursors are those the plain capture left.
 */
export async function measureWatchBacklog(
  vars: Record<string, string>,
  work: string,
  rounds: number,
  log: (message: string) => void,
): Promise<WatchBacklog> {
  const flags = taskFlags("reindex");
  const plain = join(work, "data-reindex");
  const watched = join(work, "data-watch");
  const fresh = async () => {
    for (const dir of [plain, watched]) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await Deno.mkdir(dir, { recursive: true });
    }
  };
  const result: WatchBacklog = {
    reindexRuns: [],
    reindexRss: [],
    watchRuns: [],
    ratio: null,
    sources: 0,
    cursors: 0,
  };
  try {
    for (let round = 1; round <= rounds; round++) {
      await fresh();
      log(`reindex from empty (deno run ${flags.join(" ")} commands/reindex.ts), round ${round}`);
      const run = await peakRss(
        Deno.execPath(),
        commandArgs(flags, "reindex.ts", ["--quiet"]),
        commandEnv({ ...vars, LOGBOOK_DATA_DIR: plain }),
      );
      if (run.code !== 0) {
        throw new Error(`reindex failed (${run.code}): ${run.stderr.slice(-600)}`);
      }
      const done = captured(join(plain, "history.db"));
      if (!done) throw new Error("reindex left no history store");
      Object.assign(result, done);
      result.reindexRuns.push(run.ms);
      result.reindexRss.push({ mib: run.mib, ms: run.ms, how: run.how });

      log(`reindex --watch from empty, until its store holds the whole corpus, round ${round}`);
      // A drain slower than this misses the target by far: the figure is then not measured.
      const ms = await timeWatch(flags, vars, watched, done, Math.max(60_000, 50 * run.ms));
      if (ms === null) return result;
      result.watchRuns.push(ms);
    }
    result.ratio = median(result.watchRuns) / median(result.reindexRuns);
    return result;
  } finally {
    for (const dir of [plain, watched]) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }
}

/** Spawns `reindex --watch` into `data`; the ms until its store holds `done`, or null. */
async function timeWatch(
  flags: string[],
  vars: Record<string, string>,
  data: string,
  done: { sources: number; cursors: number },
  limit: number,
): Promise<number | null> {
  const child = new Deno.Command(Deno.execPath(), {
    args: commandArgs(flags, "reindex.ts", ["--watch", "--quiet"]),
    env: commandEnv({ ...vars, LOGBOOK_DATA_DIR: data }),
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const start = performance.now();
  let ms: number | null = null;
  try {
    while (performance.now() - start < limit) {
      const now = captured(join(data, "history.db"));
      if (now && now.sources === done.sources && now.cursors === done.cursors) {
        ms = performance.now() - start;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  } finally {
    child.kill("SIGTERM");
  }
  const out = await child.output();
  if (out.code !== 0) {
    const stderr = new TextDecoder().decode(out.stderr).slice(-600);
    throw new Error(`reindex --watch failed (${out.code}): ${stderr}`);
  }
  return ms;
}

/** The sources of a store and their cursors summed, or null before it holds any. */
function captured(path: string): { sources: number; cursors: number } | null {
  try {
    Deno.statSync(path);
  } catch {
    return null;
  }
  let db: DatabaseSync | null = null;
  try {
    db = new DatabaseSync(path, { readOnly: true });
    const row = db.prepare(
      "SELECT count(*) AS sources, coalesce(sum(cursor), 0) AS cursors FROM sources",
    ).get() as { sources: number; cursors: number };
    return { sources: Number(row.sources), cursors: Number(row.cursors) };
  } catch {
    return null; // being created (no schema yet), or locked for a moment
  } finally {
    db?.close();
  }
}
