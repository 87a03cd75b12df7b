// A deterministic synthetic Claude Code corpus for tests that need volume (kill -9 at a random
// point, locks held while a capture runs): many sessions of plausible lines.

import { join } from "node:path";

const WORDS = [
  "index",
  "cursor",
  "batch",
  "commit",
  "schema",
  "module",
  "deploy",
  "config",
  "render",
  "parser",
  "socket",
  "buffer",
  "stream",
  "thread",
  "queue",
  "cache",
  "token",
  "router",
  "handler",
  "fixture",
  "migration",
  "release",
  "retry",
  "timeout",
  "payload",
  "session",
];

/** A small seeded generator (mulberry32), so corpora are the same on every run. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sentence(random: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(random() * WORDS.length)]!);
  return out.join(" ");
}

function uuid(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${
    hex.slice(20, 32)
  }`;
}

/**
 * Writes `sessions` Claude Code transcripts of `lines` lines each under `<claudeDir>/projects/`
 * and returns their paths. Each session's first prompt holds the word `marker<N>`.
 */
export function writeClaudeCorpus(
  claudeDir: string,
  options: { sessions: number; lines: number; seed?: number; words?: number },
): string[] {
  const random = rng(options.seed ?? 7);
  const paths: string[] = [];
  for (let s = 0; s < options.sessions; s++) {
    const cwd = `/home/dev/src/project${s % 5}`;
    const dir = join(claudeDir, "projects", cwd.replaceAll("/", "-"));
    Deno.mkdirSync(dir, { recursive: true });
    const sessionId = uuid(random);
    const lines: string[] = [];
    let time = Date.parse("2026-05-01T09:00:00Z") + s * 3_600_000;
    for (let i = 0; i < options.lines; i++) {
      time += 1000;
      const user = i % 2 === 0;
      const text = (i === 0 ? `marker${s} ` : "") + sentence(random, options.words ?? 40);
      lines.push(JSON.stringify({
        parentUuid: null,
        isSidechain: false,
        type: user ? "user" : "assistant",
        sessionId,
        cwd,
        version: "2.1.40",
        gitBranch: "main",
        uuid: uuid(random),
        timestamp: new Date(time).toISOString(),
        message: user
          ? { role: "user", content: text }
          : { id: `msg_${s}_${i}`, role: "assistant", content: [{ type: "text", text }] },
      }));
    }
    const path = join(dir, `${sessionId}.jsonl`);
    Deno.writeTextFileSync(path, lines.join("\n") + "\n");
    paths.push(path);
  }
  return paths;
}
