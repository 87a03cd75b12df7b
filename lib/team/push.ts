// `logbook push`: sends this machine's conversations of the allowed projects to the team
// database. Only what the person allows leaves: projects on the allow-list (none by default),
// each record's text through the gate (secrets redacted before sending; quarantined content is
// never written to disk, so never captured or sent), raw bytes only with `"raw": true`.
//
// Identity. A team record is keyed by what it is, not by this store's record id (ids start again
// in a fresh store, after `delete-user-data` or a reinstall): its `uid` is a SHA-256 of its
// conversation, its place in its source (the byte offset of a transcript line; a database row
// carries its own ids in its bytes) and its exact captured bytes. The same line captured again,
// by another store under the same machine name or from a copy of its file, has the same uid, and
// the team database keeps it once (`ON CONFLICT DO NOTHING`): sending a record twice is harmless.
//
// Cursors. Each pushed conversation has a cursor (`sent_through`: the last record id of this
// store sent for it), moved in the transaction that sends its records, so a killed push resumes
// after the last batch that arrived. A conversation is sent whole when it first qualifies, also
// when it joins an allowed project after its first records were captured. The cursors count in
// one store's ids: the machine's row names that store (`store_id`), and a push from another
// store under the same machine name starts every cursor again (what the team has is skipped by
// uid). Forgets travel as tombstones. Memory stays bounded by two batches a lane (PUSH_LANES of
// them), the one the server is taking and the next: each at most 500 records and about 1 MiB of
// decoded bytes and text (one record may cross it).

import type { Sql } from "postgres";
import type { Redactor } from "../gate/secrets.ts";
import type { Adapter } from "../sources/adapter.ts";
import type { HistoryStore } from "../store/db.ts";
import { withoutInvisible } from "../invisible.ts";
import { decodedRow } from "../store/raw.ts";
import { yieldToEventLoop } from "../event_loop.ts";
import { GarbageRelease } from "../garbage.ts";
import {
  conversationJson,
  type ConversationRow,
  type RecordRow,
  TextDeriver,
} from "../store/records.ts";
import { FLAG_INDEXED, FLAG_SUPERSEDED } from "../store/schema.ts";
import { sha256, sha256Hash, sha256Hex } from "../sha256.ts";
import { connectTeam, migrateTeam, TeamError } from "./db.ts";

/** Records per transaction, and the bytes one batch holds at most (one record may cross). */
export const BATCH_RECORDS = 500;
export const BATCH_BYTES = 1 << 20;

/**
 * Conversations a push sends at once, each down its own connection (`sql` needs as many): the
 * server's work on a batch is most of what a push costs, and two of its backends take two
 * batches at once.
 */
export const PUSH_LANES = 2;

/**
 * What a push's connections ask of the server beside TEAM_SESSION: the memory a backend gathers
 * the GIN index's pending list in when its insert moves the list into the index. At the default
 * 4 MB `work_mem` it goes down the index (gigabytes, beyond the server's buffers) for every word
 * of every 4 MB of the list, while the other lane's inserts lengthen the list: one push of five at
 * 1 GB took 578 s against 87 to 133 for the others, its backend moving a list of 242 MB. VACUUM
 * does the same work in `maintenance_work_mem`, 64 MB by default.
 */
const PUSH_SESSION = { work_mem: "64MB" } as const;

/** A push's connections to the team database: one per lane, each with PUSH_SESSION's settings. */
export function connectForPush(url: string): Promise<Sql> {
  return connectTeam(url, { connections: PUSH_LANES, session: PUSH_SESSION });
}

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
  /** Conversations sent at once (PUSH_LANES unless told), each down its own connection. */
  lanes?: number;
  /** What collects sent batches' garbage (one with V8's `gc`, where exposed, unless told). */
  garbage?: GarbageRelease;
  /** Stop between batches after this time (epoch ms); the next push goes on. */
  deadline?: number;
  /** Stop between batches once this is aborted (Ctrl-C); the next push goes on. */
  signal?: AbortSignal;
  now?: () => number;
  onBatch?: (sent: PushSummary) => void;
}

/** What one push sent. */
export interface PushSummary {
  projects: number;
  /** Conversations that received records. */
  conversations: number;
  /** Records the team database took (new to it). */
  records: number;
  /** Records sent that the team database held already (a resend, skipped by uid). */
  already: number;
  /** Captured bytes of the records taken (their raw transcript, sent or not). */
  bytes: number;
  /** Conversations removed from the team database because this machine forgot them. */
  forgotten: number;
  /** True when this store was new to the team under this machine name: its cursors began again. */
  newStore: boolean;
  /** Transactions of records sent. */
  batches: number;
  /** The most bytes one batch held (decoded raw bytes and text). */
  largestBatch: number;
  /** False when the deadline (or the signal) stopped it before everything was sent. */
  complete: boolean;
}

/** What `--dry-run` reports: what a push would check and send now, and the forgets it carries. */
export interface PushPlan {
  projects: number;
  conversations: number;
  records: number;
  /** Captured bytes of those records. */
  bytes: number;
  /** Conversations the push would remove from the team database (forgotten here). */
  forgets: number;
  /** True when the team knows this machine from another store (every record is checked again). */
  newStore: boolean;
  perProject: { project: string; conversations: number; records: number }[];
}

/** Sends what is new; see the file comment. */
export async function push(options: PushOptions): Promise<PushSummary> {
  const { store, sql, machine } = options;
  const now = options.now ?? Date.now;
  const limit = options.batchRecords ?? BATCH_RECORDS;
  await migrateTeam(sql);
  const deriver = new TextDeriver(store, options.adapters, options.redact);
  const newStore = await claimMachine(store, sql, machine, deriver);
  const summary: PushSummary = {
    projects: options.projects.length,
    conversations: 0,
    records: 0,
    already: 0,
    bytes: 0,
    forgotten: await sendTombstones(store, sql, machine),
    newStore,
    batches: 0,
    largestBatch: 0,
    complete: true,
  };
  const conversations = allowedConversations(store, options.projects);
  const team = await teamConversations(sql, machine);
  const touched = new Set<string>();
  let failed = false;
  let inFlight = 0;
  let read = 0;
  let next = 0;
  // A batch's texts and bytes are garbage once sent: collected every few batches, not when V8's
  // heap next fills (the 1 GB store's push peaked at 396 MiB, its heap at 280 MB, 62 alive).
  const garbage = options.garbage ?? new GarbageRelease();

  const send = async (items: Outgoing[], size: number) => {
    const { values, taken } = await sendBatch(sql, machine, items, options.redact);
    for (const [key, v] of values) team.set(key, v);
    for (const item of items) {
      if (!taken.has(item.uid.toHex())) {
        summary.already++;
        continue;
      }
      summary.records++;
      summary.bytes += item.size;
      touched.add(item.conversation.key);
    }
    summary.batches++;
    summary.largestBatch = Math.max(summary.largestBatch, size);
    summary.conversations = touched.size;
    options.onBatch?.({ ...summary });
    garbage.committed(size);
  };
  const stopped = () =>
    failed || (options.deadline !== undefined && now() >= options.deadline) ||
    options.signal?.aborted === true;

  // A lane takes the next conversation not yet taken and sends its records, batch after batch:
  // one batch filling here while the one before is taken by the server, at most one in flight,
  // so a lane's batches arrive in order. A conversation goes down one lane, so its cursor moves
  // only past records that arrived, whatever the other lanes do; while one lane waits for the
  // server, the others read.
  const lane = async () => {
    let batch: Outgoing[] = [];
    let held = 0;
    let sending = null as Promise<void> | null;
    /** Sends the batch once the one in flight arrived; false, sending nothing, when told to stop. */
    const flush = async (): Promise<boolean> => {
      await sending;
      if (stopped()) {
        summary.complete = false;
        return false;
      }
      inFlight++;
      sending = send(batch, held).finally(() => inFlight--);
      // Handled where it is awaited: the next flush, or the end.
      sending.catch(() => {});
      batch = [];
      held = 0;
      return true;
    };
    try {
      reading: for (let c = conversations[next++]; c; c = conversations[next++]) {
        for (const id of pendingIds(store, c, team.get(c.key)?.sent_through ?? 0)) {
          if (!batch.length && stopped()) {
            summary.complete = false;
            break reading;
          }
          const item = outgoing(store, deriver, c, id, options.raw);
          batch.push(item);
          held += item.size + item.text.length;
          if (batch.length >= limit || held >= BATCH_BYTES) {
            if (!await flush()) break reading;
          } else if (inFlight && ++read % YIELD_EVERY === 0) {
            // Reading is synchronous: let the driver answer the server now and then, so the
            // batches in flight move through their transactions meanwhile.
            await yieldToEventLoop(0);
          }
        }
      }
      if (batch.length) await flush();
      await sending;
    } catch (err) {
      failed = true;
      await sending?.catch(() => {});
      throw err;
    }
  };
  const lanes = Array.from({ length: Math.max(1, options.lanes ?? PUSH_LANES) }, lane);
  const ends = await Promise.allSettled(lanes);
  const failure = ends.find((end) => end.status === "rejected");
  if (failure) throw failure.reason;
  if (summary.complete) await refreshChanged(sql, machine, conversations, team, options.redact);
  return summary;
}

/**
 * Sends one batch in one transaction: its conversations' rows (with their cursors moved past the
 * batch's records) and the records the team database does not hold yet. Returns the rows sent and
 * the uids (as hex) of the records it took.
 */
async function sendBatch(
  sql: Sql,
  machine: string,
  batch: readonly Outgoing[],
  redact: Redactor,
): Promise<{ values: Map<string, ConversationValues>; taken: Set<string> }> {
  const values = new Map<string, ConversationValues>();
  for (const item of batch) {
    const v = values.get(item.conversation.key) ??
      conversationValues(machine, item.conversation, redact);
    v.sent_through = Math.max(v.sent_through, item.id);
    values.set(item.conversation.key, v);
  }
  // The statements go out together (the driver pipelines the queries a transaction returns):
  // one round trip for the batch, not one per statement.
  const [, rows] = await sql.begin((tx) => [
    tx`
      INSERT INTO logbook_conversations ${tx([...values.values()])}
      ON CONFLICT (machine, key) DO UPDATE SET title = excluded.title,
        project = excluded.project, cwd = excluded.cwd, branch = excluded.branch,
        first_ts = excluded.first_ts, last_ts = excluded.last_ts, messages = excluded.messages,
        sent_through = greatest(logbook_conversations.sent_through, excluded.sent_through)`,
    tx<{ uid: Uint8Array }[]>`
      INSERT INTO logbook_records ${
      tx(batch.map((item) => ({
        machine,
        uid: item.uid,
        record_id: item.id,
        conversation_key: item.conversation.key,
        ts: item.ts === null ? null : new Date(item.ts),
        kind: item.kind,
        role: item.role,
        text: item.text,
        index_text: item.indexText,
        raw: item.raw,
      })))
    }
      ON CONFLICT (machine, uid) DO NOTHING
      RETURNING uid`,
  ]);
  const taken = new Set((rows as { uid: Uint8Array }[]).map((r) => r.uid.toHex()));
  return { values, taken };
}

/** Records read between two turns of the event loop while a batch is in flight. */
const YIELD_EVERY = 16;

/** A record on its way: what the team database stores of it, and what it weighs here. */
interface Outgoing {
  id: number;
  uid: Uint8Array;
  conversation: ConversationRow;
  ts: number | null;
  kind: string;
  role: string | null;
  text: string;
  /** The text its tsvector is made of, where not `text`: without invisible characters. */
  indexText: string | null;
  raw: Uint8Array | null;
  /** Its captured (decoded) size in bytes. */
  size: number;
}

function outgoing(
  store: HistoryStore,
  deriver: TextDeriver,
  conversation: ConversationRow,
  id: number,
  raw: boolean,
): Outgoing {
  // Decompressed once, for the uid, the text and the raw bytes alike.
  const row = decodedRow(
    store.stmt("SELECT * FROM records WHERE id = ?").get(id) as unknown as RecordRow,
  );
  const text = deriver.textOf(row);
  const visible = withoutInvisible(text);
  return {
    id,
    uid: recordUid(deriver, conversation.key, row, row.raw),
    conversation,
    ts: row.ts,
    kind: row.kind,
    role: row.role,
    text,
    indexText: visible === text ? null : visible,
    raw: raw ? row.raw : null,
    size: row.raw.length,
  };
}

/**
 * A record's identity in the team database: SHA-256 of its conversation, its place (the byte
 * offset of a transcript chunk; a database row's bytes hold its ids) and its captured bytes.
 */
function recordUid(
  deriver: TextDeriver,
  conversationKey: string,
  stored: Pick<RecordRow, "source_id" | "offset">,
  bytes: Uint8Array,
): Uint8Array {
  const place = deriver.source(stored.source_id).ref.format === "rows"
    ? "row"
    : `at ${stored.offset}`;
  return new Uint8Array(
    sha256Hash().update(`${conversationKey}\0${place}\0`).update(bytes).digest(),
  );
}

/**
 * This store's identity, as the machine's row records it: a hash of its first source's id,
 * locator and first sighting, which stay for the store's life (forget and rebuild keep sources)
 * and differ in a store made again. Null for a store with no source yet.
 */
function storeIdentity(store: HistoryStore): string | null {
  const first = store.stmt("SELECT id, locator, first_seen FROM sources ORDER BY id LIMIT 1")
    .get() as { id: number; locator: string; first_seen: number } | undefined;
  return first
    ? sha256Hex(`${first.id}\0${first.locator}\0${first.first_seen}`).slice(0, 32)
    : null;
}

/**
 * Makes sure this login may push as `machine` (its row is this login's; a new name is claimed),
 * and that the cursors count in this store's ids: a store the machine's row does not name starts
 * them again. Returns true for a store new to the machine.
 */
async function claimMachine(
  store: HistoryStore,
  sql: Sql,
  machine: string,
  deriver: TextDeriver,
): Promise<boolean> {
  const storeId = storeIdentity(store);
  await sql`
    INSERT INTO logbook_machines (machine) VALUES (${machine}) ON CONFLICT (machine) DO NOTHING`;
  const [mine] = await sql<{ store_id: string | null }[]>`
    UPDATE logbook_machines SET last_push = now() WHERE machine = ${machine} RETURNING store_id`;
  if (!mine) {
    const [row] = await sql<{ login: string; user: string }[]>`
      SELECT login, current_user AS user FROM logbook_machines WHERE machine = ${machine}`;
    throw new TeamError(
      `The machine "${machine}" belongs to the login "${row?.login}" in the team database, and ` +
        `"${row?.user}" may push only as its own machines: set another "machine" in the team ` +
        "config, or have the database's owner give it to this login (UPDATE logbook_machines " +
        `SET login = '${row?.user}' WHERE machine = '${machine}')`,
    );
  }
  if (storeId === null || mine.store_id === storeId) return false;
  if (mine.store_id === null) {
    // Pushed before records had a uid (or never): by this store, which gives its rows theirs.
    await giveLegacyRowsTheirUid(store, sql, machine, deriver);
    await sql`UPDATE logbook_machines SET store_id = ${storeId} WHERE machine = ${machine}`;
    return false;
  }
  await sql.begin(async (tx) => {
    await tx`UPDATE logbook_conversations SET sent_through = 0 WHERE machine = ${machine}`;
    await tx`
      UPDATE logbook_machines SET store_id = ${storeId}, tombstone_cursor = 0
      WHERE machine = ${machine}`;
  });
  return true;
}

/**
 * Rows sent before records had a uid are keyed by the record of this store they came from, when
 * that record is still here and derives the same text (else by their team id, and a record sent
 * again beside one of them may then be kept twice).
 */
async function giveLegacyRowsTheirUid(
  store: HistoryStore,
  sql: Sql,
  machine: string,
  deriver: TextDeriver,
): Promise<void> {
  const local = store.stmt(
    `SELECT r.*, c.key AS conversation_key FROM records r
     JOIN conversations c ON c.id = r.conversation_id WHERE r.id = ?`,
  );
  for (let after = 0;;) {
    const rows = await sql<{ id: number; record_id: number; key: string; text: string }[]>`
      SELECT id, record_id, conversation_key AS key, text FROM logbook_records
      WHERE machine = ${machine} AND uid IS NULL AND id > ${after} ORDER BY id LIMIT 500`;
    if (!rows.length) return;
    const seen = new Set<string>();
    const values = rows.map((row) => {
      const found = local.get(row.record_id) as
        | (RecordRow & { conversation_key: string })
        | undefined;
      const stored = found && decodedRow(found);
      let uid: Uint8Array | null = null;
      if (stored?.conversation_key === row.key && deriver.textOf(stored) === row.text) {
        uid = recordUid(deriver, row.key, stored, stored.raw);
        if (seen.has(uid.toHex())) uid = null;
        else seen.add(uid.toHex());
      }
      return [row.id, uid ?? sha256(`legacy ${row.id}`)];
    });
    await sql`
      UPDATE logbook_records r SET uid = CASE
          WHEN EXISTS (SELECT 1 FROM logbook_records x WHERE x.machine = r.machine
            AND x.uid = v.uid::bytea) THEN sha256(('legacy ' || r.id)::bytea)
          ELSE v.uid::bytea END
      FROM (VALUES ${sql(values as never)}) AS v (id, uid)
      WHERE r.id = v.id::bigint`;
    after = rows.at(-1)!.id;
  }
}

/** The conversations of the allowed projects, in id order. */
function allowedConversations(
  store: HistoryStore,
  projects: readonly string[],
): ConversationRow[] {
  const statement = store.stmt("SELECT * FROM conversations WHERE project_root = ? ORDER BY id");
  return projects.flatMap((project) => statement.all(project) as unknown as ConversationRow[]);
}

/** What the team database holds of one conversation of this machine. */
interface ConversationValues {
  machine: string;
  key: string;
  agent: string;
  project: string | null;
  cwd: string | null;
  branch: string | null;
  title: string | null;
  first_ts: Date | null;
  last_ts: Date | null;
  messages: number;
  parent_key: string | null;
  subagent: boolean;
  sent_through: number;
}

type TeamConversation = Pick<
  ConversationValues,
  "project" | "cwd" | "branch" | "title" | "first_ts" | "last_ts" | "messages" | "sent_through"
>;

/** This machine's conversations in the team database, by key (empty for a machine never pushed). */
async function teamConversations(
  sql: Sql,
  machine: string,
): Promise<Map<string, TeamConversation>> {
  const rows = await sql<(TeamConversation & { key: string })[]>`
    SELECT key, project, cwd, branch, title, first_ts, last_ts, messages, sent_through
    FROM logbook_conversations WHERE machine = ${machine}`;
  return new Map(rows.map((row) => [row.key, row]));
}

/** The ids of a conversation's records past its cursor (`after`), in id order. */
function* pendingIds(
  store: HistoryStore,
  conversation: ConversationRow,
  after: number,
): Generator<number> {
  const statement = store.stmt(
    `SELECT id FROM records WHERE conversation_id = ? AND id > ?
       AND (flags & ${FLAG_INDEXED}) != 0 AND (flags & ${FLAG_SUPERSEDED}) = 0
     ORDER BY id LIMIT 1000`,
  );
  for (;;) {
    const ids = statement.all(conversation.id, after) as { id: number }[];
    for (const { id } of ids) yield id;
    if (ids.length < 1000) return;
    after = ids.at(-1)!.id;
  }
}

/**
 * What the team database holds of a conversation: its fields as they are shown
 * (`conversationJson`, every string through the gate, paths too), but its key, which names it.
 */
function conversationValues(
  machine: string,
  c: ConversationRow,
  redact: Redactor,
): ConversationValues {
  const shown = conversationJson(c, redact);
  return {
    machine,
    key: c.key,
    agent: c.agent,
    project: shown.project,
    cwd: shown.cwd,
    branch: shown.branch,
    title: shown.title,
    first_ts: c.first_ts === null ? null : new Date(c.first_ts),
    last_ts: c.last_ts === null ? null : new Date(c.last_ts),
    messages: c.message_count,
    parent_key: c.parent_key,
    subagent: c.subagent === 1,
    sent_through: 0,
  };
}

/**
 * Titles, counts and times change as records arrive: brings up to date the pushed conversations
 * whose row differs from this store's, and only those (a push with nothing new writes none).
 */
async function refreshChanged(
  sql: Sql,
  machine: string,
  conversations: readonly ConversationRow[],
  team: ReadonlyMap<string, TeamConversation>,
  redact: Redactor,
): Promise<void> {
  const time = (d: Date | null) => d === null ? null : new Date(d).getTime();
  const changed = conversations.flatMap((c) => {
    const there = team.get(c.key);
    if (!there) return [];
    const v = conversationValues(machine, c, redact);
    const same = v.title === there.title && v.project === there.project && v.cwd === there.cwd &&
      v.branch === there.branch && v.messages === Number(there.messages) &&
      time(v.first_ts) === time(there.first_ts) && time(v.last_ts) === time(there.last_ts);
    return same ? [] : [v];
  });
  for (const chunk of chunks(changed, 200)) {
    await sql.begin(async (tx) => {
      for (const v of chunk) {
        await tx`
          UPDATE logbook_conversations SET title = ${v.title}, project = ${v.project},
            cwd = ${v.cwd}, branch = ${v.branch}, first_ts = ${v.first_ts},
            last_ts = ${v.last_ts}, messages = ${v.messages}
          WHERE machine = ${machine} AND key = ${v.key}`;
      }
    });
  }
}

/** What a push would check and send now (see PushPlan); reads the team database, writes nothing. */
export async function planPush(
  store: HistoryStore,
  sql: Sql,
  machine: string,
  projects: readonly string[],
): Promise<PushPlan> {
  const state = await teamState(sql, machine, storeIdentity(store));
  const count = store.stmt(
    `SELECT count(*) AS records, coalesce(sum(coalesce(length, length(raw))), 0) AS bytes
     FROM records WHERE conversation_id = ? AND id > ?
       AND (flags & ${FLAG_INDEXED}) != 0 AND (flags & ${FLAG_SUPERSEDED}) = 0`,
  );
  const plan: PushPlan = {
    projects: projects.length,
    conversations: 0,
    records: 0,
    bytes: 0,
    forgets: 0,
    newStore: state.newStore,
    perProject: [],
  };
  for (const project of projects) {
    const line = { project, conversations: 0, records: 0 };
    for (const c of allowedConversations(store, [project])) {
      const row = count.get(c.id, state.cursors.get(c.key) ?? 0) as {
        records: number;
        bytes: number;
      };
      if (!row.records) continue;
      line.conversations++;
      line.records += row.records;
      plan.bytes += row.bytes;
    }
    plan.perProject.push(line);
    plan.conversations += line.conversations;
    plan.records += line.records;
  }
  const forgotten = (store.stmt("SELECT key FROM tombstones WHERE forgotten_at > ?")
    .all(state.tombstoneCursor) as { key: string }[]).map((t) => t.key);
  plan.forgets = forgotten.filter((key) => state.keys.has(key)).length;
  return plan;
}

/**
 * What the team database knows of `machine`, read only: its conversations' cursors (none where
 * the schema predates them or another store pushed them), and how far its forgets went.
 */
async function teamState(sql: Sql, machine: string, storeId: string | null): Promise<{
  cursors: Map<string, number>;
  keys: Set<string>;
  tombstoneCursor: number;
  newStore: boolean;
}> {
  const state = {
    cursors: new Map(),
    keys: new Set<string>(),
    tombstoneCursor: 0,
    newStore: false,
  };
  const [table] = await sql<{ t: string | null }[]>`SELECT to_regclass('logbook_machines') AS t`;
  if (!table?.t) return state;
  // Every column: the schema may predate store_id and sent_through.
  const [row] = await sql<{ tombstone_cursor: number; store_id?: string | null }[]>`
    SELECT * FROM logbook_machines WHERE machine = ${machine}`;
  if (!row) return state;
  const rows = await sql<{ key: string; sent_through?: number }[]>`
    SELECT * FROM logbook_conversations WHERE machine = ${machine}`;
  state.keys = new Set(rows.map((c) => c.key));
  if (row.store_id && row.store_id !== storeId) return { ...state, newStore: true };
  state.tombstoneCursor = Number(row.tombstone_cursor);
  for (const c of rows) {
    if (c.sent_through !== undefined) state.cursors.set(c.key, Number(c.sent_through));
  }
  return state;
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
