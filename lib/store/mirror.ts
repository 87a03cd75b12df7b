// Project mirrors: a read-only copy of one project's conversations inside its repository,
// `<project>/.logbook/conversations-<12 hex>.db`, for tools and people working in that checkout.
// A mirror is a history store of its own (same schema) holding only that project's sources,
// conversations and records, under the same ids as the main store, so `search` and `show` read it
// as they read the main store. Capture keeps it current in small batches (at most 8 raw records,
// 32 conversation rows each); a record once copied is not read again. The folder stays out of Git
// through the repository's `.git/info/exclude`, never `.gitignore`; a link on the way is refused.
// The main store's `meta.mirrors` lists every mirror and its state, for `status`, `forget` and
// `delete-user-data`. A mirror is made only for a project the user named with `mirror enable` on
// this machine, kept in the main store's `meta.mirrors_wanted` (in the user's data dir, which no
// repository can write); a project's own files cannot ask for one.

import type { Env } from "../env.ts";
import { join, relative } from "../path.ts";
import { trackedByGit } from "../paths.ts";
import { lstatOrUndefined } from "../present.ts";
import { SymlinkRefusedError } from "../private_fs.ts";
import { HistoryStore } from "./db.ts";
import { messageOf } from "../format.ts";

/** The main store's meta key listing the mirrors. */
export const MIRRORS_KEY = "mirrors";
/** The main store's meta key: the projects whose mirror the user turned on, by root. */
export const MIRRORS_WANTED_KEY = "mirrors_wanted";
/** Most raw records copied in one transaction. */
export const RECORDS_PER_BATCH = 8;
/** Most conversation rows compared and copied in one transaction. */
export const CONVERSATIONS_PER_BATCH = 32;

/** Where a mirror stands, as `status` shows it. */
export interface MirrorState {
  /** The project root (canonical). */
  project: string;
  /** The mirror file. */
  path: string;
  /** `current`; `copying` (a pass ran out of time); `waiting` (see `reason`); `off`. */
  state: "current" | "copying" | "waiting" | "off";
  /** Why a mirror waits, in a sentence. */
  reason?: string;
  conversations: number;
  records: number;
  /** When it was last brought up to date (epoch ms). */
  syncedAt: number | null;
}

/** The mirror file of the project with root `root` and key `key` (`<slug>-<12 hex>`). */
export function mirrorPath(root: string, key: string): string {
  return join(root, ".logbook", `conversations-${key.slice(-12)}.db`);
}

/** The mirrors the main store knows of, by project root. */
export function listMirrors(store: HistoryStore): MirrorState[] {
  return Object.values(store.getMeta<Record<string, MirrorState>>(MIRRORS_KEY) ?? {});
}

/** The project roots whose mirror the user turned on (`mirror enable`) on this machine. */
export function wantedMirrors(store: HistoryStore): Set<string> {
  return new Set(Object.keys(store.getMeta<Record<string, unknown>>(MIRRORS_WANTED_KEY) ?? {}));
}

/**
 * Records the user's choice to mirror the project at `root` (canonical), or not; turned off, its
 * mirror's state says `off` at once.
 */
export function wantMirror(store: HistoryStore, root: string, on: boolean, at: number): void {
  store.transaction(() => {
    const wanted = store.getMeta<Record<string, { at: number }>>(MIRRORS_WANTED_KEY) ?? {};
    if (on) wanted[root] = { at };
    else delete wanted[root];
    store.setMeta(MIRRORS_WANTED_KEY, wanted);
    const all = store.getMeta<Record<string, MirrorState>>(MIRRORS_KEY) ?? {};
    if (!on && all[root]) {
      const { reason: _, ...state } = all[root]!;
      all[root] = { ...state, state: "off", records: 0 };
      store.setMeta(MIRRORS_KEY, all);
    }
  });
}

/** Removes one conversation, its records and their index entries from a mirror. */
export function dropConversation(mirror: HistoryStore, id: number): void {
  mirror.stmt(
    "DELETE FROM fts WHERE rowid IN (SELECT id FROM records WHERE conversation_id = ? AND (flags & 1) != 0)",
  ).run(id);
  mirror.stmt("DELETE FROM records WHERE conversation_id = ?").run(id);
  mirror.stmt("DELETE FROM conversations WHERE id = ?").run(id);
}

/** A mirror `forget` could not reach, and why: it still holds what was forgotten. */
export interface UnreachedMirror {
  project: string;
  path: string;
  reason: string;
}

/**
 * Removes conversations (by key) from every mirror the main store lists, as `forget` removes them
 * from the main store. Returns how many mirror rows went, and the mirrors that could not be
 * opened (a mirror file that is gone holds nothing, and is not one of them).
 */
export function forgetInMirrors(
  store: HistoryStore,
  keys: readonly string[],
): { removed: number; unreached: UnreachedMirror[] } {
  const unreached: UnreachedMirror[] = [];
  if (!keys.length) return { removed: 0, unreached };
  let removed = 0;
  for (const state of listMirrors(store)) {
    let mirror: HistoryStore;
    try {
      // Opening for writing would create a mirror that is not there (in a project moved away).
      if (!lstatOrUndefined(state.path)) continue;
      refuseLinkedMirror(state.project, state.path);
      mirror = HistoryStore.open({ path: state.path, root: join(state.project, ".logbook") });
    } catch (err) {
      unreached.push({
        project: state.project,
        path: state.path,
        reason: messageOf(err),
      });
      continue;
    }
    try {
      let here = 0;
      mirror.transaction(() => {
        for (const key of keys) {
          const row = mirror.stmt("SELECT id FROM conversations WHERE key = ?").get(key) as
            | { id: number }
            | undefined;
          if (!row) continue;
          dropConversation(mirror, row.id);
          here++;
        }
      });
      if (here) mirror.db.exec("INSERT INTO fts (fts) VALUES ('optimize')");
      removed += here;
    } finally {
      mirror.close();
    }
  }
  return { removed, unreached };
}

/**
 * Refuses (SymlinkRefusedError) a mirror with a link on its way: the project's `.logbook`, the
 * mirror file, or the `-wal` and `-shm` files SQLite opens beside it.
 */
export function refuseLinkedMirror(root: string, path: string): void {
  for (const place of [join(root, ".logbook"), path, `${path}-wal`, `${path}-shm`]) {
    if (lstatOrUndefined(place)?.isSymlink) {
      throw new SymlinkRefusedError(place, `the project "${root}"`);
    }
  }
}

/**
 * Opens the mirror of the project (root, key) read-only, as its consumers do. A mirror Git
 * tracks is refused: logbook never lets Git stage one, so it came with the repository, and what
 * it holds is whatever its author wrote, not this machine's conversations.
 *
 * @throws {Error} when there is no mirror, Git tracks it, or Git cannot say (see `trackedByGit`).
 */
export function openMirror(root: string, key: string, env: Env): HistoryStore {
  const dir = join(root, ".logbook");
  const path = mirrorPath(root, key);
  refuseLinkedMirror(root, path);
  if (!lstatOrUndefined(path)) {
    throw new Error(
      `No mirror for the project "${root}": run "logbook mirror enable" there, then capture`,
    );
  }
  const files = [path, `${path}-wal`].map((file) => relative(root, file));
  if (trackedByGit(root, files, env).length) {
    throw new Error(
      `The mirror "${path}" came with the repository (Git tracks it), not from logbook on this ` +
        'machine: it is not read ("logbook mirror enable" makes this project\'s own)',
    );
  }
  return HistoryStore.open({ path, root: dir, readOnly: true });
}
