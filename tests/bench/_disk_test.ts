// The disk a bench run needs (bench/_disk.ts): what stays for the whole run plus the largest
// part's own files, and what df says is free.

import assert from "node:assert/strict";
import { join } from "node:path";
import { diskPlan, freeBytes, TEAM_RATIO } from "../../bench/_disk.ts";
import { PART_NAMES } from "../../bench/_parts.ts";
import { removeDir, tempDir } from "../_helpers.ts";

const TEN_GB = {
  size: 10e9,
  generatesCorpus: true,
  makesStore: true,
  captureRounds: 1,
  hugeLine: 1024 ** 3,
  upgradeSize: 20e6,
  relevanceSize: 20e6,
  sliceSize: 1e9,
};

Deno.test("diskPlan() adds the corpus, the store and its WAL to the largest part's own files", async (t) => {
  await t.step(
    "every part at 10GB: the 1GB slice stays, a rebuilt copy of the store is the largest",
    () => {
      const plan = diskPlan({ ...TEN_GB, parts: PART_NAMES });
      assert.deepEqual(plan.stays.map((s) => s.bytes), [10e9, 13e9, 256e6, 2.3e9]);
      assert.equal(plan.largest?.what, "rebuild: a rebuilt copy of the store at most");
      assert.equal(plan.largest?.bytes, 13e9);
      assert.equal(plan.needed, 38.556e9);
    },
  );

  await t.step(
    "with no slice smaller than the corpus, two stores side by side are the largest",
    () => {
      const plan = diskPlan({ ...TEN_GB, sliceSize: 10e9, parts: PART_NAMES });
      assert.deepEqual(plan.stays.map((s) => s.bytes), [10e9, 13e9, 256e6]);
      assert.equal(plan.largest?.bytes, 26e9);
      assert.equal(plan.needed, 49.256e9);
    },
  );

  await t.step("the watch part alone at 10GB needs its slice and two of its stores", () => {
    const plan = diskPlan({
      ...TEN_GB,
      makesStore: false,
      generatesCorpus: false,
      parts: ["watch"],
    });
    assert.deepEqual(plan.stays.map((s) => s.bytes), [2.3e9]);
    assert.equal(plan.needed, 2.3e9 + 2.6e9);
  });

  await t.step("the team part counts five machines' pushes, at most 1 GB each, and a WAL", () => {
    const ten = diskPlan({ ...TEN_GB, parts: ["team"] });
    assert.equal(ten.largest?.bytes, TEAM_RATIO * 5e9 + 1e9);
    const one = diskPlan({ ...TEN_GB, size: 1e9, parts: ["team"] });
    assert.equal(one.largest?.bytes, TEAM_RATIO * 5e9 + 1e9);
    const small = diskPlan({ ...TEN_GB, size: 200e6, parts: ["team"] });
    assert.equal(small.largest?.bytes, TEAM_RATIO * 5 * 200e6 + 1e9);
  });

  await t.step("search alone needs the corpus, the store and the slice", () => {
    const plan = diskPlan({ ...TEN_GB, parts: ["search"] });
    assert.equal(plan.largest, null);
    assert.equal(plan.needed, 23.256e9 + 2.3e9);
    const whole = diskPlan({ ...TEN_GB, sliceSize: TEN_GB.size, parts: ["search"] });
    assert.equal(whole.needed, 23.256e9);
  });

  await t.step("a kept corpus is not counted; the huge line alone needs only its own", () => {
    const plan = diskPlan({
      ...TEN_GB,
      generatesCorpus: false,
      makesStore: false,
      parts: ["huge"],
    });
    assert.deepEqual(plan.stays, []);
    assert.equal(plan.needed, Math.ceil(1024 ** 3 * 2.3));
  });

  await t.step("the rss part makes a store of its own only where no part makes the store", () => {
    const alone = diskPlan({ ...TEN_GB, makesStore: false, parts: ["rss"] });
    assert.equal(alone.largest?.what, "rss: a store captured from empty");
    const shared = diskPlan({ ...TEN_GB, parts: ["rss", "search"] });
    assert.equal(shared.largest, null);
  });

  await t.step("more capture rounds make a scratch store each", () => {
    const one = diskPlan({ ...TEN_GB, parts: ["capture"] });
    const three = diskPlan({ ...TEN_GB, captureRounds: 3, parts: ["capture"] });
    assert.equal(three.needed - one.needed, 3e9);
  });
});

Deno.test("freeBytes() reads df for a folder, or the nearest one above a path not made yet", async () => {
  const dir = await tempDir("logbook-bench-disk-");
  try {
    const free = await freeBytes(dir);
    assert.ok(typeof free === "number" && free > 0, String(free));
    const later = await freeBytes(join(dir, "not", "made", "yet"));
    assert.ok(typeof later === "number" && Math.abs(later - free) < 1e9);
  } finally {
    await removeDir(dir);
  }
});
