// Block digests: the same items in any order give the same sums; an item missing, extra,
// changed or moved to another source row changes its block's, and only its block's.

import assert from "node:assert/strict";
import { BlockDigests } from "../../../lib/store/migration_digest.ts";

type Item = [id: number, position: number, text: string];

const ITEMS: Item[] = [
  [1, 0, "walrus"],
  [1, 1, "harbour"],
  [2, 0, "walrus"],
  [9, 0, "缓存"],
  [9, 1, "存策"],
];

function digest(items: Item[], blocks = 2): BlockDigests {
  const d = new BlockDigests(blocks);
  for (const [id, position, text] of items) d.add(id < 5 ? 0 : 1, id, position, text);
  return d;
}

Deno.test("BlockDigests: order does not matter, every change to an item does", async (t) => {
  const base = digest(ITEMS);
  await t.step("the same items in another order agree", () => {
    assert.deepEqual(digest([...ITEMS].reverse()).differing(base), []);
  });
  await t.step("a missing, extra, changed or moved item shows in its block", () => {
    assert.deepEqual(digest(ITEMS.slice(1)).differing(base), [0]);
    assert.deepEqual(digest([...ITEMS, [9, 2, "策略"]]).differing(base), [1]);
    assert.deepEqual(
      digest(ITEMS.map(([id, p, s]) => [id, p, s.replace("存策", "zzqx")])).differing(base),
      [1],
    );
    // The same text under another source row, and the same term at another position.
    assert.deepEqual(digest(ITEMS.map(([id, p, s]) => [id === 2 ? 3 : id, p, s])).differing(base), [
      0,
    ]);
    assert.deepEqual(
      digest(ITEMS.map(([id, p, s]) => [id, s === "harbour" ? 2 : p, s])).differing(base),
      [0],
    );
  });
  await t.step("a text's hash is not carried over to the next item's", () => {
    // Items met in another order hash each text afresh: the same sums, whatever came before.
    const interleaved: Item[] = [ITEMS[0]!, ITEMS[3]!, ITEMS[1]!, ITEMS[4]!, ITEMS[2]!];
    assert.deepEqual(digest(interleaved).differing(base), []);
    // A text that is a prefix of another, or the same code units split otherwise, differs.
    assert.deepEqual(digest([...ITEMS.slice(1), [1, 0, "walru"]]).differing(base), [0]);
    assert.deepEqual(digest([...ITEMS.slice(0, 4), [9, 1, "存策 "]]).differing(base), [1]);
  });
  await t.step("an item that appears twice does not cancel out", () => {
    assert.deepEqual(digest([...ITEMS, [1, 0, "walrus"], [1, 0, "walrus"]]).differing(base), [0]);
  });
  await t.step("hex keeps the sums and counts", () => {
    const again = new BlockDigests(2, base.toHex());
    assert.deepEqual(again.differing(base), []);
    assert.equal(again.total(), ITEMS.length);
    assert.equal(again.count(1), 2);
    assert.throws(() => new BlockDigests(3, base.toHex()), RangeError);
  });
});
