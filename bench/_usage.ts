// Usage's figures: `logbook usage daily --json` end to end on the bench's store (spawn to exit),
// each run beside an empty `deno run` with the same flags (what of it is logbook's own), its peak
// RSS, and ccusage 19.0.3 (`ccusage claude daily --json --offline`, the tool people check their spend
// with, which reads the transcripts again on every run) on the same Claude Code files, side by
// side in one run. ccusage is the one the conformance suite installs into its cache; without it
// its figures are null and the report says how to get it.

import { join } from "node:path";
import { commandArgs, commandEnv, peakRss, runTimed } from "./_measure.ts";
import { median, taskFlags } from "./_util.ts";

/** What `usage` and ccusage took. */
export interface UsageReport {
  runs: number[];
  /** An empty `deno run` with usage's flags, each run just after one of `runs`. */
  empty: number[];
  /** usage's peak RSS in MiB, and how it was read. */
  rss: { mib: number; how: string };
  /** ccusage's runs, or null with why in `note`. */
  ccusage: number[] | null;
  note: string | null;
}

const CCUSAGE = "ccusage@19.0.3";

/** Where the conformance suite installed ccusage, if it did. */
export function ccusageDir(): string {
  const xdg = Deno.env.get("XDG_CACHE_HOME");
  const base = xdg || join(Deno.env.get("HOME") ?? "/tmp", ".cache");
  return join(base, "logbook", "conformance", CCUSAGE);
}

/**
 * Times `usage daily --json` `runs` times (after one warm-up), then ccusage's the same way
 * `ccusageRuns` times: it reads every Claude Code file each time.
 */
export async function measureUsage(options: {
  vars: Record<string, string>;
  runs: number;
  ccusageRuns: number;
  log: (message: string) => void;
}): Promise<UsageReport> {
  const { vars, runs, ccusageRuns, log } = options;
  log(
    `usage command: daily --json ×${runs}, then ccusage ×${ccusageRuns} on the same Claude files`,
  );
  const flags = taskFlags("usage");
  const args = commandArgs(flags, "usage.ts", ["daily", "--json", "--tz", "UTC"]);
  const env = commandEnv(vars);
  const timed: number[] = [];
  const empty: number[] = [];
  const nothing = await Deno.makeTempFile({ prefix: "logbook-empty-", suffix: ".ts" });
  try {
    for (let i = 0; i <= runs; i++) {
      const run = await runTimed(Deno.execPath(), args, { env });
      if (run.code !== 0) throw new Error(`usage failed (${run.code}): ${run.stderr.trim()}`);
      const bare = await runTimed(Deno.execPath(), ["run", ...flags, nothing], { env });
      if (i === 0) continue;
      timed.push(run.ms);
      empty.push(bare.ms);
    }
  } finally {
    await Deno.remove(nothing);
  }
  const peak = await peakRss(Deno.execPath(), args, env);
  if (peak.code !== 0) throw new Error(`usage failed (${peak.code}): ${peak.stderr.trim()}`);
  const rss = { mib: peak.mib, how: peak.how };
  const dir = ccusageDir();
  const bin = join(dir, "node_modules", ".bin", "ccusage");
  try {
    Deno.statSync(bin);
  } catch {
    return {
      runs: timed,
      empty,
      rss,
      ccusage: null,
      note: `ccusage is not installed (${dir}): deno task conformance installs it`,
    };
  }
  const ccusageEnv = {
    HOME: vars.HOME ?? "/tmp",
    PATH: `${join(dir, "node_modules", ".bin")}:${Deno.env.get("PATH") ?? ""}`,
    CLAUDE_CONFIG_DIR: vars.CLAUDE_CONFIG_DIR ?? "",
    NO_COLOR: "1",
  };
  const theirs: number[] = [];
  for (let i = 0; i <= ccusageRuns; i++) {
    const run = await runTimed(
      bin,
      ["claude", "daily", "--json", "--offline", "--timezone", "UTC"],
      { env: ccusageEnv },
    );
    if (run.code !== 0) {
      return {
        runs: timed,
        empty,
        rss,
        ccusage: null,
        note: `ccusage failed: ${run.stderr.trim()}`,
      };
    }
    if (i > 0) theirs.push(run.ms);
  }
  return { runs: timed, empty, rss, ccusage: theirs, note: null };
}

/** The report's line. */
export function usageLine(r: UsageReport): string {
  const ms = (runs: number[]) => runs.map((x) => x.toFixed(0)).join(", ");
  const ours = `Usage: logbook usage daily --json --tz UTC, spawn to exit: ${ms(r.runs)} ms ` +
    `(an empty deno run with its flags, each just after: ${ms(r.empty)} ms), ` +
    `peak RSS ${r.rss.mib.toFixed(0)} MiB (${r.rss.how})`;
  if (!r.ccusage) return `${ours}; ${r.note}`;
  const ratio = median(r.ccusage) / median(r.runs);
  return `${ours}; ccusage 19.0.3 claude daily --json --offline on the same Claude files: ` +
    `${ms(r.ccusage)} ms (${ratio.toFixed(1)}× logbook's)`;
}
