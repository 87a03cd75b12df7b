// Captures the environment's sources in a process of its own, run with `--expose-gc`, and prints
// what the pass holds in the JS heap per source once its work list is made and its first source
// read (after a collection, above the heap as the pass starts), and what status's figures of the
// files (`keepPresentSources`) hold per source as they read the last source's row. Started by
// engine_test.ts.

import { runCapture } from "../../../lib/capture/run.ts";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { keepPresentSources } from "../../../lib/store/present_sources.ts";

const gc = (globalThis as { gc?: () => void }).gc!;
const ctx = loadContext({ env: Deno.env });
const store = openStore(ctx);
try {
  let before: number | null = null;
  let perSource: number | null = null;
  await runCapture({
    ctx,
    store,
    redact: redactorFor(ctx),
    onProgress: (progress) => {
      if (before === null) {
        gc();
        before = Deno.memoryUsage().heapUsed;
      }
      if (perSource !== null || progress.sourcesDone !== 1) return;
      gc();
      perSource = (Deno.memoryUsage().heapUsed - before) / progress.sourcesTotal;
    },
  });
  const sources = (store.stmt("SELECT count(*) AS n FROM sources").get() as { n: number }).n;
  gc();
  const start = Deno.memoryUsage().heapUsed;
  let read = 0;
  let presentPerSource: number | null = null;
  const seen = {
    size: sources,
    get() {
      if (++read === sources) {
        gc();
        presentPerSource = (Deno.memoryUsage().heapUsed - start) / sources;
      }
      return { size: 1, mtimeMs: 1 };
    },
  };
  keepPresentSources(store, seen, Date.now(), { unchanged: false, since: 0 });
  console.log(JSON.stringify({ perSource, presentPerSource }));
} finally {
  store.close();
}
