// search() pages and redacts in one place: `offset` and `limit` give one page with the offset of
// the next, in FTS5 and literal mode alike, and every string of a hit comes through the gate. A
// damaged text index is an error that says how to recover, never an empty answer.

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { basename, join } from "node:path";
import { createGate, redactorOf } from "../../../lib/gate/gate.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import {
  countMatches,
  prefixSuggestion,
  search,
  type SearchFilters,
  searchGroups,
  type SearchOptions,
  type SearchResult,
  SearchStatementError,
} from "../../../lib/store/search.ts";
import { HistoryStore, StoreDamagedError } from "../../../lib/store/db.ts";
import { FILTERING_INDEX } from "../../../lib/store/schema.ts";
import { loadStemmer } from "../../../lib/store/vocab.ts";
import { quickCheck } from "../../../lib/store/damage.ts";
import {
  damagedWords,
  MANY_WORDS,
  manyWord,
  misplaceLeafPage,
  writeManyWords,
  zeroLeafPage,
} from "../../_damage.ts";
import { captureWorld, makeWorld, withStore, type World } from "../../_helpers.ts";
import { addInvisible } from "../../_invisible.ts";
import { writeClaudeCorpus } from "../../_corpus.ts";

const SESSION = "5ea5ea5e-1111-4222-8333-444444444444";
const CWD = "/home/dev/src/secret-cove";
const MESSAGES = 7;

/** A world with one captured Claude session of `MESSAGES` user messages about a walrus. */
async function walrusWorld(): Promise<World> {
  const world = await makeWorld();
  const dir = join(world.claude, "projects", CWD.replaceAll("/", "-"));
  await Deno.mkdir(dir, { recursive: true });
  const lines = [];
  for (let i = 0; i < MESSAGES; i++) {
    lines.push(JSON.stringify({
      type: "user",
      uuid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
      parentUuid: i ? `00000000-0000-4000-8000-${String(i - 1).padStart(12, "0")}` : null,
      sessionId: SESSION,
      cwd: CWD,
      version: "2.1.40",
      timestamp: new Date(Date.UTC(2026, 8, 1) + i * 1000).toISOString(),
      message: { role: "user", content: `she said "walrus number ${i} at the shore` },
    }));
  }
  Deno.writeTextFileSync(join(dir, `${SESSION}.jsonl`), lines.join("\n") + "\n");
  await captureWorld(world);
  return world;
}

/** The gate of these tests: the project's directory name is a labelled value. */
const redact = redactorOf(createGate({ labelled: { cove: "secret-cove" } }));

function run(world: World, options: SearchOptions): SearchResult {
  return withStore(world, (store) => search(store, ADAPTERS, redact, options));
}

Deno.test("search() pages by offset and limit, saying where the next page starts", async (t) => {
  const world = await walrusWorld();
  try {
    for (const [mode, query] of [["fts", "walrus"], ["literal", '"walrus']] as const) {
      await t.step(mode, () => {
        const all = run(world, { query, limit: MESSAGES });
        assert.equal(all.mode, mode);
        assert.equal(all.hits.length, MESSAGES);
        assert.equal(all.next, null);
        const paged: number[] = [];
        const nexts: (number | null)[] = [];
        let offset: number | null = 0;
        while (offset !== null) {
          const page: SearchResult = run(world, { query, limit: 3, offset });
          assert.equal(page.highlights.length, page.hits.length);
          paged.push(...page.hits.map((hit) => hit.record));
          nexts.push(page.next);
          offset = page.next;
        }
        assert.deepEqual(nexts, [3, 6, null]);
        assert.deepEqual(paged, all.hits.map((hit) => hit.record));
        assert.deepEqual(run(world, { query, limit: 3, offset: MESSAGES }).hits, []);
      });
    }
    assert.throws(() => run(world, { query: "walrus", offset: -1 }), RangeError);
  } finally {
    await world.cleanup();
  }
});

Deno.test("search() returns every string of a hit through the gate", async () => {
  const world = await walrusWorld();
  try {
    for (const query of ["walrus", '"walrus']) {
      const { hits } = run(world, { query, limit: 3 });
      assert.equal(hits.length, 3);
      for (const hit of hits) {
        assert.equal(hit.cwd, "/home/dev/src/[REDACTED:cove]");
        assert.equal(hit.project, "/home/dev/src/[REDACTED:cove]");
        assert.equal(hit.conversation, `claude:${SESSION}`);
        assert.match(hit.snippet, /walrus number \d at the shore/);
      }
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("searchGroups() keeps a conversation's best hits with perGroup, the same in literal mode", async () => {
  const world = await walrusWorld();
  try {
    withStore(world, (store) => {
      for (const query of ["walrus", '"walrus'] as const) {
        const one = searchGroups(store, ADAPTERS, redact, { query });
        assert.equal(one.groups.length, 1);
        assert.equal(one.groups[0]!.hits, MESSAGES);
        assert.equal(one.groups[0]!.top, undefined, "only asked for: the CLI's groups keep shape");
        const three = searchGroups(store, ADAPTERS, redact, { query, perGroup: 3 });
        const top = three.groups[0]!.top!;
        assert.equal(top.hits.length, 3, query);
        assert.equal(top.hits[0]!.record, three.groups[0]!.record, "the group's own hit first");
        assert.equal(new Set(top.hits.map((h) => h.record)).size, 3);
        assert.equal(top.highlights.length, 3);
        assert.ok(top.hits.every((h) => !h.project?.includes("secret-cove")), "through the gate");
        if (query === "walrus") {
          const scores = top.hits.map((h) => h.score);
          assert.deepEqual(scores, [...scores].sort((a, b) => a - b), "best first");
        } else assert.equal(three.mode, "literal");
      }
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("search() finds a word with an invisible character inside, and marks it whole", async () => {
  const world = await makeWorld();
  try {
    addInvisible(world);
    await captureWorld(world);
    for (const query of ["password", "pass\u200bword", "PASS\u2060WORD", "passw*"]) {
      const result = run(world, { query });
      assert.equal(result.mode, "fts", query);
      assert.equal(result.hits.length, 1, query);
      const [a, b] = result.highlights[0]![0]!;
      assert.equal(result.hits[0]!.snippet.slice(a, b), "pass\u200bword", query);
      const groups = withStore(world, (store) => searchGroups(store, ADAPTERS, redact, { query }));
      assert.equal(groups.groups.length, 1, query);
    }
    const suggested = withStore(
      world,
      (store) => prefixSuggestion(store, { query: "passw\u200b" }),
    );
    assert.equal(suggested, "passw*");
  } finally {
    await world.cleanup();
  }
});

Deno.test("a search that meets a damaged store says so and how to recover, never answers empty", async (t) => {
  const world = await makeWorld();
  try {
    writeManyWords(world);
    await captureWorld(world);
    const path = join(world.data, "history.db");
    const sound = Deno.readFileSync(path);
    /** Opens the store as damaged by `damage`, with the words it fails on and hides. */
    const damagedBy = (damage: () => void) => {
      Deno.writeFileSync(path, sound);
      damage();
      const words = damagedWords(path);
      const store = HistoryStore.open({ path, root: world.data, readOnly: true });
      return { store, ...words };
    };
    const refuses = (store: HistoryStore, query: string, message: RegExp) => {
      for (const find of [search, searchGroups]) {
        assert.throws(
          () => find(store, ADAPTERS, redact, { query }),
          (err) => err instanceof StoreDamagedError && message.test(err.message),
          find.name,
        );
      }
    };
    const inTextIndex = (detail: string) =>
      new RegExp(
        `^The history store "${escape(path)}" is damaged in the text index \\(table "fts"\\): ` +
          `${detail}; run "logbook reindex --rebuild" to derive the text index again from the raw ` +
          "records \\(nothing captured is lost",
      );

    await t.step("a word it does not hold is no match while the store is sound", () => {
      withStore(world, (store) => {
        assert.deepEqual(search(store, ADAPTERS, redact, { query: "zzznowhere" }).hits, []);
        assert.deepEqual(searchGroups(store, ADAPTERS, redact, { query: "zzznowhere" }).groups, []);
      });
    });

    await t.step("a page of the index's data where another belongs: FTS5 fails, quietly", () => {
      const { store, failing } = damagedBy(() => misplaceLeafPage(path, "fts_data", 3, 4));
      try {
        assert.ok(failing.length > 0, "some words' searches fail");
        assert.ok(quickCheck(store).ok, "and nothing else shows it");
        refuses(
          store,
          failing[0]!,
          inTextIndex('fts5: corruption found reading blob \\d+ from table "fts"'),
        );
      } finally {
        store.close();
      }
    });

    await t.step("its configuration page zeroed", () => {
      const { store } = damagedBy(() => zeroLeafPage(path, "fts_config"));
      try {
        refuses(store, manyWord(7), inTextIndex("vtable constructor failed: fts"));
      } finally {
        store.close();
      }
    });

    await t.step("a page of its term index where another belongs: SQLite says nothing", () => {
      const { store, hidden, failing } = damagedBy(() => misplaceLeafPage(path, "fts_idx", 0, 1));
      try {
        assert.ok(hidden.length > 0 && failing.length === 0, "words are hidden, none fails");
        refuses(store, hidden[0]!, inTextIndex("row not in PRIMARY KEY order for fts_idx"));
      } finally {
        store.close();
      }
    });

    await t.step(
      "a forgiving search looks at the index only when no level found anything",
      async () => {
        await loadStemmer();
        /** `find` over `store`, and how many times it looked at the index. */
        const looking = (store: HistoryStore, find: () => unknown) => {
          let looks = 0;
          const prepare = store.db.prepare.bind(store.db);
          store.db.prepare = (sql: string) => {
            if (sql.includes("integrity_check")) looks++;
            return prepare(sql);
          };
          try {
            return { found: find(), looks };
          } catch (err) {
            return { err, looks };
          } finally {
            store.db.prepare = prepare;
          }
        };
        // A word the index does not hold, whose spelling it does.
        const held = manyWord(parseInt("aaa", 36));
        const { store, hidden } = damagedBy(() => misplaceLeafPage(path, "fts_idx", 0, 1));
        store.close();
        try {
          for (const forgive of ["fallback", "typing"] as const) {
            for (const find of [search, searchGroups]) {
              const label = `${forgive} ${find.name}`;
              // Nothing at any level of a damaged index: the look, and the damage it finds.
              const damaged = damagedBy(() => misplaceLeafPage(path, "fts_idx", 0, 1)).store;
              try {
                const nowhere = looking(
                  damaged,
                  () => find(damaged, ADAPTERS, redact, { query: hidden[0]!, forgive }),
                );
                assert.ok(nowhere.err instanceof StoreDamagedError, label);
                assert.equal(nowhere.looks, 1, label);
              } finally {
                damaged.close();
              }
              Deno.writeFileSync(path, sound);
              const whole = HistoryStore.open({ path, root: world.data, readOnly: true });
              try {
                // Found by a wider level: the hits, and no look.
                const spelled = looking(
                  whole,
                  () => find(whole, ADAPTERS, redact, { query: `${held}a`, forgive }),
                );
                const found = spelled.found as { forgiven?: { searched: string } };
                assert.equal(found.forgiven?.searched, held, label);
                assert.equal(spelled.looks, 0, label);
                // Nothing at any level of a sound one: one look, which finds nothing wrong.
                const none = looking(
                  whole,
                  () => find(whole, ADAPTERS, redact, { query: "zzqxv", forgive }),
                );
                assert.ok(!("err" in none), label);
                assert.equal(none.looks, 1, label);
              } finally {
                whole.close();
              }
            }
          }
        } finally {
          Deno.writeFileSync(path, sound);
        }
      },
    );

    await t.step(
      "filters that leave out what the index matched: no match, no look at the index",
      () => {
        // The index answers the query (it matches records a filter left out): the quick check,
        // which reads the whole term index (some 40 ms at 10 GB), is not what explains it.
        const { store, hidden } = damagedBy(() => misplaceLeafPage(path, "fts_idx", 0, 1));
        try {
          const held = manyWord(MANY_WORDS - 1);
          assert.ok(!hidden.includes(held));
          for (const find of [search, searchGroups]) {
            const found = find(store, ADAPTERS, redact, { query: held, agent: "codex" });
            assert.deepEqual("hits" in found ? found.hits : found.groups, [], find.name);
            assert.throws(
              () => find(store, ADAPTERS, redact, { query: hidden[0]!, agent: "codex" }),
              (err) => err instanceof StoreDamagedError,
              `${find.name}: a word the index matches nowhere is still looked into`,
            );
          }
        } finally {
          store.close();
        }
      },
    );

    await t.step("a page of the records a match names zeroed: status --check says what", () => {
      const { store, failing } = damagedBy(() => zeroLeafPage(path, "records", 10));
      try {
        assert.ok(failing.length > 0, "some words' records cannot be read");
        refuses(
          store,
          failing[0]!,
          new RegExp(
            `^The history store "${escape(path)}" is damaged: database disk image is malformed; ` +
              'run "logbook status --check" to see what is damaged and how to recover$',
          ),
        );
      } finally {
        store.close();
      }
    });
  } finally {
    await world.cleanup();
  }
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

Deno.test("a hit on a later row of a long line stands for its first, which holds its text", async () => {
  const world = await makeWorld();
  try {
    const session = "2b7c9d1e-3f4a-4b5c-8d6e-7f8a9b0c1d2e";
    const dir = join(world.claude, "projects", "-home-dev-src-rows");
    Deno.mkdirSync(dir, { recursive: true });
    const text = "lorem ipsum ".repeat(20_000) + "the granite heron";
    const line = JSON.stringify({
      type: "user",
      sessionId: session,
      uuid: "2b7c9d1e-0000-4b5c-8d6e-000000000001",
      timestamp: "2026-11-02T10:00:00.000Z",
      message: { role: "user", content: text },
    });
    Deno.writeTextFileSync(join(dir, `${session}.jsonl`), line + "\n");
    await captureWorld(world);
    withStore(world, (store) => {
      const rows = store.db.prepare("SELECT id, seq FROM records ORDER BY id").all() as {
        id: number;
        seq: number;
      }[];
      assert.ok(rows.length > 2, "a line of several rows");
      const redact = redactorOf(createGate());
      const found = () => search(store, ADAPTERS, redact, { query: '"granite heron"' }).hits;
      assert.deepEqual(found().map((h) => h.record), [rows[0]!.id]);
      // As a store captured before indexed it: a piece of the text with each row.
      store.db.prepare("DELETE FROM fts WHERE rowid = ?").run(rows[0]!.id);
      store.db.prepare("INSERT INTO fts (rowid, text) VALUES (?, ?)").run(
        rows.at(-1)!.id,
        "the granite heron",
      );
      const hits = found();
      assert.deepEqual(hits.map((h) => h.record), [rows[0]!.id]);
      assert.match(hits[0]!.snippet, /the granite heron/);
    });
  } finally {
    await world.cleanup();
  }
});

/**
 * A captured world of ten sessions whose words include `timeout`, and five typed prompts that
 * hold it: of three captured sessions (their transcript's copy is the hit) and of two sessions
 * never captured (the prompt is).
 */
async function promptsWorld(): Promise<World> {
  const world = await makeWorld();
  const sessions = writeClaudeCorpus(world.claude, { sessions: 10, lines: 30 });
  const prompts = [...sessions.slice(0, 3).map((path) => basename(path, ".jsonl")), "a", "b"]
    .map((id, i) =>
      JSON.stringify({
        display: `timeout in prompt ${i}`,
        pastedContents: {},
        timestamp: Date.UTC(2026, 4, 1, 12, i),
        project: `/home/dev/src/project${i}`,
        sessionId: id.length > 1 ? id : `0000000${i}-0000-4000-8000-00000000000${id}`,
      })
    );
  Deno.writeTextFileSync(join(world.claude, "history.jsonl"), prompts.join("\n") + "\n");
  await captureWorld(world);
  return world;
}

Deno.test("a search looks a match's conversation up only where a filter reads it, and finds what joining it would", async () => {
  // Joined to its conversation, each of a common word's matches is one more lookup (a fifth of
  // its ranking at 10 GB): the term every search has asks a prompt's conversation alone.
  const world = await promptsWorld();
  try {
    withStore(world, (store) => {
      // A match no conversation holds yet (a streamed line's rows, until the line is derived).
      const orphan = store.db.prepare(
        `SELECT r.id, r.conversation_id AS conversation FROM fts JOIN records r ON r.id = fts.rowid
         WHERE fts MATCH 'timeout' AND r.kind = 'message' ORDER BY r.id LIMIT 1`,
      ).get() as { id: number; conversation: number };
      store.db.prepare("UPDATE records SET conversation_id = NULL WHERE id = ?").run(orphan.id);
      const claimed = store.db.prepare(
        "SELECT id, project_root AS project FROM conversations WHERE message_count > 0 LIMIT 1",
      ).get() as { id: number; project: string };
      // Each filter as the join would answer it: every match in a conversation, a typed prompt
      // only where its transcript was not captured.
      const cases: { filters: SearchFilters; sql: string; params: (string | number)[] }[] = [
        { filters: {}, sql: "", params: [] },
        {
          filters: { project: claimed.project },
          sql: "c.project_root = ?",
          params: [claimed.project],
        },
        { filters: { agent: "claude" }, sql: "c.agent = ?", params: ["claude"] },
        { filters: { conversationId: claimed.id }, sql: "c.id = ?", params: [claimed.id] },
        { filters: { kind: "message" }, sql: "r.kind IN ('message', 'prompt')", params: [] },
        { filters: { kind: "prompt" }, sql: "r.kind = 'prompt'", params: [] },
        { filters: { subagents: false }, sql: "c.subagent = 0", params: [] },
        {
          filters: { since: Date.UTC(2026, 4, 1, 12) },
          sql: "r.ts >= ?",
          params: [Date.UTC(2026, 4, 1, 12)],
        },
      ];
      const statements: string[] = [];
      const prepare = store.stmt.bind(store);
      store.stmt = (sql: string) => {
        statements.push(sql);
        return prepare(sql);
      };
      for (const { filters, sql, params } of cases) {
        const expected = (store.db.prepare(
          `SELECT r.id FROM fts JOIN records r ON r.id = fts.rowid
             JOIN conversations c ON c.id = r.conversation_id
           WHERE fts MATCH 'timeout' AND (r.kind != 'prompt' OR c.message_count = 0)
             ${sql ? `AND ${sql}` : ""} ORDER BY r.id`,
        ).all(...params) as { id: number }[]).map((row) => row.id);
        const label = JSON.stringify(filters);
        assert.ok(expected.length > 0, label);
        assert.ok(!expected.includes(orphan.id));
        statements.length = 0;
        const found: number[] = [];
        for (let offset: number | null = 0; offset !== null;) {
          const page: SearchResult = search(store, ADAPTERS, redact, {
            query: "timeout",
            ...filters,
            offset,
            limit: 40,
          });
          assert.equal(page.total, expected.length, label);
          found.push(...page.hits.map((hit) => hit.record));
          offset = page.next;
        }
        assert.deepEqual(found.sort((a, b) => a - b), expected, label);
        const ranking = matchJoins(store, statements);
        assert.ok(ranking.length > 0);
        const reads = Object.keys(filters).some((key) =>
          ["project", "agent", "subagents"].includes(key)
        );
        for (const joins of ranking) assert.equal(joins, reads, label);
        const groups = searchGroups(store, ADAPTERS, redact, {
          query: "timeout",
          ...filters,
          limit: 100,
        });
        assert.equal(groups.groups.reduce((sum, group) => sum + group.hits, 0), expected.length);
        assert.equal(countMatches(store, "timeout", filters, redact).total, expected.length);
      }
      assert.ok(
        search(store, ADAPTERS, redact, { query: "timeout", kind: "prompt", limit: 10 }).hits
          .every((hit) => hit.kind === "prompt"),
      );
    });
  } finally {
    await world.cleanup();
  }
});

/**
 * For each statement that matches the text index, whether it joins a match to its conversation
 * (`c`) beside the index's scan, rather than for the page's rows or a prompt's own lookup.
 */
function matchJoins(store: HistoryStore, statements: string[]): boolean[] {
  return [...new Set(statements)].filter((sql) => sql.includes("fts MATCH")).map((sql) => {
    const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as {
      id: number;
      parent: number;
      detail: string;
    }[];
    const scans = plan.filter((row) => row.detail.startsWith("SCAN fts"));
    return plan.some((row) =>
      /^SEARCH c\b/.test(row.detail) && scans.some((scan) => scan.parent === row.parent)
    );
  });
}

Deno.test("a search whose own statement SQLite would not prepare says so, never scans instead", async () => {
  // SQLite words some of its own errors as FTS5 words a query it cannot parse (`no such
  // column`), which a search answers with a literal scan or nothing.
  const world = await promptsWorld();
  try {
    const path = join(world.data, "history.db");
    const db = new DatabaseSync(path);
    db.exec(`DROP INDEX ${FILTERING_INDEX}; ALTER TABLE conversations DROP COLUMN subagent`);
    db.close();
    withStore(world, (store) => {
      for (const forgive of ["exact", "fallback"] as const) {
        for (const find of [search, searchGroups]) {
          assert.throws(
            () => find(store, ADAPTERS, redact, { query: "timeout", subagents: false, forgive }),
            (err) =>
              err instanceof SearchStatementError &&
              /no such column: c\.subagent/.test(err.message),
            `${forgive} ${find.name}`,
          );
        }
      }
      assert.ok(search(store, ADAPTERS, redact, { query: "timeout" }).hits.length > 0);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a page's total is every record the search matches under its filters, in each sort", async () => {
  // Counted as the matches are ranked (one statement): the same number a count of its own gives.
  const world = await promptsWorld();
  try {
    withStore(world, (store) => {
      const counted = (project?: string) => (store.db.prepare(
        `SELECT count(*) AS n, sum(r.kind = 'prompt') AS prompts FROM fts
           JOIN records r ON r.id = fts.rowid JOIN conversations c ON c.id = r.conversation_id
           WHERE fts MATCH 'timeout' AND (r.kind != 'prompt' OR c.message_count = 0)
             AND (? IS NULL OR c.project_root = ?)`,
      ).get(project ?? null, project ?? null) as { n: number; prompts: number });
      const all = counted();
      assert.equal(all.prompts, 2, "the prompts of sessions never captured, and only those");
      for (const project of [undefined, "/home/dev/src/project1"]) {
        const { n } = counted(project);
        assert.ok(n > 10, `more matches than a page (${n})`);
        for (const sort of ["relevance", "newest", "oldest"] as const) {
          const page = search(store, ADAPTERS, redact, {
            query: "timeout",
            ...(project ? { project } : {}),
            sort,
            limit: 5,
          });
          assert.equal(page.hits.length, 5);
          assert.equal(page.next, 5);
          assert.equal(page.total, n, `${sort}, ${project ?? "every project"}`);
        }
      }
    });
  } finally {
    await world.cleanup();
  }
});
