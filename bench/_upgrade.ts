// The upgrade from the previous release, measured. The previous release's code (the commit
// PREVIOUS_RELEASE) is exported from this repository's Git history into the work dir (`git
// archive`: the repository itself is left as it is), its reindex command captures the corpus,
// and this build's reindex command then opens that store and upgrades it (its migrations, and
// every source derived again). A fresh capture of the same corpus by this build is the
// reference: for each term, planted and common, the hits of both stores are counted, and the
// terms whose counts differ are the figure (target 0). The store as the previous release left it
// is counted too (read by this build before it upgrades it): what an upgrade that derived nothing
// again would answer.

import { join } from "node:path";
import { loadContext, redactorFor } from "../lib/context.ts";
import { envFrom } from "../lib/env.ts";
import { HistoryStore } from "../lib/store/db.ts";
import { ADAPTERS } from "../lib/sources/mod.ts";
import type { Redactor } from "../lib/gate/secrets.ts";
import { search } from "../lib/store/search.ts";
import { type CorpusManifest, corpusVars, generateCorpus, keptCorpus } from "./corpus.ts";
import {
  check,
  commandArgs,
  commandEnv,
  commitUnavailable,
  exportCommit,
  runTimed,
} from "./_measure.ts";
import { formatBytes, taskFlags } from "./_util.ts";

/** The last release before this build: the store it writes is what an upgrade starts from. */
export const PREVIOUS_RELEASE = "fc6e04f";

/** Words every conversation about code holds, searched besides the planted terms. */
const COMMON_WORDS = [
  "the",
  "error",
  "file",
  "function",
  "test",
  "migration",
  "cache",
  "token",
  "config",
  "install",
];

/** What the upgrade did, and how its store answers against a fresh capture's. */
export interface UpgradeRun {
  release: string;
  /** Source bytes of the corpus. */
  bytes: number;
  /** The previous release's reindex capturing the corpus from empty, ms. */
  previousMs: number;
  /** This build's reindex upgrading that store (migrations, sources derived again), ms. */
  upgradeMs: number;
  /** This build's reindex capturing the corpus from empty, ms. */
  freshMs: number;
  /** Sources this build derived again. */
  rederived: number;
  /** Each term's hits: in the previous release's store as it left it, upgraded, and fresh. */
  terms: { term: string; previous: number; upgraded: number; fresh: number }[];
  /** Terms whose hits differ between the upgraded store and the fresh one. */
  differing: number;
  /** Terms whose hits differed before the upgrade (the store as the previous release left it). */
  differingBefore: number;
}

/** Why the previous release cannot be had here (no git, or a history without it), or null. */
export function upgradeUnavailable(): Promise<string | null> {
  return commitUnavailable(PREVIOUS_RELEASE, "the previous release");
}

/**
 * The upgrade on a corpus of `size` (0 skips it): the bench's own (`corpus`, in `corpusDir`) when
 * the sizes match, else one generated (or kept) beside it in `work`. Null, with a note, when it is
 * skipped or the previous release cannot be had here.
 */
export async function measureUpgradeOf(options: {
  size: number;
  seed: number;
  work: string;
  home: string;
  config: string;
  corpusDir: string;
  /** The bench's corpus, or null when the run generated none. */
  corpus: CorpusManifest | null;
  log: (message: string) => void;
}): Promise<{ run: UpgradeRun | null; notes: string[] }> {
  const { size, seed, work, log } = options;
  if (size === 0) {
    return {
      run: null,
      notes: ["the upgrade from the previous release was not measured (--upgrade-size 0)"],
    };
  }
  const unavailable = await upgradeUnavailable();
  if (unavailable) {
    return {
      run: null,
      notes: [`the upgrade from the previous release was not measured: ${unavailable}`],
    };
  }
  let dir = options.corpusDir;
  let manifest: CorpusManifest;
  if (options.corpus && size === options.corpus.targetBytes) manifest = options.corpus;
  else {
    dir = join(work, "corpus-upgrade");
    const kept = keptCorpus(dir, size, seed);
    if (kept) manifest = kept;
    else {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await Deno.mkdir(dir, { recursive: true });
      log(`generating a ${formatBytes(size)} corpus for the upgrade in ${dir}`);
      manifest = generateCorpus({ out: dir, size, seed });
    }
  }
  const vars = corpusVars(dir, options.home, options.config);
  const redact = redactorFor(loadContext({ env: envFrom(vars) }));
  const run = await measureUpgrade({ vars, work, manifest, redact, log });
  log(
    `upgrade: ${run.rederived} sources derived again in ${Math.round(run.upgradeMs)} ms; ` +
      `${run.differing} of ${run.terms.length} terms answer otherwise than a fresh capture`,
  );
  return { run, notes: [] };
}

/**
 * Captures the corpus that `vars` point at with the previous release, upgrades that store with
 * this build and compares it with a fresh capture; see the file comment. `vars` must not set
 * `LOGBOOK_DATA_DIR`: the stores go under `work`, and are removed after.
 */
export async function measureUpgrade(options: {
  vars: Record<string, string>;
  work: string;
  manifest: CorpusManifest;
  redact: Redactor;
  log: (message: string) => void;
}): Promise<UpgradeRun> {
  const { vars, work, manifest, log } = options;
  const dir = join(work, "upgrade");
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  const previous = join(dir, "previous");
  await Deno.mkdir(previous, { recursive: true });
  try {
    log(`the previous release (${PREVIOUS_RELEASE}), exported with git archive`);
    await exportCommit(PREVIOUS_RELEASE, previous);

    const upgraded = join(dir, "data-upgraded");
    log(`the previous release's reindex captures the corpus`);
    const before = await check(
      runTimed(
        Deno.execPath(),
        [
          "run",
          ...taskFlags("reindex", previous),
          join(previous, "commands", "reindex.ts"),
          "--quiet",
        ],
        { env: commandEnv({ ...vars, LOGBOOK_DATA_DIR: upgraded }), cwd: previous },
      ),
      "the previous release's reindex",
    );
    const terms = [
      ...manifest.terms.map((t) => (t.class === "phrase" ? `"${t.term}"` : t.term)),
      ...COMMON_WORDS,
    ];
    const previousHits = hitCounts(upgraded, terms, options.redact);
    log("this build's reindex upgrades that store");
    const reindex = commandArgs(taskFlags("reindex"), "reindex.ts", ["--json"]);
    const upgrade = await check(
      runTimed(Deno.execPath(), reindex, {
        env: commandEnv({ ...vars, LOGBOOK_DATA_DIR: upgraded }),
      }),
      "the upgrading reindex",
    );
    const rederived = Number(JSON.parse(upgrade.stdout.trim().split("\n").at(-1)!).rederived);
    const fresh = join(dir, "data-fresh");
    log("this build's reindex captures the corpus from empty");
    const capture = await check(
      runTimed(Deno.execPath(), reindex, { env: commandEnv({ ...vars, LOGBOOK_DATA_DIR: fresh }) }),
      "the fresh reindex",
    );

    log(`hits of ${terms.length} terms, upgraded against fresh`);
    const upgradedHits = hitCounts(upgraded, terms, options.redact);
    const freshHits = hitCounts(fresh, terms, options.redact);
    const compared = terms.map((term, i) => ({
      term,
      previous: previousHits[i]!,
      upgraded: upgradedHits[i]!,
      fresh: freshHits[i]!,
    }));
    return {
      release: PREVIOUS_RELEASE,
      bytes: manifest.totalBytes,
      previousMs: before.ms,
      upgradeMs: upgrade.ms,
      freshMs: capture.ms,
      rederived,
      terms: compared,
      differing: compared.filter((t) => t.upgraded !== t.fresh).length,
      differingBefore: compared.filter((t) => t.previous !== t.fresh).length,
    };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/**
 * How many records each term finds in the store in `data`: the search's count of its whole
 * answer (a line over 64 KiB counted once per matching chunk, the same in every store), or, for a
 * literal scan, which counts nothing, its hits.
 */
function hitCounts(data: string, terms: string[], redact: Redactor): number[] {
  const store = HistoryStore.open({ path: join(data, "history.db"), root: data, readOnly: true });
  const count = (query: string, limit: number) =>
    search(store, ADAPTERS, redact, { query, limit, budgetMs: 600_000 });
  try {
    return terms.map((query) => count(query, 1).total ?? count(query, 10_000).hits.length);
  } finally {
    store.close();
  }
}
