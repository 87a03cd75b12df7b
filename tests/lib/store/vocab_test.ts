// The index's vocabulary for a forgiving search: words it holds, their other forms by stem, and
// the closest words to a typo, the commonest first, read by ranges of first letters (a second
// pass only for a typo in the first three letters), from a store opened only to read too.

import assert from "node:assert/strict";
import { join } from "node:path";
import { HistoryStore } from "../../../lib/store/db.ts";
import { SearchBudget } from "../../../lib/store/search.ts";
import {
  begins,
  closestTerms,
  docsOf,
  formsOf,
  loadStemmer,
  stemOf,
} from "../../../lib/store/vocab.ts";
import { tempDir } from "../../_helpers.ts";

/** A store whose index holds `texts`, one record each (the index alone: no records rows). */
function storeOf(dir: string, texts: string[]): HistoryStore {
  const store = HistoryStore.open({ path: join(dir, "history.db"), root: dir });
  const insert = store.db.prepare("INSERT INTO fts (rowid, text) VALUES (?, ?)");
  texts.forEach((text, i) => insert.run(i + 1, text));
  return store;
}

const TEXTS = [
  "rotated the keys",
  "rotating the logs",
  "rotation schedule",
  "rotations",
  "rotary phone",
  "deploy deploy deploy",
  "deployed",
  "deplay",
  "deplay",
  "delay",
  "lanternfish",
  "lanternfish",
  "lanternfist",
];

Deno.test("the vocabulary says which words the index holds and begins", async () => {
  const dir = await tempDir();
  const store = storeOf(dir, TEXTS);
  try {
    assert.equal(docsOf(store, "deplay"), 2);
    assert.equal(docsOf(store, "deplo"), 0);
    assert.equal(begins(store, "deplo"), true);
    assert.equal(begins(store, "deployed"), false);
    assert.equal(begins(store, "deploy"), true);
  } finally {
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("formsOf() gives the indexed words with the word's stem, commonest first", async () => {
  await loadStemmer();
  const dir = await tempDir();
  const store = storeOf(dir, TEXTS);
  try {
    assert.equal(stemOf("rotating"), stemOf("rotation"));
    assert.deepEqual(formsOf(store, "rotate").map((f) => f.term).sort(), [
      "rotated",
      "rotating",
      "rotation",
      "rotations",
    ]);
    // Not the word itself, and not a word that only begins the same (`rotary`).
    assert.ok(!formsOf(store, "rotation").some((f) => ["rotation", "rotary"].includes(f.term)));
    assert.deepEqual(formsOf(store, "lanternfishes").map((f) => f.term), ["lanternfish"]);
  } finally {
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("closestTerms() finds the closest indexed words, the commonest first", async (t) => {
  const dir = await tempDir();
  const store = storeOf(dir, TEXTS);
  const budget = () => new SearchBudget(1000);
  const closest = (word: string) => closestTerms(store, word, budget()).map((s) => s.term);
  try {
    await t.step("one edit after the third letter", () => {
      assert.deepEqual(closest("lanternfsh"), ["lanternfish"]);
      // Those closest of all: `lanternfist` is two edits from it.
      assert.deepEqual(closest("lanternfis"), ["lanternfish", "lanternfist"]);
    });
    await t.step("at the same distance, the commonest first", () => {
      // `deploy` (one record), `deplay` (two): both one letter from `deplby`.
      assert.deepEqual(closest("deplby"), ["deplay", "deploy"]);
    });
    await t.step("a typo in the first three letters: the second pass", () => {
      assert.deepEqual(closest("lnaternfish"), ["lanternfish"]);
      assert.deepEqual(closest("klanternfish"), ["lanternfish"]);
      assert.deepEqual(closest("anternfish"), ["lanternfish"]);
      assert.deepEqual(closest("lamternfish"), ["lanternfish"]);
    });
    await t.step("nothing too far", () => {
      assert.deepEqual(closest("quasar"), []);
      // Four to six letters: one edit only.
      assert.deepEqual(closest("dxxay"), []);
    });
    await t.step("a store opened only to read makes the vocabulary too", () => {
      const reader = HistoryStore.open({
        path: join(dir, "history.db"),
        root: dir,
        readOnly: true,
      });
      try {
        assert.deepEqual(
          closestTerms(reader, "lanternfsh", budget()).map((s) => s.term),
          ["lanternfish"],
        );
        assert.equal(docsOf(reader, "lanternfish"), 2);
      } finally {
        reader.close();
      }
    });
    await t.step("a spent budget stops the second pass", () => {
      const spent = new SearchBudget(0, 0, () => 1);
      assert.deepEqual(closestTerms(store, "lnaternfish", spent), []);
    });
  } finally {
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
