// The conformance suite: every agent lib/agents.ts pins, installed from npm at that version (or
// the newest, with LOGBOOK_CONFORMANCE_VERSIONS=latest), each driven by `drivers/<agent>.ts` in
// a throw-away home against the local model server; then logbook captures what it wrote and
// must show it byte for byte, find every word, link and title it as the agent did, report no
// drift, and hand back a resume command the agent accepts. Run it with `deno task conformance`
// (not part of `deno task test`: the installs are large). A pinned agent without a driver fails.

import { PINNED } from "./agents.ts";
import type { Installed } from "./_install.ts";
import { chosen, conformance, readyFor, type ReportLine } from "./_harness.ts";
import type { Rig } from "./_rig.ts";

export type { ReportLine };

/** What a driver module exports. */
interface Driver {
  title(version: string): string;
  drive(t: Deno.TestContext, rig: Rig, line: ReportLine): Promise<void>;
}

for (const pin of PINNED) {
  if (!chosen(pin.agent)) continue;
  const ready = readyFor(pin.agent);
  let driver: Driver | null = null;
  try {
    driver = await import(`./drivers/${pin.agent}.ts`) as Driver;
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
  }
  Deno.test({
    name: driver ? driver.title(pin.version) : `${pin.agent} ${pin.version} has a driver`,
    ignore: "reason" in ready,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: (t) => {
      if (!driver) throw new Error(`No driver for "${pin.agent}": write drivers/${pin.agent}.ts`);
      return conformance(t, ready as Installed, driver.drive);
    },
  });
}

// logbook's usage report against ccusage's, on the same Claude Code files.
await import("./usage_agreement.ts");
