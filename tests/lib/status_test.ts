// Tests for lib/status.ts: the quick check a process that asks often keeps (`QuickChecks`), on a
// real captured store damaged on disk.

import assert from "node:assert/strict";
import { join } from "node:path";
import { QuickChecks } from "../../lib/status.ts";
import { HistoryStore } from "../../lib/store/db.ts";
import { misplaceLeafPage, writeManyWords } from "../_damage.ts";
import { captureWorld, makeWorld, type World } from "../_helpers.ts";

/** A captured store of many words, its files written a while ago; its path. */
async function capturedStore(world: World): Promise<string> {
  writeManyWords(world);
  await captureWorld(world);
  const path = join(world.data, "history.db");
  // Written a while ago: a check of files written in its own millisecond is not kept.
  const past = new Date(Date.now() - 60_000);
  Deno.utimeSync(path, past, past);
  return path;
}

/** The quick check `checks` gives of the store at `path`, opened for it as a status opens it. */
function lookWith(checks: QuickChecks, path: string, root: string) {
  const store = HistoryStore.open({ path, root, readOnly: true });
  try {
    return checks.of(store);
  } finally {
    store.close();
  }
}

Deno.test("QuickChecks keeps a store's quick check while its files stay as they are, and looks again once one is written", async () => {
  const world = await makeWorld();
  try {
    const path = await capturedStore(world);
    const checks = new QuickChecks();
    const look = () => lookWith(checks, path, world.data);
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

Deno.test("QuickChecks of a data dir keeps a sound store's check in its run directory for the next process, never a damaged one", async () => {
  const world = await makeWorld();
  try {
    const path = await capturedStore(world);
    const paths = { root: world.data, run: join(world.data, "run") };
    // A new one each time, as each `status` process makes.
    const look = () => lookWith(new QuickChecks(paths), path, world.data);
    const file = join(paths.run, "quick_check.json");
    assert.equal(look().ok, true);
    assert.equal(Deno.statSync(file).mode! & 0o777, 0o600);
    const saved = JSON.parse(Deno.readTextFileSync(file));
    assert.equal(saved.found.ok, true);

    // What the file says is what the next process answers: it does not check again.
    Deno.writeTextFileSync(
      file,
      JSON.stringify({ ...saved, found: { ...saved.found, ms: 98765 } }),
    );
    assert.equal(look().ms, 98765);

    misplaceLeafPage(path, "fts_idx", 0, 1);
    const damaged = look();
    assert.equal(damaged.ok, false, "the store's files changed since: it is checked again");
    assert.equal(look().ok, false, "damage found is not kept: every status looks again");
    assert.equal(JSON.parse(Deno.readTextFileSync(file)).state, saved.state);

    // A data dir with no run directory is given none by a status.
    Deno.removeSync(paths.run, { recursive: true });
    assert.equal(look().ok, false);
    assert.throws(() => Deno.statSync(paths.run), Deno.errors.NotFound);
  } finally {
    await world.cleanup();
  }
});
