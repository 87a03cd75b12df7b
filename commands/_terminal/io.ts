// Where a command writes: the `Io` every `main` takes (so tests capture output without spawning),
// the real terminal behind it, and ANSI styling that is plain text when colour is off.

/** Where a command writes; injected so tests can capture output without spawning. */
export interface Io {
  out(text: string): void;
  /** Writes bytes to stdout exactly as given (for `show --raw`). */
  outBytes(bytes: Uint8Array): void;
  err(text: string): void;
  /** True when stdout is a terminal that may show colour. */
  color: boolean;
  /** True when stdout is a terminal (`show --raw` then shows its bytes through the filter). */
  outIsTerminal: boolean;
  /** True when stderr is a terminal (progress bars go there). */
  errIsTerminal: boolean;
}

/** The real terminal: colour only on a TTY and never with `NO_COLOR`. */
export function stdio(): Io {
  const encoder = new TextEncoder();
  const noColor = (Deno.env.get("NO_COLOR") ?? "") !== "";
  return {
    out: (text) => writeAll(Deno.stdout, encoder.encode(text)),
    outBytes: (bytes) => writeAll(Deno.stdout, bytes),
    err: (text) => writeAll(Deno.stderr, encoder.encode(text)),
    color: !noColor && Deno.stdout.isTerminal(),
    outIsTerminal: Deno.stdout.isTerminal(),
    errIsTerminal: Deno.stderr.isTerminal(),
  };
}

function writeAll(stream: typeof Deno.stdout, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += stream.writeSync(bytes.subarray(offset));
    } catch (err) {
      // A closed pipe (`logbook search x | head`) is not an error worth a stack trace.
      if (err instanceof Deno.errors.BrokenPipe) return;
      throw err;
    }
  }
}

/** ANSI styling that turns into plain text when colour is off. */
export function styler(color: boolean) {
  const wrap = (open: string, close: string) => (text: string) =>
    color ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return {
    bold: wrap("1", "22"),
    dim: wrap("2", "22"),
    red: wrap("31", "39"),
    green: wrap("32", "39"),
    yellow: wrap("33", "39"),
    cyan: wrap("36", "39"),
    highlight: wrap("1;33", "22;39"),
  };
}

/** The styles of `styler`. */
export type Styles = ReturnType<typeof styler>;
