// The relevance benchmark (bench/_relevance.ts) runs alone end to end and prints exactly its
// figures, as numbers; its facts are planted as it says; and issue 31's targets hold.

import assert from "node:assert/strict";
import { join } from "node:path";
import { editDistance } from "../../lib/edit_distance.ts";
import type { Fact } from "../../bench/_facts.ts";
import { commitUnavailable } from "../../bench/_measure.ts";
import { RELEVANCE_BASELINE, RELEVANCE_KEYS, RELEVANCE_TARGETS } from "../../bench/_relevance.ts";
import { removeDir, tempDir } from "../_helpers.ts";
import { benchJson } from "./_bench_json.ts";

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
        assert.match(stderr, /\[bench [\d.]+s, heap \d+ MB\] relevance: /);
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

    await t.step({
      name: `the issue's targets hold: recall@10 ≥ 0.95 exact and ≥ 0.9 for each other class, ` +
        `MRR ≥ 0.8, the store ≤ 15 % larger`,
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
