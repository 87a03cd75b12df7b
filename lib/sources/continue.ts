// The Continue CLI (`cn`) adapter: reads `sessions/<uuid>.json` under `~/.continue` (or
// `$CONTINUE_GLOBAL_DIR`), one pretty-printed JSON document per session that `cn` writes whole
// after every change of its history.
//
// A document is not a stream of lines: each write replaces it. So the adapter is a row adapter
// (as OpenCode's older JSON storage is): its rows are the history items that are new or changed
// since the last read (continue_text.ts says what a row is), and the cursor remembers a hash of
// every item read, by place. A write that appends (a new turn, `cn --resume`) yields only the new
// items; a write that changes nothing (a compaction in `-p` mode) yields none; an item changed in
// place (a tool call's state after it ran) is a newer revision of it. A write that cuts the
// history (a rewind, a compaction in the terminal UI) leaves the items it removed stored, found
// and shown, as what was said; the items that take their places are records of their own.

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
import { obj, str, titleFrom, tokenCount } from "./_text.ts";
import { walkFiles } from "./_walk.ts";
import { fileSignature } from "./_file_signature.ts";
import {
  contentText,
  CONTINUE_SKIP_KEYS,
  continueRowOf,
  continueRowText,
  itemText,
  toolCallsOf,
  toolOutputs,
} from "./continue_text.ts";

/** The title `cn` gives a session it has not named (every `-p` run). */
const PLACEHOLDER_TITLE = "Untitled Session";

/** The index beside the sessions, not a session. */
const INDEX = "sessions.json";

/** The fewest leading items two sessions share for the later one to be taken for a fork. */
const FORK_MIN_ITEMS = 2;

const encoder = new TextEncoder();
const utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** What the cursor keeps of a document: a hash of each part read, so a rewrite yields only changes. */
interface Cursor {
  /** The hash of the document without its items. */
  session: string | null;
  /** Each history item read, by place: its hash and its message's role. */
  items: [string, string | null][];
  /** The session it was forked from, and how many leading items it copied. */
  forkOf: string | null;
  copied: number;
}

/** Nothing to remember between rows: each row says all it needs. */
type ContinueState = Record<string, never>;

/** Makes the Continue adapter (`continueCli` is the one capture uses). */
export function createContinueAdapter(): RowAdapter<ContinueState> {
  const roots = (ctx: DiscoverContext): string[] => agentRoots("continue", ctx);
  const folders = new Folders();
  return {
    agent: "continue",
    mode: "rows",
    // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
    // 1: the first version.
    // 2: an assistant item's model call (its message's `usage`) is derived for `usage`.
    derivation: 2,
    skipKeys: CONTINUE_SKIP_KEYS,
    roots,

    async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
      for (const root of roots(ctx)) {
        const accept = (name: string) => name.endsWith(".json") && name !== INDEX;
        for (const path of walkFiles(root, accept, ctx, 0)) {
          yield { agent: "continue", locator: path, path, format: "rows" };
        }
      }
    },

    fingerprint(source: SourceRef): string {
      return fileSignature(source.path);
    },

    initialState(): ContinueState {
      return {};
    },

    readRows(source: SourceRef, cursorKey: string | null): Promise<RowRead> {
      // The reads are synchronous; the promise carries their result or their error.
      return new Promise((resolve) => resolve(readDocument(source, cursorKey, folders)));
    },

    parseRow(
      raw: Uint8Array,
      _state: ContinueState,
      source: SourceRef,
      _lookup: Lookup,
      recall: Recall = NO_RECALL,
    ): Derived {
      return derive(raw, source, recall);
    },

    textOf: continueRowText,

    toolOf(bytes: Uint8Array): ToolParts | null {
      const row = continueRowOf(bytes);
      if ("bad" in row || row.continue !== "item") return null;
      const item = obj(row.item);
      const message = obj(item?.message);
      if (!item || !message) return null;
      const calls = toolCallsOf(message);
      const outputs = toolOutputs(item);
      if (!calls.length && !outputs.length) return null;
      const output = outputs.map((o) => o.content).filter((c) => c !== "").join("\n");
      return {
        calls,
        results: outputs.flatMap((o) => (o.id ? [{ id: o.id, error: o.error }] : [])),
        output: output === "" ? null : output,
      };
    },
  };
}

// ---- reading a document ----

/**
 * The rows of a session document new or changed since the cursor, all at once (a document is
 * read whole). A document that does not parse is being written (`cn` writes in place, not
 * atomically): a SourceError, so it is read again on the next run, and nothing is stored of it.
 */
function readDocument(source: SourceRef, cursorKey: string | null, folders: Folders): RowRead {
  const bytes = Deno.readFileSync(source.path);
  const mtime = Deno.statSync(source.path).mtime?.getTime() ?? null;
  const cursor = parseCursor(cursorKey);
  const parsed = parseDocument(bytes);
  if ("torn" in parsed) {
    throw new SourceError(
      `Continue session "${source.path}" was being written when read (not whole JSON: ${parsed.torn}): it is read again on the next run`,
    );
  }
  const sessionId = str(parsed.value.sessionId) ?? basename(source.path, ".json");
  const now = parsed.items.map((span): [string, string | null] => [
    hashOf(bytes, span),
    roleOfItem(bytes, span),
  ]);
  const first = cursor.session === null && cursor.items.length === 0;
  const created = first ? createdAt(source.path, sessionId, folders) : null;
  if (first) {
    const fork = forkOf(source.path, sessionId, now.map(([hash]) => hash), folders);
    cursor.forkOf = fork?.sessionId ?? null;
    cursor.copied = fork?.items ?? 0;
  }
  const rows: Uint8Array[] = [];
  const head = JSON.stringify({ sessionId });
  const document = parsed.spans
    ? concat(bytes.subarray(0, parsed.spans.open + 1), bytes.subarray(parsed.spans.close))
    : bytes;
  const documentHash = sha256Hex(document).slice(0, 16);
  if (documentHash !== cursor.session) {
    rows.push(wrap(
      `${head.slice(0, -1)},"continue":"session","time":${json(created ?? mtime)},` +
        `"revises":${cursor.session !== null},"forkOf":${json(cursor.forkOf)},"document":`,
      document,
    ));
    cursor.session = documentHash;
  }
  const old = cursor.items;
  let same = 0;
  while (same < old.length && same < now.length && old[same]![0] === now[same]![0]) same++;
  for (let i = same; i < now.length; i++) {
    // A newer revision of the last item read, everything before it unchanged (a tool call's state
    // once it ran); any other change is a rewrite, whose items are records of their own.
    const revises = i === same && i === old.length - 1 && old[i]![1] === now[i]![1];
    const copiedFrom = cursor.forkOf !== null && i < cursor.copied ? cursor.forkOf : null;
    const time = i === 0 && created !== null ? created : mtime;
    const span = parsed.items[i]!;
    rows.push(wrap(
      `${head.slice(0, -1)},"continue":"item","index":${i},"time":${json(time)},` +
        `"revises":${revises},"copiedFrom":${json(copiedFrom)},"item":`,
      bytes.subarray(span[0], span[1]),
    ));
  }
  cursor.items = now;
  return { rows, cursorKey: JSON.stringify(cursor), more: false };
}

function parseCursor(key: string | null): Cursor {
  const fresh: Cursor = { session: null, items: [], forkOf: null, copied: 0 };
  if (!key) return fresh;
  const saved = obj(JSON.parse(key));
  return saved ? { ...fresh, ...saved } as Cursor : fresh;
}

/** `prefix`, the bytes, `}` and a newline: one row. */
function wrap(prefix: string, bytes: Uint8Array): Uint8Array {
  return concat(encoder.encode(prefix), bytes, encoder.encode("}\n"));
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function json(value: unknown): string {
  return JSON.stringify(value ?? null);
}

function hashOf(bytes: Uint8Array, span: Span): string {
  return sha256Hex(bytes.subarray(span[0], span[1])).slice(0, 16);
}

function roleOfItem(bytes: Uint8Array, span: Span): string | null {
  try {
    return str(obj(obj(JSON.parse(utf8.decode(bytes.subarray(span[0], span[1]))))?.message)?.role);
  } catch {
    return null;
  }
}

/** A value's bytes in a document: `[start, end)`. */
type Span = [number, number];

/** A document parsed, with where its history's items are, or why it is not whole. */
type Parsed =
  | {
    value: Record<string, unknown>;
    /** The history array's brackets; null when the document has none. */
    spans: { open: number; close: number } | null;
    items: Span[];
  }
  | { torn: string };

function parseDocument(bytes: Uint8Array): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch (err) {
    return { torn: (err as Error).message };
  }
  const document = obj(value);
  if (!document) return { value: {}, spans: null, items: [] };
  const found = historySpans(bytes);
  return { value: document, spans: found?.array ?? null, items: found?.items ?? [] };
}

// ---- where the history's items are ----

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/**
 * Where the elements of the top-level `history` array are in a document's bytes (valid JSON,
 * already parsed): a scan that skips strings and counts brackets. UTF-8 continuation bytes are
 * never a quote or a bracket, so bytes are scanned as they are.
 */
export function historySpans(
  bytes: Uint8Array,
): { array: { open: number; close: number }; items: Span[] } | null {
  let i = skipSpace(bytes, 0);
  if (bytes[i] !== OPEN_BRACE) return null;
  i++;
  while (i < bytes.length) {
    i = skipSpace(bytes, i);
    if (bytes[i] === CLOSE_BRACE || bytes[i] !== QUOTE) return null;
    const keyEnd = skipString(bytes, i);
    const key = JSON.parse(utf8.decode(bytes.subarray(i, keyEnd)));
    i = skipSpace(bytes, keyEnd);
    if (bytes[i] !== COLON) return null;
    i = skipSpace(bytes, i + 1);
    const end = skipValue(bytes, i);
    if (key === "history" && bytes[i] === OPEN_BRACKET) {
      const items: Span[] = [];
      let j = skipSpace(bytes, i + 1);
      while (bytes[j] !== CLOSE_BRACKET) {
        const itemEnd = skipValue(bytes, j);
        items.push([j, itemEnd]);
        j = skipSpace(bytes, itemEnd);
        if (bytes[j] === COMMA) j = skipSpace(bytes, j + 1);
      }
      return { array: { open: i, close: end - 1 }, items };
    }
    i = skipSpace(bytes, end);
    if (bytes[i] === COMMA) i++;
  }
  return null;
}

function skipSpace(bytes: Uint8Array, i: number): number {
  while (
    i < bytes.length &&
    (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)
  ) i++;
  return i;
}

/** The end of the string starting at `i` (its opening quote), after its closing quote. */
function skipString(bytes: Uint8Array, i: number): number {
  i++;
  while (i < bytes.length && bytes[i] !== QUOTE) i += bytes[i] === BACKSLASH ? 2 : 1;
  return i + 1;
}

/** The end of the value starting at `i`. */
function skipValue(bytes: Uint8Array, i: number): number {
  const c = bytes[i];
  if (c === QUOTE) return skipString(bytes, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    while (i < bytes.length) {
      const b = bytes[i]!;
      if (b === QUOTE) {
        i = skipString(bytes, i);
        continue;
      }
      if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++;
      else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return i;
  }
  while (
    i < bytes.length && bytes[i] !== COMMA && bytes[i] !== CLOSE_BRACE &&
    bytes[i] !== CLOSE_BRACKET && skipSpace(bytes, i) === i
  ) i++;
  return i;
}

// ---- the index and forks ----

/** When `sessions.json` beside the document says the session was created (epoch ms), if it does. */
function createdAt(path: string, sessionId: string, folders: Folders): number | null {
  return folders.index(dirname(path)).get(sessionId) ?? null;
}

/** `sessions.json`'s creation time of each session, by id (none when it cannot be read). */
function readIndex(dir: string): Map<string, number> {
  const created = new Map<string, number>();
  try {
    const entries = JSON.parse(Deno.readTextFileSync(join(dir, INDEX)));
    for (const entry of Array.isArray(entries) ? entries : []) {
      const e = obj(entry);
      const id = str(e?.sessionId);
      const ms = Number(e?.dateCreated);
      if (id && Number.isFinite(ms) && ms > 0) created.set(id, ms);
    }
  } catch {
    // No index, or one being written: no creation times.
  }
  return created;
}

/**
 * The session a new document was forked from (`cn --fork <id>` copies the session's items into a
 * new document that names nothing of it): the session beside it, created earlier by the index,
 * whose leading items are the most of this one's leading items, byte for byte, at least
 * `FORK_MIN_ITEMS` (a prompt and its answer). Only sessions in the index can be a parent: it
 * tells which came first.
 */
function forkOf(
  path: string,
  sessionId: string,
  items: string[],
  folders: Folders,
): { sessionId: string; items: number } | null {
  if (items.length < FORK_MIN_ITEMS) return null;
  const dir = dirname(path);
  const created = folders.index(dir);
  // `cn` writes a new document before it adds it to the index: one not in it yet is the newest.
  const mine = created.get(sessionId) ?? Infinity;
  let best: { sessionId: string; items: number } | null = null;
  for (const name of folders.documents(dir)) {
    const other = basename(name, ".json");
    const when = created.get(other);
    if (other === sessionId || when === undefined || when >= mine) continue;
    const otherPath = join(dir, name);
    // Only a document that starts with the same item can be the parent: the others are not
    // looked at again while their first item is known.
    if ((folders.known(otherPath) ?? folders.items(otherPath))[0] !== items[0]) continue;
    const theirs = folders.items(otherPath);
    let same = 0;
    while (same < items.length && same < theirs.length && items[same] === theirs[same]) same++;
    if (same >= FORK_MIN_ITEMS && same > (best?.items ?? 0)) {
      best = { sessionId: other, items: same };
    }
  }
  return best;
}

/**
 * What the adapter keeps of the sessions folders, each while it is unchanged: the documents in a
 * folder (while its mtime is), its index (while the index's size and mtime are), and the item
 * hashes of each document (while its size and mtime are). A new session is compared with every
 * other of its folder; kept, that costs a stat per folder and per document that could be its
 * parent, instead of reading every document again.
 */
class Folders {
  #documents = new Map<string, { signature: string; names: string[] }>();
  #indexes = new Map<string, { signature: string; created: Map<string, number> }>();
  #items = new Map<string, { signature: string; items: string[] }>();

  /** The session documents in `dir`, by name. */
  documents(dir: string): string[] {
    const signature = signatureOf(dir);
    const known = this.#documents.get(dir);
    if (known?.signature === signature) return known.names;
    let names: string[] = [];
    try {
      names = [...Deno.readDirSync(dir)]
        .filter((e) => e.isFile && e.name.endsWith(".json") && e.name !== INDEX)
        .map((e) => e.name);
    } catch {
      // Gone or unreadable: no documents.
    }
    this.#documents.set(dir, { signature, names });
    return names;
  }

  /** The index of `dir`: each session's creation time. */
  index(dir: string): Map<string, number> {
    const signature = signatureOf(join(dir, INDEX));
    const known = this.#indexes.get(dir);
    if (known?.signature === signature) return known.created;
    const created = readIndex(dir);
    this.#indexes.set(dir, { signature, created });
    return created;
  }

  /** The item hashes of a document as last read, unchecked; undefined when never read. */
  known(path: string): string[] | undefined {
    return this.#items.get(path)?.items;
  }

  /** The item hashes of a document as it is now. */
  items(path: string): string[] {
    const signature = signatureOf(path);
    const known = this.#items.get(path);
    if (known?.signature === signature) return known.items;
    let items: string[] = [];
    try {
      const bytes = Deno.readFileSync(path);
      const parsed = parseDocument(bytes);
      if (!("torn" in parsed)) items = parsed.items.map((span) => hashOf(bytes, span));
    } catch {
      // Gone or unreadable: it is no fork's parent.
    }
    this.#items.set(path, { signature, items });
    return items;
  }
}

/** Size and mtime of a file or folder, or `-` when it cannot be stated. */
function signatureOf(path: string): string {
  try {
    const stat = Deno.statSync(path);
    return `${stat.size}:${stat.mtime?.getTime() ?? ""}`;
  } catch {
    return "-";
  }
}

// ---- deriving records ----

function conversationOf(sessionId: string, extra: Partial<ConversationInfo> = {}) {
  return { key: `continue:${sessionId}`, nativeId: sessionId, ...extra };
}

/** Kind, role, conversation, text and revision of one row. */
function derive(raw: Uint8Array, source: SourceRef, recall: Recall): Derived {
  const row = continueRowOf(raw);
  if ("bad" in row) {
    const sessionId = row.sessionId ?? basename(source.path, ".json");
    return makeDerived("meta", null, conversationOf(sessionId), {
      drift: { category: "unparsable", detail: row.bad },
    });
  }
  const revision = { ts: row.time, supersedes: row.revises };
  if (row.continue === "session") {
    const document = row.document;
    if (!document || !Array.isArray(document.history)) {
      return makeDerived("meta", null, conversationOf(row.sessionId), {
        ts: row.time,
        drift: { category: "missing_fields", detail: "document without a history" },
      });
    }
    const title = str(document.title);
    return makeDerived(
      "meta",
      null,
      conversationOf(row.sessionId, {
        cwd: str(document.workspaceDirectory),
        parentKey: row.forkOf ? `continue:${row.forkOf}` : null,
      }),
      {
        ...revision,
        key: "session",
        title: title && title !== PLACEHOLDER_TITLE ? { text: titleFrom(title), rank: 3 } : null,
      },
    );
  }
  const conversation = conversationOf(row.sessionId);
  const key = `item:${row.index}`;
  const item = obj(row.item);
  const message = obj(item?.message);
  const role = str(message?.role);
  if (!item || !message || !role) {
    return makeDerived("meta", null, conversation, {
      ts: row.time,
      drift: { category: "missing_fields", detail: "history item without a message role" },
    });
  }
  const kind = kindOf(item, message, role);
  if (!kind) {
    return makeDerived("meta", null, conversation, {
      ts: row.time,
      drift: { category: "unknown_type", detail: `message/${role}` },
    });
  }
  const text = itemText(item);
  // A fork's copy of its parent's items is shown in the fork and found in the parent, when the
  // store has the parent; without it, the copy is all there is, and is found.
  const copied = row.copiedFrom !== null &&
    recall.has(join(dirname(source.path), `${row.copiedFrom}.json`));
  const prompt = kind[0] === "message" && kind[1] === "user" && !copied &&
    contentText(message.content).join("\n").trim() !== "";
  return makeDerived(kind[0], kind[1], conversation, {
    ...revision,
    key,
    text,
    copied,
    newMessage: !row.revises,
    title: prompt ? { text: titleFrom(contentText(message.content).join("\n")), rank: 1 } : null,
    usage: role === "assistant" ? messageUsage(message, row.copiedFrom ?? row.sessionId) : null,
  });
}

/**
 * The model call an assistant item reports: its message's `usage`, the Chat Completions usage of
 * the reply, which `cn` saves with the message once the reply is whole and never changes after.
 * Items have no id, so the call is named by the session that made it (for a fork's copy, the
 * session it copied) and a hash of the message (its words, tool calls and usage): a revision of
 * the item (its tools' states) is the same call, a fork's copy of it too, and a rewind's new
 * reply at the same place another one.
 *
 * `cn`'s own adapters put the cache's reads and writes in `prompt_tokens_details`
 * (`cache_read_tokens`, `cache_write_tokens`) beside a `prompt_tokens` without them, as Continue
 * prices them; an OpenAI reply passed through counts its `cached_tokens` in `prompt_tokens`. Its
 * `cost_cents` is rounded to whole cents per call (a call of $0.004 is 0), so the tokens are
 * priced instead.
 */
function messageUsage(message: Record<string, unknown>, session: string): Usage | null {
  const usage = obj(message.usage);
  if (!usage) return null;
  const details = obj(usage.prompt_tokens_details);
  const prompt = tokenCount(usage.prompt_tokens);
  const own = details !== null &&
    (typeof details.cache_read_tokens === "number" ||
      typeof details.cache_write_tokens === "number");
  const read = own ? tokenCount(details.cache_read_tokens) : tokenCount(details?.cached_tokens);
  return {
    call: `message:${session}:${sha256Hex(JSON.stringify(message)).slice(0, 32)}`,
    model: str(usage.model),
    input: own ? prompt : Math.max(0, prompt - read),
    output: tokenCount(usage.completion_tokens),
    cacheWrite: own ? tokenCount(details.cache_write_tokens) : 0,
    cacheRead: read,
    cost: null,
  };
}

/** What a history item is, by its message's role; null for a role this version does not know. */
function kindOf(
  item: Record<string, unknown>,
  message: Record<string, unknown>,
  role: string,
): [Kind, Role | null] | null {
  switch (role) {
    case "user":
      return ["message", "user"];
    case "system":
      return ["message", "system"];
    case "assistant":
      if (str(item.conversationSummary)) return ["summary", null];
      return toolCallsOf(message).length ? ["tool_call", "assistant"] : ["message", "assistant"];
    case "tool":
      return ["tool_result", null];
    case "thinking":
      return ["reasoning", "assistant"];
    default:
      return null;
  }
}

/** Continue CLI sessions, as capture reads them (after `Folders`, which it makes). */
export const continueCli: RowAdapter<ContinueState> = createContinueAdapter();
