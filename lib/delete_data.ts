// Deleting every piece of user data logbook keeps: stop logbook's own running work, remove each
// data path (the store with its WAL and SHM, sessions, snapshots, markers, history, run dir),
// sweep stragglers, and report path by path what went and what could not go, and why.

import { basename, join } from "./path.ts";
import { DatabaseSync } from "node:sqlite";
import type { DataPaths } from "./paths.ts";
import { isLockHeld, readLock } from "./lock.ts";
import { isPidAlive, removePath, type RemoveResult } from "./private_fs.ts";
import { liveDirOf, rotatedPath } from "./stage_markers.ts";

/** One line of the report. */
export interface DeleteStep {
  action: "stopped" | "not stopped" | "removed" | "not found" | "not removed" | "left";
  path?: string;
  pid?: number;
  command?: string;
  reason?: string;
}

export interface DeleteReport {
  steps: DeleteStep[];
  /** True only when every data path is gone (config is never touched). */
  complete: boolean;
}

/** What logbook itself creates at the top of the data dir; anything else is not ours. */
const OURS = new Set([
  "sessions",
  "history.db",
  "history.db-wal",
  "history.db-shm",
  "history.db-journal",
  "prune-archives",
  "logs",
  "prompt-history.jsonl",
  "run",
]);

const TEMP = /^\..+\.tmp-\d+-[0-9a-f]+$/;

/** A project mirror's file name (see `lib/store/mirror.ts`): nothing else is removed as one. */
const MIRROR_FILE = /^conversations-[0-9a-f]{12}\.db$/;

/**
 * The project mirrors the store at `historyDb` lists (its `meta.mirrors`), read without writing;
 * none when the store is missing or cannot be read.
 */
export function projectMirrors(historyDb: string): string[] {
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(historyDb, { readOnly: true });
    const row = db.prepare("SELECT value FROM meta WHERE key = 'mirrors'").get() as
      | { value: string }
      | undefined;
    const states = row
      ? Object.values(JSON.parse(row.value) as Record<string, { path: string }>)
      : [];
    return states.map((state) => state.path).filter((path) => MIRROR_FILE.test(basename(path)));
  } catch {
    return [];
  } finally {
    db?.close();
  }
}

export interface DeleteOptions {
  paths: DataPaths;
  /** Project mirrors to remove too (`projectMirrors` lists them from the store). */
  mirrors?: readonly string[];
  /** Removal, injectable so a test can make one path fail. */
  remove?: (path: string) => RemoveResult;
  /** Sends a signal to a pid (default Deno.kill). */
  kill?: (pid: number, signal: Deno.Signal) => void;
  /** How long a stopped process gets to let go of its lock before SIGKILL. */
  graceMs?: number;
}

/**
 * Stops logbook's running work and deletes all user data. Never throws for a path it cannot
 * remove: the report says which and why.
 */
export async function deleteUserData(options: DeleteOptions): Promise<DeleteReport> {
  const { paths } = options;
  const remove = options.remove ?? removePath;
  const steps: DeleteStep[] = [];
  await stopRunningWork(paths.run, steps, options);
  // Deleting under a process that still runs would let it write everything again.
  if (steps.some((s) => s.action === "not stopped")) return { steps, complete: false };

  const targets = targetsOf(paths);
  // The mirrors first: their list is in the store, which goes next.
  for (const mirror of options.mirrors ?? []) {
    if (!MIRROR_FILE.test(basename(mirror))) continue;
    for (const suffix of ["", "-wal", "-shm"]) {
      const result = remove(mirror + suffix);
      if (suffix === "" || result.removed || result.error) report(steps, mirror + suffix, result);
    }
  }
  for (const path of targets) report(steps, path, remove(path));
  sweep(paths.root, steps, remove);

  // What is left at the top is not logbook's: say so, leave it, and keep the dir.
  let left = 0;
  try {
    for (const entry of Deno.readDirSync(paths.root)) {
      if (OURS.has(entry.name)) continue;
      left++;
      steps.push({
        action: "left",
        path: join(paths.root, entry.name),
        reason: "not created by logbook, so not deleted",
      });
    }
    if (left === 0) report(steps, paths.root, remove(paths.root));
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) {
      steps.push({ action: "not removed", path: paths.root, reason: (err as Error).message });
    }
  }
  const complete = !steps.some((s) =>
    s.action === "not removed" || s.action === "not stopped" || s.action === "left"
  );
  return { steps, complete };
}

/** Every path `deleteUserData` removes by name (the data dir itself comes last, if empty). */
function targetsOf(paths: DataPaths): string[] {
  return [
    paths.sessions,
    paths.historyDb,
    `${paths.historyDb}-wal`,
    `${paths.historyDb}-shm`,
    `${paths.historyDb}-journal`,
    paths.pruneArchives,
    paths.stageMarkers,
    rotatedPath(paths.stageMarkers),
    liveDirOf(paths.stageMarkers),
    paths.promptHistory,
    paths.run,
    paths.logs,
  ];
}

/**
 * How much `deleteUserData` would remove: bytes and files, symlinks counted, never followed; the
 * project `mirrors` (with their WAL and SHM files) too.
 */
export function userDataSize(
  paths: DataPaths,
  mirrors: readonly string[] = [],
): { bytes: number; files: number } {
  const total = { bytes: 0, files: 0 };
  // A target may sit inside another (the stage markers in `logs/`): each path counts once.
  const seen = new Set<string>();
  const add = (path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(path);
    } catch {
      return;
    }
    if (!info.isDirectory) {
      total.bytes += info.size;
      total.files++;
      return;
    }
    try {
      for (const entry of Deno.readDirSync(path)) add(join(path, entry.name));
    } catch { /* unreadable: deleting it will say so */ }
  };
  for (const path of targetsOf(paths)) add(path);
  for (const mirror of mirrors) {
    if (!MIRROR_FILE.test(basename(mirror))) continue;
    for (const suffix of ["", "-wal", "-shm"]) add(mirror + suffix);
  }
  return total;
}

function report(steps: DeleteStep[], path: string, result: RemoveResult): void {
  if (result.removed) steps.push({ action: "removed", path });
  else if (result.error) steps.push({ action: "not removed", path, reason: result.error });
  else steps.push({ action: "not found", path });
}

/** Temp files an interrupted atomic write left behind, anywhere in the data dir. */
function sweep(dir: string, steps: DeleteStep[], remove: (path: string) => RemoveResult): void {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isFile && TEMP.test(entry.name)) report(steps, path, remove(path));
    else if (entry.isDirectory && !entry.isSymlink) sweep(path, steps, remove);
  }
}

/**
 * Stops the processes holding logbook's locks in `run/` (a watcher, a dashboard, a capture):
 * only a pid whose lock is really held right now is signalled, so a stale file with a reused
 * pid never stops someone else's process.
 */
async function stopRunningWork(
  runDir: string,
  steps: DeleteStep[],
  options: DeleteOptions,
): Promise<void> {
  const kill = options.kill ?? ((pid, signal) => Deno.kill(pid, signal));
  const grace = options.graceMs ?? 5_000;
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(runDir)];
  } catch {
    return;
  }
  for (const entry of entries) {
    if (!entry.isFile || !entry.name.endsWith(".lock")) continue;
    const path = join(runDir, entry.name);
    const holder = readLock(path);
    if (!holder || holder.pid === Deno.pid || !isLockHeld(path)) continue;
    const step = { pid: holder.pid, command: holder.command };
    try {
      kill(holder.pid, "SIGTERM");
      if (!(await released(path, holder.pid, grace))) {
        kill(holder.pid, "SIGKILL");
        if (!(await released(path, holder.pid, 2_000))) {
          steps.push({ action: "not stopped", ...step, reason: "still running after SIGKILL" });
          continue;
        }
      }
      steps.push({ action: "stopped", ...step });
    } catch (err) {
      steps.push({ action: "not stopped", ...step, reason: (err as Error).message });
    }
  }
}

async function released(path: string, pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!isLockHeld(path) || !isPidAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isLockHeld(path);
}
