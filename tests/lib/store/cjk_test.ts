// CJK in the index: runs indexed as overlapping bigrams and queries turned into their phrases,
// snippets that mark a word inside a sentence, and a store whose index predates bigrams
// answering CJK queries by the literal scan until capture derives its index again.

import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { runCapture } from "../../../lib/capture/run.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import {
  bigramText,
  CJK_LETTER_CLASS,
  CJK_MIGRATION,
  cjkIndexReady,
  cjkQuery,
  hasCjk,
  hasLoneCjkLetter,
  INDEX_UPGRADE_KEY,
  indexText,
  MAYBE_CJK,
} from "../../../lib/store/cjk.ts";
import { FLAG_INDEXED } from "../../../lib/store/schema.ts";
import { TextDeriver } from "../../../lib/store/records.ts";
import { search } from "../../../lib/store/search.ts";
import { makeSnippet, queryTerms } from "../../../lib/store/text.ts";
import { captureWorld, FIXTURES, makeWorld, withStore, type World } from "../../_helpers.ts";

const SENTENCE = "我们需要把缓存策略改成按需加载";

Deno.test("indexText() gives CJK runs as overlapping bigrams and leaves other text alone", async (t) => {
  await t.step("a Chinese sentence", () => {
    assert.equal(
      indexText(SENTENCE).trim(),
      "我们 们需 需要 要把 把缓 缓存 存策 策略 略改 改成 成按 按需 需加 加载",
    );
  });
  await t.step("Japanese (Kanji, Hiragana and Katakana in one run)", () => {
    assert.equal(indexText("キャッシュを使う").trim(), "キャ ャッ ッシ シュ ュを を使 使う");
  });
  await t.step("Korean words keep their spaces", () => {
    assert.equal(indexText("캐시 전략을").replace(/\s+/g, " ").trim(), "캐시 전략 략을");
  });
  await t.step("a run of one letter is itself; Latin letters beside a run are set apart", () => {
    assert.equal(indexText("用cache缓存").replace(/\s+/g, " ").trim(), "用 cache 缓存");
  });
  await t.step("text without CJK is returned as it is", () => {
    const text = "rotate the walrus-sprocket key → now 💡";
    assert.equal(indexText(text), text);
  });
  await t.step("punctuation ends a run (it is not a letter)", () => {
    assert.equal(indexText("缓存，策略").replace(/\s+/g, " ").trim(), "缓存 ， 策略");
  });
});

Deno.test("indexText() leaves out what a reader cannot see; bigramText() (migration 0008's) keeps it", () => {
  assert.equal(
    indexText("pass\u200bword over\u2060flow \u200eleft\u200f"),
    "password overflow left",
  );
  assert.equal(indexText("缓存\u200b策略").trim(), "缓存 存策 策略");
  assert.equal(bigramText("pass\u200bword"), "pass\u200bword");
  assert.equal(bigramText("缓存策略").trim(), "缓存 存策 策略");
});

Deno.test("cjkQuery() turns CJK words into the phrases of their bigrams", () => {
  assert.equal(cjkQuery("缓存策略"), '"缓存 存策 策略"');
  assert.equal(cjkQuery("cache 缓存"), 'cache "缓存"');
  assert.equal(cjkQuery("cache缓存"), '"cache 缓存"');
  assert.equal(cjkQuery('"按需 加载" OR walrus*'), '"按需 加载" OR walrus*');
  assert.equal(cjkQuery("缓存策*"), '"缓存 存策"', "a bigram is whole: no prefix needed");
  assert.equal(cjkQuery("walrus NOT 缓存"), 'walrus NOT "缓存"');
  assert.equal(cjkQuery("no cjk here"), "no cjk here");
  assert.equal(cjkQuery("NEAR(缓存 策略, 5)"), 'NEAR("缓存" "策略", 5)');
  assert.equal(cjkQuery("text:缓存策略"), 'text:"缓存 存策 策略"');
  assert.ok(hasLoneCjkLetter("缓"));
  assert.ok(!hasLoneCjkLetter("缓存 cache"));
});

Deno.test("a snippet marks a CJK word inside its sentence", () => {
  const snippet = makeSnippet(`${SENTENCE}，否则首页太慢。`, queryTerms("缓存策略"));
  const [range] = snippet.ranges;
  assert.ok(range);
  assert.equal(snippet.text.slice(range[0], range[1]), "缓存策略");
});

/** A world holding the CJK fixture (Claude Code's format), captured. */
async function cjkWorld(): Promise<World> {
  const world = await makeWorld();
  cpSync(join(FIXTURES, "cjk", "claude", "projects"), join(world.claude, "projects"), {
    recursive: true,
  });
  await captureWorld(world);
  return world;
}

/**
 * Makes the world's store what the build before CJK bigrams left: every record indexed with its
 * text as it is, and the migration not applied.
 */
function indexAsBefore(world: World): void {
  withStore(world, (store, ctx) => {
    const deriver = new TextDeriver(store, ADAPTERS, redactorFor(ctx));
    const rows = store.db.prepare(
      `SELECT * FROM records WHERE (flags & ${FLAG_INDEXED}) != 0`,
    ).all() as unknown as Parameters<TextDeriver["textOf"]>[0][];
    store.transaction(() => {
      for (const row of rows) {
        store.db.prepare("DELETE FROM fts WHERE rowid = ?").run(row.id);
        store.db.prepare("INSERT INTO fts (rowid, text) VALUES (?, ?)")
          .run(row.id, deriver.textOf(row));
      }
      store.db.prepare("DELETE FROM migrations WHERE name = ?").run(CJK_MIGRATION);
      store.db.exec("DROP TABLE migration_batches");
    });
  });
}

function searchIn(world: World, query: string, readOnly: boolean) {
  const ctx = loadContext({ env: world.env });
  const store = openStore(ctx, { readOnly });
  try {
    return search(store, ADAPTERS, redactorFor(ctx), { query });
  } finally {
    store.close();
  }
}

Deno.test("a store indexed before CJK bigrams gets the new index from the next capture run", async (t) => {
  const world = await cjkWorld();
  try {
    indexAsBefore(world);
    await t.step("read as it is, a CJK query is a literal scan that says why", () => {
      const result = searchIn(world, "缓存策略", true);
      assert.equal(result.mode, "literal");
      assert.match(result.note ?? "", /until reindex upgrades it/);
      assert.equal(result.hits.length, 1);
    });
    await t.step("the migration marks the index to be derived again", () => {
      withStore(world, (store) => {
        assert.ok(!store.pendingMigrations().includes(CJK_MIGRATION));
        assert.deepEqual(store.getMeta(INDEX_UPGRADE_KEY), { reason: "cjk_bigrams" });
        assert.ok(!cjkIndexReady(store));
      });
      assert.equal(searchIn(world, "缓存策略", true).mode, "literal");
    });
    await t.step("the next capture run migrates the index; it finds the word", async () => {
      const ctx = loadContext({ env: world.env });
      const store = openStore(ctx);
      try {
        const result = await runCapture({ ctx, store, redact: redactorFor(ctx) });
        assert.equal(result.status, "captured");
        assert.equal(store.getMeta(INDEX_UPGRADE_KEY), undefined);
        assert.ok(cjkIndexReady(store));
      } finally {
        store.close();
      }
      const found = searchIn(world, "缓存策略", true);
      assert.equal(found.mode, "fts");
      assert.equal(found.note, null);
      assert.equal(found.hits.length, 1);
      assert.match(found.hits[0]!.snippet, /缓存策略/);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a new store needs no upgrade: the migration finds nothing indexed", async () => {
  const world = await cjkWorld();
  try {
    withStore(world, (store) => {
      assert.equal(store.getMeta(INDEX_UPGRADE_KEY), undefined);
      assert.ok(cjkIndexReady(store));
    });
    assert.equal(searchIn(world, "缓存策略", true).mode, "fts");
  } finally {
    await world.cleanup();
  }
});

Deno.test("a query with a term the index cannot hold is scanned literally, as its operators say", async () => {
  const world = await cjkWorld();
  try {
    const found = (query: string) => searchIn(world, query, true);
    const either = found("缓存策略 OR 💡");
    assert.equal(either.mode, "literal");
    assert.equal(either.note, '"💡" has no word the index holds; used a literal substring scan');
    assert.equal(either.hits.length, 2);
    // Each hit marks what matched in its snippet.
    either.hits.forEach((hit, i) => {
      const marked = either.highlights[i]!.map(([a, b]) => hit.snippet.slice(a, b));
      assert.ok(
        marked.length > 0 && marked.every((m) => m === "缓存策略" || m === "💡"),
        hit.snippet,
      );
    });
    assert.equal(found("(缓存策略 OR 💡) AND loader").hits.length, 1);
    assert.equal(found('"缓存策略" OR →').hits.length, 2);
    assert.equal(found("💡 loader NOT worker").hits.length, 0);
    assert.equal(found("lazy* OR →").hits.length, 2, "a prefix is its text");
    const both = found("💡 →");
    assert.equal(both.note, "the query has no word the index holds; used a literal substring scan");
    assert.equal(both.hits.length, 1);
    // A word alone, or a symbol alone, is as before: the index, or the whole query scanned.
    assert.equal(found("缓存策略").mode, "fts");
    assert.equal(
      found("💡").note,
      "the query has no word the index holds; used a literal substring scan",
    );
  } finally {
    await world.cleanup();
  }
});

Deno.test("the cheap CJK check lets through every code point the exact class holds", () => {
  // hasCjk asks MAYBE_CJK first and the exact class only when it matches: a CJK letter outside
  // its ranges would never be seen as one.
  const exact = new RegExp(CJK_LETTER_CLASS, "v");
  let letters = 0;
  for (let cp = 0x80; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const ch = String.fromCodePoint(cp);
    if (!exact.test(ch)) continue;
    letters++;
    assert.ok(MAYBE_CJK.test(ch), `U+${cp.toString(16)} is CJK and outside MAYBE_CJK`);
    assert.ok(hasCjk(`a ${ch} b`));
  }
  assert.ok(letters > 90_000, `${letters} CJK letters`);
  assert.equal(hasCjk("plain — “quoted” text, café"), false);
});
