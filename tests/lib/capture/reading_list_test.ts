// The sources a pass has left to read come in reading order (those an adapter reads after the
// others last), each once, with the stat they were found with (missing numbers kept missing) and
// their rows' ids; the new ones get theirs in that order.

import assert from "node:assert/strict";
import type { Found } from "../../../lib/capture/discover.ts";
import { ReadingList, type Work } from "../../../lib/capture/reading_list.ts";
import type { KnownSource } from "../../../lib/capture/source.ts";
import type { Adapter, SourceRef } from "../../../lib/sources/adapter.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";

const claude = ADAPTERS.find((a) => a.agent === "claude" && a.mode === "lines")!;
const codex = ADAPTERS.find((a) => a.agent === "codex")!;

/** A source of `adapter`, read after the others when `last`. */
function found(adapter: Adapter, name: string, last = false): Found {
  const ref: SourceRef = {
    agent: adapter.agent,
    locator: `/h/${name}`,
    path: `/h/${name}`,
    format: "jsonl",
  };
  const reads = { ...adapter, readAfterOthers: () => last } as Adapter;
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
  assert.deepEqual(numbered, ["/h/a", "/h/eeeee", "/h/copy-b", "/h/copy-ddd"]);
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
      ["/h/eeeee", "codex", false, 101],
      ["/h/copy-b", "claude", true, 102],
      ["/h/copy-ddd", "claude", true, 103],
    ],
  );
  assert.deepEqual(taken[0]!.stat, { size: 1, mtimeMs: 1.5e12 + 0.25, dev: 7, ino: null });
  assert.equal(taken[0]!.ref, sources[0]!.ref);
  assert.equal(list.take(), undefined);
});
