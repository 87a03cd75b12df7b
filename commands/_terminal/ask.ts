// Asking the person at the terminal a question before something that cannot be undone: the
// question goes to stderr (stdout stays data, even with --json), the answer is one line of stdin.

/** Asks `question`; returns the line typed, or null at the end of input. */
export type Ask = (question: string) => string | null;

/** The terminal's ask, or null when stdin is not a terminal (a script must say --yes). */
export function terminalAsk(): Ask | null {
  return Deno.stdin.isTerminal() ? askOnStdin : null;
}

function askOnStdin(question: string): string | null {
  Deno.stderr.writeSync(new TextEncoder().encode(`${question} `));
  const bytes: number[] = [];
  const buffer = new Uint8Array(1);
  while (true) {
    const n = Deno.stdin.readSync(buffer);
    if (n === null || n === 0) return bytes.length ? decode(bytes) : null;
    if (buffer[0] === 0x0a) return decode(bytes);
    bytes.push(buffer[0]!);
  }
}

function decode(bytes: number[]): string {
  return new TextDecoder().decode(new Uint8Array(bytes)).replace(/\r$/, "");
}
