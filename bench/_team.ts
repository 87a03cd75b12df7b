// Issue 19's figures: `push_mb_s`, the push command end to end into a local PostgreSQL started
// here (the captured MB of the records that push reports it sent, per second), and
// `team_search_ms`, the p50 of `search --team` end to end (what a person waits for: start-up,
// connecting and the search) once the corpus was pushed from two machines.

import { join } from "node:path";
import type { HistoryStore } from "../lib/store/db.ts";
import { startPostgres } from "../tests/postgres_server.ts";
import { commandArgs, commandEnv, runTimed } from "./_measure.ts";
import { onStop } from "./_stop.ts";
import { quantile, taskFlags } from "./_util.ts";

export interface TeamReport {
  pushMbS: number | null;
  searchP50: number | null;
  notes: string[];
}

/** Pushes the bench store as two machines and searches the team database for `terms`. */
export async function measureTeam(options: {
  store: HistoryStore;
  vars: Record<string, string>;
  work: string;
  terms: string[];
  rounds: number;
  log: (line: string) => void;
}): Promise<TeamReport> {
  const pg = await startPostgres();
  if (typeof pg === "string") {
    return { pushMbS: null, searchP50: null, notes: [`team figures not measured: ${pg}`] };
  }
  const forgetServer = onStop("the PostgreSQL server", () => pg.stop());
  try {
    const projects = (options.store.db.prepare(
      "SELECT DISTINCT project_root AS p FROM conversations WHERE project_root IS NOT NULL",
    ).all() as { p: string }[]).map((r) => r.p);
    const runs: { ms: number; bytes: number }[] = [];
    const configs: string[] = [];
    for (const machine of ["bench-a", "bench-b"]) {
      const config = join(options.work, `team-${machine}`);
      await Deno.mkdir(config, { recursive: true });
      await Deno.writeTextFile(
        join(config, "config.json"),
        JSON.stringify({ team: { url: pg.url, projects, machine } }),
      );
      configs.push(config);
      options.log(`push as ${machine} (${projects.length} projects) to a local PostgreSQL`);
      const run = await runTimed(
        Deno.execPath(),
        commandArgs(taskFlags("push"), "push.ts", ["--json"]),
        { env: commandEnv({ ...options.vars, LOGBOOK_CONFIG_DIR: config }) },
      );
      if (run.code !== 0) throw new Error(`push failed (${run.code}): ${run.stderr.trim()}`);
      runs.push({ ms: run.ms, bytes: JSON.parse(run.stdout.trim().split("\n").at(-1)!).bytes });
    }
    const env = commandEnv({ ...options.vars, LOGBOOK_CONFIG_DIR: configs[0]! });
    const flags = taskFlags("search");
    options.log(`search --team ×${options.terms.length * options.rounds} (the command end to end)`);
    const times: number[] = [];
    let stopped = 0;
    for (let round = 0; round <= options.rounds; round++) {
      for (const query of options.terms) {
        const run = await runTimed(
          Deno.execPath(),
          commandArgs(flags, "search.ts", ["--team", query, "--limit", "20"]),
          { env },
        );
        // Out of its budget (exit 2, "stopped after"): a figure of its own, not a failure.
        const outOfTime = run.code === 2 && /stopped after/.test(run.stderr);
        if (run.code > 1 && !outOfTime) {
          throw new Error(`search --team failed (${run.code}): ${run.stderr}`);
        }
        if (outOfTime) stopped++;
        if (round > 0) times.push(run.ms);
      }
    }
    const first = runs[0]!;
    return {
      pushMbS: first.bytes / 1e6 / (first.ms / 1000),
      searchP50: quantile(times, 0.5),
      notes: [
        `team: pushed ${(first.bytes / 1e6).toFixed(1)} MB of records from each of two machines (${
          runs.map((r) => Math.round(r.ms)).join(" ms, ")
        } ms); team_search_ms over ${times.length} search --team commands` +
        (stopped ? `, ${stopped} of them stopped by the search budget` : ""),
      ],
    };
  } finally {
    forgetServer();
    await pg.stop();
  }
}
