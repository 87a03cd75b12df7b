// The OpenAI Codex adapter: finds `sessions/YYYY/MM/DD/rollout-*.jsonl` (and `.jsonl.zst`) and
// `archived_sessions/` rollouts, and maps every line of the current and older formats to a kind.

import { agentRoots } from "../agents.ts";
import { basename, sep } from "../path.ts";
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
  type Role,
  type Scalar,
  type SourceRef,
  type ToolParts,
  type Usage,
} from "./adapter.ts";
import { canStat } from "../present.ts";
import { zstdAvailable } from "./zstd.ts";
import { obj, str, stringLeaves, titleFrom, toEpochMs } from "./_text.ts";
import { walkFiles } from "./_walk.ts";
import {
  CODEX_SKIP_KEYS,
  codexLineText,
  contentParts,
  isCodexContext,
  isImageFrame,
  joinParts,
  LINE_TYPES,
  STATE_LINES,
  textOfRecord,
} from "./codex_text.ts";

/**
 * What the adapter remembers between lines of one rollout: the canonical session (the first
 * `session_meta`), and whether the lines being read are history copied from another rollout.
 */
export interface CodexState {
  /** The canonical session id; null until the first `session_meta` (or older header) is read. */
  id: string | null;
  version: string | null;
  cwd: string | null;
  branch: string | null;
  /** `codex:<id>` of the spawning thread (subagents) or of the rollout this one forked from. */
  parentKey: string | null;
  subagent: boolean;
  /** True when the rollout began with the bare mid-2025 header line. */
  legacy: boolean;
  /**
   * True between a later `session_meta` (a fork's copy of its parent's) and the first turn of
   * this rollout's own: those lines are kept and shown, and not indexed when the parent
   * conversation holds them (see `copyIndexed`).
   */
  copying: boolean;
  /**
   * True while copying when the store lacks the rollout the history was copied from (deleted
   * before logbook ran, or never on this machine): the copy is then the only place its words are
   * found, and it is indexed. Decided at the copy's first `session_meta`.
   */
  copyIndexed?: boolean;
  /**
   * The assistant's words in the current turn that one line said and its twin has not repeated
   * yet (Codex writes each reply as a `response_item` message and an `event_msg` agent_message,
   * in either order; an interrupted turn writes only the event). See `pairAgentMessage`.
   */
  replies?: PendingReply[];
  /** Agent messages seen in this rollout: numbers their record keys. */
  agentMessages?: number;
  /** The model of the current turn (`turn_context`), for the usage it reports. */
  model?: string | null;
  /** The running token totals of the last `token_count`, to count each increment once. */
  tokens?: TokenTotals;
}

/** Codex's running token totals (`token_count` `info.total_token_usage`). */
interface TokenTotals {
  input: number;
  cached: number;
  output: number;
}

/** One reply said by one of its two lines: `event` with its record key, or the response item. */
interface PendingReply {
  print: string;
  by: "event" | "item";
  key?: string;
}

/** Options of `codexAdapter`, for tests. */
export interface CodexAdapterOptions {
  /** Whether `.jsonl.zst` rollouts can be read here (default: the runtime's zstd decoder). */
  zstdAvailable?: () => boolean | Promise<boolean>;
}

const UUID_AT_END =
  /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl(?:\.zst)?$/i;
const UUID_V7 = /^([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ROLLOUT = /^rollout-.*\.jsonl(?:\.zst)?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `response_item` payload types that carry no searchable text of their own. */
const QUIET_ITEMS = new Set([
  "ghost_snapshot",
  "other",
  "tool_search_output",
  "configuration_update",
  "compaction_trigger",
]);

/** `response_item` payload types that are tool calls. */
const CALL_ITEMS = new Set([
  "function_call",
  "custom_tool_call",
  "local_shell_call",
  "web_search_call",
  "tool_search_call",
  "image_generation_call",
]);

/** `response_item` payload types that are tool results. */
const RESULT_ITEMS = new Set([
  "function_call_output",
  "custom_tool_call_output",
  "tool_search_output",
]);

/**
 * Every `event_msg` type Codex is known to write. They are kind `event` and unindexed: the
 * conversational ones (`user_message`, `agent_reasoning`, `item_completed`,
 * `task_complete.last_agent_message`…) repeat a `response_item` that is indexed once. An
 * `agent_message` is the exception: see `pairAgentMessage`.
 */
const EVENT_TYPES = new Set([
  "error",
  "warning",
  "stream_error",
  "background_event",
  "deprecation_notice",
  "session_configured",
  "context_compacted",
  "task_started",
  "task_complete",
  "turn_started",
  "turn_complete",
  "turn_aborted",
  "turn_diff",
  "token_count",
  "user_message",
  "agent_message",
  "agent_message_delta",
  "agent_message_content_delta",
  "agent_reasoning",
  "agent_reasoning_delta",
  "agent_reasoning_raw_content",
  "agent_reasoning_raw_content_delta",
  "agent_reasoning_section_break",
  "reasoning_content_delta",
  "reasoning_raw_content_delta",
  "plan_delta",
  "plan_update",
  "item_started",
  "item_completed",
  "raw_response_item",
  "exec_command_begin",
  "exec_command_output_delta",
  "exec_command_end",
  "terminal_interaction",
  "exec_approval_request",
  "apply_patch_approval_request",
  "elicitation_request",
  "request_user_input",
  "request_permissions",
  "patch_apply_begin",
  "patch_apply_updated",
  "patch_apply_end",
  "mcp_startup_update",
  "mcp_startup_complete",
  "mcp_tool_call_begin",
  "mcp_tool_call_end",
  "mcp_list_tools_response",
  "web_search_begin",
  "web_search_end",
  "image_generation_begin",
  "image_generation_end",
  "view_image_tool_call",
  "dynamic_tool_call_request",
  "dynamic_tool_call_response",
  "get_history_entry_response",
  "list_custom_prompts_response",
  "list_skills_response",
  "list_remote_skills_response",
  "remote_skill_downloaded",
  "skills_update_available",
  "undo_started",
  "undo_completed",
  "entered_review_mode",
  "exited_review_mode",
  "shutdown_complete",
  "conversation_path",
  "thread_name_updated",
  "thread_rolled_back",
  "thread_settings_applied",
  "thread_goal_updated",
  "collab_agent_spawn_begin",
  "collab_agent_spawn_end",
  "collab_agent_interaction_begin",
  "collab_agent_interaction_end",
  "collab_waiting_begin",
  "collab_waiting_end",
  "collab_close_begin",
  "collab_close_end",
  "collab_resume_begin",
  "collab_resume_end",
  "sub_agent_activity",
  "guardian_assessment",
  "hook_started",
  "hook_completed",
  "model_reroute",
  "realtime_conversation_started",
  "realtime_conversation_realtime",
  "realtime_conversation_closed",
  "realtime_conversation_sdp",
  "realtime_conversation_list_voices_response",
  "auth_recovery_started",
  "auth_recovery_completed",
  "environment_connected",
  "environment_disconnected",
  "thread_queue_changed",
  "turn_moderation_metadata",
  "model_verification",
  "elicitation_abandoned",
  "raw_response_completed",
  "guardian_warning",
]);

/** At most this many unpaired replies are remembered (a turn has a few; state stays small). */
const MAX_PENDING_REPLIES = 16;

const ROLES: ReadonlySet<string> = new Set<Role>(["user", "assistant", "system", "developer"]);

/** A Codex adapter; `codex` is the one logbook uses, tests inject the zstd check. */
export function codexAdapter(options: CodexAdapterOptions = {}): LineAdapter<CodexState> {
  const canReadZstd = options.zstdAvailable ?? zstdAvailable;
  return {
    agent: "codex",
    mode: "lines",
    // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
    // 1: the version of the build that began recording versions.
    // 2: a token_count event's increment is derived for `usage`.
    derivation: 2,
    skipKeys: CODEX_SKIP_KEYS,

    roots(ctx: DiscoverContext): string[] {
      return agentRoots("codex", ctx);
    },

    async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
      const skip = (reason: string) => ctx.skipped.set(reason, (ctx.skipped.get(reason) ?? 0) + 1);
      const zstd = await canReadZstd();
      for (const root of this.roots(ctx)) {
        for (const path of walkFiles(root, (name) => ROLLOUT.test(name), ctx)) {
          if (!path.endsWith(".zst")) {
            yield { agent: "codex", locator: path, path, format: "jsonl" };
            continue;
          }
          // A rollout being compressed exists twice for a moment: the plain file is complete.
          if (canStat(path.slice(0, -".zst".length))) continue;
          if (!zstd) {
            skip("zstd decoder unavailable");
            continue;
          }
          yield { agent: "codex", locator: path, path, format: "jsonl.zst" };
        }
      }
    },

    archived(source: SourceRef): boolean {
      return isArchived(source);
    },

    initialState(): CodexState {
      return {
        id: null,
        version: null,
        cwd: null,
        branch: null,
        parentKey: null,
        subagent: false,
        legacy: false,
        copying: false,
      };
    },

    parseLine(
      line: LineInput,
      state: CodexState,
      source: SourceRef,
      recall: Recall = NO_RECALL,
    ): Derived {
      if (line.blank) return makeDerived("meta", null, conversationOf(state, source));
      const record = obj(line.value);
      if (!record) {
        const detail = line.value === undefined ? "invalid JSON" : "not a JSON object";
        return drift("unparsable", detail, state, source);
      }
      const derived = classify(record, state, source, false, recall);
      if (derived.drift) return derived;
      const repeats = pairAgentMessage(record, derived, state);
      // Copied history never titles the fork: its own first prompt does.
      if (state.copying) derived.title = null;
      if (state.copying && !state.copyIndexed) {
        derived.copied = true;
        return derived;
      }
      derived.text = repeats ? "" : textOfRecord(record);
      return derived;
    },

    parseStreamed(
      scalars: ReadonlyMap<string, Scalar>,
      state: CodexState,
      source: SourceRef,
      recall: Recall = NO_RECALL,
    ) {
      const derived = classify(recordFromScalars(scalars), state, source, true, recall);
      derived.title = null;
      if (state.copying && !state.copyIndexed) derived.copied = true;
      return derived;
    },

    textOf(bytes: Uint8Array): string {
      return codexLineText(bytes);
    },

    toolOf(bytes: Uint8Array): ToolParts | null {
      try {
        const record = obj(JSON.parse(new TextDecoder().decode(bytes)));
        return record ? toolOfRecord(record) : null;
      } catch {
        return null;
      }
    },
  };
}

/** Codex rollouts. */
export const codex: LineAdapter<CodexState> = codexAdapter();

// ---- classification ----

/** A line split into its type and payload, for both the enveloped and the bare older format. */
interface Shape {
  /** `session_meta`, `response_item`, … or, for a bare older line, what it stands for. */
  line: string;
  payload: Record<string, unknown> | null;
}

function shapeOf(record: Record<string, unknown>, state: CodexState): Shape | null {
  const type = str(record.type);
  if (type && (LINE_TYPES.has(type) || "payload" in record)) {
    return { line: type, payload: obj(record.payload) };
  }
  if ("record_type" in record) return { line: "state", payload: record };
  if (type && (state.legacy || !("timestamp" in record))) {
    return { line: "response_item", payload: record };
  }
  if (!type && str(record.id) && !state.id) return { line: "legacy_meta", payload: record };
  if (type) return { line: type, payload: obj(record.payload) };
  return null;
}

/** Kind, role, time, ids, title and conversation of a line (everything but its text). */
function classify(
  record: Record<string, unknown>,
  state: CodexState,
  source: SourceRef,
  streamed: boolean,
  recall: Recall,
): Derived {
  const shape = shapeOf(record, state);
  if (!shape) return drift("missing_fields", "line without a type", state, source);
  const ts = toEpochMs(record.timestamp);
  const payload = shape.payload;
  switch (shape.line) {
    case "session_meta":
    case "legacy_meta": {
      if (!payload) return missing("session_meta without a payload", state, source, ts);
      const id = str(payload.id);
      if (!state.id && id) adopt(state, payload, shape.line === "legacy_meta");
      else if (id && id !== state.id) startCopy(state, id, recall);
      return makeDerived("meta", null, conversationOf(state, source), {
        ts,
        version: state.version,
      });
    }
    case "state":
      return makeDerived("meta", null, conversationOf(state, source), {
        version: state.version,
        ts,
      });
    case "turn_context": {
      if (payload) {
        endCopyAt(state, str(payload.turn_id));
        state.cwd ??= str(payload.cwd);
        state.model = str(payload.model) ?? state.model ?? null;
      }
      return makeDerived("meta", null, conversationOf(state, source), {
        ts,
        version: state.version,
      });
    }
    case "world_state":
    case "inter_agent_communication_metadata":
      return makeDerived("meta", null, conversationOf(state, source), {
        ts,
        version: state.version,
      });
    case "compacted":
      return makeDerived("summary", null, conversationOf(state, source), {
        ts,
        version: state.version,
      });
    case "event_msg":
      return classifyEvent(payload, state, source, ts);
    case "response_item":
      return classifyItem(payload, state, source, ts, streamed);
    default:
      if (STATE_LINES.has(shape.line)) {
        return makeDerived("meta", null, conversationOf(state, source), {
          ts,
          version: state.version,
        });
      }
      return drift("unknown_type", shape.line, state, source, ts);
  }
}

function classifyEvent(
  payload: Record<string, unknown> | null,
  state: CodexState,
  source: SourceRef,
  ts: number | null,
): Derived {
  const type = payload && str(payload.type);
  if (!payload || !type) return missing("event_msg without a payload type", state, source, ts);
  if (!EVENT_TYPES.has(type)) return drift("unknown_type", `event_msg/${type}`, state, source, ts);
  if (type === "task_started" || type === "turn_started") {
    endCopyAt(state, str(payload.turn_id));
    delete state.replies;
  }
  const name = type === "thread_name_updated" ? str(payload.thread_name) : null;
  return makeDerived("event", null, conversationOf(state, source), {
    ts,
    version: state.version,
    title: name ? { text: titleFrom(name), rank: 3 } : null,
    usage: type === "token_count" ? tokenIncrement(payload, state) : null,
  });
}

/**
 * The model call a `token_count` event reports: Codex writes running totals, so the call is
 * what they grew by since the last event (the event's `last_token_usage` when they went down,
 * as after a compaction). `input_tokens` includes the cached ones, which are cache reads.
 */
function tokenIncrement(payload: Record<string, unknown>, state: CodexState): Usage | null {
  const info = obj(payload.info);
  const total = totalsOf(obj(info?.total_token_usage));
  if (!total) return null;
  const before = state.tokens;
  state.tokens = total;
  const grown = before && total.input >= before.input && total.cached >= before.cached &&
      total.output >= before.output
    ? {
      input: total.input - before.input,
      cached: total.cached - before.cached,
      output: total.output - before.output,
    }
    : before
    ? totalsOf(obj(info?.last_token_usage)) ?? total
    : total;
  if (!grown.input && !grown.cached && !grown.output) return null;
  return {
    call: null,
    model: state.model ?? null,
    input: Math.max(0, grown.input - grown.cached),
    output: grown.output,
    cacheWrite: 0,
    cacheRead: grown.cached,
    cost: null,
  };
}

/** Token totals as Codex writes them, or null when the counts are missing. */
function totalsOf(usage: Record<string, unknown> | null): TokenTotals | null {
  if (!usage) return null;
  const count = (key: string) => {
    const value = usage[key];
    return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
  };
  if (typeof usage.input_tokens !== "number" && typeof usage.output_tokens !== "number") {
    return null;
  }
  return {
    input: count("input_tokens"),
    cached: count("cached_input_tokens"),
    output: count("output_tokens"),
  };
}

function classifyItem(
  payload: Record<string, unknown> | null,
  state: CodexState,
  source: SourceRef,
  ts: number | null,
  streamed: boolean,
): Derived {
  const type = payload && str(payload.type);
  if (!payload || !type) return missing("response_item without a payload type", state, source, ts);
  const conversation = conversationOf(state, source);
  const extra = { ts, version: state.version };
  // Tool calls and their results share `call_id`, so show and the dashboard can fold them.
  const callId = str(payload.call_id) ?? str(payload.id);
  if (type === "message") {
    const role = str(payload.role);
    if (!streamed && payload.content === undefined) {
      return missing("response_item/message without content", state, source, ts);
    }
    const texts = streamed ? [] : contentParts(payload.content);
    if (!streamed && role === "user" && !state.cwd) state.cwd = cwdFromContext(texts);
    const prompt = texts.find((t) => t.trim() !== "" && !isCodexContext(t) && !isImageFrame(t));
    const counted = role === "assistant" || (role === "user" && (streamed || prompt !== undefined));
    return makeDerived("message", role && ROLES.has(role) ? role as Role : null, conversation, {
      ...extra,
      messageId: str(payload.id),
      newMessage: counted,
      title: role === "user" && prompt !== undefined ? { text: titleFrom(prompt), rank: 1 } : null,
    });
  }
  if (type === "reasoning") {
    return makeDerived("reasoning", "assistant", conversation, {
      ...extra,
      messageId: str(payload.id),
    });
  }
  if (type === "agent_message") {
    // A message between agents (multi-agent threads): what one agent told another.
    return makeDerived("message", "assistant", conversation, {
      ...extra,
      messageId: str(payload.id),
    });
  }
  if (type === "compaction" || type === "compaction_summary" || type === "context_compaction") {
    return makeDerived("summary", null, conversation, extra);
  }
  if (RESULT_ITEMS.has(type)) {
    return makeDerived("tool_result", null, conversation, { ...extra, messageId: callId });
  }
  if (CALL_ITEMS.has(type)) {
    return makeDerived("tool_call", "assistant", conversation, { ...extra, messageId: callId });
  }
  if (QUIET_ITEMS.has(type)) return makeDerived("meta", null, conversation, extra);
  return drift("unknown_type", `response_item/${type}`, state, source, ts);
}

/**
 * An agent message is indexed once, whichever of its two lines comes first, and also when only
 * the event exists (a turn aborted before the response item was written):
 * - the event after its response item is a copy: kind `meta`, not indexed;
 * - an event no response item has said yet is the assistant's message, indexed under a record
 *   key; when its response item follows, that item supersedes it (the event leaves the index and
 *   is shown no more) and is not counted as a second message.
 * Replies are matched by their words (whitespace aside) within a turn. Returns true for a line
 * whose words are already indexed.
 */
function pairAgentMessage(
  record: Record<string, unknown>,
  derived: Derived,
  state: CodexState,
): boolean {
  const payload = obj(record.payload);
  if (!payload) return false;
  const line = str(record.type);
  let by: PendingReply["by"];
  let words: string;
  if (line === "event_msg" && payload.type === "agent_message") {
    by = "event";
    words = str(payload.message) ?? "";
  } else if (
    line === "response_item" && payload.type === "message" && payload.role === "assistant"
  ) {
    by = "item";
    words = joinParts(contentParts(payload.content));
  } else return false;
  const print = fingerprint(words);
  if (print === null) {
    if (by === "event") derived.kind = "meta";
    return by === "event";
  }
  const replies = state.replies ?? [];
  const twin = replies.findIndex((r) => r.print === print && r.by !== by);
  let repeats = false;
  if (twin >= 0) {
    const [said] = replies.splice(twin, 1);
    if (by === "event") {
      derived.kind = "meta";
      repeats = true;
    } else {
      derived.key = said!.key ?? null;
      derived.supersedes = true;
      derived.newMessage = false;
    }
  } else if (by === "event") {
    const key = `agent_message:${(state.agentMessages ?? 0) + 1}`;
    state.agentMessages = (state.agentMessages ?? 0) + 1;
    Object.assign(derived, { kind: "message", role: "assistant", newMessage: true, key });
    replies.push({ print, by, key });
  } else replies.push({ print, by });
  state.replies = replies.slice(-MAX_PENDING_REPLIES);
  return repeats;
}

/** The words of a reply, whitespace aside, as a short comparable print; null when empty. */
function fingerprint(text: string): string | null {
  const words = text.replace(/\s+/g, "");
  if (!words) return null;
  let hash = 0x811c9dc5;
  for (let i = 0; i < words.length; i++) {
    hash ^= words.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return `${words.length}:${(hash >>> 0).toString(36)}`;
}

/** Takes the canonical session's identity from the first `session_meta` (or older header). */
function adopt(state: CodexState, meta: Record<string, unknown>, legacy: boolean): void {
  state.id = str(meta.id);
  state.legacy = legacy;
  state.version = str(meta.cli_version);
  state.cwd = str(meta.cwd);
  state.branch = str(obj(meta.git)?.branch);
  const source = obj(meta.source);
  const subagent = source && "subagent" in source ? source.subagent : undefined;
  const spawn = obj(obj(subagent)?.thread_spawn);
  const spawner = str(spawn?.parent_thread_id) ?? str(meta.parent_thread_id);
  state.subagent = subagent !== undefined || meta.thread_source === "subagent";
  const parent = spawner ?? str(meta.forked_from_id);
  state.parentKey = parent ? `codex:${parent}` : null;
}

/**
 * Starts copied history at a `session_meta` of another session: a fork's copy of its parent's
 * (a fork of a fork copies its parent's copy too, whose `session_meta` follows and changes
 * nothing). The copy is indexed when the store lacks the rollout it was copied from, as a Claude
 * Code copy is: a duplicate hit is better than a lost one.
 */
function startCopy(state: CodexState, id: string, recall: Recall): void {
  if (state.copying) return;
  state.copying = true;
  state.copyIndexed = !rolloutStored(recall, id);
}

/** The session ids of the rollouts a store holds, read once per pass (`Recall` is one pass's). */
const storedRollouts = new WeakMap<Recall, Set<string>>();

/**
 * True when the store has the rollout of session `id`, wherever it is (`sessions/…`,
 * `archived_sessions/`, an extra root, compressed or not): Codex names it
 * `rollout-<time>-<id>.jsonl`. Its source stays in the store once its file is gone, and a rebuild
 * keeps it, so the answer is the same then.
 */
function rolloutStored(recall: Recall, id: string): boolean {
  let ids = storedRollouts.get(recall);
  if (!ids) {
    ids = new Set();
    for (const locator of recall.sourcesOf("codex")) {
      const name = basename(locator);
      if (!ROLLOUT.test(name)) continue;
      // The id ends the name: a slice, not a search (a pass may list tens of thousands).
      const id = name.slice(0, name.lastIndexOf(".jsonl")).slice(-36);
      if (UUID.test(id)) ids.add(id.toLowerCase());
    }
    storedRollouts.set(recall, ids);
  }
  return ids.has(id.toLowerCase());
}

/**
 * Ends copied history at this rollout's own first turn. Turn ids are UUIDv7: a copied turn
 * began before this session was created, an own one after. When that cannot be told (no id,
 * or not v7), copying ends: a duplicate hit is better than a lost one.
 */
function endCopyAt(state: CodexState, turnId: string | null): void {
  if (!state.copying) return;
  const turn = turnId ? v7Time(turnId) : null;
  const session = state.id ? v7Time(state.id) : null;
  if (turn !== null && session !== null && turn < session) return;
  state.copying = false;
  delete state.copyIndexed;
}

/** The 48-bit millisecond time of a UUIDv7 as 12 hex digits (comparable as strings), or null. */
function v7Time(id: string): string | null {
  const match = UUID_V7.exec(id);
  return match ? (match[1]! + match[2]!).toLowerCase() : null;
}

function conversationOf(state: CodexState, source: SourceRef): ConversationInfo {
  const id = state.id ?? UUID_AT_END.exec(basename(source.path))?.[1] ??
    basename(source.path).replace(/\.jsonl(\.zst)?$/, "");
  return {
    key: `codex:${id}`,
    nativeId: id,
    parentKey: state.parentKey,
    subagent: state.subagent,
    cwd: state.cwd,
    branch: state.branch,
    archived: isArchived(source),
  };
}

/** True for a rollout under `archived_sessions/` (where `codex archive` moves it). */
function isArchived(source: SourceRef): boolean {
  return source.path.split(sep).includes("archived_sessions");
}

/** The cwd an injected environment context names (older rollouts have no other record of it). */
function cwdFromContext(texts: string[]): string | null {
  for (const text of texts) {
    if (!text.trimStart().startsWith("<environment_context>")) continue;
    const match = /<cwd>([^<\n]+)<\/cwd>/.exec(text) ??
      /^Current working directory: (.+)$/m.exec(text);
    if (match) return match[1]!.trim();
  }
  return null;
}

function drift(
  category: DriftCategory,
  detail: string,
  state: CodexState,
  source: SourceRef,
  ts: number | null = null,
): Derived {
  return makeDerived("meta", null, conversationOf(state, source), {
    ts,
    drift: { category, detail },
    version: state.version,
  });
}

function missing(
  detail: string,
  state: CodexState,
  source: SourceRef,
  ts: number | null,
): Derived {
  return drift("missing_fields", detail, state, source, ts);
}

/** The few fields classification needs, rebuilt from what the streaming scanner kept. */
function recordFromScalars(scalars: ReadonlyMap<string, Scalar>): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  const payload: Record<string, unknown> = {};
  for (const [path, value] of scalars) {
    const parts = path.split(".");
    const top = parts[0]!;
    if (parts.length === 1) record[top] = value;
    if (top !== "payload" || parts.length < 2) continue;
    let into = payload;
    for (const part of parts.slice(1, -1)) {
      const next = obj(into[part]) ?? {};
      into[part] = next;
      into = next;
    }
    into[parts[parts.length - 1]!] = value;
  }
  if (scalars.has("payload.type") || Object.keys(payload).length) record.payload = payload;
  return record;
}

/** The tool call or result of a response item (current or older format), or null. */
function toolOfRecord(record: Record<string, unknown>): ToolParts | null {
  const type = str(record.type);
  const item = type === "response_item"
    ? obj(record.payload)
    : type && !LINE_TYPES.has(type) && !("payload" in record)
    ? record
    : null;
  const kind = item && str(item.type);
  if (!item || !kind) return null;
  const id = str(item.call_id) ?? str(item.id);
  const call = (name: string, input: string): ToolParts => ({
    calls: [{ id, name, input }],
    results: [],
    output: null,
  });
  switch (kind) {
    case "function_call":
    case "tool_search_call":
      return call(str(item.name) ?? kind, callInput(item.arguments));
    case "custom_tool_call":
      return call(str(item.name) ?? kind, str(item.input) ?? "");
    case "local_shell_call": {
      const action = obj(item.action);
      return call(
        "shell",
        joinParts([commandLine(action?.command), str(action?.working_directory) ?? ""]),
      );
    }
    case "web_search_call": {
      const action = obj(item.action);
      const asked = action &&
        { query: action.query, queries: action.queries, url: action.url, pattern: action.pattern };
      return call("web_search", joinParts(stringLeaves(asked, CODEX_SKIP_KEYS)));
    }
    case "image_generation_call":
      return call("image_generation", str(item.revised_prompt) ?? "");
    case "function_call_output":
    case "custom_tool_call_output":
    case "tool_search_output":
      return id ? { calls: [], results: [{ id, error: failed(item.output) }], output: null } : null;
    default:
      return null;
  }
}

/** A call's arguments as text, the command first when it runs one. */
function callInput(args: unknown): string {
  let value: unknown = args;
  if (typeof args === "string") {
    try {
      value = JSON.parse(args);
    } catch {
      return args;
    }
  }
  const fields = obj(value);
  if (!fields) return joinParts(stringLeaves(value, CODEX_SKIP_KEYS));
  const { command, cmd, ...rest } = fields;
  const run = Array.isArray(command) ? commandLine(command) : str(cmd) ?? str(command) ?? "";
  return joinParts([run, ...stringLeaves(rest, CODEX_SKIP_KEYS)]);
}

/** An argv as the command line a person would type (`bash -lc <script>` as the script). */
function commandLine(argv: unknown): string {
  if (!Array.isArray(argv)) return "";
  const words = argv.filter((w): w is string => typeof w === "string");
  if (words.length === 3 && /^(ba|z)?sh$/.test(words[0]!) && /^-l?c$/.test(words[1]!)) {
    return words[2]!;
  }
  return words.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", "'\\''")}'`))
    .join(" ");
}

/** True when a tool's output says it failed (a non-zero exit code in its metadata). */
function failed(output: unknown): boolean {
  if (typeof output !== "string" || !output.trimStart().startsWith("{")) return false;
  try {
    const code = obj(obj(JSON.parse(output))?.metadata)?.exit_code;
    return typeof code === "number" && code !== 0;
  } catch {
    return false;
  }
}
