// The relevance benchmark (bench/_relevance.ts) runs alone end to end and prints exactly its
// figures, as numbers; its facts are planted as it says; and, once search() forgives (issue 31:
// an answer that says what it searched instead, `forgiven`), the issue's targets hold.

import assert from "node:assert/strict";
import { join } from "node:path";
import { editDistance } from "../../lib/edit_distance.ts";
import { HistoryStore } from "../../lib/store/db.ts";
import { ADAPTERS } from "../../lib/sources/mod.ts";
import { search } from "../../lib/store/search.ts";
import { redactSecrets } from "../../lib/gate.ts";
import type { Fact } from "../../bench/_facts.ts";
import { commitUnavailable } from "../../bench/_measure.ts";
import {
  forgivingOptions,
  RELEVANCE_BASELINE,
  RELEVANCE_KEYS,
  RELEVANCE_TARGETS,
} from "../../bench/_relevance.ts";
import { removeDir, tempDir } from "../_helpers.ts";
import { benchJson } from "./_bench_json.ts";

/**
 * Whether `search()` forgives (issue 31): a typo or another form of a planted word comes back
 * saying what was searched instead (`forgiven`), or a hit says how it matched (`matched`).
 */
function forgives(data: string, fact: Fact): boolean {
  const store = HistoryStore.open({ path: join(data, "history.db"), root: data, readOnly: true });
  const answer = (query: string) =>
    search(store, ADAPTERS, redactSecrets, forgivingOptions(query, "fallback"));
  try {
    return "forgiven" in answer(fact.queries.typo) || "forgiven" in answer(fact.queries.form) ||
      answer(fact.queries.exact).hits.some((hit) => "matched" in hit);
  } finally {
    store.close();
  }
}

Deno.test("bench/run.ts --only relevance --json prints exactly the relevance figures, as numbers", async (t) => {
  const dir = await tempDir("logbook-bench-relevance-");
  try {
    const { figures, stderr } = await benchJson([
      "--only",
      "relevance",
      "--relevance-size",
      "2MB",
      "--json",
      "--rounds",
      "1",
      "--capture-rounds",
      "1",
      "--keep",
      dir,
    ]);
    const facts = JSON.parse(
      await Deno.readTextFile(join(dir, "relevance", "corpus", "facts.json")),
    ) as Fact[];
    const data = join(dir, "relevance", "data");

    await t.step(
      "every figure is a number (the cost ones too, where the build before is here)",
      async () => {
        assert.deepEqual(Object.keys(figures), [...RELEVANCE_KEYS]);
        const noBaseline = (await commitUnavailable(RELEVANCE_BASELINE, "the build")) !== null;
        for (const key of RELEVANCE_KEYS) {
          const value = figures[key];
          if (noBaseline && /_(growth|slowdown)$/.test(key)) {
            assert.ok(value === null || typeof value === "number", key);
            continue;
          }
          assert.equal(typeof value, "number", `${key}: ${value}`);
          assert.ok(Number.isFinite(value), `${key}: ${value}`);
          // A cost against the build before may be below zero; the rest may not.
          if (!/_(growth|slowdown)$/.test(key)) assert.ok(value! >= 0, `${key}: ${value}`);
          if (/_(recall_\w+|mrr)$/.test(key)) assert.ok(value! <= 1, `${key}: ${value}`);
        }
        assert.match(stderr, /\[bench [\d.]+s\] relevance: /);
      },
    );

    await t.step(
      "forty facts, each with its five queries; a typo is one slip from its word",
      () => {
        assert.equal(facts.length, 40);
        assert.equal(new Set(facts.map((f) => f.conversation)).size, 40);
        for (const fact of facts) {
          const { exact, typo, prefix, order } = fact.queries;
          assert.ok(fact.sentence.includes(exact), exact);
          assert.equal(editDistance(typo, exact), 1, `${typo} of ${exact}`);
          assert.equal(typo[0], exact[0], `${typo} keeps the first letter`);
          assert.ok(prefix.endsWith(exact.slice(0, fact.prefixLetters)), prefix);
          assert.ok(fact.prefixLetters >= 3 && fact.prefixLetters <= 6, prefix);
          const [second, first] = order.split(" ") as [string, string];
          assert.ok(fact.sentence.includes(`${first} ${second}`), order);
        }
      },
    );

    await t.step("an exact word, and two words in another order, find their fact today", () => {
      assert.ok(figures.relevance_recall_exact! >= 0.95, `${figures.relevance_recall_exact}`);
      assert.ok(figures.relevance_recall_order! >= 0.9, `${figures.relevance_recall_order}`);
    });

    const forgiving = forgives(data, facts[0]!);
    await t.step({
      name: `the issue's targets hold: recall@10 ≥ 0.95 exact and ≥ 0.9 for each other class, ` +
        `MRR ≥ 0.8, the store ≤ 15 % larger${
          forgiving ? "" : " (ignored: search() does not forgive yet, no `forgiven` in its answer)"
        }`,
      ignore: !forgiving,
      fn: () => {
        const judged = RELEVANCE_TARGETS.filter((target) =>
          /_(recall_\w+|mrr|store_growth)$/.test(target.key)
        );
        const missed = judged.filter((target) => {
          const value = figures[target.key];
          return value !== null && value !== undefined && !target.met!(value);
        }).map((target) => `${target.key} ${figures[target.key]} (target ${target.target})`);
        assert.deepEqual(missed, []);
      },
    });
  } finally {
    await removeDir(dir);
  }
});
