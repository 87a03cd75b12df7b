// A search that forgives (`forgive`): the first letters of a word, its other forms and a typo
// find what the store holds, ranked exact above prefix above form, each hit saying how its
// words matched; phrases, code, numbers and CJK stay as typed, and `exact` is today's search.
// The store is fixtures/forgiving: four conversations of one project.

import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { createGate, redactorOf } from "../../../lib/gate/gate.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { withWordForms } from "../../../lib/store/forgive.ts";
import { HistoryStore } from "../../../lib/store/db.ts";
import {
  type GroupResult,
  search,
  searchGroups,
  type SearchOptions,
  type SearchResult,
} from "../../../lib/store/search.ts";
import { captureWorld, FIXTURES, makeWorld, type World } from "../../_helpers.ts";

/** The conversations of the fixture, by what they are about. */
const KEYS = "claude:6f1e0a11-0001-4a5b-8c6d-7e8f90a1b2c1";
const LOGS = "claude:6f1e0a11-0002-4a5b-8c6d-7e8f90a1b2c2";
const LANTERN = "claude:6f1e0a11-0003-4a5b-8c6d-7e8f90a1b2c3";
const CODE = "claude:6f1e0a11-0004-4a5b-8c6d-7e8f90a1b2c4";

async function forgivingWorld(): Promise<World> {
  const world = await makeWorld();
  cpSync(join(FIXTURES, "forgiving", "claude", "projects"), join(world.claude, "projects"), {
    recursive: true,
  });
  await captureWorld(world);
  return world;
}

const same = redactorOf(createGate({ labelled: {} }));

/** `fn` over the world's store, open until what it returns has settled. */
async function usingStore<T>(world: World, fn: (store: HistoryStore) => Promise<T>): Promise<T> {
  const store = HistoryStore.open({ path: join(world.data, "history.db"), root: world.data });
  try {
    return await fn(store);
  } finally {
    store.close();
  }
}

/** A search of the world's store, the stemmer loaded when it needs it. */
function find(world: World, options: SearchOptions): Promise<SearchResult> {
  return usingStore(
    world,
    (store) => withWordForms(() => search(store, ADAPTERS, same, { limit: 50, ...options })),
  );
}

/** The conversations of the hits, in order, each once. */
function conversations(result: SearchResult): string[] {
  return [...new Set(result.hits.map((hit) => hit.conversation))];
}

Deno.test("a forgiving search finds each class of query in the fixture", async (t) => {
  const world = await forgivingWorld();
  try {
    await t.step("exact: the word as typed, nothing forgiven", async () => {
      const found = await find(world, { query: "lanternfish", forgive: "fallback" });
      assert.deepEqual(conversations(found), [KEYS]);
      assert.equal(found.forgiven, undefined);
      assert.deepEqual(found.hits[0]!.matched, [
        { word: "lanternfish", term: "lanternfish", how: "exact" },
      ]);
    });
    await t.step("another form: rotation finds rotated and rotating", async () => {
      const found = await find(world, { query: "rotation", forgive: "fallback" });
      assert.deepEqual(conversations(found).sort(), [KEYS, LOGS]);
      assert.equal(found.forgiven?.how, "form");
      assert.match(found.forgiven!.note, /^no hits for "rotation"; showing "\(.*rotated.*\)"$/);
      const keys = found.hits.find((hit) => hit.conversation === KEYS)!;
      assert.deepEqual(keys.matched, [{ word: "rotation", term: "rotated", how: "form" }]);
      // The snippet marks the form found.
      assert.ok(found.highlights[found.hits.indexOf(keys)]!.length > 0);
    });
    await t.step("one typo: lanternfsh finds lanternfish, and says so", async () => {
      const found = await find(world, { query: "lanternfsh", forgive: "fallback" });
      assert.deepEqual(conversations(found), [KEYS]);
      assert.deepEqual(found.forgiven, {
        how: "spelling",
        searched: "lanternfish",
        note: 'no hits for "lanternfsh"; showing "lanternfish"',
      });
      assert.deepEqual(found.hits[0]!.matched, [
        { word: "lanternfsh", term: "lanternfish", how: "spelling" },
      ]);
    });
    await t.step("a typo in the first letters: lnaternfish, klanternfish", async () => {
      for (const query of ["lnaternfish", "klanternfish", "anternfish"]) {
        const found = await find(world, { query, forgive: "fallback" });
        assert.equal(found.forgiven?.searched, "lanternfish", query);
      }
    });
    await t.step("the first letters: lanternf finds lanternfish", async () => {
      const found = await find(world, { query: "lanternf", forgive: "fallback" });
      assert.deepEqual(conversations(found), [KEYS]);
      assert.deepEqual(found.forgiven, {
        how: "prefix",
        searched: "lanternf*",
        note: 'no hits for "lanternf"; showing "lanternf*"',
      });
      assert.deepEqual(found.hits[0]!.matched, [
        { word: "lanternf", term: "lanternfish", how: "prefix" },
      ]);
    });
    await t.step("two words in another order, and in other forms", async () => {
      const exact = await find(world, { query: "keys rotated", forgive: "fallback" });
      assert.deepEqual(exact.hits.map((h) => [h.conversation, h.role]), [[KEYS, "assistant"]]);
      assert.equal(exact.forgiven, undefined);
      // Each word alone is in the store, never together: their forms are.
      const forms = await find(world, { query: "rotating keys", forgive: "fallback" });
      assert.deepEqual(forms.hits.map((h) => [h.conversation, h.role]), [[KEYS, "assistant"]]);
      assert.equal(forms.forgiven?.how, "form");
      assert.deepEqual(forms.hits[0]!.matched, [
        { word: "rotating", term: "rotated", how: "form" },
        { word: "keys", term: "keys", how: "exact" },
      ]);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a forgiving search ranks exact above prefix above form, and form above spelling", async (t) => {
  const world = await forgivingWorld();
  try {
    await t.step("typing: the whole word above the words it begins", async () => {
      const found = await find(world, { query: "lantern", forgive: "typing" });
      assert.deepEqual(conversations(found), [LANTERN, KEYS]);
      assert.equal(found.forgiven, undefined);
      assert.deepEqual(found.hits.at(-1)!.matched, [
        { word: "lantern", term: "lanternfish", how: "prefix" },
      ]);
    });
    await t.step("typing: the exact form above the others", async () => {
      const found = await find(world, { query: "rotating", forgive: "typing" });
      assert.deepEqual(conversations(found), [LOGS, KEYS]);
      assert.deepEqual(found.hits.map((h) => h.matched![0]!.how), ["exact", "exact", "form"]);
    });
    await t.step("typing: the word being typed is a prefix from its third letter", async () => {
      for (const query of ["lan", "lanternfi"]) {
        const found = await find(world, { query, forgive: "typing" });
        assert.ok(conversations(found).includes(KEYS), query);
        assert.equal(found.forgiven?.how, "prefix", query);
      }
      const two = await find(world, { query: "la", forgive: "typing" });
      assert.deepEqual(two.hits, []);
      // Only the last word: the words before it are whole.
      const before = await find(world, { query: "lanternf signing", forgive: "typing" });
      assert.deepEqual(before.hits, []);
    });
    await t.step("typing: a typo when nothing else is found", async () => {
      const found = await find(world, { query: "signing lanternfsh", forgive: "typing" });
      assert.deepEqual(conversations(found), [KEYS]);
      assert.equal(found.forgiven?.how, "spelling");
    });
    await t.step("fallback: forms found, the closest spelling is not searched", async () => {
      // `notation` is one letter from `rotation`, which the store holds only in other forms.
      const found = await find(world, { query: "rotation", forgive: "fallback" });
      assert.equal(found.forgiven?.how, "form");
      assert.deepEqual(conversations(found).sort(), [KEYS, LOGS]);
      assert.ok(!found.forgiven!.searched.includes("notation"), found.forgiven!.searched);
      // Nor a prefix where the exact word is found: `rotate*` would find `rotated`.
      const prefix = await find(world, { query: "rotate", forgive: "fallback" });
      assert.equal(prefix.forgiven?.searched, "rotate*");
    });
    await t.step("fallback: exact hits are the whole answer", async () => {
      const found = await find(world, { query: "rotating", forgive: "fallback" });
      assert.deepEqual(conversations(found), [LOGS]);
      assert.equal(found.forgiven, undefined);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a forgiving search leaves phrases, code, numbers, CJK and filters as typed", async (t) => {
  const world = await forgivingWorld();
  try {
    const nothing = async (query: string, options: Partial<SearchOptions> = {}) => {
      const found = await find(world, { query, forgive: "fallback", ...options });
      assert.deepEqual(found.hits, [], query);
      assert.equal(found.forgiven, undefined, query);
    };
    await t.step("a quoted word or phrase", async () => {
      await nothing('"rotation"');
      await nothing('"lanternfsh service"');
    });
    await t.step("identifiers: snake_case, camelCase, file names", async () => {
      await nothing("parse_confg_file");
      await nothing("useLantenState");
      await nothing("loader_utls.ts");
      const found = await find(world, { query: "parse_config_file", forgive: "fallback" });
      assert.deepEqual(conversations(found), [CODE]);
      assert.equal(found.forgiven, undefined);
    });
    await t.step("numbers and short words", async () => {
      await nothing("844");
      await nothing("8444");
      // Three letters may begin words, no fewer; a typo needs four.
      await nothing("ro");
      await nothing("rto");
    });
    await t.step("CJK", async () => {
      await nothing("缓存策");
    });
    await t.step("NEAR and columns", async () => {
      await nothing("NEAR(lanternfsh service)");
      await nothing("text:lanternfsh");
    });
    await t.step("a filter keeps the widened query out as it would the exact one", async () => {
      await nothing("lanternf", { agent: "codex" });
      await nothing("lanternfsh", { since: Date.UTC(2026, 9, 5) });
      const found = await find(world, { query: "lanternf", forgive: "fallback", agent: "claude" });
      assert.deepEqual(conversations(found), [KEYS]);
    });
    await t.step(
      "a query found as typed gets the hits and marks of a search without forgive",
      async () => {
        const queries = [
          "loader_utils.ts",
          "parse_config_file",
          "lanternfish service",
          '"signing keys"',
          "keys NOT cron",
          "lanternf*",
          "rotating OR lantern",
        ];
        for (const query of queries) {
          const plain = await find(world, { query });
          assert.ok(plain.hits.length, query);
          for (const forgive of ["exact", "fallback", "typing"] as const) {
            const found = await find(world, { query, forgive });
            if (forgive === "typing") {
              // Typing may add wider tiers below; the exact ones come first, marked alike.
              assert.deepEqual(
                found.highlights.slice(0, plain.hits.length),
                plain.highlights,
                query,
              );
              continue;
            }
            assert.deepEqual(found.highlights, plain.highlights, `${query} (${forgive})`);
            assert.deepEqual(
              found.hits.map(({ matched: _, ...hit }) => hit),
              plain.hits,
              `${query} (${forgive})`,
            );
          }
        }
      },
    );
    await t.step("exact, and no forgive at all, widen nothing", async () => {
      await nothing("lanternfsh", { forgive: "exact" });
      const plain = await find(world, { query: "lanternfsh" });
      assert.deepEqual(plain.hits, []);
      const hit = (await find(world, { query: "lanternfish" })).hits[0]!;
      assert.equal(hit.matched, undefined);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a forgiving search pages its widened query, grouped too, on a read-only store", async (t) => {
  const world = await forgivingWorld();
  try {
    await t.step("the next page searches the same widened query", async () => {
      const all = await find(world, { query: "rotation", forgive: "fallback" });
      const first = await find(world, { query: "rotation", forgive: "fallback", limit: 1 });
      assert.equal(first.next, 1);
      const second = await find(world, { query: "rotation", forgive: "fallback", offset: 1 });
      assert.equal(second.forgiven?.how, "form");
      assert.deepEqual(
        [...first.hits, ...second.hits].map((h) => h.record),
        all.hits.map((h) => h.record),
      );
    });
    await t.step("a page of tiers counts the widest query's matches as it ranks them", async () => {
      for (
        const [options, widest] of [
          [{ query: "lantern", forgive: "typing" }, "lantern*"],
          [{ query: "rotating", forgive: "typing" }, "(rotating OR rotated)"],
        ] as const
      ) {
        await usingStore(world, async (store) => {
          const statements: string[] = [];
          const prepare = store.stmt.bind(store);
          store.stmt = (sql: string) => {
            statements.push(sql);
            return prepare(sql);
          };
          const page = await withWordForms(() =>
            search(store, ADAPTERS, same, { ...options, limit: 1 })
          );
          const { n } = store.db.prepare(
            `SELECT count(*) AS n FROM fts JOIN records r ON r.id = fts.rowid
               JOIN conversations c ON c.id = r.conversation_id
             WHERE fts MATCH ? AND (r.kind != 'prompt' OR c.message_count = 0)`,
          ).get(page.ftsQuery!) as { n: number };
          assert.equal(page.ftsQuery, widest);
          assert.ok(statements.some((sql) => sql.includes("UNION ALL")), "ranked in tiers");
          assert.equal(page.next, 1);
          assert.ok(n > 1);
          assert.equal(page.total, n, options.query);
          assert.ok(!statements.some((sql) => sql.includes("count(*) AS n")), options.query);
        });
      }
    });
    await t.step("grouped by conversation, in tiers too", async () => {
      const grouped = (options: SearchOptions): Promise<GroupResult> =>
        usingStore(
          world,
          (store) => withWordForms(() => searchGroups(store, ADAPTERS, same, options)),
        );
      const fsh = await grouped({ query: "lanternfsh", forgive: "fallback" });
      assert.deepEqual(fsh.groups.map((g) => g.conversation), [KEYS]);
      assert.equal(fsh.forgiven?.how, "spelling");
      assert.deepEqual(fsh.groups[0]!.matched, [
        { word: "lanternfsh", term: "lanternfish", how: "spelling" },
      ]);
      const typing = await grouped({ query: "lantern", forgive: "typing" });
      assert.deepEqual(typing.groups.map((g) => g.conversation), [LANTERN, KEYS]);
      const page2 = await grouped({ query: "lanternfsh", forgive: "fallback", offset: 1 });
      assert.deepEqual(page2.groups, []);
      assert.equal(page2.forgiven?.how, "spelling");
    });
    await t.step("a store opened only to read", async () => {
      const store = HistoryStore.open({
        path: join(world.data, "history.db"),
        root: world.data,
        readOnly: true,
      });
      try {
        const found = await withWordForms(() =>
          search(store, ADAPTERS, same, { query: "lanternfsh", forgive: "fallback" })
        );
        assert.equal(found.forgiven?.searched, "lanternfish");
      } finally {
        store.close();
      }
    });
  } finally {
    await world.cleanup();
  }
});
