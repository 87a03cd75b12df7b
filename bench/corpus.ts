#!/usr/bin/env -S deno run -R -W
// Generates the benchmark corpus: Claude Code, Codex and OpenCode histories of a chosen size,
// laid out where the agents keep them, deterministic from a seed, with planted query terms.
//
//   <out>/claude/projects/<encoded cwd>/<uuid>.jsonl (+ <uuid>/subagents/agent-*.jsonl and
//     <uuid>/tool-results/<id>.txt, persisted large tool outputs)
//   <out>/claude/history.jsonl, <out>/codex/history.jsonl (every typed prompt, and a few of
//     sessions whose transcripts are gone)
//   <out>/codex/sessions/YYYY/MM/DD/rollout-…jsonl (and a few in codex/archived_sessions/)
//   <out>/xdg-data/opencode/opencode.db
//   <out>/manifest.json     sizes, file counts and the planted terms with their frequencies
//
// Capture finds it with CLAUDE_CONFIG_DIR=<out>/claude CODEX_HOME=<out>/codex
// XDG_DATA_HOME=<out>/xdg-data HOME=<an empty dir>.

import { join } from "node:path";
import { parseArgs } from "node:util";
import { writeClaude } from "./_claude.ts";
import { writeCodex } from "./_codex.ts";
import { opencodeDbPath, writeOpencode } from "./_opencode.ts";
import type { AgentPlan, AgentTally, Project } from "./_sink.ts";
import {
  mulberry32,
  type PlantedTerm,
  Planter,
  RESERVED_TERMS,
  TextGen,
  Vocabulary,
} from "./_text.ts";
import { fileSize, formatBytes, parseSize, treeBytes } from "./_util.ts";

/** Shares of the corpus by bytes. */
export const SHARES = { claude: 0.45, codex: 0.35, opencode: 0.2 } as const;
export type CorpusAgent = keyof typeof SHARES;
export const CORPUS_AGENTS: readonly CorpusAgent[] = ["claude", "codex", "opencode"];

export const DEFAULT_SEED = 7;
/**
 * The corpus's shape: a corpus kept from another version is generated again (2: CJK text;
 * 3: planted CJK words and symbols; 4: planted words with a zero-width space inside).
 */
export const CORPUS_VERSION = 4;

export interface CorpusOptions {
  out: string;
  /** Target size in bytes (all three formats together). */
  size: number;
  seed?: number;
  /** Told as each agent's share is done. */
  onProgress?: (message: string) => void;
}

/** What was generated: written to `<out>/manifest.json`. */
export interface CorpusManifest {
  version: typeof CORPUS_VERSION;
  seed: number;
  targetBytes: number;
  /** Bytes on disk per agent (OpenCode: the database file). */
  bytes: Record<CorpusAgent, number>;
  totalBytes: number;
  files: Record<CorpusAgent, number>;
  sessions: Record<CorpusAgent, number>;
  conversations: Record<CorpusAgent, number>;
  /** The conversation with the most records, per agent. */
  longest: Record<CorpusAgent, { id: string; records: number }>;
  /** Persisted tool outputs (Claude Code's `tool-results/` files), per agent. */
  sidecars: Record<CorpusAgent, number>;
  /** Lines of the prompt history files, per agent. */
  historyPrompts: Record<CorpusAgent, number>;
  terms: PlantedTerm[];
  /** Paths relative to the corpus dir. */
  roots: { claude: string; codex: string; xdgData: string; opencodeDb: string };
  generationMs: number;
}

/** The environment under which capture finds the corpus (HOME must be an empty dir). */
export function corpusEnv(out: string, home: string): Record<string, string> {
  return {
    CLAUDE_CONFIG_DIR: join(out, "claude"),
    CODEX_HOME: join(out, "codex"),
    XDG_DATA_HOME: join(out, "xdg-data"),
    HOME: home,
  };
}

/**
 * What a logbook command run against the corpus needs: `corpusEnv` with its own config folder,
 * the home as the task's working folder, and no colour.
 */
export function corpusVars(out: string, home: string, config: string): Record<string, string> {
  return { ...corpusEnv(out, home), LOGBOOK_CONFIG_DIR: config, INIT_CWD: home, NO_COLOR: "1" };
}

/**
 * Generates a corpus into `dir` (empty) as `generateCorpus` does, but in a child process running
 * this file, its progress logged: the generator runs for minutes at size without a pause, which
 * in the bench's process would keep a Ctrl-C from being heard until it ends.
 */
export async function generateInChild(
  dir: string,
  options: { size: number; seed: number; log: (message: string) => void },
): Promise<CorpusManifest> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-R",
      "-W",
      import.meta.filename!,
      "--out",
      dir,
      "--size",
      String(options.size),
      "--seed",
      String(options.seed),
      "--json",
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = new Response(child.stdout).text();
  let rest = "";
  let said = "";
  for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop()!;
    for (const line of lines) options.log(line);
    said = (said + chunk).slice(-600);
  }
  const status = await child.status;
  if (!status.success) throw new Error(`Generating the corpus failed (${status.code}): ${said}`);
  return JSON.parse(await stdout) as CorpusManifest;
}

/**
 * Generates a corpus of about `options.size` bytes into `options.out` (which must not hold one
 * already) and returns its manifest. Deterministic: the same seed and size give the same bytes.
 */
export function generateCorpus(options: CorpusOptions): CorpusManifest {
  const started = performance.now();
  const seed = options.seed ?? DEFAULT_SEED;
  const out = options.out;
  const random = mulberry32(seed);
  const vocabulary = new Vocabulary(seed, RESERVED_TERMS);
  const planter = new Planter(options.size, vocabulary, mulberry32(seed ^ 0x9e3779b9));
  const gen = new TextGen(random, vocabulary, planter);
  const projects = makeProjects(gen, options.size);
  const start = Date.UTC(2025, 8, 1);
  const span = 270 * 24 * 3600 * 1000;
  const tallies = {} as Record<CorpusAgent, AgentTally>;
  for (const agent of CORPUS_AGENTS) {
    const plan: AgentPlan = {
      gen,
      out,
      projects,
      budget: Math.round(options.size * SHARES[agent]),
      start,
      span,
    };
    const t0 = performance.now();
    tallies[agent] = agent === "claude"
      ? writeClaude(plan)
      : agent === "codex"
      ? writeCodex(plan)
      : writeOpencode(plan);
    options.onProgress?.(
      `${agent}: ${tallies[agent].files} files, ${formatBytes(tallies[agent].bytes)} in ${
        Math.round(performance.now() - t0)
      } ms`,
    );
  }
  const dbPath = opencodeDbPath(out);
  const bytes = {
    claude: treeBytes(join(out, "claude")).bytes,
    codex: treeBytes(join(out, "codex")).bytes,
    opencode: fileSize(dbPath) + fileSize(`${dbPath}-wal`),
  };
  const per = <T>(f: (t: AgentTally) => T) =>
    Object.fromEntries(CORPUS_AGENTS.map((a) => [a, f(tallies[a])])) as Record<CorpusAgent, T>;
  const manifest: CorpusManifest = {
    version: CORPUS_VERSION,
    seed,
    targetBytes: options.size,
    bytes,
    totalBytes: bytes.claude + bytes.codex + bytes.opencode,
    files: per((t) => t.files),
    sessions: per((t) => t.sessions),
    conversations: per((t) => t.conversations),
    longest: per((t) => t.longest),
    sidecars: per((t) => t.sidecars),
    historyPrompts: per((t) => t.prompts),
    terms: planter.terms,
    roots: {
      claude: "claude",
      codex: "codex",
      xdgData: "xdg-data",
      opencodeDb: "xdg-data/opencode/opencode.db",
    },
    generationMs: Math.round(performance.now() - started),
  };
  Deno.writeTextFileSync(join(out, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
  return manifest;
}

/** Reads `<out>/manifest.json`, or null when there is none. */
export function readManifest(out: string): CorpusManifest | null {
  try {
    return JSON.parse(Deno.readTextFileSync(join(out, "manifest.json")));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/**
 * The manifest of the corpus kept in `out` when this version generated it for `size` and `seed`,
 * else null.
 */
export function keptCorpus(out: string, size: number, seed: number): CorpusManifest | null {
  const manifest = readManifest(out);
  return manifest && manifest.version === CORPUS_VERSION && manifest.seed === seed &&
      manifest.targetBytes === size
    ? manifest
    : null;
}

function makeProjects(gen: TextGen, size: number): Project[] {
  const count = Math.max(8, Math.min(80, Math.round(size / 4e6)));
  const projects: Project[] = [];
  const seen = new Set<string>();
  while (projects.length < count) {
    const name = gen.chance(0.3) ? `${gen.name()}-${gen.name()}` : gen.name();
    const cwd = gen.chance(0.8) ? `/home/dev/src/${name}` : `/home/dev/work/${gen.name()}/${name}`;
    if (seen.has(cwd)) continue;
    seen.add(cwd);
    const branch = gen.pick([
      "main",
      "main",
      `feat/${gen.name()}-${gen.name()}`,
      `fix/${gen.name()}`,
    ]);
    projects.push({ cwd, branch, repo: `git@github.com:${gen.name()}/${name}.git` });
  }
  return projects;
}

const HELP = `Usage: deno run -R -W bench/corpus.ts --out DIR [--size SIZE] [--seed N] [--json]

Generates the benchmark corpus (Claude Code, Codex and OpenCode, about 45/35/20 by bytes) into
DIR, which must be empty or missing, and writes DIR/manifest.json.

Options:
  --out DIR     where to write the corpus
  --size SIZE   total size, e.g. 2MB, 200MB, 1GiB (default 20MB)
  --seed N      seed (default ${DEFAULT_SEED}); the same seed and size give the same bytes
  --json        print the manifest as JSON
  -h, --help    show this help

Example:
  deno run -R -W bench/corpus.ts --out /tmp/corpus --size 200MB
`;

/** Command-line entry point. */
export function main(args: string[]): number {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        out: { type: "string" },
        size: { type: "string", default: "20MB" },
        seed: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (err) {
    console.error(`error: ${(err as Error).message}\nRun with --help for usage.`);
    return 2;
  }
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  try {
    if (!values.out) throw new RangeError("Missing --out DIR");
    const size = parseSize(values.size);
    const seed = values.seed === undefined ? DEFAULT_SEED : Number(values.seed);
    if (!Number.isInteger(seed)) {
      throw new RangeError(`Expected an integer seed: got "${values.seed}"`);
    }
    Deno.mkdirSync(values.out, { recursive: true });
    if ([...Deno.readDirSync(values.out)].length) {
      throw new RangeError(`The output dir "${values.out}" is not empty`);
    }
    const manifest = generateCorpus({
      out: values.out,
      size,
      seed,
      onProgress: (message) => console.error(message),
    });
    if (values.json) console.log(JSON.stringify(manifest, null, 2));
    else {
      console.log(
        `${formatBytes(manifest.totalBytes)} in ${
          manifest.files.claude + manifest.files.codex + manifest.files.opencode
        } files (${manifest.generationMs} ms): ${values.out}`,
      );
    }
    return 0;
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    console.error(`error: ${err.message}\nRun with --help for usage.`);
    return 2;
  }
}

if (import.meta.main) Deno.exit(main(Deno.args));
