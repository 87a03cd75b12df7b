// The OpenCode adapter: reads sessions, messages and parts from OpenCode's SQLite databases
// (read-only, by per-table `(time_updated, id)` cursors) and its older JSON `storage/` tree. Forks
// that keep OpenCode's layout under their own names (Kilo, lib/sources/kilo.ts) are read by the
// same code, told apart by an `OpencodeFlavor`.

import { type Agent, agentRoots } from "../agents.ts";
import { basename, dirname, join, relative } from "../path.ts";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import {
  type ConversationInfo,
  type Derived,
  type DiscoverContext,
  type Kind,
  type Lookup,
  makeDerived,
  type Role,
  type RowAdapter,
  type RowRead,
  type SourceRef,
  type ToolParts,
  type Usage,
} from "./adapter.ts";
import {
  databaseFingerprint,
  type DatabaseReader,
  rowJson,
  snapshotDirOf,
  Snapshots,
  withDatabase,
} from "./_snapshot.ts";
import { sha256Hash, sha256Hex } from "../sha256.ts";
import { obj, str, stringLeaves, titleFrom } from "./_text.ts";
import { walkFiles } from "./_walk.ts";
import {
  type Bad,
  type Entry,
  entryOf,
  isStorageSource,
  joinText,
  messageText,
  OPENCODE_SKIP_KEYS,
  opencodeRowTextWith,
  type OpencodeTextOptions,
  partText,
} from "./opencode_text.ts";

/** What the adapter remembers between rows: the message last seen, so its parts skip a lookup. */
export interface OpencodeState {
  message: {
    id: string;
    role: Role | null;
    /** True for the assistant message that holds a compaction summary. */
    summary: boolean;
  } | null;
}

/** What tells an agent that keeps OpenCode's layout from OpenCode. */
export interface OpencodeFlavor {
  /** logbook's name for it: its sources' agent and its conversations' prefix. */
  agent: Agent;
  /** What people call it, in messages: `OpenCode`. */
  display: string;
  /** The names of its database files in its data dir. */
  databaseName: RegExp;
  /** How its records read (lib/sources/opencode_text.ts). */
  text: OpencodeTextOptions;
  /**
   * Tables of its database that hold no conversation in the versions logbook knows, read after
   * the three (when they have OpenCode's `id` and `time_updated`): each row is kept raw as drift
   * (`table/<name>`), so a version that starts keeping messages there shows in the drift report.
   */
  watched?: readonly string[];
}

/** OpenCode: `opencode.db`, and `opencode-<channel>.db` for other release channels. */
export const OPENCODE_FLAVOR: OpencodeFlavor = {
  agent: "opencode",
  display: "OpenCode",
  databaseName: /^opencode(?:-[^/\\]+)?\.db$/,
  text: {},
};

/** How an OpenCode adapter reads its databases. */
export interface OpencodeOptions {
  /** How long a read waits for a lock held by OpenCode before the source is retried next run. */
  busyTimeoutMs?: number;
  /** The agent it reads: OpenCode unless told. */
  flavor?: OpencodeFlavor;
}

type MessageInfo = NonNullable<OpencodeState["message"]>;

/** The tables read, in this order, so a part's message and session are stored before it. */
const TABLES = ["session", "message", "part"] as const;
type Table = typeof TABLES[number];

/** OpenCode's own placeholder titles, replaced by a generated one after the first reply. */
const PLACEHOLDER_TITLE = /^(?:New|Child) session - \d{4}-\d{2}-\d{2}T/;

const PAGE = 256;
const DEFAULT_BUSY_TIMEOUT_MS = 2000;

/**
 * Makes an OpenCode adapter. Tests pass a short `busyTimeoutMs`; `opencode` is the one capture
 * uses, and a `flavor` makes the adapter of an agent that keeps OpenCode's layout (`kilo`).
 *
 * Sources: one per database file (`opencode.db`, `opencode-<channel>.db`), whose records are
 * its rows, one JSON object per row (`{"table":"part","id":…,…,"data":"{…}"}` and a newline: the
 * table name, then every column in table order with its value exactly as read); and one per
 * session of the older JSON storage (`storage/session/<projectID>/<id>.json`), whose records
 * are the bytes of its session, message and part files, skipping ids the databases beside it
 * hold (the database wins).
 */
export function createOpencodeAdapter(options: OpencodeOptions = {}): RowAdapter<OpencodeState> {
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  const flavor = options.flavor ?? OPENCODE_FLAVOR;
  const { agent } = flavor;
  // Databases are read from private copies in the data dir's `run/` (see _snapshot.ts).
  let snapshotParent: string | undefined;
  const snapshots = new Snapshots(() => snapshotParent);
  const reader: OpencodeReader = { snapshots, busyTimeoutMs, display: flavor.display, flavor };
  const roots = (ctx: DiscoverContext): string[] => agentRoots(agent, ctx);
  return {
    agent,
    mode: "rows",
    // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
    // 1: the version of the build that began recording versions.
    // 2: an assistant message's model call (tokens, cost) is derived for `usage`.
    derivation: 2,
    skipKeys: OPENCODE_SKIP_KEYS,
    roots,

    async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
      snapshotParent = snapshotDirOf(ctx);
      for (const root of roots(ctx)) {
        for (const path of databasesIn(root, flavor.databaseName, ctx.skipped)) {
          yield { agent, locator: path, path, format: "rows" };
        }
        // Sessions are `storage/session/<projectID>/<id>.json`.
        const sessions = join(root, "storage", "session");
        for (const path of walkFiles(sessions, (n) => n.endsWith(".json"), ctx, 1)) {
          if (dirname(dirname(path)) !== sessions) continue;
          yield { agent, locator: path, path, format: "rows" };
        }
      }
    },

    fingerprint(source: SourceRef): string {
      return isStorageSource(source)
        ? storageFingerprint(source.path)
        : databaseFingerprint(source.path);
    },

    initialState(): OpencodeState {
      return { message: null };
    },

    readRows(source: SourceRef, cursorKey: string | null, budgetBytes: number): Promise<RowRead> {
      // The reads are synchronous; the promise carries their result or their error.
      return new Promise((resolve) =>
        resolve(
          isStorageSource(source)
            ? readStorage(source.path, cursorKey, budgetBytes, reader)
            : withDatabase(
              source.path,
              reader,
              (db) => readTables(db, cursorKey, budgetBytes, flavor.watched ?? []),
              (read) => !read.more,
            ),
        )
      );
    },

    parseRow(raw: Uint8Array, state: OpencodeState, source: SourceRef, lookup: Lookup): Derived {
      return derive(entryOf(raw, source), state, source, lookup, flavor);
    },

    textOf: opencodeRowTextWith(flavor.text),

    toolOf(bytes: Uint8Array, source: SourceRef): ToolParts | null {
      const entry = entryOf(bytes, source);
      if ("bad" in entry || entry.table !== "part" || entry.data.type !== "tool") return null;
      const state = obj(entry.data.state) ?? {};
      const output = typeof state.output === "string" ? state.output : str(state.error);
      return {
        calls: [{
          id: str(entry.data.callID),
          name: str(entry.data.tool) ?? "tool",
          input: joinText(stringLeaves(state.input, OPENCODE_SKIP_KEYS)),
        }],
        results: [],
        output,
      };
    },
  };
}

/** OpenCode's sessions, as capture reads them. */
export const opencode: RowAdapter<OpencodeState> = createOpencodeAdapter();

// ---- discovery ----

/** The database files of an OpenCode data dir (or the root itself when it names one). */
function databasesIn(root: string, name: RegExp, skipped: Map<string, number>): string[] {
  const count = (reason: string) => skipped.set(reason, (skipped.get(reason) ?? 0) + 1);
  try {
    if (Deno.lstatSync(root).isFile) return name.test(basename(root)) ? [root] : [];
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) return [];
    if (err instanceof Deno.errors.PermissionDenied) return [];
    throw err;
  }
  const found: string[] = [];
  try {
    for (const entry of Deno.readDirSync(root)) {
      if (!name.test(entry.name)) continue;
      if (entry.isSymlink) count("symlink");
      else if (entry.isFile) found.push(join(root, entry.name));
    }
  } catch (err) {
    if (err instanceof Deno.errors.PermissionDenied) count("unreadable folder");
    else if (!(err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory)) {
      throw err;
    }
  }
  // opencode.db (kilo.db) first, then the channels by name.
  return found.sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
}

// ---- reading a database ----

/** How OpenCode's databases are opened (see _snapshot.ts), and which flavor's they are. */
interface OpencodeReader extends DatabaseReader {
  flavor: OpencodeFlavor;
}

/** A value bound in SQL, kept in a cursor: integers exactly, as decimal strings. */
type Encoded = ["i", string] | ["v", number | string | null];

/** A row's place in the reading order: its `(time_updated, id)`. */
type Key = [Encoded, string];

/**
 * Where reading one table stands. Rows are read in passes: a pass takes every row whose key is
 * after `done` and at most `upTo`, among the rows that existed when it started (rowid up to
 * `lastRowid`), in rowid order, so resuming it is a seek and a whole pass reads the table once
 * (OpenCode has no index on `time_updated`).
 */
interface TableCursor {
  /** The key up to which every row has been read (the end of the last finished pass). */
  done: Key | null;
  /**
   * The highest rowid when the last pass started: rows inserted later with a key at or before
   * `done` (an imported session, a late commit) are found by rowid.
   */
  seenRowid: string | null;
  pass: { upTo: Key; lastRowid: string; position: string } | null;
}

/** Where reading each table stands, by table name. */
type DatabaseCursor = Record<string, TableCursor>;

function parseDatabaseCursor(key: string | null, tables: readonly string[]): DatabaseCursor {
  const fresh = (): TableCursor => ({ done: null, seenRowid: null, pass: null });
  const cursor: DatabaseCursor = Object.fromEntries(tables.map((t) => [t, fresh()]));
  if (!key) return cursor;
  const saved = obj(JSON.parse(key));
  for (const table of tables) {
    const c = obj(saved?.[table]);
    if (c) cursor[table] = c as unknown as TableCursor;
  }
  return cursor;
}

function encode(value: unknown): Encoded {
  if (typeof value === "bigint") return ["i", value.toString()];
  if (typeof value === "number" || typeof value === "string") return ["v", value];
  return ["v", null];
}

function decode(value: Encoded): SQLInputValue {
  return value[0] === "i" ? BigInt(value[1]) : value[1];
}

/**
 * Reads the rows new since the cursor in one read transaction (one snapshot), until `budget`
 * bytes. Passes already under way are finished first; then, for sessions, messages and parts in
 * turn, rows inserted behind the cursor are read and a new pass takes everything after it. A
 * pass of a table starts only once the tables before it are read up to the same snapshot, so a
 * part never comes before its message.
 */
function readTables(
  db: DatabaseSync,
  cursorKey: string | null,
  budget: number,
  watched: readonly string[],
): RowRead {
  const present = tablesOf(db);
  const readable = watched.filter((t) => present.has(t) && hasCursorColumns(db, t));
  const tables = [...TABLES.filter((t) => present.has(t)), ...readable];
  const cursor = parseDatabaseCursor(cursorKey, [...TABLES, ...readable]);
  const rows: Uint8Array[] = [];
  let bytes = 0;
  const take = (row: Uint8Array): boolean => {
    rows.push(row);
    bytes += row.length;
    return bytes >= budget;
  };
  const result = (more: boolean): RowRead => ({ rows, cursorKey: JSON.stringify(cursor), more });
  db.exec("BEGIN");
  try {
    const readers = tables.map((t) => new TableReader(db, t));
    for (const reader of readers) {
      if (cursor[reader.table]!.pass && reader.continuePass(cursor[reader.table]!, take)) {
        return result(true);
      }
    }
    for (const reader of readers) {
      const c = cursor[reader.table]!;
      if (reader.readLate(c, take)) return result(true);
      if (reader.startPass(c) && reader.continuePass(c, take)) return result(true);
    }
    return result(false);
  } finally {
    db.exec("COMMIT");
  }
}

function tablesOf(db: DatabaseSync): Set<string> {
  const rows = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all();
  return new Set((rows as { name: string }[]).map((r) => r.name));
}

/** True when a table has the columns rows are read in order of (`id`, `time_updated`). */
function hasCursorColumns(db: DatabaseSync, table: string): boolean {
  const columns = db.prepare("SELECT name FROM pragma_table_info(?)").all(table) as {
    name: string;
  }[];
  const names = new Set(columns.map((c) => c.name));
  return names.has("id") && names.has("time_updated");
}

/** The reads of one table; each `take` returns true once the budget is reached. */
class TableReader {
  readonly table: string;
  #db: DatabaseSync;
  #fetch: StatementSync;
  #names: string[];

  constructor(db: DatabaseSync, table: string) {
    this.table = table;
    this.#db = db;
    this.#fetch = db.prepare(`SELECT * FROM "${table}" WHERE rowid = ?`);
    this.#fetch.setReadBigInts(true);
    this.#names = this.#fetch.columns().map((c) => c.name);
  }

  /** Reads the rows inserted since the last pass started whose key is behind the cursor. */
  readLate(c: TableCursor, take: (row: Uint8Array) => boolean): boolean {
    if (c.done === null || c.seenRowid === null) return false;
    const stmt = this.#prepare(
      `SELECT rowid AS r FROM "${this.table}" WHERE rowid > ?3 AND NOT ${AFTER}
       ORDER BY rowid LIMIT ${PAGE}`,
    );
    const [t, id] = [decode(c.done[0]), c.done[1]];
    while (true) {
      const page = stmt.all(t, id, BigInt(c.seenRowid)) as { r: bigint }[];
      for (const { r } of page) {
        c.seenRowid = r.toString();
        if (take(this.row(r))) return true;
      }
      if (page.length < PAGE) return false;
    }
  }

  /** Starts a pass over the rows after the cursor; false when there are none. */
  startPass(c: TableCursor): boolean {
    const highest = this.#prepare(`SELECT coalesce(max(rowid), 0) AS r FROM "${this.table}"`)
      .get() as { r: bigint };
    c.seenRowid = highest.r.toString();
    const newest = (c.done === null
      ? this.#prepare(
        `SELECT time_updated AS t, id FROM "${this.table}"
         ORDER BY time_updated DESC, id DESC LIMIT 1`,
      ).get()
      : this.#prepare(
        `SELECT time_updated AS t, id FROM "${this.table}" WHERE ${AFTER}
         ORDER BY time_updated DESC, id DESC LIMIT 1`,
      ).get(decode(c.done[0]), c.done[1])) as { t: unknown; id: string } | undefined;
    if (!newest) return false;
    c.pass = { upTo: [encode(newest.t), newest.id], lastRowid: c.seenRowid, position: "0" };
    return true;
  }

  /** Reads on in the pass under way; at its end the cursor moves to the pass's upper key. */
  continuePass(c: TableCursor, take: (row: Uint8Array) => boolean): boolean {
    const pass = c.pass!;
    const stmt = c.done === null
      ? this.#prepare(
        `SELECT rowid AS r FROM "${this.table}" WHERE rowid > ?3 AND rowid <= ?4 AND ${UP_TO}
         ORDER BY rowid LIMIT ${PAGE}`,
      )
      : this.#prepare(
        `SELECT rowid AS r FROM "${this.table}" WHERE rowid > ?3 AND rowid <= ?4 AND ${UP_TO}
           AND ${AFTER} ORDER BY rowid LIMIT ${PAGE}`,
      );
    // Numbered parameters: those a statement does not use are bound and ignored.
    const done: SQLInputValue[] = c.done === null ? [null, null] : [decode(c.done[0]), c.done[1]];
    const upTo: SQLInputValue[] = [decode(pass.upTo[0]), pass.upTo[1]];
    while (true) {
      const page = stmt.all(
        done[0]!,
        done[1]!,
        BigInt(pass.position),
        BigInt(pass.lastRowid),
        upTo[0]!,
        upTo[1]!,
      ) as { r: bigint }[];
      for (const { r } of page) {
        pass.position = r.toString();
        if (take(this.row(r))) {
          if (r.toString() === pass.lastRowid) this.#finish(c);
          return true;
        }
      }
      if (page.length < PAGE) {
        this.#finish(c);
        return false;
      }
    }
  }

  #finish(c: TableCursor): void {
    c.done = c.pass!.upTo;
    c.pass = null;
  }

  #prepare(sql: string): StatementSync {
    const stmt = this.#db.prepare(sql);
    stmt.setReadBigInts(true);
    return stmt;
  }

  /** One row as its raw record. */
  row(rowid: bigint): Uint8Array {
    // Column names of one table are distinct, so the row object holds every value; the order
    // comes from the statement's columns.
    const row = this.#fetch.get(rowid) as Record<string, unknown>;
    return rowJson(this.table, this.#names, this.#names.map((name) => row[name]));
  }
}

/** Keys after the cursor (`?1`, `?2`) and up to a pass's upper key (`?5`, `?6`). */
const AFTER = "(time_updated > ?1 OR (time_updated = ?1 AND id > ?2))";
const UP_TO = "(time_updated < ?5 OR (time_updated = ?5 AND id <= ?6))";

// ---- reading the older JSON storage ----

interface StorageFile {
  table: Table;
  id: string;
  path: string;
  /** Path below the storage dir, the file's name in the cursor. */
  rel: string;
}

/** The storage dir of a session file `storage/session/<projectID>/<id>.json`. */
function storageDirOf(sessionPath: string): string {
  return dirname(dirname(dirname(sessionPath)));
}

/** The session's files in reading order: the session, its messages, then each message's parts. */
function storageFiles(sessionPath: string): StorageFile[] {
  const storage = storageDirOf(sessionPath);
  const file = (table: Table, path: string): StorageFile => ({
    table,
    id: basename(path, ".json"),
    path,
    rel: relative(storage, path),
  });
  const sessionId = basename(sessionPath, ".json");
  const messages = jsonFilesIn(join(storage, "message", sessionId)).map((p) => file("message", p));
  const parts = messages.flatMap((m) =>
    jsonFilesIn(join(storage, "part", m.id)).map((p) => file("part", p))
  );
  return [file("session", sessionPath), ...messages, ...parts];
}

function jsonFilesIn(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)]
      .filter((e) => e.isFile && e.name.endsWith(".json"))
      .map((e) => e.name)
      .sort()
      .map((name) => join(dir, name));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) return [];
    throw err;
  }
}

function fileSignature(path: string): string | null {
  try {
    const stat = Deno.lstatSync(path);
    return stat.isFile ? `${stat.size}:${stat.mtime?.getTime() ?? ""}` : null;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/** Names, sizes and mtimes of every file of the session. */
function storageFingerprint(sessionPath: string): string {
  try {
    const hash = sha256Hash();
    for (const f of storageFiles(sessionPath)) hash.update(`${f.rel}\0${fileSignature(f.path)}\n`);
    return hash.digest("hex").slice(0, 32);
  } catch (err) {
    return `unreadable: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/**
 * Reads the session's files that are new or changed since the cursor (a map of each file's
 * size, mtime and content hash: a file merely touched is not stored again), in order, until
 * `budget` bytes. Files whose id one of the databases beside the storage dir holds are
 * passed over: the database's copy is the one captured.
 */
function readStorage(
  sessionPath: string,
  cursorKey: string | null,
  budget: number,
  reader: OpencodeReader,
): RowRead {
  const seen: Record<string, string> = cursorKey
    ? (obj(obj(JSON.parse(cursorKey))?.files) as Record<string, string> | null) ?? {}
    : {};
  const changed: { file: StorageFile; signature: string }[] = [];
  for (const file of storageFiles(sessionPath)) {
    const signature = fileSignature(file.path);
    if (signature === null) continue;
    const previous = seen[file.rel];
    if (previous !== undefined && previous.startsWith(`${signature}:`)) continue;
    changed.push({ file, signature });
  }
  const inDatabase = idsInDatabases(
    dirname(storageDirOf(sessionPath)),
    changed.map((c) => c.file),
    reader,
  );
  const rows: Uint8Array[] = [];
  let bytes = 0;
  let more = false;
  for (const { file, signature } of changed) {
    if (inDatabase.has(`${file.table}:${file.id}`)) {
      seen[file.rel] = `${signature}:db`;
      continue;
    }
    let content: Uint8Array;
    try {
      content = Deno.readFileSync(file.path);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) continue;
      throw err;
    }
    const hash = sha256Hex(content).slice(0, 16);
    const previous = seen[file.rel];
    seen[file.rel] = `${signature}:${hash}`;
    if (previous !== undefined && previous.endsWith(`:${hash}`)) continue;
    rows.push(content);
    bytes += content.length;
    if (bytes >= budget) {
      more = true;
      break;
    }
  }
  return { rows, cursorKey: JSON.stringify({ files: seen }), more };
}

/** Which of `files` (as `<table>:<id>`) the databases in `dataDir` hold. */
function idsInDatabases(
  dataDir: string,
  files: StorageFile[],
  reader: OpencodeReader,
): Set<string> {
  const found = new Set<string>();
  if (!files.length) return found;
  for (const path of databasesIn(dataDir, reader.flavor.databaseName, new Map())) {
    withDatabase(path, reader, (db) => {
      const present = tablesOf(db);
      const lookups = new Map<Table, StatementSync>();
      for (const table of TABLES) {
        if (present.has(table)) {
          lookups.set(table, db.prepare(`SELECT 1 AS x FROM "${table}" WHERE id = ?`));
        }
      }
      for (const file of files) {
        if (lookups.get(file.table)?.get(file.id)) found.add(`${file.table}:${file.id}`);
      }
      // Kept for the next session file of this storage (each is a source of its own).
    }, () => false);
  }
  return found;
}

// ---- deriving records ----

function conversationOf(
  agent: Agent,
  sessionId: string,
  extra: Partial<ConversationInfo> = {},
): ConversationInfo {
  return { key: `${agent}:${sessionId}`, nativeId: sessionId, ...extra };
}

function base(kind: Kind, role: Role | null, extra: Partial<Derived>): Derived {
  return makeDerived(kind, role, null, extra);
}

/** Kind, role, conversation, text and revision of one entry. */
function derive(
  entry: Entry | Bad,
  state: OpencodeState,
  source: SourceRef,
  lookup: Lookup,
  flavor: OpencodeFlavor,
): Derived {
  const { agent } = flavor;
  if ("bad" in entry) {
    return base("meta", null, {
      conversation: entry.sessionId ? conversationOf(agent, entry.sessionId) : null,
      drift: entry.bad,
      version: entry.sessionId ? sessionVersion(entry.sessionId, source, lookup) : null,
    });
  }
  const key = `${entry.table}:${entry.id}`;
  const earlier = lookup(key) !== null;
  // A first revision is dated when it was made; a later one when it changed.
  const ts = earlier ? entry.updated ?? entry.created : entry.created ?? entry.updated;
  const revision = { key, supersedes: earlier, ts };
  switch (entry.table) {
    case "session": {
      const title = entry.title && !PLACEHOLDER_TITLE.test(entry.title)
        ? { text: titleFrom(entry.title), rank: 3 }
        : null;
      return base("meta", null, {
        ...revision,
        conversation: conversationOf(agent, entry.id, {
          parentKey: entry.parentId ? `${agent}:${entry.parentId}` : null,
          subagent: entry.parentId !== null,
          cwd: entry.directory,
          archived: entry.archived,
        }),
        title,
        version: entry.version,
      });
    }
    case "message": {
      const info: MessageInfo = {
        id: entry.id,
        role: roleOf(entry.data.role),
        summary: entry.data.summary === true,
      };
      state.message = info;
      return base("meta", null, {
        ...revision,
        conversation: conversationOf(agent, entry.sessionId, {
          cwd: str(obj(entry.data.path)?.cwd),
        }),
        messageId: entry.id,
        newMessage: !earlier,
        text: messageText(entry.data),
        usage: info.role === "assistant" ? messageUsage(entry.id, entry.data) : null,
      });
    }
    case "part":
      return derivePart(entry, state, source, lookup, revision, flavor);
  }
}

/**
 * The model call an assistant message reports: its `tokens` and `cost` as OpenCode wrote them,
 * the message revised as the reply streams in (the newest revision counts). Reasoning tokens are
 * billed as output. A cost of 0 is OpenCode not knowing the price: the tokens are priced instead.
 */
function messageUsage(id: string, data: Record<string, unknown>): Usage | null {
  const tokens = obj(data.tokens);
  if (!tokens) return null;
  const count = (value: unknown) =>
    typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
  const cache = obj(tokens.cache);
  const cost = count(data.cost);
  return {
    call: `message:${id}`,
    revised: true,
    model: str(data.modelID),
    input: count(tokens.input),
    output: count(tokens.output) + count(tokens.reasoning),
    cacheWrite: count(cache?.write),
    cacheRead: count(cache?.read),
    cost: cost > 0 ? cost : null,
  };
}

function derivePart(
  entry: Extract<Entry, { table: "part" }>,
  state: OpencodeState,
  source: SourceRef,
  lookup: Lookup,
  revision: Partial<Derived>,
  flavor: OpencodeFlavor,
): Derived {
  const conversation = conversationOf(flavor.agent, entry.sessionId);
  const ids = { conversation, messageId: entry.messageId, partId: entry.id };
  const type = str(entry.data.type);
  if (!type) {
    return base("meta", null, {
      ...ids,
      ts: revision.ts ?? null,
      drift: { category: "missing_fields", detail: "part without a type" },
      version: sessionVersion(entry.sessionId, source, lookup),
    });
  }
  const message = messageOf(entry.messageId, state, source, lookup);
  const role = message?.role ?? null;
  const text = partText(entry.data, flavor.text);
  const record = (kind: Kind, withRole: boolean, extra: Partial<Derived> = {}) =>
    base(kind, withRole ? role : null, { ...revision, ...ids, text, ...extra });
  switch (type) {
    case "text": {
      if (message?.summary) return record("summary", false);
      const prompt = role === "user" && entry.data.synthetic !== true &&
        entry.data.ignored !== true && text.trim() !== "";
      return record("message", true, { title: prompt ? { text: titleFrom(text), rank: 1 } : null });
    }
    case "reasoning":
      return record("reasoning", true);
    case "tool":
    case "subtask":
      return record("tool_call", true);
    case "compaction":
      return record("summary", false);
    case "step-start":
    case "step-finish":
    case "retry":
      return record("event", false);
    case "file":
    case "patch":
    case "snapshot":
    case "agent":
      return record("meta", false);
    default:
      return base("meta", null, {
        ...ids,
        ts: revision.ts ?? null,
        drift: { category: "unknown_type", detail: `part/${type}` },
        version: sessionVersion(entry.sessionId, source, lookup),
      });
  }
}

/** The part's message: the one last seen when it is that one, else the stored one. */
function messageOf(
  id: string,
  state: OpencodeState,
  source: SourceRef,
  lookup: Lookup,
): MessageInfo | null {
  if (state.message?.id === id) return state.message;
  const raw = lookup(`message:${id}`);
  if (!raw) return null;
  const entry = entryOf(raw, source);
  if ("bad" in entry || entry.table !== "message") return null;
  state.message = { id, role: roleOf(entry.data.role), summary: entry.data.summary === true };
  return state.message;
}

function sessionVersion(sessionId: string, source: SourceRef, lookup: Lookup): string | null {
  const raw = lookup(`session:${sessionId}`);
  if (!raw) return null;
  const entry = entryOf(raw, source);
  return "bad" in entry || entry.table !== "session" ? null : entry.version;
}

function roleOf(value: unknown): Role | null {
  return value === "user" || value === "assistant" || value === "system" ? value : null;
}
