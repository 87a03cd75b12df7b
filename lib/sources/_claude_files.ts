// What a Claude Code transcript's neighbours tell about it: the uuids its parent session holds
// (copies repeat them), which session a summary-only file's summaries belong to, which record
// names a tool's output file, and the `.meta.json` beside a subagent. All but the last are read
// from what the history store holds (`Recall`), not from the files, so the answer is the same
// once Claude Code deleted them and after a rebuild. Bytes are read in bounded chunks.

import { basename, dirname, join } from "../path.ts";
import type { ConversationInfo, Recall, StoredChunk } from "./adapter.ts";
import { obj, str } from "./_text.ts";
import { JsonLineFields } from "./_json_fields.ts";

const CHUNK = 64 * 1024;
/** The first read of a file: its first line, most often. */
const FIRST_CHUNK = 4 * 1024;

/** A subagent's transcript, `agent-<id>.jsonl`, in its session's `subagents/` folder. */
export const AGENT_FILE = /^agent-(.+)\.jsonl$/;

/**
 * The conversation of subagent `agentId` of session `sessionId`: its key names both. Qwen Code
 * keeps its subagents the same way (`agent` is then `qwen`).
 */
export function subagentConversation(
  sessionId: string,
  agentId: string,
  agent = "claude",
): ConversationInfo {
  return {
    key: `${agent}:${sessionId}/agent-${agentId}`,
    nativeId: `${sessionId}/agent-${agentId}`,
    parentKey: `${agent}:${sessionId}`,
    subagent: true,
  };
}

/**
 * Calls `each` with the uuid of every line of `chunks` that has one (its top-level `uuid` field,
 * read as JSON reads it, however it is spaced or escaped), wherever the chunks cut it; stops
 * early when `each` returns true.
 */
export function scanUuids(
  chunks: Iterable<StoredChunk>,
  each: (uuid: string) => boolean | void,
): void {
  const fields = new JsonLineFields(["uuid"], { field: (_key, uuid) => each(uuid.toLowerCase()) });
  for (const chunk of chunks) {
    if (chunk.start && !fields.newLine()) return;
    if (!fields.write(chunk.bytes)) return;
  }
  fields.end();
}

/**
 * What a pass learnt from the store about the sources it read last, per pass (`Recall`), by key:
 * at most `keep` entries, the one used longest ago let go first. The sources read after the others
 * come folder by folder (a session's copies together, its tool outputs together), so what one asks
 * about its parent or its folder the next ones ask again, and then no other source does: a pass
 * that kept every parent's uuids until it ended held 40 MB more at the end of a 10 GB capture. An
 * entry let go is read again if asked for.
 */
class PassMemo<V> {
  readonly #passes = new WeakMap<Recall, Map<string, V>>();
  readonly #keep: number;

  constructor(keep: number) {
    this.#keep = keep;
  }

  /** The entry of `key` in `recall`'s pass, made by `make` when there is none. */
  get(recall: Recall, key: string, make: () => V): V {
    let entries = this.#passes.get(recall);
    if (!entries) this.#passes.set(recall, entries = new Map());
    let value = entries.get(key);
    if (value === undefined) value = make();
    // Set again: a map keeps its keys in the order set, so the first is the one used longest ago.
    entries.delete(key);
    entries.set(key, value);
    if (entries.size > this.#keep) entries.delete(entries.keys().next().value!);
    return value;
  }
}

/** The file at `path` in chunks, each read over by the next; nothing when it cannot be read. */
function* fileChunks(path: string): Iterable<StoredChunk> {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.PermissionDenied) return;
    throw err;
  }
  try {
    // A pass asks whether each of a folder's sessions is summary-only, and most answer with their
    // first line's type: the first read is small.
    let buffer = new Uint8Array(FIRST_CHUNK);
    for (let read = firstRead(file, buffer); read !== null; read = file.readSync(buffer)) {
      yield { bytes: buffer.subarray(0, read), start: false };
      if (buffer.length < CHUNK) buffer = new Uint8Array(CHUNK);
    }
  } finally {
    file.close();
  }
}

/**
 * The first read of `file`, or null when it is a folder now (a file replaced under the pass: its
 * own read reports that, as that source's error).
 */
function firstRead(file: Deno.FsFile, buffer: Uint8Array): number | null {
  try {
    return file.readSync(buffer);
  } catch (err) {
    if (err instanceof Deno.errors.IsADirectory) return null;
    throw err;
  }
}

/** The stored bytes of a source when the store has any, else its file's. */
function* storedOrFile(recall: Recall, locator: string): Iterable<StoredChunk> {
  let any = false;
  for (const chunk of recall.chunks(locator)) {
    any = true;
    yield chunk;
  }
  if (!any) yield* fileChunks(locator);
}

/** The uuids of the parent sessions whose copies were read last. */
const parentMemo = new PassMemo<Set<string>>(4);

/**
 * True when the stored parent session at `locator` holds a record with this uuid (a copy's line
 * repeats it). Its uuids are read once for its copies (copies are read after the others, so the
 * parent's records are stored by then). A parent the store lacks holds none: its copies are then
 * indexed (a duplicate hit is better than a lost one).
 */
export function parentHolds(recall: Recall, locator: string, uuid: string): boolean {
  const uuids = parentMemo.get(recall, locator, () => {
    const found = new Set<string>();
    scanUuids(recall.chunks(locator), (u) => void found.add(u));
    return found;
  });
  return uuids.has(uuid.toLowerCase());
}

/**
 * What a subagent's `.meta.json` says of it (`agent-<id>.meta.json` beside `agent-<id>.jsonl`:
 * `{"agentType","description"}`); null when there is none, or it names neither.
 */
export function subagentMeta(
  transcript: string,
): { type: string | null; description: string | null } | null {
  const path = transcript.replace(/\.jsonl$/, ".meta.json");
  let meta: Record<string, unknown> | null;
  try {
    if (Deno.statSync(path).size > 64 * 1024) return null;
    meta = obj(JSON.parse(Deno.readTextFileSync(path)));
  } catch {
    return null;
  }
  const type = str(meta?.agentType)?.trim() || null;
  const description = str(meta?.description)?.trim() || null;
  return type || description ? { type, description } : null;
}

/** Summary-only files are small: a file larger than this is not one. */
const SUMMARY_FILE_MAX = 4 << 20;
const SESSION_FILE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

/**
 * The leaf uuids of bytes made only of `summary` lines; null for anything else (another line,
 * no leaf, or more than a summary-only file holds). Stops at the first line of another type.
 */
function summaryLeaves(chunks: Iterable<StoredChunk>): string[] | null {
  const leaves: string[] = [];
  let type: string | null = null;
  let leaf: string | null = null;
  let only = true;
  const fields = new JsonLineFields(["type", "leafUuid"], {
    field: (key, value) => {
      if (key === "leafUuid") leaf = value.toLowerCase();
      else type = value;
      // A line of another type: the bytes are not a summary-only file's, read no further.
      if (type === null || type === "summary") return false;
      only = false;
      return true;
    },
    line: (blank) => {
      if (blank) return false;
      if (type !== "summary") {
        only = false;
        return true;
      }
      if (leaf) leaves.push(leaf);
      type = leaf = null;
      return false;
    },
  });
  let size = 0;
  for (const chunk of chunks) {
    size += chunk.bytes.length;
    if (size > SUMMARY_FILE_MAX) return null;
    if (chunk.start && !fields.newLine()) break;
    if (!fields.write(chunk.bytes)) break;
  }
  fields.end();
  return only && leaves.length > 0 ? leaves : null;
}

/**
 * True for a source made only of `summary` lines that name a leaf: from its stored bytes when
 * the store has them (a rebuild, its file perhaps gone), else from its file.
 */
export function isSummaryOnly(recall: Recall, locator: string): boolean {
  return summaryLeaves(storedOrFile(recall, locator)) !== null;
}

/** True for a file on disk made only of `summary` lines that name a leaf. */
export function isSummaryOnlyFile(path: string): boolean {
  return summaryLeaves(fileChunks(path)) !== null;
}

/** Per folder read last: the session each leaf uuid asked about is in (null: none holds it). */
const leafMemo = new PassMemo<Map<string, string | null>>(4);

/**
 * The session a summary of the summary-only file at `locator` names by its leaf uuid: the
 * stored session of the same folder that holds a record with that uuid, or null. The folder's
 * sessions are read once for the leaves of all its summary-only files.
 */
export function summarySession(recall: Recall, locator: string, leafUuid: string): string | null {
  const leaf = leafUuid.toLowerCase();
  const folder = dirname(locator);
  const sessions = leafMemo.get(recall, folder, () => {
    const found = new Map<string, string | null>();
    findLeaves(recall, folder, summaryFileLeaves(recall, folder, locator), found);
    return found;
  });
  if (!sessions.has(leaf)) findLeaves(recall, folder, new Set([leaf]), sessions);
  return sessions.get(leaf) ?? null;
}

/** The leaves of every summary-only source of `folder` (and of `locator`, which is one). */
function summaryFileLeaves(recall: Recall, folder: string, locator: string): Set<string> {
  const wanted = new Set<string>();
  const names = new Set([...recall.sources(folder), locator]);
  for (const name of names) {
    if (!SESSION_FILE.test(basename(name))) continue;
    for (const leaf of summaryLeaves(storedOrFile(recall, name)) ?? []) wanted.add(leaf);
  }
  return wanted;
}

/** Records in `into` which stored session of `folder` holds each of `wanted` (null: none). */
function findLeaves(
  recall: Recall,
  folder: string,
  wanted: Set<string>,
  into: Map<string, string | null>,
): void {
  const left = new Set([...wanted].filter((leaf) => !into.has(leaf)));
  for (const locator of recall.sources(folder)) {
    if (left.size === 0) break;
    const session = SESSION_FILE.exec(basename(locator))?.[1]?.toLowerCase();
    if (!session) continue;
    scanUuids(recall.chunks(locator), (uuid) => {
      if (left.delete(uuid)) into.set(uuid, session);
      return left.size === 0;
    });
  }
  for (const leaf of left) into.set(leaf, null);
}

/** The parent session file of a copy (`<session>/subagents/agent-…` or a flat `agent-…`). */
export function parentSessionPath(path: string, sessionId: string): string {
  const folder = dirname(path);
  const project = basename(folder) === "subagents" ? dirname(dirname(folder)) : folder;
  return join(project, `${sessionId}.jsonl`);
}

/** The folder of a session's own files (`<project>/<session>/`: subagents, tool results). */
export function sessionFolder(path: string, sessionId: string): string {
  return parentSessionPath(path, sessionId).replace(/\.jsonl$/, "");
}

/** The file a `<persisted-output>` preview says holds the whole output (its name), or null. */
function persistedOutputName(text: string): string | null {
  if (!text.startsWith("<persisted-output>")) return null;
  const path = /saved to:[ \t]*([^\n]+?)[ \t]*(?:\n|$)/.exec(text)?.[1];
  const name = path?.split(/[\\/]/).pop();
  return name ? name : null;
}

/** The output files a record's `<persisted-output>` tool results name, with their tool uses. */
export function persistedOutputs(
  record: Record<string, unknown>,
): { name: string; toolUseId: string | null }[] {
  const content = obj(record.message)?.content;
  if (!Array.isArray(content)) return [];
  const out: { name: string; toolUseId: string | null }[] = [];
  for (const item of content) {
    const block = obj(item);
    if (block?.type !== "tool_result") continue;
    const name = persistedOutputName(resultText(block.content));
    if (name) out.push({ name, toolUseId: str(block.tool_use_id) });
  }
  return out;
}

/** A transcript record that names a tool's output file, with the tool use it belongs to. */
export interface Naming {
  /** The transcript that holds it. */
  transcript: string;
  /**
   * What the record tells of the output: its time, uuid and directory. Only these are kept: a
   * pass keeps what every transcript it looked in names, and the whole records, previews and
   * all, were 29 MB of heap at the end of a 10 GB capture.
   */
  record: { cwd: unknown; timestamp: unknown; uuid: unknown };
  toolUseId: string | null;
}

/** Lines longer than this are not searched for the output files they name. */
const NAMING_LINE_MAX = 8 << 20;
/** Per set of transcripts (a session's, then its subagents') read last: what each names. */
const namingMemo = new PassMemo<Map<string, Map<string, Naming>>>(4);

/**
 * The stored record of `transcripts` (in order) whose `<persisted-output>` preview names the
 * output file `name`, or null. Each transcript is read once for the output files of its folder.
 */
export function namingRecord(
  recall: Recall,
  transcripts: readonly string[],
  name: string,
): Naming | null {
  const memo = namingMemo.get(recall, transcripts.join("\n"), () => new Map());
  for (const transcript of transcripts) {
    let names = memo.get(transcript);
    if (!names) memo.set(transcript, names = namesIn(recall, transcript));
    const found = names.get(name);
    if (found) return found;
  }
  return null;
}

/** The output files the stored records of `transcript` name, by file name. */
function namesIn(recall: Recall, transcript: string): Map<string, Naming> {
  const names = new Map<string, Naming>();
  const decoder = new TextDecoder();
  const take = (parts: Uint8Array[], size: number) => {
    if (!parts.length || size > NAMING_LINE_MAX) return;
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const part of parts) {
      bytes.set(part, at);
      at += part.length;
    }
    const text = decoder.decode(bytes);
    if (!text.includes("<persisted-output>")) return;
    let record: Record<string, unknown> | null;
    try {
      record = obj(JSON.parse(text));
    } catch {
      return;
    }
    if (!record) return;
    const kept = { cwd: record.cwd, timestamp: record.timestamp, uuid: record.uuid };
    for (const { name, toolUseId } of persistedOutputs(record)) {
      if (!names.has(name)) names.set(name, { transcript, record: kept, toolUseId });
    }
  };
  let parts: Uint8Array[] = [];
  let size = 0;
  for (const chunk of recall.chunks(transcript)) {
    if (chunk.start) {
      take(parts, size);
      parts = [];
      size = 0;
    }
    size += chunk.bytes.length;
    // A line too long to search is passed over without holding it.
    if (size <= NAMING_LINE_MAX) parts.push(chunk.bytes);
    else parts = [];
  }
  take(parts, size);
  return names;
}

/** The text of a `tool_result` block's content: a string, or its text blocks. */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b) => str(obj(b)?.text) ?? "").join("\n");
}
