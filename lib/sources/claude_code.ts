// The Claude Code adapter: finds `projects/<encoded cwd>/<sessionId>.jsonl` transcripts and their
// subagents, and maps every record type to a kind, role, conversation and searchable text.

import { agentRoots } from "../agents.ts";
import { basename, dirname, join } from "../path.ts";
import {
  type ConversationInfo,
  type Derived,
  type DiscoverContext,
  type LineAdapter,
  type LineInput,
  makeDerived,
  NO_RECALL,
  type Recall,
  type Scalar,
  type SourceRef,
  type ToolParts,
  type Usage,
} from "./adapter.ts";
import { obj, str, stringLeaves, titleFrom, toEpochMs } from "./_text.ts";
import { walkFiles } from "./_walk.ts";
import { CLAUDE_SKIP_KEYS, claudeLineText, claudeTextPath, textOfRecord } from "./claude_text.ts";
import {
  AGENT_FILE,
  isSummaryOnly,
  isSummaryOnlyFile,
  parentHolds,
  parentSessionPath,
  persistedOutputs,
  sessionFolder,
  subagentConversation,
  subagentMeta,
  summarySession,
} from "./_claude_files.ts";

/** What the adapter remembers between lines of one source generation. */
interface ClaudeState {
  sessionId: string | null;
  version: string | null;
  lastMessageId: string | null;
  /**
   * Inline sidechains (Claude Code 2.0 and older wrote a Task subagent's turns into the main
   * file, `isSidechain: true` without `agentId`): the sidechain root of recent sidechain uuids,
   * and the root of the last one.
   */
  sidechains?: Record<string, string>;
  sidechain?: string | null;
  /** The title a subagent's `.meta.json` gives it, until a record has carried it. */
  metaTitle?: string | null;
  /** The type a subagent's `.meta.json` names (`Explore`), carried by its conversation. */
  agentType?: string | null;
  /** True for a copy (`agent-acompact-*`, `agent-aside_question-*`): it repeats its parent. */
  copy?: boolean;
  /** Whether the file holds only `summary` lines (known once its first summary is read). */
  summaryOnly?: boolean;
}

/** How a file's place on disk identifies its conversation. */
interface FileRole {
  /** Session id known from the path (a UUID file name, or the parent folder of `subagents/`). */
  sessionId: string | null;
  /** Agent id when the file is a subagent transcript. */
  agentId: string | null;
  stem: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Recognised record types that carry no conversation text: session state, request records
 * (`api-request*` repeat what the messages already hold), cost and links. Surveyed from Claude
 * Code 2.0 to 2.1.332 (its list of transcript entry types) and from real transcripts.
 */
const META_TYPES = new Set([
  "file-history-snapshot",
  "file-history-delta",
  "progress",
  "queue-operation",
  "attachment",
  "permission-mode",
  "mode",
  "last-prompt",
  "agent-name",
  "agent-color",
  "agent-setting",
  "worktree-state",
  "pr-link",
  "frame-link",
  "relocated",
  "tag",
  // A session continued from Claude Code on the web starts with it.
  "teleported-from",
  "teleport-skipped-branch",
  "bridge-session",
  "continued-in",
  "derived-from",
  "ended-by-model",
  "history-suppression",
  "attribution-snapshot",
  "isolation-latch",
  "session-owner",
  "dev-mods",
  "memory-mode",
  "atis-latch",
  "tools-used",
  "cost-state",
  "content-replacement",
  "data-flow-records",
  "data-flow-incomplete",
  "artifact-comment-monitor",
  "artifact-autoreact-ledger",
  "api-request",
  "api-request-resumed",
  "api-request-shape",
  "api-request-blob",
  "fork-context-ref",
  "observer-ref",
  "resume-head-vouch",
  "speculation-accept",
  "marble-origami-commit",
  "marble-origami-snapshot",
  "started",
  "result",
]);

/** Subagent files that repeat their parent's messages under the same uuids before their own. */
const COPY_AGENT = /^(acompact|aside_question)-/;
/** Inline sidechain uuids remembered to find each record's sidechain. */
const SIDECHAIN_MEMORY = 512;

/** Claude Code transcripts. */
export const claudeCode: LineAdapter<ClaudeState> = {
  agent: "claude",
  mode: "lines",
  // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
  // 1: the version of the build that began recording versions.
  // 2: an assistant record's model call (tokens, cost) is derived for `usage`.
  derivation: 2,
  skipKeys: CLAUDE_SKIP_KEYS,
  textPath: claudeTextPath,

  roots(ctx: DiscoverContext): string[] {
    return agentRoots("claude", ctx);
  },

  async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
    for (const root of this.roots(ctx)) {
      for (const path of walkFiles(root, (name) => name.endsWith(".jsonl"), ctx)) {
        yield { agent: "claude", locator: path, path, format: "jsonl" };
      }
    }
  },

  /** Copies are decided against their parent, summary-only files against their folder. */
  readAfterOthers(source: SourceRef): boolean {
    const file = fileRole(source.path);
    if (file.agentId) return COPY_AGENT.test(file.agentId);
    return file.sessionId !== null && isSummaryOnlyFile(source.path);
  },

  initialState(source: SourceRef): ClaudeState {
    const state: ClaudeState = { sessionId: null, version: null, lastMessageId: null };
    const file = fileRole(source.path);
    if (file.agentId) {
      const meta = subagentMeta(source.path);
      state.metaTitle = meta &&
        (meta.type && meta.description
          ? `${meta.type}: ${meta.description}`
          : meta.description ?? meta.type);
      if (meta?.type) state.agentType = meta.type;
      if (COPY_AGENT.test(file.agentId)) state.copy = true;
    }
    return state;
  },

  parseLine(
    line: LineInput,
    state: ClaudeState,
    source: SourceRef,
    recall: Recall = NO_RECALL,
  ): Derived {
    const file = fileRole(source.path);
    if (line.blank) return makeDerived("meta", null, conversationOf(file, state, null, source));
    const record = obj(line.value);
    if (!record) {
      return drift(
        "unparsable",
        line.value === undefined ? "invalid JSON" : "not a JSON object",
        file,
        state,
        source,
      );
    }
    const type = str(record.type);
    remember(state, record, file);
    if (!type) return drift("missing_fields", "record without a type", file, state, source);
    const conversation = type === "summary"
      ? summaryConversation(record, state, source, recall) ??
        conversationOf(file, state, record, source)
      : conversationOf(file, state, record, source);
    const derived = classify(type, record, state, conversation);
    derived.version = state.version;
    if (derived.drift) return derived;
    if (state.copy && isCopied(record, state, source, recall)) {
      // Kept raw and shown, not indexed: the parent conversation already holds it.
      derived.title = null;
      derived.newMessage = false;
      derived.copied = true;
      return derived;
    }
    titleFromMeta(derived, state);
    derived.text = textOfRecord(type, record);
    if (derived.kind === "tool_result" && outputCaptured(record, state, source, recall)) {
      // A preview of an output file the store has: shown with it, searched only there.
      derived.copied = true;
      derived.joined = true;
    }
    return derived;
  },

  parseStreamed(
    scalars: ReadonlyMap<string, Scalar>,
    state: ClaudeState,
    source: SourceRef,
    recall: Recall = NO_RECALL,
  ) {
    const file = fileRole(source.path);
    // Rebuild the few fields classification needs from the scalars the scanner kept.
    const record: Record<string, unknown> = {};
    for (
      const key of [
        "type",
        "subtype",
        "sessionId",
        "version",
        "agentId",
        "uuid",
        "parentUuid",
        "cwd",
      ]
    ) {
      const value = scalars.get(key);
      if (value !== undefined) record[key] = value;
    }
    for (
      const key of [
        "timestamp",
        "gitBranch",
        "isSidechain",
        "isCompactSummary",
        "isMeta",
        "requestId",
        "costUSD",
      ]
    ) {
      const value = scalars.get(key);
      if (value !== undefined) record[key] = value;
    }
    const usage: Record<string, Scalar> = {};
    for (const [path, value] of scalars) {
      if (path.startsWith("message.usage.") && !path.slice(14).includes(".")) {
        usage[path.slice(14)] = value;
      }
    }
    const blockType = scalars.get("message.content.0.type");
    const block: Record<string, unknown> = { type: blockType };
    for (const key of ["id", "tool_use_id"]) {
      const value = scalars.get(`message.content.0.${key}`);
      if (typeof value === "string") block[key] = value;
    }
    record.message = {
      role: scalars.get("message.role") ?? null,
      id: scalars.get("message.id") ?? null,
      model: scalars.get("message.model") ?? null,
      content: typeof blockType === "string" ? [block] : "",
      ...(Object.keys(usage).length ? { usage } : {}),
    };
    const type = str(record.type);
    remember(state, record, file);
    if (!type) return drift("missing_fields", "record without a type", file, state, source);
    const derived = classify(type, record, state, conversationOf(file, state, record, source));
    derived.version = state.version;
    derived.title = null;
    if (state.copy && isCopied(record, state, source, recall)) {
      derived.newMessage = false;
      derived.copied = true;
    }
    return derived;
  },

  textOf(bytes: Uint8Array): string {
    return claudeLineText(bytes);
  },

  toolOf(bytes: Uint8Array): ToolParts | null {
    let record: Record<string, unknown> | null;
    try {
      record = obj(JSON.parse(new TextDecoder().decode(bytes)));
    } catch {
      return null;
    }
    const content = obj(record?.message)?.content;
    if (!Array.isArray(content)) return null;
    const parts: ToolParts = { calls: [], results: [], output: null };
    for (const item of content) {
      const block = obj(item);
      if (block?.type === "tool_use" || block?.type === "server_tool_use") {
        parts.calls.push({
          id: str(block.id),
          name: str(block.name) ?? "tool",
          input: stringLeaves(block.input, CLAUDE_SKIP_KEYS).join("\n"),
        });
      } else if (block?.type === "tool_result") {
        const id = str(block.tool_use_id);
        if (id) parts.results.push({ id, error: block.is_error === true });
      }
    }
    return parts.calls.length || parts.results.length ? parts : null;
  },
};

function fileRole(path: string): FileRole {
  const name = basename(path);
  const stem = name.replace(/\.jsonl$/, "");
  const agent = AGENT_FILE.exec(name);
  if (agent) {
    const parent = dirname(path);
    const sessionDir = basename(dirname(parent));
    const sessionId = basename(parent) === "subagents" && UUID.test(sessionDir) ? sessionDir : null;
    return { sessionId, agentId: agent[1]!, stem };
  }
  return { sessionId: UUID.test(stem) ? stem : null, agentId: null, stem };
}

function remember(state: ClaudeState, record: Record<string, unknown>, file: FileRole): void {
  const version = str(record.version);
  if (version) state.version = version;
  if (!state.sessionId) state.sessionId = file.sessionId ?? str(record.sessionId);
  state.sidechain = sidechainOf(state, record, file);
}

/**
 * The root uuid of the inline sidechain a record of an older main file belongs to, or null for
 * a record of the main conversation. A sidechain starts at a record without a parent and goes
 * on through records whose parent is in it.
 */
function sidechainOf(
  state: ClaudeState,
  record: Record<string, unknown>,
  file: FileRole,
): string | null {
  if (file.agentId || record.isSidechain !== true || str(record.agentId)) return null;
  const uuid = str(record.uuid);
  const parent = str(record.parentUuid);
  const known = state.sidechains ?? {};
  const root = (parent ? known[parent] : undefined) ??
    (parent === null && uuid ? uuid : state.sidechain ?? uuid ?? "sidechain");
  if (uuid) {
    known[uuid] = root;
    const keys = Object.keys(known);
    if (keys.length > SIDECHAIN_MEMORY) delete known[keys[0]!];
    state.sidechains = known;
  }
  return root;
}

/** True when a copy's record repeats one its parent session holds in the store (the same uuid). */
function isCopied(
  record: Record<string, unknown>,
  state: ClaudeState,
  source: SourceRef,
  recall: Recall,
): boolean {
  const uuid = str(record.uuid);
  const session = state.sessionId;
  if (!uuid || !session) return false;
  return parentHolds(recall, parentSessionPath(source.path, session), uuid);
}

/**
 * True when a tool result is a `<persisted-output>` preview whose whole output the store has
 * (`<session>/tool-results/<name>`, a source of its own, `claude_tool_results.ts`). Its source
 * is known from the start of the pass that finds it, so this does not depend on which of the
 * two is read first, nor on either file still being there.
 */
function outputCaptured(
  record: Record<string, unknown>,
  state: ClaudeState,
  source: SourceRef,
  recall: Recall,
): boolean {
  const session = state.sessionId;
  if (!session) return false;
  const folder = join(sessionFolder(source.path, session), "tool-results");
  return persistedOutputs(record).some(({ name }) => recall.has(join(folder, name)));
}

/** Gives the first record of a subagent the title its `.meta.json` holds. */
function titleFromMeta(derived: Derived, state: ClaudeState): void {
  if (!state.metaTitle || !derived.conversation) return;
  derived.title = { text: titleFrom(state.metaTitle), rank: 2 };
  state.metaTitle = null;
}

/**
 * A summary of a summary-only file (Claude Code 2.0 wrote them apart from the session) belongs
 * to the session that holds the record its `leafUuid` names; null for any other summary.
 */
function summaryConversation(
  record: Record<string, unknown>,
  state: ClaudeState,
  source: SourceRef,
  recall: Recall,
): ConversationInfo | null {
  const leaf = str(record.leafUuid);
  if (!leaf || str(record.sessionId)) return null;
  state.summaryOnly ??= isSummaryOnly(recall, source.locator);
  const session = state.summaryOnly ? summarySession(recall, source.locator, leaf) : null;
  if (!session) return null;
  return { key: `claude:${session}`, nativeId: session };
}

function conversationOf(
  file: FileRole,
  state: ClaudeState,
  record: Record<string, unknown> | null,
  source: SourceRef,
): ConversationInfo {
  const sessionId = file.sessionId ?? state.sessionId ?? file.stem;
  const cwd = record ? str(record.cwd) : null;
  const branch = record ? str(record.gitBranch) : null;
  let agentId = file.agentId;
  // Older versions wrote sidechains inline in the main transcript: with `agentId`, or (2.0 and
  // older) without, when the sidechain's root uuid names it.
  if (!agentId && record && record.isSidechain === true) {
    agentId = str(record.agentId) ??
      (state.sidechain ? `sidechain-${state.sidechain}` : null);
  }
  void source;
  if (agentId) {
    return {
      ...subagentConversation(sessionId, agentId),
      ...(file.agentId && state.agentType ? { agentType: state.agentType } : {}),
      cwd,
      branch,
    };
  }
  return { key: `claude:${sessionId}`, nativeId: sessionId, cwd, branch };
}

function drift(
  category: "unknown_type" | "unparsable" | "missing_fields",
  detail: string,
  file: FileRole,
  state: ClaudeState,
  source: SourceRef,
): Derived {
  return makeDerived("meta", null, conversationOf(file, state, null, source), {
    drift: { category, detail },
    version: state.version,
  });
}

/** Kind, role, time, ids and title of a record (everything but its text). */
function classify(
  type: string,
  record: Record<string, unknown>,
  state: ClaudeState,
  conversation: ConversationInfo,
): Derived {
  const ts = toEpochMs(record.timestamp);
  const uuid = str(record.uuid);
  switch (type) {
    case "user":
      return classifyUser(record, state, conversation, ts, uuid);
    case "assistant":
      return classifyAssistant(record, state, conversation, ts, uuid);
    case "system": {
      const kind = record.subtype === "compact_boundary" ? "summary" : "event";
      return makeDerived(kind, kind === "summary" ? null : "system", conversation, {
        ts,
        messageId: uuid,
      });
    }
    case "summary": {
      const summary = str(record.summary);
      return makeDerived("summary", null, conversation, {
        ts,
        title: summary ? { text: titleFrom(summary), rank: 2 } : null,
      });
    }
    case "custom-title":
    case "ai-title": {
      const title = str(record.customTitle) ?? str(record.aiTitle);
      return makeDerived("meta", null, conversation, {
        ts,
        title: title ? { text: titleFrom(title), rank: type === "custom-title" ? 3 : 2 } : null,
      });
    }
    default:
      if (META_TYPES.has(type)) {
        return makeDerived("meta", null, conversation, { ts, messageId: uuid });
      }
      return makeDerived("meta", null, conversation, {
        ts,
        drift: { category: "unknown_type", detail: type },
      });
  }
}

/** A user record: a prompt (which may title its conversation), a tool's result, or a summary. */
function classifyUser(
  record: Record<string, unknown>,
  state: ClaudeState,
  conversation: ConversationInfo,
  ts: number | null,
  uuid: string | null,
): Derived {
  const message = obj(record.message);
  if (!message) return missing("user record without a message", conversation, state, ts);
  const content = message.content;
  if (record.isCompactSummary === true) {
    return makeDerived("summary", null, conversation, { ts, messageId: uuid });
  }
  const blocks = Array.isArray(content) ? content.map(obj) : [];
  const result = blocks.find((b) => b?.type === "tool_result");
  if (result) {
    // The part id is the tool use's: the call, its result and a persisted output share it.
    const partId = str(result.tool_use_id);
    return makeDerived("tool_result", null, conversation, { ts, messageId: uuid, partId });
  }
  const prompt = typeof content === "string"
    ? content
    : blocks.filter((b) => b?.type === "text").map((b) => str(b!.text) ?? "").join("\n");
  const titled = record.isMeta !== true && !/^\s*</.test(prompt) && prompt.trim() !== "";
  return makeDerived("message", "user", conversation, {
    ts,
    messageId: uuid,
    newMessage: true,
    title: titled ? { text: titleFrom(prompt), rank: 1 } : null,
  });
}

/** An assistant record: text, a tool call or reasoning, by the blocks its message holds. */
function classifyAssistant(
  record: Record<string, unknown>,
  state: ClaudeState,
  conversation: ConversationInfo,
  ts: number | null,
  uuid: string | null,
): Derived {
  const message = obj(record.message);
  if (!message) return missing("assistant record without a message", conversation, state, ts);
  const types = new Set(
    (Array.isArray(message.content) ? message.content : []).map((b) => obj(b)?.type),
  );
  const kind = typeof message.content === "string" || types.has("text")
    ? "message"
    : types.has("tool_use") || types.has("server_tool_use")
    ? "tool_call"
    : types.has("thinking") || types.has("redacted_thinking")
    ? "reasoning"
    : "message";
  const messageId = str(message.id) ?? uuid;
  const newMessage = kind === "message" && messageId !== state.lastMessageId;
  if (kind === "message" && messageId) state.lastMessageId = messageId;
  const call = kind === "tool_call" && Array.isArray(message.content)
    ? message.content.map(obj).find((b) => b?.type === "tool_use" || b?.type === "server_tool_use")
    : undefined;
  const partId = call ? str(call.id) : null;
  const usage = usageOf(record, message);
  return makeDerived(kind, "assistant", conversation, {
    ts,
    messageId,
    newMessage,
    partId,
    usage,
  });
}

/**
 * The model call an assistant record reports: Claude Code writes one record per content block of
 * a reply, each with the reply's `message.id`, `requestId` and usage, so the call is named by the
 * pair (the message id alone without a request id) and counted once. `costUSD`, which older
 * versions wrote, is the cost as recorded.
 */
function usageOf(record: Record<string, unknown>, message: Record<string, unknown>): Usage | null {
  const usage = obj(message.usage);
  if (!usage) return null;
  const count = (key: string) => {
    const value = usage[key];
    return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
  };
  const id = str(message.id);
  const request = str(record.requestId);
  return {
    call: id === null ? null : request === null ? id : `${id}:${request}`,
    model: str(message.model),
    input: count("input_tokens"),
    output: count("output_tokens"),
    cacheWrite: count("cache_creation_input_tokens"),
    cacheRead: count("cache_read_input_tokens"),
    cost: typeof record.costUSD === "number" && Number.isFinite(record.costUSD)
      ? record.costUSD
      : null,
  };
}

function missing(
  detail: string,
  conversation: ConversationInfo,
  state: ClaudeState,
  ts: number | null,
): Derived {
  return makeDerived("meta", null, conversation, {
    ts,
    drift: { category: "missing_fields", detail },
    version: state.version,
  });
}
