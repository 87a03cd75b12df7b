// What `logbook usage session` reports of one agent's captured calls, as the agents' source tests
// compare it: each session's calls and tokens, and the costs the agent recorded.

import { usageReport } from "../../../lib/usage/report.ts";
import { withStore, type World } from "../../_helpers.ts";

/** One session's line of the report. */
export interface SessionUsage {
  calls: number;
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

/** The `session` report of `agent`'s calls: by session key, its calls and tokens. */
export function sessionUsage(world: World, agent: string): Record<string, SessionUsage> {
  return withStore(world, (store) => {
    const report = usageReport(store, { period: "session", timeZone: "UTC", agent });
    return Object.fromEntries(report.lines.map((line) => [line.key, {
      calls: line.calls,
      input: line.input,
      output: line.output,
      cacheWrite: line.cacheWrite,
      cacheRead: line.cacheRead,
    }]));
  });
}

/** The stored calls of `agent`, in capture order: what names each, its model, cost and time. */
export function storedCalls(
  world: World,
  agent: string,
): { call: string | null; model: string | null; cost: number | null; ts: number | null }[] {
  return withStore(
    world,
    (store) =>
      store.stmt("SELECT call, model, cost, ts FROM usage WHERE agent = ? ORDER BY record_id")
        .all(agent).map((row) => ({ ...row })),
  ) as {
    call: string | null;
    model: string | null;
    cost: number | null;
    ts: number | null;
  }[];
}
