// Redacting a text that arrives in pieces (the text of a long line, one chunk at a time): each
// piece is redacted with its neighbours in view, so a secret cut by a piece's edge is seen whole.

import { REDACTION_OVERLAP, type Redactor } from "../gate/secrets.ts";

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

/**
 * True when a row of a streamed line whose text is `text` starts a new piece of the line's text,
 * the piece before holding `held` characters: a piece ends at a row's end once it holds `size`,
 * and the next starts at a row with words (`LinePieces`).
 */
export function startsPiece(held: number, text: string, size: number): boolean {
  return held >= size && text.trim() !== "";
}

/**
 * Gathers the text of a streamed line, row by row, into pieces indexed whole, each under the id
 * of its first row: a text shorter than `size` is one piece however many rows its line spans, and
 * a longer one is cut only where a piece has reached `size`. Each piece is redacted with the text
 * around it in view (`PieceRedactor`); memory holds about two pieces.
 */
export class LinePieces {
  #pieces: PieceRedactor;
  #size: number;
  #id: number | null = null;
  #text = "";

  constructor(redact: Redactor, size: number) {
    this.#pieces = new PieceRedactor(redact);
    this.#size = size;
  }

  /** Adds the text of row `id`, the next of the line; returns the pieces now redacted. */
  add(id: number, text: string): RedactedPiece[] {
    if (this.#id !== null && !startsPiece(this.#text.length, text, this.#size)) {
      this.#text += text;
      return [];
    }
    const ready = this.#id === null ? [] : this.#pieces.push(this.#id, this.#text);
    this.#id = id;
    this.#text = text;
    return ready;
  }

  /** The line has ended: redacts the pieces still held. */
  end(): RedactedPiece[] {
    const ready = this.#id === null ? [] : this.#pieces.push(this.#id, this.#text);
    this.#id = null;
    this.#text = "";
    return [...ready, ...this.#pieces.end()];
  }
}
