// The team store's figures (issues 19 and 36): `push_mb_s`, the push command end to end into a
// local PostgreSQL started here (the captured MB of the records push reports it sent, per second,
// over every push), and `team_search_p50_ms`/`team_search_p95_ms`, `search --team` end to end
// (what a person waits for: start-up, connecting and the search) once the bench's corpus was
// pushed by MACHINES machines: the same store pushed under that many machine names, so the team
// database holds MACHINES times the corpus, as a team of that size would after each pushed a
// history of the corpus's size. The server is a throw-away cluster in a temp dir, removed after.

import { join } from "node:path";
import type { HistoryStore } from "../lib/store/db.ts";
import { startPostgres } from "../tests/postgres_server.ts";
import { commandArgs, commandEnv, runTimed } from "./_measure.ts";
import { onStop } from "./_stop.ts";
import { quantile, taskFlags } from "./_util.ts";

/** How many machines push the corpus: the "5 GB pushed by 5 machines" of issue 36 at 1 GB. */
export const MACHINES = 5;

export interface TeamReport {
  pushMbS: number | null;
  searchP50: number | null;
  searchP95: number | null;
  notes: string[];
}

/** Pushes the bench store as MACHINES machines and searches the team database for `terms`. */
export async function measureTeam(options: {
  store: HistoryStore;
  vars: Record<string, string>;
  work: string;
  terms: string[];
  rounds: number;
  log: (line: string) => void;
  machines?: number;
}): Promise<TeamReport> {
  const none = { pushMbS: null, searchP50: null, searchP95: null };
  const pg = await startPostgres();
  if (typeof pg === "string") return { ...none, notes: [`team figures not measured: ${pg}`] };
  const machines = options.machines ?? MACHINES;
  const forgetServer = onStop("the PostgreSQL server", () => pg.stop());
  try {
    const version = (await pg.run("psql", ["-d", "team", "-At", "-c", "SHOW server_version"]))
      .stdout.trim();
    const projects = (options.store.db.prepare(
      "SELECT DISTINCT project_root AS p FROM conversations WHERE project_root IS NOT NULL",
    ).all() as { p: string }[]).map((r) => r.p);
    const runs: { ms: number; bytes: number }[] = [];
    const configs: string[] = [];
    for (let i = 1; i <= machines; i++) {
      const machine = `bench-${i}`;
      const config = join(options.work, `team-${machine}`);
      await Deno.mkdir(config, { recursive: true });
      await Deno.writeTextFile(
        join(config, "config.json"),
        JSON.stringify({ team: { url: pg.url, projects, machine } }),
      );
      configs.push(config);
      options.log(
        `push as ${machine} (${i} of ${machines}, ${projects.length} projects) to PostgreSQL ${version}`,
      );
      const run = await runTimed(
        Deno.execPath(),
        commandArgs(taskFlags("push"), "push.ts", ["--json"]),
        { env: commandEnv({ ...options.vars, LOGBOOK_CONFIG_DIR: config }) },
      );
      if (run.code !== 0) throw new Error(`push failed (${run.code}): ${run.stderr.trim()}`);
      runs.push({ ms: run.ms, bytes: JSON.parse(run.stdout.trim().split("\n").at(-1)!).bytes });
    }
    // What a team that pushed a while ago has: statistics for the planner, as autovacuum keeps.
    await pg.run("psql", ["-d", "team", "-qc", "VACUUM ANALYZE"]);
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
        if (round === 0) continue;
        if (outOfTime) stopped++;
        times.push(run.ms);
      }
    }
    const bytes = runs.reduce((sum, r) => sum + r.bytes, 0);
    const ms = runs.reduce((sum, r) => sum + r.ms, 0);
    const mb = (n: number) => (n / 1e6).toFixed(1);
    return {
      pushMbS: bytes / 1e6 / (ms / 1000),
      searchP50: quantile(times, 0.5),
      searchP95: quantile(times, 0.95),
      notes: [
        `team: PostgreSQL ${version}; ${machines} machines pushed ${mb(runs[0]!.bytes)} MB of ` +
        `records each (${mb(bytes)} MB in all) at ${
          runs.map((r) => (r.bytes / 1e6 / (r.ms / 1000)).toFixed(1)).join(", ")
        } MB/s; team_search over ${times.length} search --team commands` +
        (stopped ? `, ${stopped} of them stopped by the search budget` : ""),
      ],
    };
  } finally {
    forgetServer();
    await pg.stop();
  }
}
