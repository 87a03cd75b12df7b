// One search as plain data, so it can run on a worker thread: the store to open, the gate to
// redact with, the search's options. `runSearchJob` runs it on whichever thread calls it.

import { createGate, redactorOf } from "../gate/gate.ts";
import type { Redactor } from "../gate/secrets.ts";
import type { TextReader } from "../sources/adapter.ts";
import { READERS } from "../agents.ts";
import { HistoryStore } from "./db.ts";
import {
  type GroupResult,
  search,
  searchGroups,
  type SearchOptions,
  type SearchResult,
} from "./search.ts";

/** A search and what it needs, as plain data. */
export interface SearchJob {
  /** `history.db`, which must exist (the caller checked). */
  path: string;
  /** The data dir. */
  root: string;
  busyTimeoutMs?: number;
  /** The gate's configuration (config's `secrets` and `allowedSecrets`). */
  gate: { labelled: Record<string, string>; allowed: string[] };
  options: SearchOptions;
  /**
   * Group the hits by conversation, keeping this many best hits of each (`searchGroups`); the
   * answer is then a `GroupResult`.
   */
  perGroup?: number;
}

/** What a job answers: a page of hits, or of conversations when it groups them. */
export type JobResult = SearchResult | GroupResult;

/** An error as it crosses between threads: its class name and message. */
export interface WireError {
  name: string;
  message: string;
}

let redactor: { key: string; redact: Redactor } | null = null;

/** Runs `job` on its own connection, opened and closed here; `now` is its budget's clock. */
export function runSearchJob(
  job: SearchJob,
  adapters: readonly TextReader[] = READERS,
  now?: () => number,
): JobResult {
  const key = JSON.stringify(job.gate);
  if (redactor?.key !== key) {
    redactor = { key, redact: redactorOf(createGate(job.gate)) };
  }
  const store = HistoryStore.open({
    path: job.path,
    root: job.root,
    ...(job.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: job.busyTimeoutMs }),
  });
  try {
    return job.perGroup === undefined
      ? search(store, adapters, redactor.redact, job.options, now)
      : searchGroups(
        store,
        adapters,
        redactor.redact,
        { ...job.options, perGroup: job.perGroup },
        now,
      );
  } finally {
    store.close();
  }
}

/** `err` as it crosses back to the thread that asked. */
export function toWire(err: unknown): WireError {
  return err instanceof Error
    ? { name: err.name, message: err.message }
    : { name: "Error", message: String(err) };
}
