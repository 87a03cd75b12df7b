// An Io for commands whose every line may carry transcript text and which print no colour:
// everything written as text passes the terminal filter, errors included.

import type { Io } from "./io.ts";
import { safeText } from "../../lib/safe_text.ts";

/**
 * `io` with all its text passed through `safeText` (newlines and tabs kept) and colour off, so
 * no styled output is mangled. `outBytes` is left as it is: exact bytes are for pipes.
 */
export function safeIo(io: Io): Io {
  return {
    out: (text) => io.out(safeText(text, { multiline: true })),
    outBytes: (bytes) => io.outBytes(bytes),
    err: (text) => io.err(safeText(text, { multiline: true })),
    color: false,
    outIsTerminal: io.outIsTerminal,
    errIsTerminal: io.errIsTerminal,
  };
}
