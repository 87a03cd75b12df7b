// The Aider adapter: reads the chat history Aider appends to in each project
// (`<project>/.aider.chat.history.md`, see aider_text.ts for its parts), one conversation per
// session header.
//
// The file is Markdown, not JSONL, and a message spans many lines, so it is read as a row source:
// each record is one block of the file, its exact bytes (the blank lines before a block belong to
// it), and the records of a file put end to end are the file. A read continues from the byte
// after the last block read, so an append is read alone (with the file's first 4 KiB and the
// 64 KiB before that byte, to tell that the file still continues what was read); blank lines at
// the end wait for what follows them, and so does a last line without its newline (Aider writes
// each part whole).
// A file that no longer continues what was read (shorter, or its read part changed) is read
// again from its start: each block's key (its session, its place in it and its text) supersedes
// the same block read before, so a search finds it once and `show` shows it once; a block the
// rewrite removed or changed stays as it was read.

import { agentRoots } from "../agents.ts";
import { dirname, isAbsolute, join } from "../path.ts";
import { homeDir } from "../paths.ts";
import { sha256Hex } from "../sha256.ts";
import {
  type ConversationInfo,
  type Derived,
  type DiscoverContext,
  makeDerived,
  type RowAdapter,
  type RowRead,
  type SourceRef,
  type Usage,
} from "./adapter.ts";
import {
  AIDER_HISTORY_FILE,
  aiderBlockText,
  type BlockKind,
  blockOf,
  closesReasoning,
  lineBody,
  type LineKind,
  lineKind,
  sessionTime,
} from "./aider_text.ts";
import { titleFrom } from "./_text.ts";
import { walkFiles } from "./_walk.ts";
import { fileSignature } from "./_file_signature.ts";

/** What the adapter remembers between blocks: where it is and the session it is in. */
export interface AiderState {
  /** The position of the next block in the file (since the read began at its start). */
  at: number;
  session: {
    id: string;
    /** Where its header starts: a block's key is its place after it. */
    base: number;
    titled: boolean;
    /** The main model its start-up notice (or a `/model` switch) named, for its calls. */
    model?: string | null;
  } | null;
  /** The Aider version the session's start-up notice names (`> Aider v0.86.2`). */
  version: string | null;
}

/** Where cutting blocks stands after a line: the block open, and what it is inside of. */
export interface CutState {
  open: BlockKind | null;
  /** True inside a message of Aider's over several lines, until its last line. */
  pending: boolean;
  /** True once a reasoning block's closing tag was read. */
  closed: boolean;
  /** True when the line before was blank. */
  blank: boolean;
}

/**
 * What a read left: where it stopped, hashes of the file's first bytes and of the bytes before
 * that place (as the engine checks a JSONL file that grew), and the cut's state.
 */
interface Cursor {
  at: number;
  head: string;
  tail: string;
  cut: CutState;
}

/** The bytes at the start and before the cursor that must not have changed for a read to go on. */
const HEAD_BYTES = 4 * 1024;
const TAIL_BYTES = 64 * 1024;
/** How much of the file one read takes at least (it takes twice its budget when that is more). */
const WINDOW_BYTES = 1024 * 1024;

/** How deep under a configured root chat histories are looked for (`<root>/<group>/<project>`). */
const ROOT_DEPTH = 3;

const FRESH: CutState = { open: null, pending: false, closed: false, blank: false };
const utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const encoder = new TextEncoder();

/** Aider's chat histories, as capture reads them. */
export const aider: RowAdapter<AiderState> = {
  agent: "aider",
  mode: "rows",
  // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
  // 1: the first version.
  // 2: a block of Aider's output with its `Tokens: …` report is a model call for `usage`.
  derivation: 2,
  skipKeys: new Set(),
  roots: (ctx) => agentRoots("aider", ctx),

  async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
    const seen = new Set<string>();
    const found = (path: string): SourceRef | null => {
      if (seen.has(path)) return null;
      seen.add(path);
      return { agent: "aider", locator: path, path, format: "rows" };
    };
    for (const root of agentRoots("aider", ctx)) {
      // A root naming a file is a history under another name (`AIDER_CHAT_HISTORY_FILE`),
      // followed when it is a link, as a linked root folder is.
      if (isFile(root, true)) {
        const ref = found(root);
        if (ref) yield ref;
        continue;
      }
      const named = (name: string) => name === AIDER_HISTORY_FILE;
      for (const path of walkFiles(root, named, ctx, ROOT_DEPTH)) {
        const ref = found(path);
        if (ref) yield ref;
      }
    }
    for (const dir of projectDirs(ctx)) {
      const path = join(dir, AIDER_HISTORY_FILE);
      if (!isFile(path, false)) continue;
      const ref = found(path);
      if (ref) yield ref;
    }
  },

  fingerprint(source: SourceRef): string {
    return fileSignature(source.path);
  },

  initialState(): AiderState {
    return { at: 0, session: null, version: null };
  },

  async readRows(source: SourceRef, cursorKey: string | null, budget: number): Promise<RowRead> {
    const file = await Deno.open(source.path, { read: true });
    try {
      const size = (await file.stat()).size;
      let cursor = parseCursor(cursorKey);
      // Read again from the start when the file no longer continues what was read.
      if (cursor && !(size >= cursor.at && await continues(file, cursor))) cursor = null;
      const at = cursor?.at ?? 0;
      // What follows, a window at a time: a block longer than the window widens it.
      for (let window = Math.max(2 * budget, WINDOW_BYTES);; window *= 2) {
        const to = Math.min(size, at + window);
        const bytes = await readRange(file, at, to);
        const cut = cutBlocks(bytes, cursor?.cut ?? FRESH, budget, to === size);
        if (cut.rows.length === 0 && to < size) continue;
        const end = at + cut.end;
        const next: Cursor = { at: end, ...(await marksOf(file, end)), cut: cut.state };
        return { rows: cut.rows, cursorKey: JSON.stringify(next), more: cut.more };
      }
    } finally {
      file.close();
    }
  },

  parseRow(raw: Uint8Array, state: AiderState, source: SourceRef): Derived {
    return derive(raw, state, source);
  },

  textOf: aiderBlockText,
};

// ---- discovery ----

/** True for a regular file at `path`, through a symbolic link only when `follow`. */
function isFile(path: string, follow: boolean): boolean {
  try {
    return (follow ? Deno.statSync(path) : Deno.lstatSync(path)).isFile;
  } catch {
    return false;
  }
}

/**
 * The projects logbook knows (`DiscoverContext.projects`) and the folders above each up to the
 * home folder: Aider writes its history at the top of the git work tree, and a conversation's
 * directory may be below it.
 */
function projectDirs(ctx: DiscoverContext): string[] {
  const home = homeDir(ctx.env);
  const dirs = new Set<string>();
  for (const project of ctx.projects ?? []) {
    if (!isAbsolute(project)) continue;
    let dir = project;
    while (!dirs.has(dir)) {
      dirs.add(dir);
      const parent = dirname(dir);
      if (dir === home || parent === dir || parent === dirname(parent)) break;
      dir = parent;
    }
  }
  return [...dirs];
}

// ---- cutting the file into blocks ----

function parseCursor(key: string | null): Cursor | null {
  if (!key) return null;
  try {
    const cursor = JSON.parse(key) as Cursor;
    return typeof cursor.at === "number" && typeof cursor.head === "string" &&
        typeof cursor.tail === "string"
      ? cursor
      : null;
  } catch {
    return null;
  }
}

/** The hashes of the file's first bytes and of the bytes before `end`. */
async function marksOf(file: Deno.FsFile, end: number): Promise<{ head: string; tail: string }> {
  return {
    head: sha256Hex(await readRange(file, 0, Math.min(HEAD_BYTES, end))),
    tail: sha256Hex(await readRange(file, Math.max(0, end - TAIL_BYTES), end)),
  };
}

/** True when the file still holds what the cursor's hashes remember. */
async function continues(file: Deno.FsFile, cursor: Cursor): Promise<boolean> {
  const marks = await marksOf(file, cursor.at);
  return marks.head === cursor.head && marks.tail === cursor.tail;
}

/** The file's bytes from `from` up to `to` (fewer when it ends first). */
async function readRange(file: Deno.FsFile, from: number, to: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(Math.max(0, to - from));
  await file.seek(from, Deno.SeekMode.Start);
  let filled = 0;
  while (filled < bytes.length) {
    const n = await file.read(bytes.subarray(filled));
    if (n === null || n === 0) break;
    filled += n;
  }
  return bytes.subarray(0, filled);
}

/** What a line starts when a block starts at it. */
const STARTS: Record<Exclude<LineKind, "blank">, BlockKind> = {
  session: "session",
  user: "user",
  output: "output",
  reasoning: "reasoning",
  text: "assistant",
};

/**
 * Reads one non-blank line into `state`; returns the kind of block it starts, or null when it
 * goes on the block open.
 *
 * A reply ends only at a line of Aider's own (`#### `, `> ` or a session header, ending in its
 * two spaces) after a blank line: Aider writes a reply whole, ending in a blank line, so a
 * reply's own `> ` quote, `#### ` heading or code line stays in it. Code fences are not counted:
 * replies nest them unevenly (a Markdown file's edit block holding code blocks).
 *
 * A message of Aider's over several lines (a `/run` output, an install hint) has the `> ` on its
 * first line only and its two spaces on its last: right after Aider's own lines, a `>` line
 * without them opens such a message, which goes on, blank lines and all, to its last line.
 */
export function stepLine(line: string, state: CutState): BlockKind | null {
  const kind = lineKind(line) as Exclude<LineKind, "blank">;
  const body = lineBody(line);
  let starts: BlockKind | null = null;
  if (state.pending) {
    // A session header, or a prompt after a blank line, still starts: the message was cut.
    if (kind === "session" || (kind === "user" && state.blank)) starts = kind;
    else {
      if (body.endsWith("  ")) state.pending = false;
      return null;
    }
  } else {
    switch (state.open) {
      case "assistant":
        if (state.blank && (kind === "session" || kind === "user" || kind === "output")) {
          starts = kind;
        }
        break;
      case "reasoning":
        if (state.closed) starts = STARTS[kind];
        else if (closesReasoning(line)) state.closed = true;
        break;
      case "user":
      case "output":
        if (!state.blank && body.startsWith(">")) {
          if (state.open === "user") starts = "output";
        } else if (kind !== state.open || state.blank) starts = STARTS[kind];
        break;
      default:
        starts = STARTS[kind];
    }
  }
  if (starts) {
    state.open = starts;
    state.closed = false;
  }
  state.pending = state.open === "output" && !body.endsWith("  ");
  return starts;
}

/**
 * Cuts `bytes` (the file from where the last read stopped) into blocks, until about `budget`
 * bytes. Only whole lines are read; blank lines at the end wait for the block they lead into.
 * Unless `toEnd` (the bytes run to the file's end), the last block waits for the next read, as
 * it may go on past them. Returns the blocks, how many bytes they span, and the state to go on
 * from.
 */
export function cutBlocks(
  bytes: Uint8Array,
  from: CutState,
  budget: number,
  toEnd = true,
): { rows: Uint8Array[]; end: number; state: CutState; more: boolean } {
  const state = { ...from };
  let settled = { ...from, blank: false };
  let atCut = settled;
  const rows: Uint8Array[] = [];
  let rowStart = 0;
  let blankStart = -1;
  let taken = 0;
  let at = 0;
  while (at < bytes.length) {
    const newline = bytes.indexOf(0x0a, at);
    if (newline < 0) break;
    const end = newline + 1;
    const line = utf8.decode(bytes.subarray(at, end));
    if (lineKind(line) === "blank") {
      if (blankStart < 0) blankStart = at;
      state.blank = true;
      at = end;
      continue;
    }
    const before = settled;
    if (stepLine(line, state)) {
      const cut = blankStart >= 0 ? blankStart : at;
      if (cut > rowStart) {
        rows.push(bytes.slice(rowStart, cut));
        taken += cut - rowStart;
        rowStart = cut;
        atCut = before;
        if (taken >= budget) return { rows, end: cut, state: before, more: true };
      }
    }
    state.blank = false;
    blankStart = -1;
    settled = { ...state };
    at = end;
  }
  if (!toEnd) return { rows, end: rowStart, state: atCut, more: true };
  const end = blankStart >= 0 ? blankStart : at;
  if (end > rowStart) rows.push(bytes.slice(rowStart, end));
  return { rows, end, state: settled, more: false };
}

// ---- deriving a block ----

/** A session's id: the project's hash and the session's start (`1a2b3c4d-20260624T002934`). */
export function sessionId(project: string, started: string): string {
  const time = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(started)
    ? started.replace(/-/g, "").replace(" ", "T").replace(/:/g, "")
    : `x${sha256Hex(started).slice(0, 12)}`;
  return `${sha256Hex(project).slice(0, 8)}-${time}`;
}

const VERSION = /^Aider v(\S+)/m;

function derive(raw: Uint8Array, state: AiderState, source: SourceRef): Derived {
  const block = blockOf(raw);
  const start = state.at;
  state.at += raw.length;
  const project = dirname(source.path);
  if (block.kind === "session") {
    const id = sessionId(project, block.started!);
    state.session = { id, base: start, titled: false, model: null };
    state.version = null;
    const ts = sessionTime(block.started!);
    return makeDerived("event", null, conversationOf(id, project), {
      ts,
      version: null,
      key: keyOf(state, start, block.text),
      supersedes: true,
      drift: ts === null
        ? { category: "unparsable", detail: "session header without a time Aider writes" }
        : null,
    });
  }
  if (!state.session) {
    return makeDerived("meta", null, null, {
      text: block.text,
      drift: { category: "missing_fields", detail: "text before the first session header" },
    });
  }
  const conversation = conversationOf(state.session.id, project);
  const common = { text: block.text, key: keyOf(state, start, block.text), supersedes: true };
  switch (block.kind) {
    case "user": {
      const title = !state.session.titled && block.text !== "" && !block.text.startsWith("/");
      if (title) state.session.titled = true;
      return makeDerived("message", "user", conversation, {
        ...common,
        newMessage: true,
        version: state.version,
        title: title ? { text: titleFrom(block.text), rank: 1 } : null,
      });
    }
    case "output": {
      state.version = VERSION.exec(block.text)?.[1] ?? state.version;
      state.session.model = MODEL.exec(block.text)?.[1] ?? state.session.model ?? null;
      const usage = reportedUsage(raw, block.text, state, start);
      return makeDerived("event", null, conversation, { ...common, version: state.version, usage });
    }
    case "reasoning":
      return makeDerived("reasoning", "assistant", conversation, {
        ...common,
        version: state.version,
      });
    default:
      return makeDerived("message", "assistant", conversation, {
        ...common,
        newMessage: true,
        version: state.version,
        usage: reportedUsage(raw, trailingReport(block.text), state, start, true),
      });
  }
}

/** The main model a start-up notice names (`Main model: gpt-4o with diff edit format`). */
const MODEL = /^(?:Main model|Models?): (\S+?),?(?: |$)/m;

/**
 * What Aider reports after each reply: `Tokens: 2.3k sent, 1.2k cache write, 5k cache hit, 150
 * received.`, then (where it knows the model's price) `Cost: $0.01 message, $0.05 session.` on
 * the same line or the next. Older versions wrote `1,234`, `cached` and `request`; a history
 * passed through a Markdown formatter may have its `$` escaped (`\$0.06`).
 */
const TOKENS =
  /^Tokens: ([^\n]*?) received\.(?:\s*Cost: \\?\$(\d+(?:\.\d+)?) (?:message|request),)?/gm;
const COUNT = /([\d.,]+)(k?) (sent|cache write|cache hit|cached|received)/g;

/**
 * A report over two lines (`Tokens: …` with both cache counts, then `Cost: …` on a line of its
 * own) ends the reply it follows: its first line lacks the two spaces that make a line Aider's, so
 * the block goes on to it. Only such a report, whole at the reply's end, is taken from a reply.
 */
function trailingReport(text: string): string {
  const at = [...text.matchAll(/^> Tokens: /gm)].at(-1)?.index;
  if (at === undefined) return "";
  const tail = text.slice(at);
  return /^> Tokens: [^\n]* received\.\nCost: [^\n]* session\.[^\n]*$/.test(tail)
    ? tail.slice(2)
    : "";
}

/**
 * The model call (or calls: each `Tokens:` report of the block) an output block of Aider's
 * reports: named by its session and the report's place after the session's header, so a block
 * read again after a rewrite, or read in two parts, counts once. The counts are Aider's rounded
 * ones (`2.3k`); `sent` holds what was read from and written to the cache, which the input leaves
 * out. The cost is as Aider wrote it; none (or 0) leaves the tokens to be priced.
 */
function reportedUsage(
  raw: Uint8Array,
  text: string,
  state: AiderState,
  start: number,
  reply = false,
): Usage | null {
  const reports = [...text.matchAll(TOKENS)];
  if (!reports.length) return null;
  const count = { sent: 0, write: 0, hit: 0, received: 0 };
  let cost: number | null = null;
  for (const report of reports) {
    for (const [, digits, k, label] of `${report[1]} received`.matchAll(COUNT)) {
      const n = Math.round(Number(digits!.replace(/,/g, "")) * (k ? 1000 : 1)) || 0;
      if (label === "sent") count.sent += n;
      else if (label === "cache write") count.write += n;
      else if (label === "received") count.received += n;
      else count.hit += n;
    }
    const spent = Number(report[2] ?? 0);
    if (spent > 0) cost = (cost ?? 0) + spent;
  }
  // The report's place: its `Tokens:` line's byte after the session's header (a reply's last,
  // a block of Aider's first).
  const decoded = utf8.decode(raw);
  const lines = [...decoded.matchAll(/^> ?Tokens: /gm)];
  const line = (reply ? lines.at(-1) : lines[0])?.index ?? 0;
  const at = start - state.session!.base + encoder.encode(decoded.slice(0, line)).length;
  return {
    call: `tokens:${state.session!.id}+${at}`,
    model: state.session!.model ?? null,
    input: Math.max(0, count.sent - count.hit - count.write),
    output: count.received,
    cacheWrite: count.write,
    cacheRead: count.hit,
    cost,
  };
}

/**
 * A block's key: its session, its place after the session's header, and a hash of its text. A
 * file read again from its start gives each block it still holds the key it had, and the block
 * supersedes its first reading; a block the rewrite changed keeps both readings.
 */
function keyOf(state: AiderState, start: number, text: string): string {
  const place = start - state.session!.base;
  return `block:${state.session!.id}+${place}:${sha256Hex(text).slice(0, 12)}`;
}

function conversationOf(id: string, project: string): ConversationInfo {
  return { key: `aider:${id}`, nativeId: id, cwd: project };
}
