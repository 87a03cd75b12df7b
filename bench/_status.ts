// Status's figures, end to end as a person waits for them: the `status` command (spawn to exit)
// and the dashboard's `/api/status` (a request to a dashboard process already running).

import { Dashboard } from "./_adversarial.ts";
import { commandArgs, commandEnv, runTimed } from "./_measure.ts";
import { taskFlags } from "./_util.ts";

/** The status command's runs and the dashboard's `/api/status` answers, in ms. */
export interface StatusReport {
  cli: number[];
  api: number[];
}

/** Times `status --json` `runs` times (after one warm-up), then `/api/status` of a dashboard. */
export async function measureStatus(options: {
  vars: Record<string, string>;
  runs: number;
  log: (message: string) => void;
}): Promise<StatusReport> {
  const { vars, runs, log } = options;
  const env = commandEnv(vars);
  log(`status command ×${runs} (deno run ${taskFlags("status").join(" ")} commands/status.ts)`);
  const args = commandArgs(taskFlags("status"), "status.ts", ["--json"]);
  const cli: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const run = await runTimed(Deno.execPath(), args, { env });
    // Exit 1 is a status with problems in it (drift, a stale capture): still a status.
    if (run.code > 1) throw new Error(`status failed (${run.code}): ${run.stderr.trim()}`);
    if (i > 0) cli.push(run.ms);
  }
  log("the dashboard's /api/status, a dashboard process on loopback");
  const dashboard = await Dashboard.start(env);
  try {
    const { all } = await dashboard.idleStatus();
    return { cli, api: all };
  } finally {
    await dashboard.stop();
  }
}
