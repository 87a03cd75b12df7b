// A batched migration measured: the bench's store turned back into what the build before
// migration 0008 wrote, then migrated by the reindex command in a child process. Its speed is
// the store's raw bytes over the time the migration added to a no-op reindex; its peak RSS is
// the child's.

import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { commandArgs, commandEnv, peakRss, runTimed } from "./_measure.ts";
import { formatBytes, median, taskFlags } from "./_util.ts";

export interface MigrationRun {
  /** Raw bytes of the store's records (what the migration reads). */
  rawBytes: number;
  /** The reindex that migrated, and no-op reindexes of the migrated store. */
  ms: number;
  noopMs: number;
  mib: number;
  mbS: number;
  how: string;
}

/** Migrates a copy of `historyDb` (checkpointed) with the reindex command; see the file comment. */
export async function measureMigration(
  vars: Record<string, string>,
  work: string,
  historyDb: string,
  log: (message: string) => void,
): Promise<MigrationRun> {
  const data = join(work, "data-migrate");
  await Deno.remove(data, { recursive: true }).catch(() => {});
  await Deno.mkdir(data, { recursive: true, mode: 0o700 });
  const copy = join(data, "history.db");
  copyFileSync(historyDb, copy);
  Deno.chmodSync(copy, 0o600);
  const db = new DatabaseSync(copy);
  let rawBytes = 0;
  try {
    db.exec(`DELETE FROM migrations WHERE name = '0008_cjk_bigrams';
      DROP TABLE IF EXISTS migration_batches;`);
    rawBytes = Number(
      (db.prepare("SELECT coalesce(sum(length(raw)), 0) AS n FROM records").get() as { n: number })
        .n,
    );
  } finally {
    db.close();
  }
  const env = commandEnv({ ...vars, LOGBOOK_DATA_DIR: data });
  const args = commandArgs(taskFlags("reindex"), "reindex.ts", ["--quiet"]);
  log("migration 0008 of a copy of the store, written as the build before it (reindex)");
  const run = await peakRss(Deno.execPath(), args, env);
  if (run.code !== 0) throw new Error(`The migrating reindex failed: ${run.stderr.slice(-600)}`);
  const noop: number[] = [];
  for (let i = 0; i < 3; i++) noop.push((await runTimed(Deno.execPath(), args, { env })).ms);
  const noopMs = median(noop);
  await Deno.remove(data, { recursive: true }).catch(() => {});
  const migrationMs = Math.max(1, run.ms - noopMs);
  log(
    `migrated ${formatBytes(rawBytes)} of records in ${Math.round(run.ms)} ms (a no-op ` +
      `reindex takes ${Math.round(noopMs)} ms), peak RSS ${Math.round(run.mib)} MiB`,
  );
  return {
    rawBytes,
    ms: run.ms,
    noopMs,
    mib: run.mib,
    mbS: rawBytes / 1e6 / (migrationMs / 1000),
    how: run.how,
  };
}
