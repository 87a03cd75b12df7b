// Status's figures, end to end as a person waits for them: the `status` command (spawn to exit),
// each run beside an empty script with its flags (the runtime's own start-up), and the
// dashboard's `/api/status` (a request to a dashboard process already running).

import { Dashboard } from "./_adversarial.ts";
import { commandArgs, commandEnv, runTimed, timeEmptyScript } from "./_measure.ts";
import { taskFlags } from "./_util.ts";

/** The status command's runs and the dashboard's `/api/status` answers, in ms. */
export interface StatusReport {
  cli: number[];
  /** An empty script's runs with status's flags, each beside the command's run of that index. */
  empty: number[];
  api: number[];
}

/**
 * Times `status --json` `runs` times (after one warm-up), each beside an empty script, then
 * `/api/status` of a dashboard.
 */
export async function measureStatus(options: {
  vars: Record<string, string>;
  work: string;
  runs: number;
  log: (message: string) => void;
}): Promise<StatusReport> {
  const { vars, runs, log } = options;
  const env = commandEnv(vars);
  log(`status command ×${runs} (deno run ${taskFlags("status").join(" ")} commands/status.ts)`);
  const flags = taskFlags("status");
  const args = commandArgs(flags, "status.ts", ["--json"]);
  const cli: number[] = [];
  const empty: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const run = await runTimed(Deno.execPath(), args, { env });
    // Exit 1 is a status with problems in it (drift, a stale capture): still a status.
    if (run.code > 1) throw new Error(`status failed (${run.code}): ${run.stderr.trim()}`);
    const floor = await timeEmptyScript(options.work, flags, env);
    if (i > 0) {
      cli.push(run.ms);
      empty.push(floor);
    }
  }
  log("the dashboard's /api/status, a dashboard process on loopback");
  const dashboard = await Dashboard.start(env);
  try {
    const { all } = await dashboard.idleStatus();
    return { cli, empty, api: all };
  } finally {
    await dashboard.stop();
  }
}
