// What was typed at logbook's prompts (`prompt-history.jsonl`: capped, consecutive duplicates
// collapsed, each entry with its time and project) and the line editor whose Up/Down walk it.

import { assertNoSymlinkInside, SymlinkRefusedError, writeFileAtomic } from "./private_fs.ts";

/** How many entries the history keeps; the oldest go first. */
export const HISTORY_CAP = 1000;

/** One prompt as the history keeps it. Entries written before time or project were kept lack them. */
export interface HistoryEntry {
  text: string;
  /** When it was sent (ISO). */
  at?: string;
  /** The project root it was sent from. */
  project?: string;
}

/** An entry together with the exact line it was read from, so old lines are written back as they came. */
interface StoredLine {
  entry: HistoryEntry;
  line: string;
}

/** What `add` did, so a cancelled prompt can be taken back out exactly. */
export interface HistoryMark {
  entry: HistoryEntry;
  line: string;
  /** The entry a consecutive duplicate replaced, put back if the prompt is cancelled. */
  replaced?: StoredLine;
}

/** Options of a prompt history. */
export interface PromptHistoryOptions {
  /** `prompt-history.jsonl` in the data dir. */
  path: string;
  /** The data dir (files are written owner-only inside it, links refused). */
  root: string;
  /** The project root entries are tagged with. */
  project: string;
  /** Passes each prompt through the gate before it is written. */
  redact: (text: string) => string;
  /** With incognito nothing is written; the history is still read. */
  incognito?: boolean;
  now?: () => number;
  cap?: number;
}

/**
 * The prompt history file. Reading never fails: a missing, unreadable or corrupt file reads as
 * empty. Writes rewrite the file atomically from what is on disk at that moment, so two sessions
 * do not lose each other's prompts; they throw when the disk refuses.
 */
export class PromptHistory {
  readonly #o: Required<Omit<PromptHistoryOptions, "incognito">> & { incognito: boolean };

  constructor(options: PromptHistoryOptions) {
    this.#o = {
      incognito: false,
      now: Date.now,
      cap: HISTORY_CAP,
      ...options,
    };
  }

  /** Every entry, oldest first; empty when the file is missing or corrupt. */
  entries(): HistoryEntry[] {
    return this.#read().map((s) => s.entry);
  }

  /** The texts, oldest first, as the line editor walks them. */
  texts(): string[] {
    return this.entries().map((e) => e.text);
  }

  /**
   * Records a prompt (through the gate). A prompt equal to the newest entry replaces it rather
   * than adding a second one. Returns undefined, writing nothing, for a blank prompt or incognito.
   */
  add(text: string): HistoryMark | undefined {
    if (this.#o.incognito || text.trim() === "") return undefined;
    const entry: HistoryEntry = {
      text: this.#o.redact(text),
      at: new Date(this.#o.now()).toISOString(),
      project: this.#o.project,
    };
    const line = JSON.stringify(entry);
    const lines = this.#read();
    const last = lines.at(-1);
    let replaced: StoredLine | undefined;
    if (last && last.entry.text === entry.text) replaced = lines.pop();
    lines.push({ entry, line });
    this.#write(lines.slice(-this.#o.cap));
    return replaced ? { entry, line, replaced } : { entry, line };
  }

  /** Takes a cancelled prompt back out (and puts back the duplicate it collapsed, if any). */
  remove(mark: HistoryMark): void {
    if (this.#o.incognito) return;
    const lines = this.#read();
    for (let i = lines.length - 1; i >= 0; i--) {
      if (lines[i]!.line === mark.line) {
        lines.splice(i, 1, ...(mark.replaced ? [mark.replaced] : []));
        this.#write(lines);
        return;
      }
    }
  }

  #read(): StoredLine[] {
    let text: string;
    try {
      assertNoSymlinkInside(this.#o.path, this.#o.root);
      text = new TextDecoder("utf-8", { fatal: true }).decode(Deno.readFileSync(this.#o.path));
    } catch (err) {
      if (
        err instanceof Deno.errors.NotFound || err instanceof Deno.errors.PermissionDenied ||
        err instanceof Deno.errors.NotADirectory || err instanceof Deno.errors.IsADirectory ||
        err instanceof SymlinkRefusedError || err instanceof TypeError
      ) {
        return [];
      }
      throw err;
    }
    const out: StoredLine[] = [];
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      const entry = parseLine(line);
      // One unreadable line means the file is not what this build wrote: it reads as no history.
      if (entry === undefined) return [];
      out.push({ entry, line });
    }
    return out;
  }

  #write(lines: StoredLine[]): void {
    const text = lines.map((l) => l.line + "\n").join("");
    writeFileAtomic(this.#o.path, text, this.#o.root);
  }
}

/** An entry from one line: an object with a `text`, or (older histories) a bare JSON string. */
function parseLine(line: string): HistoryEntry | undefined {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof json === "string") return { text: json };
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const o = json as Record<string, unknown>;
  if (typeof o.text !== "string") return undefined;
  const entry: HistoryEntry = { text: o.text };
  if (typeof o.at === "string") entry.at = o.at;
  if (typeof o.project === "string") entry.project = o.project;
  return entry;
}

// ---------------------------------------------------------------------------------------------
// Walking the history.

/**
 * Up and Down over a fixed list of prompts. Up walks back from the newest and stops at the oldest;
 * Down walks forward, and leaving the newest puts back the half-written line.
 */
export class HistoryWalker {
  readonly #entries: readonly string[];
  #index: number;
  #draft = "";

  constructor(entries: readonly string[]) {
    // A snapshot: prompts recorded while browsing do not shift the view.
    this.#entries = [...entries];
    this.#index = this.#entries.length;
  }

  /** True while an entry (not the half-written line) is shown. */
  get browsing(): boolean {
    return this.#index < this.#entries.length;
  }

  /** The line to show after Up, or undefined when already at the oldest (or there is none). */
  up(current: string): string | undefined {
    if (this.#index === 0 || this.#entries.length === 0) return undefined;
    if (!this.browsing) this.#draft = current;
    this.#index--;
    return this.#entries[this.#index];
  }

  /** The line to show after Down, or undefined when not browsing. */
  down(): string | undefined {
    if (!this.browsing) return undefined;
    this.#index++;
    return this.browsing ? this.#entries[this.#index] : this.#draft;
  }
}

// ---------------------------------------------------------------------------------------------
// The line editor.

/** A key press, decoded from what a raw-mode terminal sends. */
export type Key = { kind: "text"; text: string } | { kind: KeyName };

/** The keys that are not text. */
export type KeyName =
  | "enter"
  | "backspace"
  | "delete"
  | "left"
  | "right"
  | "home"
  | "end"
  | "up"
  | "down"
  | "interrupt"
  | "eof"
  | "killLine"
  | "killEnd"
  | "killWord"
  | "ignore";

const ESCAPES: Record<string, KeyName> = {
  "[A": "up",
  "OA": "up",
  "[B": "down",
  "OB": "down",
  "[C": "right",
  "OC": "right",
  "[D": "left",
  "OD": "left",
  "[H": "home",
  "OH": "home",
  "[1~": "home",
  "[7~": "home",
  "[F": "end",
  "OF": "end",
  "[4~": "end",
  "[8~": "end",
  "[3~": "delete",
};

const CONTROLS: Record<string, KeyName> = {
  "\r": "enter",
  "\n": "enter",
  "\x7f": "backspace",
  "\x08": "backspace",
  "\x03": "interrupt",
  "\x04": "eof",
  "\x01": "home",
  "\x05": "end",
  "\x02": "left",
  "\x06": "right",
  "\x10": "up",
  "\x0e": "down",
  "\x15": "killLine",
  "\x0b": "killEnd",
  "\x17": "killWord",
};

/**
 * Splits terminal input into keys. An escape sequence cut off at the end of `data` is returned
 * as `rest`, to be put in front of the next read.
 */
export function parseKeys(data: string): { keys: Key[]; rest: string } {
  const keys: Key[] = [];
  let text = "";
  const flush = () => {
    if (text) keys.push({ kind: "text", text });
    text = "";
  };
  let i = 0;
  while (i < data.length) {
    const c = data[i]!;
    if (c === "\x1b") {
      flush();
      // What follows the escape: `[` parameters and a final byte, or `O` and a letter.
      const m = /^(?:\[[0-9;]*[A-Za-z~]|O[A-Za-z])/.exec(data.slice(i + 1));
      if (m) {
        const body = m[0].replace(/^\[1;\d+([A-D])$/, "[$1");
        keys.push({ kind: ESCAPES[body] ?? "ignore" });
        i += 1 + m[0].length;
        continue;
      }
      if (/^(?:\[[0-9;]*|O)?$/.test(data.slice(i + 1))) return { keys, rest: data.slice(i) };
      keys.push({ kind: "ignore" });
      i++;
      continue;
    }
    const control = CONTROLS[c];
    if (control !== undefined) {
      flush();
      // A CR LF pair (some terminals, pasted text) is one Enter.
      if (c === "\r" && data[i + 1] === "\n") i++;
      keys.push({ kind: control });
    } else if (c < " ") {
      flush();
      keys.push({ kind: "ignore" });
    } else {
      text += c;
    }
    i++;
  }
  flush();
  return { keys, rest: "" };
}

/** What a key did to the line: nothing final, a submitted line, or leaving the prompt. */
export type EditResult = { done: false } | { done: true; line: string } | {
  done: true;
  exit: true;
};

/** A single-line editor over code points: insert, delete, move, kill, and walk the history. */
export class LineEditor {
  #chars: string[] = [];
  #cursor = 0;
  readonly #walker: HistoryWalker;

  constructor(walker: HistoryWalker, initial = "") {
    this.#walker = walker;
    this.#set(initial);
  }

  /** The line as it stands. */
  get text(): string {
    return this.#chars.join("");
  }

  /** The cursor position, in code points. */
  get cursor(): number {
    return this.#cursor;
  }

  /** Applies one key. Ctrl-C clears a non-empty line and leaves on an empty one; so does Ctrl-D. */
  apply(key: Key): EditResult {
    const chars = this.#chars;
    switch (key.kind) {
      case "text": {
        const add = [...key.text];
        chars.splice(this.#cursor, 0, ...add);
        this.#cursor += add.length;
        break;
      }
      case "enter":
        return { done: true, line: this.text };
      case "backspace":
        if (this.#cursor > 0) chars.splice(--this.#cursor, 1);
        break;
      case "delete":
        if (this.#cursor < chars.length) chars.splice(this.#cursor, 1);
        break;
      case "left":
        this.#cursor = Math.max(0, this.#cursor - 1);
        break;
      case "right":
        this.#cursor = Math.min(chars.length, this.#cursor + 1);
        break;
      case "home":
        this.#cursor = 0;
        break;
      case "end":
        this.#cursor = chars.length;
        break;
      case "up": {
        const line = this.#walker.up(this.text);
        if (line !== undefined) this.#set(line);
        break;
      }
      case "down": {
        const line = this.#walker.down();
        if (line !== undefined) this.#set(line);
        break;
      }
      case "interrupt":
        if (chars.length === 0) return { done: true, exit: true };
        this.#set("");
        break;
      case "eof":
        if (chars.length === 0) return { done: true, exit: true };
        if (this.#cursor < chars.length) chars.splice(this.#cursor, 1);
        break;
      case "killLine":
        chars.splice(0, this.#cursor);
        this.#cursor = 0;
        break;
      case "killEnd":
        chars.splice(this.#cursor);
        break;
      case "killWord": {
        let start = this.#cursor;
        while (start > 0 && chars[start - 1] === " ") start--;
        while (start > 0 && chars[start - 1] !== " ") start--;
        chars.splice(start, this.#cursor - start);
        this.#cursor = start;
        break;
      }
      case "ignore":
        break;
    }
    return { done: false };
  }

  /** The visible part of the line for a terminal `width` columns wide, and the cursor column. */
  view(width: number): { text: string; column: number } {
    const room = Math.max(1, width);
    let start = 0;
    if (this.#cursor >= room) start = this.#cursor - room + 1;
    const text = this.#chars.slice(start, start + room).join("");
    return { text, column: this.#cursor - start };
  }

  #set(line: string): void {
    this.#chars = [...line];
    this.#cursor = this.#chars.length;
  }
}

/** A terminal in raw mode, as the line editor needs it. */
export interface RawTerminal {
  setRaw(raw: boolean): void;
  read(buffer: Uint8Array): Promise<number | null>;
  write(text: string): void;
  /** The width in columns. */
  columns(): number;
}

/**
 * Reads one line on a raw-mode terminal with editing and history, restoring the terminal mode
 * whatever happens. `prompt` is plain text (its width is its length). Resolves to the line, or to `exit` (Ctrl-D or Ctrl-C on an empty line, or
 * the end of input).
 */
export async function readLine(
  term: RawTerminal,
  prompt: string,
  walker: HistoryWalker,
): Promise<{ line: string } | { exit: true }> {
  const editor = new LineEditor(walker);
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(1024);
  let pending = "";
  const promptWidth = [...prompt].length;
  const render = () => {
    const { text, column } = editor.view(term.columns() - promptWidth - 1);
    const move = promptWidth + column;
    term.write(`\r${prompt}${text}\x1b[K\r${move > 0 ? `\x1b[${move}C` : ""}`);
  };
  term.setRaw(true);
  try {
    render();
    while (true) {
      const n = await term.read(buffer);
      if (n === null) return { exit: true };
      const { keys, rest } = parseKeys(
        pending + decoder.decode(buffer.subarray(0, n), { stream: true }),
      );
      pending = rest;
      for (const key of keys) {
        const result = editor.apply(key);
        if (result.done) {
          render();
          term.write("\r\n");
          return "line" in result ? { line: result.line } : { exit: true };
        }
      }
      render();
    }
  } finally {
    term.setRaw(false);
  }
}

/** The process's own terminal, for `readLine`. */
export function stdinTerminal(): RawTerminal {
  const encoder = new TextEncoder();
  return {
    setRaw: (raw) => Deno.stdin.setRaw(raw),
    read: (buffer) => Deno.stdin.read(buffer),
    write: (text) => {
      const bytes = encoder.encode(text);
      let at = 0;
      while (at < bytes.length) at += Deno.stdout.writeSync(bytes.subarray(at));
    },
    columns: () => {
      try {
        return Deno.consoleSize().columns;
      } catch {
        return 80;
      }
    },
  };
}

/** Reads lines one at a time from a stream (piped input): undefined at the end. */
export function lineReader(stream: ReadableStream<Uint8Array>): () => Promise<string | undefined> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  let ended = false;
  return async () => {
    while (true) {
      const newline = buffered.indexOf("\n");
      if (newline !== -1) {
        const line = buffered.slice(0, newline).replace(/\r$/, "");
        buffered = buffered.slice(newline + 1);
        return line;
      }
      if (ended) {
        if (buffered === "") return undefined;
        const line = buffered;
        buffered = "";
        return line;
      }
      const { value, done } = await reader.read();
      if (done) ended = true;
      else buffered += value;
    }
  };
}
