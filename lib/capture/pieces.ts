// Redacting a text that arrives in pieces (the text of a long line, one chunk at a time): each
// piece is redacted with its neighbours in view, so a secret cut by a piece's edge is seen whole.

import { REDACTION_OVERLAP, type Redactor } from "../gate.ts";

/** A piece redacted: the id it came with and its text, trimmed. */
export interface RedactedPiece {
  id: number;
  text: string;
}

/**
 * Holds each piece back until `overlap` characters of the text after it have arrived (or the
 * text has ended), then redacts it between the end of the text before it and the start of the
 * text after it. Memory stays bounded: a piece and the `overlap` characters around it.
 */
export class PieceRedactor {
  #redact: Redactor;
  #overlap: number;
  #before = "";
  #pending: { id: number; text: string }[] = [];

  constructor(redact: Redactor, overlap = REDACTION_OVERLAP) {
    this.#redact = redact;
    this.#overlap = overlap;
  }

  /** Adds the next piece; returns the pieces that can now be redacted, in order. */
  push(id: number, text: string): RedactedPiece[] {
    this.#pending.push({ id, text });
    const ready: RedactedPiece[] = [];
    while (this.#pending.length > 1 && this.#heldAfterFirst() >= this.#overlap) {
      ready.push(this.#release());
    }
    return ready;
  }

  /** The text has ended: redacts the pieces still held. */
  end(): RedactedPiece[] {
    const ready: RedactedPiece[] = [];
    while (this.#pending.length > 0) ready.push(this.#release());
    return ready;
  }

  #heldAfterFirst(): number {
    let n = 0;
    for (let i = 1; i < this.#pending.length; i++) n += this.#pending[i]!.text.length;
    return n;
  }

  #release(): RedactedPiece {
    const first = this.#pending.shift()!;
    let after = "";
    for (const piece of this.#pending) {
      after += piece.text.slice(0, this.#overlap - after.length);
      if (after.length >= this.#overlap) break;
    }
    const text = this.#redact.between(this.#before, first.text, after).trim();
    this.#before = (this.#before.slice(-this.#overlap) + first.text).slice(-this.#overlap);
    return { id: first.id, text };
  }
}
