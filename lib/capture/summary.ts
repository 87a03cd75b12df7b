// What a pass did, as its caller reports it: counts, new generations, sources gone upstream,
// format drift by agent version, empty sources, unreadable sources and skipped files.

import type { AgentName, Derived } from "../sources/adapter.ts";

/** Drift seen in one run: "codex 0.160.0: 212 lines of unknown type `foo`". */
export interface DriftCount {
  agent: AgentName;
  version: string;
  category: string;
  detail: string;
  count: number;
}

/** What a capture did. */
export interface CaptureSummary {
  sources: number;
  changed: number;
  records: number;
  conversations: number;
  bytes: number;
  ms: number;
  complete: boolean;
  /**
   * Why the pass stopped before the end; "ingest-off" is the capture switch, named as users set
   * it (`LOGBOOK_INGEST`, config `history.ingest`) and as `reindex --json` has always printed it.
   */
  stoppedBy: "deadline" | "signal" | "ingest-off" | null;
  generations: { locator: string; generation: number; reason: string }[];
  gone: number;
  drift: DriftCount[];
  /** Sources that yielded no conversation from a non-empty file. */
  empty: string[];
  errors: { locator: string; message: string }[];
  skipped: Record<string, number>;
  /** How batches were written: on the capture's connection, or by a worker beside it. */
  writer: "inline" | "worker";
}

/** A pass's summary as it grows, with its drift counted by agent, version and kind. */
export class Tally {
  /** The summary so far (the pass moves its counts). */
  readonly summary: CaptureSummary = {
    sources: 0,
    changed: 0,
    records: 0,
    conversations: 0,
    bytes: 0,
    ms: 0,
    complete: true,
    stoppedBy: null,
    generations: [],
    gone: 0,
    drift: [],
    empty: [],
    errors: [],
    skipped: {},
    writer: "inline",
  };
  #drift = new Map<string, DriftCount>();

  /** Counts a stored drift record of `agent` in this run's report. */
  drift(agent: AgentName, d: Derived): void {
    const drift = d.drift!;
    const version = d.version ?? "unknown";
    const key = `${agent}\0${version}\0${drift.category}\0${drift.detail}`;
    const seen = this.#drift.get(key);
    if (seen) seen.count++;
    else {
      this.#drift.set(key, {
        agent,
        version,
        category: drift.category,
        detail: drift.detail,
        count: 1,
      });
    }
  }

  /** The finished summary: the drift counted, the files discovery skipped, the time taken. */
  finish(skipped: Map<string, number>, ms: number): CaptureSummary {
    this.summary.drift = [...this.#drift.values()];
    this.summary.skipped = Object.fromEntries(skipped);
    this.summary.ms = ms;
    return this.summary;
  }
}
