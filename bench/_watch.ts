// How fast `reindex --watch` drains a backlog: a watcher started on an empty store, timed until
// the store holds the whole corpus, against a plain `reindex` of the same corpus in the same run.

import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { commandArgs, commandEnv, runTimed } from "./_measure.ts";
import { taskFlags } from "./_util.ts";

/** A watcher's drain of the whole corpus against a plain capture of it. */
export interface WatchBacklog {
  /** `reindex` from an empty store, spawn to exit. */
  reindexMs: number;
  /** `reindex --watch` from an empty store, spawn to the whole corpus stored; null: timed out. */
  watchMs: number | null;
  /** What the store holds once captured: sources, and their cursors summed. */
  sources: number;
  cursors: number;
}

/** How often the watcher's store is looked at (the resolution of `watchMs`). */
const POLL_MS = 25;

/**
 * Captures the corpus of `vars` twice from empty, in scratch data dirs under `work` (removed
 * after): by `reindex`, then by `reindex --watch`, which is stopped once its store's sources and
 * cursors are those the plain capture left.
 */
export async function measureWatchBacklog(
  vars: Record<string, string>,
  work: string,
  log: (message: string) => void,
): Promise<WatchBacklog> {
  const flags = taskFlags("reindex");
  const plain = join(work, "data-reindex");
  const watched = join(work, "data-watch");
  try {
    for (const dir of [plain, watched]) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await Deno.mkdir(dir, { recursive: true });
    }
    log(`reindex from empty (deno run ${flags.join(" ")} commands/reindex.ts)`);
    const run = await runTimed(
      Deno.execPath(),
      commandArgs(flags, "reindex.ts", ["--quiet"]),
      { env: commandEnv({ ...vars, LOGBOOK_DATA_DIR: plain }) },
    );
    if (run.code !== 0) throw new Error(`reindex failed (${run.code}): ${run.stderr.slice(-600)}`);
    const done = captured(join(plain, "history.db"));
    if (!done) throw new Error("reindex left no history store");

    log("reindex --watch from empty, until its store holds the whole corpus");
    const child = new Deno.Command(Deno.execPath(), {
      args: commandArgs(flags, "reindex.ts", ["--watch", "--quiet"]),
      env: commandEnv({ ...vars, LOGBOOK_DATA_DIR: watched }),
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const start = performance.now();
    // A drain slower than this misses the target by far: the figure is then not measured.
    const limit = Math.max(60_000, 100 * run.ms);
    let watchMs: number | null = null;
    try {
      while (performance.now() - start < limit) {
        const now = captured(join(watched, "history.db"));
        if (now && now.sources === done.sources && now.cursors === done.cursors) {
          watchMs = performance.now() - start;
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
    return { reindexMs: run.ms, watchMs, ...done };
  } finally {
    for (const dir of [plain, watched]) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }
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
    )
      .get() as { sources: number; cursors: number };
    return { sources: Number(row.sources), cursors: Number(row.cursors) };
  } catch {
    return null; // being created (no schema yet), or locked for a moment
  } finally {
    db?.close();
  }
}
