// The team store's figures (issues 19 and 36): `push_mb_s`, the push command end to end into a
// local PostgreSQL started here (the captured MB of the records push reports it sent, per second,
// over every push), and `team_search_p50_ms`/`team_search_p95_ms`, `search --team` end to end
// (what a person waits for: start-up, connecting and the search) once the bench's corpus was
// pushed by MACHINES machines: the store pushed under that many machine names, each pushing the
// store's projects up to MACHINE_BYTES of records, so the team database holds what a team of
// that size would after each pushed a history of the corpus's size, and at most the "5 GB pushed
// by 5 machines" of issue 36 (from about 1.5 GB of corpus, each machine pushes its own share of
// the projects). The server is a throw-away cluster in a temp dir, removed after.

import { join } from "node:path";
import type { HistoryStore } from "../lib/store/db.ts";
import { FLAG_INDEXED, FLAG_SUPERSEDED } from "../lib/store/schema.ts";
import { startPostgres } from "../tests/postgres_server.ts";
import { commandArgs, commandEnv, runTimed } from "./_measure.ts";
import { onStop } from "./_stop.ts";
import { quantile, taskFlags } from "./_util.ts";

/** How many machines push the corpus: the "5 GB pushed by 5 machines" of issue 36. */
export const MACHINES = 5;
/** The captured bytes of records one machine pushes at most (about: it takes whole projects). */
export const MACHINE_BYTES = 1e9;

/** A project of the bench's store and the captured bytes of its records a push sends. */
export interface ProjectBytes {
  root: string;
  bytes: number;
}

/**
 * The projects each of `machines` machines pushes: all of them while they hold at most `cap`
 * bytes; else each machine the next projects in turn, as many as stay within `cap` (at least
 * one), going round again when the store has fewer than the machines take, so no machine sends
 * the same project twice and each sends about `cap`.
 */
export function machineShares(
  projects: readonly ProjectBytes[],
  machines: number,
  cap: number,
): string[][] {
  const shares: string[][] = [];
  let at = 0;
  for (let m = 0; m < machines; m++) {
    const share: string[] = [];
    let bytes = 0;
    while (share.length < projects.length) {
      const next = projects[at % projects.length]!;
      if (share.length && bytes + next.bytes > cap) break;
      share.push(next.root);
      bytes += next.bytes;
      at++;
    }
    shares.push(share);
  }
  return shares;
}

/**
 * Whether a search command stopped for its budget (exit 2, "was stopped": after its time, or
 * before it began when start-up took most of it on a busy machine): a figure of its own, not a
 * failure.
 */
export function outOfBudget(run: { code: number; stderr: string }): boolean {
  return run.code === 2 && /\bwas stopped\b/.test(run.stderr);
}

/** The store's projects and the bytes a push of each sends (its records' captured bytes). */
function projectBytes(store: HistoryStore): ProjectBytes[] {
  return store.db.prepare(
    `SELECT c.project_root AS root, coalesce(sum(coalesce(r.length, length(r.raw))), 0) AS bytes
     FROM conversations c JOIN records r ON r.conversation_id = c.id
     WHERE c.project_root IS NOT NULL AND (r.flags & ${FLAG_INDEXED}) != 0
       AND (r.flags & ${FLAG_SUPERSEDED}) = 0
     GROUP BY c.project_root ORDER BY min(c.id)`,
  ).all() as unknown as ProjectBytes[];
}

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
    const show = async (setting: string) =>
      (await pg.run("psql", ["-d", "team", "-At", "-c", `SHOW ${setting}`])).stdout.trim();
    const version = await show("server_version");
    // What a search reads from the server's memory rather than the system's, for the figures.
    const buffers = await show("shared_buffers");
    const shares = machineShares(projectBytes(options.store), machines, MACHINE_BYTES);
    const runs: { ms: number; bytes: number }[] = [];
    const configs: string[] = [];
    for (let i = 1; i <= machines; i++) {
      const machine = `bench-${i}`;
      const projects = shares[i - 1]!;
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
    options.log("VACUUM ANALYZE of the team database, as autovacuum keeps it");
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
        const outOfTime = outOfBudget(run);
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
        `team: PostgreSQL ${version}, shared_buffers ${buffers}; ${machines} machines pushed ${
          runs.map((r) => mb(r.bytes)).join(", ")
        } MB of records (${mb(bytes)} MB in all) at ${
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
