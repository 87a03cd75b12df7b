// explainNoMatch() counts what leaving a filter out finds in one bounded pass within its budget:
// a pass that stopped at its bound says "at least", and counts not made in time are left out.

import assert from "node:assert/strict";
import { join } from "node:path";
import { redactorFor } from "../../../lib/context.ts";
import { READERS } from "../../../lib/sources/readers.ts";
import { explainNoMatch, FLAG_REMEDY } from "../../../lib/store/no_match.ts";
import { search, type SearchOptions } from "../../../lib/store/search.ts";
import { claudeTranscript, placeClaudeTranscript } from "../../_claude_transcript.ts";
import { captureWorld, makeWorld, withStore } from "../../_helpers.ts";

Deno.test("explainNoMatch() counts in one bounded pass, and leaves out what it did not count in time", async () => {
  const world = await makeWorld();
  try {
    const project = join(world.dir, "src", "marsh");
    const session = "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    const turns = Array.from(
      { length: 30 },
      (_, i) => [`Dunlin question ${i}`, `Dunlin answer ${i}`] as [string, string],
    );
    await placeClaudeTranscript(world, project, session, claudeTranscript(session, project, turns));
    await captureWorld(world);
    withStore(world, (store, ctx) => {
      const redact = redactorFor(ctx);
      const input = { q: "dunlin", since: "2030-01-01" };
      const options: SearchOptions = { query: "dunlin", since: Date.UTC(2030, 0, 1) };
      const { hits, ftsQuery } = search(store, READERS, redact, options);
      assert.deepEqual(hits, []);
      const why = (budgetMs: number, scan?: number) =>
        explainNoMatch(store, input, options, ftsQuery, redact, FLAG_REMEDY, {
          budgetMs,
          ...(scan ? { scan } : {}),
        });
      const all = why(5000);
      assert.equal(
        all.text,
        'No matches for "dunlin" since 2030-01-01; 60 older matches: drop --since 2030-01-01',
      );
      assert.deepEqual(all.blocking.map((b) => [b.name, b.count, b.atLeast]), [
        ["since", 60, false],
      ]);
      const some = why(5000, 25);
      assert.equal(
        some.text,
        'No matches for "dunlin" since 2030-01-01; at least 25 older matches: drop --since ' +
          "2030-01-01",
      );
      assert.deepEqual(some.blocking.map((b) => [b.name, b.count, b.atLeast]), [
        ["since", 25, true],
      ]);
      const late = why(0);
      assert.equal(late.text, 'No matches for "dunlin" since 2030-01-01');
      assert.deepEqual(late.blocking, []);
    });
  } finally {
    await world.cleanup();
  }
});
