// FLAG_INJECTED: capture marks what an agent put into a conversation (Codex's rules, AGENTS.md
// and environment), and migration 0011 marks the same records in a store captured before it.

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { FLAG_INJECTED } from "../../../lib/store/schema.ts";
import { captureWorld, makeWorld, withStore } from "../../_helpers.ts";

interface Marked {
  id: number;
  role: string;
  raw: string;
}

Deno.test("migration 0011 marks, in a store captured before it, what capture marks", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    await captureWorld(world);
    const marked = () =>
      withStore(world, (store) =>
        store.db.prepare(
          `SELECT id, role, CAST(raw AS TEXT) AS raw FROM records
           WHERE (flags & ${FLAG_INJECTED}) != 0 ORDER BY id`,
        ).all() as unknown as Marked[]);
    const captured = marked();
    // The fixtures hold developer rules, AGENTS.md and the environment, in both line shapes.
    assert.ok(captured.some((r) => r.role === "developer"), JSON.stringify(captured));
    assert.ok(captured.some((r) => r.role === "user" && r.raw.includes("# AGENTS.md")));
    assert.ok(captured.some((r) => r.role === "user" && r.raw.startsWith('{"type":"message"')));
    // …and the prompts typed after them are not marked.
    assert.ok(captured.every((r) => !r.raw.includes("The webhook dispatcher hammers")));

    // The store as the build before 0011 left it: no record marked, the step not applied.
    const db = new DatabaseSync(join(world.data, "history.db"));
    try {
      db.exec(`UPDATE records SET flags = flags & ~${FLAG_INJECTED}`);
      db.prepare("DELETE FROM migrations WHERE name = ?").run("0011_injected_flag");
      const left = db.prepare(
        `SELECT count(*) AS n FROM records WHERE (flags & ${FLAG_INJECTED}) != 0`,
      ).get() as { n: number };
      assert.equal(left.n, 0);
    } finally {
      db.close();
    }

    // Opened for writing, the store runs 0011 and marks the same records.
    assert.deepEqual(marked().map((r) => r.id), captured.map((r) => r.id));
  } finally {
    await world.cleanup();
  }
});
