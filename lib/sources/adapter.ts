// The contract between the capture engine and each agent's adapter: what a source is, and what
// an adapter derives from one raw record (kind, role, conversation, text, drift).

import type { Env } from "../env.ts";
import type { Folders } from "./folders.ts";

/**
 * An agent's name, one of lib/agents.ts `AGENTS`. A plain string in these contracts, because the
 * registry holds each agent's readers and derives its `Agent` type from its entries.
 */
export type AgentName = string;

/**
 * What a record is. Anything unrecognised is `meta`. A `prompt` is what the person typed, kept in
 * an agent's prompt history file (role `user`): search treats it as a user message.
 */
export type Kind =
  | "message"
  | "prompt"
  | "tool_call"
  | "tool_result"
  | "reasoning"
  | "summary"
  | "event"
  | "meta";
export const KINDS: readonly Kind[] = [
  "message",
  "prompt",
  "tool_call",
  "tool_result",
  "reasoning",
  "summary",
  "event",
  "meta",
];

/** Who said it, for message-like records. */
export type Role = "user" | "assistant" | "system" | "developer";
export const ROLES: readonly Role[] = ["user", "assistant", "system", "developer"];

/** Kinds of format drift, counted per source and agent version. */
export type DriftCategory = "unknown_type" | "unparsable" | "missing_fields";

/**
 * Thrown when one source cannot be read in this run (its database stayed busy, a compressed
 * file this runtime cannot decompress): capture reports it for that source alone and reads the
 * source again on the next run, instead of failing the whole run.
 */
export class SourceError extends Error {
  override name = "SourceError";
}

/** A place records come from: a transcript file, or one table of another program's database. */
export interface SourceRef {
  agent: AgentName;
  /** Unique and stable: the absolute file path, or `<db path>#<table>`. */
  locator: string;
  /** The file to stat and read. */
  path: string;
  format: "jsonl" | "jsonl.zst" | "rows";
}

/** The conversation a record belongs to, with what the record tells about it. */
export interface ConversationInfo {
  /** Stable id: `<agent>:<native id>` (`claude:<sessionId>/agent-<agentId>` for subagents). */
  key: string;
  nativeId: string;
  parentKey?: string | null;
  subagent?: boolean;
  /** A subagent's type, as its agent names it (Claude Code's `Explore`, `Plan`). */
  agentType?: string | null;
  cwd?: string | null;
  branch?: string | null;
  archived?: boolean;
}

/** Everything derived from one raw record. All of it can be rebuilt from the raw bytes. */
export interface Derived {
  kind: Kind;
  role: Role | null;
  /** Epoch milliseconds, or null when the record carries no time. */
  ts: number | null;
  conversation: ConversationInfo | null;
  messageId: string | null;
  partId: string | null;
  /**
   * Searchable text. Must depend only on the record's bytes (not on adapter state), because
   * search derives it again from raw to build snippets.
   */
  text: string;
  /** True when this record starts a new message (counted in the conversation's size). */
  newMessage: boolean;
  /** A title candidate; a higher rank replaces a lower one (1 first prompt, 2 summary, 3 explicit). */
  title?: { text: string; rank: number } | null;
  /**
   * True for a record that repeats one another conversation already holds (a copy a fork or a
   * helper made of its parent): kept raw and shown, never indexed, so a search finds it once.
   * A line too long to hold, indexed as it was streamed, leaves the index again.
   */
  copied?: boolean;
  /**
   * True for a record another source completes (a tool's output preview in a transcript, whose
   * whole output is a file of its own): kept raw, not indexed (the completion holds all of it),
   * and shown with its completion, which `show` places right after it.
   */
  joined?: boolean;
  /**
   * True for a record that completes earlier ones of its conversation with the same message id
   * from another source (the file with a tool's whole output, after its preview): once stored,
   * those leave the index and are `joined` to it, whichever of them was captured first.
   */
  completes?: boolean;
  /** Set when the record is drift: kept raw as `meta`, counted, reported. */
  drift?: { category: DriftCategory; detail: string } | null;
  /** The agent version the record was written by, for drift accounting. */
  version?: string | null;
  /**
   * The model call this record reports the usage of (an assistant reply's tokens, a token-count
   * event's increment), counted once: capture stores it in the store's `usage` table. Never on a
   * `copied` record (a copy does not count again).
   */
  usage?: Usage | null;
  /**
   * A stable key for this record (`message:<id>`, `part:<id>`), so later records can look it
   * up (row adapters) and a newer revision can supersede it.
   */
  key?: string | null;
  /**
   * With `key`: this record is a newer revision of the record last stored under that key. The
   * older one keeps its raw bytes (and stays in `show`) but leaves the search index, so search
   * finds the newest text once.
   */
  supersedes?: boolean;
}

/** The tokens (and, where the agent records it, the cost) of one model call. */
export interface Usage {
  /**
   * What names the call among the agent's records, so records that repeat it count it once
   * (Claude Code's `message.id` and `requestId`); null for a record that is its own call.
   */
  call: string | null;
  /** True when a later record naming the same call replaces this one (a revised message). */
  revised?: boolean;
  model: string | null;
  /** Input tokens not read from the cache. */
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
  /** The cost in USD as the agent recorded it, or null to price the tokens. */
  cost: number | null;
}

/** A derived record with every optional part empty: `makeDerived("message", "user", conv, { text })`. */
export function makeDerived(
  kind: Kind,
  role: Role | null,
  conversation: ConversationInfo | null,
  extra: Partial<Derived> = {},
): Derived {
  return {
    kind,
    role,
    ts: null,
    conversation,
    messageId: null,
    partId: null,
    text: "",
    newMessage: false,
    ...extra,
  };
}

/** One tool call a record makes: its id (what its result names), the tool, and its input. */
export interface ToolCall {
  /** The call's id (Claude's `tool_use.id`, Codex's `call_id`), or null when it has none. */
  id: string | null;
  /** The tool's name (`Bash`, `exec_command`, `shell`, `web_search`…). */
  name: string;
  /** The input as text, what matters first (a command, a path, a query): its first line says it. */
  input: string;
}

/** What a tool-call or tool-result record says about its tools, so a reader can pair them. */
export interface ToolParts {
  calls: ToolCall[];
  /** The calls whose results the record holds: their ids, and whether each failed. */
  results: { id: string; error: boolean }[];
  /** The output, when one record holds a call and its result at once (an OpenCode tool part). */
  output: string | null;
}

/** One complete line of a JSONL source, as the engine hands it to an adapter. */
export interface LineInput {
  /** The line's bytes including its terminator. */
  bytes: Uint8Array;
  /** The parsed JSON value, or undefined when the line is not valid JSON (see `parseError`). */
  value: unknown;
  /** Why the line did not parse; undefined for valid JSON and for blank lines. */
  parseError?: string;
  /** True for a line of only whitespace. */
  blank: boolean;
}

/** Where adapters look for sources: the environment and the extra roots from config. */
export interface DiscoverContext {
  env: Env;
  /** Extra roots per agent, from config `history.roots`. */
  extraRoots: Partial<Record<AgentName, string[]>>;
  /** Counts things discovery passed over (symlinks, unreadable dirs), by reason. */
  skipped: Map<string, number>;
  /**
   * The project directories logbook knows (the recorded directories of captured conversations
   * and the mirrored projects), for an agent that keeps its files in each project (Aider).
   */
  projects?: readonly string[];
  /** The folder listings of the pass, kept between passes (`folders.ts`); each read afresh without. */
  folders?: Folders;
}

/** One chunk of a stored record (a record longer than 64 KiB is several). */
export interface StoredChunk {
  bytes: Uint8Array;
  /** True for the first chunk of a record (a line of a JSONL source). */
  start: boolean;
}

/**
 * What the history store already holds of other sources, for what an adapter decides about a
 * record from other records: whether a copy's line repeats its parent's, which session a summary
 * names, which transcript record names a tool's output file. It answers from captured raw bytes,
 * which outlive the files and which a rebuild keeps, so a decision comes out the same when the
 * other file is gone and when the store is rebuilt. The engine reads the sources that ask
 * (`readAfterOthers`) after the others of a pass, once those are committed.
 */
export interface Recall {
  /** True when the store has a source at `locator` (captured, or found by this pass). */
  has(locator: string): boolean;
  /** The locators of the sources directly inside `folder` (not in its subfolders), sorted. */
  sources(folder: string): string[];
  /** The locators of every source of `agent`, wherever they are, in no particular order. */
  sourcesOf(agent: AgentName): string[];
  /** The stored bytes of the source at `locator`: every generation, in order. None when absent. */
  chunks(locator: string): Iterable<StoredChunk>;
}

/** The recall of a caller without a store (tests, benchmarks): it holds nothing. */
export const NO_RECALL: Recall = {
  has: () => false,
  sources: () => [],
  sourcesOf: () => [],
  chunks: () => [],
};

/**
 * Where a record's text is, by the path of a string in it (keys and array indexes from the top:
 * `["message", "content", 0, "text"]`): what a line too long to parse shows and indexes.
 */
export type TextPath = (path: readonly (string | number)[]) => boolean;

/** An adapter for a line-oriented source (JSONL, optionally zstd-compressed). */
export interface LineAdapter<State = unknown> {
  readonly agent: AgentName;
  readonly mode: "lines";
  /**
   * The version of what this adapter derives from the same bytes: kind, role, conversation,
   * text, title, and which records are copies or joined. Raise it by one, with a line beside it
   * saying why, in the change that makes it derive anything differently: capture then derives
   * the sources it stored before again (`lib/capture/rederive.ts`), so an upgraded store answers
   * as a fresh capture would.
   */
  readonly derivation: number;
  /** True for the locators this adapter owns when its agent has several adapters (see `adapterOf`). */
  claims?(locator: string): boolean;
  /**
   * True for a source whose records are decided from what other sources hold (`Recall`): a
   * pass reads it after the others, once they are committed. Asked of sources with work to do.
   */
  readAfterOthers?(source: SourceRef): boolean;
  /** Roots this adapter reads by default, for status and for the start command. */
  roots(ctx: DiscoverContext): string[];
  /** Lists the sources under the roots. Must not follow symlinks inside a root. */
  discover(ctx: DiscoverContext): AsyncIterable<SourceRef>;
  /** The state before the first record of a new source generation (JSON-serialisable). */
  initialState(source: SourceRef): State;
  /**
   * Whether a source at this place holds archived conversations (Codex's `archived_sessions/`),
   * for an agent that archives by moving a file: a moved source's conversations take it on.
   */
  archived?(source: SourceRef): boolean;
  /**
   * True when the agent writes the newline before a line rather than after it (Cursor), so a
   * last line without one is whole once it is a JSON object: capture reads it then, instead of
   * waiting for a newline that comes only with the next line.
   */
  readonly newlineBefore?: boolean;
  /** Derives a record from one complete line, updating `state` in place. */
  parseLine(line: LineInput, state: State, source: SourceRef, recall?: Recall): Derived;
  /**
   * Derives a record from a line too long to hold in memory, from the small scalar fields the
   * streaming scanner saw (paths like `type`, `message.role`, `message.content.0.type`). The
   * text is extracted by the engine.
   */
  parseStreamed(
    scalars: ReadonlyMap<string, Scalar>,
    state: State,
    source: SourceRef,
    recall?: Recall,
  ): Derived;
  /** The searchable text of one line's bytes (a pure function; equal to `parseLine(...).text`). */
  textOf(bytes: Uint8Array, source: SourceRef): string;
  /** The tool calls and results one line's bytes hold, or null for none (a pure function). */
  toolOf?(bytes: Uint8Array, source: SourceRef): ToolParts | null;
  /** Field names whose string values are never indexed (base64 payloads and signatures). */
  readonly skipKeys: ReadonlySet<string>;
  /** Where a line's text is, for lines too long to parse (every string but `skipKeys`'s if absent). */
  readonly textPath?: TextPath;
}

/** A scalar seen by the streaming scanner. */
export type Scalar = string | number | boolean | null;

/** What `readRows` returns: raw rows in a deterministic order, and where to continue. */
export interface RowRead {
  /** Each row's raw bytes: the row as JSON, exactly as read. */
  rows: Uint8Array[];
  /** Opaque position after the last row returned (persisted with the batch that stores them). */
  cursorKey: string;
  /** True when more rows are waiting after this read. */
  more: boolean;
}

/** Looks up the raw bytes of the newest stored record of this source with a given key. */
export type Lookup = (key: string) => Uint8Array | null;

/**
 * An adapter for a source that is not a byte stream but rows of another program's database
 * (OpenCode). The engine stores the rows it returns as one append-only stream per source:
 * a record's offset is its position in that stream, so raw bytes, generations, batching and
 * rebuild work exactly as for files.
 */
export interface RowAdapter<State = unknown> {
  readonly agent: AgentName;
  readonly mode: "rows";
  /** As `LineAdapter.derivation`. */
  readonly derivation: number;
  /** True for the locators this adapter owns when its agent has several adapters (see `adapterOf`). */
  claims?(locator: string): boolean;
  /** As `LineAdapter.readAfterOthers`. */
  readAfterOthers?(source: SourceRef): boolean;
  readonly skipKeys: ReadonlySet<string>;
  roots(ctx: DiscoverContext): string[];
  /** Lists the sources (format `rows`); `path` is the file whose existence means the source exists. */
  discover(ctx: DiscoverContext): AsyncIterable<SourceRef>;
  /**
   * A cheap fingerprint of everything that changes when new rows may exist (sizes and mtimes of
   * the database and its WAL, say): an unchanged fingerprint means the source is not opened.
   */
  fingerprint(source: SourceRef): string;
  initialState(source: SourceRef): State;
  /**
   * Rows new since `cursorKey` (null: from the beginning), in a deterministic order, stopping
   * after about `budgetBytes` (one row may cross it). Opens the source read-only, never writes.
   */
  readRows(source: SourceRef, cursorKey: string | null, budgetBytes: number): Promise<RowRead>;
  /**
   * Derives a record from one row's raw bytes; `lookup` finds earlier records of this source by
   * key, `recall` what the store holds of others.
   */
  parseRow(
    raw: Uint8Array,
    state: State,
    source: SourceRef,
    lookup: Lookup,
    recall?: Recall,
  ): Derived;
  /** The searchable text of one row's raw bytes (a pure function; equal to `parseRow(...).text`). */
  textOf(bytes: Uint8Array, source: SourceRef): string;
  /** The tool calls and results one row's raw bytes hold, or null for none (a pure function). */
  toolOf?(bytes: Uint8Array, source: SourceRef): ToolParts | null;
}

/** Any adapter the engine can run. */
export type Adapter = LineAdapter<unknown> | RowAdapter<unknown>;

/**
 * What reading a stored record takes of an adapter: which sources it owns and the text of their
 * bytes. Every adapter is one; `lib/sources/readers.ts` lists the same without the capture code,
 * for the commands that only read (`search`, `show`).
 */
export interface TextReader {
  readonly agent: AgentName;
  /** As `LineAdapter.claims`. */
  claims?(locator: string): boolean;
  /** As `LineAdapter.textOf`. */
  textOf(bytes: Uint8Array, source: SourceRef): string;
  /** As `LineAdapter.skipKeys` (none when absent), for the text of a line too long to parse. */
  readonly skipKeys?: ReadonlySet<string>;
  /** As `LineAdapter.textPath`. */
  readonly textPath?: TextPath;
}

/**
 * The adapter that reads a stored source: of the adapters of its agent, the one that `claims` its
 * locator, else the agent's adapter that claims nothing (its transcripts).
 */
export function adapterOf<T extends TextReader = Adapter>(
  adapters: readonly T[],
  agent: string,
  locator: string,
): T | undefined {
  let general: T | undefined;
  for (const adapter of adapters) {
    if (adapter.agent !== agent) continue;
    if (!adapter.claims) general ??= adapter;
    else if (adapter.claims(locator)) return adapter;
  }
  return general;
}

/** The file a locator names (`<db>#<table>` names the database file). */
export function pathOfLocator(locator: string): string {
  const hash = locator.lastIndexOf("#");
  return hash > 0 && !locator.slice(hash).includes("/") ? locator.slice(0, hash) : locator;
}
