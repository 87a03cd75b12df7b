// The Factory Droid adapter: reads `~/.factory/sessions/<cwd slug>/<uuid>.jsonl`, one JSON
// record a line, appended as the session goes: `session_start` (the session's id, title and
// cwd), `message` (an Anthropic-style message: text, tool_use, tool_result blocks) and
// `agent_turn_outcome` (how a turn ended). The `<uuid>.settings.json` beside it (model, token
// totals) is not a transcript: droid_settings.ts reads it, for `usage`.
//
// Every record with an id is stored under the key `message:<id>` (the start under `session`) and
// supersedes the record stored under that key before: a session file written again from its
// start (the engine then reads a new generation) is indexed once, its newest copy shown.

import { agentRoots } from "../agents.ts";
import { basename } from "../path.ts";
import {
  type ConversationInfo,
  type Derived,
  type DiscoverContext,
  type Kind,
  type LineAdapter,
  type LineInput,
  makeDerived,
  type Role,
  type Scalar,
  type SourceRef,
  type ToolParts,
} from "./adapter.ts";
import { blockToolParts, obj, str, titleFrom, toEpochMs } from "./_text.ts";
import { walkFiles } from "./_walk.ts";
import { DROID_SKIP_KEYS, droidLineText, droidRecord, droidRecordText } from "./droid_text.ts";
import { claudeTextPath } from "./claude_text.ts";

/** What the adapter remembers between the lines of one session file. */
export interface DroidState {
  cwd: string | null;
  /** The session format `session_start` names (Droid writes no program version here). */
  version: string | null;
}

/** A session file's name: its session id. */
const SESSION_FILE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$/;

/** Droid's injected context (tool lists, skills) is a user message whose id starts so. */
const CONTEXT_ID = "context-";

/** The record types this version knows. */
const KNOWN_TYPES = new Set(["session_start", "message", "agent_turn_outcome"]);

function conversationOf(source: SourceRef, state: DroidState): ConversationInfo {
  const id = basename(source.path, ".jsonl");
  return { key: `droid:${id}`, nativeId: id, cwd: state.cwd };
}

/** Kind, role, conversation and text of one parsed record. */
function derive(record: Record<string, unknown>, state: DroidState, source: SourceRef): Derived {
  const type = str(record.type);
  if (type === "session_start") {
    state.cwd = str(record.cwd) ?? state.cwd;
    const format = record.version;
    if (typeof format === "number" || typeof format === "string") {
      state.version = `session-v${format}`;
    }
  }
  const conversation = conversationOf(source, state);
  const base = { version: state.version, ts: toEpochMs(record.timestamp) };
  if (!type) {
    return makeDerived("meta", null, conversation, {
      ...base,
      drift: { category: "missing_fields", detail: "record without a type" },
    });
  }
  if (!KNOWN_TYPES.has(type)) {
    return makeDerived("meta", null, conversation, {
      ...base,
      drift: { category: "unknown_type", detail: type },
    });
  }
  if (type === "session_start") {
    const title = str(record.title);
    return makeDerived("meta", null, conversation, {
      ...base,
      key: "session",
      supersedes: true,
      title: title
        ? { text: titleFrom(title), rank: record.isSessionTitleManuallySet ? 3 : 2 }
        : null,
    });
  }
  if (type === "agent_turn_outcome") return makeDerived("event", null, conversation, base);
  const id = str(record.id);
  const message = obj(record.message);
  const role = str(message?.role);
  if (!message || !role) {
    return makeDerived("meta", null, conversation, {
      ...base,
      drift: { category: "missing_fields", detail: "message without a role" },
    });
  }
  const [kind, as] = kindOf(role, message.content, id);
  const text = droidRecordText(record);
  const prompt = kind === "message" && as === "user" && text.trim() !== "";
  return makeDerived(kind, as, conversation, {
    ...base,
    messageId: id,
    text,
    newMessage: true,
    ...(id ? { key: `message:${id}`, supersedes: true } : {}),
    title: prompt ? { text: titleFrom(text), rank: 1 } : null,
  });
}

/** What a message is, by its role and blocks. */
function kindOf(role: string, content: unknown, id: string | null): [Kind, Role | null] {
  const types = Array.isArray(content) ? content.map((b) => str(obj(b)?.type)) : ["text"];
  if (role === "user") {
    if (types.includes("tool_result")) return ["tool_result", null];
    // The tools and skills Droid tells the model about, sent as a user message before the prompt.
    if (id?.startsWith(CONTEXT_ID)) return ["message", "system"];
    return ["message", "user"];
  }
  if (role === "assistant") {
    if (types.includes("tool_use")) return ["tool_call", "assistant"];
    if (types.length && types.every((t) => t === "thinking" || t === "redacted_thinking")) {
      return ["reasoning", "assistant"];
    }
    return ["message", "assistant"];
  }
  return ["message", role === "system" ? "system" : null];
}

/** Makes the Factory Droid adapter (`droid` is the one capture uses). */
export function createDroidAdapter(): LineAdapter<DroidState> {
  const roots = (ctx: DiscoverContext): string[] => agentRoots("droid", ctx);
  return {
    agent: "droid",
    mode: "lines",
    // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
    // 1: the first version.
    derivation: 1,
    skipKeys: DROID_SKIP_KEYS,
    textPath: claudeTextPath,
    roots,

    async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
      for (const root of roots(ctx)) {
        // Sessions are `<root>/<cwd slug>/<uuid>.jsonl`.
        for (const path of walkFiles(root, (n) => SESSION_FILE.test(n), ctx, 1)) {
          yield { agent: "droid", locator: path, path, format: "jsonl" };
        }
      }
    },

    initialState(): DroidState {
      return { cwd: null, version: null };
    },

    parseLine(line: LineInput, state: DroidState, source: SourceRef): Derived {
      const record = obj(line.value);
      if (!record) {
        return makeDerived("meta", null, conversationOf(source, state), {
          version: state.version,
          drift: {
            category: "unparsable",
            detail: line.parseError ? "invalid JSON" : "not a JSON object",
          },
        });
      }
      return derive(record, state, source);
    },

    parseStreamed(scalars: ReadonlyMap<string, Scalar>, state: DroidState, source: SourceRef) {
      // A line too long to hold: its type, id, role and first block say what it is.
      const record: Record<string, unknown> = {};
      for (const key of ["type", "id", "timestamp", "cwd", "title", "version"]) {
        const value = scalars.get(key);
        if (value !== undefined) record[key] = value;
      }
      const blockType = scalars.get("message.content.0.type");
      record.message = {
        role: scalars.get("message.role") ?? null,
        content: typeof blockType === "string" ? [{ type: blockType }] : [],
      };
      const derived = derive(record, state, source);
      derived.title = null;
      return derived;
    },

    textOf: droidLineText,

    toolOf(bytes: Uint8Array): ToolParts | null {
      return blockToolParts(obj(droidRecord(bytes)?.message)?.content, DROID_SKIP_KEYS);
    },
  };
}

/** Factory Droid's sessions, as capture reads them. */
export const droid: LineAdapter<DroidState> = createDroidAdapter();
