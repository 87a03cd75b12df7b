// The real search worker, holding each job in its thread until the test lets it go, as a long
// search keeps its worker busy. Told where its gate is by a first message `{ hold: buffer }`:
// slot 0 is the gate (0 holds, 1 opens), slot 1 counts the jobs that reached it.

import { answer } from "../../../lib/store/_search_worker.ts";
import type { SearchJob } from "../../../lib/store/_search_job.ts";

interface Scope {
  onmessage: ((event: MessageEvent<SearchJob | { hold: SharedArrayBuffer }>) => void) | null;
  postMessage(message: unknown): void;
}

const scope = globalThis as unknown as Scope;
let gate: Int32Array | null = null;

scope.onmessage = (event) => {
  const message = event.data;
  if ("hold" in message) {
    gate = new Int32Array(message.hold);
    return;
  }
  if (gate) {
    Atomics.add(gate, 1, 1);
    Atomics.notify(gate, 1);
    // Blocks this thread as SQLite would, until the test opens the gate.
    Atomics.wait(gate, 0, 0);
  }
  scope.postMessage(answer(message));
};
