// Block digests: the same items in any order give the same sums; an item missing, extra,
// changed or moved to another source row changes its block's, and only its block's.

import assert from "node:assert/strict";
import { BlockDigests } from "../../../lib/store/migration_digest.ts";

const ITEMS: [number, string][] = [
  [1, "0:walrus"],
  [1, "1:harbour"],
  [2, "0:walrus"],
  [9, "0:缓存"],
  [9, "1:存策"],
];

function digest(items: [number, string][], blocks = 2): BlockDigests {
  const d = new BlockDigests(blocks);
  for (const [id, item] of items) d.add(id < 5 ? 0 : 1, id, item);
  return d;
}

Deno.test("BlockDigests: order does not matter, every change to an item does", async (t) => {
  const base = digest(ITEMS);
  await t.step("the same items in another order agree", () => {
    assert.deepEqual(digest([...ITEMS].reverse()).differing(base), []);
  });
  await t.step("a missing, extra, changed or moved item shows in its block", () => {
    assert.deepEqual(digest(ITEMS.slice(1)).differing(base), [0]);
    assert.deepEqual(digest([...ITEMS, [9, "2:策略"]]).differing(base), [1]);
    assert.deepEqual(
      digest(ITEMS.map(([id, s]) => [id, s.replace("存策", "zzqx")])).differing(base),
      [
        1,
      ],
    );
    // The same text under another source row, and the same term at another position.
    assert.deepEqual(digest(ITEMS.map(([id, s]) => [id === 2 ? 3 : id, s])).differing(base), [0]);
    assert.deepEqual(
      digest(ITEMS.map(([id, s]) => [id, s === "1:harbour" ? "2:harbour" : s])).differing(base),
      [0],
    );
  });
  await t.step("an item that appears twice does not cancel out", () => {
    assert.deepEqual(digest([...ITEMS, [1, "0:walrus"], [1, "0:walrus"]]).differing(base), [0]);
  });
  await t.step("hex keeps the sums and counts", () => {
    const again = new BlockDigests(2, base.toHex());
    assert.deepEqual(again.differing(base), []);
    assert.equal(again.total(), ITEMS.length);
    assert.equal(again.count(1), 2);
    assert.throws(() => new BlockDigests(3, base.toHex()), RangeError);
  });
});
