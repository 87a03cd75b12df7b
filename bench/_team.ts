// Issue 19's figures: `push_mb_s`, the push command end to end into a local PostgreSQL started
// here (raw transcript MB of the pushed records per second), and `team_search_ms`, the p50 of
// team searches over one open connection once the corpus was pushed from two machines.

import { join } from "node:path";
import type { HistoryStore } from "../lib/store/db.ts";
import type { Redactor } from "../lib/gate.ts";
import { connectTeam } from "../lib/team/db.ts";
import { teamSearch } from "../lib/team/search.ts";
import { startPostgres } from "../tests/postgres_server.ts";
import { commandArgs, commandEnv, runTimed } from "./_measure.ts";
import { quantile, taskFlags } from "./_util.ts";

export interface TeamReport {
  pushMbS: number | null;
  searchP50: number | null;
  notes: string[];
}

/** Pushes the bench store as two machines and searches the team database for `terms`. */
export async function measureTeam(options: {
  store: HistoryStore;
  redact: Redactor;
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
  try {
    const projects = (options.store.db.prepare(
      "SELECT DISTINCT project_root AS p FROM conversations WHERE project_root IS NOT NULL",
    ).all() as { p: string }[]).map((r) => r.p);
    const bytes = (options.store.db.prepare(
      "SELECT coalesce(sum(coalesce(length, length(raw))), 0) AS n FROM records " +
        "WHERE (flags & 1) != 0 AND (flags & 8) = 0 AND conversation_id IS NOT NULL",
    ).get() as { n: number }).n;
    const runs: number[] = [];
    for (const machine of ["bench-a", "bench-b"]) {
      const config = join(options.work, `team-${machine}`);
      await Deno.mkdir(config, { recursive: true });
      await Deno.writeTextFile(
        join(config, "config.json"),
        JSON.stringify({ team: { url: pg.url, projects, machine } }),
      );
      options.log(`push as ${machine} (${projects.length} projects) to a local PostgreSQL`);
      const run = await runTimed(Deno.execPath(), commandArgs(taskFlags("push"), "push.ts", []), {
        env: commandEnv({ ...options.vars, LOGBOOK_CONFIG_DIR: config }),
      });
      if (run.code !== 0) throw new Error(`push failed (${run.code}): ${run.stderr.trim()}`);
      runs.push(run.ms);
    }
    const sql = await connectTeam(pg.url);
    const times: number[] = [];
    try {
      for (let round = 0; round <= options.rounds; round++) {
        for (const query of options.terms) {
          const t = performance.now();
          await teamSearch(sql, options.redact, { query, limit: 20 });
          if (round > 0) times.push(performance.now() - t);
        }
      }
    } finally {
      await sql.end({ timeout: 5 });
    }
    return {
      pushMbS: bytes / 1e6 / (runs[0]! / 1000),
      searchP50: quantile(times, 0.5),
      notes: [
        `team: pushed ${(bytes / 1e6).toFixed(1)} MB of records twice (${
          runs.map((ms) => Math.round(ms)).join(" ms, ")
        } ms); team_search_ms over ${times.length} searches`,
      ],
    };
  } finally {
    await pg.stop();
  }
}
