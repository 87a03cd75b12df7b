// Claude Code's persisted tool output: when a tool result is too large for the transcript, Claude
// Code keeps a 2 KB `<persisted-output>` preview in the `tool_result` and writes the whole output
// to `projects/<encoded cwd>/<sessionId>/tool-results/<id>.txt` (`.json` for structured output).
// Each such file is a source of its own: its bytes are one record, kept exactly, whose text is
// indexed as a tool result of the session, so the full output is found and outlives the folder.
// The transcript record whose preview names the file gives it its time, its conversation (the
// session, or the subagent that ran the tool), its message id (that record's uuid) and its part
// id (the tool use id, which the call and the preview carry too), read from what the store holds
// of the transcript, so it is the same when the transcript is gone and after a rebuild. It
// completes the preview: the preview leaves the index, and `show` places the output right after
// it, with its call.

import { basename, dirname, join } from "../path.ts";
import {
  type ConversationInfo,
  type Derived,
  type DiscoverContext,
  type Lookup,
  makeDerived,
  NO_RECALL,
  type Recall,
  type RowAdapter,
  type RowRead,
  type SourceRef,
} from "./adapter.ts";
import { claudeCode } from "./claude_code.ts";
import { isToolResultFile, outputText, TOOL_RESULT_SKIP_KEYS } from "./claude_text.ts";
import { AGENT_FILE, namingRecord, subagentConversation } from "./_claude_files.ts";
import { str, toEpochMs } from "./_text.ts";
import { childPath, listFolder, walkFiles } from "./_walk.ts";
import { sha256Hex } from "../sha256.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Output files; `hook-*` files in the same folder are hook output, not a tool's. */
const OUTPUT_FILE = /^(?!hook-).+\.(txt|json)$/;

/** Nothing is carried between sources: a file is one record. */
type NoState = Record<string, never>;

/** Claude Code's `tool-results/` files, read whole, one record each. */
export const claudeToolResults: RowAdapter<NoState> = {
  agent: "claude",
  mode: "rows",
  // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
  // 1: the version of the build that began recording versions.
  derivation: 1,
  skipKeys: TOOL_RESULT_SKIP_KEYS,

  claims: isToolResultFile,

  /** An output file is decided from the transcript record that names it. */
  readAfterOthers(): boolean {
    return true;
  },

  roots(ctx: DiscoverContext): string[] {
    return claudeCode.roots(ctx);
  },

  async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
    for (const root of this.roots(ctx)) {
      for (const project of subfolders(join(root), () => true, ctx)) {
        for (const session of subfolders(project, (name) => UUID.test(name), ctx)) {
          // Most sessions have none: their folder's listing tells, without a failed open.
          for (const folder of subfolders(session, (name) => name === "tool-results", ctx)) {
            const accept = (name: string) => OUTPUT_FILE.test(name);
            for (const path of walkFiles(folder, accept, ctx, 0)) {
              yield { agent: "claude", locator: path, path, format: "rows" };
            }
          }
        }
      }
    }
  },

  fingerprint(source: SourceRef): string {
    try {
      const stat = Deno.lstatSync(source.path);
      return `${stat.size}:${stat.mtime?.getTime() ?? 0}:${stat.ino ?? 0}`;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return "gone";
      throw err;
    }
  },

  initialState(): NoState {
    return {};
  },

  /**
   * The file's bytes as one row, unless they are the bytes read last time (`cursorKey` is their
   * length and digest): a file rewritten with other bytes becomes a newer record that supersedes
   * the older one in the index.
   */
  async readRows(source: SourceRef, cursorKey: string | null): Promise<RowRead> {
    const bytes = await Deno.readFile(source.path);
    const key = `${bytes.length}:${sha256Hex(bytes).slice(0, 16)}`;
    if (key === cursorKey || bytes.length === 0) return { rows: [], cursorKey: key, more: false };
    return { rows: [bytes], cursorKey: key, more: false };
  },

  parseRow(
    raw: Uint8Array,
    _state: NoState,
    source: SourceRef,
    _lookup: Lookup,
    recall: Recall = NO_RECALL,
  ): Derived {
    const folder = dirname(dirname(source.path));
    const sessionId = basename(folder);
    const name = basename(source.path);
    const text = outputText(raw, source);
    const session: ConversationInfo = { key: `claude:${sessionId}`, nativeId: sessionId };
    const naming = namingRecord(recall, transcriptsOf(recall, folder), name);
    if (!naming) {
      // Not named by a stored record: the session's, under the id Claude Code gave the file
      // (often the tool use id).
      return makeDerived("tool_result", null, session, {
        partId: name.replace(/\.(txt|json)$/, ""),
        text,
        key: "output",
        supersedes: true,
      });
    }
    const agent = AGENT_FILE.exec(basename(naming.transcript))?.[1];
    const record = naming.record;
    const conversation: ConversationInfo = agent ? subagentConversation(sessionId, agent) : session;
    conversation.cwd = str(record.cwd);
    return makeDerived("tool_result", null, conversation, {
      ts: toEpochMs(record.timestamp),
      messageId: str(record.uuid),
      partId: naming.toolUseId,
      text,
      completes: true,
      key: "output",
      supersedes: true,
    });
  },

  textOf(bytes: Uint8Array, source: SourceRef): string {
    return outputText(bytes, source);
  },
};

/**
 * The stored transcripts that may name a session folder's output files: the session's own, then
 * its subagents'.
 */
function transcriptsOf(recall: Recall, folder: string): string[] {
  const session = `${folder}.jsonl`;
  const agents = recall.sources(join(folder, "subagents"))
    .filter((locator) => AGENT_FILE.test(basename(locator)));
  return [session, ...agents];
}

/**
 * The folders directly in `dir` (normalised, see `childPath`) whose names pass `accept`;
 * symlinks are not followed.
 */
function subfolders(
  dir: string,
  accept: (name: string) => boolean,
  ctx: DiscoverContext,
): string[] {
  const listing = listFolder(dir, ctx);
  if (!listing) return [];
  return listing.names.filter((name, i) => listing.kinds[i] === "d" && accept(name))
    .map((name) => childPath(dir, name));
}
