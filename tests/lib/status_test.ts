// Tests for lib/status.ts: the quick check a process that asks often keeps (`QuickChecks`), on a
// real captured store damaged on disk.

import assert from "node:assert/strict";
import { join } from "node:path";
import { QuickChecks } from "../../lib/status.ts";
import { HistoryStore } from "../../lib/store/db.ts";
import { misplaceLeafPage, writeManyWords } from "../_damage.ts";
import { captureWorld, makeWorld } from "../_helpers.ts";

Deno.test("QuickChecks keeps a store's quick check while its files stay as they are, and looks again once one is written", async () => {
  const world = await makeWorld();
  try {
    writeManyWords(world);
    await captureWorld(world);
    const path = join(world.data, "history.db");
    // Written a while ago: a check of files written in its own millisecond is not kept.
    const past = new Date(Date.now() - 60_000);
    Deno.utimeSync(path, past, past);
    const checks = new QuickChecks();
    const look = () => {
      const store = HistoryStore.open({ path, root: world.data, readOnly: true });
      try {
        return checks.of(store);
      } finally {
        store.close();
      }
    };
    const first = look();
    assert.equal(first.ok, true);
    assert.equal(look(), first, "the store did not change: the check is not run again");

    misplaceLeafPage(path, "fts_idx", 0, 1);
    const damaged = look();
    assert.equal(damaged.ok, false, "a page written in place since is looked at");
    assert.match(damaged.damaged[0]!.messages.join("\n"), /not in PRIMARY KEY order for fts_idx/);
  } finally {
    await world.cleanup();
  }
});
