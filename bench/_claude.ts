// Claude Code transcripts for the benchmark corpus, shaped like fixtures/claude: one line per
// content block (a reply split over lines sharing `message.id`), thinking with signatures, tool
// calls whose results are large and repeated in `toolUseResult`, pasted base64 images, hook
// progress lines, compactions, and subagents in `<sessionId>/subagents/agent-<id>.jsonl`.
// Newer versions' large Bash outputs are persisted to `<sessionId>/tool-results/<id>.txt`
// with a `<persisted-output>` preview in the transcript, and every prompt typed in a session is
// also a line of `claude/history.jsonl` (with a few prompts of sessions whose transcripts are gone).
// Each compaction also leaves its helper's copy, `agent-acompact-<id>.jsonl`, and some longer
// sessions a side question's, `agent-aside_question-<id>.jsonl`: the session's messages since the
// last compaction again, under the same uuids, then the helper's own two lines.

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
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

const VERSIONS = ["2.0.76", "2.1.12", "2.1.40", "2.1.41", "2.1.50"];
const MODELS = ["claude-opus-4-6", "claude-sonnet-4-5-20250929", "claude-opus-4-6"];
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** The folder name Claude Code gives a cwd (lossy: every odd character becomes `-`). */
export function encodeCwd(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, "-");
}

/** Versions that persist a large tool output to `tool-results/` (2.1.x and later). */
const PERSISTS_OUTPUT = /^2\.(?:[1-9]|\d{2,})\./;
/** Outputs longer than this many characters are persisted (Claude Code's Bash limit). */
const PERSIST_FROM = 30_000;
/** The preview the transcript keeps of a persisted output. */
const PREVIEW_CHARS = 2_000;

/** Writes Claude Code sessions until the plan's byte budget is spent. */
export function writeClaude(plan: AgentPlan): AgentTally {
  const { gen } = plan;
  gen.agent = "claude";
  const tally = newTally();
  const history = new JsonlSink(join(plan.out, "claude", "history.jsonl"), gen.planter);
  while (tally.bytes + history.bytes < plan.budget) {
    const project = pickProject(plan);
    const sessionId = gen.uuid();
    const dir = join(plan.out, "claude", "projects", encodeCwd(project.cwd));
    const start = Math.round(plan.start + plan.span * (tally.bytes / plan.budget)) +
      gen.int(0, 3_600_000);
    const session = new Session(gen, tally, {
      dir,
      sessionId,
      project,
      version: gen.pick(VERSIONS),
      model: gen.pick(MODELS),
      clock: start,
      subagents: gen.chance(0.3),
      history,
      copies: true,
    });
    session.write(join(dir, `${sessionId}.jsonl`), sessionSize(plan, 8_000), null);
    tally.sessions++;
  }
  // Prompts of sessions whose transcripts Claude Code has since deleted: only the history
  // keeps them, so their planted terms are found there once.
  for (let i = Math.ceil(tally.sessions / 10); i > 0; i--) {
    const project = pickProject(plan);
    const sessionId = gen.uuid();
    let clock = Math.round(plan.start + gen.random() * plan.span);
    for (let n = gen.int(1, 3); n > 0; n--) {
      clock += gen.int(20_000, 600_000);
      history.line({
        display: gen.reply(gen.lognormal(30, 0.9, 3, 600), project.cwd, 0.12),
        pastedContents: {},
        timestamp: clock,
        project: project.cwd,
        sessionId,
      });
    }
  }
  history.close();
  tally.files++;
  tally.bytes += history.bytes;
  tally.prompts = history.lines;
  return tally;
}

interface SessionInfo {
  dir: string;
  sessionId: string;
  project: Project;
  version: string;
  model: string;
  clock: number;
  subagents: boolean;
  /** `claude/history.jsonl`: every prompt typed in a session gets a line. */
  history: JsonlSink;
  /** Whether compactions leave their helper's copy of the session beside it. */
  copies: boolean;
}

/** One transcript file (a session, or one of its subagents when `agentId` is set). */
class Session {
  readonly #gen: TextGen;
  readonly #tally: AgentTally;
  readonly #info: SessionInfo;
  #sink: JsonlSink | null = null;
  #parent: string | null = null;
  #agentId: string | null = null;
  #slug: string;
  /** The message lines since the last compaction, which a compaction helper's copy repeats. */
  #context: string[] = [];

  constructor(gen: TextGen, tally: AgentTally, info: SessionInfo) {
    this.#gen = gen;
    this.#tally = tally;
    this.#info = info;
    this.#slug = `${gen.name()}-${gen.name()}-${gen.name()}`;
  }

  /**
   * Writes the transcript to `path` until it holds about `target` bytes. A subagent starts from
   * `prompt` and ends with a report written without planted terms (its parent repeats it).
   */
  write(path: string, target: number, sub: { agentId: string; prompt: string } | null): string {
    const gen = this.#gen;
    const sink = new JsonlSink(path, gen.planter);
    this.#sink = sink;
    this.#agentId = sub?.agentId ?? null;
    let report = "";
    if (!sub) {
      if (gen.chance(0.05)) {
        sink.line({ type: "summary", summary: gen.sentence(4, 12), leafUuid: gen.uuid() });
      }
      if (gen.chance(0.5)) this.#hookProgress();
    }
    if (sub) {
      // A subagent answers one prompt: tool rounds until its size, then its report.
      report = this.#turn(sub.prompt, target);
    } else {
      let compactAt = 1_500_000 + gen.int(0, 500_000);
      while (sink.lines === 0 || sink.bytes < target) {
        if (sink.bytes > compactAt) {
          this.#compaction();
          compactAt += 1_500_000;
        }
        this.#turn(null, target);
      }
      // A side question (`/btw`) asked late in a longer session.
      if (this.#info.copies && sink.bytes > 150_000 && gen.chance(0.3)) {
        this.#copy("aside_question");
      }
    }
    sink.close();
    this.#tally.files++;
    this.#tally.bytes += sink.bytes;
    this.#tally.conversations++;
    if (sink.lines > this.#tally.longest.records) {
      const id = `claude:${this.#info.sessionId}${sub ? `/agent-${sub.agentId}` : ""}`;
      this.#tally.longest = { id, records: sink.lines };
    }
    return report;
  }

  #base(): Record<string, unknown> {
    const info = this.#info;
    const line: Record<string, unknown> = {
      parentUuid: this.#parent,
      isSidechain: this.#agentId !== null,
      userType: "external",
      cwd: info.project.cwd,
      sessionId: info.sessionId,
      version: info.version,
      gitBranch: info.project.branch,
    };
    if (this.#agentId) line.agentId = this.#agentId;
    return line;
  }

  #tick(min = 300, max = 15_000): string {
    this.#info.clock += this.#gen.int(min, max);
    return iso(this.#info.clock);
  }

  #emit(line: Record<string, unknown>, uuid: string): void {
    this.#sink!.line(line);
    this.#parent = uuid;
    if (
      this.#info.copies && !this.#agentId && (line.type === "user" || line.type === "assistant")
    ) {
      this.#context.push(JSON.stringify(line));
    }
  }

  #hookProgress(): void {
    const gen = this.#gen;
    const uuid = gen.uuid();
    this.#emit({
      ...this.#base(),
      type: "progress",
      data: {
        type: "hook_progress",
        hookEvent: "SessionStart",
        hookName: "SessionStart:startup",
        command: "/home/dev/.claude/hooks/notify.sh clear",
      },
      parentToolUseID: gen.uuid(),
      toolUseID: gen.uuid(),
      timestamp: this.#tick(),
      uuid,
    }, uuid);
  }

  /**
   * One user prompt and the reply to it; returns the reply's final text. A subagent's turn
   * (`givenPrompt` set) runs tool rounds until the file holds about `target` bytes; a session's
   * turn has more tool rounds the larger its `target`.
   */
  #turn(givenPrompt: string | null, target: number): string {
    const gen = this.#gen;
    const root = this.#info.project.cwd;
    const promptUuid = gen.uuid();
    if (!this.#agentId) {
      this.#sink!.line({
        type: "file-history-snapshot",
        messageId: promptUuid,
        snapshot: { messageId: promptUuid, trackedFileBackups: {}, timestamp: this.#tick() },
        isSnapshotUpdate: false,
      });
    }
    const text = givenPrompt ?? gen.reply(gen.lognormal(30, 0.9, 3, 600), root, 0.12);
    let content: unknown = text;
    if (!givenPrompt && gen.chance(0.02)) {
      content = [
        { type: "text", text },
        {
          type: "image",
          source: {
            type: "base64",
            media_type: "image/png",
            data: gen.base64(gen.lognormal(60_000, 0.7, 8_000, 400_000) & ~3),
          },
        },
      ];
    }
    const typedAt = this.#tick();
    if (!givenPrompt && !this.#agentId) {
      // The same text as the transcript's prompt: search shows the transcript's copy.
      this.#info.history.line({
        display: text,
        pastedContents: {},
        timestamp: Date.parse(typedAt),
        project: this.#info.project.cwd,
        sessionId: this.#info.sessionId,
      });
    }
    this.#emit({
      ...this.#base(),
      type: "user",
      message: { role: "user", content },
      uuid: promptUuid,
      timestamp: typedAt,
      ...(this.#agentId ? {} : { thinkingMetadata: { maxThinkingTokens: 31999 }, todos: [] }),
      permissionMode: "default",
    }, promptUuid);

    const rounds = givenPrompt === null ? toolRounds({ gen }, target, 14) : 80;
    for (let i = 0; i < rounds; i++) {
      if (givenPrompt !== null && this.#sink!.bytes >= target - 3_000) break;
      const messageId = this.#messageId();
      if (gen.chance(i === 0 ? 0.6 : 0.3)) this.#thinking(messageId);
      if (gen.chance(0.5)) {
        this.#assistant(messageId, { type: "text", text: gen.prose(gen.int(6, 40), root) });
      }
      this.#toolCall(messageId);
    }
    const messageId = this.#messageId();
    if (gen.chance(0.4)) this.#thinking(messageId);
    // A subagent's final report is repeated in its parent's tool result: plant terms once.
    const planting = gen.planting;
    if (givenPrompt !== null) gen.planting = false;
    const reply = gen.reply(gen.lognormal(90, 0.9, 8, 1500), root, 0.3);
    gen.planting = planting;
    this.#assistant(messageId, { type: "text", text: reply });
    return reply;
  }

  #messageId(): string {
    let id = "msg_01";
    for (let i = 0; i < 22; i++) id += BASE62[this.#gen.int(0, 61)];
    return id;
  }

  #thinking(messageId: string): void {
    const gen = this.#gen;
    this.#assistant(messageId, {
      type: "thinking",
      thinking: gen.prose(gen.lognormal(70, 0.8, 10, 900), this.#info.project.cwd),
      signature: gen.base64(gen.int(300, 1600) & ~3),
    });
  }

  #assistant(messageId: string, block: Record<string, unknown>): string {
    const gen = this.#gen;
    const uuid = gen.uuid();
    this.#emit({
      ...this.#base(),
      slug: this.#slug,
      message: {
        model: this.#info.model,
        id: messageId,
        type: "message",
        role: "assistant",
        content: [block],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: gen.int(1, 9),
          cache_creation_input_tokens: gen.int(0, 20_000),
          cache_read_input_tokens: gen.int(10_000, 150_000),
          cache_creation: {
            ephemeral_5m_input_tokens: gen.int(0, 9000),
            ephemeral_1h_input_tokens: 0,
          },
          output_tokens: gen.int(10, 4000),
          service_tier: "standard",
          inference_geo: "not_available",
        },
      },
      requestId: `req_011C${gen.hex(18)}`,
      type: "assistant",
      uuid,
      timestamp: this.#tick(800, 25_000),
    }, uuid);
    return uuid;
  }

  /** A tool_use line and the user line with its result. */
  #toolCall(messageId: string): void {
    const gen = this.#gen;
    const root = this.#info.project.cwd;
    const id = `toolu_01${gen.hex(22)}`;
    const r = gen.random();
    const taskAllowed = this.#info.subagents && this.#agentId === null;
    if (r >= 0.95 && taskAllowed) {
      this.#task(messageId, id);
      return;
    }
    const { name, input, result, toolUseResult } = r < 0.3
      ? this.#read(root)
      : r < 0.6 || r >= 0.95
      ? this.#bash(root)
      : r < 0.75
      ? this.#edit(root)
      : r < 0.85
      ? this.#grep(root)
      : r < 0.9
      ? this.#glob(root)
      : this.#todoWrite();
    const assistantUuid = this.#assistant(messageId, {
      type: "tool_use",
      id,
      name,
      input,
      caller: { type: "direct" },
    });
    this.#toolResult(id, result, toolUseResult, assistantUuid, gen.chance(0.04));
  }

  #read(root: string): ToolUse {
    const gen = this.#gen;
    const path = gen.path(root);
    const { plain, numbered } = gen.fileLines(gen.lognormal(70, 1.2, 3, 2000), "arrow");
    const lines = plain.split("\n").length - 1;
    return {
      name: "Read",
      input: { file_path: path },
      result: numbered,
      toolUseResult: {
        type: "text",
        file: { filePath: path, content: plain, numLines: lines, startLine: 1, totalLines: lines },
      },
    };
  }

  /** A command and its output; now and then one too large, persisted beside the transcript. */
  #bash(root: string): ToolUse {
    const gen = this.#gen;
    const command = `${
      gen.pick(["npm test", "deno test -A", "go test ./...", "rg -n", "git"])
    } ${gen.name()} ${gen.path(root)}`;
    const input = { command, description: gen.sentence(3, 8) };
    const output = PERSISTS_OUTPUT.test(this.#info.version) && gen.chance(0.05)
      ? this.#persistedOutput(root)
      : gen.commandOutput(gen.lognormal(25, 1.5, 1, 6000), root);
    return {
      name: "Bash",
      input,
      result: output,
      toolUseResult: { stdout: output, stderr: "", interrupted: false, isImage: false },
    };
  }

  #edit(root: string): ToolUse {
    const gen = this.#gen;
    const path = gen.path(root);
    const oldString = gen.code(gen.lognormal(6, 0.8, 1, 120));
    const newString = gen.code(gen.lognormal(8, 0.8, 1, 160));
    const input = {
      file_path: path,
      old_string: oldString,
      new_string: newString,
      replace_all: false,
    };
    const { numbered } = gen.fileLines(gen.int(5, 20), "arrow");
    return {
      name: "Edit",
      input,
      result: `The file ${path} has been updated. Here's the result of running \`cat -n\` on a ` +
        `snippet of the edited file:\n${numbered}`,
      toolUseResult: {
        filePath: path,
        oldString,
        newString,
        originalFile: null,
        structuredPatch: [],
        userModified: false,
        replaceAll: false,
      },
    };
  }

  #grep(root: string): ToolUse {
    const gen = this.#gen;
    const pattern = `${gen.name()}|${gen.ident()}`;
    const output = gen.commandOutput(gen.lognormal(15, 1.2, 1, 800), root);
    return {
      name: "Grep",
      input: { pattern, path: root, output_mode: "content", "-n": true },
      result: output,
      toolUseResult: { mode: "content", numFiles: gen.int(1, 40), filenames: [], content: output },
    };
  }

  #glob(root: string): ToolUse {
    const gen = this.#gen;
    const files: string[] = [];
    for (let i = gen.lognormal(10, 1, 1, 300); i > 0; i--) files.push(gen.path(root));
    return {
      name: "Glob",
      input: { pattern: `**/*.${gen.pick(["ts", "go", "py", "md"])}`, path: root },
      result: files.join("\n"),
      toolUseResult: { filenames: files, durationMs: gen.int(2, 90), numFiles: files.length },
    };
  }

  #todoWrite(): ToolUse {
    const gen = this.#gen;
    const todos = [];
    for (let i = gen.int(2, 8); i > 0; i--) {
      todos.push({
        content: gen.sentence(3, 10),
        status: gen.pick(["pending", "in_progress", "completed"]),
        activeForm: gen.sentence(2, 6),
      });
    }
    return {
      name: "TodoWrite",
      input: { todos },
      result: "Todos have been modified successfully. Ensure that you continue to use the todo " +
        "list to track your progress. Please proceed with the current tasks if applicable",
      toolUseResult: { oldTodos: [], newTodos: todos },
    };
  }

  /**
   * A Bash output too large for the transcript: written whole to the session's `tool-results/`
   * folder; returns the `<persisted-output>` preview the transcript keeps. Terms are planted only
   * past the preview (the preview repeats the output's start).
   */
  #persistedOutput(root: string): string {
    const gen = this.#gen;
    const info = this.#info;
    const planting = gen.planting;
    gen.planting = false;
    const head = gen.commandOutput(400, root, PREVIEW_CHARS + 400);
    gen.planting = planting;
    const tail = gen.commandOutput(gen.int(600, 4000), root, gen.int(PERSIST_FROM, 150_000));
    const output = `${head}\n${tail}`;
    const name = `b${gen.hex(8)}.txt`;
    const path = join(info.dir, info.sessionId, "tool-results", name);
    const bytes = new TextEncoder().encode(output);
    Deno.mkdirSync(dirname(path), { recursive: true });
    Deno.writeFileSync(path, bytes);
    gen.planter.position += bytes.length;
    this.#tally.files++;
    this.#tally.sidecars++;
    this.#tally.bytes += bytes.length;
    let preview = output.slice(0, PREVIEW_CHARS);
    const end = preview.lastIndexOf("\n");
    if (end > PREVIEW_CHARS / 2) preview = preview.slice(0, end);
    const home = "/home/dev/.claude/projects";
    const saved = `${home}/${encodeCwd(info.project.cwd)}/${info.sessionId}/tool-results/${name}`;
    return `<persisted-output>\nOutput too large (${(bytes.length / 1024).toFixed(1)}KB). ` +
      `Full output saved to: ${saved}\n\nPreview (first 2KB):\n${preview}\n...\n</persisted-output>`;
  }

  #toolResult(
    id: string,
    content: unknown,
    toolUseResult: unknown,
    assistantUuid: string,
    isError: boolean,
  ): void {
    const uuid = this.#gen.uuid();
    this.#emit({
      ...this.#base(),
      type: "user",
      message: {
        role: "user",
        content: [{
          tool_use_id: id,
          type: "tool_result",
          content,
          ...(isError ? { is_error: true } : {}),
        }],
      },
      uuid,
      timestamp: this.#tick(100, 60_000),
      toolUseResult,
      sourceToolAssistantUUID: assistantUuid,
    }, uuid);
  }

  /** A Task call: the subagent's own transcript, then its report as the tool result. */
  #task(messageId: string, id: string): void {
    const gen = this.#gen;
    const info = this.#info;
    const planting = gen.planting;
    // The prompt is written three times (tool input, progress line, subagent's first line).
    gen.planting = false;
    const prompt = gen.prose(gen.int(30, 120), info.project.cwd);
    gen.planting = planting;
    const description = gen.sentence(3, 6);
    const assistantUuid = this.#assistant(messageId, {
      type: "tool_use",
      id,
      name: "Task",
      input: { description, prompt, subagent_type: "general-purpose", model: "sonnet" },
      caller: { type: "direct" },
    });
    const agentId = `a${gen.hex(16)}`;
    const progressUuid = gen.uuid();
    this.#emit({
      ...this.#base(),
      slug: this.#slug,
      type: "progress",
      data: {
        message: {
          type: "user",
          message: { role: "user", content: [{ type: "text", text: prompt }] },
          uuid: gen.uuid(),
          timestamp: iso(info.clock),
        },
        normalizedMessages: [],
        type: "agent_progress",
        prompt,
        agentId,
      },
      toolUseID: `agent_${messageId}`,
      parentToolUseID: id,
      uuid: progressUuid,
      timestamp: this.#tick(),
    }, progressUuid);
    const child = new Session(gen, this.#tally, { ...info, clock: info.clock, subagents: false });
    const path = join(info.dir, info.sessionId, "subagents", `agent-${agentId}.jsonl`);
    const report = child.write(
      path,
      gen.lognormal(15_000, 1.0, 3_000, 300_000),
      { agentId, prompt },
    );
    info.clock = Math.max(info.clock, child.#info.clock);
    this.#toolResult(
      id,
      [{ type: "text", text: report }],
      {
        status: "completed",
        prompt,
        agentId,
        content: [{ type: "text", text: report }],
        totalDurationMs: gen.int(5_000, 400_000),
        totalTokens: gen.int(5_000, 90_000),
        totalToolUseCount: gen.int(1, 30),
      },
      assistantUuid,
      false,
    );
  }

  /**
   * A helper's transcript that copies the session (a compaction's, or a side question's): the
   * context it was given (the session's message lines since the last compaction, under their own
   * uuids, marked as its sidechain), then its prompt and its reply, which hold no planted terms.
   */
  #copy(kind: "acompact" | "aside_question"): void {
    const gen = this.#gen;
    const info = this.#info;
    const agentId = `${kind}-${gen.hex(kind === "acompact" ? 6 : 16)}`;
    const path = join(info.dir, info.sessionId, "subagents", `agent-${agentId}.jsonl`);
    const sink = new JsonlSink(path, gen.planter);
    let last: string | null = null;
    for (const text of this.#context) {
      const line: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(JSON.parse(text))) {
        line[key] = key === "isSidechain" ? true : value;
        if (key === "gitBranch") line.agentId = agentId;
      }
      last = String(line.uuid);
      sink.line(line);
    }
    const base = {
      parentUuid: last,
      isSidechain: true,
      userType: "external",
      cwd: info.project.cwd,
      sessionId: info.sessionId,
      version: info.version,
      gitBranch: info.project.branch,
      agentId,
      slug: this.#slug,
    };
    const promptUuid = gen.uuid();
    sink.line({
      ...base,
      type: "user",
      message: {
        role: "user",
        content: kind === "acompact"
          ? "Your task is to create a detailed summary of the conversation so far."
          : gen.sentence(6, 16),
      },
      uuid: promptUuid,
      timestamp: this.#tick(),
    });
    const planting = gen.planting;
    gen.planting = false;
    const reply = gen.prose(gen.int(200, 700), info.project.cwd);
    gen.planting = planting;
    sink.line({
      ...base,
      parentUuid: promptUuid,
      message: {
        model: info.model,
        id: this.#messageId(),
        type: "message",
        role: "assistant",
        content: [{
          type: "text",
          text: kind === "acompact" ? `<analysis>\n${reply}\n</analysis>` : reply,
        }],
      },
      type: "assistant",
      uuid: gen.uuid(),
      timestamp: this.#tick(),
    });
    sink.close();
    this.#tally.files++;
    this.#tally.bytes += sink.bytes;
    this.#tally.conversations++;
    if (kind === "acompact") this.#context = [];
  }

  /** Claude Code's own compaction: a boundary, then the summary as a user line. */
  #compaction(): void {
    const gen = this.#gen;
    if (this.#info.copies && !this.#agentId) this.#copy("acompact");
    const uuid = gen.uuid();
    const previous = this.#parent;
    this.#parent = null;
    this.#emit({
      ...this.#base(),
      type: "system",
      subtype: "compact_boundary",
      content: "Conversation compacted",
      isMeta: false,
      level: "info",
      compactMetadata: { trigger: "auto", preTokens: gen.int(150_000, 190_000) },
      logicalParentUuid: previous,
      timestamp: this.#tick(),
      uuid,
    }, uuid);
    const summaryUuid = gen.uuid();
    this.#emit({
      ...this.#base(),
      type: "user",
      message: {
        role: "user",
        content: "This session is being continued from a previous conversation that ran out of " +
          "context. The conversation is summarized below:\n" +
          gen.prose(gen.int(200, 700), this.#info.project.cwd),
      },
      isCompactSummary: true,
      isVisibleInTranscriptOnly: true,
      uuid: summaryUuid,
      timestamp: this.#tick(),
    }, summaryUuid);
  }
}

/**
 * Appends about `bytes` bytes of new turns to the session transcript at `path` (as Claude Code
 * does when a session continues), without planted terms. Returns the bytes appended.
 */
export function appendClaudeTurns(
  gen: TextGen,
  path: string,
  sessionId: string,
  cwd: string,
  bytes: number,
): number {
  const planting = gen.planting;
  gen.planting = false;
  const scratch = `${path}.bench-append`;
  const history = new JsonlSink(`${scratch}.history`, gen.planter);
  try {
    const session = new Session(gen, newTally(), {
      dir: `${scratch}.d`,
      sessionId,
      project: { cwd, branch: "main", repo: "" },
      version: VERSIONS[3]!,
      model: MODELS[0]!,
      clock: Date.UTC(2026, 5, 1),
      subagents: false,
      history,
      copies: false,
    });
    session.write(scratch, bytes, null);
    const data = Deno.readFileSync(scratch);
    const file = Deno.openSync(path, { append: true });
    try {
      let at = 0;
      while (at < data.length) at += file.writeSync(data.subarray(at));
    } finally {
      file.close();
    }
    return data.length;
  } finally {
    gen.planting = planting;
    history.close();
    Deno.removeSync(scratch);
    Deno.removeSync(`${scratch}.history`);
    // Persisted outputs of the scratch session, if it wrote any.
    if (existsSync(`${scratch}.d`)) Deno.removeSync(`${scratch}.d`, { recursive: true });
  }
}

/** A tool's call and its result, as a Claude Code transcript holds them. */
interface ToolUse {
  name: string;
  input: Record<string, unknown>;
  result: unknown;
  toolUseResult: unknown;
}
