// The text index's scrub, a page a step, that stops dead inside the transaction of its third step
// (a merge begun, nothing committed): it says `holding after 2` on stdout and waits there until it
// is killed. Started by scrub_test.ts, which kills it with SIGKILL.

import { loadContext, openStore } from "../../../lib/context.ts";
import { envFrom } from "../../../lib/env.ts";
import { scrubIndex } from "../../../lib/store/scrub.ts";

const ctx = loadContext({ env: envFrom(Deno.env.toObject()) });
const store = openStore(ctx, { mustExist: true });
scrubIndex(store, {
  pages: 1,
  onStep: (steps) => {
    if (steps < 2) return;
    store.db.exec("BEGIN IMMEDIATE");
    store.db.exec("INSERT INTO fts (fts, rank) VALUES ('merge', -1)");
    Deno.stdout.writeSync(new TextEncoder().encode(`holding after ${steps}\n`));
    // Inside the transaction, until the test kills this process.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  },
});
Deno.stdout.writeSync(new TextEncoder().encode("finished\n"));
