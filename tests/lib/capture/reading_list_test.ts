// The sources a pass has left to read come in reading order (those an adapter reads after the
// others last, asked at their turn), each once, with the stat they were found with (missing
// numbers kept missing) and their rows' ids; the new ones get theirs in the order found.

import assert from "node:assert/strict";
import type { Found } from "../../../lib/capture/discover.ts";
import { ReadingList, type Work } from "../../../lib/capture/reading_list.ts";
import type { KnownSource } from "../../../lib/capture/source.ts";
import type { Adapter, SourceRef } from "../../../lib/sources/adapter.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";

const claude = ADAPTERS.find((a) => a.agent === "claude" && a.mode === "lines")!;
const codex = ADAPTERS.find((a) => a.agent === "codex")!;

/**
 * A source of `adapter`, read after the others when `last`; `asked` has its locator each time its
 * adapter is asked.
 */
function found(adapter: Adapter, name: string, last = false, asked: string[] = []): Found {
  const ref: SourceRef = {
    agent: adapter.agent,
    locator: `/h/${name}`,
    path: `/h/${name}`,
    format: "jsonl",
  };
  const reads = {
    ...adapter,
    readAfterOthers: (source: SourceRef) => {
      asked.push(source.locator);
      return last;
    },
  } as Adapter;
  return {
    adapter: reads,
    ref,
    stat: { size: name.length, mtimeMs: 1.5e12 + 0.25, dev: 7, ino: null },
  };
}

Deno.test("a pass's sources come in reading order, each once, as they were found", () => {
  const sources = [
    found(claude, "a"),
    found(claude, "copy-b", true),
    found(codex, "cc"),
    found(claude, "copy-ddd", true),
    found(codex, "eeeee"),
  ];
  const rows = new Map<string, KnownSource>([
    ["/h/cc", {
      id: 41,
      locator: "/h/cc",
      cursor: 1,
      dev: 7,
      ino: null,
      size: 1,
      mtime_ms: 0,
      gone: 0,
      fingerprint: null,
    }],
  ]);
  const list = new ReadingList(sources, rows);
  assert.equal(list.length, 5);
  assert.equal(list.unnumbered, 4);
  assert.equal(list.bytesLeft((locator) => rows.get(locator)?.cursor ?? 0), 1 + 6 + 1 + 8 + 5);
  let next = 100;
  const numbered: string[] = [];
  list.number(({ ref }) => {
    numbered.push(ref.locator);
    return next++;
  });
  assert.deepEqual(numbered, ["/h/a", "/h/copy-b", "/h/copy-ddd", "/h/eeeee"]);
  assert.equal(list.unnumbered, 0);
  const taken: Work[] = [];
  for (let work = list.take(); work; work = list.take()) {
    taken.push(work);
    assert.equal(list.length, 5 - taken.length);
  }
  assert.deepEqual(
    taken.map((w) => [w.ref.locator, w.adapter.agent, w.last, w.id]),
    [
      ["/h/a", "claude", false, 100],
      ["/h/cc", "codex", false, 41],
      ["/h/eeeee", "codex", false, 103],
      ["/h/copy-b", "claude", true, 101],
      ["/h/copy-ddd", "claude", true, 102],
    ],
  );
  assert.deepEqual(taken[0]!.stat, { size: 1, mtimeMs: 1.5e12 + 0.25, dev: 7, ino: null });
  assert.equal(taken[0]!.ref, sources[0]!.ref);
  assert.equal(list.take(), undefined);
});

Deno.test("whether a source is read after the others is asked once, at its turn", () => {
  const asked: string[] = [];
  const sources = [
    found(claude, "a", false, asked),
    found(claude, "copy-b", true, asked),
    found(codex, "cc", false, asked),
    found(claude, "copy-ddd", true, asked),
  ];
  const list = new ReadingList(sources, new Map());
  list.number(() => 1);
  assert.equal(list.bytesLeft(() => 0), 1 + 6 + 2 + 8);
  assert.deepEqual(asked, [], "nothing asked before the first source is taken");
  assert.equal(list.take()?.ref.locator, "/h/a");
  assert.deepEqual(asked, ["/h/a"]);
  // The next to read is "cc": "copy-b", asked on the way, waits for the others.
  assert.equal(list.take()?.ref.locator, "/h/cc");
  assert.deepEqual(asked, ["/h/a", "/h/copy-b", "/h/cc"]);
  assert.equal(list.length, 2);
  assert.equal(list.bytesLeft(() => 0), 6 + 8, "a deferred source is still left to read");
  assert.deepEqual([list.take()?.ref.locator, list.take()?.ref.locator], [
    "/h/copy-b",
    "/h/copy-ddd",
  ]);
  assert.deepEqual(asked, ["/h/a", "/h/copy-b", "/h/cc", "/h/copy-ddd"], "each asked once");
  assert.equal(list.take(), undefined);
  assert.equal(list.length, 0);
});

Deno.test("a source that is a folder when its turn comes is given in turn, for its read to report", () => {
  // A file replaced under the pass: the adapters' first look at it (is it made only of summaries?
  // is it a fork?) finds a folder, and its own read then reports that as the source's error.
  const dir = Deno.makeTempDirSync();
  try {
    const session = `${dir}/0a000000-0000-4000-8000-000000000000.jsonl`;
    Deno.mkdirSync(session);
    const qwen = ADAPTERS.find((a) => a.agent === "qwen")!;
    const sources: Found[] = [claude, qwen].map((adapter) => ({
      adapter,
      ref: { agent: adapter.agent, locator: session, path: session, format: "jsonl" },
      stat: { size: 0, mtimeMs: 0, dev: 1, ino: 1 },
    }));
    const list = new ReadingList(sources, new Map());
    const taken = [list.take(), list.take()].map((w) => [w?.adapter.agent, w?.last]);
    assert.deepEqual(taken, [["claude", false], ["qwen", false]]);
    assert.equal(list.take(), undefined);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
