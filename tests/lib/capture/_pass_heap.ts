// Captures the environment's sources in a process of its own, run with `--expose-gc`, and prints
// what the pass holds in the JS heap per source once its work list is made and its first source
// read (after a collection, above the heap as the pass starts). Started by engine_test.ts.

import { runCapture } from "../../../lib/capture/run.ts";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";

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
  console.log(JSON.stringify({ perSource }));
} finally {
  store.close();
}
