// Finding a conversation by a full or partial id, and paging through its records in order
// with a record limit and a raw-byte budget, exactly as `show` and the dashboard need them.
// Records are in capture order, but for joined ones (FLAG_JOINED: a tool's output preview and
// the file with the whole output, captured later from another source): those are shown together,
// where the first of them is.

import { type Agent, AGENTS } from "../agents.ts";
import type { Kind, Role } from "../sources/adapter.ts";
import { HistoryStore } from "./db.ts";
import { decodedRow, decodedRows } from "./raw.ts";
import { FLAG_JOINED, FLAG_STREAMED } from "./schema.ts";
import {
  type ConversationJson,
  conversationJson,
  type ConversationRow,
  iso,
  type RecordRow,
  TextDeriver,
} from "./records.ts";

/**
 * The longest conversation id taken, whole or as a prefix, here and by `search --session` and the
 * dashboard (a prefix is matched with LIKE, whose pattern SQLite bounds; ids are a UUID or so).
 */
export const MAX_ID_CHARS = 300;

/** Thrown when a conversation id matches nothing, or more than one conversation. */
export class ConversationNotFoundError extends Error {
  override name = "ConversationNotFoundError";
}

/**
 * The conversation `id` names: a full id (`claude:<sessionId>`), a native id, or a unique
 * prefix of either. A complete id (a whole UUID, or the id its captured children name as their
 * parent) is never taken as a prefix of another conversation's id: when it is not captured
 * itself, the error says so and names its captured children.
 */
export function findConversation(store: HistoryStore, id: string): ConversationRow {
  const wanted = id.trim();
  if (!wanted) throw new RangeError("The conversation id is empty");
  if (wanted.length > MAX_ID_CHARS) {
    throw new RangeError(
      `The conversation id is too long: ${wanted.length} characters, at most ${MAX_ID_CHARS}`,
    );
  }
  // The full id first, on its index (native ids have none: matching one reads the table).
  const byKey = store.stmt("SELECT * FROM conversations WHERE key = ?").get(wanted);
  if (byKey) return byKey as unknown as ConversationRow;
  const exact = store.stmt("SELECT * FROM conversations WHERE native_id = ?")
    .all(wanted) as unknown as ConversationRow[];
  if (exact.length === 1) return exact[0]!;
  if (!exact.length) refuseMissingParent(store, wanted);
  const pattern = wanted.replace(/[\\%_]/g, (c) => `\\${c}`) + "%";
  const matches = exact.length > 1 ? exact : store.stmt(
    `SELECT * FROM conversations WHERE key LIKE ?1 ESCAPE '\\' OR native_id LIKE ?1 ESCAPE '\\'
     ORDER BY subagent, last_ts DESC LIMIT 50`,
  ).all(pattern) as unknown as ConversationRow[];
  return onlyMatch(wanted, matches, "the history store");
}

/**
 * The conversation `wanted` names among `matches`, the conversations whose id or native id it
 * is or begins (sessions first): the only one, or the one session whose other matches are all
 * its subagents (a session's prefix also matches `<id>/agent-…`). Else throws
 * ConversationNotFoundError: no such conversation in `place`, or the candidates it is ambiguous
 * between. The rule of `findConversation`, and of `show --team` in the team database.
 */
export function onlyMatch<
  M extends { key: string; subagent: number | boolean; parent_key: string | null },
>(wanted: string, matches: readonly M[], place: string): M {
  if (matches.length === 1) return matches[0]!;
  const parents = matches.filter((m) => !m.subagent);
  if (
    parents.length === 1 &&
    matches.every((m) => m === parents[0] || m.parent_key === parents[0]!.key)
  ) {
    return parents[0]!;
  }
  if (!matches.length) {
    throw new ConversationNotFoundError(`No conversation "${wanted}" in ${place}`);
  }
  const names = matches.slice(0, 5).map((m) => `"${m.key}"`).join(", ");
  throw new ConversationNotFoundError(
    `Conversation id "${wanted}" is ambiguous: it matches ${names}${
      matches.length > 5 ? " and more" : ""
    }`,
  );
}

const COMPLETE_ID = /^(?:[a-z]+:)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a whole UUID, with its agent or without: an id never taken as a prefix of another. */
export function isCompleteId(id: string): boolean {
  return COMPLETE_ID.test(id);
}

/**
 * Throws for a complete id that names no captured conversation: the parent its children name
 * (`claude:<sessionId>` of captured subagents), or a whole UUID. Such an id is a prefix of its
 * children's ids (`claude:<sessionId>/agent-…`), and resolving it to one of them would show a
 * subagent as if it were the session asked for.
 */
function refuseMissingParent(store: HistoryStore, wanted: string): void {
  const parents = wanted.includes(":") ? [wanted] : AGENTS.map((agent) => `${agent}:${wanted}`);
  const children = store.stmt(
    `SELECT key FROM conversations WHERE parent_key IN (${parents.map(() => "?").join(", ")})
     ORDER BY first_ts, key LIMIT 6`,
  ).all(...parents) as { key: string }[];
  if (children.length) {
    const names = children.slice(0, 5).map((c) => `"${c.key}"`).join(", ");
    throw new ConversationNotFoundError(
      `Conversation "${wanted}" is not captured: only its children are, ${names}${
        children.length > 5 ? " and more" : ""
      }`,
    );
  }
  if (isCompleteId(wanted)) {
    throw new ConversationNotFoundError(`No conversation "${wanted}" in the history store`);
  }
}

/** One record as `show --json` prints it; `raw` is the exact captured bytes in base64. */
export interface RecordJson {
  id: number;
  source: string;
  generation: number;
  offset: number;
  timestamp: string | null;
  kind: Kind;
  role: Role | null;
  text: string;
  raw: string;
  messageId: string | null;
  partId: string | null;
}

/** A page of a conversation. Pass `next` as `after` until it is null. */
export interface Page {
  conversation: ConversationJson;
  records: RecordJson[];
  next: number | null;
}

export interface PageOptions {
  /** Return records after this record id. */
  after?: number;
  /** At most this many records (default 100); a long line's rows count once. */
  limit?: number;
  /** At most about this many raw bytes; one record, all its rows, may cross it (default 512 KiB). */
  budget?: number;
}

export const DEFAULT_PAGE_LIMIT = 100;
export const PAGE_BUDGET = 512 * 1024;

/**
 * True for a row that goes on a line parsed whole (`seq` above 0, not streamed): a page never
 * ends before it, nor counts it, as the line's text is its first row's (a page of such rows
 * alone would show nothing). A streamed line's rows are paged one by one, as long as it is.
 */
function continuesLine(row: Pick<RecordRow, "seq" | "flags">): boolean {
  return row.seq > 0 && !(row.flags & FLAG_STREAMED);
}

/** The rows of one page, in record order, and whether more follow. */
export function pageRows(
  store: HistoryStore,
  conversationId: number,
  options: PageOptions = {},
): { rows: RecordRow[]; next: number | null } {
  const limit = Math.max(1, options.limit ?? DEFAULT_PAGE_LIMIT);
  const budget = options.budget ?? PAGE_BUDGET;
  const rows: RecordRow[] = [];
  let records = 0;
  let bytes = 0;
  let more = false;
  const iterator = store.stmt(
    "SELECT * FROM records WHERE conversation_id = ? AND id > ? ORDER BY id",
  ).iterate(conversationId, options.after ?? 0) as Iterable<RecordRow>;
  for (const stored of iterator) {
    const continues = continuesLine(stored);
    if (!continues && (records >= limit || (rows.length > 0 && bytes >= budget))) {
      more = true;
      break;
    }
    rows.push(stored);
    bytes += stored.length ?? stored.raw.length; // its captured length
    if (!continues) records++;
  }
  const next = more ? rows.at(-1)!.id : null;
  return { rows: placeJoined(store, conversationId, decodedRows(rows)), next };
}

/** The rows of joined records with one message id, in order, grouped by record. */
interface JoinedGroup {
  /** Each record's row ids, the first record (where the group is shown) first. */
  records: number[][];
  /** True when the later records fit one page: then they move to the first. */
  movable: boolean;
}

/** The joined records of a conversation with message id `messageId`. */
function joinedGroup(store: HistoryStore, conversationId: number, messageId: string): JoinedGroup {
  const rows = store.stmt(
    `SELECT id, seq, coalesce(length, length(raw)) AS size FROM records
     WHERE conversation_id = ? AND message_id = ? AND (flags & ${FLAG_JOINED}) != 0 ORDER BY id`,
  ).all(conversationId, messageId) as { id: number; seq: number; size: number }[];
  const records: number[][] = [];
  let later = 0;
  for (const row of rows) {
    if (row.seq === 0 || !records.length) records.push([]);
    records.at(-1)!.push(row.id);
    if (records.length > 1) later += row.size;
  }
  return { records, movable: records.length > 1 && later <= PAGE_BUDGET };
}

/**
 * A page's rows with joined records together: the later ones of a group (up to a page of them)
 * right after the first's last row, and left out where they were captured.
 */
function placeJoined(
  store: HistoryStore,
  conversationId: number,
  rows: RecordRow[],
): RecordRow[] {
  if (!rows.some((r) => r.flags & FLAG_JOINED && r.message_id !== null)) return rows;
  const groups = new Map<string, JoinedGroup>();
  const placed: RecordRow[] = [];
  const read = store.stmt("SELECT * FROM records WHERE id = ?");
  for (const row of rows) {
    if (!(row.flags & FLAG_JOINED) || row.message_id === null) {
      placed.push(row);
      continue;
    }
    let group = groups.get(row.message_id);
    if (!group) {
      groups.set(row.message_id, group = joinedGroup(store, conversationId, row.message_id));
    }
    const [first, ...later] = group.records;
    if (!group.movable || !first) {
      placed.push(row);
      continue;
    }
    if (!first.includes(row.id)) continue; // shown with the first
    placed.push(row);
    if (row.id !== first.at(-1)) continue;
    for (const id of later.flat()) placed.push(decodedRow(read.get(id) as unknown as RecordRow));
  }
  return placed;
}

/**
 * Where `record` is shown: itself, or for a joined record shown with an earlier one, the last
 * row of that one.
 */
function shownAt(store: HistoryStore, conversationId: number, record: number): number {
  const row = store.stmt("SELECT message_id, flags FROM records WHERE id = ?").get(record) as
    | { message_id: string | null; flags: number }
    | undefined;
  if (!row || !(row.flags & FLAG_JOINED) || row.message_id === null) return record;
  const group = joinedGroup(store, conversationId, row.message_id);
  const first = group.records[0] ?? [];
  return group.movable && !first.includes(record) ? first.at(-1)! : record;
}

/**
 * A page of `conversation` with each record's text derived again from its bytes; the texts and
 * the conversation's title pass the deriver's redaction.
 */
export function pageConversation(
  store: HistoryStore,
  deriver: TextDeriver,
  conversation: ConversationRow,
  options: PageOptions = {},
): Page {
  const { rows, next } = pageRows(store, conversation.id, options);
  return {
    conversation: conversationJson(conversation, (text) => deriver.redact(text)),
    records: rows.map((row) => recordJson(row, deriver)),
    next,
  };
}

/** The printable form of a record row. */
function recordJson(row: RecordRow, deriver: TextDeriver): RecordJson {
  return {
    id: row.id,
    // A transcript's path holds its project's (Claude Code's `-home-dev-<dir>` folders).
    source: deriver.redact(deriver.source(row.source_id).ref.locator),
    generation: row.generation,
    offset: row.offset,
    timestamp: iso(row.ts),
    kind: row.kind,
    role: row.role,
    text: deriver.textOf(row),
    raw: row.raw.toBase64(),
    messageId: row.message_id,
    partId: row.part_id,
  };
}

export interface RecentOptions {
  /** Canonical project root (see `projectOf`); all projects when absent. */
  project?: string;
  agent?: Agent;
  /** Include subagent conversations (default false). */
  subagents?: boolean;
  /** At most this many (default 20). */
  limit?: number;
  /** Skip this many of the most recent first (default 0). */
  offset?: number;
}

/**
 * Conversations by last activity, newest first (subagents left out unless asked for): `limit`
 * after `offset`, and how many there are.
 */
export function recentConversationRows(
  store: HistoryStore,
  options: RecentOptions = {},
): { rows: ConversationRow[]; total: number } {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (options.project !== undefined) {
    where.push("project_root = ?");
    params.push(options.project);
  }
  if (options.agent !== undefined) {
    where.push("agent = ?");
    params.push(options.agent);
  }
  if (!options.subagents) where.push("subagent = 0");
  const filter = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const rows = store.stmt(
    `SELECT * FROM conversations ${filter}
     ORDER BY last_ts IS NULL, last_ts DESC, id DESC LIMIT ? OFFSET ?`,
  ).all(...params, options.limit ?? 20, options.offset ?? 0) as unknown as ConversationRow[];
  const total = store.stmt(`SELECT count(*) AS n FROM conversations ${filter}`)
    .get(...params) as { n: number };
  return { rows, total: total.n };
}

/** `recentConversationRows` as printable conversations; the title passes `redact`. */
export function recentConversations(
  store: HistoryStore,
  redact: (text: string) => string,
  options: RecentOptions = {},
): ConversationJson[] {
  return recentConversationRows(store, options).rows.map((row) => conversationJson(row, redact));
}

/**
 * Shown records (not `meta`, not empty) kept before a hit when the question that led to it is
 * further back: the question is shown, then a gap, then these.
 */
export const AROUND_CONTEXT = 6;
/** The most shown records between a question and its hit for the page to start at the question. */
const AROUND_TURN = 24;
/** The most records looked through, back from a hit, for the question before it. */
const AROUND_REACH = 2000;

/** Where a page opened at a record (a search hit) starts, and the question that led to it. */
export interface HitContext {
  /** The `after` of the page: it holds the hit and what led to it, as much as fits. */
  after: number;
  /**
   * The user message before the hit when it lies before the page (too far back to fit): shown
   * first, then a gap of `skipped` records. Null when the page starts with it, or there is none.
   */
  question: number | null;
  /** Shown records between the question and the page (those the gap stands for). */
  skipped: number;
}

interface BackRow {
  id: number;
  kind: Kind;
  role: Role | null;
  size: number;
}

/**
 * Where to start a page that opens at `record` with what led to it, counting only the records a
 * reader is shown (not `meta`, not empty). The page starts at the nearest user message before the
 * record (the question before the answer) when the stretch from it to the record fits in one page
 * of `limit` records and `budget` bytes and holds at most `AROUND_TURN` shown records; otherwise
 * the page starts `AROUND_CONTEXT` shown records before the record (fewer when the page cannot
 * hold them), and the question, looked for up to `AROUND_REACH` records back, is named to show
 * above a gap. The page always holds the record itself. Throws RangeError when `record` is not a
 * record of `conversation`.
 */
export function contextStart(
  store: HistoryStore,
  deriver: TextDeriver,
  conversation: ConversationRow,
  record: number,
  options: Omit<PageOptions, "after"> = {},
): HitContext {
  const found = store.stmt("SELECT 1 FROM records WHERE id = ? AND conversation_id = ?")
    .get(record, conversation.id);
  if (found === undefined) {
    throw new RangeError(`Record ${record} is not in conversation "${conversation.key}"`);
  }
  // A record shown with an earlier one (a tool's persisted output, with its preview) opens
  // where that one is.
  const at = shownAt(store, conversation.id, record);
  const limit = Math.max(1, options.limit ?? DEFAULT_PAGE_LIMIT);
  const budget = options.budget ?? PAGE_BUDGET;
  // Typed prompts repeat the transcript's messages where it has any, and are not shown then.
  const prompts = conversation.message_count === 0;
  const isQuestion = (row: BackRow) =>
    row.role === "user" && (row.kind === "message" || (prompts && row.kind === "prompt"));
  const shown = (row: BackRow) =>
    row.kind !== "meta" && (prompts || row.kind !== "prompt") &&
    deriver.hasText(deriver.storedById(row.id));
  const back = store.stmt(
    `SELECT id, kind, role, coalesce(length, length(raw)) AS size FROM records
     WHERE conversation_id = ? AND id < ? ORDER BY id DESC LIMIT ?`,
  );
  // Back from the record while the page from there would still hold it.
  const walked: { row: BackRow; shown: boolean }[] = [];
  let bytes = 0;
  let shownBefore = 0;
  let reachedStart = true;
  for (const row of back.iterate(conversation.id, at, limit) as Iterable<BackRow>) {
    bytes += row.size;
    if (walked.length + 1 >= limit || bytes >= budget) {
      reachedStart = false;
      break;
    }
    const isShown = shown(row);
    walked.push({ row, shown: isShown });
    if (isShown && isQuestion(row)) return { after: row.id - 1, question: null, skipped: 0 };
    if (isShown && ++shownBefore > AROUND_TURN) {
      reachedStart = false;
      break;
    }
  }
  // No question before the record, and the page from the conversation's start holds it.
  if (reachedStart) return { after: 0, question: null, skipped: 0 };
  // The page starts a few shown records before the record, the question named above the gap.
  const start = contextFrom(walked, at);
  return questionAbove(store, conversation.id, at, start, { isQuestion, shown });
}

/** The record a page starts at: `AROUND_CONTEXT` shown records of `walked` back from `at`. */
function contextFrom(walked: readonly { row: BackRow; shown: boolean }[], at: number): number {
  let start = at;
  let kept = 0;
  for (const step of walked) {
    if (kept >= AROUND_CONTEXT) break;
    if (step.shown) {
      start = step.row.id;
      kept++;
    }
  }
  return start;
}

/**
 * The page that starts at `start`, with the question before it (looked for up to `AROUND_REACH`
 * records back from `at`) and the shown records between them it skips.
 */
function questionAbove(
  store: HistoryStore,
  conversation: number,
  at: number,
  start: number,
  is: { isQuestion: (row: BackRow) => boolean; shown: (row: BackRow) => boolean },
): HitContext {
  const candidates = store.stmt(
    `SELECT id, kind, role, 0 AS size FROM records
     WHERE conversation_id = ? AND id < ? AND id > ? AND role = 'user'
       AND kind IN ('message', 'prompt')
     ORDER BY id DESC`,
  );
  const floor = (store.stmt(
    `SELECT id FROM records WHERE conversation_id = ? AND id < ? ORDER BY id DESC
     LIMIT 1 OFFSET ?`,
  ).get(conversation, at, AROUND_REACH - 1) as { id: number } | undefined)?.id ?? 0;
  let question: number | null = null;
  for (const row of candidates.iterate(conversation, start, floor) as Iterable<BackRow>) {
    if (is.isQuestion(row) && is.shown(row)) {
      question = row.id;
      break;
    }
  }
  if (question === null) return { after: start - 1, question: null, skipped: 0 };
  let skipped = 0;
  const between = store.stmt(
    `SELECT id, kind, role, 0 AS size FROM records
     WHERE conversation_id = ? AND id > ? AND id < ? AND kind != 'meta' ORDER BY id`,
  );
  for (const row of between.iterate(conversation, question, start) as Iterable<BackRow>) {
    if (is.shown(row)) skipped++;
  }
  return { after: start - 1, question, skipped };
}

/** One record of `conversation` as `show --json` prints it, or null when it holds no such id. */
export function conversationRecord(
  store: HistoryStore,
  deriver: TextDeriver,
  conversation: ConversationRow,
  id: number,
): RecordJson | null {
  const row = store.stmt("SELECT * FROM records WHERE id = ? AND conversation_id = ?")
    .get(id, conversation.id) as RecordRow | undefined;
  return row ? recordJson(decodedRow(row), deriver) : null;
}

/** The question before a hit, and how many shown records lie between it and the page. */
export type Question = { record: RecordJson; skipped: number } | null;

/** The question a page opened at a hit starts with when it lies before the page, or null. */
export function questionOf(
  store: HistoryStore,
  deriver: TextDeriver,
  conversation: ConversationRow,
  context: HitContext,
): Question {
  const record = context.question === null
    ? null
    : conversationRecord(store, deriver, conversation, context.question);
  return record ? { record, skipped: context.skipped } : null;
}

/**
 * The `after` of each page of `limit` records (page 1 starts at 0), for numbered pages. A page
 * cut short by the byte budget makes `next` run ahead of these; both reach every record.
 */
export function pageStarts(store: HistoryStore, conversationId: number, limit: number): number[] {
  // Records as pages count them (a row that goes on a line is not one: `continuesLine`); a page
  // starts just before its first record, after the last row of the page before.
  const rows = store.stmt(
    `SELECT id FROM (
       SELECT id, row_number() OVER (ORDER BY id) AS n FROM records
       WHERE conversation_id = ? AND (seq = 0 OR (flags & ${FLAG_STREAMED}) != 0)
     ) WHERE n > 1 AND (n - 1) % ? = 0 ORDER BY id`,
  ).all(conversationId, limit) as unknown as { id: number }[];
  return [0, ...rows.map((r) => r.id - 1)];
}

/**
 * The stored project root that `shown` stands for, `shown` being a root as `redact` shows it
 * (`/src/[REDACTED:github-token]/app`): of the roots shown so, the most recently active, or
 * undefined. A link or a filter carries a project as it is shown, never the secret in its path,
 * and this is how it finds the project again.
 */
export function projectShownAs(
  store: HistoryStore,
  shown: string,
  redact: (text: string) => string,
): string | undefined {
  return projectRoots(store).find((root) => redact(root) === shown);
}

/** Every project root a conversation of the store is in, the most recently active first. */
export function projectRoots(store: HistoryStore): string[] {
  const rows = store.stmt(
    `SELECT project_root AS root FROM conversations WHERE project_root IS NOT NULL
     GROUP BY project_root ORDER BY max(last_ts) DESC, project_root`,
  ).all() as { root: string }[];
  return rows.map((row) => row.root);
}

/**
 * The project roots `tail` ends (`cleekely` or `src/cleekely` ends `/home/dev/src/cleekely`),
 * whole path components, the most recently active first.
 */
export function projectsEndingWith(store: HistoryStore, tail: string): string[] {
  const wanted = `/${tail.replaceAll("\\", "/").replace(/\/+$/, "")}`;
  return projectRoots(store).filter((root) => root.replaceAll("\\", "/").endsWith(wanted));
}

/** A project as the dashboard's projects page lists it. */
export interface ProjectSummary {
  /**
   * The project's root directory as shown, through the gate (null: conversations without one).
   * Roots shown alike are one project here, as a filter by the shown root finds the most
   * recent of them (see `projectShownAs`).
   */
  project: string | null;
  /** Conversations per agent (subagents not counted), most first. */
  agents: { agent: string; conversations: number }[];
  /** Conversations, subagents not counted. */
  conversations: number;
  /** Subagent conversations (children of these), counted apart. */
  subagents: number;
  /** The newest record's time (epoch ms), or null. */
  lastTs: number | null;
}

/**
 * Every project in the store with its conversations per agent, most recently active first, its
 * root through `redact`. Subagents are counted apart, so conversations and subagents add up to
 * the store's count.
 */
export function projectSummaries(
  store: HistoryStore,
  redact: (text: string) => string,
): ProjectSummary[] {
  const rows = store.stmt(
    `SELECT project_root AS project, agent, sum(subagent = 0) AS n, sum(subagent) AS sub,
       max(last_ts) AS last
     FROM conversations GROUP BY project_root, agent`,
  ).all() as unknown as {
    project: string | null;
    agent: string;
    n: number;
    sub: number;
    last: number | null;
  }[];
  const byProject = new Map<string | null, ProjectSummary>();
  for (const row of rows) {
    const project = row.project === null ? null : redact(row.project);
    let summary = byProject.get(project);
    if (!summary) {
      summary = { project, agents: [], conversations: 0, subagents: 0, lastTs: null };
      byProject.set(project, summary);
    }
    const agent = summary.agents.find((a) => a.agent === row.agent);
    if (agent) agent.conversations += row.n;
    else if (row.n > 0) summary.agents.push({ agent: row.agent, conversations: row.n });
    summary.conversations += row.n;
    summary.subagents += row.sub;
    if (row.last !== null && (summary.lastTs === null || row.last > summary.lastTs)) {
      summary.lastTs = row.last;
    }
  }
  const list = [...byProject.values()];
  for (const p of list) p.agents.sort((a, b) => b.conversations - a.conversations);
  return list.sort((a, b) => (b.lastTs ?? -1) - (a.lastTs ?? -1));
}
