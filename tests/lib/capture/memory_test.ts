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
  commit(1);
  assert.equal(collections, 4, "at once: the heap grew by more than 32 MiB since 4 MiB survived");
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

Deno.test("GarbageRelease collects sooner when the heap grows by half of what survived", () => {
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
  commitAt(91);
  assert.equal(collections, 1, "below 60 + 32 MiB, and 1 of the 30 MiB spacing committed");
  commitAt(92);
  assert.equal(collections, 2, "at 60 + 32 MiB, long before 30 MiB are committed");
  // The collection left 92 MiB alive: the next ceiling is 138 MiB, the spacing 46 MiB.
  commitAt(137);
  assert.equal(collections, 2);
  commitAt(4);
  assert.equal(collections, 2, "a heap that shrank waits for the bytes");
  for (let i = 0; i < 44; i++) release.committed(MiB);
  assert.equal(collections, 3, "46 MiB after the 92 MiB collection");
  // A small heap: the ceiling is at least 32 MiB above what survived.
  commitAt(35);
  assert.equal(collections, 3, "4 MiB survived: the ceiling is 36 MiB");
  commitAt(36);
  assert.equal(collections, 4);
});

Deno.test("GarbageRelease does nothing where gc is not exposed", () => {
  const release = new GarbageRelease(8 * MiB, undefined, () => {
    throw new Error("not asked");
  });
  for (let i = 0; i < 100; i++) release.committed(MiB);
});
