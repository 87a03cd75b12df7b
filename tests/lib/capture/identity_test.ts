// A transcript that moves (Codex archives a rollout, or compresses it to .jsonl.zst) keeps its
// source: nothing is captured twice, and what is appended after the move is captured once.

import assert from "node:assert/strict";
import { appendFileSync, renameSync } from "node:fs";
import { basename, join } from "node:path";
import { main as reindex } from "../../../commands/reindex.ts";
import { main as search } from "../../../commands/search.ts";
import { captureIo, makeWorld, manifest, type World } from "../../_helpers.ts";

interface Entry {
  path: string;
  case: string;
  phrases: string[];
}

function codexEntries(): Entry[] {
  return (manifest("codex") as unknown as { files: Entry[] }).files;
}

async function capture(world: World): Promise<{ records: number; generations: unknown[] }> {
  const io = captureIo();
  assert.equal(await reindex(["--json"], io, world.env), 0, io.stderr());
  return JSON.parse(io.stdout());
}

async function hits(world: World, query: string): Promise<number> {
  const io = captureIo();
  return (await search([query, "--json"], io, world.env)) === 0
    ? io.stdout().trim().split("\n").length
    : 0;
}

Deno.test("an archived Codex rollout continues its source instead of being captured again", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    await capture(world);
    const entry = codexEntries().find((e) => e.case === "interrupted")!;
    const from = join(world.codex, entry.path);
    const to = join(world.codex, "archived_sessions", basename(entry.path));
    renameSync(from, to);
    const moved = await capture(world);
    assert.equal(moved.records, 0);
    assert.deepEqual(moved.generations, []);
    assert.equal(await hits(world, `"${entry.phrases[0]}"`), 1);

    appendFileSync(
      to,
      JSON.stringify({
        timestamp: "2026-06-16T12:00:00.000Z",
        type: "event_msg",
        payload: { type: "token_count", info: null },
      }) + "\n",
    );
    assert.equal((await capture(world)).records, 1, "an append after the move is captured once");
  } finally {
    await world.cleanup();
  }
});

Deno.test("a rollout compressed to .jsonl.zst in place is not captured twice", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    const entry = codexEntries().find((e) => e.case === "interrupted")!;
    await capture(world);
    const file = join(world.codex, entry.path);
    const zstd = new Deno.Command("zstd", { args: ["-q", "--rm", file] });
    const result = await zstd.output().catch(() => null);
    if (!result?.success) return; // zstd CLI missing: the adoption is covered by the archive test
    const again = await capture(world);
    assert.equal(again.records, 0);
    assert.equal(await hits(world, `"${entry.phrases[0]}"`), 1);
  } finally {
    await world.cleanup();
  }
});
