// Capture's collections of committed batches' garbage (`lib/capture/_memory.ts`): spaced by the
// source bytes committed, and further apart when a large heap survives them.

import assert from "node:assert/strict";
import { GarbageRelease } from "../../../lib/capture/_memory.ts";

const MiB = 1024 * 1024;

Deno.test("GarbageRelease collects every 8 MiB committed, or every half of the heap that survived", () => {
  let collections = 0;
  let heap = 4 * MiB;
  const release = new GarbageRelease(8 * MiB, () => collections++, () => heap);
  const commit = (mib: number) => {
    for (let i = 0; i < mib; i++) release.committed(MiB);
  };
  commit(7);
  assert.equal(collections, 0);
  commit(1);
  assert.equal(collections, 1, "the first after 8 MiB");
  commit(16);
  assert.equal(collections, 3, "a small heap: every 8 MiB");

  // A pass over 100,000 sources keeps 60 MiB alive: each collection marks all of it.
  heap = 60 * MiB;
  commit(8);
  assert.equal(collections, 4);
  commit(29);
  assert.equal(collections, 4, "the next once 30 MiB more are committed");
  commit(1);
  assert.equal(collections, 5);
  heap = 4 * MiB;
  commit(30);
  assert.equal(collections, 6);
  commit(8);
  assert.equal(collections, 7, "every 8 MiB again once the heap is small");
});

Deno.test("GarbageRelease does nothing where gc is not exposed", () => {
  const release = new GarbageRelease(8 * MiB, undefined, () => {
    throw new Error("not asked");
  });
  for (let i = 0; i < 100; i++) release.committed(MiB);
});
