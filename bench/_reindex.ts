// Reindex's figures, in-process on the captured store: a no-op reindex (nothing changed), and a
// reindex after 1 MB was appended to one Claude Code transcript.

import { runCapture } from "../lib/capture/run.ts";
import type { Context } from "../lib/context.ts";
import type { Redactor } from "../lib/gate/secrets.ts";
import type { HistoryStore } from "../lib/store/db.ts";
import type { CorpusAgent } from "./corpus.ts";
import { appendClaudeTurns } from "./_claude.ts";
import { mulberry32, Planter, TextGen, Vocabulary } from "./_text.ts";
import { fileSize } from "./_util.ts";

/** Five no-op reindexes: each run's time and the sources the last one saw. */
export interface NoopReport {
  runs: number[];
  sources: number;
  notes: string[];
}

/** Reindexes after appending to files: each run's time, bytes appended and records captured. */
export interface AppendReport {
  runs: number[];
  bytes: number[];
  records: number[];
}

/** Times a reindex with nothing to do, five times. */
export async function measureNoopReindex(
  ctx: Context,
  store: HistoryStore,
  redact: Redactor,
  log: (message: string) => void,
): Promise<NoopReport> {
  log("no-op reindex ×5");
  const notes: string[] = [];
  const runs: number[] = [];
  let sources = 0;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    const again = await runCapture({ ctx, store, redact, command: "bench" });
    runs.push(performance.now() - t);
    if (again.status === "captured") {
      sources = again.summary.sources;
      if (again.summary.records) {
        notes.push(`a no-op reindex captured ${again.summary.records} records`);
      }
    }
  }
  if (sources < 2000) {
    notes.push(`the no-op reindex saw ${sources} sources (the target is for 2,000)`);
  }
  return { runs, sources, notes };
}

/**
 * Appends 1 MB of turns to each of three Claude Code transcripts in turn, timing the reindex
 * after each. Every file appended to is pushed on `restore` with its size before, for the caller
 * to truncate back. Nothing is measured (and a note says so) when no Claude Code transcript was
 * captured.
 */
export async function measureAppendReindex(options: {
  ctx: Context;
  store: HistoryStore;
  redact: Redactor;
  agents: readonly CorpusAgent[];
  seed: number;
  restore: { path: string; size: number }[];
  log: (message: string) => void;
}): Promise<AppendReport & { notes: string[] }> {
  const { ctx, store, redact, restore, log } = options;
  const append = { runs: [] as number[], bytes: [] as number[], records: [] as number[] };
  if (!options.agents.includes("claude")) {
    const note = "append_reindex_ms was not measured: Claude Code transcripts were not captured";
    return { ...append, notes: [note] };
  }
  const targets = appendTargets(store, 3);
  log(`append 1 MB to one file and reindex ×${targets.length}`);
  const vocabulary = new Vocabulary(options.seed + 1, []);
  const random = mulberry32(options.seed + 1);
  const gen = new TextGen(random, vocabulary, new Planter(0, vocabulary, random));
  for (const target of targets) {
    restore.push({ path: target.path, size: fileSize(target.path) });
    append.bytes.push(
      appendClaudeTurns(gen, target.path, target.sessionId, target.cwd, 1_000_000),
    );
    const t = performance.now();
    const after = await runCapture({ ctx, store, redact, command: "bench" });
    append.runs.push(performance.now() - t);
    append.records.push(after.status === "captured" ? after.summary.records : 0);
  }
  return { ...append, notes: [] };
}

/** Main-session Claude transcripts of middling size, spread over the corpus, to append to. */
function appendTargets(
  store: HistoryStore,
  count: number,
): { path: string; sessionId: string; cwd: string }[] {
  const rows = store.db.prepare(
    `SELECT s.locator, c.native_id, c.cwd FROM sources s
     JOIN conversations c ON c.source_id = s.id AND c.subagent = 0
     WHERE s.agent = 'claude' AND s.cursor BETWEEN 20000 AND 2000000 AND c.cwd IS NOT NULL
     ORDER BY s.locator`,
  ).all() as { locator: string; native_id: string; cwd: string }[];
  const picked: { path: string; sessionId: string; cwd: string }[] = [];
  for (let i = 0; i < count && rows.length; i++) {
    const r = rows[Math.floor(((i + 0.5) / count) * rows.length)]!;
    if (picked.some((p) => p.path === r.locator)) continue;
    picked.push({ path: r.locator, sessionId: r.native_id, cwd: r.cwd });
  }
  return picked;
}
