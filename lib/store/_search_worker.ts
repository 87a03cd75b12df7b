// The worker a search runs on, so a long one never holds the dashboard's event loop. Started
// and spoken to only by `SearchWorkers` (`search_workers.ts`): one job at a time, each answered.

import {
  type JobResult,
  runSearchJob,
  type SearchJob,
  toWire,
  type WireError,
} from "./_search_job.ts";
import { loadStemmer } from "./vocab.ts";

/** What the worker says: that it is ready (once, when loaded), then one answer per job. */
export type SearchReply =
  | { type: "ready" }
  | { type: "answer"; ok: true; result: JobResult }
  | { type: "answer"; ok: false; error: WireError };

interface WorkerScope {
  onmessage: ((event: MessageEvent<SearchJob>) => void) | null;
  postMessage(message: SearchReply): void;
}

/** Answers one job (a test's worker wraps this to hold a search in its thread). */
export function answer(job: SearchJob): SearchReply {
  try {
    return { type: "answer", ok: true, result: runSearchJob(job) };
  } catch (err) {
    return { type: "answer", ok: false, error: toWire(err) };
  }
}

const scope = globalThis as unknown as WorkerScope;
scope.onmessage = (event) => scope.postMessage(answer(event.data));
// A dashboard search forgives (`forgive.ts`): word forms need the stemmer, loaded with the worker.
await loadStemmer();
scope.postMessage({ type: "ready" });
