// The real search worker on a clock that says each job began when it was asked and, at every
// later read, `lateMs` after that, as a search whose ranking took that long (the machine busy).
// Told `lateMs` by a first message `{ lateMs }`.

import { runSearchJob, type SearchJob, toWire } from "../../../lib/store/_search_job.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";

interface Scope {
  onmessage: ((event: MessageEvent<SearchJob | { lateMs: number }>) => void) | null;
  postMessage(message: unknown): void;
}

const scope = globalThis as unknown as Scope;
let lateMs = 0;

scope.onmessage = (event) => {
  const message = event.data;
  if ("lateMs" in message) {
    lateMs = message.lateMs;
    return;
  }
  const asked = message.options.startedAt ?? Date.now();
  let reads = 0;
  try {
    scope.postMessage({
      type: "answer",
      ok: true,
      result: runSearchJob(message, ADAPTERS, () => reads++ === 0 ? asked : asked + lateMs),
    });
  } catch (err) {
    scope.postMessage({ type: "answer", ok: false, error: toWire(err) });
  }
};
scope.postMessage({ type: "ready" });
