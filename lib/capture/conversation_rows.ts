// Conversation rows and each source's share of them. A batch tells a conversation what its
// records hold (counts, times, title, cwd…), one write per source; capture adds each write to the
// conversation's row and to that source's share (`conversation_shares`) with the same rule, so a
// row is always its shares summed in the order they came. A source derived again
// (`rederive.ts`) replaces its shares alone, and the rows it touched are summed again from their
// shares, in source order, as a fresh capture of the same files would have summed them.

import { titledByParent, titleFromParent } from "../sources/parent_titles.ts";
import type { HistoryStore } from "../store/db.ts";
import type { ConversationRow } from "../store/records.ts";

/** What a batch adds to one conversation row (upserted by key), from one source. */
export interface ConversationWrite {
  key: string;
  agent: string;
  nativeId: string;
  sourceId: number;
  projectRoot: string | null;
  projectKey: string | null;
  cwd: string | null;
  branch: string | null;
  title: string | null;
  titleRank: number;
  firstTs: number | null;
  lastTs: number | null;
  messages: number;
  records: number;
  bytes: number;
  parentKey: string | null;
  subagent: boolean;
  agentType: string | null;
  archived: boolean | null;
  version: string | null;
}

/**
 * How writes reach the rows: added to them (capture), to the shares alone (`rederive.ts`), or
 * added to rows created again with the ids they had before (a rebuild: `keepConversationIds`).
 */
export type ConversationMode = "add" | "rederive" | "rebuild";

/** The columns a write sets, on a row and on a share alike. */
const COLUMNS = "agent, native_id, project_root, project_key, cwd, branch, title, title_rank, " +
  "first_ts, last_ts, message_count, record_count, bytes, parent_key, subagent, archived, " +
  "agent_version, agent_type";

/** How a write is added to what a row (or a share) holds already. */
const ADD = `
  first_ts = coalesce(min(first_ts, excluded.first_ts), first_ts, excluded.first_ts),
  last_ts = coalesce(max(last_ts, excluded.last_ts), last_ts, excluded.last_ts),
  message_count = message_count + excluded.message_count,
  record_count = record_count + excluded.record_count,
  bytes = bytes + excluded.bytes,
  title = CASE WHEN excluded.title IS NOT NULL AND (excluded.title_rank > title_rank
            OR (excluded.title_rank >= 2 AND excluded.title_rank = title_rank))
          THEN excluded.title ELSE title END,
  title_rank = max(title_rank, excluded.title_rank),
  cwd = coalesce(cwd, excluded.cwd),
  project_root = coalesce(project_root, excluded.project_root),
  project_key = coalesce(project_key, excluded.project_key),
  branch = coalesce(excluded.branch, branch),
  parent_key = coalesce(parent_key, excluded.parent_key),
  subagent = max(subagent, excluded.subagent),
  archived = coalesce(excluded.archived, archived),
  agent_version = coalesce(excluded.agent_version, agent_version),
  agent_type = coalesce(excluded.agent_type, agent_type)`;

/** A write's values in the order of COLUMNS. */
function values(c: ConversationWrite) {
  return [
    c.agent,
    c.nativeId,
    c.projectRoot,
    c.projectKey,
    c.cwd,
    c.branch,
    c.title,
    c.titleRank,
    c.firstTs,
    c.lastTs,
    c.messages,
    c.records,
    c.bytes,
    c.parentKey,
    c.subagent ? 1 : 0,
    c.archived === null ? null : c.archived ? 1 : 0,
    c.version,
    c.agentType,
  ];
}

/**
 * Writes `rows` in order; returns the conversation ids by key and how many are new. Added
 * (`"add"`, `"rebuild"`): to each row and to the share of its source; a row a rebuild creates
 * takes the id its conversation had (`keepConversationIds`). Derived again (`"rederive"`): to the
 * shares alone (the rows are summed again later, `sumConversations`), a row created only for a
 * conversation the store did not hold, and each conversation listed to be summed.
 */
export function writeConversations(
  store: HistoryStore,
  rows: readonly ConversationWrite[],
  mode: ConversationMode = "add",
): { ids: Map<string, number>; created: number } {
  const ids = new Map<string, number>();
  let created = 0;
  const exists = store.stmt("SELECT id FROM conversations WHERE key = ?");
  const toSum = store.stmt("INSERT OR IGNORE INTO conversations_to_sum (id) VALUES (?)");
  for (const c of rows) {
    const held = exists.get(c.key) as { id: number } | undefined;
    if (!held) created++;
    const id = held && mode === "rederive"
      ? held.id
      : upsertRow(store, c, !held && mode === "rebuild" ? formerId(store, c.key) : null);
    addShare(store, id, c);
    if (mode === "rederive") toSum.run(id);
    ids.set(c.key, id);
  }
  if (mode !== "rederive") titleFromParents(store, rows.map((c) => c.key));
  return { ids, created };
}

/**
 * The rank of a title a conversation takes from its parent's: above any of its own (1 first
 * prompt, 2 summary, 3 explicit), so only its parent's changes it.
 */
const TITLE_FROM_PARENT = 4;

/**
 * Titles the conversations of `keys` that are titled by their parent (a Claude Code helper's
 * copy: `lib/sources/parent_titles.ts`) from it, and again those whose parent is among `keys`
 * and may have a new title (a session captured after its copies, renamed, or summed again). Not
 * a share of any source: it follows the rows, so it is applied again wherever they change.
 */
function titleFromParents(store: HistoryStore, keys: Iterable<string>): void {
  const parentOf = store.stmt(
    `SELECT p.title FROM conversations c LEFT JOIN conversations p ON p.key = c.parent_key
     WHERE c.key = ?`,
  );
  const children = store.stmt("SELECT key FROM conversations WHERE parent_key = ?");
  const retitle = store.stmt(
    `UPDATE conversations SET title = ?, title_rank = ${TITLE_FROM_PARENT} WHERE key = ?`,
  );
  const fromParent = (key: string) => {
    const parent = parentOf.get(key) as { title: string | null } | undefined;
    const title = titleFromParent(key, parent?.title ?? null);
    if (title !== null) retitle.run(title, key);
  };
  for (const key of keys) {
    if (titledByParent(key)) fromParent(key);
    for (const child of children.all(key) as { key: string }[]) {
      if (titledByParent(child.key)) fromParent(child.key);
    }
  }
}

/**
 * Before a rebuild empties `conversations`: each conversation's id, kept for the rebuild to create
 * its row with again (mode `"rebuild"`). Records and usage rows keep pointing at it, so deriving a
 * record as it was derived before changes nothing SQLite must write again: an unchanged row is
 * left as it is, where a new conversation id rewrites the record, its raw bytes and all. Kept in
 * a temporary table, for the rebuild's transaction; `dropConversationIds` ends it.
 */
export function keepConversationIds(store: HistoryStore): void {
  store.db.exec(`
    DROP TABLE IF EXISTS temp.former_conversation_ids;
    CREATE TEMP TABLE former_conversation_ids (key TEXT PRIMARY KEY, id INTEGER NOT NULL)
      WITHOUT ROWID;
    INSERT INTO temp.former_conversation_ids SELECT key, id FROM conversations;`);
}

/** Ends what `keepConversationIds` kept. */
export function dropConversationIds(store: HistoryStore): void {
  store.db.exec("DROP TABLE IF EXISTS temp.former_conversation_ids");
}

/**
 * The id a rebuild creates the row of `key` with: the one it had, or for a conversation new to
 * the store one above every id kept and taken, so that it takes no id another one will want.
 */
function formerId(store: HistoryStore, key: string): number | null {
  const row = store.stmt(`
    SELECT coalesce(
      (SELECT id FROM temp.former_conversation_ids WHERE key = ?),
      (SELECT max(n) + 1 FROM (SELECT max(id) AS n FROM temp.former_conversation_ids
                               UNION ALL SELECT max(id) FROM conversations))) AS id`)
    .get(key) as { id: number | null };
  return row.id;
}

/** Adds `c` to the row of its conversation (created with `id`, or a new one); returns its id. */
function upsertRow(store: HistoryStore, c: ConversationWrite, id: number | null): number {
  const row = store.stmt(`
    INSERT INTO conversations (id, key, source_id, ${COLUMNS})
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET ${ADD}, gone = 0
    RETURNING id`).get(id, c.key, c.sourceId, ...values(c)) as { id: number };
  return row.id;
}

/** Adds `c` to its source's share of conversation `id`. */
function addShare(store: HistoryStore, id: number, c: ConversationWrite): void {
  store.stmt(`
    INSERT INTO conversation_shares (conversation_id, source_id, ${COLUMNS})
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (conversation_id, source_id) DO UPDATE SET ${ADD}`)
    .run(id, c.sourceId, ...values(c));
}

/** A row of `conversation_shares`: a conversation row's columns, for one source. */
type ShareRow =
  & Omit<ConversationRow, "id" | "key" | "source_id" | "agent_type" | "gone">
  & { source_id: number; title_rank: number; agent_type: string | null };

/** A stored share as the write that adds it to a row of conversation `key`. */
function shareWrite(key: string, s: ShareRow): ConversationWrite {
  return {
    key,
    agent: s.agent,
    nativeId: s.native_id,
    sourceId: s.source_id,
    projectRoot: s.project_root,
    projectKey: s.project_key,
    cwd: s.cwd,
    branch: s.branch,
    title: s.title,
    titleRank: s.title_rank,
    firstTs: s.first_ts,
    lastTs: s.last_ts,
    messages: s.message_count,
    records: s.record_count,
    bytes: s.bytes,
    parentKey: s.parent_key,
    subagent: s.subagent !== 0,
    agentType: s.agent_type,
    archived: s.archived === null ? null : s.archived !== 0,
    version: s.agent_version,
  };
}

/**
 * Sums the rows of up to `limit` listed conversations again from their shares, in source order,
 * and takes them off the list (call inside a transaction); returns how many were summed. A row
 * keeps its id (records point at it) and whether its sources are gone upstream. A conversation
 * left with no share and no record goes; one whose records have no share (their source has no
 * adapter to derive it) is left as it is.
 */
export function sumConversations(store: HistoryStore, limit: number): number {
  const listed = store.stmt("SELECT id FROM conversations_to_sum ORDER BY id LIMIT ?")
    .all(limit) as { id: number }[];
  const row = store.stmt("SELECT key, gone FROM conversations WHERE id = ?");
  const shares = store.stmt(
    "SELECT * FROM conversation_shares WHERE conversation_id = ? ORDER BY source_id",
  );
  const held = store.stmt("SELECT 1 FROM records WHERE conversation_id = ? LIMIT 1");
  const drop = store.stmt("DELETE FROM conversations WHERE id = ?");
  const gone = store.stmt("UPDATE conversations SET gone = ? WHERE id = ?");
  const unlist = store.stmt("DELETE FROM conversations_to_sum WHERE id = ?");
  const summed: string[] = [];
  for (const { id } of listed) {
    unlist.run(id);
    const current = row.get(id) as { key: string; gone: number } | undefined;
    if (!current) continue;
    summed.push(current.key);
    const parts = shares.all(id) as unknown as ShareRow[];
    if (!parts.length) {
      if (!held.get(id)) drop.run(id);
      continue;
    }
    drop.run(id);
    parts.forEach((share, i) => upsertRow(store, shareWrite(current.key, share), i ? null : id));
    if (current.gone) gone.run(current.gone, id);
  }
  titleFromParents(store, summed);
  return listed.length;
}
