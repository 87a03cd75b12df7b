// The line editor of logbook's prompts on a raw-mode terminal: keys decoded from what the terminal
// sends, a single line edited in code points with Up/Down walking the prompt history, and piped
// input read a line at a time.

import type { HistoryWalker } from "../../lib/sessions/prompt_history.ts";

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
