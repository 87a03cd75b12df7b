// Locks in `run/` for work that must not run twice at once (capture, the dashboard): an OS file
// lock that dies with its process, so a lock left by a killed process is simply taken over,
// and the holder's pid in the file, so a second run can name it.

import { join } from "./path.ts";
import { ensurePrivateFile, explainDataDir } from "./private_fs.ts";

/** What a lock file says about its holder. */
export interface LockInfo {
  pid: number;
  startedAt: number;
  command: string;
}

/** A held lock; `release()` (or the process ending) frees it. */
export interface HeldLock {
  path: string;
  release(): void;
}

/**
 * Tries to take `run/<name>.lock` without waiting. Returns the held lock, or the holder's
 * details (null when unreadable) when another process holds it. A data dir (`root`) the file
 * system refuses is said in words (`explainDataDir`).
 */
export function tryLock(
  runDir: string,
  root: string,
  name: string,
  command: string,
): { held: HeldLock } | { holder: LockInfo | null } {
  const { path, file } = openLock(runDir, root, name);
  let locked = false;
  try {
    locked = file.tryLockSync(true);
  } catch (err) {
    file.close();
    throw err;
  }
  if (!locked) {
    file.close();
    return { holder: readLock(path) };
  }
  return { held: hold(file, path, command) };
}

/**
 * Takes `run/<name>.lock`, waiting for as long as another process holds it (its end frees it,
 * however it ends).
 */
export async function waitLock(
  runDir: string,
  root: string,
  name: string,
  command: string,
): Promise<HeldLock> {
  const { path, file } = openLock(runDir, root, name);
  try {
    await file.lock(true);
  } catch (err) {
    file.close();
    throw err;
  }
  return hold(file, path, command);
}

/**
 * Takes `run/<name>.lock` shared, beside any other shared holder, without waiting. Null when a
 * process holds it alone or the data dir refuses the file: such a lock is a courtesy to others
 * (see `waitUnheld`), and its holder goes on without it.
 */
export function tryShared(runDir: string, root: string, name: string): HeldLock | null {
  let lock: { path: string; file: Deno.FsFile };
  try {
    lock = openLock(runDir, root, name);
  } catch {
    return null;
  }
  const { path, file } = lock;
  try {
    if (file.tryLockSync(false)) return hold(file, path, null);
  } catch {
    // As if held alone.
  }
  file.close();
  return null;
}

/**
 * Resolves once no process holds `run/<name>.lock`, shared or alone: at once when none does,
 * else when the last holder lets it go (the OS's wait, however that holder ends), after telling
 * `onWait`. A lock file that cannot be opened is held by nobody.
 */
export async function waitUnheld(
  runDir: string,
  root: string,
  name: string,
  onWait?: () => void,
): Promise<void> {
  let file: Deno.FsFile;
  try {
    file = openLock(runDir, root, name).file;
  } catch {
    return;
  }
  try {
    if (file.tryLockSync(true)) return;
    onWait?.();
    await file.lock(true);
  } finally {
    file.close();
  }
}

/**
 * `run/<name>.lock`, made private if it is new, opened to be locked. A data dir (`root`) the file
 * system refuses is said in words (`explainDataDir`).
 */
function openLock(runDir: string, root: string, name: string): { path: string; file: Deno.FsFile } {
  const path = join(runDir, `${name}.lock`);
  try {
    ensurePrivateFile(path, root);
    return { path, file: Deno.openSync(path, { read: true, write: true }) };
  } catch (err) {
    throw explainDataDir(err, root) ?? err;
  }
}

/**
 * A lock just taken on `file`: this process written in as its holder, unless it is shared
 * (`command` null), where holders are many and none is named.
 */
function hold(file: Deno.FsFile, path: string, command: string | null): HeldLock {
  if (command !== null) {
    const info: LockInfo = { pid: Deno.pid, startedAt: Date.now(), command };
    file.truncateSync(0);
    file.writeSync(new TextEncoder().encode(JSON.stringify(info) + "\n"));
  }
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      try {
        if (command !== null) file.truncateSync(0);
        file.unlockSync();
      } finally {
        file.close();
      }
    },
  };
}

/** The holder recorded in a lock file, or null when it is empty or unreadable. */
export function readLock(path: string): LockInfo | null {
  try {
    const info = JSON.parse(Deno.readTextFileSync(path)) as Partial<LockInfo>;
    return typeof info.pid === "number"
      ? { pid: info.pid, startedAt: info.startedAt ?? 0, command: info.command ?? "" }
      : null;
  } catch {
    return null;
  }
}

/** True when another process holds `path` right now (probes with a non-blocking lock). */
export function isLockHeld(path: string): boolean {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true, write: true });
  } catch {
    return false;
  }
  try {
    if (!file.tryLockSync(true)) return true;
    file.unlockSync();
    return false;
  } finally {
    file.close();
  }
}
