// READERS (what `search` and `show` read records with, without the capture code) are the
// adapters' own text and claims: every stored record of every fixture reads the same through
// either, and each source goes to the reader in its adapter's place.

import assert from "node:assert/strict";
import { redactorFor } from "../../../lib/context.ts";
import { adapterOf } from "../../../lib/sources/adapter.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { READERS } from "../../../lib/agents.ts";
import { type RecordRow, TextDeriver } from "../../../lib/store/records.ts";
import { captureWorld, makeWorld, withStore } from "../../_helpers.ts";

Deno.test("READERS read every stored record of the fixtures as ADAPTERS do", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex", "opencode"] });
  try {
    await captureWorld(world);
    withStore(world, (store, ctx) => {
      assert.deepEqual(READERS.map((r) => r.agent), ADAPTERS.map((a) => a.agent));
      const sources = store.stmt("SELECT id, agent, locator FROM sources").all() as {
        id: number;
        agent: string;
        locator: string;
      }[];
      const places = new Set<number>();
      for (const { agent, locator } of sources) {
        const adapter = adapterOf(ADAPTERS, agent, locator);
        const reader = adapterOf(READERS, agent, locator);
        const place = adapter ? ADAPTERS.indexOf(adapter) : -1;
        assert.equal(reader ? READERS.indexOf(reader) : -1, place, locator);
        places.add(place);
      }
      // Transcripts of all three agents, persisted tool output and prompt history at least.
      assert.ok(places.size >= 5, `sources of ${places.size} adapters`);

      const redact = redactorFor(ctx);
      const byAdapters = new TextDeriver(store, ADAPTERS, redact);
      const byReaders = new TextDeriver(store, READERS, redact);
      const rows = store.stmt("SELECT * FROM records ORDER BY id").all() as unknown as RecordRow[];
      let withText = 0;
      for (const row of rows) {
        const text = byAdapters.textOf(row);
        assert.equal(byReaders.textOf(row), text, `record ${row.id}`);
        assert.equal(byReaders.hasText(row), byAdapters.hasText(row), `record ${row.id}`);
        if (text) withText++;
      }
      assert.ok(withText > 100, `${withText} of ${rows.length} records have text`);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("READERS read a streamed line's text with their adapters' skipped keys and text path", () => {
  ADAPTERS.forEach((adapter, i) => {
    const reader = READERS[i]!;
    if (adapter.mode !== "lines") return;
    assert.deepEqual([...(reader.skipKeys ?? [])], [...adapter.skipKeys], adapter.agent);
    assert.equal(reader.textPath, adapter.textPath, adapter.agent);
  });
});
