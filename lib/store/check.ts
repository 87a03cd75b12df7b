// Checks the history store for damage (a zeroed or torn page, a broken text index) and says
// which part is damaged and how to recover. Read-only: it runs on a store opened to read.
//
// SQLite's `PRAGMA quick_check` walks every b-tree page and, since 3.44, also runs each FTS5
// table's own integrity check (its xIntegrity method, the check `INSERT INTO fts(fts)
// VALUES('integrity-check')` runs, which cannot run read-only). So one pass covers the raw
// tables, the derived ones and the text index. It reads the whole file: seconds on a large store.
// `damage.ts` has the look that costs milliseconds, for `status` and a search that found nothing.

import type { HistoryStore } from "./db.ts";
import type { CheckReply, CheckRequest } from "./_check_worker.ts";
import { TEXT_INDEX, TEXT_INDEX_PART } from "./damage.ts";
import { messageOf } from "../format.ts";

/**
 * What a damaged part holds. `raw`: captured bytes and cursors, kept nowhere else once a source
 * is gone. `derived`: rebuilt from raw by `reindex --rebuild`. `index`: a b-tree index, rebuilt
 * from its table. `structure`: the file's bookkeeping (free pages, orphaned pages).
 */
export type DamageKind = "raw" | "derived" | "index" | "structure";

/** One damaged part of the store, with what SQLite said about it. */
export interface DamagedPart {
  /** The table or index (the text index's shadow tables count as `fts`), or null for structure. */
  object: string | null;
  /** The table it belongs to (an index's table), or null. */
  table: string | null;
  kind: DamageKind;
  /** A human name: `table "records" (raw records)`. */
  label: string;
  messages: string[];
}

/** The result of a check. */
export interface StoreCheck {
  ok: boolean;
  /** What ran: `PRAGMA quick_check` (b-trees and the FTS5 index). */
  ran: string;
  ms: number;
  damaged: DamagedPart[];
  /** What to do about it (null when healthy). */
  recovery: string | null;
}

/** Tables whose loss loses captured data: everything else can be derived again from them. */
export const RAW_TABLES: ReadonlySet<string> = new Set([
  "sources",
  "generations",
  "records",
  "tombstones",
  "meta",
  "migrations",
]);

/** At most this many problems are listed (SQLite's own default is 100). */
const MAX_PROBLEMS = 50;

interface SchemaObject {
  type: string;
  name: string;
  tbl_name: string;
  rootpage: number | null;
}

/** Runs the check on `store` (read-only) and names what is damaged. */
export function checkStore(store: HistoryStore): StoreCheck {
  const started = performance.now();
  const messages: string[] = [];
  let objects: SchemaObject[];
  try {
    objects = store.db.prepare("SELECT type, name, tbl_name, rootpage FROM sqlite_schema")
      .all() as unknown as SchemaObject[];
  } catch (err) {
    return result(started, [{ ...SCHEMA, messages: [messageOf(err)] }]);
  }
  let stopped: string | null = null;
  try {
    // Rows are collected one by one: SQLite can fail after the rows that name the damage,
    // and `.all()` would drop those rows.
    for (const row of store.db.prepare(`PRAGMA quick_check(${MAX_PROBLEMS})`).iterate()) {
      for (const line of String(Object.values(row)[0]).split("\n")) {
        if (line && line !== "ok" && !line.startsWith("*** in database")) messages.push(line);
      }
    }
  } catch (err) {
    stopped = `the check stopped: ${messageOf(err)}`;
  }
  const damaged = attribute(messages, objects);
  if (stopped) {
    // Where it stopped is not known: with nothing named, assume the worst.
    if (damaged[0]) damaged[0].messages.push(stopped);
    else damaged.push({ ...UNKNOWN, messages: [stopped] });
  }
  return result(started, damaged);
}

function result(
  started: number,
  damaged: DamagedPart[],
  ran = "PRAGMA quick_check of every page and of the text index",
): StoreCheck {
  return {
    ok: damaged.length === 0,
    ran,
    ms: Math.round(performance.now() - started),
    damaged,
    recovery: damaged.length ? recoveryFor(damaged) : null,
  };
}

const SCHEMA: Omit<DamagedPart, "messages"> = {
  object: "sqlite_schema",
  table: null,
  kind: "raw",
  label: "the list of tables itself (the file's first pages)",
};

const UNKNOWN: Omit<DamagedPart, "messages"> = {
  object: null,
  table: null,
  kind: "raw",
  label: "an unknown part of the file (the check could not finish)",
};

/** The check of a store that cannot even be opened: its header or table list is damaged. */
export function unopenable(err: unknown): StoreCheck {
  return result(performance.now(), [{
    object: null,
    table: null,
    kind: "raw",
    label: "the file's header or its list of tables (it cannot be opened)",
    messages: [messageOf(err)],
  }], "opening the store");
}

/**
 * Runs `checkStore` in a worker on a read-only connection of its own, so the caller's event
 * loop stays free while every page is read; `signal` stops it (the promise rejects).
 */
export function checkStoreInWorker(
  path: string,
  root: string,
  signal?: AbortSignal,
): Promise<StoreCheck> {
  const worker = new Worker(new URL("./_check_worker.ts", import.meta.url).href, {
    type: "module",
  });
  return new Promise<StoreCheck>((resolve, reject) => {
    signal?.addEventListener("abort", () => reject(new Error("The check was stopped")), {
      once: true,
    });
    worker.onmessage = ({ data }: MessageEvent<CheckReply>) => {
      if (data.ok) resolve(data.check);
      else reject(new Error(`Cannot check the history store "${path}": ${data.message}`));
    };
    worker.onerror = (event) => {
      event.preventDefault();
      reject(new Error(`Cannot check the history store "${path}": ${event.message}`));
    };
    worker.postMessage({ path, root } satisfies CheckRequest);
  }).finally(() => worker.terminate());
}

/** Groups SQLite's messages by the table or index they name. */
function attribute(messages: string[], objects: SchemaObject[]): DamagedPart[] {
  const byRoot = new Map(objects.filter((o) => o.rootpage).map((o) => [o.rootpage!, o]));
  const byName = new Map(objects.map((o) => [o.name, o]));
  // Longest first, so `records_identity` is found before `records`.
  const names = [...byName.keys()].sort((a, b) => b.length - a.length);
  const parts = new Map<string, DamagedPart>();
  for (const message of messages) {
    const tree = /\bTree (\d+) page/.exec(message);
    const named = tree
      ? byRoot.get(Number(tree[1]))
      : byName.get(/FTS5 table \w+\.(\w+)/.exec(message)?.[1] ?? "") ??
        byName.get(/from table "(\w+)"/.exec(message)?.[1] ?? "") ??
        byName.get(names.find((n) => new RegExp(`\\b${n}\\b`).test(message)) ?? "");
    const part = describe(named ?? null);
    const key = `${part.kind}:${part.object}`;
    const existing = parts.get(key);
    if (existing) existing.messages.push(message);
    else parts.set(key, { ...part, messages: [message] });
  }
  return [...parts.values()];
}

function describe(object: SchemaObject | null): Omit<DamagedPart, "messages"> {
  if (!object) {
    return {
      object: null,
      table: null,
      kind: "structure",
      label: "the file's page bookkeeping (free or orphaned pages)",
    };
  }
  const table = object.tbl_name.startsWith(`${TEXT_INDEX}_`) ? TEXT_INDEX : object.tbl_name;
  if (table === TEXT_INDEX) return TEXT_INDEX_PART;
  if (object.type === "index") {
    return {
      object: object.name,
      table,
      kind: "index",
      label: `index "${object.name}" of table "${table}"`,
    };
  }
  return RAW_TABLES.has(table)
    ? { object: table, table, kind: "raw", label: `table "${table}" (raw: captured data)` }
    : { object: table, table, kind: "derived", label: `table "${table}" (derived from raw)` };
}

function recoveryFor(damaged: DamagedPart[]): string {
  if (damaged.some((d) => d.kind === "raw")) {
    return 'Raw data is damaged: some captured records may be lost. Keep a copy of the data dir, then move "history.db" (with its -wal and -shm files) aside and run "logbook reindex" to capture again from the sources that still exist; conversations whose sources are gone were only in the damaged store (sqlite3\'s ".recover" command may salvage them from the copy), and forgotten ones whose sources remain come back until forgotten again';
  }
  return 'Only data derived from the raw records is damaged: run "logbook reindex --rebuild" to copy the raw records into a new file and derive the rest again (nothing captured is lost)';
}
