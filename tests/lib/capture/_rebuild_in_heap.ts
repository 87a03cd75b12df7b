// Rebuilds the history store of the environment's data dir with SQLite's heap capped, in a
// process of its own (the cap is process-wide and cannot be lifted). Started by rebuild_test.ts
// with the cap in bytes and the capture limits as JSON; exits 1 with the error on stderr.

import { discoverContext } from "../../../lib/capture/run.ts";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { projectOf } from "../../../lib/paths.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { rebuildDerived } from "../../../lib/capture/rebuild.ts";

const [heap, limits] = Deno.args;
const ctx = loadContext({ env: Deno.env });
const store = openStore(ctx);
try {
  // A small page cache, so the cap measures what the rebuild itself asks of SQLite.
  store.db.exec("PRAGMA cache_size = -2000");
  store.db.exec(`PRAGMA hard_heap_limit = ${Number(heap)}`);
  const records = await rebuildDerived({
    store,
    adapters: ADAPTERS,
    discover: discoverContext(ctx),
    redact: redactorFor(ctx),
    projectOf,
    limits: JSON.parse(limits ?? "{}"),
  });
  console.log(JSON.stringify({ records }));
} catch (err) {
  console.error((err as Error).message);
  Deno.exitCode = 1;
} finally {
  store.close();
}
