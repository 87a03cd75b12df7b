// Codex rollouts for the benchmark corpus, shaped like fixtures/codex: `session_meta` with the long
// base instructions, a `turn_context` per turn, every message and reasoning summary repeated as an
// `event_msg`, command output repeated in `exec_command_end`, encrypted reasoning, patches,
// compactions, and subagent rollouts pointing at their parent thread.

import { join } from "node:path";
import {
  type AgentPlan,
  type AgentTally,
  iso,
  JsonlSink,
  newTally,
  pickProject,
  type Project,
  sessionSize,
  toolRounds,
} from "./_sink.ts";
import type { TextGen } from "./_text.ts";

const VERSIONS = ["0.128.0", "0.141.2", "0.150.0", "0.150.0"];
const SHELLS = ["cargo test", "go test ./...", "npm test", "pytest -q", "rg -n", "sed -n 1,200p"];

/** Writes Codex rollouts until the plan's byte budget is spent. */
export function writeCodex(plan: AgentPlan): AgentTally {
  const { gen } = plan;
  gen.agent = "codex";
  const tally = newTally();
  // Every prompt typed in a session, and a few of sessions whose rollouts are gone.
  const history = new JsonlSink(join(plan.out, "codex", "history.jsonl"), gen.planter);

  // The same long instructions open every rollout of a version, as in reality.
  const planting = gen.planting;
  gen.planting = false;
  const instructions =
    `You are Codex, a coding agent running in a terminal on the user's machine. ${
      gen.prose(1_700)
    }`;
  gen.planting = planting;
  while (tally.bytes + history.bytes < plan.budget) {
    const start = Math.round(plan.start + plan.span * (tally.bytes / plan.budget)) +
      gen.int(0, 3_600_000);
    const rollout = new Rollout(plan, tally, instructions, pickProject(plan), start, history);
    rollout.write(sessionSize(plan, 10_000), null);
    tally.sessions++;
  }
  for (let i = Math.ceil(tally.sessions / 10); i > 0; i--) {
    let clock = Math.round(plan.start + gen.random() * plan.span);
    const sessionId = gen.uuid7(clock);
    const cwd = pickProject(plan).cwd;
    for (let n = gen.int(1, 3); n > 0; n--) {
      clock += gen.int(20_000, 600_000);
      history.line({
        session_id: sessionId,
        ts: Math.floor(clock / 1000),
        text: gen.reply(gen.lognormal(30, 0.9, 3, 600), cwd, 0.12),
      });
    }
  }
  history.close();
  tally.files++;
  tally.bytes += history.bytes;
  tally.prompts = history.lines;
  return tally;
}

/** One rollout file. */
class Rollout {
  readonly #plan: AgentPlan;
  readonly #gen: TextGen;
  readonly #tally: AgentTally;
  readonly #instructions: string;
  readonly #project: Project;
  readonly #version: string;
  #clock: number;
  #sink: JsonlSink | null = null;
  /** `codex/history.jsonl`: every prompt typed in a session gets a line. */
  readonly #history: JsonlSink;
  #id = "";

  constructor(
    plan: AgentPlan,
    tally: AgentTally,
    instructions: string,
    project: Project,
    clock: number,
    history: JsonlSink,
  ) {
    this.#history = history;
    this.#plan = plan;
    this.#gen = plan.gen;
    this.#tally = tally;
    this.#instructions = instructions;
    this.#project = project;
    this.#version = plan.gen.pick(VERSIONS);
    this.#clock = clock;
  }

  /** Writes the rollout until about `target` bytes; a subagent answers `sub.prompt` once. */
  write(target: number, sub: { parent: string; prompt: string } | null): string {
    const gen = this.#gen;
    const id = gen.uuid7(this.#clock);
    this.#id = id;
    const d = new Date(this.#clock);
    const pad = (n: number) => String(n).padStart(2, "0");
    const [y, m, day] = [d.getUTCFullYear(), pad(d.getUTCMonth() + 1), pad(d.getUTCDate())];
    const stamp = `${y}-${m}-${day}T${pad(d.getUTCHours())}-${pad(d.getUTCMinutes())}-${
      pad(d.getUTCSeconds())
    }`;
    const name = `rollout-${stamp}-${id}.jsonl`;
    const path = !sub && gen.chance(0.03)
      ? join(this.#plan.out, "codex", "archived_sessions", name)
      : join(this.#plan.out, "codex", "sessions", String(y), m, day, name);
    const sink = new JsonlSink(path, gen.planter);
    this.#sink = sink;
    this.#meta(sub);
    this.#item({
      type: "message",
      role: "developer",
      content: [{
        type: "input_text",
        text: "<permissions instructions>\nFilesystem sandboxing: `sandbox_mode` is " +
          "`workspace-write`; the workspace and /tmp are writable, the network is restricted.\n" +
          "</permissions instructions>",
      }],
    });
    this.#item({
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: `# AGENTS.md instructions for ${this.#project.cwd}\n\n` },
        {
          type: "input_text",
          text:
            `<environment_context>\n  <cwd>${this.#project.cwd}</cwd>\n  <shell>bash</shell>\n` +
            `  <current_date>${iso(this.#clock).slice(0, 10)}</current_date>\n` +
            "</environment_context>",
        },
      ],
    });
    let report = "";
    if (sub) {
      report = this.#turn(sub.prompt, target);
    } else {
      let compactAt = 1_200_000 + gen.int(0, 400_000);
      while (sink.lines < 8 || sink.bytes < target) {
        if (sink.bytes > compactAt) {
          this.#compaction();
          compactAt += 1_200_000;
        }
        this.#turn(null, target);
      }
    }
    sink.close();
    this.#tally.files++;
    this.#tally.bytes += sink.bytes;
    this.#tally.conversations++;
    if (sink.lines > this.#tally.longest.records) {
      this.#tally.longest = { id: `codex:${id}`, records: sink.lines };
    }
    return report;
  }

  #tick(min = 5, max = 8_000): string {
    this.#clock += this.#gen.int(min, max);
    return iso(this.#clock);
  }

  #line(type: string, payload: unknown): void {
    this.#sink!.line({ timestamp: this.#tick(), type, payload });
  }

  #item(payload: unknown): void {
    this.#line("response_item", payload);
  }

  #event(payload: unknown): void {
    this.#line("event_msg", payload);
  }

  #meta(sub: { parent: string } | null): void {
    const gen = this.#gen;
    const project = this.#project;
    this.#line("session_meta", {
      id: this.#id,
      session_id: this.#id,
      timestamp: iso(this.#clock),
      cwd: project.cwd,
      originator: "codex_cli_rs",
      cli_version: this.#version,
      source: sub
        ? {
          subagent: {
            thread_spawn: {
              parent_thread_id: sub.parent,
              depth: 1,
              agent_path: null,
              agent_nickname: gen.name(),
              agent_role: "explorer",
            },
          },
        }
        : "cli",
      thread_source: sub ? "subagent" : "user",
      model_provider: "openai",
      base_instructions: { text: this.#instructions },
      ...(sub ? { parent_thread_id: sub.parent, agent_role: "explorer" } : {}),
      history_mode: "default",
      git: { commit_hash: gen.hex(40), branch: project.branch, repository_url: project.repo },
    });
  }

  #turnContext(turnId: string): void {
    const cwd = this.#project.cwd;
    this.#line("turn_context", {
      turn_id: turnId,
      cwd,
      workspace_roots: [cwd],
      current_date: iso(this.#clock).slice(0, 10),
      timezone: "Europe/Berlin",
      approval_policy: "on-request",
      sandbox_policy: {
        type: "workspace-write",
        writable_roots: [cwd],
        network_access: false,
        exclude_tmpdir_env_var: false,
        exclude_slash_tmp: false,
      },
      model: "gpt-5.5",
      personality: "pragmatic",
      collaboration_mode: {
        mode: "default",
        settings: { model: "gpt-5.5", reasoning_effort: "medium", developer_instructions: null },
      },
      effort: "medium",
      summary: "auto",
      truncation_policy: { mode: "tokens", limit: 10000 },
    });
  }

  #tokenCount(): void {
    const gen = this.#gen;
    const usage = () => ({
      input_tokens: gen.int(5_000, 200_000),
      cached_input_tokens: gen.int(0, 150_000),
      output_tokens: gen.int(50, 5_000),
      reasoning_output_tokens: gen.int(0, 3_000),
      total_tokens: gen.int(5_000, 200_000),
    });
    this.#event({
      type: "token_count",
      info: {
        total_token_usage: usage(),
        last_token_usage: usage(),
        model_context_window: 272000,
      },
      rate_limits: {
        limit_id: "codex",
        limit_name: null,
        plan_type: "plus",
        primary: { used_percent: gen.int(0, 90), window_minutes: 300, resets_at: 1781430000 },
        secondary: { used_percent: gen.int(0, 50), window_minutes: 10080, resets_at: 1781900000 },
        credits: null,
        rate_limit_reached_type: null,
      },
    });
  }

  /** One user turn: the message, tool rounds, the answer. Returns the answer. */
  #turn(givenPrompt: string | null, target: number): string {
    const gen = this.#gen;
    const cwd = this.#project.cwd;
    const turnId = gen.uuid7(this.#clock);
    this.#event({
      type: "task_started",
      turn_id: turnId,
      started_at: Math.floor(this.#clock / 1000),
      model_context_window: 272000,
      collaboration_mode_kind: "default",
    });
    this.#turnContext(turnId);
    const prompt = givenPrompt ?? gen.reply(gen.lognormal(30, 0.9, 3, 600), cwd, 0.12);
    const images: string[] = [];
    if (!givenPrompt && gen.chance(0.02)) {
      images.push(
        `data:image/png;base64,${gen.base64(gen.lognormal(50_000, 0.7, 8_000, 300_000))}`,
      );
    }
    this.#item({
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: prompt },
        ...images.map((url) => ({ type: "input_image", image_url: url })),
      ],
    });
    this.#event({ type: "user_message", message: prompt, images, local_images: [] });
    if (!givenPrompt) {
      this.#history.line({
        session_id: this.#id,
        ts: Math.floor(this.#clock / 1000),
        text: prompt,
      });
    }

    const rounds = givenPrompt === null ? toolRounds({ gen }, target, 16) : 80;
    for (let i = 0; i < rounds; i++) {
      if (givenPrompt !== null && this.#sink!.bytes >= target - 3_000) break;
      if (gen.chance(0.6)) this.#reasoning();
      const r = gen.random();
      if (r < 0.72) this.#exec(turnId);
      else if (r < 0.92) this.#patch(turnId);
      else if (r < 0.96 || givenPrompt !== null) this.#webSearch();
      else this.#spawn(turnId);
      if (gen.chance(0.5)) this.#tokenCount();
    }
    if (gen.chance(0.5)) this.#reasoning();
    const planting = gen.planting;
    if (givenPrompt !== null) gen.planting = false;
    const answer = gen.reply(gen.lognormal(80, 0.9, 8, 1500), cwd, 0.25);
    gen.planting = planting;
    this.#item({
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: answer }],
    });
    this.#event({ type: "agent_message", message: answer, phase: "final", memory_citation: null });
    this.#tokenCount();
    this.#event({
      type: "task_complete",
      turn_id: turnId,
      last_agent_message: answer,
      completed_at: Math.floor(this.#clock / 1000),
      duration_ms: gen.int(2_000, 600_000),
      time_to_first_token_ms: gen.int(300, 9_000),
    });
    return answer;
  }

  #reasoning(): void {
    const gen = this.#gen;
    const text = `**${gen.sentence(2, 5)}**\n\n${
      gen.prose(gen.lognormal(40, 0.7, 8, 400), this.#project.cwd)
    }`;
    this.#item({
      type: "reasoning",
      summary: [{ type: "summary_text", text }],
      content: null,
      encrypted_content: `gAAAAAB${gen.base64(gen.lognormal(2_000, 0.6, 400, 20_000))}`,
    });
    this.#event({ type: "agent_reasoning", text });
  }

  #callId(): string {
    return `call_${this.#gen.hex(24)}`;
  }

  #exec(turnId: string): void {
    const gen = this.#gen;
    const cwd = this.#project.cwd;
    const callId = this.#callId();
    const cmd = `${gen.pick(SHELLS)} ${gen.path(cwd).slice(cwd.length + 1)}`;
    this.#item({
      type: "function_call",
      name: "exec_command",
      arguments: JSON.stringify({ cmd, workdir: cwd, yield_time_ms: 10000 }),
      call_id: callId,
    });
    // Codex keeps about 10,000 tokens of a command's output.
    const output = gen.commandOutput(gen.lognormal(25, 1.5, 1, 6_000), cwd, 40_000);
    const exit = gen.chance(0.85) ? 0 : 1;
    const wall = (gen.random() * 20).toFixed(4);
    this.#item({
      type: "function_call_output",
      call_id: callId,
      output:
        `Chunk ID: ${gen.hex(6)}\nWall time: ${wall} seconds\nProcess exited with code ${exit}\n` +
        `Original token count: ${Math.ceil(output.length / 4)}\nOutput:\n${output}`,
    });
    this.#event({
      type: "exec_command_end",
      call_id: callId,
      process_id: String(gen.int(1000, 99999)),
      turn_id: turnId,
      command: ["/bin/bash", "-lc", cmd],
      cwd,
      parsed_cmd: [{ type: "unknown", cmd }],
      source: "unified_exec_startup",
      stdout: "",
      stderr: "",
      aggregated_output: output,
      exit_code: exit,
      duration: { secs: Math.floor(Number(wall)), nanos: gen.int(0, 999_999_999) },
      formatted_output: output,
      status: "completed",
    });
  }

  #patch(turnId: string): void {
    const gen = this.#gen;
    const cwd = this.#project.cwd;
    const callId = this.#callId();
    const path = gen.path(cwd).slice(cwd.length + 1);
    this.#item({
      type: "custom_tool_call",
      status: "completed",
      call_id: callId,
      name: "apply_patch",
      input: gen.patch(path, gen.lognormal(20, 0.9, 2, 600)),
    });
    this.#event({
      type: "patch_apply_end",
      call_id: callId,
      turn_id: turnId,
      success: true,
      stdout: `Success. Updated the following files:\nM ${path}\n`,
      stderr: "",
      changes: { [`${cwd}/${path}`]: { type: "update", unified_diff: "", move_path: null } },
    });
    this.#item({
      type: "custom_tool_call_output",
      call_id: callId,
      output: JSON.stringify({
        output: `Success. Updated the following files:\nM ${path}\n`,
        metadata: { exit_code: 0, duration_seconds: 0.0 },
      }),
    });
  }

  #webSearch(): void {
    const gen = this.#gen;
    const query = gen.sentence(3, 8);
    this.#item({
      type: "web_search_call",
      status: "completed",
      action: { type: "search", query },
    });
    this.#event({ type: "web_search_end", call_id: `ws_${gen.hex(32)}`, query });
  }

  /** A subagent: its own rollout, spawned by a function call whose output names it. */
  #spawn(turnId: string): void {
    const gen = this.#gen;
    const callId = this.#callId();
    const planting = gen.planting;
    gen.planting = false;
    const prompt = gen.prose(gen.int(30, 100), this.#project.cwd);
    gen.planting = planting;
    this.#item({
      type: "function_call",
      name: "spawn_agent",
      arguments: JSON.stringify({ message: prompt, agent_type: "explorer" }),
      call_id: callId,
    });
    const child = new Rollout(
      this.#plan,
      this.#tally,
      this.#instructions,
      this.#project,
      this.#clock + 50,
      this.#history,
    );
    child.write(gen.lognormal(20_000, 1.0, 4_000, 300_000), { parent: this.#id, prompt });
    this.#clock = Math.max(this.#clock, child.#clock);
    this.#event({
      type: "collab_agent_spawn_end",
      call_id: callId,
      sender_thread_id: this.#id,
      new_thread_id: child.#id,
      turn_id: turnId,
    });
    this.#item({
      type: "function_call_output",
      call_id: callId,
      output: JSON.stringify({ agent_id: child.#id, nickname: gen.name() }),
    });
  }

  #compaction(): void {
    const gen = this.#gen;
    const cwd = this.#project.cwd;
    const planting = gen.planting;
    gen.planting = false;
    const history = [];
    for (let i = gen.int(1, 4); i > 0; i--) {
      history.push({
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: gen.prose(gen.int(10, 80), cwd) }],
      });
    }
    gen.planting = planting;
    this.#line("compacted", {
      message: `Summary of the conversation so far: ${gen.prose(gen.int(150, 600), cwd)}`,
      replacement_history: [
        ...history,
        { type: "compaction", encrypted_content: `gAAAAAB${gen.base64(gen.int(800, 4000))}` },
      ],
    });
    this.#event({ type: "context_compacted" });
  }
}
