// The usage sums of migration 0015 stay equal to the `usage` table summed afresh: as capture adds
// calls, as records are forgotten or revised, through a rebuild, and when a store that held calls
// before the sums is summed by the next capture, in batches that resume where they stopped.

import assert from "node:assert/strict";
import { captureWorld, makeWorld, withStore } from "../../_helpers.ts";
import { loadContext, openStore } from "../../../lib/context.ts";
import type { HistoryStore } from "../../../lib/store/db.ts";
import { HOUR, QUARTER, stepOf, type SumStep, tierOf } from "../../../lib/store/schema.ts";
import { fillUsageQuarters, quartersFillPending } from "../../../lib/usage/quarters_fill.ts";

const SUMS = `count(*) AS calls, sum(input) AS input, sum(output) AS output,
  sum(cache_write) AS cache_write, sum(cache_read) AS cache_read, round(total(cost), 9) AS cost,
  min(ts) AS first_ts, max(ts) AS last_ts`;

/** Each table of sums as it is, and as `usage` summed afresh says it should be. */
function sums(store: HistoryStore): { kept: unknown[]; afresh: unknown[] }[] {
  const tables: [string, string[], SumStep][] = [
    ["usage_quarters", [], QUARTER],
    ["usage_conversation_quarters", ["conversation_id"], QUARTER],
    ["usage_hours", [], HOUR],
  ];
  return tables.map(([table, keys, step]) => {
    const columns = [step.column, ...keys, "agent", "model", "tier"].join(", ");
    const kept = store.db.prepare(
      `SELECT ${columns}, calls, input, output, cache_write, cache_read, round(cost, 9) AS cost,
         first_ts, last_ts FROM ${table} ORDER BY ${columns}`,
    ).all();
    const afresh = store.db.prepare(
      `SELECT ${stepOf("usage", step.ms)} AS ${step.column}, ${
        keys.map((k) => `${k}, `).join("")
      }agent, model, ${tierOf("usage")} AS tier, ${SUMS}
       FROM usage WHERE ts IS NOT NULL GROUP BY ${columns} ORDER BY ${columns}`,
    ).all();
    return { kept, afresh };
  });
}

function assertSummed(store: HistoryStore, why: string): void {
  for (const { kept, afresh } of sums(store)) assert.deepEqual(kept, afresh, why);
}

Deno.test("the usage sums follow the calls as capture adds them and records are forgotten, revised or rebuilt", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex", "opencode"] });
  try {
    await captureWorld(world);
    withStore(world, (store) => {
      const calls = (store.stmt("SELECT count(*) AS n FROM usage").get() as { n: number }).n;
      assert.ok(calls > 10, `calls captured: ${calls}`);
      assert.equal(quartersFillPending(store), false);
      assertSummed(store, "after a capture");
      // A revision takes a call's place (an OpenCode message written again), a call moves to
      // another quarter hour and tier, one loses its time.
      const [a, b, c] = store.stmt("SELECT record_id FROM usage ORDER BY record_id LIMIT 3")
        .all() as { record_id: number }[];
      store.stmt("UPDATE usage SET input = input + 300000, ts = ts + 4000000 WHERE record_id = ?")
        .run(a!.record_id);
      store.stmt("UPDATE usage SET cost = 0.25 WHERE record_id = ?").run(b!.record_id);
      store.stmt("UPDATE usage SET ts = NULL WHERE record_id = ?").run(c!.record_id);
      assertSummed(store, "after calls changed");
      // Forgetting a source's records takes their calls along.
      store.db.exec(
        "DELETE FROM records WHERE source_id IN (SELECT id FROM sources WHERE agent = 'codex')",
      );
      assertSummed(store, "after records were forgotten");
    });
    // The rebuild empties `usage` with its triggers set aside, and makes them again as they were.
    const triggers = (store: HistoryStore) =>
      store.db.prepare(
        "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'usage' ORDER BY name",
      ).all();
    const before = withStore(world, triggers);
    assert.equal(before.length, 9);
    await captureWorld(world, { rebuild: true });
    withStore(world, (store) => {
      assert.deepEqual(triggers(store), before);
      assert.ok((store.stmt("SELECT count(*) AS n FROM usage_quarters").get() as { n: number }).n);
      assertSummed(store, "after a rebuild");
      store.stmt("UPDATE usage SET cost = 0.5 WHERE record_id = (SELECT min(record_id) FROM usage)")
        .run();
      assertSummed(store, "after a call changed since the rebuild");
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a store that held calls before the sums is summed in batches that resume, counting what changes meanwhile once", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex", "opencode"] });
  try {
    await captureWorld(world);
    const store = openStore(loadContext({ env: world.env }));
    try {
      // As migration 0015 leaves a store whose calls were captured before it.
      store.db.exec(`DELETE FROM usage_quarters; DELETE FROM usage_conversation_quarters;
        DELETE FROM usage_hours; INSERT INTO usage_quarters_fill (after) VALUES (0);`);
      // Stopped after its first batch of three calls.
      let asked = 0;
      const once = {
        get aborted() {
          return asked++ > 0;
        },
      } as AbortSignal;
      assert.equal(await fillUsageQuarters(store, once, 3), 3);
      assert.equal(quartersFillPending(store), true);
      const after = (store.stmt("SELECT after FROM usage_quarters_fill").get() as { after: number })
        .after;
      // Meanwhile a call summed already and one not yet are removed, and one is added.
      const ids = (store.stmt("SELECT record_id FROM usage ORDER BY record_id").all() as {
        record_id: number;
      }[]).map((r) => r.record_id);
      store.stmt("DELETE FROM usage WHERE record_id = ?").run(ids[0]!);
      store.stmt("DELETE FROM usage WHERE record_id = ?").run(ids.at(-1)!);
      assert.ok(ids[0]! <= after && ids.at(-1)! > after);
      store.db.exec(`INSERT INTO usage (record_id, conversation_id, agent, call, ts, model, input,
        output, cache_write, cache_read, cost)
        SELECT max(record_id) + 1, NULL, 'claude', 'added', 1764000000000, 'claude-opus-4-5',
          10, 20, 30, 40, NULL FROM usage`);
      await fillUsageQuarters(store, undefined, 3);
      assert.equal(quartersFillPending(store), false);
      assertSummed(store, "after the fill");
      assert.ok(sums(store).every(({ kept }) => kept.length > 0));
    } finally {
      store.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a group is summed again from its calls found by time (usage_ts), in new and upgraded stores alike", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex"] });
  try {
    await captureWorld(world);
    const resums = (store: HistoryStore) =>
      store.db.prepare(
        `SELECT name, sql FROM sqlite_schema WHERE type = 'trigger'
         AND (name LIKE '%\\_remove' ESCAPE '\\' OR name LIKE '%\\_change' ESCAPE '\\')
         AND tbl_name = 'usage' ORDER BY name`,
      ).all() as { name: string; sql: string }[];
    const fresh = withStore(world, resums);
    assert.equal(fresh.length, 6);
    for (const { name, sql } of fresh) {
      // The agent and model filters carry a unary + so no index on them can be taken: the
      // time range is what finds the group's calls.
      assert.match(sql, /\+u\.agent IS old\.agent AND \+u\.model IS old\.model/, name);
      assert.doesNotMatch(sql, /[^+]u\.agent IS/, name);
    }
    // A store from before 0016: its triggers as 0015 first made them, the step not applied.
    withStore(world, (store) => {
      for (const { name, sql } of fresh) {
        store.db.exec(`DROP TRIGGER ${name}`);
        store.db.exec(sql.replaceAll("+u.", "u."));
      }
      store.db.prepare("DELETE FROM migrations WHERE name = '0016_usage_resum_by_time'").run();
    });
    const upgraded = withStore(world, resums);
    assert.deepEqual(upgraded, fresh, "opened by this build, the store has them as a new one");
    // And the sums still follow a call removed.
    withStore(world, (store) => {
      store.db.exec("DELETE FROM usage WHERE record_id = (SELECT max(record_id) FROM usage)");
      for (const { kept, afresh } of sums(store)) assert.deepEqual(kept, afresh);
    });
  } finally {
    await world.cleanup();
  }
});
