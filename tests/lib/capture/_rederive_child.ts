// A capture deriving stored sources again, a source per transaction, that stops dead inside the
// first transaction after one committed: it says `holding after <sources done>` on stdout and
// waits there until it is killed. Started by rederive_test.ts, which kills it with SIGKILL.

import { passOptions } from "../../../lib/capture/run.ts";
import { rederive } from "../../../lib/capture/rederive.ts";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { envFrom } from "../../../lib/env.ts";

const ctx = loadContext({ env: envFrom(Deno.env.toObject()) });
const store = openStore(ctx);
await rederive({
  ...passOptions(ctx, store, redactorFor(ctx)),
  limits: { rawBudget: 1 },
  onProgress: (p) => {
    if (p.phase !== "rederiving" || p.sourcesDone < 1 || !store.db.isTransaction) return;
    Deno.stdout.writeSync(new TextEncoder().encode(`holding after ${p.sourcesDone}\n`));
    // Inside the transaction, until the test kills this process.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  },
});
