// The Qwen Code adapter: finds `projects/<cwd, non-alphanumerics as ->/chats/<sessionId>.jsonl`
// and its subagents (`subagents/<sessionId>/agent-<agentId>.jsonl` beside `chats/`), and maps
// every record to a kind, role, conversation and searchable text.
//
// Qwen Code appends to a chat; nothing it does rewrites one. A rewind appends a `system/rewind`
// record whose `parentUuid` goes back to before the rewound turn: the turns after it stay in the
// file, and here (indexed and shown where they were written, the rewind between). A fork
// (`--fork-session`, `/branch`) copies the chat's records into a new file with the same uuids and
// `forkedFrom`: those copies are `copied` once the store holds them in the original. Every record
// is keyed by its uuid and supersedes an earlier one of the same source with that uuid, so a chat
// rewritten by anything else (a new generation, read from its start) is indexed once.

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
  NO_RECALL,
  type Recall,
  type Scalar,
  type SourceRef,
  type ToolParts,
} from "./adapter.ts";
import {
  geminiApiUsage,
  jsonRecord,
  obj,
  str,
  stringLeaves,
  titleFrom,
  toEpochMs,
} from "./_text.ts";
import { walkFiles } from "./_walk.ts";
import { AGENT_FILE, parentHolds, subagentConversation, subagentMeta } from "./_claude_files.ts";
import { partsOf, QWEN_SKIP_KEYS, qwenLineText, qwenTextPath, textOfRecord } from "./qwen_text.ts";

/** What the adapter remembers between lines of one source generation. */
export interface QwenState {
  version: string | null;
  /** The title a subagent's `.meta.json` gives it, until a record has carried it. */
  metaTitle: string | null;
  /** The type a subagent's `.meta.json` names (`general-purpose`). */
  agentType: string | null;
  /** The session a fork was copied from, once a record said so. */
  forkOf: string | null;
}

/** How a file's place identifies its conversation. */
interface FileRole {
  sessionId: string;
  /** True for a chat in `chats/archive/`. */
  archived?: boolean;
  /** The agent id of a subagent's transcript (`general-purpose-call_…`), else null. */
  agentId: string | null;
}

/**
 * `system` subtypes that hold state, not conversation (surveyed from Qwen Code 0.24.4's chat
 * recording service): kept raw as `meta`.
 */
export const STATE_SUBTYPES: ReadonlySet<string> = new Set([
  "attribution_snapshot",
  "ui_telemetry",
  "file_history_snapshot",
  "session_model",
  "session_source",
  "session_sources_snapshot",
  "parent_session",
  "user_text_elements",
  "turn_result",
  "at_command",
  "session_artifact_event",
  "session_artifact_snapshot",
  "branch_checkpoint",
  "goal_state",
  "goal_turn_end",
  "background_task_completed",
  "omni_recall",
  // A subagent's transcript: its session's readiness, a `/fork`'s inherited history (a copy of
  // its parent's), the prompt its launcher showed, a retry.
  "agent_session_ready",
  "agent_bootstrap",
  "agent_launch_prompt",
  "agent_retry",
]);

/** `user` subtypes: what the person typed, and what Qwen Code sends in their place. */
const TYPED = new Set(["mid_turn_user_message", "realtime_message", "cron"]);
const SENT_FOR_THEM = new Set(["notification", "goal_runtime"]);

/** How much of a file's start is read to tell a fork (its copies name their original). */
const HEAD = 64 * 1024;

/** Qwen Code chats. */
export const qwen: LineAdapter<QwenState> = {
  agent: "qwen",
  mode: "lines",
  // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
  // 1: the first version.
  // 2: an assistant record's model call (its `usageMetadata`) is derived for `usage`.
  derivation: 2,
  skipKeys: QWEN_SKIP_KEYS,
  textPath: qwenTextPath,

  roots(ctx: DiscoverContext): string[] {
    return agentRoots("qwen", ctx);
  },

  async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
    for (const root of this.roots(ctx)) {
      for (const path of walkFiles(root, (name) => name.endsWith(".jsonl"), ctx)) {
        if (fileRole(path)) yield { agent: "qwen", locator: path, path, format: "jsonl" };
      }
    }
  },

  archived(source: SourceRef): boolean {
    return isArchived(source.path);
  },

  /** A fork's copies are decided against its original, which is read first. */
  readAfterOthers(source: SourceRef): boolean {
    return headHas(source.path, '"forkedFrom"');
  },

  initialState(source: SourceRef): QwenState {
    const state: QwenState = { version: null, metaTitle: null, agentType: null, forkOf: null };
    if (fileRole(source.path)?.agentId) {
      const meta = subagentMeta(source.path);
      state.metaTitle = meta &&
        (meta.type && meta.description
          ? `${meta.type}: ${meta.description}`
          : meta.description ?? meta.type);
      state.agentType = meta?.type ?? null;
    }
    return state;
  },

  parseLine(
    line: LineInput,
    state: QwenState,
    source: SourceRef,
    recall: Recall = NO_RECALL,
  ): Derived {
    const file = fileRole(source.path) ?? { sessionId: basename(source.path), agentId: null };
    if (line.blank) return makeDerived("meta", null, conversationOf(file, state, null));
    const record = obj(line.value);
    if (!record) {
      const detail = line.value === undefined ? "invalid JSON" : "not a JSON object";
      return drift("unparsable", detail, conversationOf(file, state, null), state, null);
    }
    remember(state, record);
    const conversation = conversationOf(file, state, record);
    const derived = classify(record, state, conversation);
    if (derived.drift) return derived;
    if (revision(derived, record, state, source, recall)) {
      derived.title = null;
      return derived;
    }
    if (state.metaTitle && derived.kind !== "meta") {
      derived.title = { text: titleFrom(state.metaTitle), rank: 2 };
      state.metaTitle = null;
    }
    derived.text = textOfRecord(record);
    return derived;
  },

  parseStreamed(
    scalars: ReadonlyMap<string, Scalar>,
    state: QwenState,
    source: SourceRef,
    recall: Recall = NO_RECALL,
  ): Derived {
    const file = fileRole(source.path) ?? { sessionId: basename(source.path), agentId: null };
    // The few fields classification needs, from the scalars the scanner kept.
    const record: Record<string, unknown> = {};
    for (const key of ["type", "subtype", "uuid", "timestamp", "version", "cwd", "gitBranch"]) {
      const value = scalars.get(key);
      if (value !== undefined) record[key] = value;
    }
    const part: Record<string, unknown> = {};
    const text = scalars.get("message.parts.0.text");
    if (typeof text === "string") part.text = text;
    if (scalars.get("message.parts.0.thought") === true) part.thought = true;
    for (const kind of ["functionCall", "functionResponse"]) {
      const id = scalars.get(`message.parts.0.${kind}.id`);
      const name = scalars.get(`message.parts.0.${kind}.name`);
      if (id !== undefined || name !== undefined) part[kind] = { id, name };
    }
    record.message = { parts: Object.keys(part).length ? [part] : [] };
    const callId = scalars.get("toolCallResult.callId");
    if (typeof callId === "string") record.toolCallResult = { callId };
    const forkedFrom = scalars.get("forkedFrom.sessionId");
    if (typeof forkedFrom === "string") record.forkedFrom = { sessionId: forkedFrom };
    remember(state, record);
    const derived = classify(record, state, conversationOf(file, state, record));
    derived.title = null;
    if (!derived.drift) revision(derived, record, state, source, recall);
    return derived;
  },

  textOf(bytes: Uint8Array): string {
    return qwenLineText(bytes);
  },

  toolOf(bytes: Uint8Array): ToolParts | null {
    const record = jsonRecord(bytes);
    if (!record) return null;
    const parts: ToolParts = { calls: [], results: [], output: null };
    const failed = obj(record.toolCallResult)?.status === "error";
    for (const part of partsOf(record.message)) {
      const call = obj(part.functionCall);
      const response = obj(part.functionResponse);
      if (call) {
        parts.calls.push({
          id: str(call.id),
          name: str(call.name) ?? "tool",
          input: stringLeaves(call.args, QWEN_SKIP_KEYS).join("\n"),
        });
      } else if (response) {
        const id = str(response.id) ?? str(obj(record.toolCallResult)?.callId);
        const error = failed || obj(response.response)?.error !== undefined;
        if (id) parts.results.push({ id, error });
      }
    }
    return parts.calls.length || parts.results.length ? parts : null;
  },
};

/**
 * Keys a record by its uuid, as a revision of any earlier record of its source with that uuid
 * (a rewritten chat read again); and marks a fork's copy that the store holds in the original
 * as copied (kept raw and shown, not indexed). True for such a copy.
 */
function revision(
  derived: Derived,
  record: Record<string, unknown>,
  state: QwenState,
  source: SourceRef,
  recall: Recall,
): boolean {
  const uuid = str(record.uuid);
  if (!uuid) return false;
  derived.key = `uuid:${uuid}`;
  derived.supersedes = true;
  if (!state.forkOf || !obj(record.forkedFrom)) return false;
  const original = join(dirname(source.path), `${state.forkOf}.jsonl`);
  if (!parentHolds(recall, original, uuid)) return false;
  derived.copied = true;
  derived.newMessage = false;
  return true;
}

/**
 * Where a file sits: a chat (`chats/<sessionId>.jsonl`) or a subagent's transcript
 * (`subagents/<sessionId>/agent-<agentId>.jsonl`); null for any other `.jsonl`.
 */
function fileRole(path: string): FileRole | null {
  const name = basename(path);
  const folder = dirname(path);
  if (basename(folder) === "chats" || isArchived(path)) {
    const sessionId = name.slice(0, -".jsonl".length);
    return { sessionId, agentId: null, ...(isArchived(path) ? { archived: true } : {}) };
  }
  const agent = AGENT_FILE.exec(name);
  if (agent && basename(dirname(folder)) === "subagents") {
    return { sessionId: basename(folder), agentId: agent[1]! };
  }
  return null;
}

/** True for an archived chat: Qwen Code's session archive moves it to `chats/archive/`. */
function isArchived(path: string): boolean {
  const folder = dirname(path);
  return basename(folder) === "archive" && basename(dirname(folder)) === "chats";
}

/** True when the first `HEAD` bytes of the file at `path` hold `needle`. */
function headHas(path: string, needle: string): boolean {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
  } catch {
    return false;
  }
  try {
    const buffer = new Uint8Array(HEAD);
    const read = file.readSync(buffer) ?? 0;
    return new TextDecoder().decode(buffer.subarray(0, read)).includes(needle);
  } catch (err) {
    // A folder now (replaced under the pass): its own read reports that, as its source's error.
    if (err instanceof Deno.errors.IsADirectory) return false;
    throw err;
  } finally {
    file.close();
  }
}

function remember(state: QwenState, record: Record<string, unknown>): void {
  const version = str(record.version);
  if (version) state.version = version;
  const forkedFrom = str(obj(record.forkedFrom)?.sessionId);
  if (forkedFrom) state.forkOf ??= forkedFrom;
}

function conversationOf(
  file: FileRole,
  state: QwenState,
  record: Record<string, unknown> | null,
): ConversationInfo {
  const cwd = record ? str(record.cwd) : null;
  const branch = record ? str(record.gitBranch) : null;
  if (file.agentId) {
    return {
      ...subagentConversation(file.sessionId, file.agentId, "qwen"),
      ...(state.agentType ? { agentType: state.agentType } : {}),
      cwd,
      branch,
    };
  }
  return {
    key: `qwen:${file.sessionId}`,
    nativeId: file.sessionId,
    ...(state.forkOf ? { parentKey: `qwen:${state.forkOf}` } : {}),
    archived: file.archived === true,
    cwd,
    branch,
  };
}

function drift(
  category: DriftCategory,
  detail: string,
  conversation: ConversationInfo,
  state: QwenState,
  ts: number | null,
): Derived {
  return makeDerived("meta", null, conversation, {
    ts,
    drift: { category, detail },
    version: state.version,
  });
}

/** Kind, role, time, ids and title of a record (everything but its text). */
function classify(
  record: Record<string, unknown>,
  state: QwenState,
  conversation: ConversationInfo,
): Derived {
  const ts = toEpochMs(record.timestamp);
  const uuid = str(record.uuid);
  const type = str(record.type);
  const subtype = str(record.subtype);
  const base = { ts, messageId: uuid, version: state.version };
  if (!type) return drift("missing_fields", "record without a type", conversation, state, ts);
  switch (type) {
    case "user":
      return classifyUser(record, subtype, conversation, state, base);
    case "assistant": {
      if (subtype && subtype !== "realtime_message") {
        return drift("unknown_type", `assistant/${subtype}`, conversation, state, ts);
      }
      const parts = partsOf(record.message);
      const call = parts.map((p) => obj(p.functionCall)).find((c) => c !== null);
      const said = parts.some((p) => typeof p.text === "string" && p.thought !== true);
      const thought = parts.some((p) => typeof p.text === "string" && p.thought === true);
      const kind = said ? "message" : call ? "tool_call" : thought ? "reasoning" : "message";
      const tokens = obj(record.usageMetadata);
      return makeDerived(kind, "assistant", conversation, {
        ...base,
        partId: kind === "tool_call" ? str(call?.id) : null,
        newMessage: said,
        // Each assistant record is one response of the model (a fork's copy shares its uuid).
        usage: tokens && uuid !== null
          ? geminiApiUsage(
            uuid,
            str(record.model),
            tokens.promptTokenCount,
            tokens.cachedContentTokenCount,
            tokens.candidatesTokenCount,
            tokens.thoughtsTokenCount,
          )
          : null,
      });
    }
    case "tool_result": {
      const response = partsOf(record.message).map((p) => obj(p.functionResponse))
        .find((r) => r !== null);
      const partId = str(obj(record.toolCallResult)?.callId) ?? str(response?.id);
      return makeDerived("tool_result", null, conversation, { ...base, partId });
    }
    case "system":
      return classifySystem(record, subtype, conversation, state, base);
    default:
      return drift("unknown_type", type, conversation, state, ts);
  }
}

type Base = Pick<Derived, "ts" | "messageId" | "version">;

/** A user record: a typed prompt (which may title its chat), or one Qwen Code sent for them. */
function classifyUser(
  record: Record<string, unknown>,
  subtype: string | null,
  conversation: ConversationInfo,
  state: QwenState,
  base: Base,
): Derived {
  if (subtype && !TYPED.has(subtype) && !SENT_FOR_THEM.has(subtype)) {
    return drift("unknown_type", `user/${subtype}`, conversation, state, base.ts);
  }
  const parts = partsOf(record.message);
  const response = parts.map((p) => obj(p.functionResponse)).find((r) => r !== null);
  if (response && !parts.some((p) => typeof p.text === "string")) {
    return makeDerived("tool_result", null, conversation, { ...base, partId: str(response.id) });
  }
  if (subtype && SENT_FOR_THEM.has(subtype)) {
    // A background task's notification or a goal's runtime message: context, folded in show.
    return makeDerived("message", "system", conversation, base);
  }
  const prompt = parts.map((p) => (typeof p.text === "string" ? p.text : "")).join("\n");
  const titled = !subtype && !/^\s*</.test(prompt) && prompt.trim() !== "";
  return makeDerived("message", "user", conversation, {
    ...base,
    newMessage: true,
    title: titled ? { text: titleFrom(prompt), rank: 1 } : null,
  });
}

/** A system record: a title, a rewind, a slash command, a compression, or state. */
function classifySystem(
  record: Record<string, unknown>,
  subtype: string | null,
  conversation: ConversationInfo,
  state: QwenState,
  base: Base,
): Derived {
  switch (subtype) {
    case "custom_title": {
      const payload = obj(record.systemPayload);
      const title = str(payload?.customTitle);
      // A title the model made (`auto`) ranks as a summary; one the person gave above it.
      const rank = payload?.titleSource === "auto" ? 2 : 3;
      return makeDerived("meta", null, conversation, {
        ...base,
        title: title ? { text: titleFrom(title), rank } : null,
      });
    }
    case "chat_compression":
      return makeDerived("summary", null, conversation, base);
    case "rewind":
    case "slash_command":
      return makeDerived("event", "system", conversation, base);
    default:
      if (subtype && STATE_SUBTYPES.has(subtype)) {
        return makeDerived("meta", null, conversation, base);
      }
      return drift(
        "unknown_type",
        subtype ? `system/${subtype}` : "system without a subtype",
        conversation,
        state,
        base.ts,
      );
  }
}
