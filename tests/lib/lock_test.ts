// Shared locks in `run/`: many holders at once, none named, and a wait for the last to go.

import assert from "node:assert/strict";
import { join } from "node:path";
import { tryLock, tryShared, waitUnheld } from "../../lib/lock.ts";

async function withRunDir(fn: (run: string, root: string) => Promise<void>): Promise<void> {
  const root = await Deno.makeTempDir();
  try {
    await fn(join(root, "run"), root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("shared holders go together, keep a lone holder out, and are waited for until the last lets go", async () => {
  await withRunDir(async (run, root) => {
    const first = tryShared(run, root, "forget");
    const second = tryShared(run, root, "forget");
    assert.ok(first && second, "two shared holders at once");
    const alone = tryLock(run, root, "forget", "scrub");
    assert.ok("holder" in alone, "no lone holder beside them");
    assert.equal(alone.holder, null, "shared holders name no one");

    let waiting = false;
    const unheld = waitUnheld(run, root, "forget", () => waiting = true);
    assert.equal(waiting, true, "it says it waits");
    first.release();
    second.release();
    await unheld;
    const after = tryLock(run, root, "forget", "scrub");
    assert.ok("held" in after, "free once both let go");
    assert.equal(tryShared(run, root, "forget"), null, "no shared holder beside a lone one");
    after.held.release();

    let waited = false;
    await waitUnheld(run, root, "forget", () => waited = true);
    assert.equal(waited, false, "nothing to wait for");
  });
});
