// Private copies of another program's SQLite database, so logbook reads it without creating or
// touching anything beside it: SQLite opens a WAL database only with its `-wal` and `-shm`
// files, creating them when they are missing and writing its read marks into `-shm`.
//
// Why a copy: a read-only open still uses (and creates) `-wal`/`-shm`; `immutable=1` avoids them
// but ignores the WAL, so rows OpenCode has not checkpointed yet would be lost, and Deno takes a
// `file:` URI for a relative path unless every permission is granted. Copying the database and
// its WAL (never `-shm`) into a private directory and opening the copy lets SQLite recover the
// WAL there: every committed row is seen, and only logbook's own files are written.

import { DatabaseSync } from "node:sqlite";
import { basename, dirname, join } from "../path.ts";
import { dataDir, dataPaths } from "../paths.ts";
import { isPresent } from "../present.ts";
import { type DiscoverContext, type RowRead, SourceError, type SourceRef } from "./adapter.ts";

/** A database copied with its WAL, and the state of the originals it was copied from. */
interface Snapshot {
  file: string;
  signature: string;
}

/** Thrown when the database kept changing while it was copied (the caller retries next run). */
export class SnapshotChangingError extends Error {
  override name = "SnapshotChangingError";
}

const COPY_ATTEMPTS = 3;
const PREFIX = "logbook-snapshot-";
const OWNER = "owner.lock";

/**
 * Copies of databases in one private directory (0700, created on first use, removed with
 * `release` and when the process ends), kept while the original is unchanged so that a source
 * read in several steps is copied once.
 */
export class Snapshots {
  readonly #parent: () => string | undefined;
  #dir: string | null = null;
  #owner: Deno.FsFile | null = null;
  #listening = false;
  readonly #kept = new Map<string, Snapshot>();
  readonly #names = new Map<string, string>();

  /** `parent` names the directory to make the private one in (undefined: the system's temp). */
  constructor(parent: () => string | undefined = () => undefined) {
    this.#parent = parent;
  }

  /**
   * The path of a private copy of the database at `path` (with its WAL's committed rows), made
   * again when the original changed since the last copy. Throws SnapshotChangingError when the
   * original changed during each of a few copies.
   */
  of(path: string): string {
    for (let attempt = 0; attempt < COPY_ATTEMPTS; attempt++) {
      const before = signatureOf(path);
      const kept = this.#kept.get(path);
      if (kept && kept.signature === before && isPresent(kept.file)) return kept.file;
      const file = this.#fileFor(path);
      this.#drop(path);
      copyDatabase(path, file);
      // A checkpoint or a commit while copying can pair a database with a WAL of another
      // moment: only a copy the originals did not change under is kept.
      if (signatureOf(path) === before) {
        this.#kept.set(path, { file, signature: before });
        return file;
      }
      removeCopy(file);
    }
    throw new SnapshotChangingError(`The database "${path}" kept changing while it was copied`);
  }

  /** True when the copy `file` has a rollback journal beside it (a write was in progress). */
  hasJournal(file: string): boolean {
    try {
      return Deno.statSync(`${file}-journal`).isFile;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return false;
      throw err;
    }
  }

  /** Removes the copy of `path` (the next `of` copies it again), and the directory once empty. */
  release(path: string): void {
    this.#drop(path);
    if (this.#kept.size === 0) this.releaseAll();
  }

  /** Removes every copy and the private directory. */
  releaseAll(): void {
    for (const path of [...this.#kept.keys()]) this.#drop(path);
    this.#owner?.close();
    this.#owner = null;
    if (this.#dir !== null) {
      try {
        Deno.removeSync(this.#dir, { recursive: true });
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      }
      this.#dir = null;
      this.#names.clear();
    }
  }

  #drop(path: string): void {
    const kept = this.#kept.get(path);
    if (!kept) return;
    this.#kept.delete(path);
    removeCopy(kept.file);
  }

  #fileFor(path: string): string {
    // The directory first: a new one starts with no names, so a name is never given twice in it.
    const dir = this.#directory();
    let name = this.#names.get(path);
    if (name === undefined) {
      name = `${this.#names.size}-${basename(path)}`;
      this.#names.set(path, name);
    }
    return join(dir, name);
  }

  #directory(): string {
    if (this.#dir !== null) {
      try {
        if (Deno.statSync(this.#dir).isDirectory) return this.#dir;
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      }
    }
    // Copies kept in a directory that is gone (removed under this process) are gone with it.
    this.#kept.clear();
    const parent = this.#parent();
    let dir: string;
    try {
      dir = Deno.makeTempDirSync({ prefix: PREFIX, ...(parent ? { dir: parent } : {}) });
    } catch (err) {
      if (parent === undefined || !(err instanceof Deno.errors.NotFound)) throw err;
      dir = Deno.makeTempDirSync({ prefix: PREFIX });
    }
    Deno.chmodSync(dir, 0o700);
    // The directory is this process's while it holds the lock on its owner file: the lock dies
    // with the process, so a copy left by a killed run is found and removed by the next.
    this.#owner?.close();
    // Locked before it has its name, so no other run ever sees it free while this one lives.
    const pending = join(dir, `${OWNER}.new`);
    this.#owner = Deno.openSync(pending, { read: true, write: true, create: true, mode: 0o600 });
    this.#owner.lockSync(true);
    Deno.renameSync(pending, join(dir, OWNER));
    removeAbandoned(dirname(dir), dir);
    if (!this.#listening) {
      this.#listening = true;
      addEventListener("unload", () => this.releaseAll());
    }
    this.#dir = dir;
    this.#names.clear();
    return dir;
  }
}

/**
 * Size, mtime and inode of the database, its WAL and its rollback journal: what a commit, a
 * checkpoint or a write in progress changes.
 */
function signatureOf(path: string): string {
  return [path, `${path}-wal`, `${path}-journal`].map((file) => {
    try {
      const stat = Deno.statSync(file);
      return `${stat.size}:${stat.mtime?.getTime() ?? ""}:${stat.ino ?? ""}`;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return "-";
      throw err;
    }
  }).join("|");
}

/**
 * Copies the database with a non-empty WAL or rollback journal beside it. Never `-shm`: SQLite
 * rebuilds it from the WAL. A journal left by a write in progress is hot in the copy (no one
 * holds its lock there), so SQLite rolls the copy back to the last commit.
 */
function copyDatabase(path: string, file: string): void {
  copyPrivate(path, file);
  for (const suffix of ["-wal", "-journal"]) {
    let size = 0;
    try {
      size = Deno.statSync(`${path}${suffix}`).size;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    if (size > 0) copyPrivate(`${path}${suffix}`, `${file}${suffix}`);
  }
}

function copyPrivate(from: string, to: string): void {
  Deno.copyFileSync(from, to);
  Deno.chmodSync(to, 0o600);
}

function removeCopy(file: string): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) {
    try {
      Deno.removeSync(`${file}${suffix}`);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
}

/** Removes the private directories beside `own` whose process is gone (their lock is free). */
function removeAbandoned(parent: string, own: string): void {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(parent)];
  } catch {
    return;
  }
  for (const entry of entries) {
    const dir = join(parent, entry.name);
    if (!entry.isDirectory || !entry.name.startsWith(PREFIX) || dir === own) continue;
    let owner: Deno.FsFile;
    try {
      // Not created: a directory without its owner file is still being set up by another run.
      owner = Deno.openSync(join(dir, OWNER), { read: true, write: true });
    } catch {
      continue;
    }
    let free = false;
    try {
      free = owner.tryLockSync(true);
      if (free) owner.unlockSync();
    } finally {
      owner.close();
    }
    if (free) {
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch {
        // Another run removed it first, or it is not ours to remove: it stays.
      }
    }
  }
}

// ---- reading another program's database through its snapshot ----

/** How an adapter opens another program's databases: from private copies, with a busy timeout. */
export interface DatabaseReader {
  snapshots: Snapshots;
  busyTimeoutMs: number;
  /** The program whose database it is, in messages: `OpenCode`. */
  display: string;
}

/**
 * The reading half of an adapter whose every source is one database of another program (Crush's,
 * Goose's): a private snapshot of it per read, its fingerprint, and `read` run on the snapshot
 * until a read reaches the end. `discover` calls `locate` first, so the snapshots go to the run
 * folder of the data dir in use.
 */
export function databaseRows(
  display: string,
  busyTimeoutMs: number,
  read: (db: DatabaseSync, cursorKey: string | null, budgetBytes: number) => RowRead,
): {
  locate(ctx: DiscoverContext): void;
  fingerprint(source: SourceRef): string;
  readRows(source: SourceRef, cursorKey: string | null, budgetBytes: number): Promise<RowRead>;
} {
  let parent: string | undefined;
  const reader: DatabaseReader = { snapshots: new Snapshots(() => parent), busyTimeoutMs, display };
  return {
    locate(ctx) {
      parent = snapshotDirOf(ctx);
    },
    fingerprint: (source) => databaseFingerprint(source.path),
    readRows(source, cursorKey, budgetBytes) {
      // The reads are synchronous; the promise carries their result or their error.
      return new Promise((resolve) =>
        resolve(withDatabase(
          source.path,
          reader,
          (db) => read(db, cursorKey, budgetBytes),
          (done) => !done.more,
        ))
      );
    },
  };
}

/** The data dir's `run/`, where the private copies go; undefined when it cannot be located. */
export function snapshotDirOf(ctx: DiscoverContext): string | undefined {
  try {
    return dataPaths(dataDir(ctx.env), ctx.env).run;
  } catch {
    return undefined;
  }
}

/** Size, mtime and inode of a file, or `-` when it does not exist or is empty. */
function statSignature(path: string): string {
  try {
    const stat = Deno.statSync(path);
    return stat.size > 0 ? `${stat.size}:${stat.mtime?.getTime() ?? ""}:${stat.ino ?? ""}` : "-";
  } catch {
    return "-";
  }
}

/**
 * The database and its WAL: WAL writes change the WAL, not the database file's mtime. An empty
 * WAL (which a reader creates when the program is not running) holds no rows: it counts as none.
 */
export function databaseFingerprint(path: string): string {
  return `${statSignature(path)}|${statSignature(`${path}-wal`)}`;
}

/**
 * Runs `read` on a private copy of another program's database: the database and its WAL are
 * copied, never opened where they are, so nothing beside them is created or written, and rows
 * still in the WAL are seen. The copy is opened read-only (`query_only`) and kept while the
 * original is unchanged; it is removed once a read reached the end (`done`). SQLite errors
 * become a SourceError, so this source alone is retried next run.
 */
export function withDatabase<T>(
  path: string,
  reader: DatabaseReader,
  read: (db: DatabaseSync) => T,
  done: (result: T) => boolean = () => true,
): T {
  let db: DatabaseSync | null = null;
  let finished = false;
  try {
    const copy = copyOf(path, reader);
    // A journal copied with a write in progress is rolled back, which a read-only open cannot.
    db = new DatabaseSync(copy, { readOnly: !reader.snapshots.hasJournal(copy) });
    db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(reader.busyTimeoutMs))}`);
    db.exec("PRAGMA query_only = ON");
    const result = read(db);
    finished = done(result);
    return result;
  } catch (err) {
    finished = true;
    throw sourceError(path, err, reader);
  } finally {
    db?.close();
    if (finished) reader.snapshots.release(path);
  }
}

/** The private copy of the database at `path`; a copy that fails fails this source alone. */
function copyOf(path: string, reader: DatabaseReader): string {
  try {
    return reader.snapshots.of(path);
  } catch (err) {
    const why = err instanceof SnapshotChangingError
      ? "it kept changing while it was copied"
      : `it could not be copied to be read (${(err as Error).message})`;
    throw new SourceError(
      `${reader.display} database "${path}" was not read: ${why}; it is read again on the next run`,
      { cause: err },
    );
  }
}

function sourceError(path: string, err: unknown, reader: DatabaseReader): unknown {
  const sqlite = err as { code?: unknown; errcode?: unknown; message?: unknown };
  if (sqlite?.code !== "ERR_SQLITE_ERROR") return err;
  const errcode = typeof sqlite.errcode === "number" ? sqlite.errcode & 0xff : null;
  const { display, busyTimeoutMs } = reader;
  // Worded so the engine does not take it for its own store being locked.
  const message = errcode === 5 || errcode === 6
    ? `${display} database "${path}" stayed busy for ${busyTimeoutMs} ms: it is read again on the next run`
    : `Cannot read ${display} database "${path}": ${String(sqlite.message)}`;
  return new SourceError(message, { cause: err });
}

const encoder = new TextEncoder();

/**
 * A row's record: `{"table":<name>` then every column in table order with its value exactly
 * as read (integers exactly, text as the string it is, BLOBs as `{"base64":…}`), `}` and a
 * newline, so a source's stream reads as JSON Lines.
 */
export function rowJson(table: string, names: string[], values: unknown[]): Uint8Array {
  let out = `{"table":${JSON.stringify(table)}`;
  names.forEach((name, i) => {
    out += `,${JSON.stringify(name)}:${jsonValue(values[i])}`;
  });
  return encoder.encode(`${out}}\n`);
}

function jsonValue(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") {
    if (Number.isFinite(value)) return JSON.stringify(value);
    return value > 0 ? "1e999" : "-1e999";
  }
  if (typeof value === "string") return JSON.stringify(value);
  if (value instanceof Uint8Array) {
    return JSON.stringify({ base64: value.toBase64() });
  }
  return JSON.stringify(String(value));
}
