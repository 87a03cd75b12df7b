// Keeping project mirrors current (see `lib/store/mirror.ts` for what a mirror is): after each
// capture, every project the user turned a mirror on for (`mirror enable`, kept in the main
// store) has its new conversation rows and records copied, in small batches (at most 8 raw
// records, 32 conversation rows each), from a cursor, so a record once copied is not read again.
// A record whose derived columns change later (a newer revision takes an OpenCode part out of the
// index) is noted in the main store's `record_changes`; each mirror follows that list from a
// cursor of its own and updates its copies, 8 at a time. A mirror whose copies can no longer be
// trusted (the main store was rebuilt, the list was trimmed past its cursor, or it holds an index
// older than this build's) is emptied and copied again: it is small and derived. `.logbook/` is
// kept out of Git through `.git/info/exclude`, and a mirror is written only while
// `git check-ignore` says Git ignores its files (a committed `.gitignore` can un-ignore them);
// when that cannot be ensured, or a link is on the way, mirroring waits and the mirror's state
// says why.

import { basename, join } from "../path.ts";
import { ConfigError } from "../config.ts";
import type { Env } from "../env.ts";
import type { Redactor } from "../gate/secrets.ts";
import { ensureGitExcluded, notIgnoredByGit, trackedByGit } from "../paths.ts";
import { lstatOrUndefined } from "../present.ts";
import { SymlinkRefusedError, writeFileAtomic } from "../private_fs.ts";
import type { Adapter } from "../sources/adapter.ts";
import { INDEX_UPGRADE_KEY, indexText } from "../store/cjk.ts";
import { HistoryStore } from "../store/db.ts";
import {
  CONVERSATIONS_PER_BATCH,
  dropConversation,
  mirrorPath,
  MIRRORS_KEY,
  type MirrorState,
  RECORDS_PER_BATCH,
  refuseLinkedMirror,
  wantedMirrors,
} from "../store/mirror.ts";
import { type RecordRow, TextDeriver } from "../store/records.ts";
import { FLAG_INDEXED, FLAG_SUPERSEDED } from "../store/schema.ts";
import { messageOf } from "../format.ts";

export interface SyncOptions {
  adapters: readonly Adapter[];
  redact: Redactor;
  /** The environment `git check-ignore` runs with (see `notIgnoredByGit`). */
  env: Env;
  now?: () => number;
  /** Stop copying after this long (ms), leaving the rest for the next pass (default 2000). */
  budgetMs?: number;
}

/** Why a mirror an older build made, because the project's own file asked, is no longer kept. */
const NOT_TURNED_ON = "a project's .logbook/config.json no longer turns a mirror on: run " +
  '"logbook mirror enable" in the project to keep it';

/**
 * Brings every mirror up to date: each project of the store whose mirror the user turned on. Never
 * throws for one project's trouble: its state says what is wrong, and the others go on.
 */
export function syncMirrors(store: HistoryStore, options: SyncOptions): MirrorState[] {
  const now = options.now ?? Date.now;
  const deadline = now() + (options.budgetMs ?? 2000);
  const known = store.getMeta<Record<string, MirrorState>>(MIRRORS_KEY) ?? {};
  const wanted = wantedMirrors(store);
  const next: Record<string, MirrorState> = {};
  // The change cursor of each mirror synced, so the list of changes can be trimmed.
  const followed: number[] = [];
  // No mirror wanted and none kept on: no project to look at (a scan of every conversation,
  // a third of a second at 10 GB, saved).
  const none = !wanted.size && Object.values(known).every((mirror) => mirror.state === "off");
  const projects = none ? [] : store.stmt(
    `SELECT project_root AS root, min(project_key) AS key FROM conversations
     WHERE project_root IS NOT NULL AND project_key IS NOT NULL GROUP BY project_root`,
  ).all() as { root: string; key: string }[];
  for (const { root, key } of projects) {
    const path = mirrorPath(root, key);
    const before = known[root];
    if (!wanted.has(root)) {
      // Only a mirror an older build kept because the project's file asked is on and not wanted:
      // it is no longer written, and where Git could stage what it holds, it goes.
      if (before && before.state !== "off") {
        let reason = NOT_TURNED_ON;
        try {
          refuseLinkedMirror(root, path);
          if (lstatOrUndefined(path)) {
            reason = [reason, stageable(root, path, options.env)].filter(Boolean).join("; ");
          }
        } catch (err) {
          reason = `${reason}; ${reasonOf(err)}`;
        }
        next[root] = waiting(root, path, before, reason);
      }
      continue;
    }
    try {
      refuseLinkedMirror(root, path);
      excludeFromGit(root);
      const open = stageable(root, path, options.env);
      if (open !== undefined) {
        next[root] = waiting(root, path, before, open);
        continue;
      }
      const synced = syncMirror(store, { root, key, path }, { ...options, now, deadline });
      next[root] = synced.state;
      followed.push(synced.changes);
    } catch (err) {
      next[root] = waiting(root, path, before, reasonOf(err));
    }
  }
  // A project no longer in the store keeps its entry (its mirror is still on disk).
  for (const [root, state] of Object.entries(known)) next[root] ??= state;
  store.transaction(() => {
    store.setMeta(MIRRORS_KEY, next);
    trimChanges(store, followed);
  });
  return Object.values(next);
}

/** The main store's meta key: `record_changes` up to this seq were trimmed. */
const CHANGES_TRIMMED_KEY = "record_changes_trimmed";

/**
 * Trims `record_changes` to what the mirrors synced in this pass have yet to read (everything
 * when none is). A mirror that did not sync (waiting, off) and later finds the list trimmed
 * past its cursor is copied afresh.
 */
function trimChanges(store: HistoryStore, followed: number[]): void {
  const floor = followed.length ? Math.min(...followed) : lastChange(store);
  if (floor <= (store.getMeta<number>(CHANGES_TRIMMED_KEY) ?? 0)) return;
  store.stmt("DELETE FROM record_changes WHERE seq <= ?").run(floor);
  store.setMeta(CHANGES_TRIMMED_KEY, floor);
}

/** The seq of the last change noted (0 for none). */
function lastChange(store: HistoryStore): number {
  const row = store.stmt("SELECT max(seq) AS seq FROM record_changes").get() as {
    seq: number | null;
  };
  return Math.max(row.seq ?? 0, store.getMeta<number>(CHANGES_TRIMMED_KEY) ?? 0);
}

/** The files SQLite keeps of a mirror: the database, and its WAL, shared memory and journal. */
const MIRROR_FILES = ["", "-wal", "-shm", "-journal"];

/**
 * Why `git add -A` could stage the mirror at `path` of the project at `root`, as the real
 * `git check-ignore` answers for each of its files; undefined when Git ignores them all. A
 * file Git could stage and does not track is removed (it is logbook's, and the store holds all
 * of it); a tracked one is never touched, and never written.
 *
 * @throws {Error} when Git cannot answer (then nothing may be written either).
 */
function stageable(root: string, path: string, env: Env): string | undefined {
  const files = MIRROR_FILES.map((suffix) => `.logbook/${basename(path)}${suffix}`);
  const open = notIgnoredByGit(root, files, env);
  if (!open.length) return undefined;
  const tracked = new Set(trackedByGit(root, open, env));
  const removed: string[] = [];
  for (const file of open) {
    if (tracked.has(file)) continue;
    try {
      Deno.removeSync(join(root, file));
      removed.push(file);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  return `Git does not ignore "${open[0]}" (${
    tracked.has(open[0]!) ? "it is tracked" : 'a .gitignore un-ignores it, as "!.logbook/" does'
  }), so "git add" could stage it: mirroring waits until "git check-ignore" says it is ignored${
    removed.length ? `; removed ${removed.map((file) => `"${file}"`).join(", ")}` : ""
  }`;
}

/** Whether Git ignores `file` (relative to `root`): true outside Git, false when Git cannot say. */
function ignoredByGit(root: string, file: string, env: Env): boolean {
  try {
    return notIgnoredByGit(root, [file], env).length === 0;
  } catch {
    return false;
  }
}

/** Keeps `.logbook/` out of Git; throws (mirroring waits) when that cannot be ensured. */
function excludeFromGit(root: string): void {
  try {
    ensureGitExcluded(root, ".logbook/");
  } catch (err) {
    throw new Error(
      `cannot keep .logbook/ out of Git through .git/info/exclude (${reasonOf(err)}); ` +
        "mirroring waits until it can",
      { cause: err },
    );
  }
}

interface Target {
  root: string;
  key: string;
  path: string;
}

/** What a mirror keeps of its own progress, in its `meta` under "mirror". */
interface MirrorMeta {
  project: string;
  /** The main store's last rebuild when the copy began (a rebuild starts it afresh). */
  rebuild: string;
  /** The last main-store record id copied. */
  cursor: number;
  /** The last `record_changes` seq applied (absent in a mirror an older build wrote). */
  changes?: number;
}

/**
 * One mirror brought up to date, or as far as the deadline allows; with the `record_changes`
 * seq it has applied.
 */
function syncMirror(
  store: HistoryStore,
  target: Target,
  options: SyncOptions & { now: () => number; deadline: number },
): { state: MirrorState; changes: number } {
  refuseLinkedMirror(target.root, target.path);
  const mirror = HistoryStore.open({ path: target.path, root: join(target.root, ".logbook") });
  try {
    const rebuild = JSON.stringify(store.getMeta("last_rebuild") ?? null);
    const mine = mirror.getMeta<MirrorMeta>("mirror");
    const at = { cursor: mine?.cursor ?? 0, changes: mine?.changes ?? 0 };
    const trimmed = store.getMeta<number>(CHANGES_TRIMMED_KEY) ?? 0;
    // Opening a mirror made before 0008 marked its index for the batched migration, which only
    // the main store runs: the mirror is copied afresh with the index as this build makes it.
    const oldIndex = mirror.getMeta(INDEX_UPGRADE_KEY) !== undefined;
    const untrusted = mine !== undefined &&
      (mine.rebuild !== rebuild || mine.project !== target.root || mine.changes === undefined ||
        mine.changes < trimmed);
    if (oldIndex || untrusted) {
      // The main store was rebuilt (its derived rows may differ), or the copies may hold what
      // later changed: copy everything again.
      clearMirror(mirror);
      at.cursor = 0;
    }
    // A copy that starts now copies records as they are now: earlier changes are in it.
    if (at.cursor === 0) at.changes = lastChange(store);
    const copy: MirrorCopy = {
      store,
      mirror,
      deriver: new TextDeriver(store, options.adapters, options.redact),
      at,
      save: () =>
        mirror.setMeta("mirror", { project: target.root, rebuild, ...at } satisfies MirrorMeta),
      late: () => options.now() >= options.deadline,
    };
    const joined = syncConversations(store, mirror, target.root);
    copyLateJoined(copy, joined);
    const changesDone = applyRecordChanges(copy);
    const done = copyNewRecords(copy) && changesDone;
    if (!mine || done || at.cursor === 0) copy.save();
    const counts = mirror.stmt(
      "SELECT (SELECT count(*) FROM conversations) AS c, (SELECT count(*) FROM records) AS r",
    ).get() as { c: number; r: number };
    return {
      state: {
        project: target.root,
        path: target.path,
        state: done ? "current" : "copying",
        conversations: counts.c,
        records: counts.r,
        syncedAt: done ? options.now() : null,
      },
      changes: at.changes,
    };
  } finally {
    mirror.close();
  }
}

/** A mirror being brought up to date: where its copy stands, and how to record that. */
interface MirrorCopy {
  store: HistoryStore;
  mirror: HistoryStore;
  deriver: TextDeriver;
  /** The last record id copied and the last `record_changes` seq applied. */
  at: { cursor: number; changes: number };
  /** Records `at` in the mirror. */
  save(): void;
  /** True once the deadline has passed. */
  late(): boolean;
}

/**
 * The records before the cursor of conversations that joined the project after the cursor
 * passed them (a late binding), copied first, in the same small batches.
 */
function copyLateJoined(copy: MirrorCopy, joined: readonly number[]): void {
  const { store, mirror, deriver } = copy;
  for (const id of joined) {
    let after = 0;
    for (;;) {
      const rows = store.stmt(
        "SELECT * FROM records WHERE conversation_id = ? AND id > ? AND id <= ? ORDER BY id LIMIT ?",
      ).all(id, after, copy.at.cursor, RECORDS_PER_BATCH) as unknown as RecordRow[];
      if (!rows.length) break;
      mirror.transaction(() => {
        for (const row of rows) copyRecord(store, mirror, deriver, row);
      });
      after = rows.at(-1)!.id;
    }
  }
}

/**
 * Records copied before their derived columns changed, brought up to date (`record_changes`);
 * true when none is left.
 */
function applyRecordChanges(copy: MirrorCopy): boolean {
  const { store, mirror, deriver, at } = copy;
  for (;;) {
    const noted = store.stmt(
      "SELECT seq, record_id FROM record_changes WHERE seq > ? ORDER BY seq LIMIT ?",
    ).all(at.changes, RECORDS_PER_BATCH) as { seq: number; record_id: number }[];
    if (!noted.length) return true;
    if (copy.late()) return false;
    mirror.transaction(() => {
      for (const { record_id } of noted) updateRecord(store, mirror, deriver, record_id);
      at.changes = noted.at(-1)!.seq;
      copy.save();
    });
  }
}

/** The project's records after the cursor, copied in batches; true when all are. */
function copyNewRecords(copy: MirrorCopy): boolean {
  const { store, mirror, deriver, at } = copy;
  const ids = (mirror.stmt("SELECT id FROM conversations").all() as { id: number }[]).map((r) =>
    r.id
  );
  if (ids.length === 0) return true;
  while (!copy.late()) {
    const rows = nextRecords(store, ids, at.cursor);
    if (rows.length === 0) return true;
    mirror.transaction(() => {
      for (const row of rows) copyRecord(store, mirror, deriver, row);
      at.cursor = rows.at(-1)!.id;
      copy.save();
    });
  }
  return false;
}

/**
 * The project's conversation rows, copied where they changed, and the mirror's rows of
 * conversations the main store no longer holds for this project (forgotten) removed. Returns the
 * ids of conversations new to the mirror.
 */
function syncConversations(store: HistoryStore, mirror: HistoryStore, root: string): number[] {
  const theirs = store.stmt("SELECT * FROM conversations WHERE project_root = ? ORDER BY id")
    .all(root) as Record<string, unknown>[];
  const mine = new Map(
    (mirror.stmt("SELECT * FROM conversations").all() as Record<string, unknown>[]).map((row) => [
      row.id as number,
      JSON.stringify(row),
    ]),
  );
  const changed = theirs.filter((row) => mine.get(row.id as number) !== JSON.stringify(row));
  for (let i = 0; i < changed.length; i += CONVERSATIONS_PER_BATCH) {
    const batch = changed.slice(i, i + CONVERSATIONS_PER_BATCH);
    mirror.transaction(() => {
      for (const row of batch) upsert(mirror, "conversations", row);
    });
  }
  const joined = theirs.map((row) => row.id as number).filter((id) => !mine.has(id));
  const present = new Set(theirs.map((row) => row.id as number));
  const gone = [...mine.keys()].filter((id) => !present.has(id));
  for (let i = 0; i < gone.length; i += CONVERSATIONS_PER_BATCH) {
    const batch = gone.slice(i, i + CONVERSATIONS_PER_BATCH);
    mirror.transaction(() => {
      for (const id of batch) dropConversation(mirror, id);
    });
  }
  return joined;
}

/** The next records of the mirrored conversations after `cursor`, in id order. */
function nextRecords(store: HistoryStore, ids: number[], cursor: number): RecordRow[] {
  // Ids are bound as a JSON array: one statement whatever the number of conversations.
  return store.stmt(
    `SELECT * FROM records WHERE conversation_id IN (SELECT value FROM json_each(?)) AND id > ?
     ORDER BY id LIMIT ?`,
  ).all(JSON.stringify(ids), cursor, RECORDS_PER_BATCH) as unknown as RecordRow[];
}

/** One record into the mirror: its source row if new, the row as it is, and its index entry. */
function copyRecord(
  store: HistoryStore,
  mirror: HistoryStore,
  deriver: TextDeriver,
  row: RecordRow,
): void {
  if (!mirror.stmt("SELECT 1 AS ok FROM sources WHERE id = ?").get(row.source_id)) {
    const source = store.stmt("SELECT * FROM sources WHERE id = ?").get(row.source_id) as Record<
      string,
      unknown
    >;
    upsert(mirror, "sources", source);
  }
  const held = mirror.stmt("SELECT flags FROM records WHERE id = ?").get(row.id) as
    | { flags: number }
    | undefined;
  upsert(mirror, "records", row as unknown as Record<string, unknown>);
  if (held && isIndexed(held.flags)) mirror.stmt("DELETE FROM fts WHERE rowid = ?").run(row.id);
  if (isIndexed(row.flags)) {
    mirror.stmt("INSERT INTO fts (rowid, text) VALUES (?, ?)").run(
      row.id,
      indexText(deriver.textOf(row)),
    );
  }
}

/**
 * A record the mirror copied, brought up to date with the main store's derived columns (raw
 * bytes never change). Its raw bytes are read again only when it is to be indexed: when they
 * are, its text is derived again.
 */
function updateRecord(
  store: HistoryStore,
  mirror: HistoryStore,
  deriver: TextDeriver,
  id: number,
): void {
  const held = mirror.stmt("SELECT flags FROM records WHERE id = ?").get(id) as
    | { flags: number }
    | undefined;
  // Not copied yet (the copy reads it as it is), or forgotten (the conversation's sync drops it).
  if (!held) return;
  const now = store.stmt(
    `SELECT conversation_id, ts, kind, role, message_id, part_id, flags FROM records WHERE id = ?`,
  ).get(id) as Record<string, number | string | null> | undefined;
  if (!now) return;
  if (isIndexed(now.flags as number)) {
    const row = store.stmt("SELECT * FROM records WHERE id = ?").get(id) as unknown as RecordRow;
    copyRecord(store, mirror, deriver, row);
    return;
  }
  mirror.stmt(
    `UPDATE records SET conversation_id = ?, ts = ?, kind = ?, role = ?, message_id = ?,
       part_id = ?, flags = ? WHERE id = ?`,
  ).run(
    now.conversation_id!,
    now.ts!,
    now.kind!,
    now.role!,
    now.message_id!,
    now.part_id!,
    now.flags!,
    id,
  );
  if (isIndexed(held.flags)) mirror.stmt("DELETE FROM fts WHERE rowid = ?").run(id);
}

/** True for a record whose text is in the index. */
function isIndexed(flags: number): boolean {
  return (flags & FLAG_INDEXED) !== 0 && (flags & FLAG_SUPERSEDED) === 0;
}

function upsert(store: HistoryStore, table: string, row: Record<string, unknown>): void {
  const columns = Object.keys(row);
  store.stmt(
    `INSERT OR REPLACE INTO ${table} (${columns.join(", ")}) VALUES (${
      columns.map(() => "?").join(", ")
    })`,
  ).run(...columns.map((c) => row[c] as null));
}

/** Empties a mirror for a copy afresh: its rows, its index, and any migration it was marked for. */
function clearMirror(mirror: HistoryStore): void {
  mirror.transaction(() => {
    mirror.db.exec(`INSERT INTO fts (fts) VALUES ('delete-all');
      DELETE FROM records; DELETE FROM conversations; DELETE FROM sources;
      DELETE FROM record_keys; DELETE FROM drift; DROP TABLE IF EXISTS fts_next;
      DELETE FROM migration_batches;`);
    for (const key of [INDEX_UPGRADE_KEY, "batched_migration", "mirror"]) mirror.deleteMeta(key);
  });
}

function waiting(
  root: string,
  path: string,
  before: MirrorState | undefined,
  reason: string,
): MirrorState {
  return {
    project: root,
    path,
    state: "waiting",
    reason,
    conversations: before?.conversations ?? 0,
    records: before?.records ?? 0,
    syncedAt: before?.syncedAt ?? null,
  };
}

function reasonOf(err: unknown): string {
  if (err instanceof SymlinkRefusedError) return `a link is on the way: ${err.message}`;
  if (err instanceof ConfigError) return err.message;
  return messageOf(err);
}

/**
 * The files' side of turning the mirror of the project (root, key) on or off (the choice itself
 * is the main store's, see `wantMirror`): on, `.logbook/` is kept out of Git; off, the mirror
 * file goes. Either way a `"mirror"` key an older build wrote into the project's own
 * `.logbook/config.json` is taken out (it no longer counts, and only warns), other keys kept and
 * written atomically, but only where Git ignores that file: one Git tracks or could stage is the
 * repository's, and a change to it would be staged. The file is never created. Refuses a link at
 * `.logbook` or the file.
 */
export function setMirror(
  root: string,
  key: string,
  on: boolean,
  env: Env,
): { removed: boolean } {
  const dir = join(root, ".logbook");
  const info = lstatOrUndefined(dir);
  if (info?.isSymlink) throw new SymlinkRefusedError(dir);
  if (on) excludeFromGit(root);
  const file = join(dir, "config.json");
  let config: unknown;
  try {
    config = JSON.parse(Deno.readTextFileSync(file));
  } catch (err) {
    // A file that cannot be read as JSON holds no key to take out (loading it says what is wrong).
    if (!(err instanceof SyntaxError || err instanceof Deno.errors.NotFound)) throw err;
  }
  if (
    config && typeof config === "object" && !Array.isArray(config) && "mirror" in config &&
    ignoredByGit(root, ".logbook/config.json", env)
  ) {
    delete config.mirror;
    writeFileAtomic(file, JSON.stringify(config, null, 2) + "\n", dir);
  }
  let removed = false;
  if (!on) {
    const path = mirrorPath(root, key);
    for (const suffix of MIRROR_FILES) {
      const target = path + suffix;
      if (lstatOrUndefined(target)?.isSymlink) throw new SymlinkRefusedError(target);
      try {
        Deno.removeSync(target);
        if (suffix === "") removed = true;
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      }
    }
  }
  return { removed };
}
