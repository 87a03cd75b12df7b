// The real search worker on a clock that always says `lateMs` after each job's start, as a
// search does that waited that long (the machine busy) before SQLite ranked its matches. Told
// `lateMs` by a first message `{ lateMs }`.

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
  const at = (message.options.startedAt ?? Date.now()) + lateMs;
  try {
    scope.postMessage({
      type: "answer",
      ok: true,
      result: runSearchJob(message, ADAPTERS, () => at),
    });
  } catch (err) {
    scope.postMessage({ type: "answer", ok: false, error: toWire(err) });
  }
};
scope.postMessage({ type: "ready" });
