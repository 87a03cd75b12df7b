// Opens the history store (`history.db`): owner-only file, WAL, busy timeout, migrations, and a
// per-connection cache of prepared statements.

import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { dirname } from "../path.ts";
import { isPresent } from "../present.ts";
import { ensurePrivateDir, ensurePrivateFile, tightenMode } from "../private_fs.ts";
import { MIGRATIONS } from "./schema.ts";
import { explainUnreadable, sqliteCode } from "./_unreadable.ts";
import { messageOf } from "../format.ts";

/** Thrown when the store is busy beyond the busy timeout (another writer holds the lock). */
export class StoreLockedError extends Error {
  override name = "StoreLockedError";
}

/** Thrown when the disk (or the store's size limit) is full; nothing of the batch was written. */
export class StoreFullError extends Error {
  override name = "StoreFullError";
}

/**
 * Thrown when the store is damaged where an operation needs it sound (a search that met damage,
 * a rebuild of damaged raw data): the message names the store, the damage and how to recover.
 */
export class StoreDamagedError extends Error {
  override name = "StoreDamagedError";
}

/** Thrown when a migration failed; the failure is latched until `reindex --retry`. */
export class MigrationError extends Error {
  override name = "MigrationError";
}

export interface OpenStoreOptions {
  /** Path of `history.db`. */
  path: string;
  /** The data dir: files are created owner-only and symlinks inside it are refused. */
  root: string;
  /** How long a statement waits for another writer before failing (default 5000 ms). */
  busyTimeoutMs?: number;
  /**
   * Open as it is, for commands that only read: nothing is created, migrated, tightened or
   * written (`PRAGMA query_only`), so a read-only data dir (or mount) can still be read.
   */
  readOnly?: boolean;
  /**
   * Told of each step another process opening the store at the same moment may get in the way
   * of, before it runs (tests interleave another connection here): `"wal"` before each attempt
   * to switch the store to WAL, then each migration's name before it is applied, once the
   * applied ones were read.
   */
  beforeStep?: (step: string) => void;
}

/** A row as node:sqlite returns it. */
export type Row = Record<string, SQLInputValue>;

/** An open history store. Statements are prepared once and reused. */
export class HistoryStore {
  readonly db: DatabaseSync;
  readonly path: string;
  #statements = new Map<string, StatementSync>();
  /** Inside `wholeTransaction`: its steps open no savepoint. */
  #whole = false;

  private constructor(db: DatabaseSync, path: string) {
    this.db = db;
    this.path = path;
  }

  /**
   * Opens (creating and migrating when needed) the store at `options.path`; with `readOnly`, opens
   * it as it is and says why when SQLite cannot read it there.
   */
  static open(options: OpenStoreOptions): HistoryStore {
    const { path, root } = options;
    if (options.readOnly) {
      // SQLite would create a missing file: reading never does.
      if (!isPresent(path)) {
        throw new Error(`Cannot open the history store "${path}": it is missing`);
      }
    } else {
      ensurePrivateDir(dirname(path), root);
      // SQLite gives -wal and -shm the mode of the database file, so creating it 0600 first
      // keeps all three owner-only whatever the umask.
      ensurePrivateFile(path, root);
    }
    let db: DatabaseSync;
    try {
      // Even a reader opens the file for writing where it may (SQLite falls back to reading alone
      // where it may not): only such a connection, when it closes last, removes the -wal and
      // -shm that reading needed, so a reading command leaves the data dir as it found it.
      // `query_only` below keeps it from writing anything else.
      db = new DatabaseSync(path);
    } catch (err) {
      throw new Error(`Cannot open the history store "${path}": ${messageOf(err)}`, {
        cause: err,
      });
    }
    const store = new HistoryStore(db, path);
    try {
      db.exec(`PRAGMA busy_timeout = ${Math.max(0, options.busyTimeoutMs ?? 5000)}`);
      if (options.readOnly) {
        db.exec("PRAGMA query_only = ON");
        // The first read opens the -wal and -shm: a store SQLite cannot read fails here.
        db.prepare("SELECT count(*) FROM sqlite_schema").get();
      } else {
        // Before anything writes the first page (journal_mode does): see migration 0001.
        if (!db.prepare("SELECT 1 FROM sqlite_schema LIMIT 1").get()) db.exec(MIGRATIONS[0]!.sql);
        enterWal(db, options.beforeStep);
        db.exec("PRAGMA synchronous = NORMAL");
      }
      db.exec("PRAGMA temp_store = MEMORY");
      // Content a page no longer holds is zeroed, not left in free space: so what `forget`
      // removes (and what moved when pages split) is gone from the file.
      db.exec("PRAGMA secure_delete = ON");
      db.exec("PRAGMA cache_size = -16000");
      if (!options.readOnly) {
        store.#migrate(options.beforeStep);
        for (const suffix of ["", "-wal", "-shm"]) tightenIfPresent(path + suffix);
      }
    } catch (err) {
      db.close();
      throw (options.readOnly ? explainUnreadable(path, err) : undefined) ?? translateError(err);
    }
    return store;
  }

  /** A prepared statement for `sql`, created on first use and reused after. */
  stmt(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Drops the statement for `sql`, so the next `stmt(sql)` prepares it afresh: node:sqlite's
   * statement that a function aborted fails once more when it is next run.
   */
  dropStmt(sql: string): void {
    this.#statements.delete(sql);
  }

  /**
   * Runs `fn` in one `BEGIN IMMEDIATE` transaction, or in a savepoint when a transaction is
   * already open (so a step can be part of a larger all-or-nothing operation). Rolls back and
   * rethrows on any error.
   */
  transaction<T>(fn: () => T): T {
    const nested = this.db.isTransaction;
    if (nested && this.#whole) return fn();
    try {
      this.db.exec(nested ? "SAVEPOINT step" : "BEGIN IMMEDIATE");
    } catch (err) {
      throw translateError(err);
    }
    try {
      const result = fn();
      this.db.exec(nested ? "RELEASE step" : "COMMIT");
      return result;
    } catch (err) {
      // SQLite may end the whole transaction itself (out of memory, a full disk): then there is
      // no savepoint to roll back to, and the error is what to report.
      if (this.db.isTransaction) {
        this.db.exec(nested ? "ROLLBACK TO step; RELEASE step" : "ROLLBACK");
      }
      throw translateError(err);
    }
  }

  /**
   * Runs `fn`, which may await, in one `BEGIN IMMEDIATE` transaction rolled back whole on any
   * error (a rebuild, a re-derivation). The steps inside it (`transaction`) open no savepoint of
   * their own, which nothing would roll back to: a savepoint keeps a copy in memory of every page
   * its step changes that was there before it (temp_store = MEMORY), and a step whose index
   * inserts merge the text index's segments changes a share of the whole index (1.9 GB of memory
   * in a rebuild of ten gigabytes of history).
   */
  async wholeTransaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.db.isTransaction) throw new Error("wholeTransaction: a transaction is already open");
    try {
      this.db.exec("BEGIN IMMEDIATE");
    } catch (err) {
      throw translateError(err);
    }
    this.#whole = true;
    try {
      const result = await fn();
      this.db.exec("COMMIT");
      return result;
    } catch (err) {
      if (this.db.isTransaction) this.db.exec("ROLLBACK");
      throw translateError(err);
    } finally {
      this.#whole = false;
    }
  }

  /** Reads a `meta` value as parsed JSON, or undefined. */
  getMeta<T>(key: string): T | undefined {
    const row = this.stmt("SELECT value FROM meta WHERE key = ?").get(key) as
      | { value: string }
      | undefined;
    return row ? JSON.parse(row.value) as T : undefined;
  }

  /** Writes a `meta` value as JSON (call inside a transaction to make it part of one). */
  setMeta(key: string, value: unknown): void {
    this.stmt(
      "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    )
      .run(key, JSON.stringify(value));
  }

  /** Removes a `meta` value. */
  deleteMeta(key: string): void {
    this.stmt("DELETE FROM meta WHERE key = ?").run(key);
  }

  /**
   * Names of the migrations this store still lacks that readers cannot do without (see
   * `readersWait`), in order: a store lacking only others can be read as it is.
   */
  pendingForReaders(): string[] {
    const waits = new Set(MIGRATIONS.filter((m) => m.readersWait).map((m) => m.name));
    return this.pendingMigrations().filter((name) => !waits.has(name));
  }

  /** Names of the migrations this store still lacks, in order (all of them for an empty file). */
  pendingMigrations(): string[] {
    const known = this.db.prepare(
      "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'migrations'",
    ).get();
    const applied = new Set(known ? this.appliedMigrations() : []);
    return MIGRATIONS.filter((m) => !applied.has(m.name)).map((m) => m.name);
  }

  /** Names of the migrations applied to this store, in order. */
  appliedMigrations(): string[] {
    return (this.db.prepare("SELECT name FROM migrations ORDER BY rowid").all() as {
      name: string;
    }[])
      .map((row) => row.name);
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  /**
   * Applies the migrations this store lacks, in order. Another process may be opening the same
   * store at the same moment (two `reindex`, a `status` upgrading it): each step's transaction
   * reads again, under the write lock, whether the step is applied, and skips it if another
   * process applied it since this one looked. A step applied stays applied, so what was seen
   * applied before is skipped without asking again.
   */
  #migrate(beforeStep?: (step: string) => void): void {
    // A store that is up to date is only read here: a search never takes the write lock.
    if (!this.pendingMigrations().length) return;
    this.db.exec(
      "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)",
    );
    const seen = new Set(this.appliedMigrations());
    for (const migration of MIGRATIONS) {
      if (seen.has(migration.name)) continue;
      beforeStep?.(migration.name);
      try {
        // A step outside a transaction (a pragma) is one that may run again.
        if (migration.outsideTransaction) this.db.exec(migration.sql);
        this.transaction(() => {
          if (this.stmt("SELECT 1 FROM migrations WHERE name = ?").get(migration.name)) return;
          if (!migration.outsideTransaction) this.db.exec(migration.sql);
          this.stmt("INSERT INTO migrations (name, applied_at) VALUES (?, ?)")
            .run(migration.name, Date.now());
        });
      } catch (err) {
        // Waiting for another writer, or a full disk, is not a failed migration: it says so.
        const translated = translateError(err);
        if (translated instanceof StoreLockedError || translated instanceof StoreFullError) {
          throw translated;
        }
        throw new MigrationError(
          `Migration "${migration.name}" of the history store failed: ${messageOf(err)}`,
          { cause: err },
        );
      }
    }
  }
}

/**
 * Switches a new store to WAL (a no-op for one that is already). The switch reads the file, then
 * writes its header, and SQLite does not wait between the two for another writer as the busy
 * timeout would: two processes creating the store at once, one switching while the other did,
 * saw "database is locked" at once. Then the other's write is waited for as any writer's is
 * (`BEGIN IMMEDIATE`, within the busy timeout), and the switch tried again: the file is WAL by
 * then, so it writes nothing. Each retry follows another process's switch: a few suffice.
 */
function enterWal(db: DatabaseSync, beforeStep?: (step: string) => void): void {
  for (let attempt = 1;; attempt++) {
    beforeStep?.("wal");
    if (attempt > 1) {
      db.exec("BEGIN IMMEDIATE");
      db.exec("ROLLBACK");
    }
    try {
      db.exec("PRAGMA journal_mode = WAL");
      return;
    } catch (err) {
      if (attempt === 3 || !(translateError(err) instanceof StoreLockedError)) throw err;
    }
  }
}

function tightenIfPresent(path: string): void {
  try {
    tightenMode(path, 0o600);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}

/**
 * Returns the free pages to the file system and empties the write-ahead log. `incremental_vacuum`
 * frees one page per step of its statement, so `exec` (one step) would free a single page: the
 * statement is stepped to the end, and every free page is either filled by a page moved from the
 * file's end or cut off with it, so nothing a free page held stays in the file. The checkpoint
 * then copies the pages into the file and truncates the log, which still holds the pages as they
 * were before (what a forget removed, say).
 */
export function giveSpaceBack(store: HistoryStore): { pagesFreed: number; walEmptied: boolean } {
  const free = () =>
    (store.db.prepare("PRAGMA freelist_count").get() as { freelist_count: number })
      .freelist_count;
  const before = free();
  // Stepped without keeping its rows: an object per page freed took 63 MiB of heap for 250,627
  // pages (1 GB freed), and a migration at 10 GB frees about a million.
  for (const _ of store.db.prepare("PRAGMA incremental_vacuum").iterate()) {
    // One page a step.
  }
  const pagesFreed = before - free();
  const checkpoint = store.db.prepare("PRAGMA wal_checkpoint(TRUNCATE)").get() as { busy: number };
  return { pagesFreed, walEmptied: checkpoint.busy === 0 };
}

/** Maps SQLite's busy and full errors to errors a caller can catch by class. */
export function translateError(err: unknown): unknown {
  if (err instanceof StoreLockedError || err instanceof StoreFullError) return err;
  const message = messageOf(err);
  if (/database is locked|SQLITE_BUSY|database table is locked/i.test(message)) {
    return new StoreLockedError(
      "The history store is locked by another process; try again in a moment",
      { cause: err },
    );
  }
  if (/database or disk is full|SQLITE_FULL|No space left/i.test(message)) {
    return new StoreFullError(
      "The disk holding the history store is full; nothing of the last batch was written",
      { cause: err },
    );
  }
  return err;
}

/** SQLITE_CORRUPT and SQLITE_NOTADB, with any extended code (FTS5's is SQLITE_CORRUPT_VTAB). */
const DAMAGE_CODES = new Set([11, 26]);

/**
 * True for SQLite's errors about a damaged file: by their code, or by their words where they
 * come without one (`exec` gives none). FTS5 words its own (`fts5: corruption found reading
 * blob …`), which a search must never take for a query it cannot parse.
 */
export function isCorruption(err: unknown): boolean {
  if (err instanceof StoreDamagedError) return true;
  if (DAMAGE_CODES.has(sqliteCode(err) & 0xff)) return true;
  return /database disk image is malformed|file is not a database|SQLITE_(CORRUPT|NOTADB)|fts5: corrupt/i
    .test(messageOf(err));
}
