// search() is bounded: a query over a bound is refused before any work with a message naming
// the bound, and the time budget stops a statement inside SQLite, FTS5 and literal scan alike.
// A stopped search returns what it had, and a note saying what that is.

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import {
  MAX_NEAR_DISTANCE,
  MAX_PREFIXES,
  MAX_TERMS,
  search,
  searchGroups,
  SearchLimitError,
  type SearchOptions,
  SearchStoppedError,
} from "../../../lib/store/search.ts";
import {
  checkPrefixWork,
  indexPages,
  isFtsSyntax,
  PREFIX_PAGES_PER_MS,
} from "../../../lib/store/_search_bounds.ts";
import { redactSecrets } from "../../../lib/gate/secrets.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { captureWorld, makeWorld, withStore, type World } from "../../_helpers.ts";

const SESSION = "0b0b0b0b-1111-4222-8333-444444444444";
/** Records in the many-record world: enough that a scan passes the budget check many times. */
const RECORDS = 1500;

/** A world with one Claude session of `RECORDS` user messages, each saying "walrus". */
async function manyRecords(): Promise<World> {
  const world = await makeWorld();
  const dir = join(world.claude, "projects", "-home-dev-src-many");
  await Deno.mkdir(dir, { recursive: true });
  const lines = [];
  for (let i = 0; i < RECORDS; i++) {
    lines.push(JSON.stringify({
      type: "user",
      uuid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
      parentUuid: i ? `00000000-0000-4000-8000-${String(i - 1).padStart(12, "0")}` : null,
      sessionId: SESSION,
      cwd: "/home/dev/src/many",
      version: "2.1.40",
      timestamp: new Date(Date.UTC(2026, 8, 1) + i * 1000).toISOString(),
      message: { role: "user", content: `walrus number ${i} sees the tide → ebb` },
    }));
  }
  await Deno.writeTextFile(join(dir, `${SESSION}.jsonl`), lines.join("\n") + "\n");
  await captureWorld(world);
  return world;
}

function run(world: World, options: SearchOptions, now?: () => number) {
  return withStore(world, (store) => search(store, ADAPTERS, redactSecrets, options, now));
}

/** A clock that moves 1 ms each time it is read, counting the reads. */
function tickingClock() {
  const clock = { reads: 0, now: () => ++clock.reads };
  return clock;
}

/** A clock that reads `values[i]` at its i-th read and `rest` after them (ms). */
function scriptedClock(values: number[], rest: number) {
  const clock = { reads: 0, now: () => values[clock.reads++] ?? rest };
  return clock;
}

/** The ids of the records whose text holds "walrus", newest captured first. */
function walrusIds(world: World): number[] {
  return withStore(world, (store) =>
    (store.db.prepare(
      "SELECT id FROM records WHERE kind = 'message' ORDER BY id DESC",
    ).all() as { id: number }[]).map((r) => r.id));
}

Deno.test("search() refuses a query over a bound before any work, naming the bound", async (t) => {
  const world = await manyRecords();
  try {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(" ");
    const refused: [string, string, RegExp][] = [
      ["too many words", words(MAX_TERMS + 1), /has 33 words: at most 32/],
      ["too many words in a phrase", `"${words(MAX_TERMS + 1)}"`, /has 33 words/],
      ["a one-letter prefix", "a*", /prefix "a\*" is too short/],
      ["a two-letter prefix among words", "walrus OR ti*", /prefix "ti\*" is too short/],
      ["a short prefix ending a phrase", '"walrus n"*', /prefix "n\*" is too short/],
      [
        "the issue's 26 × 6 prefixes",
        [..."abcdefghijklmnopqrstuvwxyz".repeat(6)].map((c) => `${c}*`).join(" OR "),
        /prefix "a\*" is too short/,
      ],
      [
        "too many prefixes",
        Array.from({ length: MAX_PREFIXES + 1 }, (_, i) => `wal${i}*`).join(" OR "),
        /has 9 prefixes: at most 8/,
      ],
      ["a wide NEAR", `NEAR(walrus tide, ${MAX_NEAR_DISTANCE + 1})`, /NEAR distance 1001/],
      ["the issue's NEAR", `NEAR(${"a* ".repeat(20)}, 100000)`, /NEAR distance 100000/],
    ];
    for (const [name, query, message] of refused) {
      await t.step(name, () => {
        const clock = tickingClock();
        assert.throws(() => run(world, { query }, clock.now), (err: Error) => {
          assert.ok(err instanceof SearchLimitError, `${err.name}: ${err.message}`);
          assert.match(err.message, message);
          return true;
        });
        assert.equal(clock.reads, 1, "refused before the budget's first check");
      });
    }

    await t.step("queries at the bounds run", () => {
      const accepted = [
        `walrus ${words(MAX_TERMS - 1)}`,
        `"walrus number" ${words(MAX_TERMS - 2)}`,
        Array.from({ length: MAX_PREFIXES }, () => "wal*").join(" OR "),
        "tid*",
        `NEAR(walrus tide, ${MAX_NEAR_DISTANCE})`,
        "text:walrus",
        "{text}: walrus",
      ];
      for (const query of accepted) {
        assert.doesNotThrow(() => run(world, { query, budgetMs: 60_000 }), query);
      }
      assert.ok(run(world, { query: "tid*", budgetMs: 60_000 }).hits.length > 0);
    });

    await t.step("a query FTS5 cannot parse is scanned literally, however many words", () => {
      const result = run(world, { query: `walrus number 7 sees "${words(40)}`, budgetMs: 60_000 });
      assert.equal(result.mode, "literal");
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("the budget stops a search inside SQLite, with a message saying how to narrow it", async (t) => {
  const world = await manyRecords();
  try {
    await t.step("an FTS5 statement whose rows all fail a later filter", () => {
      // Every record matches, and the date filter drops each one inside SQLite: only a check in
      // the statement itself can stop it before it ends with no hits.
      const clock = tickingClock();
      const options = { query: "walrus", since: Date.UTC(2030, 0, 1), budgetMs: 5 };
      // Out of time with nothing found: an error saying how to narrow it, not "no match".
      assert.match(
        stoppedWithNothing(() => run(world, options, clock.now)),
        /^The search was stopped after 5 ms: .*more specific words/,
      );
      const full = run(world, { ...options, budgetMs: 60_000 });
      assert.deepEqual(full.hits, [], "ends with none");
      assert.equal(full.stopped, false);
      assert.equal(full.stopNote, null);
    });

    await t.step("the literal scan of a needle no record holds", () => {
      const clock = tickingClock();
      // Printable and without quotes: SQLite itself skips the records that lack it.
      const options = { query: "no record says (this", budgetMs: 5 };
      const stopped = stoppedWithNothing(() => run(world, options, clock.now));
      assert.match(stopped, /^The literal substring scan was stopped after 5 ms/);
      assert.match(stopped, /check its quotes and parentheses/);
      const full = run(world, { ...options, budgetMs: 60_000 });
      assert.equal(full.mode, "literal");
      assert.deepEqual(full.hits, [], "ends with none");
      assert.equal(full.stopped, false);
    });

    await t.step("the same connection searches again after a stop", () => {
      withStore(world, (store) => {
        for (const query of ["walrus", "no record says (this"]) {
          // Stopped inside the statement, which the next search runs again.
          const clock = tickingClock();
          const options = { query, budgetMs: 5 };
          stoppedWithNothing(() => search(store, ADAPTERS, redactSecrets, options, clock.now));
          assert.ok(clock.reads < 10, `stopped inside SQLite (${clock.reads} reads)`);
          const again = search(store, ADAPTERS, redactSecrets, { query, budgetMs: 60_000 });
          assert.equal(again.mode, query === "walrus" ? "fts" : "literal");
          assert.equal(again.stopped, false);
          if (query === "walrus") assert.equal(again.hits.length, 20);
        }
      });
    });

    await t.step("a search that begins after its budget still has time of its own", () => {
      // The command's start-up took 5 s of a 1 s budget (a busy machine): the search still runs.
      const late = run(world, { query: "walrus", budgetMs: 1000, startedAt: Date.now() - 5000 });
      assert.equal(late.stopped, false);
      assert.equal(late.hits.length, 20);
    });

    await t.step("a late search stopped in its own time says where the time went", () => {
      const clock = tickingClock();
      const options = { query: "walrus", budgetMs: 10, startedAt: clock.now() - 50 };
      const stopped = stoppedWithNothing(() => run(world, options, clock.now));
      assert.match(
        stopped,
        /^The search was stopped: \d+ ms of its 10 ms passed before it began \(the machine is busy\), and its own share was spent too; try again, or raise LOGBOOK_SEARCH_BUDGET_MS$/,
      );
      // A budget of nothing is nothing, however late.
      const none = { query: "walrus", budgetMs: 0, startedAt: Date.now() - 5000 };
      stoppedWithNothing(() => run(world, none));
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a search past its budget returns what it had, with a note saying what that is", async (t) => {
  const world = await manyRecords();
  try {
    const ids = walrusIds(world);
    assert.equal(ids.length, RECORDS);

    await t.step("stopped while ranking: the most recently captured matches, newest first", () => {
      // Time passes while SQLite ranks (each read inside the statement is 100 ms later) until
      // the ranking's share of the budget is spent at 900 (1000 less the fallback's 200, from
      // 100); then it stands still, so the fallback and the hits have time.
      const clock = scriptedClock([100, 200, 300, 400, 500, 600, 700, 800, 900], 950);
      const result = run(world, { query: "walrus", budgetMs: 1000 }, clock.now);
      assert.equal(result.stopped, true);
      assert.equal(result.mode, "fts");
      assert.deepEqual(result.hits.map((h) => h.record), ids.slice(0, 20));
      for (const hit of result.hits) assert.match(hit.snippet, /walrus/);
      assert.equal(result.highlights.length, 20);
      assert.equal(result.next, 20, "a next page of the same list");
      assert.equal(result.total, null, "not counted");
      assert.match(
        result.stopNote ?? "",
        /^The search was stopped after 1000 ms: it matches too much to rank in time, so these 20 hits are from the most recently captured matches, newest first, not ranked; /,
      );
      // The next page continues the same list.
      const next = scriptedClock([100, 200, 300, 400, 500, 600, 700, 800, 900], 950);
      const page2 = run(world, { query: "walrus", budgetMs: 1000, offset: 20 }, next.now);
      assert.deepEqual(page2.hits.map((h) => h.record), ids.slice(20, 40));
    });

    await t.step(
      "no fallback when the ranking's first row came so late that it would end well past the deadline",
      () => {
        // The clock is read as the budget starts (0), as the ranking's statement starts, and at
        // its first row, past the ranking's share (800 of 1000): stopped there. FTS5 does the same
        // work before the fallback's first row (a prefix's words gathered, uninterruptible), so
        // begun at 850 it would end at about 850 plus what the ranking took to its first row.
        const late = scriptedClock([0, 0, 850], 850);
        const message = stoppedWithNothing(() =>
          run(world, { query: "walrus", budgetMs: 1000 }, late.now)
        );
        assert.match(message, /^The search was stopped after 1000 ms: it matches too much/);
        // 150 ms to its first row: the fallback ends within its share past the deadline, and runs.
        const soon = scriptedClock([0, 700, 850], 850);
        const result = run(world, { query: "walrus", budgetMs: 1000 }, soon.now);
        assert.deepEqual(result.hits.map((h) => h.record), ids.slice(0, 20));
        assert.match(result.stopNote ?? "", /from the most recently captured matches/);
      },
    );

    await t.step("grouped, the conversations of those matches", () => {
      const clock = scriptedClock([100, 200, 300, 400, 500, 600, 700, 800, 900], 950);
      const grouped = withStore(
        world,
        (store) =>
          searchGroups(
            store,
            ADAPTERS,
            redactSecrets,
            { query: "walrus", budgetMs: 1000 },
            clock.now,
          ),
      );
      assert.equal(grouped.stopped, true);
      assert.equal(grouped.groups.length, 1);
      assert.equal(grouped.groups[0]!.record, ids[0], "its newest match is shown");
      assert.ok(grouped.groups[0]!.hits > 1);
      assert.match(grouped.stopNote ?? "", /this conversation is from the most recently captured/);
      assert.match(grouped.stopNote ?? "", /their hits counted among those/);
    });

    await t.step("stopped while reading the ranked hits: the best ones it read, in order", () => {
      const all = run(world, { query: "walrus", limit: RECORDS, budgetMs: 600_000 });
      assert.equal(all.hits.length, RECORDS);
      // The ranking and the deduplication of long lines read the clock about 1,530 times, and
      // the reading of the hits once per hit: the budget runs out while they are read.
      const clock = scriptedClock(Array(2300).fill(0), 1000);
      const result = run(world, { query: "walrus", limit: RECORDS, budgetMs: 1000 }, clock.now);
      assert.equal(result.stopped, true);
      assert.ok(result.hits.length > 0 && result.hits.length < RECORDS, `${result.hits.length}`);
      assert.deepEqual(
        result.hits.map((h) => h.record),
        all.hits.slice(0, result.hits.length).map((h) => h.record),
        "the first of the ranking, in its order",
      );
      assert.match(
        result.stopNote ?? "",
        /while it read its hits: these \d+ hits are the best ranked/,
      );
      assert.equal(result.next, null);
    });

    await t.step("a literal scan stopped: the matches of the records it read, newest first", () => {
      const clock = tickingClock();
      const result = run(world, { query: "→", limit: 1000, budgetMs: 50 }, clock.now);
      assert.equal(result.mode, "literal");
      assert.match(result.note ?? "", /no word the index holds/);
      assert.equal(result.stopped, true);
      const n = result.hits.length;
      assert.ok(n > 0 && n < 1000, `${n}`);
      assert.deepEqual(result.hits.map((h) => h.record), ids.slice(0, n));
      assert.match(
        result.stopNote ?? "",
        /these \d+ hits are from the newest matches among the records it read/,
      );
    });
  } finally {
    await world.cleanup();
  }
});

/** The message of the SearchStoppedError `fn` throws (out of time before any hit). */
function stoppedWithNothing(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof SearchStoppedError) return err.message;
    throw err;
  }
  assert.fail("the search was not stopped");
}

Deno.test("isFtsSyntax answers as FTS5 does, plain words without asking it too", () => {
  // The oracle: FTS5 itself, on a table of the store's kind.
  const db = new DatabaseSync(":memory:");
  db.exec("CREATE VIRTUAL TABLE t USING fts5(text, content = '')");
  const statement = db.prepare("SELECT rowid FROM t WHERE t MATCH ?");
  const fts5 = (query: string) => {
    try {
      statement.get(query);
      return true;
    } catch {
      return false;
    }
  };
  const queries = [
    "zanzibarite",
    "  rotate credentials  ",
    "rot* cred",
    "snake_case _ x_1",
    "and or not near",
    "AND",
    "foo AND",
    "OR bar",
    "foo NOT",
    "NEAR",
    "NEAR*",
    "foo AND bar",
    "a*b",
    "foo**",
    "*",
    '"open',
    "phx.server",
    "col:umn",
  ];
  for (const query of queries) assert.equal(isFtsSyntax(query), fts5(query), query);
  db.close();
});

Deno.test("a query whose prefixes begin words on more of the index than its budget goes through is refused at once", async () => {
  const world = await manyRecords();
  try {
    const query = "wal* OR num* OR tid*";
    const pages = withStore(world, (store) => indexPages(store, ["wal", "num", "tid"]));
    withStore(world, (store) => {
      assert.ok(pages > 0, "the words fill pages");
      assert.equal(indexPages(store, ["wal", "wal"]), 2 * indexPages(store, ["wal"]));
      // The bound is the budget's pages: at it the query runs, one page short it is refused.
      checkPrefixWork(store, query, pages / PREFIX_PAGES_PER_MS);
      assert.throws(() => checkPrefixWork(store, query, (pages - 1) / PREFIX_PAGES_PER_MS));
      // A query with no prefix, or only a CJK pair's, asks nothing of the index.
      checkPrefixWork(store, "walrus tide", 0);
      checkPrefixWork(store, "缓存*", 0);
    });
    const clock = tickingClock();
    const budgetMs = (pages - 1) / PREFIX_PAGES_PER_MS;
    assert.throws(() => run(world, { query, budgetMs }, clock.now), (err: Error) => {
      assert.ok(err instanceof SearchLimitError, `${err.name}: ${err.message}`);
      assert.match(
        err.message,
        /"wal\*", "num\*", "tid\*" begin fill [\d,]+ pages of the text index/,
      );
      assert.match(err.message, /make the prefixes longer/);
      return true;
    });
    assert.equal(clock.reads, 1, "refused before the budget's first check");
    assert.ok(run(world, { query, budgetMs: 60_000 }).hits.length > 0);
  } finally {
    await world.cleanup();
  }
});
