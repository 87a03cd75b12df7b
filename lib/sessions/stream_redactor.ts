// A streamed reply shown through the gate: the text is held until a line ends (a secret is only
// recognised whole), and a private key block until its end line.

import type { Gate } from "../gate.ts";

/**
 * Passes streamed text through the gate for display a line at a time (a secret can only be
 * recognised whole), holding a private key block back until it ends.
 */
export class StreamRedactor {
  #buffer = "";
  readonly #gate: Gate;

  constructor(gate: Gate) {
    this.#gate = gate;
  }

  /** Adds a piece; returns what can be shown now. */
  push(delta: string): string {
    this.#buffer += delta;
    const openKey = this.#buffer.lastIndexOf("-----BEGIN ");
    const limit = openKey !== -1 && this.#buffer.indexOf("-----END ", openKey) === -1
      ? this.#buffer.lastIndexOf("\n", openKey)
      : this.#buffer.lastIndexOf("\n");
    if (limit < 0) return "";
    const ready = this.#buffer.slice(0, limit + 1);
    this.#buffer = this.#buffer.slice(limit + 1);
    return this.#gate.redact(ready, { destination: "display" }).text;
  }

  /** Everything still held, shown at the end of the reply. */
  flush(): string {
    const rest = this.#buffer;
    this.#buffer = "";
    return rest === "" ? "" : this.#gate.redact(rest, { destination: "display" }).text;
  }
}
