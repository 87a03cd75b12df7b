// A source as the store keeps it (its row in `sources`) and as a pass reads it (the adapter's
// state and what the pass learns on the way), with the state saved beside its cursor.

import type { Adapter, SourceRef } from "../sources/adapter.ts";

/** A row of the `sources` table. */
export interface SourceRow {
  id: number;
  agent: string;
  locator: string;
  format: string;
  generation: number;
  cursor: number;
  dev: number | null;
  ino: number | null;
  size: number | null;
  mtime_ms: number | null;
  head_hash: string | null;
  state: string | null;
  gone: number;
  cursor_key: string | null;
  fingerprint: string | null;
}

/** A source being read: which generation, the adapter's state, and what was seen of it. */
export interface SourceCtx {
  adapter: Adapter;
  ref: SourceRef;
  sourceId: number;
  generation: number;
  /** The hash of the file's head remembered with the source (`<length>:<sha256>`). */
  headHash: string | null;
  state: unknown;
  lastTs: number | null;
  recognised: boolean;
}

/** The per-source state persisted with the cursor: the adapter's, plus the last time seen. */
export interface SavedState {
  a: unknown;
  t: number | null;
}

/** The state saved with a source's cursor, or null when there is none or it cannot be read. */
export function parseSaved(state: string | null): SavedState | null {
  if (!state) return null;
  try {
    return JSON.parse(state) as SavedState;
  } catch {
    return null;
  }
}

/** The state to save with the cursor of the source `ctx` reads, as JSON. */
export function savedState(ctx: SourceCtx): string {
  return JSON.stringify({ a: ctx.state, t: ctx.lastTs } satisfies SavedState);
}
