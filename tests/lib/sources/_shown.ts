// What `show` and `search` give of a captured conversation, as the agents' source tests compare
// them: every record in `show`'s order (paged as `show --json` pages it), what it says, and where
// a search finds a phrase.

import { redactorFor } from "../../../lib/context.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import {
  findConversation,
  pageConversation,
  type RecordJson,
} from "../../../lib/store/conversations.ts";
import { type RecordRow, TextDeriver } from "../../../lib/store/records.ts";
import { READERS } from "../../../lib/agents.ts";
import type { Context } from "../../../lib/context.ts";
import type { HistoryStore } from "../../../lib/store/db.ts";
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { search } from "../../../lib/store/search.ts";
import { runCli, withStore, type World } from "../../_helpers.ts";

/** Every record of a conversation, paged as `show --json` pages it (small pages, to page). */
export function pageRecords(world: World, key: string, page = 4): RecordJson[] {
  return withStore(world, (store, ctx) => {
    const deriver = new TextDeriver(store, ADAPTERS, redactorFor(ctx));
    const conversation = findConversation(store, key);
    const out: RecordJson[] = [];
    let after: number | undefined;
    do {
      const read = pageConversation(store, deriver, conversation, {
        limit: page,
        ...(after === undefined ? {} : { after }),
      });
      out.push(...read.records);
      after = read.next ?? undefined;
    } while (after !== undefined);
    return out;
  });
}

/** A record as `show` gives it, its raw bytes decoded. */
export interface Shown {
  kind: string;
  role: string | null;
  text: string;
  raw: Uint8Array;
  ts: string | null;
}

/** Every record of a conversation, in `show`'s order, with its text as `show` gives it. */
export function shown(world: World, key: string): Shown[] {
  return pageRecords(world, key).map((r) => ({
    kind: r.kind,
    role: r.role,
    text: r.text,
    raw: Uint8Array.fromBase64(r.raw),
    ts: r.timestamp,
  }));
}

/** What `show` shows of a conversation: each record with words, as `kind/role: first line`. */
export function said(world: World, key: string): string[] {
  return shown(world, key).filter((r) => r.text.trim() !== "").map((r) =>
    `${r.kind}/${r.role ?? "-"}: ${r.text.split("\n")[0]}`
  );
}

/** What `show` prints of a conversation: its records with words, but `meta`, in order. */
export function printed(world: World, key: string): string[] {
  return pageRecords(world, key, 7).filter((r) => r.kind !== "meta" && r.text.trim()).map((r) =>
    `${r.kind}${r.role ? `/${r.role}` : ""}: ${r.text.trim().split("\n").join(" | ")}`
  );
}

/** The conversations search finds a phrase in, one entry per hit. */
export function found(world: World, query: string): string[] {
  return withStore(
    world,
    (store, ctx) =>
      search(store, ADAPTERS, redactorFor(ctx), { query, limit: 50 }).hits.map((h) =>
        h.conversation
      ),
  );
}

/** A conversation's row, as the store holds it. */
export function conversation(world: World, key: string) {
  return withStore(world, (store) => findConversation(store, key));
}

/**
 * Checks that every stored record of `agent` reads the same through READERS (what `search` and
 * `show` load) as through the adapters: its text and whether it has any. Returns how many records
 * there are and how many have text.
 */
export function readersAgree(
  store: HistoryStore,
  ctx: Context,
  agent: string,
): { records: number; withText: number } {
  const redact = redactorFor(ctx);
  const byAdapters = new TextDeriver(store, ADAPTERS, redact);
  const byReaders = new TextDeriver(store, READERS, redact);
  const rows = store.stmt(
    `SELECT r.* FROM records r JOIN sources s ON s.id = r.source_id WHERE s.agent = ?
     ORDER BY r.id`,
  ).all(agent) as unknown as RecordRow[];
  let withText = 0;
  for (const row of rows) {
    const text = byAdapters.textOf(row);
    assert.equal(byReaders.textOf(row), text, `record ${row.id}`);
    assert.equal(byReaders.hasText(row), byAdapters.hasText(row), `record ${row.id}`);
    if (text) withText++;
  }
  return { records: rows.length, withText };
}

/**
 * Checks that the records of the conversations `keys` hold the rows of the `sessions` and
 * `messages` tables of the database at `db` exactly (`{"table":…, every column as read}`), each
 * row once: the row adapters' raw bytes (Crush, Goose). Returns how many were compared.
 */
export function rowsStoredExactly(world: World, db: string, keys: readonly string[]): number {
  const reader = new DatabaseSync(db, { readOnly: true });
  try {
    const rows = new Map<string, Record<string, unknown>>();
    for (const table of ["sessions", "messages"]) {
      const stmt = reader.prepare(`SELECT * FROM ${table}`);
      stmt.setReadBigInts(true);
      for (const row of stmt.all()) rows.set(`${table}:${row.id}`, row);
    }
    let compared = 0;
    for (const { raw } of keys.flatMap((key) => shown(world, key))) {
      const text = new TextDecoder().decode(raw);
      assert.ok(text.endsWith("}\n"));
      const stored = JSON.parse(
        text,
        (_k, v, context?: { source?: string }) =>
          typeof v === "number" && context?.source && /^-?\d+$/.test(context.source)
            ? BigInt(context.source)
            : v,
      );
      const row = rows.get(`${stored.table}:${stored.id}`);
      assert.ok(row, `${stored.table} ${stored.id}`);
      const { table: _, ...columns } = stored;
      assert.deepEqual(Object.keys(columns), Object.keys(row));
      for (const [name, value] of Object.entries(row)) {
        // Integers exactly (as BigInt); a REAL that holds a whole number reads as an integer.
        const got = typeof value === "number" ? Number(columns[name]) : columns[name];
        assert.deepEqual(got, value, `${stored.id}.${name}`);
      }
      compared++;
    }
    // Every message and session, once each.
    assert.equal(compared, rows.size);
    return compared;
  } finally {
    reader.close();
  }
}

/**
 * What `logbook usage session --json` says, a line per session: its key, input and output
 * tokens, cost (to the micro-dollar, or null) and how many calls it counts.
 */
export async function usageBySession(world: World): Promise<unknown[][]> {
  const run = await runCli("usage", ["session", "--json", "--tz", "UTC"], world.vars);
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout).lines.map((
    l: { key: string; input: number; output: number; cost: number | null; calls: number },
  ) => [l.key, l.input, l.output, l.cost && Math.round(l.cost * 1e6) / 1e6, l.calls]);
}
