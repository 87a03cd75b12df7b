// The bench's in-process search part (bench/_search.ts) over a small generated corpus, captured by
// the real engine: which searches it times. Shapes, not speeds: this is not a timed test.

import assert from "node:assert/strict";
import { join } from "node:path";
import { measureSearch } from "../../bench/_search.ts";
import { generateCorpus } from "../../bench/corpus.ts";
import { runCapture } from "../../lib/capture/run.ts";
import { openStore, redactorFor } from "../../lib/context.ts";
import { removeDir, tempDir } from "../_helpers.ts";
import { corpusContext } from "./_corpus_context.ts";

Deno.test("the symbols' literal scans run for scanRounds, every indexed term for every round", async () => {
  const dir = await tempDir("logbook-bench-search-");
  try {
    const corpus = join(dir, "corpus");
    const manifest = generateCorpus({ out: corpus, size: 1_000_000, seed: 7 });
    const ctx = corpusContext(dir, corpus);
    const store = openStore(ctx);
    try {
      const redact = redactorFor(ctx);
      assert.equal((await runCapture({ ctx, store, redact })).status, "captured");
      const report = await measureSearch({
        store,
        redact,
        manifest,
        agents: ["claude", "codex", "opencode"],
        rounds: 3,
        scanRounds: 1,
        literal: null,
      });
      const count = (cls: string) => manifest.terms.filter((t) => t.class === cls).length;
      const n = (cls: string, filtered: boolean) =>
        report.byClass.find((c) => c.cls === cls && c.filtered === filtered)!.n;
      assert.ok(count("symbol") > 0 && count("rare") > 0);
      // Five filters beside the search without one; the warm-up round is not timed.
      assert.equal(n("symbol", false), count("symbol"));
      assert.equal(n("symbol", true), count("symbol") * 5);
      assert.equal(n("rare", false), count("rare") * 3);
      assert.equal(n("rare", true), count("rare") * 5 * 3);
      const indexed = manifest.terms.filter((t) => t.class !== "symbol").length;
      assert.equal(report.all.length, indexed * 6 * 3);
    } finally {
      store.close();
    }
  } finally {
    await removeDir(dir);
  }
});
