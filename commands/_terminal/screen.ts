// The full screen of an interactive command: the terminal's alternate screen in raw mode, keys
// decoded by node:readline (with a short escape timeout, so a lone Esc is not a 500 ms wait),
// pastes taken whole, a redraw on every resize, and the terminal always given back as it was: on
// leaving, on an exception, on SIGTERM and SIGHUP. No library draws it (see docs/commands.md, search -i).

import * as readline from "node:readline";
import process from "node:process";
import { PassThrough } from "node:stream";

/** A key as the screen reports it: `char` for a printable character, else readline's name. */
export interface Key {
  /** `char`, `paste`, or readline's name: `up`, `down`, `return`, `escape`, `backspace`, `o`… */
  name: string;
  /** The character typed, or the text pasted. */
  text: string;
  ctrl: boolean;
  meta: boolean;
  shift: boolean;
}

/** The terminal's size in character cells. */
export interface Size {
  columns: number;
  rows: number;
}

/** How long an ESC waits for the rest of a sequence before it is the Esc key itself. */
export const ESCAPE_TIMEOUT_MS = 100;

const ALTERNATE_SCREEN = "\x1b[?1049h";
const MAIN_SCREEN = "\x1b[?1049l";
const HIDE_CURSOR = "\x1b[?25l";
const SHOW_CURSOR = "\x1b[?25h";
const PASTE_ON = "\x1b[?2004h";
const PASTE_OFF = "\x1b[?2004l";
const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";
const RESET = "\x1b[0m";

/** What the screen tells its owner. */
export interface ScreenEvents {
  key(key: Key): void;
  resize(size: Size): void;
}

/**
 * The full screen on this process's terminal. `open` takes the terminal; `close` gives it back
 * as it was (and is safe to call twice); `away` lends it to another program (a pager) and takes
 * it again. Lines drawn must already fit the width and carry only the screen's own styling.
 */
export class Screen {
  readonly #write: (text: string) => void;
  readonly #events: ScreenEvents;
  readonly #input = new PassThrough();
  readonly #decoder = new TextDecoder();
  #open = false;
  /** Lent to another program: nothing is drawn until it is back (which redraws whole). */
  #away = false;
  #pasting = false;
  #paste = "";
  #carry = "";
  /** The lines on the screen now, so a redraw writes only what changed. */
  #shown: string[] = [];
  readonly #onData = (chunk: Uint8Array | string) => {
    this.#feed(typeof chunk === "string" ? chunk : this.#decoder.decode(chunk, { stream: true }));
  };
  readonly #onKeypress = (text: string | undefined, key: readline.Key | undefined) => {
    this.#events.key(keyOf(text, key));
  };
  readonly #onResize = () => {
    this.#shown = [];
    if (!this.#away) this.#events.resize(this.size);
  };
  readonly #onTerminate = (signal: "SIGTERM" | "SIGHUP") => () => {
    this.close();
    Deno.exit(128 + (signal === "SIGTERM" ? 15 : 1));
  };
  readonly #onTerm = this.#onTerminate("SIGTERM");
  readonly #onHup = this.#onTerminate("SIGHUP");
  readonly #onUnload = () => this.close();

  private constructor(write: (text: string) => void, events: ScreenEvents) {
    this.#write = write;
    this.#events = events;
  }

  /** Takes the terminal: the alternate screen, raw keys, resize and termination signals. */
  static open(write: (text: string) => void, events: ScreenEvents): Screen {
    const screen = new Screen(write, events);
    // Keys are decoded from a stream of the screen's own, so readline's state (its escape
    // timeout) never reaches a prompt that reads stdin after the screen is gone.
    readline.emitKeypressEvents(screen.#input, {
      escapeCodeTimeout: ESCAPE_TIMEOUT_MS,
    } as unknown as readline.Interface);
    screen.#input.on("keypress", screen.#onKeypress);
    Deno.addSignalListener("SIGWINCH", screen.#onResize);
    Deno.addSignalListener("SIGTERM", screen.#onTerm);
    Deno.addSignalListener("SIGHUP", screen.#onHup);
    globalThis.addEventListener("unload", screen.#onUnload);
    screen.#open = true;
    screen.#write(ALTERNATE_SCREEN + HIDE_CURSOR + PASTE_ON + "\x1b[2J");
    screen.#takeKeys();
    return screen;
  }

  /** The terminal's size (80×24 when it cannot say). */
  get size(): Size {
    try {
      const { columns, rows } = Deno.consoleSize();
      if (columns > 0 && rows > 0) return { columns, rows };
    } catch {
      // Not a terminal after all: the usual size.
    }
    return { columns: 80, rows: 24 };
  }

  /**
   * Draws `lines` from the top (a line a row; only rows that changed are written) and puts the
   * cursor at `cursor` (1-based), shown, or hides it.
   */
  draw(lines: readonly string[], cursor: { row: number; column: number } | null): void {
    if (!this.#open || this.#away) return;
    let out = HIDE_CURSOR;
    const rows = Math.max(lines.length, this.#shown.length);
    for (let i = 0; i < rows; i++) {
      const line = lines[i] ?? "";
      if (this.#shown[i] === line) continue;
      // The row is cleared before it is written: clearing after a full-width line would take
      // its last character (the cursor waits on it).
      out += `\x1b[${i + 1};1H\x1b[2K${line}${RESET}`;
    }
    this.#shown = [...lines];
    if (cursor) out += `\x1b[${cursor.row};${cursor.column}H${SHOW_CURSOR}`;
    this.#write(out);
  }

  /** Writes a control sequence of the screen's own (the clipboard's OSC 52). */
  send(sequence: string): void {
    if (this.#open && !this.#away) this.#write(sequence);
  }

  /**
   * Lends the terminal to `fn` (a pager): keys stop being read, the terminal goes back to its
   * own mode on a cleared screen; afterwards the screen is taken again and redrawn whole.
   */
  async away<T>(fn: () => Promise<T>): Promise<T> {
    this.#releaseKeys();
    this.#write(`${RESET}\x1b[2J\x1b[H${SHOW_CURSOR}${PASTE_OFF}`);
    this.#away = true;
    try {
      return await fn();
    } finally {
      this.#away = false;
      if (this.#open) {
        // The program may have left the alternate screen on its way out: enter it again.
        this.#write(ALTERNATE_SCREEN + HIDE_CURSOR + PASTE_ON + "\x1b[2J");
        this.#shown = [];
        this.#takeKeys();
        this.#events.resize(this.size);
      }
    }
  }

  /** Gives the terminal back as it was: the main screen, the cursor, its own mode. */
  close(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#releaseKeys();
    this.#input.off("keypress", this.#onKeypress);
    Deno.removeSignalListener("SIGWINCH", this.#onResize);
    Deno.removeSignalListener("SIGTERM", this.#onTerm);
    Deno.removeSignalListener("SIGHUP", this.#onHup);
    globalThis.removeEventListener("unload", this.#onUnload);
    // Cleared first: after a resize, tmux (3.3) would otherwise leave the screen's rows on the
    // main screen it gives back.
    this.#write(RESET + "\x1b[2J\x1b[H" + PASTE_OFF + SHOW_CURSOR + MAIN_SCREEN);
  }

  #takeKeys(): void {
    process.stdin.setRawMode(true);
    process.stdin.on("data", this.#onData);
    process.stdin.resume();
  }

  #releaseKeys(): void {
    process.stdin.off("data", this.#onData);
    process.stdin.pause();
    try {
      process.stdin.setRawMode(false);
    } catch {
      // The terminal is gone (a hang-up): there is no mode to give back.
    }
  }

  /** Input as typed: a bracketed paste is one `paste` key, everything else goes to readline. */
  #feed(text: string): void {
    let rest = this.#carry + text;
    this.#carry = "";
    while (rest !== "") {
      if (this.#pasting) {
        const end = rest.indexOf(PASTE_END);
        if (end === -1) {
          // The end marker may be cut between two reads: its start waits for the rest.
          const keep = partialMarker(rest, PASTE_END);
          this.#paste += rest.slice(0, rest.length - keep);
          this.#carry = rest.slice(rest.length - keep);
          return;
        }
        this.#paste += rest.slice(0, end);
        rest = rest.slice(end + PASTE_END.length);
        this.#pasting = false;
        const paste = this.#paste;
        this.#paste = "";
        this.#events.key({ name: "paste", text: paste, ctrl: false, meta: false, shift: false });
        continue;
      }
      const start = rest.indexOf(PASTE_START);
      if (start === -1) {
        this.#input.write(rest);
        return;
      }
      if (start > 0) this.#input.write(rest.slice(0, start));
      rest = rest.slice(start + PASTE_START.length);
      this.#pasting = true;
    }
  }
}

/** How many characters at the end of `text` begin `marker` (at least two: ESC and `[`). */
function partialMarker(text: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, text.length); n >= 2; n--) {
    if (marker.startsWith(text.slice(-n))) return n;
  }
  return 0;
}

// C0 and C1 controls and DEL: never a printable character.
// deno-lint-ignore no-control-regex -- control characters are exactly what is recognised
const CONTROL = /[\0-\x1f\x7f-\x9f]/;

/** readline's key as the screen's: printable characters are `char`s, the rest by name. */
function keyOf(text: string | undefined, key: readline.Key | undefined): Key {
  const ctrl = key?.ctrl ?? false;
  const meta = key?.meta ?? false;
  const shift = key?.shift ?? false;
  if (text !== undefined && text !== "" && !ctrl && !meta && !CONTROL.test(text)) {
    return { name: "char", text, ctrl, meta, shift };
  }
  return { name: key?.name ?? "", text: text ?? key?.sequence ?? "", ctrl, meta, shift };
}
