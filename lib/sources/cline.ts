// The Cline adapter: reads `~/.cline/data/sessions/<id>/` (`$CLINE_DIR/data/sessions`,
// `$CLINE_DATA_DIR/sessions`, `$CLINE_SESSION_DATA_DIR`), where Cline keeps each session as JSON
// documents it writes whole after every change: `<id>.json` (cwd, model, title, usage),
// `<id>.messages.json` (`{version, sessionId, agent, origin, messages: [...], system_prompt}`)
// and, for each subagent it spawned, `agent_<agentId>.messages.json` (its `origin` names the
// parent session). The SQLite files in `~/.cline/data/db/` index the same sessions: not read.
//
// A document is not a stream: each write replaces it. So, as OpenCode's JSON storage, this is a
// row adapter: one source per messages document, whose rows are the messages that are new or
// changed since the last read (the cursor keeps a hash of each message by id), plus the session
// document when it changed (cline_text.ts says what a row is). A write that appends (a new
// turn, a resume) yields only the new messages; a message written again with other contents is
// stored again under its key `message:<id>` and supersedes the older revision, so search finds
// it once; a write that drops messages would leave the dropped ones stored, found and shown, as
// what was said. A checkpoint restore does not rewrite: it starts a new session holding copies of
// the kept messages (their ids unchanged) and names the old one (`restoredFromSessionId`): the
// new session is a child of the old, and its copies are shown there but found in the old one,
// when the store holds it. A document that does not parse (caught mid-write) is read again on
// the next run.

import { agentRoots } from "../agents.ts";
import { basename, dirname, join } from "../path.ts";
import {
  type ConversationInfo,
  type Derived,
  type DiscoverContext,
  type Kind,
  type Lookup,
  makeDerived,
  NO_RECALL,
  type Recall,
  type Role,
  type RowAdapter,
  type RowRead,
  SourceError,
  type SourceRef,
  type ToolParts,
  type Usage,
} from "./adapter.ts";
import { sha256Hex } from "../sha256.ts";
import { blockToolParts, obj, str, titleFrom, tokenCount } from "./_text.ts";
import { walkFiles } from "./_walk.ts";
import { fileSignature } from "./_file_signature.ts";
import { CLINE_SKIP_KEYS, clineMessageText, clineRowOf, clineRowText } from "./cline_text.ts";

const MESSAGES = ".messages.json";

/** Where reading a document stands: a hash of the session document and of each message by id. */
interface Cursor {
  session: string | null;
  messages: Record<string, string>;
}

/** Nothing is remembered between rows: each row says all it needs. */
type ClineState = Record<string, never>;

/** Makes the Cline adapter (`cline` is the one capture uses). */
export function createClineAdapter(): RowAdapter<ClineState> {
  const roots = (ctx: DiscoverContext): string[] => agentRoots("cline", ctx);
  return {
    agent: "cline",
    mode: "rows",
    // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
    // 1: the first version.
    // 2: an assistant message's model call (its `metrics`) is derived for `usage`.
    derivation: 2,
    skipKeys: CLINE_SKIP_KEYS,
    roots,

    async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
      for (const root of roots(ctx)) {
        // `<root>/<session id>/<id>.messages.json` and `agent_<id>.messages.json`.
        for (const path of walkFiles(root, (n) => n.endsWith(MESSAGES), ctx, 1)) {
          if (dirname(dirname(path)) !== root) continue;
          yield { agent: "cline", locator: path, path, format: "rows" };
        }
      }
    },

    fingerprint(source: SourceRef): string {
      return `${fileSignature(source.path)}|${fileSignature(sessionPathOf(source.path))}`;
    },

    initialState(): ClineState {
      return {};
    },

    readRows(source: SourceRef, cursorKey: string | null): Promise<RowRead> {
      // The reads are synchronous; the promise carries their result or their error.
      return new Promise((resolve) => resolve(readDocuments(source, cursorKey)));
    },

    parseRow(
      raw: Uint8Array,
      _state: ClineState,
      source: SourceRef,
      _lookup: Lookup,
      recall: Recall = NO_RECALL,
    ): Derived {
      return derive(raw, source, recall);
    },

    textOf: clineRowText,

    toolOf(bytes: Uint8Array): ToolParts | null {
      const row = clineRowOf(bytes);
      if (!("cline" in row) || row.cline !== "message") return null;
      return blockToolParts(row.message.content, CLINE_SKIP_KEYS);
    },
  };
}

/** Cline's sessions, as capture reads them. */
export const cline: RowAdapter<ClineState> = createClineAdapter();

// ---- reading the documents ----

/** `<dir>/<dir name>.json`: the session document beside a messages document. */
function sessionPathOf(messagesPath: string): string {
  const dir = dirname(messagesPath);
  return join(dir, `${basename(dir)}.json`);
}

/** True for the session's own messages document (not a subagent's). */
function isMain(messagesPath: string): boolean {
  return basename(messagesPath) === `${basename(dirname(messagesPath))}${MESSAGES}`;
}

function parseCursor(key: string | null): Cursor {
  const saved = key ? obj(JSON.parse(key)) : null;
  return {
    session: str(saved?.session),
    messages: (obj(saved?.messages) ?? {}) as Record<string, string>,
  };
}

/** A JSON document, or null when there is none; a document that does not parse throws. */
function readJson(path: string, what: string): Record<string, unknown> | null {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
  try {
    return obj(JSON.parse(text)) ?? {};
  } catch (err) {
    throw new SourceError(
      `Cline ${what} "${path}" is not whole JSON (${
        (err as Error).message
      }): it is read again on the next run`,
    );
  }
}

/** The rows new or changed since the cursor: the session document, then the messages in order. */
function readDocuments(source: SourceRef, cursorKey: string | null): RowRead {
  const cursor = parseCursor(cursorKey);
  const document = readJson(source.path, "session messages");
  const rows: Uint8Array[] = [];
  const encoder = new TextEncoder();
  const row = (value: Record<string, unknown>) => encoder.encode(`${JSON.stringify(value)}\n`);
  const fallbackId = basename(source.path, MESSAGES);
  const sessionId = str(document?.sessionId) ?? fallbackId;
  const session = readJson(sessionPathOf(source.path), "session");
  if (isMain(source.path) && session) {
    const text = JSON.stringify(session);
    const hash = sha256Hex(encoder.encode(text)).slice(0, 16);
    if (hash !== cursor.session) {
      rows.push(row({ cline: "session", sessionId, session }));
      cursor.session = hash;
    }
  }
  const origin = obj(document?.origin);
  // "Restore Checkpoint" in Cline's terminal UI starts a new session holding copies of the kept
  // messages (the same ids) and names the old one in its metadata.
  const restoredFrom = isMain(source.path)
    ? str(obj(session?.metadata)?.restoredFromSessionId)
    : null;
  const copies = restoredFrom ? messageIds(restoredLocator(source.path, restoredFrom)) : new Set();
  const head = {
    cline: "message",
    sessionId,
    agent: str(document?.agent),
    parent: str(origin?.parentThreadId),
    restoredFrom,
    version: str(origin?.version),
    cwd: str(session?.cwd),
  };
  const messages = Array.isArray(document?.messages) ? document.messages : [];
  messages.forEach((message, index) => {
    const text = JSON.stringify(message);
    const id = str(obj(message)?.id) ?? `#${index}`;
    const hash = sha256Hex(encoder.encode(text)).slice(0, 16);
    if (cursor.messages[id] === hash) return;
    cursor.messages[id] = hash;
    const copiedFrom = copies.has(id) ? restoredFrom : null;
    rows.push(
      encoder.encode(
        `${JSON.stringify({ ...head, copiedFrom }).slice(0, -1)},"message":${text}}\n`,
      ),
    );
  });
  return { rows, cursorKey: JSON.stringify(cursor), more: false };
}

/** The messages document of the session `id` beside the session of `messagesPath`. */
function restoredLocator(messagesPath: string, id: string): string {
  return join(dirname(dirname(messagesPath)), id, `${id}${MESSAGES}`);
}

/** The ids of a messages document's messages (none when it is gone or not whole). */
function messageIds(path: string): Set<string> {
  try {
    const messages = obj(JSON.parse(Deno.readTextFileSync(path)))?.messages;
    return new Set(
      (Array.isArray(messages) ? messages : []).flatMap((m) => str(obj(m)?.id) ?? []),
    );
  } catch {
    return new Set();
  }
}

// ---- deriving records ----

function conversationOf(
  sessionId: string,
  parent: string | null,
  extra: Partial<ConversationInfo> = {},
  restoredFrom: string | null = null,
): ConversationInfo {
  return {
    key: `cline:${sessionId}`,
    nativeId: sessionId,
    ...(parent ? { parentKey: `cline:${parent}`, subagent: true } : {}),
    ...(restoredFrom && !parent ? { parentKey: `cline:${restoredFrom}` } : {}),
    ...extra,
  };
}

function derive(raw: Uint8Array, source: SourceRef, recall: Recall): Derived {
  const row = clineRowOf(raw);
  if ("bad" in row) {
    return makeDerived(
      "meta",
      null,
      row.sessionId ? conversationOf(row.sessionId, null) : null,
      { drift: { category: "unparsable", detail: row.bad } },
    );
  }
  if (row.cline === "session") {
    const session = row.session;
    const metadata = obj(session.metadata);
    const title = str(metadata?.title);
    const started = Date.parse(String(session.started_at ?? ""));
    return makeDerived(
      "meta",
      null,
      conversationOf(row.sessionId, null, {
        cwd: str(session.cwd),
        branch: str(obj(metadata?.git)?.branch),
      }, str(metadata?.restoredFromSessionId)),
      {
        ts: Number.isFinite(started) ? started : null,
        key: "session",
        supersedes: true,
        version: str(obj(metadata?.sessionHistoryOrigin)?.version),
        title: title ? { text: titleFrom(title), rank: 2 } : null,
      },
    );
  }
  const message = row.message;
  const conversation = conversationOf(
    row.sessionId,
    row.parent,
    { cwd: row.cwd },
    row.restoredFrom,
  );
  const id = str(message.id);
  const base = {
    version: row.version,
    ts: typeof message.ts === "number" ? message.ts : null,
  };
  const role = str(message.role);
  if (!id || !role) {
    return makeDerived("meta", null, conversation, {
      ...base,
      drift: { category: "missing_fields", detail: "message without an id or a role" },
    });
  }
  const kind = kindOf(role, message.content);
  if ("unknown" in kind) {
    return makeDerived("meta", null, conversation, {
      ...base,
      drift: { category: "unknown_type", detail: kind.unknown },
    });
  }
  const text = clineMessageText(message);
  // A restored session's copy of a message is shown there and found in the session it was
  // restored from, when the store holds that one; without it, the copy is all there is.
  const copied = row.copiedFrom !== null &&
    recall.has(restoredLocator(source.path, row.copiedFrom));
  // The first prompt titles a session; a subagent's task titles the subagent.
  const prompt = kind.kind === "message" && kind.role === "user" && text.trim() !== "";
  return makeDerived(kind.kind, kind.role, conversation, {
    ...base,
    messageId: id,
    text,
    copied,
    newMessage: !copied,
    key: `message:${id}`,
    supersedes: true,
    title: prompt ? { text: titleFrom(text), rank: 1 } : null,
    usage: role === "assistant" ? messageUsage(id, message) : null,
  });
}

/**
 * The model call an assistant message reports: the `metrics` Cline stamps on it (tokens, and
 * `cost` in USD where Cline priced the model), named by the message's id, so a restored session's
 * copy of it (the same id) counts once and a newer revision replaces it. Its `inputTokens`
 * count the cache's reads and writes, as the AI SDK Cline calls through counts them (Cline's own
 * pricing takes them out again); a cost of 0 is Cline not knowing the price: the tokens are
 * priced instead.
 */
function messageUsage(id: string, message: Record<string, unknown>): Usage | null {
  const metrics = obj(message.metrics);
  if (!metrics) return null;
  const read = tokenCount(metrics.cacheReadTokens);
  const write = tokenCount(metrics.cacheWriteTokens);
  const cost = tokenCount(metrics.cost);
  return {
    call: `message:${id}`,
    revised: true,
    model: str(obj(message.modelInfo)?.id),
    input: Math.max(0, tokenCount(metrics.inputTokens) - read - write),
    output: tokenCount(metrics.outputTokens),
    cacheWrite: write,
    cacheRead: read,
    cost: cost > 0 ? cost : null,
  };
}

/** The content block types this version knows. */
const KNOWN_BLOCKS = new Set([
  "text",
  "tool_use",
  "tool_result",
  "thinking",
  "reasoning",
  "redacted_thinking",
  "image",
  "file",
]);

/** What a message is, by its role and blocks; unknown for a role or blocks this version lacks. */
function kindOf(
  role: string,
  content: unknown,
): { kind: Kind; role: Role | null } | { unknown: string } {
  const types = Array.isArray(content) ? content.map((b) => str(obj(b)?.type) ?? "?") : ["text"];
  const odd = types.find((t) => !KNOWN_BLOCKS.has(t));
  if (odd) return { unknown: `block/${odd}` };
  switch (role) {
    case "user":
      return types.includes("tool_result")
        ? { kind: "tool_result", role: null }
        : { kind: "message", role: "user" };
    case "assistant":
      if (types.includes("tool_use")) return { kind: "tool_call", role: "assistant" };
      if (types.length && types.every((t) => t.includes("thinking") || t === "reasoning")) {
        return { kind: "reasoning", role: "assistant" };
      }
      return { kind: "message", role: "assistant" };
    case "system":
      return { kind: "message", role: "system" };
    default:
      return { unknown: `role/${role}` };
  }
}
