// The chat prompt on a terminal, on `node:readline` (editing, word motions, Up/Down history, Tab
// completion) with two additions readline lacks: a bracketed paste kept whole as one prompt, and
// Ctrl-R reverse search over the prompt history. Piped input is read a line at a time.

import * as readline from "node:readline";
import process from "node:process";
import { PassThrough } from "node:stream";

/** What a pasted line break or tab stands as while the prompt is edited on one line. */
const NEWLINE = "\u2424"; // ␤
const TAB = "\u2409"; // ␉

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

/** A prompt as readline edits it: pasted line breaks and tabs shown as one character each. */
export function toEditable(text: string): string {
  return text.replace(/\r\n|\r|\n/g, NEWLINE).replaceAll("\t", TAB);
}

/** The prompt a person meant, from its editable form. */
export function fromEditable(line: string): string {
  return line.replaceAll(NEWLINE, "\n").replaceAll(TAB, "\t");
}

/** How the terminal prompt is set up. */
export interface PromptOptions {
  prompt: string;
  /** Earlier prompts, oldest first. */
  history: string[];
  /** Words Tab completes at the start of the line (`/rename`, `/undo`, …). */
  completions: readonly string[];
  /** What Ctrl-L shows above the prompt (terminal-safe text); without it Ctrl-L clears. */
  view?: () => string;
}

/** Reads prompts on the terminal; undefined when the user leaves (Ctrl-D, Ctrl-C on nothing). */
export interface PromptReader {
  read(): Promise<string | undefined>;
}

/**
 * The terminal prompt on this process's stdin and stdout. Each read opens a readline interface
 * and closes it after the line, so between prompts the terminal is back in its own mode (Ctrl-C
 * then interrupts a reply as a signal).
 */
export function terminalPrompt(options: PromptOptions): PromptReader {
  // Newest first, as readline keeps it.
  const history = options.history.map(toEditable).reverse();
  return {
    read: async () => {
      const line = await readOnce(options, history);
      if (line !== undefined && line.trim() !== "" && history[0] !== line) history.unshift(line);
      return line === undefined ? undefined : fromEditable(line);
    },
  };
}

async function readOnce(options: PromptOptions, history: string[]): Promise<string | undefined> {
  const stdin = process.stdin;
  const input = new PassThrough() as PassThrough & {
    isTTY: boolean;
    setRawMode: (mode: boolean) => void;
  };
  input.isTTY = true;
  input.setRawMode = (mode) => void stdin.setRawMode(mode);
  const rl = readline.createInterface({
    input,
    output: process.stdout,
    terminal: true,
    prompt: options.prompt,
    history: [...history],
    historySize: 10_000,
    removeHistoryDuplicates: true,
    tabSize: 2,
    completer: (line: string) => {
      const hits = options.completions.filter((word) => word.startsWith(line) && line !== "");
      return [hits.map((word) => `${word} `), line];
    },
  });
  const editable = rl as unknown as EditableLine;
  const filter = new KeyFilter(
    editable,
    options.prompt,
    () => editable.history,
    (text) => void input.write(text),
    options.view
      ? () => {
        // Shown above the prompt, which is drawn again below it with the line as it was.
        process.stdout.write(`\r\x1b[K${options.view!().replaceAll("\n", "\r\n")}`);
        editable.prompt(true);
      }
      : undefined,
  );
  const decoder = new TextDecoder();
  // Chunks are filtered one after another: a search must see the line as readline has it.
  let queue = Promise.resolve();
  const onData = (chunk: Uint8Array | string) => {
    const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    queue = queue.then(() => filter.feed(text));
  };
  process.stdout.write("\x1b[?2004h"); // bracketed paste on
  try {
    return await new Promise<string | undefined>((resolve) => {
      let done = false;
      rl.once("line", (line: string) => {
        done = true;
        resolve(line);
      });
      // Closed by the user (Ctrl-D, Ctrl-C on nothing): the cursor goes below the prompt.
      rl.once("close", () => {
        if (!done) process.stdout.write("\n");
        resolve(undefined);
      });
      rl.on("SIGINT", () => {
        // Ctrl-C clears what was typed; on an empty line it leaves, as Ctrl-D does.
        if (editable.line === "") rl.close();
        else {
          editable.line = "";
          editable.cursor = 0;
          rl.prompt(true);
        }
      });
      stdin.on("data", onData);
      stdin.resume();
      rl.prompt();
    });
  } finally {
    stdin.off("data", onData);
    stdin.pause();
    rl.close();
    stdin.setRawMode(false);
    process.stdout.write("\x1b[?2004l");
  }
}

/** The parts of readline's interface the key filter edits (public in Node, if undocumented). */
interface EditableLine {
  line: string;
  /** Newest first. */
  history: string[];
  cursor: number;
  setPrompt(prompt: string): void;
  prompt(preserveCursor?: boolean): void;
}

/**
 * What sits between the terminal and readline: a bracketed paste becomes one editable line (its
 * line breaks and tabs as ␤ and ␉, so Enter inside it does not send it), and Ctrl-R runs a
 * reverse search over the history, drawn in readline's own prompt. Everything else passes.
 */
export class KeyFilter {
  #pending = "";
  #pasting = false;
  #search: { query: string; at: number; original: string; cursor: number } | undefined;
  #out = "";
  readonly #rl: EditableLine;
  readonly #prompt: string;
  readonly #history: () => string[];
  readonly #write: (text: string) => void;
  readonly #view: (() => void) | undefined;

  /** `write` hands text to readline; `history` is readline's, newest first; `view` is Ctrl-L. */
  constructor(
    rl: EditableLine,
    prompt: string,
    history: () => string[],
    write: (text: string) => void,
    view?: () => void,
  ) {
    this.#rl = rl;
    this.#prompt = prompt;
    this.#history = history;
    this.#write = write;
    this.#view = view;
  }

  /** Takes what the terminal sent and hands readline what it should see. */
  async feed(data: string): Promise<void> {
    let text = this.#pending + data;
    this.#pending = "";
    while (text !== "") {
      if (this.#pasting) {
        const end = text.indexOf(PASTE_END);
        const body = end === -1 ? this.#holdPartial(text, PASTE_END) : text.slice(0, end);
        // Pasted text is text: its controls other than line breaks and tabs are dropped.
        await this.#text(withoutControls(toEditable(body)));
        if (end === -1) break;
        this.#pasting = false;
        text = text.slice(end + PASTE_END.length);
        continue;
      }
      const start = text.indexOf(PASTE_START);
      const before = start === -1 ? this.#holdPartial(text, PASTE_START) : text.slice(0, start);
      await this.#keys(before);
      if (start === -1) break;
      this.#pasting = true;
      text = text.slice(start + PASTE_START.length);
    }
    await this.#flush();
  }

  /** Hands readline what is waiting, and lets it take it in before the line is read or set. */
  async #flush(): Promise<void> {
    if (this.#out === "") return;
    this.#write(this.#out);
    this.#out = "";
    await new Promise((resolve) => setTimeout(resolve, 0));
  }

  /** `text` without a trailing start of `marker`, which is kept for the next read. */
  #holdPartial(text: string, marker: string): string {
    for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) {
      if (text.endsWith(marker.slice(0, n))) {
        this.#pending = text.slice(text.length - n);
        return text.slice(0, text.length - n);
      }
    }
    return text;
  }

  /** Text for the line: typed into the search while one runs, else passed on. */
  async #text(text: string): Promise<void> {
    if (this.#search === undefined) {
      this.#out += text;
      return;
    }
    this.#search.query += text;
    await this.#find(0);
  }

  /** Typed keys: Ctrl-R and the search it opens are handled here, the rest passes. */
  async #keys(text: string): Promise<void> {
    let i = 0;
    while (i < text.length) {
      const c = text[i]!;
      const search = this.#search;
      if (search === undefined) {
        if (c === "\x12") await this.#open();
        else if (c === "\x0c" && this.#view) {
          await this.#flush();
          this.#view();
        } else this.#out += c;
        i++;
        continue;
      }
      if (c === "\x12") {
        await this.#find(search.at + 1);
        i++;
      } else if (c === "\x7f" || c === "\x08") {
        search.query = [...search.query].slice(0, -1).join("");
        await this.#find(0);
        i++;
      } else if (c === "\x07" || (c === "\x1b" && i === text.length - 1)) {
        // Ctrl-G, or Esc alone: back to the line as it was.
        this.#close(false);
        i++;
      } else if (c === "\x1b" || c < " ") {
        // Any other key (Enter too) takes the match into the line, then does what it does there.
        this.#close(true);
      } else {
        let end = i;
        while (end < text.length && !isControl(text[end]!)) end++;
        const run = text.slice(i, end);
        await this.#text(run);
        i += run.length;
      }
    }
  }

  async #open(): Promise<void> {
    await this.#flush();
    const rl = this.#rl;
    this.#search = { query: "", at: -1, original: rl.line, cursor: rl.cursor };
    this.#draw(rl.line, rl.cursor);
  }

  /** Finds the `from`-th or a later history entry holding the query, newest first, and shows it. */
  async #find(from: number): Promise<void> {
    await this.#flush();
    const search = this.#search!;
    const history = this.#history();
    const query = search.query;
    let found = -1;
    if (query !== "") {
      for (let i = Math.max(0, from); i < history.length; i++) {
        if (history[i]!.includes(query)) {
          found = i;
          break;
        }
      }
    }
    if (found === -1 && from > 0 && search.at !== -1) found = search.at; // nothing older: stay
    search.at = found;
    const match = found === -1 ? (query === "" ? search.original : this.#rl.line) : history[found]!;
    const at = found === -1 ? match.length : Math.max(0, match.indexOf(query));
    this.#draw(match, at, found === -1 && query !== "");
  }

  #draw(line: string, cursor: number, failing = false): void {
    const rl = this.#rl;
    const query = this.#search!.query;
    rl.setPrompt(`(${failing ? "failing " : ""}reverse-i-search)\`${query}': `);
    rl.line = line;
    rl.cursor = cursor;
    rl.prompt(true);
  }

  #close(accept: boolean): void {
    const rl = this.#rl;
    const search = this.#search!;
    this.#search = undefined;
    rl.setPrompt(this.#prompt);
    if (!accept) {
      rl.line = search.original;
      rl.cursor = search.cursor;
    } else rl.cursor = Math.min(rl.cursor, rl.line.length);
    rl.prompt(true);
  }
}

function isControl(c: string): boolean {
  return c < " " || c === "\x7f";
}

function withoutControls(text: string): string {
  return [...text].filter((c) => !isControl(c)).join("");
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
