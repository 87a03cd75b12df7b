// The agents' prompt history files: what the person typed, one JSON line per prompt, appended
// to and never rewritten, so they are captured incrementally like transcripts. Claude Code keeps
// `~/.claude/history.jsonl` (`display`, `pastedContents`, `timestamp`, `project`, `sessionId` in
// newer versions), Codex `~/.codex/history.jsonl` (`session_id`, `ts` in seconds, `text`).
//
// Each line is a `prompt` record (role `user`) of the session it names, so a session whose
// transcript is gone still has what was typed in it; Claude Code prompts without a session id
// belong to one conversation per project (`claude:history:<project>`). A prompt's session also
// has the transcript's own copy of it when the transcript was captured: search shows a prompt
// only in a conversation without transcript messages (`lib/store/search.ts`), and `show` lists
// prompts only there.

import { join } from "../path.ts";
import {
  type AgentName,
  type ConversationInfo,
  type Derived,
  type DiscoverContext,
  type LineAdapter,
  type LineInput,
  makeDerived,
  type Scalar,
  type SourceRef,
} from "./adapter.ts";
import { homeDir } from "../paths.ts";
import { obj, str, titleFrom, toEpochMs } from "./_text.ts";

const HISTORY_FILE = /[\\/]history\.jsonl$/;
const NO_KEYS: ReadonlySet<string> = new Set();

/** Nothing is carried between lines: each names its own session. */
type NoState = Record<string, never>;

/** The fields of one history line that matter, whichever agent wrote it. */
interface Prompt {
  text: string;
  ts: unknown;
  sessionId: string | null;
  project: string | null;
}

/** How one agent's history file is found and read. */
interface HistoryFormat {
  agent: AgentName;
  /** The history files this agent may keep (absent ones are passed over). */
  files(ctx: DiscoverContext): string[];
  /** The prompt of a parsed line, or null when the line has none of the fields of a prompt. */
  prompt(record: Record<string, unknown>): Prompt | null;
  /** The field names streamed lines keep, for `parseStreamed`. */
  scalars: readonly string[];
}

const CLAUDE: HistoryFormat = {
  agent: "claude",
  files(ctx) {
    const files: string[] = [];
    const configDir = ctx.env.get("CLAUDE_CONFIG_DIR");
    if (configDir) files.push(join(configDir, "history.jsonl"));
    const home = homeDir(ctx.env);
    if (home) {
      files.push(join(home, ".claude", "history.jsonl"));
      files.push(join(home, ".config", "claude", "history.jsonl"));
    }
    return [...new Set(files)];
  },
  prompt(record) {
    if (typeof record.display !== "string") return null;
    return {
      text: [record.display, ...pasted(record.pastedContents)].filter((t) => t !== "").join("\n"),
      ts: record.timestamp,
      sessionId: str(record.sessionId),
      project: str(record.project),
    };
  },
  scalars: ["display", "timestamp", "project", "sessionId"],
};

const CODEX: HistoryFormat = {
  agent: "codex",
  files(ctx) {
    const files: string[] = [];
    const codexHome = ctx.env.get("CODEX_HOME");
    if (codexHome) files.push(join(codexHome, "history.jsonl"));
    const home = homeDir(ctx.env);
    if (home) files.push(join(home, ".codex", "history.jsonl"));
    return [...new Set(files)];
  },
  prompt(record) {
    if (typeof record.text !== "string") return null;
    return { text: record.text, ts: record.ts, sessionId: str(record.session_id), project: null };
  },
  scalars: ["text", "ts", "session_id"],
};

/** The text of what was pasted into a Claude Code prompt (large pastes keep only a hash). */
function pasted(value: unknown): string[] {
  const contents = obj(value);
  if (!contents) return [];
  const texts: string[] = [];
  for (const item of Object.values(contents)) {
    const paste = obj(item);
    if (paste && paste.type !== "image" && typeof paste.content === "string") {
      texts.push(paste.content);
    }
  }
  return texts;
}

/** The conversation of a prompt: its session, or the agent's prompts of that project. */
function conversationOf(agent: AgentName, prompt: Prompt | null): ConversationInfo {
  const cwd = prompt?.project ?? null;
  if (prompt?.sessionId) {
    return { key: `${agent}:${prompt.sessionId}`, nativeId: prompt.sessionId, cwd };
  }
  const nativeId = cwd ? `history:${cwd}` : "history";
  return { key: `${agent}:${nativeId}`, nativeId, cwd };
}

function derive(format: HistoryFormat, prompt: Prompt | null, text: string): Derived {
  const conversation = conversationOf(format.agent, prompt);
  if (!prompt) {
    return makeDerived("meta", null, conversation, {
      drift: { category: "missing_fields", detail: "history line without a prompt" },
    });
  }
  const titled = prompt.sessionId !== null && text.trim() !== "";
  const sessionless = prompt.sessionId === null;
  return makeDerived("prompt", "user", conversation, {
    ts: toEpochMs(prompt.ts),
    text,
    title: titled
      ? { text: titleFrom(text), rank: 1 }
      : sessionless
      ? { text: `Prompts typed in ${prompt.project ?? "any project"}`, rank: 3 }
      : null,
  });
}

function historyAdapter(format: HistoryFormat): LineAdapter<NoState> {
  const textOfValue = (value: unknown): string => {
    const record = obj(value);
    return (record && format.prompt(record)?.text) ?? "";
  };
  return {
    agent: format.agent,
    mode: "lines",
    // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
    // 1: the version of the build that began recording versions.
    derivation: 1,
    skipKeys: NO_KEYS,

    claims(locator: string): boolean {
      // Transcripts live under `projects/`, `sessions/` or extra roots, never as `history.jsonl`
      // beside them: only a history file is named so.
      return HISTORY_FILE.test(locator) && !/[\\/](projects|sessions)[\\/]/.test(locator);
    },

    roots(ctx: DiscoverContext): string[] {
      return format.files(ctx);
    },

    async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
      for (const path of format.files(ctx)) {
        // Only a file that is there is a source (the start command counts what is found).
        try {
          Deno.lstatSync(path);
        } catch (err) {
          if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
            continue;
          }
          throw err;
        }
        yield { agent: format.agent, locator: path, path, format: "jsonl" };
      }
    },

    initialState(): NoState {
      return {};
    },

    parseLine(line: LineInput): Derived {
      if (line.blank) return makeDerived("meta", null, null);
      const record = obj(line.value);
      if (!record) {
        return makeDerived("meta", null, null, {
          drift: {
            category: "unparsable",
            detail: line.value === undefined ? "invalid JSON" : "not a JSON object",
          },
        });
      }
      const prompt = format.prompt(record);
      return derive(format, prompt, prompt?.text ?? "");
    },

    parseStreamed(scalars: ReadonlyMap<string, Scalar>): Derived {
      const record: Record<string, unknown> = {};
      for (const key of format.scalars) {
        const value = scalars.get(key);
        if (value !== undefined) record[key] = value;
      }
      // The text itself is extracted by the engine; a streamed prompt is too long to title.
      const prompt = format.prompt({ display: "", text: "", ...record });
      const derived = derive(format, prompt, "");
      derived.title = null;
      return derived;
    },

    textOf(bytes: Uint8Array): string {
      try {
        return textOfValue(JSON.parse(new TextDecoder().decode(bytes)));
      } catch {
        return "";
      }
    },
  };
}

/** Claude Code's `history.jsonl`. */
export const claudeHistory: LineAdapter<NoState> = historyAdapter(CLAUDE);

/** Codex's `history.jsonl`. */
export const codexHistory: LineAdapter<NoState> = historyAdapter(CODEX);
