// A streamed reply shown through the gate as it arrives: each word goes out as soon as a space
// ends it (the gate sees it whole, with the line before it); from a word that may begin a secret's
// context (a key word, `Bearer`, a key block's dashes) the rest of the line is held until it ends,
// a private key block until its end line, and lines of bare key material until a line that is not.

import type { Gate } from "../gate/gate.ts";

/**
 * A word from which the rest of the line is held: the gate recognises a value by what comes
 * before it (`password = …`, `--token …`, `Bearer …`, `Authorization: Basic …`, a quoted value
 * after a key word) and sometimes by what follows it on the line (`password: x` alone on its
 * line), and a key block by its dashes. Any other word is a secret or not on its own: a space
 * ends it, so it is shown once the gate has seen it whole.
 */
const CONTEXT_WORD = /key|token|pass|secret|phrase|auth|bearer|basic|begin|-----/i;

/** A key block's END line, complete. */
const KEY_FOOTER = /-----END [A-Z0-9 ]*-----/;

/** A line that may be key material (the body of a private key whose BEGIN line is missing). */
const KEY_MATERIAL_LINE = /^[A-Za-z0-9+/=]{16,}\r?$/;
/** A line that may continue key material already held. */
const MORE_KEY_MATERIAL = /^[A-Za-z0-9+/=]*\r?$/;

/**
 * Passes streamed text through the gate for display: words are shown as they end, up to the
 * first word that may give a secret its context, after which the line is shown once it ends. A
 * private key block is held back until it ends, and lines that may be a key's body until a line
 * that is not (the gate redacts a body back from its END line). With labelled values or
 * quarantined content (which may span words), every line is held until it ends.
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
    // Held until the line of its END line ends: the gate redacts a block whole, with its footer.
    const footer = openKey === -1 ? null : KEY_FOOTER.exec(this.#buffer.slice(openKey));
    const keyOpen = openKey !== -1 &&
      (!footer || !this.#buffer.includes("\n", openKey + footer.index + footer[0].length));
    const limit = keyOpen
      ? this.#buffer.lastIndexOf("\n", openKey)
      : this.#buffer.lastIndexOf("\n");
    let out = "";
    if (limit >= 0) {
      const ready = releasableLines(this.#buffer.slice(0, limit + 1));
      if (ready > 0) {
        out += this.#show(this.#buffer.slice(0, ready));
        this.#buffer = this.#buffer.slice(ready);
        this.#shown = "";
      }
    }
    // Word by word only on a line of its own: held lines (a key block, key material) come first.
    if (!this.#byWord || keyOpen || this.#buffer.includes("\n")) return out;
    const space = Math.max(this.#buffer.lastIndexOf(" "), this.#buffer.lastIndexOf("\t"));
    if (space < 0) return out;
    const words = this.#buffer.slice(0, firstContextWord(this.#buffer.slice(0, space + 1)));
    if (words === "") return out;
    this.#buffer = this.#buffer.slice(words.length);
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

/**
 * How much of `lines` (whole lines, each ending in a newline) can be shown: all of it, but for a
 * run of lines at its end that may be a private key's body, held until a line that is not (an
 * END line, which the gate redacts back from, or prose, which shows the run was not a key).
 */
function releasableLines(lines: string): number {
  let ready = 0;
  let run = false;
  let at = 0;
  while (at < lines.length) {
    const end = lines.indexOf("\n", at) + 1;
    const line = lines.slice(at, end - 1);
    if (run ? !MORE_KEY_MATERIAL.test(line) : !KEY_MATERIAL_LINE.test(line)) {
      run = false;
      ready = end;
    } else run = true;
    at = end;
  }
  return ready;
}

/** Where in `words` (whole words) the first word that may give a secret its context starts. */
function firstContextWord(words: string): number {
  for (const m of words.matchAll(/\S+/g)) {
    if (CONTEXT_WORD.test(m[0])) return m.index;
  }
  return words.length;
}
