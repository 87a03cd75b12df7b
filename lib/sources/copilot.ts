// The GitHub Copilot CLI adapter: finds `session-state/<session id>/events.jsonl` under
// `$COPILOT_HOME` and `~/.copilot`, and maps every event record to a kind, role and conversation.
//
// An event log is appended to, except by a rewind (`/rewind`), which writes the file again shorter
// with the kept records re-serialised (`"cost":0.0` comes back as `"cost":0`): capture then reads
// it as a new generation (docs/capture.md, "A file that changes"). Every record has a stable `id`,
// so each is stored under the key `event:<id>` and supersedes the record stored under that key
// before: a record the rewrite kept is found and shown once, at its place in the newest
// generation; what the rewind removed stays stored, found and shown where it was captured.
// `session-store.db` beside the sessions is Copilot's own index of them, not a transcript: it
// is not read.

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
  type Role,
  type Scalar,
  type SourceRef,
  type ToolParts,
  type Usage,
} from "./adapter.ts";
import { obj, str, titleFrom, toEpochMs, tokenCount } from "./_text.ts";
import { walkFiles } from "./_walk.ts";
import {
  COPILOT_SKIP_KEYS,
  copilotLineText,
  copilotLineTool,
  copilotTextPath,
  textOfRecord,
} from "./copilot_text.ts";

/** What the adapter remembers between records of one events.jsonl. */
export interface CopilotState {
  /** `session.start`'s `copilotVersion`: the version drift is counted under. */
  version: string | null;
  /** The session's cwd and branch (`context` of `session.start` and `session.resume`). */
  cwd: string | null;
  branch: string | null;
  /** The subagents met, by `agentId`: their type (`general-purpose`) and task's description. */
  agents: Record<string, { type: string | null }>;
}

/** The name workspace.yaml gives the session, and whether a person chose it. */
interface Workspace {
  name: string | null;
  userNamed: boolean;
  cwd: string | null;
}

/** Record types that say nothing of their own: kept raw as `meta`. */
const META_TYPES = new Set([
  "session.start",
  "session.resume",
  "session.shutdown",
  "session.usage_record",
  "session.model_change",
  "assistant.turn_start",
  "assistant.turn_end",
  "subagent.configured",
]);

/**
 * Record types that mark something happening (a notice, a subagent's start and end, a tool's run
 * starting, whose request its `assistant.message` holds): kind `event`.
 */
const EVENT_TYPES = new Set([
  "session.info",
  "subagent.started",
  "subagent.completed",
  "tool.execution_start",
]);

/** The record types of Copilot CLI 1.0.102's event log (docs/agents/copilot.md). */
const RECORD_TYPES = new Set([
  ...META_TYPES,
  ...EVENT_TYPES,
  "user.message",
  "system.message",
  "assistant.message",
  "tool.execution_complete",
]);

const EVENTS_FILE = "events.jsonl";

/** Copilot CLI's session event logs. */
export const copilot: LineAdapter<CopilotState> = {
  agent: "copilot",
  mode: "lines",
  // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
  // 1: the first version.
  // 2: a session.usage_record's model call is derived for `usage`.
  derivation: 2,
  skipKeys: COPILOT_SKIP_KEYS,
  textPath: copilotTextPath,

  roots(ctx: DiscoverContext): string[] {
    return agentRoots("copilot", ctx);
  },

  async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
    for (const root of this.roots(ctx)) {
      // `<root>/<session id>/events.jsonl` only: a session's own folders (files/, checkpoints/,
      // rewind-file-snapshots/) hold the user's files, not transcripts.
      for (const path of walkFiles(root, (name) => name === EVENTS_FILE, ctx, 1)) {
        if (dirname(dirname(path)) !== root) continue;
        yield { agent: "copilot", locator: path, path, format: "jsonl" };
      }
    }
  },

  initialState(): CopilotState {
    return { version: null, cwd: null, branch: null, agents: {} };
  },

  parseLine(line: LineInput, state: CopilotState, source: SourceRef): Derived {
    if (line.blank) return makeDerived("meta", null, conversationOf(null, state, source));
    const record = obj(line.value);
    if (!record) {
      const detail = line.value === undefined ? "invalid JSON" : "not a JSON object";
      return drift("unparsable", detail, null, state, source);
    }
    const derived = classify(record, state, source, false);
    if (!derived.drift) derived.text = textOfRecord(record);
    return derived;
  },

  parseStreamed(
    scalars: ReadonlyMap<string, Scalar>,
    state: CopilotState,
    source: SourceRef,
  ): Derived {
    const derived = classify(recordFromScalars(scalars), state, source, true);
    derived.title = null;
    return derived;
  },

  textOf(bytes: Uint8Array): string {
    return copilotLineText(bytes);
  },

  toolOf(bytes: Uint8Array): ToolParts | null {
    return copilotLineTool(bytes);
  },
};

/** Kind, role, time, ids, title and conversation of a record (everything but its text). */
function classify(
  record: Record<string, unknown>,
  state: CopilotState,
  source: SourceRef,
  streamed: boolean,
): Derived {
  const type = str(record.type);
  const agentId = str(record.agentId);
  if (!type) return drift("missing_fields", "record without a type", agentId, state, source);
  const data = obj(record.data);
  const ts = toEpochMs(record.timestamp);
  if (!RECORD_TYPES.has(type)) return drift("unknown_type", type, agentId, state, source, ts);
  if (!data && !streamed) {
    return drift("missing_fields", `${type} without data`, agentId, state, source, ts);
  }
  const fields = data ?? {};
  if (type === "session.start") state.version = str(fields.copilotVersion) ?? state.version;
  if (type === "session.start" || type === "session.resume") {
    const context = obj(fields.context);
    state.cwd = str(context?.cwd) ?? state.cwd;
    state.branch = str(context?.branch) ?? state.branch;
  }
  if (type === "subagent.started" && agentId) {
    state.agents[agentId] = { type: str(fields.agentName) ?? str(fields.agentType) };
  }
  const conversation = conversationOf(agentId, state, source);
  const id = str(record.id);
  const extra: Partial<Derived> = {
    ts,
    version: state.version,
    // A rewind's rewrite repeats kept records under their ids: the newer one replaces the older.
    ...(id ? { key: `event:${id}`, supersedes: true } : {}),
  };
  if (META_TYPES.has(type)) {
    const named = !agentId && (type === "session.start" || type === "session.resume");
    return makeDerived("meta", null, conversation, {
      ...extra,
      title: named ? workspaceTitle(source) : null,
      usage: type === "session.usage_record" && id ? usageRecord(id, obj(fields.usage)) : null,
    });
  }
  if (EVENT_TYPES.has(type)) {
    const description = type === "subagent.started" ? str(fields.agentDescription) : null;
    return makeDerived("event", null, conversation, {
      ...extra,
      messageId: type === "tool.execution_start" ? str(fields.toolCallId) : null,
      title: description ? { text: titleFrom(description), rank: 2 } : null,
    });
  }
  switch (type) {
    case "user.message": {
      if (!streamed && typeof fields.content !== "string") {
        return drift("missing_fields", "user.message without content", agentId, state, source, ts);
      }
      const prompt = streamed ? null : titleFrom(fields.content as string);
      return makeDerived("message", "user", conversation, {
        ...extra,
        messageId: str(fields.messageId),
        newMessage: true,
        title: prompt ? { text: prompt, rank: 1 } : null,
      });
    }
    case "system.message": {
      const role = fields.role === "developer" ? "developer" : "system";
      return makeDerived("message", role as Role, conversation, extra);
    }
    case "assistant.message": {
      // A streamed line keeps short strings only: content it lacks was too long to keep.
      const said = typeof fields.content === "string" ? fields.content !== "" : streamed;
      const requests = fields.toolRequests;
      const asks = Array.isArray(requests) ? requests.length > 0 : obj(requests) !== null;
      return makeDerived(said || !asks ? "message" : "tool_call", "assistant", conversation, {
        ...extra,
        messageId: str(fields.messageId),
        newMessage: said,
      });
    }
    default: // tool.execution_complete
      return makeDerived("tool_result", null, conversation, {
        ...extra,
        messageId: str(fields.toolCallId),
      });
  }
}

/**
 * The conversation of a record: the session (its folder's name), or for a record of a subagent
 * (a top-level `agentId`: a `task` run inline in the session's log) the child
 * `copilot:<session id>/agent-<agentId>`, whose parent is the session.
 */
function conversationOf(
  agentId: string | null,
  state: CopilotState,
  source: SourceRef,
): ConversationInfo {
  const session = basename(dirname(source.path));
  const where = { cwd: state.cwd ?? readWorkspace(source).cwd, branch: state.branch };
  if (!agentId) return { key: `copilot:${session}`, nativeId: session, ...where };
  return {
    key: `copilot:${session}/agent-${agentId}`,
    nativeId: `${session}/agent-${agentId}`,
    parentKey: `copilot:${session}`,
    subagent: true,
    agentType: state.agents[agentId]?.type ?? null,
    ...where,
  };
}

/**
 * The session's name in workspace.yaml, as a title: one a person gave it (`user_named: true`)
 * ranks as explicit, else as a summary (Copilot names a session by its first prompt).
 */
function workspaceTitle(source: SourceRef): { text: string; rank: number } | null {
  const { name, userNamed } = readWorkspace(source);
  const text = name ? titleFrom(name) : "";
  return text ? { text, rank: userNamed ? 3 : 2 } : null;
}

/** workspace.yaml beside the events (none when it is missing or unreadable). */
function readWorkspace(source: SourceRef): Workspace {
  try {
    return parseWorkspace(Deno.readTextFileSync(join(dirname(source.path), "workspace.yaml")));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.PermissionDenied) {
      return { name: null, userNamed: false, cwd: null };
    }
    throw err;
  }
}

/**
 * The fields logbook reads of workspace.yaml: top-level `key: value` lines, a value plain or
 * quoted, or (a block scalar, `|` or `>`) the first line indented under its key.
 */
export function parseWorkspace(text: string): Workspace {
  const lines = text.split(/\r?\n/);
  const values = new Map<string, string>();
  lines.forEach((line, i) => {
    const match = /^([A-Za-z_][\w-]*):(?:\s+(.*))?$/.exec(line);
    if (!match) return;
    let value = (match[2] ?? "").trim();
    if (/^[|>][+-]?\d*$/.test(value)) value = (lines[i + 1] ?? "").trim();
    values.set(match[1]!, unquote(value));
  });
  return {
    name: values.get("name") || null,
    userNamed: values.get("user_named") === "true",
    cwd: values.get("cwd") || null,
  };
}

/** A YAML scalar's text: `"…"` with JSON's escapes, `'…'` with `''` for a quote, else as is. */
function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    try {
      return String(JSON.parse(value));
    } catch {
      return value.slice(1, -1);
    }
  }
  if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) {
    return value.slice(1, -1).replaceAll("''", "'");
  }
  return value.replace(/\s+#.*$/, "");
}

function drift(
  category: DriftCategory,
  detail: string,
  agentId: string | null,
  state: CopilotState,
  source: SourceRef,
  ts: number | null = null,
): Derived {
  return makeDerived("meta", null, conversationOf(agentId, state, source), {
    ts,
    drift: { category, detail },
    version: state.version,
  });
}

/** The few fields classification needs, rebuilt from what the streaming scanner kept. */
function recordFromScalars(scalars: ReadonlyMap<string, Scalar>): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const [path, value] of scalars) {
    const parts = path.split(".");
    let into = record;
    for (const part of parts.slice(0, -1)) {
      const next = obj(into[part]) ?? {};
      into[part] = next;
      into = next;
    }
    into[parts[parts.length - 1]!] = value;
  }
  return record;
}

/**
 * The model call a `session.usage_record` reports, one record per call, named by the record's
 * id (a rewind's rewrite repeats it under the same id). Its `inputTokens` count the cached ones,
 * as the OpenAI API counts them; its `cost` is in premium requests, not dollars, so the tokens
 * are priced instead.
 */
function usageRecord(id: string, usage: Record<string, unknown> | null): Usage | null {
  if (!usage) return null;
  const read = tokenCount(usage.cacheReadTokens);
  return {
    call: `event:${id}`,
    model: str(usage.model),
    input: Math.max(0, tokenCount(usage.inputTokens) - read),
    output: tokenCount(usage.outputTokens),
    cacheWrite: tokenCount(usage.cacheWriteTokens),
    cacheRead: read,
    cost: null,
  };
}
