// What a Claude Code transcript's neighbours tell about it: the `.meta.json` beside a subagent
// file, the uuids its parent session already holds (copies repeat them), and which session a
// summary-only file's summaries belong to. Files are read in bounded chunks, never whole.

import { basename, dirname, join } from "node:path";
import { obj, str } from "./_text.ts";

const CHUNK = 1 << 20;
/** A `"uuid":"…"` field, as Claude Code writes it (no spaces), with room to spare at a cut. */
const UUID_FIELD = /"uuid":"([0-9a-fA-F-]{36})"/g;
const OVERLAP = 64;

/** Calls `each` with every uuid written as a `"uuid"` field in `path`; a missing file has none. */
function scanUuids(path: string, each: (uuid: string) => void): void {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.PermissionDenied) return;
    throw err;
  }
  try {
    const buffer = new Uint8Array(CHUNK);
    const stream = new TextDecoder();
    let carry = "";
    for (let read = file.readSync(buffer); read !== null; read = file.readSync(buffer)) {
      const text = carry + stream.decode(buffer.subarray(0, read), { stream: true });
      // A match that starts before the tail kept for the next chunk is whole here (a field is
      // shorter than the tail); one that starts in the tail is found with the next chunk.
      const keepFrom = Math.max(0, text.length - OVERLAP);
      UUID_FIELD.lastIndex = 0;
      for (let m = UUID_FIELD.exec(text); m && m.index < keepFrom; m = UUID_FIELD.exec(text)) {
        each(m[1]!.toLowerCase());
      }
      carry = text.slice(keepFrom);
    }
    UUID_FIELD.lastIndex = 0;
    for (let m = UUID_FIELD.exec(carry); m; m = UUID_FIELD.exec(carry)) {
      each(m[1]!.toLowerCase());
    }
  } finally {
    file.close();
  }
}

function signatureOf(path: string): string | null {
  try {
    const stat = Deno.statSync(path);
    return `${stat.size}:${stat.mtime?.getTime() ?? 0}:${stat.ino ?? 0}`;
  } catch {
    return null;
  }
}

let parentMemo: { path: string; signature: string; uuids: Set<string> } | null = null;

/**
 * True when the parent session at `path` holds a record with this uuid (a copy's line repeats
 * it). The parent's uuids are read once per version of its file, and read again only when a
 * uuid is not among them. A missing parent holds none: its copies are then indexed (a
 * duplicate hit is better than a lost one).
 */
export function parentHolds(path: string, uuid: string): boolean {
  const wanted = uuid.toLowerCase();
  if (parentMemo?.path === path && parentMemo.uuids.has(wanted)) return true;
  return parentUuids(path)?.has(wanted) ?? false;
}

function parentUuids(path: string): Set<string> | null {
  const signature = signatureOf(path);
  if (signature === null) return null;
  if (parentMemo?.path === path && parentMemo.signature === signature) return parentMemo.uuids;
  const uuids = new Set<string>();
  scanUuids(path, (uuid) => uuids.add(uuid));
  parentMemo = { path, signature, uuids };
  return uuids;
}

/**
 * The title a subagent's `.meta.json` gives it (`agent-<id>.meta.json` beside `agent-<id>.jsonl`:
 * `{"agentType","description"}`), as `<agentType>: <description>`; null when there is none.
 */
export function subagentTitle(transcript: string): string | null {
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
  if (type && description) return `${type}: ${description}`;
  return description ?? type;
}

/** Summary-only files are small: a file larger than this is not one. */
const SUMMARY_FILE_MAX = 4 << 20;
const SUMMARY_LINE = /^\{"type":"summary"/;
const LEAF = /"leafUuid":"([0-9a-fA-F-]{36})"/;
const SESSION_FILE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

/** The leaf uuids of a file made only of `summary` lines; null for any other file. */
function summaryOnlyLeaves(path: string): string[] | null {
  let text: string;
  try {
    if (Deno.statSync(path).size > SUMMARY_FILE_MAX) return null;
    text = Deno.readTextFileSync(path);
  } catch {
    return null;
  }
  const leaves: string[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    if (!SUMMARY_LINE.test(line)) return null;
    const leaf = LEAF.exec(line)?.[1];
    if (leaf) leaves.push(leaf.toLowerCase());
  }
  return leaves.length > 0 ? leaves : null;
}

/** True for a file made only of `summary` lines that name a leaf. */
export function isSummaryOnly(path: string): boolean {
  return summaryOnlyLeaves(path) !== null;
}

let leafMemo: { folder: string; signature: string; sessions: Map<string, string> } | null = null;

/**
 * The session each summary of the summary-only files in `folder` names (leaf uuid → session
 * id): the session file that holds a record with that uuid. The folder is read once per version
 * of its files, and only for the leaves wanted.
 */
export function leafSessions(folder: string): Map<string, string> {
  let names: string[];
  try {
    names = [...Deno.readDirSync(folder)]
      .filter((e) => e.isFile && e.name.endsWith(".jsonl"))
      .map((e) => e.name)
      .sort();
  } catch {
    return new Map();
  }
  const signature = names.map((n) => `${n}=${signatureOf(join(folder, n))}`).join("\n");
  if (leafMemo?.folder === folder && leafMemo.signature === signature) return leafMemo.sessions;
  const wanted = new Set<string>();
  const summaryFiles = new Set<string>();
  for (const name of names) {
    const leaves = summaryOnlyLeaves(join(folder, name));
    if (!leaves) continue;
    summaryFiles.add(name);
    for (const leaf of leaves) wanted.add(leaf);
  }
  const sessions = new Map<string, string>();
  if (wanted.size > 0) {
    for (const name of names) {
      const session = SESSION_FILE.exec(name)?.[1];
      if (!session || summaryFiles.has(name)) continue;
      scanUuids(join(folder, name), (uuid) => {
        if (wanted.has(uuid) && !sessions.has(uuid)) sessions.set(uuid, session.toLowerCase());
      });
    }
  }
  leafMemo = { folder, signature, sessions };
  return sessions;
}

/** The session a summary names by its leaf uuid, when `path` is a summary-only file. */
export function summarySession(path: string, leafUuid: string): string | null {
  return leafSessions(dirname(path)).get(leafUuid.toLowerCase()) ?? null;
}

/** The parent session file of a copy (`<session>/subagents/agent-…` or a flat `agent-…`). */
export function parentSessionPath(path: string, sessionId: string): string {
  const folder = dirname(path);
  const project = basename(folder) === "subagents" ? dirname(dirname(folder)) : folder;
  return join(project, `${sessionId}.jsonl`);
}
