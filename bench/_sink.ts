// What the corpus writers share: a buffered JSONL writer that counts bytes as it goes (streamed,
// never one big string), the plan of one agent's share, and what each writer reports back.

import { dirname } from "node:path";
import type { Planter, TextGen } from "./_text.ts";

const BUFFER_SIZE = 1 << 20;
const encoder = new TextEncoder();

/** Writes lines to a file through a 1 MiB buffer, moving the planter's position as it goes. */
export class JsonlSink {
  readonly path: string;
  bytes = 0;
  lines = 0;
  readonly #file: Deno.FsFile;
  readonly #buffer = new Uint8Array(BUFFER_SIZE);
  readonly #planter: Planter;
  #used = 0;

  constructor(path: string, planter: Planter) {
    this.path = path;
    this.#planter = planter;
    Deno.mkdirSync(dirname(path), { recursive: true });
    this.#file = Deno.openSync(path, { write: true, create: true, truncate: true });
  }

  /** Writes one JSON value as a line. */
  line(value: unknown): void {
    this.text(JSON.stringify(value) + "\n");
    this.lines++;
  }

  /** Writes text as UTF-8. */
  text(text: string): void {
    // encodeInto may stop short; what it did not write goes after a flush.
    let rest = text;
    while (rest.length) {
      const { read, written } = encoder.encodeInto(rest, this.#buffer.subarray(this.#used));
      this.#used += written;
      this.#count(written);
      rest = rest.slice(read);
      if (rest.length) {
        this.flush();
        if (rest.length * 3 > BUFFER_SIZE) {
          const bytes = encoder.encode(rest);
          this.#writeAll(bytes);
          this.#count(bytes.length);
          rest = "";
        }
      }
    }
  }

  flush(): void {
    if (this.#used) this.#writeAll(this.#buffer.subarray(0, this.#used));
    this.#used = 0;
  }

  close(): void {
    this.flush();
    this.#file.close();
  }

  #count(bytes: number): void {
    this.bytes += bytes;
    this.#planter.position += bytes;
  }

  #writeAll(bytes: Uint8Array): void {
    let at = 0;
    while (at < bytes.length) at += this.#file.writeSync(bytes.subarray(at));
  }
}

/** A project the generated sessions run in. */
export interface Project {
  cwd: string;
  branch: string;
  repo: string;
}

/** One agent's share of the corpus. */
export interface AgentPlan {
  gen: TextGen;
  /** The corpus directory (`<out>`). */
  out: string;
  projects: readonly Project[];
  /** Bytes to write for this agent. */
  budget: number;
  /** Sessions start between `start` and `start + span` (epoch ms). */
  start: number;
  span: number;
}

/** What a writer produced. */
export interface AgentTally {
  files: number;
  bytes: number;
  sessions: number;
  /** Conversations including subagents and child sessions. */
  conversations: number;
  /** The largest conversation written, by records. */
  longest: { id: string; records: number };
  /** Tool outputs persisted beside the transcripts (Claude Code's `tool-results/`). */
  sidecars: number;
  /** Lines of the agent's prompt history file. */
  prompts: number;
}

/** An empty tally. */
export function newTally(): AgentTally {
  return {
    files: 0,
    bytes: 0,
    sessions: 0,
    conversations: 0,
    longest: { id: "", records: 0 },
    sidecars: 0,
    prompts: 0,
  };
}

/** A project, most sessions in a few of them (as in reality). */
export function pickProject(plan: AgentPlan): Project {
  const r = plan.gen.random();
  return plan.projects[Math.floor(r * r * plan.projects.length)]!;
}

/** ISO time of epoch ms. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Session sizes: many short sessions, a long tail, and now and then a long working session of
 * megabytes; never more than a tenth of the agent's share.
 */
export function sessionSize(plan: AgentPlan, median: number): number {
  const max = Math.max(40_000, Math.min(8_000_000, plan.budget / 10));
  if (plan.gen.chance(0.006)) return plan.gen.lognormal(1_200_000, 0.7, 300_000, max);
  return plan.gen.lognormal(median, 1.6, Math.min(2_000, max), max);
}

/**
 * How many tool rounds a turn has: exponential, with a mean that grows with the session's size
 * (short sessions are mostly questions and answers, long ones mostly tool work).
 */
export function toolRounds(plan: { gen: TextGen }, sessionTarget: number, cap: number): number {
  const mean = Math.max(0.4, Math.min(3.5, sessionTarget / 12_000));
  return Math.min(cap, Math.floor(-Math.log(1 - plan.gen.random()) * mean));
}
