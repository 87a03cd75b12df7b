// The Crush adapter: reads sessions and messages from each project's `.crush/crush.db` (SQLite,
// read from a private snapshot, never where it is), found through Crush's own list of projects
// (`projects.json` in its global data dir) and the roots config names.
//
// Crush writes a message row when a turn starts and updates it in place while the model streams
// (its `parts` grow, `updated_at` moves, in whole seconds). A source's records are its rows, each
// read again whenever it changed: a changed row is a newer revision of the record stored under
// its key (`message:<id>`, `session:<id>`), which replaces the older one in the index, so search
// finds each message once, as it ended, and `show` shows it once.

import { agentRoots } from "../agents.ts";
import { basename, dirname, join } from "../path.ts";
import type { DatabaseSync } from "node:sqlite";
import {
  type ConversationInfo,
  type Derived,
  type DiscoverContext,
  type Kind,
  type Lookup,
  makeDerived,
  type RowAdapter,
  type RowRead,
  type SourceRef,
  type Usage,
} from "./adapter.ts";
import { databaseRows, rowJson } from "./_snapshot.ts";
import { sha256Hex } from "../sha256.ts";
import { obj, str, titleFrom, toEpochMs } from "./_text.ts";
import {
  CRUSH_SKIP_KEYS,
  type CrushPart,
  crushRowOf,
  crushRowText,
  crushToolOf,
  PART_TYPES,
  partsOf,
  partsText,
  pastedText,
} from "./crush_text.ts";

/** Nothing is carried between rows: each row names its session, and lookups find the rest. */
export type CrushState = Record<string, never>;

/** How a Crush adapter reads its databases. */
export interface CrushOptions {
  /** How long a read waits for a lock held by Crush before the source is retried next run. */
  busyTimeoutMs?: number;
}

const DATABASE = "crush.db";
const DATA_DIR = ".crush";
const PROJECTS = "projects.json";

/**
 * The titles Crush gives a session before it has one of its own (internal/agent: a new session,
 * a sub-agent's, the title generator's): not titles of the conversation.
 */
const PLACEHOLDER_TITLES = new Set([
  "Untitled Session",
  "New Session",
  "New Agent Session",
  "Generate a title",
]);

const DEFAULT_BUSY_TIMEOUT_MS = 2000;

/** Makes a Crush adapter. Tests pass a short `busyTimeoutMs`; `crush` is the one capture uses. */
export function createCrushAdapter(options: CrushOptions = {}): RowAdapter<CrushState> {
  // Databases are read from private copies in the data dir's `run/` (see _snapshot.ts).
  const database = databaseRows(
    "Crush",
    options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
    readChanged,
  );
  const roots = (ctx: DiscoverContext): string[] => agentRoots("crush", ctx);
  return {
    agent: "crush",
    mode: "rows",
    // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
    // 1: the first.
    // 2: read against real databases: a paste's text and a failed turn's error are words, a
    //    turn that only failed is an event, and each session's usage is derived.
    derivation: 2,
    skipKeys: CRUSH_SKIP_KEYS,
    roots,

    async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
      database.locate(ctx);
      const seen = new Set<string>();
      for (const root of [...roots(ctx), ...knownProjects(ctx)]) {
        for (const path of databasesOf(root, ctx.skipped)) {
          if (seen.has(path)) continue;
          seen.add(path);
          yield { agent: "crush", locator: path, path, format: "rows" };
        }
      }
    },

    fingerprint: database.fingerprint,

    initialState: (): CrushState => ({}),

    readRows: database.readRows,

    parseRow(raw: Uint8Array, _state: CrushState, source: SourceRef, lookup: Lookup): Derived {
      return derive(raw, source, lookup);
    },

    textOf: crushRowText,

    toolOf: (bytes: Uint8Array) => crushToolOf(bytes),
  };
}

/** Crush's sessions, as capture reads them. */
export const crush: RowAdapter<CrushState> = createCrushAdapter();

// ---- discovery ----

/**
 * The project directories logbook knows (the recorded cwds of captured conversations, mirrored
 * projects), where a `.crush/crush.db` of a project missing from Crush's list may be.
 */
function knownProjects(ctx: DiscoverContext): readonly string[] {
  return ctx.projects ?? [];
}

/**
 * The databases a root leads to: the root itself when it is a `crush.db`; the one in it when
 * it is a data dir (`.crush`) or a project (`<project>/.crush/crush.db`); and, when it holds
 * Crush's `projects.json`, the one in every data dir that list names.
 */
function databasesOf(root: string, skipped: Map<string, number>): string[] {
  const count = (reason: string) => skipped.set(reason, (skipped.get(reason) ?? 0) + 1);
  const kind = kindOf(root);
  if (kind === "file") return basename(root) === DATABASE ? [root] : [];
  if (kind !== "dir") {
    if (kind === "symlink") count("symlink");
    return [];
  }
  const found: string[] = [];
  const take = (path: string) => {
    const what = kindOf(path);
    if (what === "file") found.push(path);
    else if (what === "symlink") count("symlink");
  };
  take(join(root, DATABASE));
  take(join(root, DATA_DIR, DATABASE));
  for (const dataDir of projectDataDirs(join(root, PROJECTS), count)) {
    take(join(dataDir, DATABASE));
  }
  return found;
}

function kindOf(path: string): "file" | "dir" | "symlink" | null {
  try {
    const stat = Deno.lstatSync(path);
    return stat.isSymlink ? "symlink" : stat.isFile ? "file" : stat.isDirectory ? "dir" : null;
  } catch (err) {
    if (
      err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory ||
      err instanceof Deno.errors.PermissionDenied
    ) return null;
    throw err;
  }
}

/** The data dirs Crush's `projects.json` lists (`{"projects":[{"path","data_dir",…}]}`). */
function projectDataDirs(file: string, count: (reason: string) => void): string[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) return [];
    if (err instanceof Deno.errors.PermissionDenied) {
      count("unreadable file");
      return [];
    }
    throw err;
  }
  let projects: unknown;
  try {
    projects = obj(JSON.parse(text))?.projects;
  } catch {
    count("unreadable file");
    return [];
  }
  if (!Array.isArray(projects)) return [];
  return projects.flatMap((p) => {
    const project = obj(p);
    const dataDir = str(project?.data_dir);
    if (dataDir) return [dataDir];
    const path = str(project?.path);
    return path ? [join(path, DATA_DIR)] : [];
  });
}

// ---- reading a database ----

/**
 * Where reading stands: every row whose `updated_at` (in seconds) is before `t` was read as it
 * is; of the rows at `t`, those in `seen`, by the hash of their record. Crush stamps a change
 * in whole seconds, so a row changed twice in one second is told by its hash. A row inserted
 * with an older stamp (a clock set back, another writer) is found by its rowid: above `rowids`,
 * the highest of each table when the last whole read began. `done` holds the rows a read cut
 * short by its budget took already (by hash), so a read in several calls takes each once.
 */
interface Cursor {
  /** The newest migration read, whose row says which schema the database has. */
  schema: string | null;
  t: number | null;
  seen: Record<string, string>;
  rowids: Record<string, number>;
  done: Record<string, string>;
}

function parseCursor(key: string | null): Cursor {
  const saved = key ? obj(JSON.parse(key)) : null;
  const record = (value: unknown) => (obj(value) ?? {}) as Record<string, never>;
  return {
    schema: str(saved?.schema),
    t: typeof saved?.t === "number" ? saved.t : null,
    seen: record(saved?.seen),
    rowids: record(saved?.rowids),
    done: record(saved?.done),
  };
}

/** A stamp in seconds, whichever unit a row holds (Crush's schema says ms, it writes s). */
const seconds = (column: string) =>
  `CASE WHEN ${column} > 100000000000 THEN ${column} / 1000 ELSE ${column} END`;

/**
 * Reads, in one read transaction, the newest migration when it is new, then the sessions and
 * messages that changed since the cursor, until `budget` bytes. They are taken in the order they
 * were made (a session before its messages in the same second, then by rowid), not in the order
 * they last changed: Crush finishes an assistant row (its `finished_at`, its last parts) after
 * the tool rows its calls made, so by `updated_at` a turn's results would come before its calls.
 */
function readChanged(db: DatabaseSync, cursorKey: string | null, budget: number): RowRead {
  const cursor = parseCursor(cursorKey);
  const rows: Uint8Array[] = [];
  let bytes = 0;
  const result = (more: boolean): RowRead => ({ rows, cursorKey: JSON.stringify(cursor), more });
  db.exec("BEGIN");
  try {
    const tables = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
        name: string;
      }[]).map((r) => r.name),
    );
    if (tables.has("goose_db_version")) {
      const fetch = db.prepare(
        `SELECT * FROM goose_db_version WHERE is_applied = 1 ORDER BY version_id DESC, id DESC
         LIMIT 1`,
      );
      fetch.setReadBigInts(true);
      const newest = fetch.get() as Record<string, unknown> | undefined;
      if (newest && String(newest.version_id) !== cursor.schema) {
        const names = fetch.columns().map((c) => c.name);
        rows.push(rowJson("goose_db_version", names, names.map((n) => newest[n])));
        cursor.schema = String(newest.version_id);
      }
    }
    const present = (["sessions", "messages"] as const).filter((t) => tables.has(t));
    if (!present.length) return result(false);
    const fetches = new Map(present.map((table) => {
      const stmt = db.prepare(`SELECT * FROM "${table}" WHERE rowid = ?`);
      stmt.setReadBigInts(true);
      return [table, { stmt, names: stmt.columns().map((c) => c.name) }];
    }));
    // The highest rowids now: once this read is whole, rows above them are the late ones.
    const highest = Object.fromEntries(present.map((table) => [
      table,
      Number(
        (db.prepare(`SELECT coalesce(max(rowid), 0) AS r FROM "${table}"`).get() as {
          r: number;
        }).r,
      ),
    ]));
    const changed = db.prepare(
      present.map((table, rank) =>
        `SELECT '${table}' AS tbl, ${rank} AS rank, rowid AS r, ${seconds("updated_at")} AS u,
           ${seconds("created_at")} AS c
         FROM "${table}" WHERE ${seconds("updated_at")} >= ?1 OR rowid > ?${rank + 2}`
      ).join(" UNION ALL ") + " ORDER BY c, rank, r",
    );
    const since = cursor.t ?? -1;
    // Before a whole read, every row is read by its stamp: no row is late.
    const bound = (table: string) => cursor.rowids[table] ?? Number.MAX_SAFE_INTEGER;
    const found = changed.all(since, ...present.map(bound)) as {
      tbl: "sessions" | "messages";
      r: number;
      u: number;
    }[];
    // Where the cursor stands once this read is whole: the newest stamp, and the rows at it.
    let t = cursor.t;
    let seen: Record<string, string> = {};
    for (const { tbl, r, u } of found) {
      const fetch = fetches.get(tbl)!;
      const row = fetch.stmt.get(r) as Record<string, unknown> | undefined;
      if (!row) continue;
      const raw = rowJson(tbl, fetch.names, fetch.names.map((n) => row[n]));
      const key = `${tbl}:${String(row.id)}`;
      const hash = sha256Hex(raw).slice(0, 16);
      if (t === null || u > t) {
        t = u;
        seen = {};
      }
      if (u === t) seen[key] = hash;
      if (cursor.done[key] === hash) continue;
      if (u === cursor.t && cursor.seen[key] === hash) continue;
      cursor.done[key] = hash;
      rows.push(raw);
      bytes += raw.length;
      if (bytes >= budget) return result(true);
    }
    cursor.t = t;
    cursor.seen = seen;
    cursor.rowids = highest;
    cursor.done = {};
    return result(false);
  } finally {
    db.exec("COMMIT");
  }
}

// ---- deriving records ----

/** The project a database belongs to: the folder its `.crush` data dir is in. */
function cwdOf(source: SourceRef): string | null {
  const dir = dirname(source.path);
  return basename(dir) === DATA_DIR ? dirname(dir) : null;
}

function conversationOf(
  sessionId: string,
  source: SourceRef,
  extra: Partial<ConversationInfo> = {},
): ConversationInfo {
  return { key: `crush:${sessionId}`, nativeId: sessionId, cwd: cwdOf(source), ...extra };
}

/** The schema the database has (its newest migration), as the version its records are of. */
function schemaVersion(lookup: Lookup): string | null {
  const raw = lookup("schema");
  if (!raw) return null;
  const entry = crushRowOf(raw);
  return "bad" in entry ? null : `schema ${String(entry.row.version_id)}`;
}

/** Kind, role, conversation, text and revision of one row. */
function derive(raw: Uint8Array, source: SourceRef, lookup: Lookup): Derived {
  const entry = crushRowOf(raw);
  if ("bad" in entry) {
    return makeDerived("meta", null, null, {
      drift: { category: "unparsable", detail: entry.bad },
      version: schemaVersion(lookup),
    });
  }
  const { row } = entry;
  if (entry.table === "goose_db_version") {
    return makeDerived("meta", null, null, {
      key: "schema",
      supersedes: lookup("schema") !== null,
      version: `schema ${String(row.version_id)}`,
    });
  }
  const id = str(row.id);
  const version = schemaVersion(lookup);
  if (!id) {
    return makeDerived("meta", null, null, {
      drift: { category: "missing_fields", detail: `a ${entry.table} row without an id` },
      version,
    });
  }
  const key = `${entry.table === "sessions" ? "session" : "message"}:${id}`;
  const earlier = lookup(key) !== null;
  const created = toEpochMs(row.created_at);
  const updated = toEpochMs(row.updated_at);
  // A first revision is dated when it was made; a later one when it changed.
  const revision = { key, supersedes: earlier, ts: earlier ? updated : created, version };
  if (entry.table === "sessions") {
    const parent = str(row.parent_session_id);
    const title = str(row.title);
    return makeDerived(
      "meta",
      null,
      conversationOf(id, source, {
        parentKey: parent ? `crush:${parent}` : null,
        subagent: parent !== null,
        agentType: parent === null ? null : id.startsWith("title-") ? "title" : "agent",
      }),
      {
        ...revision,
        title: title && !PLACEHOLDER_TITLES.has(title) ? { text: titleFrom(title), rank: 3 } : null,
        usage: sessionUsage(id, row),
      },
    );
  }
  const sessionId = str(row.session_id);
  const conversation = sessionId ? conversationOf(sessionId, source) : null;
  const drift = (category: "unknown_type" | "unparsable" | "missing_fields", detail: string) =>
    makeDerived("meta", null, conversation, {
      ts: revision.ts,
      drift: { category, detail },
      version,
    });
  if (!sessionId) return drift("missing_fields", "a message without a session");
  const parts = partsOf(row);
  if ("bad" in parts) return drift("unparsable", parts.bad);
  const unknown = parts.find((p) => !PART_TYPES.has(p.type));
  if (unknown) return drift("unknown_type", `part/${unknown.type}`);
  const role = str(row.role);
  const text = partsText(parts);
  const base = { ...revision, messageId: id, text };
  switch (role) {
    case "user": {
      // What the person wrote, and what they pasted (a paste is a binary part of text).
      const prompt = parts.map((p) =>
        p.type === "text" ? str(p.data.text) ?? "" : p.type === "binary" ? pastedText(p.data) : ""
      ).filter((t) => t.trim() !== "").join("\n");
      return makeDerived("message", "user", conversation, {
        ...base,
        newMessage: !earlier,
        title: prompt.trim() ? { text: titleFrom(prompt), rank: 1 } : null,
      });
    }
    case "assistant": {
      if (row.is_summary_message === 1) return makeDerived("summary", null, conversation, base);
      const kind = assistantKind(parts);
      const call = kind === "tool_call" ? parts.find((p) => p.type === "tool_call") : undefined;
      return makeDerived(kind, "assistant", conversation, {
        ...base,
        newMessage: !earlier && kind === "message",
        partId: call ? str(call.data.id) : null,
      });
    }
    case "tool": {
      const result = parts.find((p) => p.type === "tool_result");
      return makeDerived("tool_result", null, conversation, {
        ...base,
        partId: result ? str(result.data.tool_call_id) : null,
      });
    }
    case "system":
      return makeDerived("message", "system", conversation, base);
    default:
      return drift("unknown_type", `role/${role ?? "none"}`);
  }
}

/**
 * A session's usage, the only usage Crush records: its tokens and cost, as one call per session
 * that each newer revision of the row replaces. Crush adds each call's cost to `cost`, so it is the
 * session's; `prompt_tokens` and `completion_tokens` are what it last wrote (the real databases
 * show the tokens of about one call's context beside the cost of all of them). No model: a
 * session's calls may use several, and the row names none.
 */
function sessionUsage(id: string, row: Record<string, unknown>): Usage | null {
  const count = (value: unknown) => {
    const n = typeof value === "bigint" ? Number(value) : value;
    return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0;
  };
  const input = count(row.prompt_tokens);
  const output = count(row.completion_tokens);
  const cost = count(row.cost);
  if (!input && !output && !cost) return null;
  return {
    call: `session:${id}`,
    revised: true,
    model: null,
    input,
    output,
    cacheWrite: 0,
    cacheRead: 0,
    cost: cost > 0 ? cost : null,
  };
}

/**
 * An assistant row: text, a tool call or reasoning, by the parts it holds (text first); a turn
 * that ended in an error before any of them (its finish part says why) is an event.
 */
function assistantKind(parts: readonly CrushPart[]): Kind {
  const types = new Set(parts.map((p) => p.type));
  return types.has("text")
    ? "message"
    : types.has("tool_call")
    ? "tool_call"
    : types.has("reasoning")
    ? "reasoning"
    : parts.some((p) => p.type === "finish" && str(p.data.message))
    ? "event"
    : "message";
}
