// Keeping project mirrors current (see `lib/store/mirror.ts` for what a mirror is): after each
// capture, every project whose own `.logbook/config.json` says `"mirror": true` has its new
// conversation rows and records copied, in small batches (at most 8 raw records, 32 conversation
// rows each), from a cursor, so a record once copied is not read again. `.logbook/` is kept out
// of Git through `.git/info/exclude`; when that cannot be ensured, or a link is on the way,
// mirroring waits and the mirror's state says why.

import { join } from "node:path";
import { ConfigError, projectWantsMirror } from "../config.ts";
import type { Redactor } from "../gate.ts";
import { ensureGitExcluded } from "../paths.ts";
import { SymlinkRefusedError, writeFileAtomic } from "../private_fs.ts";
import type { Adapter } from "../sources/adapter.ts";
import { indexText } from "../store/cjk.ts";
import { HistoryStore } from "../store/db.ts";
import {
  CONVERSATIONS_PER_BATCH,
  dropConversation,
  lstatOrUndefined,
  mirrorPath,
  MIRRORS_KEY,
  type MirrorState,
  RECORDS_PER_BATCH,
} from "../store/mirror.ts";
import { type RecordRow, TextDeriver } from "../store/records.ts";
import { FLAG_INDEXED, FLAG_SUPERSEDED } from "../store/schema.ts";

export interface SyncOptions {
  adapters: readonly Adapter[];
  redact: Redactor;
  now?: () => number;
  /** Stop copying after this long (ms), leaving the rest for the next pass (default 2000). */
  budgetMs?: number;
}

/**
 * Brings every mirror up to date: each project of the store whose `.logbook/config.json` asks for
 * one. Never throws for one project's trouble: its state says what is wrong, and the others go on.
 */
export function syncMirrors(store: HistoryStore, options: SyncOptions): MirrorState[] {
  const now = options.now ?? Date.now;
  const deadline = now() + (options.budgetMs ?? 2000);
  const known = store.getMeta<Record<string, MirrorState>>(MIRRORS_KEY) ?? {};
  const next: Record<string, MirrorState> = {};
  const projects = store.stmt(
    `SELECT project_root AS root, min(project_key) AS key FROM conversations
     WHERE project_root IS NOT NULL AND project_key IS NOT NULL GROUP BY project_root`,
  ).all() as { root: string; key: string }[];
  for (const { root, key } of projects) {
    const path = mirrorPath(root, key);
    const before = known[root];
    let wanted: boolean;
    try {
      wanted = wantsMirror(root);
    } catch (err) {
      next[root] = waiting(root, path, before, reasonOf(err));
      continue;
    }
    if (!wanted) {
      if (before && before.state !== "off") next[root] = { ...before, state: "off" };
      continue;
    }
    try {
      excludeFromGit(root);
      next[root] = syncMirror(store, { root, key, path }, { ...options, now, deadline });
    } catch (err) {
      next[root] = waiting(root, path, before, reasonOf(err));
    }
  }
  // A project no longer in the store keeps its entry (its mirror is still on disk).
  for (const [root, state] of Object.entries(known)) next[root] ??= state;
  store.setMeta(MIRRORS_KEY, next);
  return Object.values(next);
}

/** Whether `root` asks for a mirror; throws when its `.logbook` is a link or its config is bad. */
function wantsMirror(root: string): boolean {
  const dir = join(root, ".logbook");
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(dir);
  } catch {
    return false;
  }
  if (info.isSymlink) throw new SymlinkRefusedError(dir);
  if (!info.isDirectory) return false;
  return projectWantsMirror(root);
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

/** One mirror brought up to date, or as far as the deadline allows. */
export function syncMirror(
  store: HistoryStore,
  target: Target,
  options: SyncOptions & { now: () => number; deadline: number },
): MirrorState {
  const mirror = HistoryStore.open({ path: target.path, root: join(target.root, ".logbook") });
  try {
    const rebuild = JSON.stringify(store.getMeta("last_rebuild") ?? null);
    const mine = mirror.getMeta<{ project: string; rebuild: string; cursor: number }>("mirror");
    let cursor = mine?.cursor ?? 0;
    if (mine && (mine.rebuild !== rebuild || mine.project !== target.root)) {
      // The main store was rebuilt (its derived rows may differ): copy everything again.
      clearMirror(mirror);
      cursor = 0;
    }
    const joined = syncConversations(store, mirror, target.root);
    const ids = (mirror.stmt("SELECT id FROM conversations").all() as { id: number }[]).map((r) =>
      r.id
    );
    const deriver = new TextDeriver(store, options.adapters, options.redact);
    // A conversation that joined the project after the cursor passed its first records (a late
    // binding) has those copied first, in the same small batches.
    for (const id of joined) {
      let after = 0;
      for (;;) {
        const rows = store.stmt(
          "SELECT * FROM records WHERE conversation_id = ? AND id > ? AND id <= ? ORDER BY id LIMIT ?",
        ).all(id, after, cursor, RECORDS_PER_BATCH) as unknown as RecordRow[];
        if (!rows.length) break;
        mirror.transaction(() => {
          for (const row of rows) copyRecord(store, mirror, deriver, row);
        });
        after = rows.at(-1)!.id;
      }
    }
    let done = ids.length === 0;
    while (!done && options.now() < options.deadline) {
      const rows = nextRecords(store, ids, cursor);
      if (rows.length === 0) {
        done = true;
        break;
      }
      mirror.transaction(() => {
        for (const row of rows) copyRecord(store, mirror, deriver, row);
        cursor = rows.at(-1)!.id;
        mirror.setMeta("mirror", { project: target.root, rebuild, cursor });
      });
    }
    if (!mine || done) mirror.setMeta("mirror", { project: target.root, rebuild, cursor });
    const counts = mirror.stmt(
      "SELECT (SELECT count(*) FROM conversations) AS c, (SELECT count(*) FROM records) AS r",
    ).get() as { c: number; r: number };
    return {
      project: target.root,
      path: target.path,
      state: done ? "current" : "copying",
      conversations: counts.c,
      records: counts.r,
      syncedAt: done ? options.now() : null,
    };
  } finally {
    mirror.close();
  }
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
  upsert(mirror, "records", row as unknown as Record<string, unknown>);
  if ((row.flags & FLAG_INDEXED) && !(row.flags & FLAG_SUPERSEDED)) {
    mirror.stmt("DELETE FROM fts WHERE rowid = ?").run(row.id);
    mirror.stmt("INSERT INTO fts (rowid, text) VALUES (?, ?)").run(
      row.id,
      indexText(deriver.textOf(row)),
    );
  }
}

function upsert(store: HistoryStore, table: string, row: Record<string, unknown>): void {
  const columns = Object.keys(row);
  store.stmt(
    `INSERT OR REPLACE INTO ${table} (${columns.join(", ")}) VALUES (${
      columns.map(() => "?").join(", ")
    })`,
  ).run(...columns.map((c) => row[c] as null));
}

function clearMirror(mirror: HistoryStore): void {
  mirror.transaction(() => {
    mirror.db.exec("DELETE FROM fts; DELETE FROM records; DELETE FROM conversations;");
    mirror.db.exec("DELETE FROM sources;");
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
  return err instanceof Error ? err.message : String(err);
}

/**
 * Sets `"mirror": on` in the project's own `.logbook/config.json` (created 0700/0600 if missing,
 * other keys kept, written atomically), and keeps `.logbook/` out of Git. With `on` false the
 * mirror file goes too. Refuses a link at `.logbook` or the file.
 */
export function setMirror(root: string, key: string, on: boolean): { removed: boolean } {
  const dir = join(root, ".logbook");
  const info = lstatOrUndefined(dir);
  if (info?.isSymlink) throw new SymlinkRefusedError(dir);
  if (on) excludeFromGit(root);
  const file = join(dir, "config.json");
  let config: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(Deno.readTextFileSync(file));
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) config = parsed;
    else throw new ConfigError(`Cannot change "${file}": it is not a JSON object`, { file });
  } catch (err) {
    if (err instanceof SyntaxError) {
      throw new ConfigError(`Cannot change "${file}": it is not valid JSON`, { file, cause: err });
    }
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  if (on) config.mirror = true;
  else delete config.mirror;
  if (on || info) writeFileAtomic(file, JSON.stringify(config, null, 2) + "\n", dir);
  let removed = false;
  if (!on) {
    const path = mirrorPath(root, key);
    for (const suffix of ["", "-wal", "-shm"]) {
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
