// Owner-only file writes for the data dir: directories 0700, files 0600 (temp files too), every
// write an fsynced temp file renamed into place, and no symbolic link inside the data dir followed.

// node:fs is used where Deno's own API has no equivalent: O_NOFOLLOW opens and fchmod on an fd,
// which make the final path component safe against a link planted between check and use. It is
// loaded on the first write, so a command that only reads never pays for it.
import { nodeFs } from "./node_builtins.ts";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "./path.ts";
import { canStat, lstatOrUndefined } from "./present.ts";
import { messageOf } from "./format.ts";

/** Mode of every directory logbook creates in the data dir. */
export const DIR_MODE = 0o700;
/** Mode of every file logbook creates in the data dir, temp files included. */
export const FILE_MODE = 0o600;

const POSIX = Deno.build.os !== "windows";
const STICKY = 0o1000;
const encoder = new TextEncoder();

/** Thrown when a path inside the data dir goes through a symbolic link, which is never followed. */
export class SymlinkRefusedError extends Error {
  override name = "SymlinkRefusedError";
  /** The symbolic link that was found. */
  readonly path: string;

  /** `where` names the tree the link was found in, for paths outside the data dir. */
  constructor(path: string, where = "the data dir") {
    super(`Refusing to follow symbolic link "${path}" inside ${where}`);
    this.path = path;
  }
}

/** The refusals of the file system that `explainDataDir` puts in words. */
const REFUSALS = new Set(["EACCES", "EPERM", "EROFS", "ENOTDIR", "EEXIST"]);

/**
 * Why the data dir `root` cannot be used and what to do, in one sentence naming the path in the
 * way, for an error the file system raised while logbook made or wrote its folders and files: a
 * file where a folder should be, something of another user's that cannot be made owner-only, a
 * folder this user may not write (or, for a command that only reads, `access: "read"`, may not
 * read), a read-only disk. Undefined for any other error.
 *
 * @example
 * try { return HistoryStore.open(options); } catch (err) { throw explainDataDir(err, root) ?? err; }
 */
export function explainDataDir(
  err: unknown,
  root: string,
  access: "read" | "write" = "write",
): Error | undefined {
  const code = codeOf(err) ?? codeOfClass(err);
  if (code === undefined || !REFUSALS.has(code)) return undefined;
  const dir = resolve(root);
  const at = pathOf(err) ?? dir;
  const cannot = `Cannot use the data dir "${dir}"`;
  const elsewhere = "or set LOGBOOK_DATA_DIR to a folder of your own";
  const it = (path: string) => (path === dir ? "it" : `"${path}"`);
  const file = fileInTheWay(at, code === "ENOTDIR" || code === "EEXIST");
  if (file !== undefined) {
    return new Error(
      `${cannot}: ${it(file)} is a file where a folder should be; move it away, ${elsewhere}`,
      { cause: err },
    );
  }
  if (code === "ENOTDIR" || code === "EEXIST") return undefined;
  if (code === "EPERM") {
    return new Error(
      `${cannot}: ${it(at)} belongs to another user, so it cannot be made owner-only; run ` +
        `logbook as its owner, ${elsewhere}`,
      { cause: err },
    );
  }
  // `at` (when it is there) or the folder that holds it (when it is not) refused this user.
  const refused = canStat(at) ? at : dirname(at);
  return new Error(
    code === "EROFS"
      ? `${cannot}: ${it(refused)} is on a read-only disk; set LOGBOOK_DATA_DIR to a folder on ` +
        "a writable one"
      : access === "read"
      ? `${cannot}: this user may not read ${it(refused)}; run logbook as its owner, ${elsewhere}`
      : `${cannot}: this user may not write in ${it(refused)}; make it writable for you, ` +
        elsewhere,
    { cause: err },
  );
}

/**
 * The first path from `/` down to `at` that is there but is not a folder (following links, as
 * the path itself is followed above the data dir); `at` itself counts when `self` is set.
 */
function fileInTheWay(at: string, self: boolean): string | undefined {
  const parts = resolve(at).split(sep).filter(Boolean);
  let path = "";
  for (const [i, part] of parts.entries()) {
    path += sep + part;
    if (i === parts.length - 1 && !self) return undefined;
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(path);
    } catch {
      return undefined; // missing, or not to be looked into: nothing further down is there
    }
    if (!info.isDirectory) return path;
  }
  return undefined;
}

/** The path an error of the file system was raised on: node's `path`, or in Deno's message. */
function pathOf(err: unknown): string | undefined {
  if (typeof err === "object" && err !== null && "path" in err && typeof err.path === "string") {
    return resolve(err.path);
  }
  const quoted = err instanceof Error
    ? /\(os error \d+\): [a-z_]+ '(.+?)'(?: -> '.*')?$/s.exec(err.message)
    : null;
  return quoted ? resolve(quoted[1]!) : undefined;
}

/** The code of Deno's error classes that come without one. */
function codeOfClass(err: unknown): string | undefined {
  if (err instanceof Deno.errors.NotADirectory) return "ENOTDIR";
  if (err instanceof Deno.errors.AlreadyExists) return "EEXIST";
  if (err instanceof Deno.errors.PermissionDenied) return "EACCES";
  return undefined;
}

/**
 * Throws SymlinkRefusedError if `root` or any existing component between it and `path` is a
 * symbolic link (components above `root` are not checked: a home may well be a link), and
 * TypeError if `path` is not `root` or inside it.
 */
export function assertNoSymlinkInside(path: string, root: string): void {
  for (const component of componentsFrom(root, path)) {
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(component);
    } catch (err) {
      // Nothing below a missing component exists, so nothing below it can be a link.
      if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) return;
      throw err;
    }
    if (info.isSymlink) throw new SymlinkRefusedError(component);
  }
}

/**
 * Creates `dir` and every missing directory from `root` down to it with mode 0700 whatever the
 * umask, and tightens existing ones there that give access to group or others.
 * Missing parents of `root` are created 0700 too but never checked or changed.
 */
export function ensurePrivateDir(dir: string, root: string): void {
  const components = componentsFrom(root, dir);
  const top = components[0] ?? resolve(root);
  const above = dirname(top);
  if (above !== top) Deno.mkdirSync(above, { recursive: true, mode: DIR_MODE });
  for (const component of components) ensureOneDir(component);
}

/**
 * Creates `path` as an empty 0600 file if it is missing, or tightens it if it is looser, so that a
 * program opening it next (SQLite, say) never creates it with the umask's mode.
 */
export function ensurePrivateFile(path: string, root: string): void {
  const target = fileInside(path, root);
  ensurePrivateDir(dirname(target), root);
  let info = lstatOrUndefined(target);
  if (info === undefined) {
    if (createExclusive(target)) return;
    info = Deno.lstatSync(target);
  }
  if (info.isSymlink) throw new SymlinkRefusedError(target);
  if (!info.isFile) throw new Error(`Cannot use "${target}" as a file: it is not a regular file`);
  tighten(target, info, FILE_MODE);
}

/**
 * Replaces `path` atomically with `data`: a 0600 temp file beside it is written, fsynced and
 * renamed over it, then the directory is fsynced. The temp file is removed if anything fails.
 * Refuses (SymlinkRefusedError) when `path` or a directory on the way inside `root` is a link.
 *
 * @example
 * writeFileAtomic(join(root, "sessions", key, `${id}.json`), JSON.stringify(record), root);
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, root: string): void {
  const target = fileInside(path, root);
  const dir = dirname(target);
  ensurePrivateDir(dir, root);
  if (lstatOrUndefined(target)?.isSymlink) throw new SymlinkRefusedError(target);

  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  // The base name is cut so that the temp name stays within the usual 255-byte name limit.
  const suffix = `${Deno.pid}-${randomHex(6)}`;
  const temp = join(dir, `.${basename(target).slice(0, 200)}.tmp-${suffix}`);
  const fs = nodeFs();
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW = 0 } = fs.constants;
  const fd = fs.openSync(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, FILE_MODE);
  let renamed = false;
  try {
    try {
      if (POSIX) fs.fchmodSync(fd, FILE_MODE);
      writeAll(fd, bytes);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    // rename() replaces a link planted since the check rather than writing through it.
    Deno.renameSync(temp, target);
    renamed = true;
  } finally {
    if (!renamed) removeQuietly(temp);
  }
  syncDir(dir);
}

/**
 * Appends `data` to `path`, creating it 0600 if missing and tightening it if looser. Not fsynced:
 * appends are for logs and trails, where a lost last line is acceptable.
 */
export function appendPrivate(path: string, data: string | Uint8Array, root: string): void {
  const target = fileInside(path, root);
  ensurePrivateFile(target, root);
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  const fs = nodeFs();
  const fd = openNoFollow(target, fs.constants.O_WRONLY | fs.constants.O_APPEND);
  try {
    writeAll(fd, bytes);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Sets `path`'s mode to `mode` if it currently has any permission bit that `mode` lacks; a mode
 * that is already as tight is left alone. Refuses symbolic links rather than changing their target.
 */
export function tightenMode(path: string, mode: number): void {
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o7777) {
    throw new RangeError(`Expected a file mode from 0 to 0o7777: got "${mode}"`);
  }
  const info = Deno.lstatSync(path);
  if (info.isSymlink) throw new SymlinkRefusedError(path);
  tighten(path, info, mode);
}

/** What `removePath` did: `removed` is false without an `error` when nothing was there. */
export interface RemoveResult {
  removed: boolean;
  error?: string;
}

/**
 * Removes a file, a symbolic link (not its target) or a whole directory tree (links inside are
 * removed, never followed), and reports the outcome instead of throwing.
 */
export function removePath(path: string): RemoveResult {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { removed: false };
    return { removed: false, error: messageOf(err) };
  }
  try {
    Deno.removeSync(path, { recursive: info.isDirectory });
    return { removed: true };
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { removed: false };
    return { removed: false, error: messageOf(err) };
  }
}

/**
 * True while process `pid` exists and has not exited. Probes with signal 0 (needs
 * `--allow-run`; "not permitted" still means the process exists); where `/proc` can be read
 * (Deno allows it only with `-A`) a zombie counts as exited. Without either, throws NotCapable.
 */
export function isPidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) {
    // Signal 0 to pid 0 or -1 would probe a whole process group, never one process.
    throw new RangeError(`Expected a positive process id: got "${pid}"`);
  }
  try {
    Deno.kill(pid, 0);
    return !isZombie(pid);
  } catch (err) {
    if (err instanceof Deno.errors.PermissionDenied) return true;
    if (err instanceof Deno.errors.NotFound) return false;
    if (!(err instanceof Deno.errors.NotCapable)) throw err;
  }
  const state = procState(pid);
  if (state === undefined) return false;
  return state !== "Z" && state !== "X";
}

function isZombie(pid: number): boolean {
  try {
    const state = procState(pid);
    return state === "Z" || state === "X";
  } catch {
    return false; // /proc not readable without -A: signal 0 said it exists
  }
}

/** The state letter of `/proc/<pid>/stat`, or undefined when the process is gone. */
function procState(pid: number): string | undefined {
  if (Deno.build.os !== "linux") return undefined;
  let stat: string;
  try {
    stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
  // The state letter follows the command name, which is in parentheses and may contain any.
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
}

/** The absolute paths from `root` (inclusive) down to `path` (inclusive). */
function componentsFrom(root: string, path: string): string[] {
  const top = resolve(root);
  const target = resolve(path);
  const rel = relative(top, target);
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new TypeError(`Path "${target}" is not inside "${top}"`);
  }
  const components = [top];
  let current = top;
  for (const part of rel === "" ? [] : rel.split(sep)) {
    current = join(current, part);
    components.push(current);
  }
  return components;
}

/** `path` resolved, after checking that it names something strictly inside `root`. */
function fileInside(path: string, root: string): string {
  if (componentsFrom(root, path).length < 2) {
    throw new TypeError(`Path "${resolve(path)}" is the data dir itself, not a file inside it`);
  }
  return resolve(path);
}

function ensureOneDir(dir: string): void {
  let info = lstatOrUndefined(dir);
  if (info === undefined) {
    try {
      Deno.mkdirSync(dir, { mode: DIR_MODE });
      // mkdir's mode passes through the umask, which may take the owner's own bits away.
      if (POSIX) Deno.chmodSync(dir, DIR_MODE);
      return;
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
      info = Deno.lstatSync(dir);
    }
  }
  if (info.isSymlink) throw new SymlinkRefusedError(dir);
  if (!info.isDirectory) {
    throw Object.assign(
      new Deno.errors.NotADirectory(`Cannot use "${dir}" as a directory: it is not one`),
      { code: "ENOTDIR", path: dir },
    );
  }
  if (info.mode !== null && (info.mode & STICKY) !== 0 && (info.mode & 0o077) !== 0) {
    // A sticky, shared directory such as /tmp is not logbook's to lock everyone else out of.
    throw new Error(`Refusing to make shared directory "${dir}" private: choose a dir of its own`);
  }
  tighten(dir, info, DIR_MODE);
}

function tighten(path: string, info: Deno.FileInfo, mode: number): void {
  if (POSIX && info.mode !== null && (info.mode & 0o7777 & ~mode) !== 0) {
    Deno.chmodSync(path, mode);
  }
}

/** Creates `path` as an empty owner-only file; false if something already exists there. */
function createExclusive(path: string): boolean {
  const fs = nodeFs();
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW = 0 } = fs.constants;
  let fd: number;
  try {
    fd = fs.openSync(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, FILE_MODE);
  } catch (err) {
    if (codeOf(err) === "EEXIST") return false;
    throw err;
  }
  try {
    if (POSIX) fs.fchmodSync(fd, FILE_MODE);
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

function openNoFollow(path: string, flags: number): number {
  const fs = nodeFs();
  try {
    return fs.openSync(path, flags | (fs.constants.O_NOFOLLOW ?? 0));
  } catch (err) {
    if (codeOf(err) === "ELOOP") throw new SymlinkRefusedError(path);
    throw err;
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  const fs = nodeFs();
  let offset = 0;
  while (offset < bytes.length) {
    offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
  }
}

/** Makes a rename durable; some platforms and file systems cannot fsync a directory. */
function syncDir(dir: string): void {
  if (!POSIX) return;
  const fs = nodeFs();
  let fd: number;
  try {
    fd = fs.openSync(dir, fs.constants.O_RDONLY | (fs.constants.O_DIRECTORY ?? 0));
  } catch {
    return;
  }
  try {
    fs.fsyncSync(fd);
  } catch {
    // The rename already happened; only its durability across a power cut is not guaranteed.
  } finally {
    fs.closeSync(fd);
  }
}

/** `bytes` random bytes in hex. */
function randomHex(bytes: number): string {
  const buffer = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(buffer, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Best-effort cleanup on a path that is already failing: the original error is what matters. */
function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path);
  } catch {
    // Already gone, or not removable: either way there is nothing better to do here.
  }
}

function codeOf(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null || !("code" in err)) return undefined;
  return typeof err.code === "string" ? err.code : undefined;
}

/**
 * Writes a file the user named (an export, outside the data dir) owner-only and atomically: a
 * 0600 temp file beside it is written, fsynced and renamed over it, so a reader never sees half
 * a file and a failure leaves what was there. The user's directory is used as it is (never
 * created or re-moded); a link at `path` is replaced, not written through.
 */
export function writeOwnerOnlyAtomic(path: string, data: string | Uint8Array): void {
  const target = resolve(path);
  const dir = dirname(target);
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  const temp = join(
    dir,
    `.${basename(target).slice(0, 200)}.tmp-${Deno.pid}-${randomHex(6)}`,
  );
  let renamed = false;
  try {
    const file = Deno.openSync(temp, { write: true, createNew: true, mode: FILE_MODE });
    try {
      if (POSIX) Deno.chmodSync(temp, FILE_MODE);
      let at = 0;
      while (at < bytes.length) at += file.writeSync(bytes.subarray(at));
      file.syncSync();
    } finally {
      file.close();
    }
    Deno.renameSync(temp, target);
    renamed = true;
  } finally {
    if (!renamed) removeQuietly(temp);
  }
  syncDir(dir);
}
