// A pass keeps only the sources whose files changed since they were read, and still tells every
// file it found (what `status` shows of them) as it is on disk.

import assert from "node:assert/strict";
import { appendFileSync } from "node:fs";
import type { SeenFiles } from "../../../lib/capture/discover.ts";
import { loadContext, openStore } from "../../../lib/context.ts";
import { makeWorld, runPass } from "../../_helpers.ts";

Deno.test("a pass tells every file it found as it is on disk, read again or not", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex"] });
  const ctx = loadContext({ env: world.env });
  const store = openStore(ctx);
  try {
    await runPass(store, ctx);
    const files = store.stmt(
      "SELECT locator FROM sources WHERE format = 'jsonl' ORDER BY id",
    ).all() as { locator: string }[];
    assert.ok(files.length > 2, "sources were captured");
    const asOnDisk = (path: string) => {
      const stat = Deno.lstatSync(path);
      return { size: stat.size, mtimeMs: stat.mtime!.getTime() };
    };
    const asSeen = (seen: SeenFiles, path: string) => {
      const file = seen.get(path);
      return file && { size: file.size, mtimeMs: file.mtimeMs };
    };

    let seen: SeenFiles | undefined;
    const idle = await runPass(store, ctx, { onFound: (found) => (seen = found) });
    assert.equal(idle.changed, 0);
    assert.equal(seen!.size, idle.sources);
    for (const { locator } of files) assert.deepEqual(asSeen(seen!, locator), asOnDisk(locator));
    assert.equal(seen!.get(`${files[0]!.locator}.not-there`), undefined);

    const grown = files[1]!.locator;
    appendFileSync(grown, "\n");
    const next = await runPass(store, ctx, { onFound: (found) => (seen = found) });
    assert.equal(next.changed, 1);
    for (const { locator } of files) assert.deepEqual(asSeen(seen!, locator), asOnDisk(locator));
  } finally {
    store.close();
    await world.cleanup();
  }
});
