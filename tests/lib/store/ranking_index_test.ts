// The ranking index (migration 0018): a search ranks and filters its matches from the index's
// entries instead of the records' rows, and the filtering index (0019) filters them by their
// conversations' entries instead of the conversations' rows, answering exactly as without them;
// a store written before the migrations is searched as it is until a capture builds the indexes.

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createGate, redactorOf } from "../../../lib/gate/gate.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import {
  countMatches,
  countsLeavingOut,
  search,
  SearchBudget,
  searchGroups,
  type SearchOptions,
} from "../../../lib/store/search.ts";
import type { HistoryStore } from "../../../lib/store/db.ts";
import { FILTERING_INDEX, RANKING_INDEX } from "../../../lib/store/schema.ts";
import { loadStemmer } from "../../../lib/store/vocab.ts";
import { type Context, loadContext, openStore } from "../../../lib/context.ts";
import { captureWorld, makeWorld, type World } from "../../_helpers.ts";
import { writeClaudeCorpus } from "../../_corpus.ts";

const redact = redactorOf(createGate({}));

/** Searches of every kind the index serves: sorts, filters, typos forgiven, phrases, groups. */
const SEARCHES: SearchOptions[] = [
  ...(["relevance", "newest", "oldest"] as const).flatMap((sort) => [
    { query: "timeout", sort, limit: 7 },
    { query: "timeout", sort, limit: 7, offset: 7, project: "/home/dev/src/project2" },
    { query: "cursor", sort, limit: 5, kind: "message", role: "assistant" } as const,
    { query: "buffer stream", sort, limit: 5, since: Date.parse("2026-05-01T12:00:00Z") },
  ]),
  { query: "timeuot", limit: 5, forgive: "fallback" },
  { query: "thre", limit: 5, forgive: "typing" },
  { query: "thre", limit: 5, forgive: "typing", project: "/home/dev/src/project2" },
  { query: '"commit schema"', limit: 5, agent: "claude" },
  { query: "marker3", limit: 5 },
  { query: "timeout", limit: 5, subagents: false },
  { query: "timeout", limit: 5, agent: "claude", sort: "newest" },
];

/** Everything the searches answer, each with the statements the store prepared for it. */
function answers(store: HistoryStore): { results: unknown[]; statements: string[] } {
  const statements: string[] = [];
  const prepare = store.stmt.bind(store);
  store.stmt = (sql: string) => {
    statements.push(sql);
    return prepare(sql);
  };
  const results = SEARCHES.flatMap((options) => [
    search(store, ADAPTERS, redact, options),
    searchGroups(store, ADAPTERS, redact, { ...options, perGroup: 2 }),
    countMatches(store, "timeout", { project: "/home/dev/src/project1" }, redact),
    countsLeavingOut(
      store,
      "cursor",
      { project: "/home/dev/src/project1", kind: "message" },
      [["project"], ["kind"]],
      1_000,
      new SearchBudget(60_000),
    ),
  ]);
  return { results, statements };
}

/** How SQLite reads `records` as `r`, for each statement that matches the text index and reads it. */
function readsOfRecords(store: HistoryStore, statements: string[]): string[][] {
  return [...new Set(statements)].filter((sql) => sql.includes("MATCH")).map((sql) => {
    const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[];
    return plan.map(({ detail }) => detail).filter((detail) => /^(SEARCH|SCAN) r\b/.test(detail));
  }).filter((reads) => reads.length);
}

/**
 * How SQLite looks up each match's conversation `c`, for each statement that joins one to the
 * matches of the text index (beside its scan: not the page's conversations, read after).
 */
function readsOfConversations(store: HistoryStore, statements: string[]): string[] {
  return [...new Set(statements)].filter((sql) => sql.includes("MATCH")).flatMap((sql) => {
    const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as {
      parent: number;
      detail: string;
    }[];
    const scans = plan.filter(({ detail }) => detail.startsWith("SCAN fts"));
    return plan.filter(({ parent, detail }) =>
      /^SEARCH c\b/.test(detail) && scans.some((scan) => scan.parent === parent)
    ).map(({ detail }) => detail);
  });
}

function hasIndexes(path: string): boolean[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return [RANKING_INDEX, FILTERING_INDEX].map((name) =>
      db.prepare("SELECT 1 FROM sqlite_schema WHERE name = ?").get(name) !== undefined
    );
  } finally {
    db.close();
  }
}

async function capturedWorld(): Promise<{ world: World; ctx: Context; path: string }> {
  const world = await makeWorld();
  writeClaudeCorpus(world.claude, { sessions: 12, lines: 30, words: 30 });
  await captureWorld(world);
  const ctx = loadContext({ env: world.env });
  return { world, ctx, path: ctx.paths.historyDb };
}

Deno.test("a search ranks and filters its matches from the search indexes and answers as the rows would", async () => {
  await loadStemmer();
  const { world, ctx, path } = await capturedWorld();
  try {
    assert.deepEqual(hasIndexes(path), [true, true], "a new store is made with the indexes");
    const store = openStore(ctx, { readOnly: true });
    let indexed: ReturnType<typeof answers>;
    try {
      indexed = answers(store);
      // Each statement reads its matches from the index; the page's records (a hit's place in
      // its source) by their ids.
      const reads = readsOfRecords(store, indexed.statements);
      assert.ok(reads.length >= 6, `statements: ${reads.length}`);
      for (const read of reads) {
        assert.ok(read.some((detail) => detail.includes(RANKING_INDEX)), read.join("; "));
      }
      // A filter on conversations reads them from their index alone.
      const looked = readsOfConversations(store, indexed.statements);
      assert.ok(looked.length >= 4, `statements: ${looked.length}`);
      for (const detail of looked) {
        assert.ok(detail.includes(`USING COVERING INDEX ${FILTERING_INDEX}`), detail);
      }
    } finally {
      store.close();
    }

    // The same store without the indexes, as before migration 0018.
    const db = new DatabaseSync(path);
    db.exec(
      `DROP INDEX ${RANKING_INDEX}; DROP INDEX ${FILTERING_INDEX};
       DELETE FROM migrations WHERE name IN ('0018_ranking_index', '0019_conversation_filters')`,
    );
    db.close();
    const before = openStore(ctx, { readOnly: true });
    try {
      const plain = answers(before);
      assert.ok(
        readsOfRecords(before, plain.statements).flat().every((d) => !d.includes(RANKING_INDEX)),
      );
      assert.ok(
        readsOfConversations(before, plain.statements).every((d) => !d.includes(FILTERING_INDEX)),
      );
      assert.ok(indexed.results.length > 40);
      assert.deepEqual(plain.results, indexed.results);
    } finally {
      before.close();
    }
    assert.deepEqual(hasIndexes(path), [false, false], "a store opened to read is read as it is");

    // A capture's open builds them, and the searches answer the same again.
    await captureWorld(world);
    assert.deepEqual(hasIndexes(path), [true, true]);
    const after = openStore(ctx, { readOnly: true });
    try {
      assert.deepEqual(answers(after).results, indexed.results);
    } finally {
      after.close();
    }
  } finally {
    await world.cleanup();
  }
});
