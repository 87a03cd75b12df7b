// The OpenCode database of the benchmark corpus: `opencode.db` with OpenCode 1.x's tables (the
// schema of fixtures/opencode/make_db.ts), sessions, messages and parts (text, reasoning with
// signatures, tools whose output is repeated in their metadata, pasted images, steps) and child
// sessions started by the task tool. Written in WAL mode and checkpointed, as OpenCode leaves it.

import { DatabaseSync, type StatementSync } from "node:sqlite";
import { join } from "node:path";
import { opencodeId } from "../fixtures/opencode/make_db.ts";
import {
  type AgentPlan,
  type AgentTally,
  newTally,
  pickProject,
  type Project,
  sessionSize,
  toolRounds,
} from "./_sink.ts";
import type { TextGen } from "./_text.ts";

// OpenCode 1.x's tables as fixtures/opencode/make_db.ts creates them (the ones a transcript
// reader touches), with their indexes.
const SCHEMA = `
CREATE TABLE \`project\` (
  \`id\` text PRIMARY KEY, \`worktree\` text NOT NULL, \`vcs\` text, \`name\` text,
  \`icon_url\` text, \`icon_url_override\` text, \`icon_color\` text,
  \`time_created\` integer NOT NULL, \`time_updated\` integer NOT NULL,
  \`time_initialized\` integer, \`sandboxes\` text NOT NULL, \`commands\` text
);
CREATE TABLE \`session\` (
  \`id\` text PRIMARY KEY, \`project_id\` text NOT NULL, \`workspace_id\` text, \`parent_id\` text,
  \`slug\` text NOT NULL, \`directory\` text NOT NULL, \`path\` text, \`title\` text NOT NULL,
  \`version\` text NOT NULL, \`share_url\` text, \`summary_additions\` integer,
  \`summary_deletions\` integer, \`summary_files\` integer, \`summary_diffs\` text, \`metadata\` text,
  \`cost\` real DEFAULT 0 NOT NULL, \`tokens_input\` integer DEFAULT 0 NOT NULL,
  \`tokens_output\` integer DEFAULT 0 NOT NULL, \`tokens_reasoning\` integer DEFAULT 0 NOT NULL,
  \`tokens_cache_read\` integer DEFAULT 0 NOT NULL, \`tokens_cache_write\` integer DEFAULT 0 NOT NULL,
  \`revert\` text, \`permission\` text, \`agent\` text, \`model\` text,
  \`time_created\` integer NOT NULL, \`time_updated\` integer NOT NULL, \`time_compacting\` integer,
  \`time_archived\` integer,
  CONSTRAINT \`fk_session_project_id_project_id_fk\` FOREIGN KEY (\`project_id\`) REFERENCES \`project\`(\`id\`) ON DELETE CASCADE
);
CREATE TABLE \`message\` (
  \`id\` text PRIMARY KEY, \`session_id\` text NOT NULL, \`time_created\` integer NOT NULL,
  \`time_updated\` integer NOT NULL, \`data\` text NOT NULL,
  CONSTRAINT \`fk_message_session_id_session_id_fk\` FOREIGN KEY (\`session_id\`) REFERENCES \`session\`(\`id\`) ON DELETE CASCADE
);
CREATE TABLE \`part\` (
  \`id\` text PRIMARY KEY, \`message_id\` text NOT NULL, \`session_id\` text NOT NULL,
  \`time_created\` integer NOT NULL, \`time_updated\` integer NOT NULL, \`data\` text NOT NULL,
  CONSTRAINT \`fk_part_message_id_message_id_fk\` FOREIGN KEY (\`message_id\`) REFERENCES \`message\`(\`id\`) ON DELETE CASCADE
);
CREATE INDEX \`message_session_time_created_id_idx\` ON \`message\` (\`session_id\`,\`time_created\`,\`id\`);
CREATE INDEX \`part_message_id_id_idx\` ON \`part\` (\`message_id\`,\`id\`);
CREATE INDEX \`part_session_idx\` ON \`part\` (\`session_id\`);
CREATE INDEX \`session_project_idx\` ON \`session\` (\`project_id\`);
CREATE INDEX \`session_parent_idx\` ON \`session\` (\`parent_id\`);
`;

const MODELS = [
  { providerID: "anthropic", modelID: "claude-sonnet-4-5" },
  { providerID: "openai", modelID: "gpt-5.5" },
];
const VERSIONS = ["1.14.2", "1.17.4", "1.17.4"];
/** What a row costs beside its `data` (ids, times, page overhead), for the byte budget. */
const ROW_OVERHEAD = 110;

/** The path of the database under the corpus dir, where OpenCode keeps it. */
export function opencodeDbPath(out: string): string {
  return join(out, "xdg-data", "opencode", "opencode.db");
}

/** Writes an OpenCode database until the plan's byte budget (of row data) is spent. */
export function writeOpencode(plan: AgentPlan): AgentTally {
  const { gen } = plan;
  gen.agent = "opencode";
  const path = opencodeDbPath(plan.out);
  Deno.mkdirSync(join(plan.out, "xdg-data", "opencode"), { recursive: true });
  for (const suffix of ["", "-wal", "-shm"]) {
    try {
      Deno.removeSync(path + suffix);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  const db = new DatabaseSync(path);
  const tally = newTally();
  try {
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec(SCHEMA);
    const writer = new Writer(plan, db, tally);
    db.exec("BEGIN");
    while (tally.bytes < plan.budget) {
      const start = Math.round(plan.start + plan.span * (tally.bytes / plan.budget)) +
        gen.int(0, 3_600_000);
      writer.session(pickProject(plan), start, sessionSize(plan, 25_000), null);
      tally.sessions++;
      if (writer.pending > 8_000_000) {
        db.exec("COMMIT");
        db.exec("BEGIN");
        writer.pending = 0;
      }
    }
    // Rare terms the shorter-than-planned corpus did not reach yet: one last prompt holds them.
    const rest = gen.planter.flush("opencode");
    if (rest.length) writer.lastWords(rest.join(" "));
    db.exec("COMMIT");
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  tally.files = 1;
  return tally;
}

class Writer {
  pending = 0;
  readonly #gen: TextGen;
  readonly #tally: AgentTally;
  readonly #projects = new Map<string, string>();
  readonly #insert: Record<"project" | "session" | "message" | "part", StatementSync>;
  #counter = 0;
  #last: { session: string; message: string; clock: number } | null = null;

  constructor(plan: AgentPlan, db: DatabaseSync, tally: AgentTally) {
    this.#gen = plan.gen;
    this.#tally = tally;
    this.#insert = {
      project: db.prepare(
        "INSERT INTO project (id, worktree, vcs, name, time_created, time_updated, " +
          "time_initialized, sandboxes) VALUES (?, ?, 'git', NULL, ?, ?, ?, '[]')",
      ),
      session: db.prepare(
        "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, " +
          "summary_additions, summary_deletions, summary_files, cost, tokens_input, tokens_output, " +
          "permission, agent, model, time_created, time_updated) " +
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      ),
      message: db.prepare(
        "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)",
      ),
      part: db.prepare(
        "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) " +
          "VALUES (?, ?, ?, ?, ?, ?)",
      ),
    };
  }

  #id(prefix: "ses" | "msg" | "prt", ms: number): string {
    const n = ++this.#counter;
    return opencodeId(prefix, ms, n & 0xfff, prefix === "ses", `bench-${n}`);
  }

  #count(bytes: number): void {
    const total = bytes + ROW_OVERHEAD;
    this.#tally.bytes += total;
    this.#gen.planter.position += total;
    this.pending += total;
  }

  #project(project: Project, ms: number): string {
    let id = this.#projects.get(project.cwd);
    if (!id) {
      id = this.#gen.hex(40);
      this.#projects.set(project.cwd, id);
      this.#insert.project.run(id, project.cwd, ms, ms, ms);
      this.#count(project.cwd.length);
    }
    return id;
  }

  /**
   * Writes one session of about `target` bytes. A child session (`sub`) answers its prompt once
   * and returns its report, written without planted terms (the parent's task output repeats it).
   */
  session(
    project: Project,
    clock: number,
    target: number,
    sub: { parent: string; prompt: string } | null,
  ): { id: string; report: string; clock: number } {
    const gen = this.#gen;
    const id = this.#id("ses", clock);
    const model = gen.pick(MODELS);
    const title = sub ? gen.sentence(3, 6) : gen.sentence(3, 9);
    this.#insert.session.run(
      id,
      this.#project(project, clock),
      sub?.parent ?? null,
      `${gen.name()}-${gen.name()}`,
      project.cwd,
      title,
      gen.pick(VERSIONS),
      gen.int(0, 400),
      gen.int(0, 200),
      gen.int(0, 12),
      Math.round(gen.random() * 3e6) / 1e6,
      gen.int(1_000, 900_000),
      gen.int(100, 90_000),
      JSON.stringify([{ permission: "bash", pattern: "git push*", action: "ask" }]),
      sub ? "explore" : "build",
      JSON.stringify({ id: model.modelID, providerID: model.providerID }),
      clock,
      clock,
    );
    this.#count(300 + title.length);
    const state = { session: id, project, model, clock, bytes: 0, records: 0 };
    let report = "";
    if (sub) {
      report = this.#turn(state, sub.prompt, target);
    } else {
      while (state.records === 0 || state.bytes < target) this.#turn(state, null, target);
    }
    this.#tally.conversations++;
    if (state.records > this.#tally.longest.records) {
      this.#tally.longest = { id: `opencode:${id}`, records: state.records };
    }
    return { id, report, clock: state.clock };
  }

  /** One more user message in the last session written, holding `text`. */
  lastWords(text: string): void {
    const last = this.#last;
    if (!last) return;
    const gen = this.#gen;
    const at = last.clock + 1_000;
    const message = this.#id("msg", at);
    this.#row("message", message, last.session, at, at, {
      role: "user",
      time: { created: at },
      agent: "build",
      model: MODELS[0],
    });
    this.#row("part", this.#id("prt", at), last.session, at, at, {
      type: "text",
      text: `${gen.prose(12)} ${text}`,
    }, message);
  }

  #row(
    table: "message" | "part",
    id: string,
    session: string,
    created: number,
    updated: number,
    data: Record<string, unknown>,
    message?: string,
  ): void {
    const json = JSON.stringify(data);
    if (table === "message") this.#insert.message.run(id, session, created, updated, json);
    else this.#insert.part.run(id, message!, session, created, updated, json);
    this.#count(json.length);
  }

  /** Advances the session's clock by `min` to `max` ms, and returns it. */
  #tick(s: { clock: number }, min = 5, max = 6_000): number {
    return (s.clock += this.#gen.int(min, max));
  }

  #turn(s: OpencodeSession, givenPrompt: string | null, target: number): string {
    const before = this.#tally.bytes;
    const user = this.#userMessage(s, givenPrompt);
    let records = user.records;
    const steps = givenPrompt === null ? 1 + toolRounds({ gen: this.#gen }, target, 12) : 60;
    let answer = "";
    for (let step = 0; step < steps; step++) {
      const final = step === steps - 1 ||
        (givenPrompt !== null && s.bytes + (this.#tally.bytes - before) >= target - 3_000);
      const done = this.#step(s, user.id, final, givenPrompt);
      records += done.records;
      if (final) {
        answer = done.answer;
        break;
      }
    }
    s.bytes += this.#tally.bytes - before;
    s.records += records;
    return answer;
  }

  /** A turn's user message: its prompt (given, or made up) and now and then a pasted image. */
  #userMessage(s: OpencodeSession, givenPrompt: string | null): { id: string; records: number } {
    const gen = this.#gen;
    const userAt = this.#tick(s, 1_000, 600_000);
    const user = this.#id("msg", userAt);
    this.#row("message", user, s.session, userAt, userAt, {
      role: "user",
      time: { created: userAt },
      agent: "build",
      model: s.model,
    });
    const prompt = givenPrompt ?? gen.reply(gen.lognormal(30, 0.9, 3, 600), s.project.cwd, 0.12);
    this.#row("part", this.#id("prt", this.#tick(s)), s.session, s.clock, s.clock, {
      type: "text",
      text: prompt,
    }, user);
    let records = 2;
    if (!givenPrompt && gen.chance(0.02)) {
      this.#row("part", this.#id("prt", this.#tick(s)), s.session, s.clock, s.clock, {
        type: "file",
        mime: "image/png",
        filename: "clipboard",
        url: `data:image/png;base64,${gen.base64(gen.lognormal(50_000, 0.7, 8_000, 300_000))}`,
      }, user);
      records++;
    }
    this.#last = { session: s.session, message: user, clock: s.clock };
    return { id: user, records };
  }

  /**
   * One step of the assistant's answer to `user`: its message between a step's start and finish,
   * reasoning now and then, and the answer (`final`) or text and tool calls.
   */
  #step(
    s: OpencodeSession,
    user: string,
    final: boolean,
    givenPrompt: string | null,
  ): { answer: string; records: number } {
    const gen = this.#gen;
    const cwd = s.project.cwd;
    const { message, tokens, cost } = this.#assistantMessage(s, user, final);
    const snapshot = gen.hex(40);
    this.#row("part", this.#id("prt", this.#tick(s)), s.session, s.clock, s.clock, {
      type: "step-start",
      snapshot,
    }, message);
    let records = 3;
    let answer = "";
    if (gen.chance(0.45)) {
      const start = this.#tick(s);
      this.#row("part", this.#id("prt", start), s.session, start, this.#tick(s), {
        type: "reasoning",
        text: gen.prose(gen.lognormal(60, 0.8, 8, 800), cwd),
        metadata: { anthropic: { signature: gen.base64(gen.int(300, 1400) & ~3) } },
        time: { start, end: s.clock },
      }, message);
      records++;
    }
    if (final) {
      const planting = gen.planting;
      if (givenPrompt !== null) gen.planting = false;
      answer = gen.reply(gen.lognormal(80, 0.9, 8, 1500), cwd, 0.25);
      gen.planting = planting;
      const start = this.#tick(s);
      this.#row("part", this.#id("prt", start), s.session, start, this.#tick(s), {
        type: "text",
        text: answer,
        time: { start, end: s.clock },
      }, message);
      records++;
    } else {
      if (gen.chance(0.4)) {
        const start = this.#tick(s);
        this.#row("part", this.#id("prt", start), s.session, start, start, {
          type: "text",
          text: gen.prose(gen.int(6, 40), cwd),
          time: { start, end: start },
        }, message);
        records++;
      }
      for (let i = gen.int(1, 3); i > 0; i--) {
        this.#tool(s, message, givenPrompt === null);
        records++;
      }
    }
    this.#row("part", this.#id("prt", this.#tick(s)), s.session, s.clock, s.clock, {
      reason: final ? "stop" : "tool-calls",
      snapshot,
      type: "step-finish",
      tokens,
      cost,
    }, message);
    return { answer, records };
  }

  /** An assistant message answering `user`, with its tokens and cost. */
  #assistantMessage(
    s: OpencodeSession,
    user: string,
    final: boolean,
  ): { message: string; tokens: Record<string, unknown>; cost: number } {
    const gen = this.#gen;
    const cwd = s.project.cwd;
    const at = this.#tick(s, 500, 4_000);
    const message = this.#id("msg", at);
    const tokens = {
      total: gen.int(1_000, 200_000),
      input: gen.int(100, 20_000),
      output: gen.int(20, 4_000),
      reasoning: gen.int(0, 2_000),
      cache: { write: gen.int(0, 9_000), read: gen.int(0, 150_000) },
    };
    const cost = Math.round(gen.random() * 1e5) / 1e6;
    this.#row("message", message, s.session, at, at + gen.int(1_000, 90_000), {
      parentID: user,
      role: "assistant",
      mode: "build",
      agent: "build",
      path: { cwd, root: cwd },
      cost,
      tokens,
      modelID: s.model.modelID,
      providerID: s.model.providerID,
      time: { created: at, completed: at + gen.int(1_000, 90_000) },
      finish: final ? "stop" : "tool-calls",
    });
    return { message, tokens, cost };
  }

  #tool(
    s: { session: string; project: Project; clock: number },
    message: string,
    mayDelegate: boolean,
  ): void {
    const gen = this.#gen;
    const cwd = s.project.cwd;
    const start = (s.clock += gen.int(5, 500));
    const end = (s.clock += gen.int(50, 30_000));
    const callID = `toolu_01${gen.hex(22)}`;
    const r = gen.random();
    const { tool, input, output, metadata, title } = r < 0.35
      ? this.#bash(cwd)
      : r < 0.7
      ? this.#read(cwd)
      : r < 0.85
      ? this.#edit(cwd)
      : r < 0.95 || !mayDelegate
      ? this.#grep(cwd)
      : this.#task(s, start);
    this.#row("part", this.#id("prt", start), s.session, start, end, {
      type: "tool",
      tool,
      callID,
      state: { status: "completed", input, output, metadata, title, time: { start, end } },
    }, message);
  }

  #bash(cwd: string): ToolUse {
    const gen = this.#gen;
    const description = gen.sentence(3, 8);
    const input = {
      command: `${gen.pick(["bun test", "go test ./...", "npm run build"])} ${gen.name()}`,
      description,
    };
    const output = gen.commandOutput(gen.lognormal(25, 1.5, 1, 6_000), cwd);
    const metadata = { output, exit: gen.chance(0.85) ? 0 : 1, description, truncated: false };
    return { tool: "bash", input, output, metadata, title: description };
  }

  #read(cwd: string): ToolUse {
    const gen = this.#gen;
    const path = gen.path(cwd);
    const { numbered } = gen.fileLines(gen.lognormal(70, 1.2, 3, 2_000), "pipe");
    return {
      tool: "read",
      input: { filePath: path },
      output: `<file>\n${numbered}</file>`,
      metadata: { preview: numbered.slice(0, 120), truncated: false },
      title: path.slice(cwd.length + 1),
    };
  }

  #edit(cwd: string): ToolUse {
    const gen = this.#gen;
    const path = gen.path(cwd);
    const input = {
      filePath: path,
      oldString: gen.code(gen.lognormal(6, 0.8, 1, 100)),
      newString: gen.code(gen.lognormal(8, 0.8, 1, 140)),
    };
    // The diff lives in metadata, which adapters need not index: no planted terms there.
    const planting = gen.planting;
    gen.planting = false;
    const metadata = { diff: gen.patch(path, gen.lognormal(12, 0.8, 2, 200)), filediff: null };
    gen.planting = planting;
    return {
      tool: "edit",
      input,
      output: "Edit applied successfully.",
      metadata,
      title: path.slice(cwd.length + 1),
    };
  }

  #grep(cwd: string): ToolUse {
    const gen = this.#gen;
    const pattern = gen.ident();
    return {
      tool: "grep",
      input: { pattern, path: cwd },
      output: gen.commandOutput(gen.lognormal(12, 1.2, 1, 600), cwd),
      metadata: { matches: gen.int(1, 90), truncated: false },
      title: pattern,
    };
  }

  /** A subagent's task: its whole session written first, its report the tool's output. */
  #task(s: { session: string; project: Project; clock: number }, start: number): ToolUse {
    const gen = this.#gen;
    const planting = gen.planting;
    gen.planting = false;
    const prompt = gen.prose(gen.int(30, 100), s.project.cwd);
    gen.planting = planting;
    const child = this.session(
      s.project,
      start + 50,
      gen.lognormal(18_000, 1.0, 4_000, 250_000),
      { parent: s.session, prompt },
    );
    s.clock = Math.max(s.clock, child.clock);
    const title = gen.sentence(3, 6);
    return {
      tool: "task",
      input: { description: title, prompt, subagent_type: "explore" },
      output: `task_id: ${child.id} (for resuming to continue this task if needed)\n\n` +
        `<task_result>\n${child.report}\n</task_result>`,
      metadata: { sessionId: child.id, truncated: false },
      title,
    };
  }
}

/** A tool call as OpenCode stores it in a part's state. */
interface ToolUse {
  tool: string;
  input: Record<string, unknown>;
  output: string;
  metadata: Record<string, unknown>;
  title: string;
}

/** What a session being written keeps between its turns. */
interface OpencodeSession {
  session: string;
  project: Project;
  model: { providerID: string; modelID: string };
  clock: number;
  bytes: number;
  records: number;
}
