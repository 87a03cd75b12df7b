// The Goose adapter: reads sessions and messages from Goose's `sessions/sessions.db` (SQLite,
// read from a private snapshot, never where it is).
//
// Goose appends a message as a new row (`messages.id` only grows), but rewrites a conversation
// whole when it edits or compacts one: it deletes the session's rows and inserts them again, each
// with its `message_id`. A source's records are its sessions (read again whenever one changed)
// and its messages (each new row once). A message stored again under the same `message_id` is a
// newer revision of the one stored before (key `message:<message_id>`): the older leaves the
// index, so search finds each message once and `show` shows it once.

import { agentRoots } from "../agents.ts";
import { basename, join } from "../path.ts";
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
  CONTENT_TYPES,
  contentOf,
  contentText,
  GOOSE_SKIP_KEYS,
  type GooseContent,
  gooseRowOf,
  gooseRowText,
  gooseToolOf,
} from "./goose_text.ts";

/** Nothing is carried between rows: each row names its session, and lookups find the rest. */
export type GooseState = Record<string, never>;

/** How a Goose adapter reads its database. */
export interface GooseOptions {
  /** How long a read waits for a lock held by Goose before the source is retried next run. */
  busyTimeoutMs?: number;
}

const DATABASE = "sessions.db";
const DEFAULT_BUSY_TIMEOUT_MS = 2000;

/** Makes a Goose adapter. Tests pass a short `busyTimeoutMs`; `goose` is the one capture uses. */
export function createGooseAdapter(options: GooseOptions = {}): RowAdapter<GooseState> {
  // Databases are read from private copies in the data dir's `run/` (see _snapshot.ts).
  const database = databaseRows(
    "Goose",
    options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
    readChanged,
  );
  const roots = (ctx: DiscoverContext): string[] => agentRoots("goose", ctx);
  return {
    agent: "goose",
    mode: "rows",
    // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
    // 1: the first.
    // 2: read against a real database: "CLI Session" is no title; each session's usage.
    derivation: 2,
    skipKeys: GOOSE_SKIP_KEYS,
    roots,

    async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
      database.locate(ctx);
      const seen = new Set<string>();
      for (const root of roots(ctx)) {
        const path = databaseOf(root, ctx.skipped);
        if (path === null || seen.has(path)) continue;
        seen.add(path);
        yield { agent: "goose", locator: path, path, format: "rows" };
      }
    },

    fingerprint: database.fingerprint,

    initialState: (): GooseState => ({}),

    readRows: database.readRows,

    parseRow(raw: Uint8Array, _state: GooseState, _source: SourceRef, lookup: Lookup): Derived {
      return derive(raw, lookup);
    },

    textOf: gooseRowText,

    toolOf: (bytes: Uint8Array) => gooseToolOf(bytes),
  };
}

/** Goose's sessions, as capture reads them. */
export const goose: RowAdapter<GooseState> = createGooseAdapter();

// ---- discovery ----

/** The database a root leads to: the root itself when it is one, else `<root>/sessions.db`. */
function databaseOf(root: string, skipped: Map<string, number>): string | null {
  for (const path of [root, join(root, DATABASE)]) {
    try {
      const stat = Deno.lstatSync(path);
      if (stat.isSymlink) {
        skipped.set("symlink", (skipped.get("symlink") ?? 0) + 1);
        return null;
      }
      if (stat.isFile) return basename(path) === DATABASE ? path : null;
    } catch (err) {
      if (
        !(err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory ||
          err instanceof Deno.errors.PermissionDenied)
      ) throw err;
      return null;
    }
  }
  return null;
}

// ---- reading the database ----

/**
 * Where reading stands: the newest schema version read, the hash of every session's row as last
 * read, and the highest message row read (`messages.id` is AUTOINCREMENT: it never goes back).
 */
interface Cursor {
  schema: string | null;
  sessions: Record<string, string>;
  message: number;
}

function parseCursor(key: string | null): Cursor {
  const saved = key ? obj(JSON.parse(key)) : null;
  return {
    schema: str(saved?.schema),
    sessions: (obj(saved?.sessions) ?? {}) as Record<string, string>,
    message: typeof saved?.message === "number" ? saved.message : 0,
  };
}

/**
 * Reads, in one read transaction, the newest schema version when it is new, the sessions whose
 * row changed, then the messages added since the cursor, in the order Goose wrote them, until
 * `budget` bytes.
 */
function readChanged(db: DatabaseSync, cursorKey: string | null, budget: number): RowRead {
  const cursor = parseCursor(cursorKey);
  const rows: Uint8Array[] = [];
  let bytes = 0;
  const result = (more: boolean): RowRead => ({ rows, cursorKey: JSON.stringify(cursor), more });
  const take = (raw: Uint8Array): boolean => {
    rows.push(raw);
    bytes += raw.length;
    return bytes >= budget;
  };
  const prepare = (sql: string) => {
    const stmt = db.prepare(sql);
    stmt.setReadBigInts(true);
    return stmt;
  };
  const raw = (table: string, stmt: ReturnType<typeof prepare>, row: Record<string, unknown>) => {
    const names = stmt.columns().map((c) => c.name);
    return rowJson(table, names, names.map((n) => row[n]));
  };
  db.exec("BEGIN");
  try {
    const tables = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
        name: string;
      }[]).map((r) => r.name),
    );
    if (tables.has("schema_version")) {
      const stmt = prepare("SELECT * FROM schema_version ORDER BY version DESC LIMIT 1");
      const newest = stmt.get() as Record<string, unknown> | undefined;
      if (newest && String(newest.version) !== cursor.schema) {
        cursor.schema = String(newest.version);
        take(raw("schema_version", stmt, newest));
      }
    }
    if (tables.has("sessions")) {
      const stmt = prepare("SELECT * FROM sessions ORDER BY created_at, id");
      for (const row of stmt.all() as Record<string, unknown>[]) {
        const record = raw("sessions", stmt, row);
        const hash = sha256Hex(record).slice(0, 16);
        const id = String(row.id);
        if (cursor.sessions[id] === hash) continue;
        cursor.sessions[id] = hash;
        if (take(record)) return result(true);
      }
    }
    if (tables.has("messages")) {
      const stmt = prepare("SELECT * FROM messages WHERE id > ? ORDER BY id LIMIT 256");
      while (true) {
        const page = stmt.all(cursor.message) as Record<string, unknown>[];
        for (const row of page) {
          cursor.message = Number(row.id);
          if (take(raw("messages", stmt, row))) return result(true);
        }
        if (page.length < 256) break;
      }
    }
    return result(false);
  } finally {
    db.exec("COMMIT");
  }
}

// ---- deriving records ----

/** Epoch ms of SQLite's `datetime('now')` text (UTC, `YYYY-MM-DD HH:MM:SS`) or an ISO string. */
function sqliteTime(value: unknown): number | null {
  if (typeof value !== "string") return toEpochMs(value);
  const iso = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?$/.test(value)
    ? `${value.replace(" ", "T")}Z`
    : value;
  return toEpochMs(iso);
}

function conversationOf(
  sessionId: string,
  extra: Partial<ConversationInfo> = {},
): ConversationInfo {
  return { key: `goose:${sessionId}`, nativeId: sessionId, ...extra };
}

/** The schema version of the database, as the version its records are of. */
function schemaVersion(lookup: Lookup): string | null {
  const raw = lookup("schema");
  if (!raw) return null;
  const entry = gooseRowOf(raw);
  return "bad" in entry ? null : `schema ${String(entry.row.version)}`;
}

/** Kind, role, conversation, text and revision of one row. */
function derive(raw: Uint8Array, lookup: Lookup): Derived {
  const entry = gooseRowOf(raw);
  if ("bad" in entry) {
    return makeDerived("meta", null, null, {
      drift: { category: "unparsable", detail: entry.bad },
      version: schemaVersion(lookup),
    });
  }
  const { row } = entry;
  if (entry.table === "schema_version") {
    return makeDerived("meta", null, null, {
      key: "schema",
      supersedes: lookup("schema") !== null,
      version: `schema ${String(row.version)}`,
    });
  }
  const version = schemaVersion(lookup);
  if (entry.table === "sessions") return deriveSession(row, lookup, version);
  const sessionId = str(row.session_id);
  const conversation = sessionId ? conversationOf(sessionId) : null;
  const ts = toEpochMs(Number(row.created_timestamp));
  const drift = (category: "unknown_type" | "unparsable" | "missing_fields", detail: string) =>
    makeDerived("meta", null, conversation, { ts, drift: { category, detail }, version });
  if (!sessionId) return drift("missing_fields", "a message without a session");
  const items = contentOf(row);
  if ("bad" in items) return drift("unparsable", items.bad);
  const unknown = items.find((i) => !CONTENT_TYPES.has(i.type));
  if (unknown) return drift("unknown_type", `content/${unknown.type}`);
  const id = str(row.message_id) ?? `row:${String(row.id)}`;
  const key = `message:${id}`;
  const earlier = lookup(key) !== null;
  const base = { key, supersedes: earlier, ts, version, messageId: id, text: contentText(items) };
  const kind = kindOf(items);
  const call = kind === "tool_call" ? items.find((i) => i.type === "toolRequest") : undefined;
  const response = kind === "tool_result"
    ? items.find((i) => i.type === "toolResponse")
    : undefined;
  switch (row.role) {
    case "user": {
      if (kind === "tool_result") {
        return makeDerived("tool_result", null, conversation, {
          ...base,
          partId: response ? str(response.id) : null,
        });
      }
      const prompt = items.filter((i) => i.type === "text").map((i) => str(i.text) ?? "")
        .join("\n");
      return makeDerived("message", "user", conversation, {
        ...base,
        newMessage: !earlier,
        title: prompt.trim() ? { text: titleFrom(prompt), rank: 1 } : null,
      });
    }
    case "assistant":
      return makeDerived(kind === "tool_result" ? "message" : kind, "assistant", conversation, {
        ...base,
        newMessage: !earlier && kind === "message",
        partId: call ? str(call.id) : null,
      });
    default:
      return drift("unknown_type", `role/${str(row.role) ?? "none"}`);
  }
}

/** A message: text first, then a tool call, a tool's result, or reasoning, by what it holds. */
function kindOf(items: readonly GooseContent[]): Kind {
  const types = new Set(items.map((i) => i.type));
  return types.has("text")
    ? "message"
    : types.has("toolRequest") || types.has("frontendToolRequest")
    ? "tool_call"
    : types.has("toolResponse")
    ? "tool_result"
    : types.has("thinking") || types.has("reasoning") || types.has("redactedThinking")
    ? "reasoning"
    : "message";
}

function deriveSession(
  row: Record<string, unknown>,
  lookup: Lookup,
  version: string | null,
): Derived {
  const id = str(row.id);
  if (!id) {
    return makeDerived("meta", null, null, {
      drift: { category: "missing_fields", detail: "a session without an id" },
      version,
    });
  }
  const key = `session:${id}`;
  const earlier = lookup(key) !== null;
  const parent = str(row.parent_session_id);
  const given = str(row.name) ?? str(row.description);
  // A session the CLI made is named "CLI Session" until Goose names it from its first prompts.
  const name = given && !PLACEHOLDER_NAMES.has(given) ? given : null;
  const type = str(row.session_type);
  // The name Goose generates from the first prompts, or the one a person gave (ranked higher).
  const rank = row.user_set_name === 1 || row.user_set_name === true ? 3 : 2;
  return makeDerived(
    "meta",
    null,
    conversationOf(id, {
      parentKey: parent ? `goose:${parent}` : null,
      subagent: parent !== null || type === "sub_agent",
      agentType: type === "sub_agent" ? "sub_agent" : null,
      cwd: str(row.working_dir),
      archived: row.archived_at !== null && row.archived_at !== undefined,
    }),
    {
      key,
      supersedes: earlier,
      ts: sqliteTime(earlier ? row.updated_at : row.created_at),
      version,
      title: name ? { text: titleFrom(name), rank } : null,
      usage: sessionUsage(id, row),
    },
  );
}

/** The names Goose gives a session before it has one (goose-cli's `create_session`). */
const PLACEHOLDER_NAMES = new Set(["CLI Session"]);

/**
 * A session's usage as its row keeps it: the accumulated tokens and cost of all its model calls
 * (the `accumulated_*` columns; older rows without them: the session's own token columns), as one
 * call per session that each newer revision of the row replaces. The model is the one the
 * session's `model_config_json` names. `usage_ledger` (one row per call in newer schemas) is not
 * read: no real database with one was found.
 */
function sessionUsage(id: string, row: Record<string, unknown>): Usage | null {
  const count = (value: unknown) => {
    const n = typeof value === "bigint" ? Number(value) : value;
    return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0;
  };
  const pick = (accumulated: string, own: string) =>
    row[accumulated] !== null && row[accumulated] !== undefined
      ? count(row[accumulated])
      : count(row[own]);
  const input = pick("accumulated_input_tokens", "input_tokens");
  const output = pick("accumulated_output_tokens", "output_tokens");
  const cacheRead = pick("accumulated_cache_read_tokens", "cache_read_tokens");
  const cacheWrite = pick("accumulated_cache_write_tokens", "cache_write_tokens");
  const cost = count(row.accumulated_cost);
  if (!input && !output && !cacheRead && !cacheWrite && !cost) return null;
  let model: string | null = null;
  try {
    const config = obj(JSON.parse(str(row.model_config_json) ?? "null"));
    model = str(config?.model_name) ?? str(config?.model);
  } catch {
    model = null;
  }
  return {
    call: `session:${id}`,
    revised: true,
    model,
    input,
    output,
    cacheWrite,
    cacheRead,
    cost: cost > 0 ? cost : null,
  };
}
