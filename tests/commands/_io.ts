// A fake terminal for calling a command's `main` in-process: it keeps what the command printed.

import type { Io } from "../../commands/_terminal/io.ts";

/** An Io that collects what a command prints. */
export function captureIo(): Io & {
  stdout: () => string;
  stderr: () => string;
  bytes: () => Uint8Array;
} {
  let out = "";
  let err = "";
  const chunks: Uint8Array[] = [];
  return {
    out: (text) => (out += text),
    outBytes: (bytes) => chunks.push(bytes.slice()),
    err: (text) => (err += text),
    color: false,
    outIsTerminal: false,
    errIsTerminal: false,
    stdout: () => out,
    stderr: () => err,
    bytes: () => {
      const total = chunks.reduce((n, c) => n + c.length, 0);
      const all = new Uint8Array(total);
      let at = 0;
      for (const c of chunks) {
        all.set(c, at);
        at += c.length;
      }
      return all;
    },
  };
}
