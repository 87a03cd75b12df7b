// The parts `--only` selects (bench/_parts.ts): named in any order, run in the bench's order,
// and what they need of the run.

import assert from "node:assert/strict";
import { needsOf, parseParts, PART_NAMES, slicedParts } from "../../bench/_parts.ts";

Deno.test("parseParts() keeps the bench's order and refuses a part it does not know", () => {
  assert.deepEqual(parseParts("forget, search,capture"), ["capture", "search", "forget"]);
  assert.deepEqual(parseParts(PART_NAMES.join(",")), PART_NAMES);
  assert.throws(() => parseParts("search,nope"), RangeError);
  assert.throws(() => parseParts(" , "), RangeError);
});

Deno.test("needsOf() makes the store only for parts that read it, the corpus for those that read files", () => {
  const sizes = { size: 200e6, upgradeSize: 20e6, sliceSize: 200e6 };
  assert.equal(needsOf(["search", "huge"], sizes), "store");
  assert.equal(needsOf(["rg", "watch"], sizes), "corpus");
  assert.equal(needsOf(["relevance", "huge", "upgrade"], sizes), "nothing");
  // The upgrade runs on the bench's own corpus when it is of the upgrade's size.
  assert.equal(needsOf(["upgrade"], { ...sizes, size: 20e6, sliceSize: 20e6 }), "corpus");
  // A slice smaller than the corpus serves the watch part and the migration: they need nothing
  // of the corpus then, where the capture part still makes the store.
  const sliced = { size: 10e9, upgradeSize: 20e6, sliceSize: 1e9 };
  assert.equal(needsOf(["watch", "migration"], sliced), "nothing");
  assert.equal(needsOf(["watch", "migration"], { ...sliced, sliceSize: 10e9 }), "store");
  assert.equal(needsOf(["capture", "watch"], sliced), "store");
});

Deno.test("slicedParts() names the selected parts that measure on the slice, and what", () => {
  const sliced = slicedParts(["noop", "migration", "capture", "team"]);
  assert.deepEqual(sliced.map((p) => [p.name, p.slice.all]), [
    ["capture", false],
    ["migration", true],
  ]);
  assert.match(sliced[1]!.slice.figures, /migrate_mb_s/);
  assert.deepEqual(slicedParts(["noop", "rg"]), []);
});
