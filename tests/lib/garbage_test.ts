// Collections of committed batches' garbage, capture's and push's (`lib/garbage.ts`): spaced by
// the bytes committed, and further apart when a large heap survives them.

import assert from "node:assert/strict";
import { GarbageRelease } from "../../lib/garbage.ts";

const MiB = 1024 * 1024;

Deno.test("GarbageRelease collects every 8 MiB committed, or every quarter of the heap that survived", () => {
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
  commit(1);
  assert.equal(collections, 4, "at once: the heap grew by more than 16 MiB since 4 MiB survived");
  commit(14);
  assert.equal(collections, 4, "the next once 15 MiB more are committed");
  commit(1);
  assert.equal(collections, 5);
  heap = 4 * MiB;
  commit(15);
  assert.equal(collections, 6);
  commit(8);
  assert.equal(collections, 7, "every 8 MiB again once the heap is small");
});

Deno.test("GarbageRelease collects sooner when the heap grows by a quarter of what survived", () => {
  let collections = 0;
  let heap = 60 * MiB;
  const release = new GarbageRelease(8 * MiB, () => collections++, () => heap);
  /** Commits 1 MiB with `mib` MiB of heap in use. */
  const commitAt = (mib: number) => {
    heap = mib * MiB;
    release.committed(MiB);
  };
  for (let i = 0; i < 8; i++) release.committed(MiB);
  assert.equal(collections, 1, "the first after 8 MiB; 60 MiB survive it");
  // Reading a database's rows: the heap grows faster than the bytes committed.
  commitAt(75);
  assert.equal(collections, 1, "below 60 + 16 MiB, and 1 of the 15 MiB spacing committed");
  commitAt(76);
  assert.equal(collections, 2, "at 60 + 16 MiB, long before 15 MiB are committed");
  // The collection left 76 MiB alive: the next ceiling is 95 MiB, the spacing 19 MiB.
  commitAt(94);
  assert.equal(collections, 2);
  commitAt(4);
  assert.equal(collections, 2, "a heap that shrank waits for the bytes");
  for (let i = 0; i < 16; i++) release.committed(MiB);
  assert.equal(collections, 2, "18 of the 19 MiB");
  release.committed(MiB);
  assert.equal(collections, 3, "19 MiB after the 76 MiB collection");
  // A small heap: the ceiling is at least 16 MiB above what survived.
  commitAt(19);
  assert.equal(collections, 3, "4 MiB survived: the ceiling is 20 MiB");
  commitAt(20);
  assert.equal(collections, 4);
});

Deno.test("GarbageRelease collects at once when asked, and counts the spacing from there", () => {
  let collections = 0;
  let heap = 40 * MiB;
  const release = new GarbageRelease(8 * MiB, () => collections++, () => heap);
  for (let i = 0; i < 5; i++) release.committed(MiB);
  assert.equal(collections, 0);
  // A large pass's plan is made: what its discovery held is garbage.
  release.collect();
  assert.equal(collections, 1);
  heap = 40 * MiB;
  for (let i = 0; i < 9; i++) release.committed(MiB);
  assert.equal(collections, 1, "40 MiB survived: every 10 MiB, counted from the collection");
  release.committed(MiB);
  assert.equal(collections, 2);
});

Deno.test("GarbageRelease does nothing where gc is not exposed", () => {
  const release = new GarbageRelease(8 * MiB, undefined, () => {
    throw new Error("not asked");
  });
  for (let i = 0; i < 100; i++) release.committed(MiB);
  release.collect();
});

Deno.test("GarbageRelease gives the freed pages back once, 16 MiB into a run, and collects plainly else", () => {
  const calls: unknown[][] = [];
  const release = new GarbageRelease(8 * MiB, (...args: unknown[]) => calls.push(args), () => MiB);
  for (let i = 0; i < 48; i++) release.committed(MiB);
  assert.equal(calls.length, 6, "every 8 MiB");
  // A plain `gc()`: called with `undefined`, V8 collects less.
  assert.deepEqual(calls[0], []);
  assert.deepEqual(calls[1], [{ type: "major", execution: "sync", flavor: "last-resort" }]);
  for (const [i, args] of calls.entries()) {
    if (i !== 1) assert.deepEqual(args, [], `collection ${i}`);
  }
});
