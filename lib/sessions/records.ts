// logbook's own sessions on disk: one zod-validated record and one append-only trail per session
// under `sessions/<project-key>/`, written owner-only and atomically, listed newest first.
//
// The session files, under the data dir:
//
//   sessions/<project-key>/<id>.json         the record: everything the session is
//   sessions/<project-key>/<id>.audit.jsonl  its audit trail: what happened, never what was said
//
// `<project-key>` is the project's slug and the start of the SHA-256 of its canonical root
// (lib/paths.ts `projectKey`), so `/a/b`, `/a-b` and `/a b` keep their sessions apart; `<id>` is
// a version 4 UUID.
//
// The record (`sessionRecordSchema`) is one JSON object, pretty-printed: the session's title,
// directory, project and Git branch, the build that last wrote it, the live conversation
// (`messages`, each with its time and turn), the messages a compaction replaced in requests
// (`archive`) and the summaries that replaced them (`compactions`), the spend of every turn and
// its total, the trust map, side questions, the session it was forked from, and a manifest run's
// plan. Every text in it has already passed the gate for disk. It is rewritten whole after every
// turn, rename, undo or compaction; it is validated before each write and on each read. Fields
// this build does not know, at any level, are kept through a rewrite (records of a newer build
// stay whole). A record that cannot be read (not UTF-8, not JSON, failing the schema, a name that
// does not match its id, a symbolic link) is left out of lists and reported with the reason.
//
// The trail (`TrailLine`) has one JSON object per line, appended: a turn, an undo, a rename, a
// fork or a compaction, with the gates' decisions as gate names, labels and counts (lib/gate/gate.ts
// `trailEntry`), never content. A fork copies its source's trail byte for byte.
//
// Writes are owner-only and atomic (lib/private_fs.ts): directories 0700, files 0600; a record is
// written to an fsynced temp file renamed over it, so a crash leaves the old record or the new one,
// never half of either; trail lines are appended (not fsynced: a lost last line is acceptable). No
// symbolic link inside the data dir is followed. An incognito store writes nothing at all, not
// even its directories.
//
// Beside these, a session's prompts go to `prompt-history.jsonl` (./prompt_history.ts) and the
// snapshot taken before a compaction to `prune-archives/` (./compaction.ts). Capture reads the
// records as the `logbook` source (lib/sources/logbook.ts), so they are searched with everything
// else.

import { join } from "../path.ts";
import { z } from "zod";
import type { DataPaths } from "../paths.ts";
import { projectKey } from "../paths.ts";
import {
  appendPrivate,
  assertNoSymlinkInside,
  removePath,
  SymlinkRefusedError,
  writeFileAtomic,
} from "../private_fs.ts";
import { type Gate, type TrailEntry, trailEntry } from "../gate/gate.ts";

/** The record format this build writes. Newer records are read, and their unknown fields kept. */
export const SESSION_VERSION = 1;

const iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), {
  error: "expected an ISO date and time",
});
const count = z.int().nonnegative();

/** One message of a session's conversation, as held in the record (already through the gate). */
export const messageSchema = z.looseObject({
  role: z.enum(["system", "user", "assistant"]),
  content: z.string(),
  /** When it was added. */
  at: iso.optional(),
  /** The turn it belongs to (1-based). */
  turn: count.optional(),
});

/** What one turn spent: tokens, the model that answered, and its wall time split four ways. */
export const turnSpendSchema = z.looseObject({
  turn: count,
  at: iso,
  /** `ok`, `failed` (the endpoint refused or was unreachable) or another outcome. */
  outcome: z.string(),
  /** The model name the request asked for. */
  model: z.string().nullable(),
  /** The model name the endpoint said answered (not the one asked for). */
  answeredBy: z.string().nullable(),
  tokensIn: count.nullable(),
  tokensOut: count.nullable(),
  wallMs: count,
  waitingModelMs: count,
  runningToolsMs: count,
  waitingUserMs: count,
  /** Whatever is left of `wallMs`: the four parts add up to it exactly. */
  otherMs: count,
});

/** The session's spend: every turn, and their sum. */
export const spendSchema = z.looseObject({
  turns: z.array(turnSpendSchema),
  total: z.looseObject({
    turns: count,
    tokensIn: count,
    tokensOut: count,
    wallMs: count,
    waitingModelMs: count,
    runningToolsMs: count,
    waitingUserMs: count,
    otherMs: count,
  }),
});

/** Standing permissions: the trust map and the commands the user said to stop asking about. */
export const trustSchema = z.looseObject({
  map: z.record(z.string(), z.unknown()),
  allowedCommands: z.array(z.string()),
});

/**
 * A side question (`/btw`), and its answer where it could be kept: null when the exchange met
 * untrusted content (the answer lasted only while the window was open) or the request failed.
 */
export const btwSchema = z.looseObject({
  question: z.string(),
  answer: z.string().nullable().optional(),
  at: iso.optional(),
});

/** A manifest run's plan: its goal, proposed plan, frozen steps and what each did. */
export const planSchema = z.looseObject({
  goal: z.string(),
  plan: z.array(z.string()),
  steps: z.array(z.looseObject({
    step: z.string(),
    status: z.string(),
    output: z.string().nullable().optional(),
  })),
});

/** A session record (`<id>.json`). Unknown fields, at any level, are kept when it is rewritten. */
export const sessionRecordSchema = z.looseObject({
  version: z.int().positive(),
  id: z.uuid({ version: "v4", error: "expected a version 4 UUID" }),
  title: z.string(),
  cwd: z.string().min(1),
  /** The canonical project root (see `projectOf`). */
  project: z.string().min(1),
  branch: z.string().nullable(),
  createdAt: iso,
  startedAt: iso,
  /** What lists sort by: when the record was last written. */
  updatedAt: iso,
  /** The logbook version that wrote it. */
  build: z.string(),
  kind: z.enum(["chat", "manifest"]),
  messages: z.array(messageSchema),
  /** Messages a compaction replaced in requests; the record keeps them. */
  archive: z.array(messageSchema),
  compactions: z.array(z.looseObject({})),
  spend: spendSchema,
  trust: trustSchema,
  btw: z.array(btwSchema),
  /** `logbook:<id>` of the session this one was forked from, or another agent's conversation. */
  forkedFrom: z.string().nullable(),
  /**
   * How many of the first messages (archive first) a fork copied from `forkedFrom`: the history
   * store shows them here but indexes them only in the original, so a search finds them once.
   */
  forkedMessages: z.int().nonnegative().optional(),
  /** For manifest runs: the plan the run worked to. */
  plan: planSchema.nullable(),
});

/** A session record as read and written. */
export type SessionRecord = z.infer<typeof sessionRecordSchema>;
/** One message of a record. */
export type SessionMessage = z.infer<typeof messageSchema>;
/** One turn's spend. */
export type TurnSpend = z.infer<typeof turnSpendSchema>;
/** A manifest run's plan. */
export type Plan = z.infer<typeof planSchema>;

/** One line of a session's trail: what happened and the gates' decisions, never content. */
export interface TrailLine {
  at: string;
  event: "turn" | "undo" | "rename" | "fork" | "compaction" | "btw";
  turn?: number;
  outcome?: string;
  /** Compaction: how many messages went to the archive, and whether a snapshot was written. */
  replaced?: number;
  snapshot?: boolean;
  auto?: boolean;
  /** Decisions for what was written (the record). */
  disk?: TrailEntry;
  /** Decisions for what was sent to the model. */
  model?: TrailEntry;
  /** Where a fork came from (an id, never content). */
  from?: string;
}

/** A record that cannot be read: where it is and why. */
export interface CorruptRecord {
  path: string;
  projectKey: string;
  /** The id its file name gives. */
  id: string;
  reason: string;
}

/** Thrown when no session matches an id, or more than one does. */
export class SessionNotFoundError extends Error {
  override name = "SessionNotFoundError";
}

/** Thrown when a record exists but cannot be read. */
export class CorruptRecordError extends Error {
  override name = "CorruptRecordError";
}

/** A fresh session id (a version 4 UUID). */
export function newSessionId(): string {
  return crypto.randomUUID();
}

/** What a new record needs; everything else starts empty. */
export interface NewRecord {
  id?: string;
  title?: string;
  cwd: string;
  project: string;
  branch: string | null;
  build: string;
  kind?: "chat" | "manifest";
  now: number;
}

/** A new, empty record (not written). */
export function newRecord(options: NewRecord): SessionRecord {
  const at = new Date(options.now).toISOString();
  return {
    version: SESSION_VERSION,
    id: options.id ?? newSessionId(),
    title: options.title ?? "",
    cwd: options.cwd,
    project: options.project,
    branch: options.branch,
    createdAt: at,
    startedAt: at,
    updatedAt: at,
    build: options.build,
    kind: options.kind ?? "chat",
    messages: [],
    archive: [],
    compactions: [],
    spend: { turns: [], total: emptyTotal() },
    trust: { map: {}, allowedCommands: [] },
    btw: [],
    forkedFrom: null,
    plan: null,
  };
}

/** Sums the turns into the spend total. */
export function spendTotal(turns: readonly TurnSpend[]): SessionRecord["spend"]["total"] {
  const total = emptyTotal();
  for (const t of turns) {
    // Compaction requests and side questions count towards tokens and time, not turns.
    if (t.outcome !== "compaction" && t.outcome !== "btw" && t.outcome !== "btw-failed") {
      total.turns++;
    }
    total.tokensIn += t.tokensIn ?? 0;
    total.tokensOut += t.tokensOut ?? 0;
    total.wallMs += t.wallMs;
    total.waitingModelMs += t.waitingModelMs;
    total.runningToolsMs += t.runningToolsMs;
    total.waitingUserMs += t.waitingUserMs;
    total.otherMs += t.otherMs;
  }
  return total;
}

function emptyTotal(): SessionRecord["spend"]["total"] {
  return {
    turns: 0,
    tokensIn: 0,
    tokensOut: 0,
    wallMs: 0,
    waitingModelMs: 0,
    runningToolsMs: 0,
    waitingUserMs: 0,
    otherMs: 0,
  };
}

const ID_FILE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.json$/i;

/**
 * The session records of the data dir. Reads work always; with `incognito` every write is
 * skipped (nothing at all is created under the data dir), and that cannot be changed later.
 */
export class SessionStore {
  readonly root: string;
  readonly sessionsDir: string;
  readonly incognito: boolean;

  constructor(paths: Pick<DataPaths, "root" | "sessions">, options: { incognito?: boolean } = {}) {
    this.root = paths.root;
    this.sessionsDir = paths.sessions;
    this.incognito = options.incognito ?? false;
    Object.freeze(this);
  }

  /** `sessions/<project-key>`. */
  dirOf(key: string): string {
    return join(this.sessionsDir, key);
  }

  /** Where a record lives, from its project root and id. */
  recordPath(record: Pick<SessionRecord, "project" | "id">): string {
    return join(this.dirOf(projectKey(record.project)), `${record.id}.json`);
  }

  /** Where a record's trail lives. */
  trailPath(record: Pick<SessionRecord, "project" | "id">): string {
    return join(this.dirOf(projectKey(record.project)), `${record.id}.audit.jsonl`);
  }

  /**
   * The readable records of a project, newest first by `updatedAt`, and the ones that could not
   * be read. A missing directory is an empty list.
   */
  list(key: string): { sessions: SessionRecord[]; corrupt: CorruptRecord[] } {
    const sessions: SessionRecord[] = [];
    const corrupt: CorruptRecord[] = [];
    for (const id of this.#ids(key)) {
      const path = join(this.dirOf(key), `${id}.json`);
      const read = readRecordFile(path, id, this.root);
      if ("record" in read) sessions.push(read.record);
      else corrupt.push({ path, projectKey: key, id, reason: read.reason });
    }
    sessions.sort(newestFirst);
    return { sessions, corrupt };
  }

  /** The record `id` of a project (a full id); throws SessionNotFoundError or CorruptRecordError. */
  read(key: string, id: string): SessionRecord {
    const path = join(this.dirOf(key), `${id}.json`);
    const read = readRecordFile(path, id, this.root);
    if ("record" in read) return read.record;
    if (read.missing) throw new SessionNotFoundError(`No session "${id}" in this project`);
    throw new CorruptRecordError(`Cannot read session "${id}": ${read.reason}`);
  }

  /**
   * Writes `record` atomically (0600, in a 0700 directory), after validating it. Returns false,
   * writing nothing, when incognito.
   */
  save(record: SessionRecord): boolean {
    const checked = sessionRecordSchema.safeParse(record);
    if (!checked.success) {
      throw new TypeError(`Cannot save session "${record.id}": ${describeIssues(checked.error)}`);
    }
    if (this.incognito) return false;
    writeFileAtomic(this.recordPath(record), JSON.stringify(record, null, 2) + "\n", this.root);
    return true;
  }

  /** Appends lines to a record's trail. Returns false, writing nothing, when incognito. */
  appendTrail(record: Pick<SessionRecord, "project" | "id">, lines: TrailLine[]): boolean {
    if (this.incognito || lines.length === 0) return false;
    const text = lines.map((line) => JSON.stringify(line) + "\n").join("");
    appendPrivate(this.trailPath(record), text, this.root);
    return true;
  }

  /**
   * Removes a record and its trail (a one-shot session whose only turn failed). Returns false
   * when incognito, or when either file could not be removed.
   */
  remove(record: Pick<SessionRecord, "project" | "id">): boolean {
    if (this.incognito) return false;
    let ok = true;
    for (const path of [this.recordPath(record), this.trailPath(record)]) {
      assertNoSymlinkInside(path, this.root);
      if (removePath(path).error !== undefined) ok = false;
    }
    return ok;
  }

  /** The bytes of a record's trail (empty when it has none). */
  readTrail(record: Pick<SessionRecord, "project" | "id">): Uint8Array {
    const path = this.trailPath(record);
    assertNoSymlinkInside(path, this.root);
    try {
      return Deno.readFileSync(path);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return new Uint8Array();
      throw err;
    }
  }

  /**
   * Copies `source` into a new session: a new id, the title marked `(fork)`, `startedAt` and
   * `updatedAt` set to `now`, `forkedFrom` naming the source, and the same conversation, spend,
   * trust, side questions and trail (byte for byte). The source is only read. With incognito
   * the fork is returned and nothing is written.
   */
  fork(source: SessionRecord, now: number): SessionRecord {
    if (source.kind === "manifest") {
      throw new Error(
        `Cannot fork session "${source.id}": it is a manifest run, which has no conversation`,
      );
    }
    const at = new Date(now).toISOString();
    const fork: SessionRecord = {
      ...structuredClone(source),
      id: newSessionId(),
      title: forkTitle(source.title),
      startedAt: at,
      updatedAt: at,
      forkedFrom: `logbook:${source.id}`,
      forkedMessages: source.archive.length + source.messages.length,
    };
    if (this.incognito) return fork;
    const trail = this.readTrail(source);
    this.save(fork);
    if (trail.length > 0) writeFileAtomic(this.trailPath(fork), trail, this.root);
    return fork;
  }

  /**
   * Renames a session and rewrites its record at once (the title through the gate, `updatedAt`
   * set to `now`), with a trail line. An empty title is refused (RangeError). Returns the new
   * record; with incognito nothing is written.
   */
  rename(record: SessionRecord, title: string, gate: Pick<Gate, "redact">, now: number) {
    const clean = cleanTitle(title);
    if (clean === "") {
      throw new RangeError(`Cannot rename session "${record.id}": the title is empty`);
    }
    const gated = gate.redact(clean, { destination: "disk" });
    const at = new Date(now).toISOString();
    const next: SessionRecord = { ...structuredClone(record), title: gated.text, updatedAt: at };
    if (this.save(next)) {
      this.appendTrail(next, [{ at, event: "rename", disk: trailEntry(gated) }]);
    }
    return next;
  }

  /** The ids of a project's record files (those named `<uuid>.json`). */
  #ids(key: string): string[] {
    const dir = this.dirOf(key);
    try {
      assertNoSymlinkInside(dir, this.root);
    } catch (err) {
      if (err instanceof SymlinkRefusedError) return [];
      throw err;
    }
    const ids: string[] = [];
    try {
      for (const entry of Deno.readDirSync(dir)) {
        const m = ID_FILE.exec(entry.name);
        if (m) ids.push(m[1]!);
      }
    } catch (err) {
      if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
        return [];
      }
      throw err;
    }
    return ids.sort();
  }

  /** The project keys that have a sessions directory. */
  projectKeys(): string[] {
    const keys: string[] = [];
    try {
      for (const entry of Deno.readDirSync(this.sessionsDir)) {
        if (entry.isDirectory) keys.push(entry.name);
      }
    } catch (err) {
      if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
        return [];
      }
      throw err;
    }
    return keys.sort();
  }
}

/**
 * The session records that cannot be read, with the reason for each: in one project (by key),
 * or in every project when `key` is omitted. What `status` lists.
 */
export function corruptRecords(
  paths: Pick<DataPaths, "root" | "sessions">,
  key?: string,
): CorruptRecord[] {
  const store = new SessionStore(paths, { incognito: true });
  const keys = key === undefined ? store.projectKeys() : [key];
  return keys.flatMap((k) => store.list(k).corrupt);
}

/** A title on one line, its runs of white space made single spaces. */
export function cleanTitle(title: string): string {
  return title.replace(/\s+/g, " ").trim();
}

/** The title of a fork: the source's, marked `(fork)` once. */
export function forkTitle(title: string): string {
  const base = title.trim() === "" ? "Untitled session" : title;
  return base.endsWith("(fork)") ? base : `${base} (fork)`;
}

/** Sorts records newest first by `updatedAt`, then by id so the order is stable. */
export function newestFirst(a: SessionRecord, b: SessionRecord): number {
  return Date.parse(b.updatedAt) - Date.parse(a.updatedAt) || (a.id < b.id ? -1 : 1);
}

type ReadResult = { record: SessionRecord } | { reason: string; missing?: boolean };

function readRecordFile(path: string, id: string, root: string): ReadResult {
  let bytes: Uint8Array;
  try {
    assertNoSymlinkInside(path, root);
    bytes = Deno.readFileSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { reason: "it does not exist", missing: true };
    if (err instanceof SymlinkRefusedError) {
      return { reason: "it is a symbolic link, not followed" };
    }
    if (err instanceof Deno.errors.PermissionDenied) return { reason: "permission denied" };
    if (err instanceof Deno.errors.IsADirectory) return { reason: "it is a directory" };
    throw err;
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { reason: "it is not valid UTF-8" };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { reason: `it is not valid JSON: ${err instanceof Error ? err.message : err}` };
  }
  const parsed = sessionRecordSchema.safeParse(json);
  if (!parsed.success) return { reason: describeIssues(parsed.error) };
  if (parsed.data.id.toLowerCase() !== id.toLowerCase()) {
    return { reason: `its id "${parsed.data.id}" does not match its file name` };
  }
  return { record: parsed.data };
}

function describeIssues(error: z.ZodError): string {
  return error.issues.slice(0, 3).map((issue) => {
    const key = issue.path.map((p) => typeof p === "number" ? `[${p}]` : `.${String(p)}`)
      .join("").replace(/^\./, "");
    return key === "" ? issue.message : `"${key}": ${issue.message}`;
  }).join("; ");
}
