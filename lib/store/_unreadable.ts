// Why SQLite cannot read a WAL store that is opened read-only, in words a user can act on.
// SQLite reads a WAL database only through its `-wal` and `-shm` files: they must exist and be
// readable, or the directory must let SQLite create them (the `immutable` URI that would lift
// this cannot be given through Deno's node:sqlite, which takes paths and forbids ATTACH).

import { basename, dirname } from "../path.ts";

/** SQLITE_READONLY (the directory refused a new -wal/-shm) and SQLITE_CANTOPEN (one exists but
 * cannot be opened), with any extended code. */
const PRIMARY_CODES = new Set([8, 14]);
/** The same two, for errors that come without a code (node:sqlite's `exec` gives none). */
const MESSAGES = /attempt to write a readonly database|unable to open database file/i;

/**
 * An error saying why the store at `path` cannot be read and what to do, when `err` (raised by
 * the first read of a read-only connection) comes from a missing or unreadable `-wal`/`-shm`;
 * undefined for any other error.
 */
export function explainUnreadable(path: string, err: unknown): Error | undefined {
  const coded = PRIMARY_CODES.has(sqliteCode(err) & 0xff);
  if (!coded && !(err instanceof Error && MESSAGES.test(err.message))) return undefined;
  const missing: string[] = [];
  const unreadable: string[] = [];
  for (const suffix of ["-wal", "-shm"]) {
    const state = readability(path + suffix);
    if (state === "missing") missing.push(basename(path + suffix));
    if (state === "unreadable") unreadable.push(basename(path + suffix));
  }
  if (!missing.length && !unreadable.length) return undefined;
  const dir = dirname(path);
  const reasons = [
    ...(missing.length
      ? [`${quoteList(missing)} ${verb(missing)} missing and the directory "${dir}" is read-only`]
      : []),
    ...(unreadable.length ? [`${quoteList(unreadable)} cannot be read by this user`] : []),
  ];
  const remedy = unreadable.length
    ? `run as the owner of the data dir, or make ${quoteList(unreadable)} readable to you`
    : `make "${dir}" writable for this user (chmod u+w "${dir}"), or copy the data dir ` +
      `somewhere writable and set LOGBOOK_DATA_DIR to the copy`;
  return new Error(
    `Cannot read the history store "${path}": SQLite reads a WAL database only with its ` +
      `"-wal" and "-shm" files beside it, and ${reasons.join(", and ")}; ${remedy}`,
    { cause: err },
  );
}

function readability(path: string): "missing" | "unreadable" | "readable" {
  try {
    Deno.openSync(path, { read: true }).close();
    return "readable";
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return "missing";
    return "unreadable";
  }
}

/** The SQLite result code node:sqlite gave `err` (0 when none: `exec` gives none). */
export function sqliteCode(err: unknown): number {
  if (typeof err !== "object" || err === null || !("errcode" in err)) return 0;
  return typeof err.errcode === "number" ? err.errcode : 0;
}

function quoteList(names: string[]): string {
  return names.map((name) => `"${name}"`).join(" and ");
}

function verb(names: string[]): string {
  return names.length > 1 ? "are" : "is";
}
