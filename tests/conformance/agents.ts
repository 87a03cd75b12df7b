// The agents the conformance suite runs, pinned (in lib/agents.ts, each agent's `conformance`) to
// the versions it was last checked against. Bump a version only with a reason in the commit (a new
// record type the adapter now knows, say), after `deno task conformance --latest` has run the
// suite against it.

import { AGENT_SPECS, type ConformancePin } from "../../lib/agents.ts";

/** An agent's npm package, the version the suite pins and the program it installs. */
export interface AgentPin extends ConformancePin {
  /** logbook's name for the agent (`claude:`, `codex:`, `opencode:` conversation ids). */
  agent: string;
  companions: readonly string[];
  unavoidable: Readonly<Record<string, string>>;
}

/** The agents the suite runs: every one lib/agents.ts gives a `conformance` pin. */
export const PINNED: readonly AgentPin[] = AGENT_SPECS.flatMap((spec) =>
  spec.conformance === null ? [] : [{
    companions: [],
    unavoidable: {},
    ...spec.conformance,
    agent: spec.name,
  }]
);

/**
 * Agents installed and driven by `deno run -A tests/conformance/explore.ts <agent> <dir>` (which
 * keeps what they wrote) before logbook reads them; none now. Each moves to its registry entry's
 * `conformance` pin (lib/agents.ts) once logbook reads it.
 */
export const COMING: readonly AgentPin[] = [];
