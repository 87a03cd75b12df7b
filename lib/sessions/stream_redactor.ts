// A streamed reply shown through the gate as it arrives: plain words go out as soon as a space
// ends them; a line that may hold a secret is held until it ends (a secret is only recognised
// whole), and a private key block until its end line.

import type { Gate } from "../gate.ts";

/**
 * What may be part of a secret, or give one its context: key words, assignments, quotes, URLs
 * with credentials, and long runs of token characters. A line with any of these is held whole.
 */
const SECRET_LIKE =
  /key|token|pass|secret|phrase|auth|bearer|begin|[=:@'"`\\/<>-]|[A-Za-z0-9_+.~]{12,}/i;

/**
 * Passes streamed text through the gate for display: a line is shown word by word while it
 * holds nothing that could belong to a secret, else once it ends. A private key block is held
 * back until it ends. With labelled values or quarantined content (which may span words), every
 * line is held until it ends.
 */
export class StreamRedactor {
  #buffer = "";
  /** What of the current line was already shown, for the gate's context. */
  #shown = "";
  readonly #gate: Gate;
  readonly #byWord: boolean;

  constructor(gate: Gate) {
    this.#gate = gate;
    this.#byWord = gate.labels.length === 0 && gate.quarantine.toJSON().refs === 0;
  }

  /** Adds a piece; returns what can be shown now. */
  push(delta: string): string {
    this.#buffer += delta;
    const openKey = this.#buffer.lastIndexOf("-----BEGIN ");
    const keyOpen = openKey !== -1 && this.#buffer.indexOf("-----END ", openKey) === -1;
    const limit = keyOpen
      ? this.#buffer.lastIndexOf("\n", openKey)
      : this.#buffer.lastIndexOf("\n");
    let out = "";
    if (limit >= 0) {
      const ready = this.#buffer.slice(0, limit + 1);
      this.#buffer = this.#buffer.slice(limit + 1);
      out += this.#show(ready);
      this.#shown = "";
    }
    if (!this.#byWord || keyOpen) return out;
    // The line so far: its complete words go out while none of it looks like part of a secret.
    const space = Math.max(this.#buffer.lastIndexOf(" "), this.#buffer.lastIndexOf("\t"));
    if (space < 0) return out;
    const words = this.#buffer.slice(0, space + 1);
    if (SECRET_LIKE.test(this.#shown + words)) return out;
    this.#buffer = this.#buffer.slice(space + 1);
    out += this.#show(words);
    this.#shown += words;
    return out;
  }

  /** Everything still held, shown at the end of the reply. */
  flush(): string {
    const rest = this.#buffer;
    this.#buffer = "";
    const shown = rest === "" ? "" : this.#show(rest);
    this.#shown = "";
    return shown;
  }

  /** `text` through the display gate, after what of its line was already shown. */
  #show(text: string): string {
    return this.#shown === ""
      ? this.#gate.redact(text, { destination: "display" }).text
      : this.#gate.redactBetween(this.#shown, text, "");
  }
}
