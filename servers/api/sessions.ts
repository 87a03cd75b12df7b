// `GET /api/sessions`, `POST /api/sessions/:id/fork` and `POST /api/sessions/:id/rename`: the
// sessions of a project as the `resume` picker lists them, forked and renamed as `fork` and
// `rename` do it, with everything shown passed through the gate.

import { Hono } from "hono";
import { z } from "zod";
import { gateFor, storeExists } from "../../lib/context.ts";
import { timeAgo } from "../../lib/format.ts";
import { holdsRedaction } from "../../lib/gate/secrets.ts";
import { projectOfNamed } from "../../lib/filters.ts";
import { type Project, projectKey, projectOf, resolveFromUser } from "../../lib/paths.ts";
import { forkConversation } from "../../lib/sessions/fork.ts";
import {
  commandLine,
  findRow,
  goneNote,
  type PickerRow,
  pickerRows,
  resumeCommand,
  resumeHint,
  type RowAgent,
  type Rows,
  runnableDir,
} from "../../lib/sessions/resume.ts";
import type { HistoryStore } from "../../lib/store/db.ts";
import {
  cleanTitle,
  CorruptRecordError,
  SessionNotFoundError,
  type SessionRecord,
  SessionStore,
} from "../../lib/sessions/records.ts";
import { type AppEnv, type Route, type Services, usingStore } from "../_deps.ts";
import { ApiError, badRequest } from "../_errors.ts";
import { parseBody, parseId, parseQuery, queryInt } from "../_input.ts";
import { redactDeep } from "../_redact.ts";

/** Sessions per page when `limit` is not given. */
export const DEFAULT_SESSIONS_LIMIT = 50;

/** A project directory in a query string (relative to where the dashboard was started). */
const projectParam = z.string().min(1).max(4096);

/** `?project` of the session routes: the project whose sessions are meant. */
export const projectQuery = z.object({ project: projectParam.optional() });

/** The query string of `GET /api/sessions`. */
export const sessionsQuery = projectQuery.extend({
  limit: queryInt(1, 500).optional(),
  offset: queryInt(0, 1e9).optional(),
});
/** A validated sessions query string. */
export type SessionsQuery = z.infer<typeof sessionsQuery>;

/** The body of `POST /api/sessions/:id/rename`. */
export const renameBody = z.strictObject({
  title: z.string({
    error: (issue) => issue.input === undefined ? "a title is required" : "expected a string",
  })
    .max(1000, "the title is too long (at most 1000 characters)")
    .refine((title) => cleanTitle(title) !== "", "the title is empty"),
});

/** One session as the dashboard lists it: a picker row, through the gate. */
export interface SessionJson {
  /** `logbook:<uuid>`, `claude:<sessionId>`, `codex:<uuid>`, `opencode:<ses_…>`. */
  id: string;
  agent: RowAgent;
  nativeId: string;
  title: string;
  /** What the list sorts by (ISO), and how long ago that was. */
  updatedAt: string;
  age: string;
  /** Bytes: the record's size, or the conversation's captured bytes. */
  size: number;
  messages: number;
  cwd: string | null;
  /** A manifest run: it has no conversation, so it is never forked or continued. */
  manifest: boolean;
  /** logbook's own sessions: what this one was forked from, if anything. */
  forkedFrom: string | null;
  /**
   * The command that resumes it, with `cd` to its directory (its nearest existing ancestor when
   * it is gone: see `resumeCommand`).
   */
  resume: string;
  /** Why the command runs elsewhere than the session did (its directory is gone), else null. */
  resumeNote: string | null;
  canFork: boolean;
  /** Only logbook's own sessions are renamed. */
  canRename: boolean;
  /** The id of its conversation page, when the history store holds it. */
  conversation: string | null;
}

/** A page of a project's sessions, newest first. */
export interface SessionsPage {
  /** The project's canonical root. */
  project: string;
  sessions: SessionJson[];
  total: number;
  offset: number;
  limit: number;
  /** The `offset` of the next page, or null on the last one. */
  next: number | null;
  /** logbook records of the project that cannot be read, left out of the list. */
  corrupt: { id: string; path: string; reason: string }[];
  /** Why the history store's conversations are missing, when they are. */
  storeProblem: string | null;
}

/** A session a fork created, or a session renamed. */
export interface SessionResult {
  id: string;
  key: string;
  title: string;
  project: string;
  cwd: string;
  forkedFrom: string | null;
  updatedAt: string;
  /** The command that continues it. */
  resume: string;
  /** Why that command runs elsewhere than the session's directory (it is gone), else null. */
  resumeNote: string | null;
}

/**
 * The project a `?project=` names (a directory, or a project as the pages show it, through the
 * gate: see `projectOfNamed`), or the dashboard's own (where it was started).
 */
export function projectFrom(svc: Services, dir: string | undefined): Project {
  if (dir === undefined) return projectOf(svc.ctx.cwd);
  if (holdsRedaction(dir)) {
    const root = storeExists(svc.ctx)
      ? usingStore(svc, (s) => projectOfNamed(dir, svc.ctx, s))
      : dir;
    return { root, key: projectKey(root) };
  }
  try {
    return projectOf(resolveFromUser(dir, svc.ctx.env));
  } catch (err) {
    throw badRequest("project", `Invalid value for "project": ${(err as Error).message}`);
  }
}

/**
 * Runs `fn` as stage `dashboard.<route>` with the project's picker rows (and the history store,
 * when there is one and it opens; the store is closed after).
 */
function withRows<T>(
  svc: Services,
  route: string,
  project: Project,
  fn: (rows: Rows, store: HistoryStore | undefined, sessions: SessionStore) => T,
): T {
  return svc.op.stageSync(`dashboard.${route}`, () => {
    const sessions = new SessionStore(svc.ctx.paths);
    let store: HistoryStore | undefined;
    let problem: string | undefined;
    if (storeExists(svc.ctx)) {
      try {
        store = svc.openStore({ mustExist: true });
      } catch (err) {
        problem = err instanceof Error ? err.message : String(err);
      }
    }
    try {
      const rows = pickerRows(sessions, project, { store, redact: svc.redact });
      if (problem !== undefined) rows.storeProblem = problem;
      return fn(rows, store, sessions);
    } finally {
      store?.close();
    }
  });
}

/**
 * The row `id` names, or the 404 (or 409 for a record that cannot be read) saying why not, its
 * message through the gate like everything else shown.
 */
function rowOf(svc: Services, rows: Rows, id: string, verb: string): PickerRow {
  try {
    return findRow(rows.rows, id, verb, rows.corrupt);
  } catch (err) {
    if (err instanceof SessionNotFoundError) {
      const why = rows.storeProblem
        ? ` (the history store could not be read: ${rows.storeProblem})`
        : "";
      throw new ApiError(404, "not_found", svc.redact(`${err.message}${why}`));
    }
    if (err instanceof CorruptRecordError) {
      throw new ApiError(409, "conflict", svc.redact(err.message));
    }
    throw err;
  }
}

/**
 * The command that resumes a row, with `cd` to its directory (shown away from any shell), and
 * the note owed when that directory is gone.
 */
export function resumeLine(
  row: PickerRow,
  project: Project,
): { line: string; note: string | null } {
  const { command, note } = resumeCommand(row, "", project.root);
  return { line: commandLine(command, ""), note };
}

function sessionJson(
  row: PickerRow,
  project: Project,
  now: number,
  inStore: (key: string) => boolean,
): SessionJson {
  const own = row.agent === "logbook";
  const resume = resumeLine(row, project);
  return {
    id: row.key,
    agent: row.agent,
    nativeId: row.nativeId,
    title: row.title,
    updatedAt: new Date(row.updatedAt).toISOString(),
    age: timeAgo(row.updatedAt, now, "short"),
    size: row.size,
    messages: row.messages,
    cwd: row.cwd,
    manifest: row.manifest,
    forkedFrom: row.record?.forkedFrom ?? null,
    resume: resume.line,
    resumeNote: resume.note,
    canFork: !row.manifest,
    canRename: own,
    conversation: own ? (inStore(row.key) ? row.key : null) : row.key,
  };
}

/** A page of the sessions of `project`, newest first, through the gate. */
export function sessionsPage(svc: Services, project: Project, query: SessionsQuery): SessionsPage {
  const offset = query.offset ?? 0;
  const limit = query.limit ?? DEFAULT_SESSIONS_LIMIT;
  const now = svc.now();
  const page = withRows(svc, "sessions", project, (rows, store): SessionsPage => {
    const stored = store?.stmt("SELECT 1 AS found FROM conversations WHERE key = ?");
    const inStore = (key: string) => stored?.get(key) !== undefined;
    const shown = rows.rows.slice(offset, offset + limit);
    return {
      project: project.root,
      sessions: shown.map((row) => sessionJson(row, project, now, inStore)),
      total: rows.rows.length,
      offset,
      limit,
      next: rows.rows.length > offset + limit ? offset + limit : null,
      corrupt: rows.corrupt.map(({ id, path, reason }) => ({ id, path, reason })),
      storeProblem: rows.storeProblem ?? null,
    };
  });
  return redactDeep(page, svc.redact);
}

function resultOf(record: SessionRecord, svc: Services): SessionResult {
  const where = runnableDir(record.cwd, "");
  return redactDeep({
    id: record.id,
    key: `logbook:${record.id}`,
    title: record.title,
    project: record.project,
    cwd: record.cwd,
    forkedFrom: record.forkedFrom,
    updatedAt: record.updatedAt,
    resume: resumeHint(record.id, where.cwd, ""),
    resumeNote: goneNote(where),
  }, svc.redact);
}

/**
 * Forks session `id` of `project` into a new logbook session, as `fork` does: a logbook session
 * with `SessionStore.fork` (the source is only read), another agent's conversation with
 * `forkConversation` (its messages through the gate). Manifest runs are a 409.
 */
export function forkSession(svc: Services, project: Project, id: string): SessionResult {
  const record = withRows(svc, "sessions.fork", project, (rows, store, sessions) => {
    const row = rowOf(svc, rows, id, "fork");
    if (row.manifest) {
      throw new ApiError(
        409,
        "conflict",
        `Cannot fork session "${row.key}": it is a manifest run, which has no conversation`,
      );
    }
    const now = svc.now();
    if (row.record) return sessions.fork(row.record, now);
    // Another agent's row comes from the history store, which is open while it is forked.
    return forkConversation({ sessions, store: store!, row, gate: gateFor(svc.ctx), now });
  });
  return resultOf(record, svc);
}

/**
 * Renames logbook session `id` of `project`, as `rename` does (the title through the gate, the
 * record rewritten at once). Another agent's conversation is a 409.
 */
export function renameSession(
  svc: Services,
  project: Project,
  id: string,
  title: string,
): SessionResult {
  const record = withRows(svc, "sessions.rename", project, (rows, _store, sessions) => {
    const row = rowOf(svc, rows, id, "rename");
    if (!row.record) {
      throw new ApiError(
        409,
        "conflict",
        `Cannot rename "${row.key}": only logbook's own sessions can be renamed`,
      );
    }
    return sessions.rename(row.record, title, gateFor(svc.ctx), svc.now());
  });
  return resultOf(record, svc);
}

/** The routes. */
export const sessionsApi: Route = (svc) =>
  new Hono<AppEnv>()
    .get("/api/sessions", (c) => {
      const query = parseQuery(c, sessionsQuery);
      return c.json(sessionsPage(svc, projectFrom(svc, query.project), query));
    })
    .post("/api/sessions/:id/fork", (c) => {
      const id = parseId(c);
      const query = parseQuery(c, projectQuery);
      return c.json(forkSession(svc, projectFrom(svc, query.project), id), 201);
    })
    .post("/api/sessions/:id/rename", async (c) => {
      const id = parseId(c);
      const query = parseQuery(c, projectQuery);
      const body = await parseBody(c, renameBody);
      return c.json(renameSession(svc, projectFrom(svc, query.project), id, body.title));
    });
