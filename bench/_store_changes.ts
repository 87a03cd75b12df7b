// The figures of commands that change the store, run on the bench's store once every other part
// has read it: `reindex --rebuild` (the text index and conversations derived again from the raw
// records) and `forget` of the longest conversation, each end to end in a child process.

import type { HistoryStore } from "../lib/store/db.ts";
import { commandArgs, commandEnv, peakRss, runTimed } from "./_measure.ts";
import { taskFlags } from "./_util.ts";

/** `reindex --rebuild` of the store: spawn to exit, and the child's peak RSS. */
export interface RebuildReport {
  ms: number;
  mib: number;
  how: string;
  records: number;
}

/** `forget` of one conversation: which, how many records it held, spawn to exit. */
export interface ForgetReport {
  conversation: string;
  records: number;
  ms: number;
  /**
   * From forget's start until `forget --finish` returned: until the text index, merged by the
   * process forget left running, held nothing of the conversation (lib/store/scrub.ts).
   */
  scrubMs: number;
}

/** Rebuilds the store of `vars` with the reindex command, once, measuring its peak memory. */
export async function measureRebuild(options: {
  store: HistoryStore;
  vars: Record<string, string>;
  log: (message: string) => void;
}): Promise<RebuildReport> {
  const records = Number(
    (options.store.db.prepare("SELECT count(*) AS n FROM records").get() as { n: number }).n,
  );
  const flags = taskFlags("reindex");
  options.log(`reindex --rebuild of the store (${records} records)`);
  const run = await peakRss(
    Deno.execPath(),
    commandArgs(flags, "reindex.ts", ["--rebuild", "--quiet"]),
    commandEnv(options.vars),
  );
  if (run.code !== 0) {
    throw new Error(`reindex --rebuild failed (${run.code}): ${run.stderr.slice(-600)}`);
  }
  return { ms: run.ms, mib: run.mib, how: run.how, records };
}

/**
 * Forgets the longest conversation of the store (`forget <id> --yes`), once: it is gone after,
 * so this runs last.
 */
export async function measureForget(options: {
  store: HistoryStore;
  vars: Record<string, string>;
  log: (message: string) => void;
}): Promise<ForgetReport> {
  const longest = options.store.db.prepare(
    "SELECT key, record_count FROM conversations ORDER BY record_count DESC, id LIMIT 1",
  ).get() as { key: string; record_count: number } | undefined;
  if (!longest) throw new Error("The store holds no conversation to forget");
  options.log(`forget ${longest.key} (${longest.record_count} records)`);
  const run = await runTimed(
    Deno.execPath(),
    commandArgs(taskFlags("forget"), "forget.ts", [longest.key, "--yes", "--json"]),
    { env: commandEnv(options.vars) },
  );
  if (run.code !== 0) throw new Error(`forget failed (${run.code}): ${run.stderr.trim()}`);
  options.log("forget --finish (waits for the text index's scrub forget started)");
  const finish = await runTimed(
    Deno.execPath(),
    commandArgs(taskFlags("forget"), "forget.ts", ["--finish"]),
    { env: commandEnv(options.vars) },
  );
  if (finish.code !== 0) {
    throw new Error(`forget --finish failed (${finish.code}): ${finish.stderr.trim()}`);
  }
  return {
    conversation: longest.key,
    records: longest.record_count,
    ms: run.ms,
    scrubMs: run.ms + finish.ms,
  };
}
