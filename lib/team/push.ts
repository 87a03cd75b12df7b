// `logbook push`: sends this machine's conversations of the allowed projects to the team
// database. Only what the person allows leaves: projects on the allow-list (none by default),
// each record's text through the gate (secrets redacted before sending; quarantined content is
// never written to disk, so never captured or sent), raw bytes only with `"raw": true`.
// Incremental and idempotent: a cursor per machine and project, moved in the transaction that
// sends the batch, so a killed push resumes after the last batch that arrived and sends nothing
// twice (a record sent twice would break the primary key, never duplicate silently). Forgets
// travel as tombstones. Memory stays bounded by the batch.

import type { Sql } from "postgres";
import type { Redactor } from "../gate.ts";
import type { Adapter } from "../sources/adapter.ts";
import type { HistoryStore } from "../store/db.ts";
import { decodedRow } from "../store/raw.ts";
import { type ConversationRow, type RecordRow, TextDeriver } from "../store/records.ts";
import { FLAG_INDEXED, FLAG_SUPERSEDED } from "../store/schema.ts";
import { migrateTeam } from "./db.ts";

/** Records per transaction, and the text and raw bytes one batch holds at most (one may cross). */
export const BATCH_RECORDS = 500;
export const BATCH_BYTES = 1 << 20;

export interface PushOptions {
  store: HistoryStore;
  sql: Sql;
  adapters: readonly Adapter[];
  redact: Redactor;
  machine: string;
  /** Canonical project roots allowed to leave the machine. */
  projects: readonly string[];
  /** Also send raw bytes (off by default: raw is not redacted). */
  raw: boolean;
  batchRecords?: number;
  /** Stop between batches after this time (epoch ms); the next push goes on. */
  deadline?: number;
  now?: () => number;
  onBatch?: (sent: PushSummary) => void;
}

/** What one push sent (or, for a dry run, would send). */
export interface PushSummary {
  projects: number;
  conversations: number;
  records: number;
  /** Bytes of text (and raw, when sent). */
  bytes: number;
  /** Conversations removed from the team database because this machine forgot them. */
  forgotten: number;
  /** False when the deadline stopped it before everything was sent. */
  complete: boolean;
}

/** Sends what is new; see the file comment. */
export async function push(options: PushOptions): Promise<PushSummary> {
  const { store, sql, machine } = options;
  const now = options.now ?? Date.now;
  await migrateTeam(sql);
  await sql`
    INSERT INTO logbook_machines (machine) VALUES (${machine}) ON CONFLICT (machine) DO NOTHING`;
  const summary: PushSummary = {
    projects: options.projects.length,
    conversations: 0,
    records: 0,
    bytes: 0,
    forgotten: await sendTombstones(store, sql, machine),
    complete: true,
  };
  const deriver = new TextDeriver(store, options.adapters, options.redact);
  const sentConversations = new Set<string>();
  for (const project of options.projects) {
    const conversations = projectConversations(store, project);
    if (!conversations.size) continue;
    const ids = JSON.stringify([...conversations.keys()]);
    const [row] = await sql<{ record_cursor: number }[]>`
      SELECT record_cursor FROM logbook_cursors WHERE machine = ${machine} AND project = ${project}`;
    let cursor = row?.record_cursor ?? 0;
    for (;;) {
      if (options.deadline !== undefined && now() >= options.deadline) {
        summary.complete = false;
        break;
      }
      const batch = nextBatch(store, ids, cursor, options.batchRecords ?? BATCH_RECORDS);
      if (!batch.length) break;
      const rows = batch.map((stored) => {
        const conversation = conversations.get(stored.conversation_id!)!;
        const text = deriver.textOf(stored);
        const raw = options.raw ? decodedRow(stored).raw : null;
        return { stored, conversation, text, raw };
      });
      const touched = new Map(rows.map((r) => [r.conversation.key, r.conversation]));
      const last = batch.at(-1)!.id;
      await sql.begin(async (tx) => {
        for (const conversation of touched.values()) {
          await upsertConversation(tx as unknown as Sql, machine, conversation, options.redact);
        }
        await tx`
          INSERT INTO logbook_records ${
          sql(
            rows.map(({ stored, conversation, text, raw }) => ({
              machine,
              record_id: stored.id,
              conversation_key: conversation.key,
              ts: stored.ts === null ? null : new Date(stored.ts),
              kind: stored.kind,
              role: stored.role,
              text,
              raw,
            })),
          )
        }`;
        await tx`
          INSERT INTO logbook_cursors (machine, project, record_cursor)
          VALUES (${machine}, ${project}, ${last})
          ON CONFLICT (machine, project) DO UPDATE SET record_cursor = excluded.record_cursor`;
        await tx`UPDATE logbook_machines SET last_push = now() WHERE machine = ${machine}`;
      });
      cursor = last;
      summary.records += rows.length;
      summary.bytes += rows.reduce((n, r) => n + r.text.length + (r.raw?.length ?? 0), 0);
      for (const key of touched.keys()) sentConversations.add(key);
      summary.conversations = sentConversations.size;
      options.onBatch?.({ ...summary });
    }
    if (!summary.complete) break;
    // Titles, counts and last times change as records arrive: bring every pushed one up to date.
    for (const chunk of chunks([...conversations.values()], 200)) {
      await sql.begin(async (tx) => {
        for (const conversation of chunk) {
          await refreshConversation(tx as unknown as Sql, machine, conversation, options.redact);
        }
      });
    }
  }
  return summary;
}

/** What a push would send now: per project, the records past the team's cursor (0 unknown). */
export function planPush(
  store: HistoryStore,
  projects: readonly string[],
  cursors: ReadonlyMap<string, number>,
): PushSummary & { perProject: { project: string; conversations: number; records: number }[] } {
  const perProject = projects.map((project) => {
    const conversations = projectConversations(store, project);
    const ids = JSON.stringify([...conversations.keys()]);
    const row = store.stmt(
      `SELECT count(*) AS records, count(DISTINCT conversation_id) AS conversations,
         coalesce(sum(coalesce(length, length(raw))), 0) AS bytes
       FROM records WHERE conversation_id IN (SELECT value FROM json_each(?)) AND id > ?
         AND (flags & ${FLAG_INDEXED}) != 0 AND (flags & ${FLAG_SUPERSEDED}) = 0`,
    ).get(ids, cursors.get(project) ?? 0) as {
      records: number;
      conversations: number;
      bytes: number;
    };
    return { project, ...row };
  });
  return {
    projects: projects.length,
    conversations: perProject.reduce((n, p) => n + p.conversations, 0),
    records: perProject.reduce((n, p) => n + p.records, 0),
    bytes: perProject.reduce((n, p) => n + (p as unknown as { bytes: number }).bytes, 0),
    forgotten: 0,
    complete: true,
    perProject: perProject.map(({ project, conversations, records }) => ({
      project,
      conversations,
      records,
    })),
  };
}

/** The team database's cursors of `machine`, by project (empty for a machine never pushed). */
export async function teamCursors(sql: Sql, machine: string): Promise<Map<string, number>> {
  const exists = await sql`SELECT to_regclass('logbook_cursors') AS t`;
  if (!exists[0]?.t) return new Map();
  const rows = await sql<{ project: string; record_cursor: number }[]>`
    SELECT project, record_cursor FROM logbook_cursors WHERE machine = ${machine}`;
  return new Map(rows.map((r) => [r.project, r.record_cursor]));
}

function projectConversations(store: HistoryStore, project: string): Map<number, ConversationRow> {
  const rows = store.stmt("SELECT * FROM conversations WHERE project_root = ?").all(
    project,
  ) as unknown as ConversationRow[];
  return new Map(rows.map((row) => [row.id, row]));
}

function nextBatch(store: HistoryStore, ids: string, cursor: number, limit: number): RecordRow[] {
  const rows: RecordRow[] = [];
  let bytes = 0;
  const iterator = store.stmt(
    `SELECT * FROM records WHERE conversation_id IN (SELECT value FROM json_each(?)) AND id > ?
       AND (flags & ${FLAG_INDEXED}) != 0 AND (flags & ${FLAG_SUPERSEDED}) = 0
     ORDER BY id LIMIT ?`,
  ).iterate(ids, cursor, limit) as Iterable<RecordRow>;
  for (const row of iterator) {
    rows.push(row);
    bytes += (row.raw as Uint8Array).length;
    if (bytes >= BATCH_BYTES) break;
  }
  return rows;
}

function conversationValues(machine: string, c: ConversationRow, redact: Redactor) {
  return {
    machine,
    key: c.key,
    agent: c.agent,
    project: c.project_root,
    cwd: c.cwd,
    branch: c.branch,
    title: c.title === null ? null : redact(c.title),
    first_ts: c.first_ts === null ? null : new Date(c.first_ts),
    last_ts: c.last_ts === null ? null : new Date(c.last_ts),
    messages: c.message_count,
    parent_key: c.parent_key,
    subagent: c.subagent === 1,
  };
}

async function upsertConversation(
  sql: Sql,
  machine: string,
  c: ConversationRow,
  redact: Redactor,
): Promise<void> {
  const v = conversationValues(machine, c, redact);
  await sql`
    INSERT INTO logbook_conversations ${sql(v)}
    ON CONFLICT (machine, key) DO UPDATE SET title = excluded.title,
      last_ts = excluded.last_ts, messages = excluded.messages, branch = excluded.branch`;
}

async function refreshConversation(
  sql: Sql,
  machine: string,
  c: ConversationRow,
  redact: Redactor,
): Promise<void> {
  const v = conversationValues(machine, c, redact);
  await sql`
    UPDATE logbook_conversations SET title = ${v.title}, last_ts = ${v.last_ts},
      messages = ${v.messages}, branch = ${v.branch}
    WHERE machine = ${machine} AND key = ${v.key}`;
}

/** Sends this machine's forgets: its copies leave the team database. Returns how many went. */
async function sendTombstones(store: HistoryStore, sql: Sql, machine: string): Promise<number> {
  const [row] = await sql<{ tombstone_cursor: number }[]>`
    SELECT tombstone_cursor FROM logbook_machines WHERE machine = ${machine}`;
  const since = row?.tombstone_cursor ?? 0;
  const tombs = store.stmt(
    "SELECT key, forgotten_at FROM tombstones WHERE forgotten_at > ? ORDER BY forgotten_at",
  ).all(since) as { key: string; forgotten_at: number }[];
  if (!tombs.length) return 0;
  let removed = 0;
  await sql.begin(async (tx) => {
    for (const tomb of tombs) {
      const gone = await tx`
        DELETE FROM logbook_conversations WHERE machine = ${machine} AND key = ${tomb.key}`;
      removed += gone.count;
      await tx`
        INSERT INTO logbook_tombstones (machine, key, forgotten_at)
        VALUES (${machine}, ${tomb.key}, ${new Date(tomb.forgotten_at)})
        ON CONFLICT (machine, key) DO UPDATE SET forgotten_at = excluded.forgotten_at`;
    }
    await tx`
      UPDATE logbook_machines SET tombstone_cursor = ${tombs.at(-1)!.forgotten_at}
      WHERE machine = ${machine}`;
  });
  return removed;
}

function* chunks<T>(items: T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
