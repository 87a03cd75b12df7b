// The Cursor CLI adapter: reads the agent transcripts Cursor's `cursor-agent` writes under
// `~/.cursor/projects/<workspace slug>/agent-transcripts/` (JSONL, one line per message), each
// conversation's sub-agents in its `subagents/` folder.
//
// Cursor appends a line per message, and sometimes writes a transcript again whole (the same
// lines, or fewer after it pruned the history). The engine reads such a file again from its start
// as a new generation; each line with words is keyed by its bytes and how many times the same
// line came before it in the file, so a line written again supersedes its earlier copy: search
// finds it once and `show` shows it once.

import { agentRoots } from "../agents.ts";
import { basename, dirname } from "../path.ts";
import {
  type ConversationInfo,
  type Derived,
  type DiscoverContext,
  type LineAdapter,
  type LineInput,
  makeDerived,
  type Scalar,
  type SourceRef,
} from "./adapter.ts";
import { sha256Hex } from "../sha256.ts";
import { obj, str, stringLeaves, titleFrom } from "./_text.ts";
import { walkFiles } from "./_walk.ts";
import {
  blocksOf,
  CURSOR_SKIP_KEYS,
  cursorLineText,
  cursorToolOf,
  promptOf,
  recordText,
} from "./cursor_text.ts";

/**
 * What the adapter remembers in one generation of a file: how often each line with words came,
 * and the workspace folder once a line has shown it.
 */
export interface CursorState {
  seen: Record<string, number>;
  cwd?: string | null;
}

const TRANSCRIPTS = "agent-transcripts";

/** The conversation a transcript file is, from where it lies; in `cwd` when it is known. */
function conversationOf(source: SourceRef, cwd: string | null = null): ConversationInfo {
  const id = basename(source.path, ".jsonl");
  const dir = dirname(source.path);
  if (basename(dir) === "subagents") {
    const parent = basename(dirname(dir));
    return {
      key: `cursor:${id}`,
      nativeId: id,
      parentKey: `cursor:${parent}`,
      subagent: true,
      cwd,
    };
  }
  return { key: `cursor:${id}`, nativeId: id, parentKey: null, subagent: false, cwd };
}

/** The workspace slug a transcript lies under: `<slug>/agent-transcripts/…`. */
function slugOf(path: string): string | null {
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
    if (basename(dir) === TRANSCRIPTS) return basename(dirname(dir));
  }
  return null;
}

/** A folder's workspace slug as Cursor makes it: `/Users/me/my_app` is `Users-me-my-app`. */
function slugFor(folder: string): string {
  return folder.replace(/^\/+/, "").replace(/[^A-Za-z0-9]/g, "-");
}

/**
 * The workspace folder a line shows: no line names it, but tool calls name absolute paths in it
 * (`/Users/me/app/src/x.ts`, `cd /Users/me/app && …`), and the folder is the one among their
 * ancestors whose slug is the transcript's. Null when no path of the line leads to it.
 */
function workspaceOf(blocks: readonly Record<string, unknown>[], slug: string): string | null {
  for (const block of blocks) {
    if (block.type !== "tool_use") continue;
    for (const leaf of stringLeaves(block.input, CURSOR_SKIP_KEYS)) {
      for (const [path] of leaf.matchAll(/\/[^\s"'`;&|<>()]+/g)) {
        for (let dir = path.replace(/\/+$/, ""); dir.length > 1; dir = dirname(dir)) {
          if (slugFor(dir) === slug) return dir;
        }
      }
    }
  }
  return null;
}

/** True for `agent-transcripts/<id>.jsonl`, `…/<id>/<id>.jsonl` and `…/<id>/subagents/<x>.jsonl`. */
function isTranscript(path: string): boolean {
  const dir = dirname(path);
  if (basename(dir) === TRANSCRIPTS) return true;
  if (basename(dir) === "subagents") return basename(dirname(dirname(dir))) === TRANSCRIPTS;
  return basename(dirname(dir)) === TRANSCRIPTS && basename(path, ".jsonl") === basename(dir);
}

/** Cursor CLI's transcripts, as capture reads them. */
export const cursor: LineAdapter<CursorState> = {
  agent: "cursor",
  mode: "lines",
  newlineBefore: true,
  // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
  // 1: the first.
  // 2: read against real transcripts: the workspace folder, from the paths tool calls name.
  derivation: 2,
  skipKeys: CURSOR_SKIP_KEYS,

  roots: (ctx: DiscoverContext): string[] => agentRoots("cursor", ctx),

  async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
    for (const root of agentRoots("cursor", ctx)) {
      // <root>/<slug>/agent-transcripts/<id>/subagents/<x>.jsonl is the deepest.
      for (const path of walkFiles(root, (n) => n.endsWith(".jsonl"), ctx, 4)) {
        if (isTranscript(path)) yield { agent: "cursor", locator: path, path, format: "jsonl" };
      }
    }
  },

  initialState: (): CursorState => ({ seen: {} }),

  parseLine(line: LineInput, state: CursorState, source: SourceRef): Derived {
    const parsed = obj(line.value);
    const slug = slugOf(source.path);
    if (!state.cwd && parsed && slug) state.cwd = workspaceOf(blocksOf(parsed) ?? [], slug);
    const conversation = conversationOf(source, state.cwd ?? null);
    if (line.blank) return makeDerived("meta", null, conversation);
    const record = obj(line.value);
    if (!record) {
      return makeDerived("meta", null, conversation, {
        drift: {
          category: "unparsable",
          detail: line.value === undefined ? "invalid JSON" : "not a JSON object",
        },
      });
    }
    const derived = classify(record, conversation);
    if (derived.drift || !derived.text.trim()) return derived;
    // A line with words is keyed by its bytes and its count: written again, it supersedes.
    const hash = sha256Hex(trimEnd(line.bytes)).slice(0, 32);
    const count = (state.seen[hash] ?? 0) + 1;
    state.seen[hash] = count;
    return { ...derived, key: `line:${hash}:${count}`, supersedes: true };
  },

  parseStreamed(scalars: ReadonlyMap<string, Scalar>, _state: CursorState, source: SourceRef) {
    const role = scalars.get("role");
    const conversation = conversationOf(source);
    if (role === "user") return makeDerived("message", "user", conversation, { newMessage: true });
    if (role === "assistant") return makeDerived("message", "assistant", conversation);
    return makeDerived("meta", null, conversation);
  },

  textOf: (bytes: Uint8Array): string => cursorLineText(bytes),

  toolOf: (bytes: Uint8Array) => cursorToolOf(bytes),
};

/** A line's bytes without its line ending. */
function trimEnd(bytes: Uint8Array): Uint8Array {
  let end = bytes.length;
  while (end > 0 && (bytes[end - 1] === 0x0a || bytes[end - 1] === 0x0d)) end--;
  return bytes.subarray(0, end);
}

/** Kind, role and title of one parsed line. */
function classify(record: Record<string, unknown>, conversation: ConversationInfo): Derived {
  const text = recordText(record);
  if (record.type === "turn_ended") return makeDerived("event", null, conversation, { text });
  if (record.type === "metadata") {
    const overview = str(obj(record.metadata)?.overview);
    return makeDerived("meta", null, conversation, {
      title: overview ? { text: titleFrom(overview), rank: 2 } : null,
    });
  }
  const blocks = blocksOf(record);
  if ((record.role === "user" || record.role === "assistant") && blocks) {
    if (record.role === "user") {
      const prompt = promptOf(blocks.map((b) => str(b.text) ?? "").join("\n"));
      return makeDerived("message", "user", conversation, {
        text,
        newMessage: true,
        title: prompt ? { text: titleFrom(prompt), rank: 1 } : null,
      });
    }
    const words = blocks.some((b) =>
      b.type === "text" && recordText({ message: { content: [b] } })
    );
    const kind = words
      ? "message"
      : blocks.some((b) => b.type === "tool_use")
      ? "tool_call"
      : "message";
    return makeDerived(kind, "assistant", conversation, { text, newMessage: kind === "message" });
  }
  const what = str(record.type) ?? str(record.role);
  return makeDerived("meta", null, conversation, {
    drift: what
      ? { category: "unknown_type", detail: record.type ? `type/${what}` : `role/${what}` }
      : { category: "missing_fields", detail: "a line without a role or a type" },
  });
}
