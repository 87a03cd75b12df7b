// The Gemini CLI adapter: finds `tmp/<project>/chats/session-<time>-<id8>.jsonl` chat logs and
// their subagents' `chats/<parent sessionId>/<sessionId>.jsonl`, and replays each log's events
// (messages upserted by id, `$set` patches, `$rewindTo`) into records a search finds once.
//
// What a log's events do to the store (docs/agents/gemini.md says it for users):
// - a message written again under its id (Gemini CLI adds `toolCalls` to a reply once the tools
//   ran) is a newer revision: keyed `message:<id>`, it supersedes the one before, which stays
//   stored raw and leaves the index and `show`;
// - a `$set` of `messages` (a resume writes the whole history again, with a `<id>_response` copy
//   of each tool's result) repeats messages the log holds already: kept raw, never indexed
//   (`copied`), and shown only with `show --all` (kind `meta`). Messages it holds that the log
//   never had (a history rewritten by the CLI) are indexed with it (kind `summary`);
// - a `$rewindTo` ends the conversation's branch at a message: what it drops stays stored,
//   indexed and shown where it was said, and the turns after the rewind follow it;
// - the `<session_context>` message (the same in every session) is context: no text, no title.
// A conversation is its `sessionId`, whichever file says it: a resume's stray file holding only a
// header and the session context adds nothing to it.

import { agentRoots } from "../agents.ts";
import { basename, dirname, join } from "../path.ts";
import {
  type ConversationInfo,
  type Derived,
  type DiscoverContext,
  type DriftCategory,
  type LineAdapter,
  type LineInput,
  makeDerived,
  type Scalar,
  type SourceRef,
  type ToolParts,
} from "./adapter.ts";
import { geminiApiUsage, obj, str, stringLeaves, titleFrom, toEpochMs } from "./_text.ts";
import { walkFiles } from "./_walk.ts";
import {
  GEMINI_SKIP_KEYS,
  geminiLineText,
  geminiTextPath,
  isSessionContext,
  shapeOf,
  textOfRecord,
} from "./gemini_text.ts";

/** What the adapter remembers between lines of one log's generation. */
export interface GeminiState {
  /** The session's id, from the first header (the file name holds only its first 8 characters). */
  sessionId: string | null;
  /** The header's `kind`: `main`, or `subagent` for a helper's log. */
  kind: string | null;
  /** The cwd: the header's `directories`, the session context's workspace, or `.project_root`. */
  cwd: string | null;
  /** The message ids the log has written, to tell a `$set`'s repeats from new messages. */
  seen: Record<string, true>;
}

/** Keys a `$set` patch is known to set (the session's metadata, Gemini CLI 0.61). */
const SET_KEYS = new Set([
  "messages",
  "lastUpdated",
  "sessionId",
  "summary",
  "directories",
  "memoryScratchpad",
  "kind",
  "startTime",
  "projectHash",
]);

/** Message types other than `user` and `gemini`: notices the CLI records in the chat. */
const NOTICE_TYPES = new Set(["info", "error", "warning"]);

const SESSION_FILE = /^session-.+\.jsonl$/;
const CHILD_FILE = /^[\w-]+\.jsonl$/;

/** Gemini CLI chat logs. */
export const gemini: LineAdapter<GeminiState> = {
  agent: "gemini",
  mode: "lines",
  // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
  // 1: the first version.
  // 2: a reply's model call (its `tokens`) is derived for `usage`.
  derivation: 2,
  skipKeys: GEMINI_SKIP_KEYS,
  textPath: geminiTextPath,

  roots(ctx: DiscoverContext): string[] {
    return agentRoots("gemini", ctx);
  },

  async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
    for (const root of this.roots(ctx)) {
      const accept = (name: string) => SESSION_FILE.test(name) || CHILD_FILE.test(name);
      for (const path of walkFiles(root, accept, ctx, 4)) {
        if (fileOf(path)) yield { agent: "gemini", locator: path, path, format: "jsonl" };
      }
    }
  },

  initialState(source: SourceRef): GeminiState {
    const file = fileOf(source.path);
    return {
      sessionId: null,
      kind: null,
      cwd: file ? recordedCwd(file.projectDir) : null,
      seen: {},
    };
  },

  parseLine(line: LineInput, state: GeminiState, source: SourceRef): Derived {
    if (line.blank) return makeDerived("meta", null, conversationOf(state, source));
    const record = obj(line.value);
    if (!record) {
      const detail = line.value === undefined ? "invalid JSON" : "not a JSON object";
      return drift("unparsable", detail, state, source);
    }
    const derived = classify(record, state, source);
    if (!derived.drift) derived.text = textOfRecord(record);
    return derived;
  },

  parseStreamed(
    scalars: ReadonlyMap<string, Scalar>,
    state: GeminiState,
    source: SourceRef,
  ): Derived {
    // A line too long to hold (a tool's long output, a resume's copy of a long history): its
    // short fields are enough to tell what it is, and which messages a `$set` repeats.
    return classify(recordFromScalars(scalars), state, source);
  },

  textOf(bytes: Uint8Array): string {
    return geminiLineText(bytes);
  },

  toolOf(bytes: Uint8Array): ToolParts | null {
    let record: Record<string, unknown> | null;
    try {
      record = obj(JSON.parse(new TextDecoder().decode(bytes)));
    } catch {
      return null;
    }
    return record && shapeOf(record) === "message" ? toolOfMessage(record) : null;
  },
};

/** Where a log is: its project's folder, and the parent session's id for a subagent's log. */
interface LogFile {
  projectDir: string;
  parentId: string | null;
  /** The session id the file name holds whole (a subagent's), or null. */
  id: string | null;
}

/** A chat log's place (`<project>/chats/session-…` or `<project>/chats/<parent>/<id>`), or null. */
function fileOf(path: string): LogFile | null {
  const name = basename(path);
  const folder = dirname(path);
  if (SESSION_FILE.test(name) && basename(folder) === "chats") {
    return { projectDir: dirname(folder), parentId: null, id: null };
  }
  if (CHILD_FILE.test(name) && basename(dirname(folder)) === "chats") {
    return {
      projectDir: dirname(dirname(folder)),
      parentId: basename(folder),
      id: name.slice(0, -6),
    };
  }
  return null;
}

/**
 * The cwd Gemini CLI recorded for a project folder (`tmp/<project>`): its `.project_root`, else the
 * key `projects.json` maps to the folder's name. Read when a log's reading starts; the records'
 * own bytes (a subagent's `directories`, the session context's workspace) come first.
 */
function recordedCwd(projectDir: string): string | null {
  try {
    const root = Deno.readTextFileSync(join(projectDir, ".project_root")).trim();
    if (root) return root;
  } catch (err) {
    const unreadable = err instanceof Deno.errors.NotFound ||
      err instanceof Deno.errors.PermissionDenied || err instanceof Deno.errors.IsADirectory;
    if (!unreadable) throw err;
  }
  try {
    const index = obj(JSON.parse(
      Deno.readTextFileSync(join(dirname(dirname(projectDir)), "projects.json")),
    ));
    const projects = obj(index?.projects) ?? {};
    const slug = basename(projectDir);
    return Object.keys(projects).find((cwd) => projects[cwd] === slug) ?? null;
  } catch {
    // Missing, unreadable or not JSON: the records may still say it.
    return null;
  }
}

/** Kind, role, time, ids, title and conversation of a record (everything but its text). */
function classify(
  record: Record<string, unknown>,
  state: GeminiState,
  source: SourceRef,
): Derived {
  switch (shapeOf(record)) {
    case "header": {
      state.sessionId ??= str(record.sessionId);
      state.kind ??= str(record.kind);
      const directories = Array.isArray(record.directories) ? record.directories : [];
      state.cwd = str(directories[0]) ?? state.cwd;
      return makeDerived("meta", null, conversationOf(state, source), {
        ts: toEpochMs(record.startTime),
      });
    }
    case "rewind":
      // The messages it drops stay where they were said (see the top of this file).
      return makeDerived("event", null, conversationOf(state, source));
    case "set":
      return classifySet(obj(record.$set)!, state, source);
    case "message":
      return classifyMessage(record, state, source);
    default: {
      const first = Object.keys(record)[0];
      return drift("unknown_type", first ? `record/${first}` : "empty record", state, source);
    }
  }
}

/** A `$set` patch: the history again (a resume), a summary, or metadata. */
function classifySet(
  set: Record<string, unknown>,
  state: GeminiState,
  source: SourceRef,
): Derived {
  const unknown = Object.keys(set).find((key) => !SET_KEYS.has(key));
  if (unknown) return drift("unknown_type", `$set/${unknown}`, state, source);
  const ts = toEpochMs(set.lastUpdated);
  const directories = Array.isArray(set.directories) ? set.directories : [];
  state.cwd = str(directories[0]) ?? state.cwd;
  if (Array.isArray(set.messages)) {
    const messages = set.messages.map(obj).filter((m) => m !== null && str(m.id) !== null);
    const own = messages.filter((m) => !isSessionContext(m!));
    for (const m of messages) if (isSessionContext(m!)) state.cwd = workspaceOf(m!) ?? state.cwd;
    const fresh = own.filter((m) => !repeats(m!, state));
    for (const m of own) state.seen[str(m!.id)!] = true;
    const conversation = conversationOf(state, source);
    if (fresh.length > 0) {
      // Messages the log never had: a history the CLI rewrote. Indexed, copies and all.
      return makeDerived("summary", null, conversation, { ts, newMessage: true });
    }
    // The session context, or a resume's copy of what the log holds: kept and not indexed
    // (a streamed line's text is every message's, the context's too).
    return makeDerived("meta", null, conversation, { ts, copied: true });
  }
  const conversation = conversationOf(state, source);
  const summary = str(set.summary);
  if (summary !== null) {
    // A subagent's summary is its result, which its `complete_task` call holds already.
    if (state.kind === "subagent") {
      return makeDerived("summary", null, conversation, { ts, copied: true });
    }
    return makeDerived("summary", null, conversation, {
      ts,
      title: { text: titleFrom(summary), rank: 2 },
    });
  }
  return makeDerived("meta", null, conversation, { ts });
}

/** True when a `$set`'s message is one the log holds (or a resume's copy of a tool's result). */
function repeats(message: Record<string, unknown>, state: GeminiState): boolean {
  const id = str(message.id)!;
  if (state.seen[id]) return true;
  return id.endsWith("_response") && state.seen[id.slice(0, -"_response".length)] === true;
}

/** A message: a prompt, a tool's result, a reply, its tool calls or thoughts, or a notice. */
function classifyMessage(
  record: Record<string, unknown>,
  state: GeminiState,
  source: SourceRef,
): Derived {
  const id = str(record.id)!;
  const type = str(record.type);
  const conversation = conversationOf(state, source);
  if (isSessionContext(record)) {
    state.cwd = workspaceOf(record) ?? state.cwd;
    return makeDerived("meta", null, conversationOf(state, source), {
      ts: toEpochMs(record.timestamp),
    });
  }
  const seen = state.seen[id] === true;
  const revision = {
    ts: toEpochMs(record.timestamp),
    messageId: id,
    // Every revision supersedes the one before under its id, in this generation or an older
    // one of the same file (a log the CLI rewrote whole).
    key: `message:${id}`,
    supersedes: true,
  };
  const parts = Array.isArray(record.content) ? record.content.map(obj) : [];
  if (type === "user") {
    const copy = repeats(record, state) && !seen;
    state.seen[id] = true;
    // A `<reply id>_response` copy of a tool's result (a log the CLI rewrote from a resumed
    // history holds one beside the result itself): kept, not indexed nor shown again.
    if (copy) return makeDerived("meta", null, conversation, { ...revision, copied: true });
    const response = parts.map((p) => obj(p?.functionResponse)).find((r) => r !== null);
    if (response) {
      return makeDerived("tool_result", null, conversation, {
        ...revision,
        partId: str(response.id),
      });
    }
    const prompt = typeof record.content === "string"
      ? record.content
      : parts.map((p) => str(p?.text) ?? "").join("\n");
    const titled = !seen && prompt.trim() !== "" && !/^\s*</.test(prompt);
    return makeDerived("message", "user", conversation, {
      ...revision,
      newMessage: !seen,
      title: titled ? { text: titleFrom(prompt), rank: 1 } : null,
    });
  }
  if (type === "gemini") {
    state.seen[id] = true;
    const calls = Array.isArray(record.toolCalls) ? record.toolCalls.map(obj) : [];
    const said = typeof record.content === "string"
      ? record.content.trim() !== ""
      : parts.some((p) => (str(p?.text) ?? "").trim() !== "");
    const thought = Array.isArray(record.thoughts) && record.thoughts.length > 0;
    const kind = said ? "message" : calls.length ? "tool_call" : thought ? "reasoning" : "message";
    const tokens = obj(record.tokens);
    const usage = tokens &&
      geminiApiUsage(
        `message:${id}`,
        str(record.model),
        tokens.input,
        tokens.cached,
        tokens.output,
        tokens.thoughts,
      );
    return makeDerived(kind, "assistant", conversation, {
      ...revision,
      newMessage: !seen,
      partId: kind === "tool_call" ? str(calls[0]?.id) : null,
      // Written again as the reply completes: the newest revision's tokens count.
      usage: usage && { ...usage, revised: true },
    });
  }
  if (type && NOTICE_TYPES.has(type)) {
    state.seen[id] = true;
    return makeDerived("event", "system", conversation, revision);
  }
  return drift("unknown_type", `message/${type ?? "without a type"}`, state, source);
}

/** The first workspace folder a session context names: the cwd Gemini CLI started in. */
function workspaceOf(message: Record<string, unknown>): string | null {
  const first = Array.isArray(message.content) ? obj(message.content[0]) : null;
  const text = typeof message.content === "string" ? message.content : str(first?.text) ?? "";
  const match = /\*\*Workspace Directories:\*\*[ \t]*\r?\n[ \t]*- (.+)/.exec(text);
  return match ? match[1]!.trim() : null;
}

/** The tool calls a reply makes, or the results a user record returns. */
function toolOfMessage(record: Record<string, unknown>): ToolParts | null {
  if (record.type === "gemini") {
    const calls = (Array.isArray(record.toolCalls) ? record.toolCalls.map(obj) : [])
      .filter((c) => c !== null)
      .map((c) => ({
        id: str(c!.id),
        name: str(c!.name) ?? "tool",
        input: stringLeaves(c!.args, GEMINI_SKIP_KEYS).join("\n"),
      }));
    return calls.length ? { calls, results: [], output: null } : null;
  }
  if (record.type !== "user" || !Array.isArray(record.content)) return null;
  const results = record.content
    .map((p) => obj(obj(p)?.functionResponse))
    .filter((r) => r !== null && str(r.id) !== null)
    .map((r) => ({ id: str(r!.id)!, error: obj(r!.response)?.error !== undefined }));
  return results.length ? { calls: [], results, output: null } : null;
}

function conversationOf(state: GeminiState, source: SourceRef): ConversationInfo {
  const file = fileOf(source.path);
  const id = file?.id ?? state.sessionId ?? basename(source.path, ".jsonl");
  if (file?.parentId) {
    return {
      key: `gemini:${id}`,
      nativeId: id,
      parentKey: `gemini:${file.parentId}`,
      subagent: true,
      cwd: state.cwd,
    };
  }
  return { key: `gemini:${id}`, nativeId: id, cwd: state.cwd };
}

function drift(
  category: DriftCategory,
  detail: string,
  state: GeminiState,
  source: SourceRef,
): Derived {
  return makeDerived("meta", null, conversationOf(state, source), {
    drift: { category, detail },
  });
}

/** The record a streamed line's short fields make (`toolCalls.0.id` → `{toolCalls: [{id}]}`). */
function recordFromScalars(scalars: ReadonlyMap<string, Scalar>): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const [path, value] of scalars) {
    const keys = path.split(".");
    let into = record;
    keys.slice(0, -1).forEach((key, i) => {
      into[key] ??= /^\d+$/.test(keys[i + 1]!) ? [] : {};
      into = into[key] as Record<string, unknown>;
    });
    into[keys.at(-1)!] = value;
  }
  return record;
}
