// What a turn spent in time, split four ways that add up exactly, and how many conversation turns
// a record's spend holds (compaction requests are spent too, but are not turns).

import type { SessionRecord } from "./records.ts";

/** Time measured within one turn, in milliseconds. */
export interface TurnTimes {
  wallMs: number;
  waitingModelMs: number;
  runningToolsMs: number;
  waitingUserMs: number;
}

/**
 * A turn's wall time split four ways in whole milliseconds that add up exactly: waiting on the
 * model, running tools and waiting for the user as measured, and the remainder as `otherMs`.
 */
export function splitWallTime(times: TurnTimes): {
  wallMs: number;
  waitingModelMs: number;
  runningToolsMs: number;
  waitingUserMs: number;
  otherMs: number;
} {
  const part = (n: number) => Math.max(0, Math.round(n));
  const waitingModelMs = part(times.waitingModelMs);
  const runningToolsMs = part(times.runningToolsMs);
  const waitingUserMs = part(times.waitingUserMs);
  const measured = waitingModelMs + runningToolsMs + waitingUserMs;
  // Rounding can make the parts exceed the whole by a millisecond: the whole then grows to fit.
  const wallMs = Math.max(part(times.wallMs), measured);
  return { wallMs, waitingModelMs, runningToolsMs, waitingUserMs, otherMs: wallMs - measured };
}

/**
 * The conversation turns of a record: compaction requests and side questions (`/btw`) are in
 * the spend but are not turns.
 */
export function turnsOf(record: Pick<SessionRecord, "spend">): number {
  return record.spend.turns.filter((t) => isTurn(t.outcome)).length;
}

/** Whether a spend entry with this outcome is a conversation turn. */
export function isTurn(outcome: string): boolean {
  return outcome !== "compaction" && outcome !== "btw" && outcome !== "btw-failed";
}
