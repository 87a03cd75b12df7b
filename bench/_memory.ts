// Peak memory figures, each the reindex command in a child process (the in-process captures share
// the bench's own heap): capturing the whole corpus from empty, and capturing then rebuilding a
// store that holds one huge single-line transcript.

import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { commandArgs, commandEnv, peakRss, writeHugeLine } from "./_measure.ts";
import { formatBytes, taskFlags } from "./_util.ts";

/** A child's peak RSS in MiB, its time, and how the peak was read. */
export interface RssRun {
  mib: number;
  ms: number;
  how: string;
}

/** The huge line captured, against an empty capture, and its store rebuilt. */
export interface HugeLineReport {
  bytes: number;
  mib: number | null;
  baselineMib: number | null;
  ms: number;
  how: string;
  captured: number;
  /** `reindex --rebuild` of the store holding it. */
  rebuild: { mib: number; ms: number };
}

/**
 * Peak RSS of the reindex command capturing the whole corpus from empty into a scratch store, as
 * a person's first `reindex` does.
 */
export async function measureCaptureRss(
  vars: Record<string, string>,
  work: string,
  log: (message: string) => void,
): Promise<RssRun> {
  const data = join(work, "data-rss");
  await Deno.remove(data, { recursive: true }).catch(() => {});
  log("capture's peak RSS: reindex from empty in a child process");
  try {
    const run = await peakRss(
      Deno.execPath(),
      commandArgs(taskFlags("reindex"), "reindex.ts", ["--quiet"]),
      commandEnv({ ...vars, LOGBOOK_DATA_DIR: data }),
    );
    if (run.code !== 0) throw new Error(`reindex failed (${run.code}): ${run.stderr.slice(-600)}`);
    return { mib: run.mib, ms: run.ms, how: run.how };
  } finally {
    await Deno.remove(data, { recursive: true }).catch(() => {});
  }
}

/**
 * Peak RSS of the reindex command capturing one huge line of `bytes` (written under
 * `work/huge`), against an empty capture, then of `reindex --rebuild` of the store holding it.
 */
export async function measureHugeLine(options: {
  work: string;
  home: string;
  config: string;
  bytes: number;
  seed: number;
  log: (message: string) => void;
}): Promise<HugeLineReport> {
  const { log } = options;
  const dir = join(options.work, "huge");
  const empty = join(dir, "empty");
  const claude = join(dir, "claude");
  const project = join(claude, "projects", "-home-dev-src-huge");
  await Deno.mkdir(project, { recursive: true });
  await Deno.mkdir(empty, { recursive: true });
  const flags = taskFlags("reindex");
  const envFor = (data: string) =>
    commandEnv({
      HOME: options.home,
      LOGBOOK_DATA_DIR: data,
      LOGBOOK_CONFIG_DIR: options.config,
      CLAUDE_CONFIG_DIR: claude,
      CODEX_HOME: empty,
      XDG_DATA_HOME: empty,
      INIT_CWD: options.home,
    });
  const args = commandArgs(flags, "reindex.ts", ["--quiet"]);
  log("peak RSS of an empty capture (the baseline of a deno process)");
  const baseline = await peakRss(Deno.execPath(), args, envFor(join(dir, "data-empty")));
  const path = join(project, "11111111-2222-4333-8444-555555555555.jsonl");
  log(`writing a ${formatBytes(options.bytes)} single-line transcript`);
  const bytes = await writeHugeLine(path, options.bytes, options.seed);
  log(`capturing it in a child process (deno run ${flags.join(" ")} commands/reindex.ts)`);
  const data = join(dir, "data");
  const run = await peakRss(Deno.execPath(), args, envFor(data));
  if (run.code !== 0) {
    throw new Error(`reindex of the huge line failed (${run.code}): ${run.stderr.slice(-600)}`);
  }
  log("rebuilding its derived data in a child process (reindex --rebuild)");
  const rebuild = await peakRss(
    Deno.execPath(),
    commandArgs(flags, "reindex.ts", ["--quiet", "--rebuild"]),
    envFor(data),
  );
  if (rebuild.code !== 0) {
    throw new Error(
      `rebuild of the huge line failed (${rebuild.code}): ${rebuild.stderr.slice(-600)}`,
    );
  }
  await Deno.remove(path);
  return {
    bytes,
    mib: run.mib,
    baselineMib: baseline.mib,
    ms: run.ms,
    how: run.how,
    captured: rawBytes(join(data, "history.db")),
    rebuild: { mib: rebuild.mib, ms: rebuild.ms },
  };
}

/** The raw bytes a store's records hold. */
function rawBytes(historyDb: string): number {
  const db = new DatabaseSync(historyDb, { readOnly: true });
  try {
    const row = db.prepare("SELECT coalesce(sum(length(raw)), 0) AS n FROM records").get() as {
      n: number;
    };
    return Number(row.n);
  } finally {
    db.close();
  }
}
